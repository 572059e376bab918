#!/usr/bin/python3
"""slurm/collbench.sbatch with plain sbatch on a real Slurm cluster (tests/cluster/cbcluster.py):
one task per GPU from --gpus-per-node, the results directory named after the job, the run context
recording job id / node list / partition, the doctor header, srun and mpirun launchers, the
per-run environment file reaching collbench literally through sbatch + srun (and mpirun), a
killed rank ending the step (--kill-on-bad-exit), and the campaign checks that ask Slurm
(partition limits, unknown partition, sbatch rejecting a job).

Environment (set by CTest): COLLBENCH, COLLBENCH_SWEEP, COLLBENCH_SOURCE_DIR.
Exit code 77 (skipped) when the machine cannot build the cluster (not root, no Slurm).
"""

import json
import os
import shutil
import signal
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cluster"))
import cbcluster  # noqa: E402

SWEEP = os.environ.get("COLLBENCH_SWEEP", "build/collbench-sweep")
COLLBENCH = os.environ.get("COLLBENCH", "build/collbench")
SOURCE = os.environ.get("COLLBENCH_SOURCE_DIR", os.path.abspath(os.path.join(HERE, "../..")))
TEMPLATE = os.path.join(SOURCE, "slurm", "collbench.sbatch")
# srun-launched jobs use the test cluster's site file: Open MPI's libfabric path instead of its
# TCP BTL, which crashes in MPI_Init in a few per cent of srun starts here (see netns-site.sh).
SITE = os.path.join(HERE, "..", "cluster", "netns-site.sh")


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def env_file(settings):
    """The per-run environment file format: NUL-terminated NAME=value (NAME alone unsets)."""
    out = b""
    for name, value in settings:
        out += name.encode() + (b"" if value is None else b"=" + value.encode()) + b"\0"
    return out


class Template(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="collbench-slurm-test-")
        os.chmod(self.dir, 0o755)
        self.marker = os.path.join(self.dir, "MARKER")
        self.cluster = cbcluster.Cluster()
        self.cluster.__enter__()
        self.addCleanup(self.cluster.stop)

    def tearDown(self):
        if not os.environ.get("COLLBENCH_KEEP_CLUSTER"):
            shutil.rmtree(self.dir, ignore_errors=True)

    def sbatch(self, *args, env=None):
        """Plain sbatch of the template from self.dir (the submit directory); returns the job id."""
        e = {"COLLBENCH_BIN": COLLBENCH, "COLLBENCH_RESULTS": os.path.join(self.dir, "results")}
        e.update(env or {})
        r = self.cluster.on(1, ["sbatch", "--parsable", *args], env=e, cwd=self.dir)
        return r.stdout.strip().split(";")[0]

    def wait_job(self, job, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = self.cluster.on(1, ["squeue", "-h", "-t", "all", "-j", job, "-o", "%T"], check=False)
            state = r.stdout.strip()
            if state and state not in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING"):
                return state
            time.sleep(0.3)
        self.fail(f"job {job} did not end within {timeout} s\n{self.cluster.logs()[-3000:]}")

    def output(self, job):
        with open(os.path.join(self.dir, f"slurm-{job}.out"), errors="replace") as f:
            return f.read()

    def job_dir(self, job, name="collbench"):
        return os.path.join(self.dir, "results", f"{name}-{job}")

    def test_gpus_per_node_gives_one_task_per_gpu_and_records_the_job(self):
        job = self.sbatch("-N", "2", "--gpus-per-node=2", TEMPLATE, "all_reduce", "-b", "8", "-e", "64K", "-f", "4",
                          "--backend", "mpi", env={"COLLBENCH_SITE_ENV": SITE})
        self.assertEqual(self.wait_job(job), "COMPLETED", self.output(job))
        out = self.output(job)
        records = read_jsonl(os.path.join(self.job_dir(job), "collbench.jsonl"))
        ctx = records[0]
        self.assertEqual(ctx["record"], "context")
        self.assertEqual(ctx["nranks"], 4, "one task per GPU: 2 nodes x 2 GPUs")
        self.assertEqual(ctx["nodes"], 2)
        self.assertEqual(ctx["slurm"]["job_id"], job)
        self.assertEqual(ctx["slurm"]["nodelist"], "node[1-2]")
        self.assertEqual(ctx["slurm"]["partition"], "all")
        self.assertEqual(sorted(h["name"] for h in ctx["hosts"]), ["node1", "node2"])
        results = [x for x in records if x["record"] == "result"]
        self.assertEqual(len(results), 7 * 2)
        self.assertTrue(all(x["wrong"] == 0 for x in results))
        with open(os.path.join(self.job_dir(job), "exit_status")) as f:
            self.assertEqual(f.read().strip(), "0")
        # The doctor header comes before the measurement.
        header = out[:out.index("# all_reduce")]
        for expected in [f"# collbench job {job}", "on partition all: 2 nodes x 2 tasks = 4 ranks",
                         "# nodes: node[1-2]", "#   node1: instance ", "#   node2: instance ", "# collbench: ",
                         "# slurm: slurm", "# mpi: mpirun (Open MPI)", "# site environment: ",
                         "# command: srun --mpi=pmix --kill-on-bad-exit=1 --nodes=2 --ntasks=4 --ntasks-per-node=2"]:
            self.assertIn(expected, header)
        self.assertIn("# collbench exited with status 0", out)

    def test_env_file_values_reach_collbench_literally_through_srun_and_mpirun(self):
        value = ("a  b 'single' \"double\" $(touch {m}) `touch {m}` ; touch {m} | > < \\ \n"
                 "second line\t$HOME ${{PATH}} ü€\n").format(m=self.marker)
        path = os.path.join(self.dir, "run.env")
        with open(path, "wb") as f:
            f.write(env_file([("COLLBENCH_PROBE", value), ("NCCL_SOMETHING", "x;y"), ("OMPI_MCA_btl", "self,tcp"),
                              ("FI_PROVIDER", None)]))
        for launcher, site in (("srun", SITE), ("mpirun", "tcp-only")):
            with self.subTest(launcher=launcher):
                job = self.sbatch("-N", "2", "--ntasks-per-node=2", TEMPLATE, "all_reduce", "-b", "8", "-e", "1K",
                                  "-f", "8", "--backend", "mpi",
                                  env={"COLLBENCH_ENV_FILE": path, "COLLBENCH_LAUNCHER": launcher,
                                       "COLLBENCH_SITE_ENV": site, "COLLBENCH_HOME": SOURCE})
                self.assertEqual(self.wait_job(job), "COMPLETED", self.output(job))
                ctx = read_jsonl(os.path.join(self.job_dir(job), "collbench.jsonl"))[0]
                self.assertEqual(ctx["env"]["COLLBENCH_PROBE"], value)
                self.assertEqual(ctx["env"]["NCCL_SOMETHING"], "x;y")
                # The run's file wins over the site file and can unset what the site file set.
                self.assertEqual(ctx["env"]["OMPI_MCA_btl"], "self,tcp")
                self.assertNotIn("FI_PROVIDER", ctx["env"])
                self.assertEqual(ctx["nranks"], 4)
                if launcher == "mpirun":
                    self.assertIn("# command: mpirun -np 4 --map-by ppr:2:node", self.output(job))
                    self.assertEqual(ctx["env"]["OMPI_MCA_pml"], "ob1")  # from tcp-only, by name
                self.assertFalse(os.path.exists(self.marker), "an environment value was executed")

    def test_dead_rank_ends_the_step(self):
        job = self.sbatch("-N", "2", "--ntasks-per-node=2", TEMPLATE, "all_reduce", "-b", "1K", "-e", "64K", "-f",
                          "4", "-n", "100000", "--timeout", "600", "--backend", "mpi",
                          env={"COLLBENCH_SITE_ENV": SITE})
        jsonl = os.path.join(self.job_dir(job), "collbench.jsonl")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (os.path.exists(jsonl) and os.path.getsize(jsonl) > 0):
            time.sleep(0.2)
        self.assertTrue(os.path.exists(jsonl), f"job {job} never started\n{self.output(job)}")
        # Kill one rank on node2 (a process in node2's network namespace running collbench).
        ns = os.stat(f"/run/netns/{self.cluster.ns(2)}").st_ino
        victims = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if os.stat(f"/proc/{pid}/ns/net").st_ino == ns and open(f"/proc/{pid}/comm").read().strip() == "collbench":
                    victims.append(int(pid))
            except OSError:
                pass
        self.assertEqual(len(victims), 2, "two ranks on node2")
        killed_at = time.monotonic()
        os.kill(victims[0], signal.SIGKILL)
        # --kill-on-bad-exit ends the whole step instead of leaving the others in the collective.
        state = self.wait_job(job, timeout=60)
        self.assertLess(time.monotonic() - killed_at, 45, "the step outlived its dead rank")
        self.assertEqual(state, "FAILED", self.output(job))
        with open(os.path.join(self.job_dir(job), "exit_status")) as f:
            self.assertNotEqual(f.read().strip(), "0")

    def test_container_image_goes_to_srun(self):
        # No pyxis here: an srun in front of the real one records the arguments and drops the
        # container options before running the step.
        fake = os.path.join(self.dir, "bin")
        os.makedirs(fake)
        log = os.path.join(self.dir, "srun.log")
        with open(os.path.join(fake, "srun"), "w") as f:
            f.write(f"""#!/usr/bin/python3
import json, os, sys
with open({log!r}, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
args = [a for a in sys.argv[1:] if not a.startswith(("--container-image=", "--container-mounts="))]
os.execv("/usr/bin/srun", ["srun", *args])
""")
        os.chmod(os.path.join(fake, "srun"), 0o755)
        job = self.sbatch("-N", "2", "--ntasks-per-node=1", TEMPLATE, "all_reduce", "-b", "8", "-e", "64",
                          "--backend", "mpi",
                          env={"PATH": fake + ":" + os.environ["PATH"], "COLLBENCH_SITE_ENV": SITE,
                               "COLLBENCH_CONTAINER_IMAGE": "nvcr.io#nvidia/pytorch:24.01-py3",
                               "COLLBENCH_CONTAINER_MOUNTS": "/fsx:/fsx"})
        self.assertEqual(self.wait_job(job), "COMPLETED", self.output(job))
        with open(log) as f:
            calls = [json.loads(line) for line in f]
        steps = [c for c in calls if COLLBENCH in c]
        self.assertEqual(len(steps), 1, calls)
        job_dir = self.job_dir(job)
        self.assertIn("--container-image=nvcr.io#nvidia/pytorch:24.01-py3", steps[0])
        self.assertIn(f"--container-mounts={job_dir}:{job_dir},/fsx:/fsx", steps[0])
        self.assertIn("# container image: nvcr.io#nvidia/pytorch:24.01-py3", self.output(job))
        # The per-node probe of the header runs on the hosts, outside the container.
        self.assertFalse(any("--container-image" in a for c in calls if c not in steps for a in c))

    def test_campaign_checks_that_ask_slurm(self):
        results = os.path.join(self.dir, "results")

        def sweep(camp_text, *args):
            path = os.path.join(self.dir, "c.yaml")
            with open(path, "w") as f:
                f.write(camp_text)
            return self.cluster.on(1, [SWEEP, *args, path, "--collbench", COLLBENCH, "--template", TEMPLATE,
                                       "--results", results], check=False, cwd=self.dir)

        base = "campaign: limits\ntests: [all_reduce]\nbackend: mpi\n"
        r = sweep(base + "nodes: [2, 8]\npartitions: [all]\n", "plan")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("c.yaml:4:12: nodes: 8 is more than partition 'all' allows (it has 4 nodes, says Slurm)",
                      r.stderr)
        r = sweep(base + "nodes: [8]\n", "submit")  # the default partition
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("nodes: 8 is more than partition 'all' allows", r.stderr)
        r = sweep(base + "nodes: [2]\npartitions:\n  - {name: gpu, instance_type: x}\n", "plan")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("c.yaml:6:5: Slurm has no partition 'gpu'", r.stderr)
        # sbatch itself refuses the job: exit 3, the message, nothing recorded for it.
        r = sweep(base + "nodes: [2]\nsbatch_args: [--constraint=nosuchfeature]\n", "submit")
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("sbatch rejected default-n2x1-default-r0", r.stdout + r.stderr)
        self.assertIn("Invalid feature specification", r.stdout + r.stderr)
        manifest = os.path.join(results, "limits", "manifest.jsonl")
        events = read_jsonl(manifest) if os.path.exists(manifest) else []
        self.assertEqual([e for e in events if e["event"] == "submitted"], [])
        # Within the limits, plan shows the exact sbatch line.
        r = sweep(base + "nodes: [2, 4]\n", "plan")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"sbatch --parsable --job-name=limits.default-n4x1-default-r0 --nodes=4", r.stdout)


if __name__ == "__main__":
    why = cbcluster.skip_reason()
    if why:
        print(f"skipped: {why}")
        sys.exit(cbcluster.SKIP)
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]], verbosity=2)
