#!/usr/bin/python3
"""collbench-sweep from the command line: local runs through real mpirun, and submission through
stand-in sbatch/squeue programs (the real Slurm cluster is in tests/slurm and tests/cluster).

Environment (set by CTest): COLLBENCH, COLLBENCH_SWEEP, COLLBENCH_SOURCE_DIR, COLLBENCH_SCHEMA.
Run one test: test_sweep_cli.py Local.test_runs_collects_labels_and_resumes
"""

import json
import os
import pty
import select
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collbench_lines import CONTEXT_LINE, RESULT_LINE  # noqa: E402

SWEEP = os.environ.get("COLLBENCH_SWEEP", "build/collbench-sweep")
COLLBENCH = os.environ.get("COLLBENCH", "build/collbench")
SOURCE = os.environ.get("COLLBENCH_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
SCHEMA = os.environ.get("COLLBENCH_SCHEMA", os.path.join(SOURCE, "results/schema/collbench-results.schema.json"))

# UTF-8 text (collbench records the environment as JSON text) full of shell traps.
NASTY = ("  two  spaces 'single' \"double\" $(touch {marker}) `touch {marker}` ; touch {marker} & | "
         "> out < in \\ back\\slash\nsecond line\ttab $HOME ${{PATH}} !! * ? ~ # ü€ end\n")


def sweep(*args, env=None, cwd=None, timeout=300, path=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    if path is not None:
        e["PATH"] = path
    return subprocess.run([SWEEP, *args], capture_output=True, text=True, env=e, cwd=cwd, timeout=timeout)


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def manifest(results, campaign):
    path = os.path.join(results, campaign, "manifest.jsonl")
    return read_jsonl(path) if os.path.exists(path) else []


class Temp(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="collbench-sweep-cli-")
        self.results = os.path.join(self.dir, "results")
        self.marker = os.path.join(self.dir, "MARKER")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def local_campaign(self, extra_variants=()):
        value = json.dumps(NASTY.format(marker=self.marker))
        variants = [("probe", f'{{COLLBENCH_PROBE: {value}, NCCL_SOMETHING: "a;b"}}'),
                    ("tcp", '{OMPI_MCA_btl: "self,tcp"}'), *extra_variants]
        lines = ["campaign: cli", "tests: [all_reduce, sendrecv]", "backend: mpi",
                 "sizes: {min: 8, max: 4K, factor: 8}", "iters: 3", "warmup: 1", "timeout: 60",
                 "nodes: [1]", "tasks_per_node: [2]", 'time_limit: "5"', "variants:"]
        lines += [f"  - {{name: {name}, env: {env}}}" for name, env in variants]
        return self.write("local.yaml", "\n".join(lines) + "\n")


class Local(Temp):
    def test_runs_collects_labels_and_resumes(self):
        camp = self.local_campaign()
        r = sweep("run", "--local", camp, "--collbench", COLLBENCH, "--results", self.results)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        root = os.path.join(self.results, "cli")
        runs = {"local-n1x2-probe-r0": "probe", "local-n1x2-tcp-r0": "tcp"}
        schema = None
        try:
            import jsonschema
            with open(SCHEMA) as f:
                schema = jsonschema.Draft202012Validator(json.load(f))
        except ImportError:
            pass
        for run, variant in runs.items():
            records = read_jsonl(os.path.join(root, run + ".jsonl"))
            contexts = [x for x in records if x["record"] == "context"]
            results = [x for x in records if x["record"] == "result"]
            self.assertEqual(len(contexts), 1)
            self.assertGreater(len(results), 0)
            for x in records:
                self.assertEqual(x["labels"]["campaign"], "cli")
                self.assertEqual(x["labels"]["variant"], variant)
                self.assertEqual(x["labels"]["run"], run)
                self.assertEqual(x["labels"]["partition"], "local")
                self.assertEqual(x["labels"]["nodes"], 1)
                self.assertEqual(x["labels"]["tasks_per_node"], 2)
                self.assertEqual(x["labels"]["repeat"], 0)
                self.assertIn("instance_type", x["labels"])
                if schema:
                    schema.validate(x)
            self.assertTrue(all(x["wrong"] == 0 for x in results if x["wrong"] is not None))
            self.assertEqual(contexts[0]["nranks"], 2)
        # The variant's values reached collbench byte for byte and nothing in them ran.
        ctx = read_jsonl(os.path.join(root, "local-n1x2-probe-r0.jsonl"))[0]
        self.assertEqual(ctx["env"]["COLLBENCH_PROBE"], NASTY.format(marker=self.marker))
        self.assertEqual(ctx["env"]["NCCL_SOMETHING"], "a;b")
        self.assertFalse(os.path.exists(self.marker), "an environment value was executed")
        ctx = read_jsonl(os.path.join(root, "local-n1x2-tcp-r0.jsonl"))[0]
        self.assertEqual(ctx["env"]["OMPI_MCA_btl"], "self,tcp")
        self.assertNotIn("COLLBENCH_PROBE", ctx["env"], "one variant's settings leaked into another")
        # Raw files are not *.jsonl, so readers of results/<campaign>/**/*.jsonl see labelled data only.
        for base, _, files in os.walk(root):
            for f in files:
                if f.endswith(".jsonl") and f != "manifest.jsonl":
                    self.assertEqual(base, root, f"unlabelled JSONL at {base}/{f}")
        events = manifest(self.results, "cli")
        self.assertEqual([e["event"] for e in events], ["started", "collected", "started", "collected"])
        self.assertTrue(all(e["schema"]["name"] == "collbench-sweep-manifest" for e in events))
        # Status from the manifest.
        r = sweep("status", "--local", "--json", camp, "--results", self.results)
        self.assertEqual(r.returncode, 0, r.stderr)
        st = json.loads(r.stdout)
        self.assertEqual(st["counts"]["done"], 2)
        # Running again does nothing: the manifest says both are done.
        mtime = os.path.getmtime(os.path.join(root, "local-n1x2-tcp-r0.jsonl"))
        r = sweep("run", "--local", camp, "--collbench", COLLBENCH, "--results", self.results)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("0 to do", r.stdout)
        self.assertEqual(mtime, os.path.getmtime(os.path.join(root, "local-n1x2-tcp-r0.jsonl")))
        self.assertEqual(len(manifest(self.results, "cli")), 4)
        # --redo measures again.
        r = sweep("run", "--local", "--redo", camp, "--collbench", COLLBENCH, "--results", self.results)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(len(manifest(self.results, "cli")), 8)

    def test_failed_run_is_recorded_and_retried_only_when_asked(self):
        camp = self.local_campaign(extra_variants=[("broken", '{OMPI_MCA_btl: "no_such_transport"}')])
        args = ["--collbench", COLLBENCH, "--results", self.results]
        r = sweep("run", "--local", camp, *args)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("FAILED local-n1x2-broken-r0: non-zero exit", r.stdout)
        events = manifest(self.results, "cli")
        failed = [e for e in events if e["event"] == "failed"]
        self.assertEqual(len(failed), 1)
        self.assertEqual(failed[0]["run"], "local-n1x2-broken-r0")
        self.assertIn("output.log", failed[0]["reason"])
        self.assertFalse(os.path.exists(os.path.join(self.results, "cli", "local-n1x2-broken-r0.jsonl")))
        r = sweep("status", "--local", camp, "--results", self.results)
        self.assertRegex(r.stdout, r"local-n1x2-broken-r0\s+failed\s+-\s+non-zero exit")
        # Not retried unless asked.
        r = sweep("run", "--local", camp, *args)
        self.assertEqual(r.returncode, 3)
        self.assertIn("1 failed runs skipped: pass --retry-failed", r.stdout)
        self.assertEqual(len(manifest(self.results, "cli")), len(events))
        r = sweep("run", "--local", "--retry-failed", camp, *args)
        self.assertEqual(r.returncode, 3)
        after = manifest(self.results, "cli")
        self.assertEqual([e["event"] for e in after[len(events):]], ["started", "failed"])
        self.assertEqual(after[-1]["attempt"], 2)

    def test_progress_redraws_on_a_terminal_and_prints_lines_on_a_pipe(self):
        camp = self.local_campaign()
        args = [SWEEP, "run", "--local", camp, "--collbench", COLLBENCH, "--results", self.results]
        # On a pipe: plain lines.
        r = subprocess.run(args, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("\r", r.stdout)
        self.assertIn("[1/2] local-n1x2-probe-r0 (2 ranks): started", r.stdout)
        self.assertRegex(r.stdout, r"\[1/2\]  50% · ETA \d+:\d\d")
        # On a terminal: one status line redrawn in place.
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(SWEEP, [SWEEP, "run", "--local", "--redo", camp, "--collbench", COLLBENCH, "--results",
                             self.results])
        out = b""
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        _, status = os.waitpid(pid, 0)
        text = out.decode(errors="replace")
        self.assertEqual(os.waitstatus_to_exitcode(status), 0, text)
        self.assertIn("\r\x1b[K[0/2]   0% · ETA --:--", text)
        self.assertRegex(text, r"\r\x1b\[K\[1/2\]  50% · ETA \d+:\d\d")
        self.assertIn("ok     local-n1x2-probe-r0", text)

    def test_precision_travels_through_campaign_args(self):
        # Variants carry collbench's own options, checked by collbench's parser.
        path = self.write("p.yaml", "campaign: p\ntests: [all_reduce]\nnodes: [1]\n"
                                    "args: [--precision, 1%, --max-time, '5']\n")
        r = sweep("plan", "--local", path, "--collbench", COLLBENCH, "--results", self.results)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--precision 1% --max-time 5", r.stdout)
        path = self.write("q.yaml", "campaign: q\ntests: [all_reduce]\nnodes: [1]\nargs: [--precision, '0']\n")
        r = sweep("plan", "--local", path, "--collbench", COLLBENCH, "--results", self.results)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("collbench rejects the options", r.stderr)
        self.assertIn("--precision 0", r.stderr)

    def test_buffer_policy_varies_like_any_other_setting(self):
        # Each variant's args reach collbench; each run states its policy in context and rows.
        camp = self.write("buffers.yaml", "campaign: buf\ntests: [all_reduce, sendrecv]\nbackend: mpi\n"
                                          "sizes: {min: 8, max: 4K, factor: 8}\niters: 3\nwarmup: 1\n"
                                          "timeout: 60\nnodes: [1]\ntasks_per_node: [2]\ntime_limit: '5'\n"
                                          "variants:\n  - {name: rotate, args: [--buffers, rotate]}\n"
                                          "  - {name: fixed, args: [--buffers, fixed]}\n")
        r = sweep("run", "--local", camp, "--collbench", COLLBENCH, "--results", self.results)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for policy in ("rotate", "fixed"):
            records = read_jsonl(os.path.join(self.results, "buf", f"local-n1x2-{policy}-r0.jsonl"))
            contexts = [x for x in records if x["record"] == "context"]
            results = [x for x in records if x["record"] == "result"]
            self.assertEqual(contexts[0]["options"]["buffers"], policy)
            self.assertTrue(results)
            for x in results:
                self.assertEqual(x["buffers"], policy, x)
                self.assertEqual(x["labels"]["variant"], policy)
        bad = self.write("bad.yaml", "campaign: b\ntests: [all_reduce]\nnodes: [1]\nargs: [--buffers, warm]\n")
        r = sweep("plan", "--local", bad, "--collbench", COLLBENCH, "--results", self.results)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--buffers warm", r.stderr)

    def test_demo_campaign_plan(self):
        # The demo campaign (make demo) for real: every test, 4 ranks, two variants.
        demo = os.path.join(SOURCE, "slurm/campaigns/local-demo.yaml")
        r = sweep("plan", "--local", demo, "--collbench", COLLBENCH, "--results", self.results)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("mpirun -np 4", r.stdout)
        r = sweep("run", "--local", demo, "--collbench", COLLBENCH, "--results", self.results)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        root = os.path.join(self.results, "demo")
        tests = set()
        for run in ["local-n1x4-shm-r0", "local-n1x4-tcp-r0"]:
            records = read_jsonl(os.path.join(root, run + ".jsonl"))
            results = [x for x in records if x["record"] == "result"]
            tests |= {x["test"] for x in results}
            self.assertTrue(all(x["wrong"] in (0, None) for x in results))
            self.assertEqual({x["bytes"] for x in results if x["test"] == "all_reduce"},
                             {8, 32, 128, 512, 2048, 8192, 32768, 131072, 524288})
            self.assertEqual(records[0]["nranks"], 4)
        self.assertEqual(len(tests), 12, tests)  # `all`: every test collbench has


class FakeSlurm(Temp):
    """Stand-in sbatch/squeue programs on PATH that record what they are asked."""

    def setUp(self):
        super().setUp()
        self.bin = os.path.join(self.dir, "bin")
        os.makedirs(self.bin)
        self.log = os.path.join(self.dir, "sbatch.log")
        self.campaign = self.write("slurm.yaml", """\
            campaign: fake
            tests: [all_reduce]
            backend: mpi
            nodes: [1, 2]
            tasks_per_node: 2
            variants:
              - {name: a, env: {COLLBENCH_PROBE: "x y"}}
              - {name: b}
            repeats: 2
            """)

    def fake(self, name, body):
        path = os.path.join(self.bin, name)
        with open(path, "w") as f:
            f.write("#!/usr/bin/python3\n" + textwrap.dedent(body))
        os.chmod(path, 0o755)

    def squeue_that_forgot_every_job(self):
        # As after MinJobAge: squeue knows no job, so the jobs' own files decide.
        self.fake("squeue", """\
            import sys
            sys.stderr.write("slurm_load_jobs error: Invalid job id specified\\n")
            sys.exit(1)
            """)

    def sbatch_that_accepts(self, delay=0.0):
        # Assigns increasing job ids under a lock, logs the job name, checks the env file exists.
        self.fake("sbatch", f"""\
            import fcntl, os, sys, time
            time.sleep({delay})
            name = [a for a in sys.argv if a.startswith("--job-name=")][0].split("=", 1)[1]
            assert os.path.exists(os.environ["COLLBENCH_ENV_FILE"].replace("%a", "0")), "env file missing"
            with open({self.log!r}, "a+") as f:
                fcntl.flock(f, fcntl.LOCK_EX)
                f.seek(0)
                n = 100 + len(f.read().splitlines())
                f.write(name + "\\n")
            print(n)
            """)

    def path(self):
        # Only the stand-ins and the basics: the real Slurm commands must not be found.
        return self.bin + ":/nonexistent"


class Submit(FakeSlurm):
    def test_two_concurrent_submits_submit_each_run_once(self):
        self.sbatch_that_accepts(delay=0.1)
        e = dict(os.environ, PATH=self.path())
        cmd = [SWEEP, "submit", self.campaign, "--collbench", COLLBENCH, "--results", self.results]
        first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
        second = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
        out1, err1 = first.communicate(timeout=120)
        out2, err2 = second.communicate(timeout=120)
        self.assertEqual(first.returncode, 0, out1 + err1)
        self.assertEqual(second.returncode, 0, out2 + err2)
        with open(self.log) as f:
            names = f.read().splitlines()
        self.assertEqual(len(names), 8, names)
        self.assertEqual(len(set(names)), 8, f"a run was submitted twice: {names}")
        submitted = [ev for ev in manifest(self.results, "fake") if ev["event"] == "submitted"]
        self.assertEqual(sorted(ev["run"] for ev in submitted), sorted(n.split(".", 1)[1] for n in names))
        self.assertEqual(len({ev["job_id"] for ev in submitted}), 8)
        # One of them waited for the other and then found everything submitted.
        both = out1 + out2
        self.assertIn("8 already submitted", both)
        self.assertIn("waiting for another collbench-sweep", both)

    def test_missing_sbatch_exits_3_and_leaves_the_manifest(self):
        r = sweep("submit", self.campaign, "--collbench", COLLBENCH, "--results", self.results, path=self.path())
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("sbatch not found on PATH", r.stdout + r.stderr)
        self.assertEqual([e for e in manifest(self.results, "fake") if e["event"] == "submitted"], [])

    def test_missing_squeue_exits_3(self):
        self.sbatch_that_accepts()
        args = [self.campaign, "--collbench", COLLBENCH, "--results", self.results]
        self.assertEqual(sweep("submit", *args, path=self.path()).returncode, 0)
        for sub in ("status", "wait", "collect"):
            r = sweep(sub, *args, path=self.path())
            self.assertEqual(r.returncode, 3, f"{sub}: {r.stdout}{r.stderr}")
            self.assertIn("squeue not found on PATH", r.stderr)
        self.assertEqual({e["event"] for e in manifest(self.results, "fake")}, {"submitted"})

    def test_sbatch_rejection_exits_3_and_leaves_the_manifest(self):
        # Accepts the first two submissions, then refuses.
        self.fake("sbatch", f"""\
            import sys
            with open({self.log!r}, "a+") as f:
                f.seek(0)
                n = len(f.read().splitlines())
                f.write("x\\n")
            if n >= 2:
                sys.stderr.write("sbatch: error: Batch job submission failed: Invalid partition name specified\\n")
                sys.exit(1)
            print(500 + n)
            """)
        r = sweep("submit", self.campaign, "--collbench", COLLBENCH, "--results", self.results, path=self.path())
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("sbatch rejected default-n2x2-a-r0", r.stdout + r.stderr)
        self.assertIn("Invalid partition name specified", r.stdout + r.stderr)
        submitted = [e for e in manifest(self.results, "fake") if e["event"] == "submitted"]
        self.assertEqual([e["job_id"] for e in submitted], ["500", "501"], "only accepted runs are recorded")

    def test_dry_run_touches_nothing(self):
        r = sweep("submit", "--dry-run", self.campaign, "--collbench", COLLBENCH, "--results", self.results,
                  path=self.path())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.count("would submit"), 8)
        self.assertIn("COLLBENCH_ENV_FILE=", r.stdout)
        self.assertFalse(os.path.exists(self.results))
        r = sweep("submit", "--dry-run", "--array", self.campaign, "--collbench", COLLBENCH, "--results",
                  self.results, path=self.path())
        self.assertEqual(r.stdout.count("would submit"), 4, r.stdout)
        self.assertIn("--array=0,1", r.stdout)

    def test_resubmits_failed_runs_only_when_asked(self):
        self.sbatch_that_accepts()
        # squeue no longer knows any job (as after MinJobAge): the job's files decide.
        self.squeue_that_forgot_every_job()
        args = [self.campaign, "--collbench", COLLBENCH, "--results", self.results]
        r = sweep("submit", *args, path=self.path())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        events = manifest(self.results, "fake")
        # Pretend the jobs ran: one was cancelled, the others finished well.
        for e in events:
            job_dir = os.path.dirname(e["raw_jsonl"])
            os.makedirs(job_dir, exist_ok=True)
            if e["run"] == "default-n2x2-a-r1":
                with open(e["output"], "w") as f:
                    f.write(f"slurmstepd: error: *** JOB {e['job_id']} ON node1 CANCELLED AT 2024-01-01T00:00:00 ***\n")
                continue
            with open(e["output"], "w") as f:
                f.write("# collbench exited with status 0\n")
            with open(os.path.join(job_dir, "exit_status"), "w") as f:
                f.write("0\n")
            with open(e["raw_jsonl"], "w") as f:
                f.write(CONTEXT_LINE + "\n" + RESULT_LINE + "\n")
        r = sweep("status", "--json", *args, path=self.path())
        self.assertEqual(r.returncode, 0, r.stderr)
        st = json.loads(r.stdout)
        self.assertEqual(st["counts"]["done"], 7)
        self.assertEqual(st["counts"]["failed"], 1)
        bad = [x for x in st["runs"] if x["state"] == "failed"][0]
        self.assertEqual(bad["run"], "default-n2x2-a-r1")
        self.assertTrue(bad["detail"].startswith("cancelled:"), bad)
        # Without --retry-failed, submit leaves the failed run alone.
        r = sweep("submit", *args, path=self.path())
        self.assertEqual(r.returncode, 0)
        self.assertIn("8 already submitted", r.stdout)
        r = sweep("collect", *args, path=self.path())
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("failed default-n2x2-a-r1", r.stdout)
        self.assertIn("cancelled", r.stdout)
        collected = [e for e in manifest(self.results, "fake") if e["event"] == "collected"]
        self.assertEqual(len(collected), 7)
        labelled = read_jsonl(os.path.join(self.results, "fake", "default-n1x2-a-r0.jsonl"))
        self.assertEqual(labelled[1]["labels"]["variant"], "a")
        r = sweep("submit", *args, path=self.path())
        self.assertIn("1 failed skipped (pass --retry-failed", r.stdout)
        with open(self.log) as f:
            self.assertEqual(len(f.read().splitlines()), 8)
        r = sweep("submit", "--retry-failed", *args, path=self.path())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("submitted default-n2x2-a-r1 as job 108", r.stdout)
        with open(self.log) as f:
            self.assertEqual(len(f.read().splitlines()), 9)



class Placement(FakeSlurm):
    """placement: on a topology file: what reaches sbatch, and the label collect gives each run
    from the hosts it ran on."""

    TOPOLOGY = ("SwitchName=leaf1 Nodes=node[1-3]\nSwitchName=leaf2 Nodes=node[4-6]\n"
                "SwitchName=leaf3 Nodes=node[7-8]\nSwitchName=spine Switches=leaf[1-3]\n")

    def setUp(self):
        super().setUp()
        os.makedirs(os.path.join(self.dir, "net"))
        with open(os.path.join(self.dir, "net", "topology.conf"), "w") as f:
            f.write(self.TOPOLOGY)
        self.campaign = self.write("placed.yaml", """\
            campaign: fake
            tests: [all_reduce]
            backend: mpi
            nodes: [2]
            topology: net/topology.conf
            placement: same-leaf
            variants:
              - {name: near}
              - {name: far, placement: across}
            repeats: 2
            """)

    def sbatch_that_logs_its_arguments(self):
        self.fake("sbatch", f"""\
            import json, sys
            with open({self.log!r}, "a+") as f:
                f.seek(0)
                n = 100 + len(f.read().splitlines())
                f.write(json.dumps(sys.argv[1:]) + "\\n")
            print(n)
            """)

    def finish_job(self, event, hosts):
        # What the job leaves: its exit status and results whose context names its hosts.
        os.makedirs(os.path.dirname(event["raw_jsonl"]), exist_ok=True)
        with open(event["output"], "w") as f:
            f.write("# collbench exited with status 0\n")
        with open(os.path.join(os.path.dirname(event["raw_jsonl"]), "exit_status"), "w") as f:
            f.write("0\n")
        context = json.loads(CONTEXT_LINE)
        context["hosts"] = [{"name": h, "ranks": [i], "instance_type": ""} for i, h in enumerate(hosts)]
        with open(event["raw_jsonl"], "w") as f:
            f.write(json.dumps(context) + "\n" + RESULT_LINE + "\n")

    def test_switches_and_nodelist_reach_sbatch_and_collect_labels_where_runs_ran(self):
        self.sbatch_that_logs_its_arguments()
        self.squeue_that_forgot_every_job()
        args = [self.campaign, "--collbench", COLLBENCH, "--results", self.results]
        r = sweep("plan", *args, path=self.path())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("placement same-leaf: --switches=1@30:00", r.stdout)
        self.assertIn("placement across: --nodelist=node1,node4 from ", r.stdout)
        self.assertIn("node1 (leaf1), node4 (leaf2)", r.stdout)
        # A local run has one host: no switch can separate its nodes.
        r = sweep("run", "--local", *args, path=self.path())
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("placed.yaml:6:12: placement: same-leaf asks Slurm", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

        r = sweep("submit", *args, path=self.path())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(self.log) as f:
            argvs = [json.loads(line) for line in f]
        self.assertEqual(len(argvs), 4)
        for argv in argvs:
            name = [a for a in argv if a.startswith("--job-name=")][0]
            if "-near-" in name:
                self.assertIn("--switches=1@30:00", argv)
                self.assertFalse([a for a in argv if a.startswith("--nodelist")], argv)
            else:
                self.assertIn("--nodelist=node1,node4", argv)
                self.assertNotIn("--switches=1@30:00", argv)
        submitted = {e["run"]: e for e in manifest(self.results, "fake") if e["event"] == "submitted"}
        self.assertEqual(submitted["default-n2x1-far-r0"]["definition"]["placement"], "across")

        # Where the jobs really ran: one leaf, two leaves, and a host the topology lacks.
        landed = {"default-n2x1-near-r0": ["node1", "node2"],
                  "default-n2x1-far-r0": ["node1", "node4"],
                  "default-n2x1-near-r1": ["node5", "node9"],
                  "default-n2x1-far-r1": ["node3.cluster", "node8"]}
        for run, hosts in landed.items():
            self.finish_job(submitted[run], hosts)
        r = sweep("collect", *args, path=self.path())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.count("does not place node9"), 1, r.stdout)
        expect = {"default-n2x1-near-r0": "same-leaf", "default-n2x1-far-r0": "across-level-2",
                  "default-n2x1-near-r1": "unknown", "default-n2x1-far-r1": "across-level-2"}
        for run, label in expect.items():
            records = read_jsonl(os.path.join(self.results, "fake", run + ".jsonl"))
            self.assertEqual({x["labels"]["placement"] for x in records}, {label}, run)
            self.assertIn(f"collected {run} ", r.stdout)
        self.assertIn("placement: 1 run labelled unknown: ", r.stdout)

class BadInput(Temp):
    def test_campaign_errors_exit_2_with_position(self):
        cases = [
            ("campaign: t\ntests: [all_reduce]\nnode: [2]\n", "c.yaml:3:1: unknown key 'node' in the campaign; did you mean 'nodes'?"),
            ("campaign: t\ntests: [all_reduce]\nnodes: []\n", "c.yaml:3:8: 'nodes' is empty"),
            ("campaign: t\ntests: [all_reduce]\nnodes: [2]\nsizes: {min: 8, max: 2X}\n", "c.yaml:4:22: sizes.max '2X' is not a size"),
            ("campaign: t\ntests: [all_reduce]\nnodes: [2]\nvariants: [{name: a}, {name: a}]\n", "variant 'a' is defined twice"),
            ("campaign: t\ntests: [all_reduce]\nnodes: [2]\nargs: [--pairs, some]\n", "c.yaml:4:7: collbench rejects the options"),
            ("campaign: t\ntests: [all_reduce]\nnodes: [2]\ndoctor: on\n", "c.yaml:4:9: 'doctor' must be off, check, require or strict"),
        ]
        for text, expect in cases:
            path = os.path.join(self.dir, "c.yaml")
            with open(path, "w") as f:
                f.write(text)
            for sub in (["plan"], ["submit", "--dry-run"], ["run", "--local"], ["status"]):
                r = sweep(*sub, "c.yaml", cwd=self.dir)
                self.assertEqual(r.returncode, 2, f"{sub} {text!r}: {r.stderr}")
                self.assertIn(expect, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        r = sweep("plan", "missing.yaml", cwd=self.dir)
        self.assertEqual(r.returncode, 2)
        self.assertIn("campaign file missing.yaml: no such file", r.stderr)
        r = sweep("frobnicate", cwd=self.dir)
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]], verbosity=2)
