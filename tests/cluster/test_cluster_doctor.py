#!/usr/bin/python3
"""collbench doctor on a real Slurm cluster of network-namespace hosts (cbcluster.py), one task
per host, set up unlike each other as real clusters drift: node3's /etc/nccl.conf sets another
NCCL_BUFFSIZE, and node2 lacks the net plugin the others load (its folder is empty there). Both
must be named, with their hosts; the same through the sbatch template's COLLBENCH_DOCTOR switch,
where `require` keeps the benchmark from running.

The net plugin is a stand-in built with the tests (tests/doctor/plugins): it exports what NCCL
looks for and states an aws-ofi-nccl version, as the real one does.

Environment (set by CTest): COLLBENCH, COLLBENCH_SOURCE_DIR, DOCTOR_PLUGIN_DIR.
Exit code 77 (skipped) when the machine cannot build the cluster (not root, no Slurm).
"""

import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbcluster  # noqa: E402

COLLBENCH = os.environ.get("COLLBENCH", "build/collbench")
SOURCE = os.environ.get("COLLBENCH_SOURCE_DIR",
                        os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
PLUGINS = os.environ.get("DOCTOR_PLUGIN_DIR", "build/tests/doctor/net-plugins")
TEMPLATE = os.path.join(SOURCE, "slurm", "collbench.sbatch")
SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "netns-site.sh")

# MPI between the hosts over libfabric's tcp (see netns-site.sh: Open MPI's TCP BTL crashes in a
# few per cent of srun starts here); the plugin every host should load.
JOB_ENV = {
    "OMPI_MCA_pml": "cm", "OMPI_MCA_mtl": "ofi", "OMPI_MCA_mtl_ofi_provider_include": "tcp;ofi_rxm",
    "OMPI_MCA_btl": "self", "FI_PROVIDER": "tcp",
    "NCCL_NET_PLUGIN": "fakeofi", "LD_LIBRARY_PATH": PLUGINS,
}


def findings_naming(report, host, words):
    """The findings whose hosts include `host` and whose message holds every word."""
    return [f for f in report["findings"]
            if host in f["hosts"] and all(w in f["message"] for w in words)]


class DoctorOnCluster(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        reason = cbcluster.skip_reason()
        if reason:
            print(f"skipped: {reason}")
            sys.exit(77)
        cls.dir = tempfile.mkdtemp(prefix="collbench-doctor-test-")
        os.chmod(cls.dir, 0o755)
        cls.cluster = cbcluster.Cluster(
            hosts=3,
            site_files={3: {"nccl.conf": "# site tuning\nNCCL_BUFFSIZE=4194304\n"}},
            hidden_dirs={2: [os.path.abspath(PLUGINS)]})
        cls.cluster.__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.cluster.__exit__(None, None, None)
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_a_drifted_site_file_and_a_missing_plugin_are_named_with_their_hosts(self):
        out = os.path.join(self.dir, "doctor.json")
        # As the Slurm template launches the doctor: every rank exits 1 on a problem, and with
        # --kill-on-bad-exit=1 the first to exit would have the others killed (srun: 137).
        r = self.cluster.on(1, ["srun", "--mpi=pmix", "-N3", "--ntasks-per-node=1", "--kill-on-bad-exit=0",
                                COLLBENCH, "doctor", "--json-file", out, "--timeout", "60"],
                            env=JOB_ENV, check=False, timeout=120)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        with open(out) as f:
            report = json.load(f)
        hosts = {h["host"]: h for h in report["hosts"]}
        self.assertEqual(sorted(hosts), ["node1", "node2", "node3"])
        plugin = {name: next(l for l in h["libraries"] if l["name"] == "net_plugin")
                  for name, h in hosts.items()}
        self.assertTrue(plugin["node1"]["found"] and plugin["node3"]["found"])
        self.assertEqual(plugin["node1"]["version"], "1.14.0")
        self.assertFalse(plugin["node2"]["found"])
        self.assertEqual(hosts["node3"]["nccl_conf"], {"NCCL_BUFFSIZE": "4194304"})
        self.assertIn("/etc/nccl.conf", hosts["node3"]["nccl_conf_files"])
        self.assertEqual(hosts["node1"]["nccl_conf"], {})

        # Named, with the hosts concerned, in the JSON and in the table.
        buffsize = [f for f in report["findings"] if "NCCL_BUFFSIZE" in f["message"]
                    and "node3" in f["message"]]
        self.assertTrue(buffsize, json.dumps(report["findings"], indent=1))
        missing = [f for f in report["findings"] if "node2" in f["hosts"] and f["severity"] == "failure"
                   and "plugin" in f["message"].lower()]
        self.assertTrue(missing, json.dumps(report["findings"], indent=1))
        lines = r.stdout.splitlines()
        self.assertTrue(any("NCCL_BUFFSIZE" in l and "node3" in l for l in lines), r.stdout)
        self.assertTrue(any("node2" in l and "plugin" in l.lower() for l in lines), r.stdout)

    def test_hosts_set_up_alike_pass(self):
        # Only node1: nothing to differ from, the plugin is there, no RDMA devices to check.
        out = os.path.join(self.dir, "one.json")
        r = self.cluster.on(1, ["srun", "--mpi=pmix", "-N1", "-w", "node1", "--ntasks-per-node=1",
                                COLLBENCH, "doctor", "--json-file", out],
                            env=JOB_ENV, check=False, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertFalse([f for f in report["findings"] if f["severity"] == "failure"], report["findings"])

    def sbatch(self, mode):
        """The sbatch template on the three hosts with COLLBENCH_DOCTOR=mode; a small MPI
        all_reduce as the benchmark. Returns (exit status, job output, job folder)."""
        job_dir = os.path.join(self.dir, mode)
        os.makedirs(job_dir)
        env = dict(JOB_ENV, COLLBENCH_HOME=SOURCE, COLLBENCH_BIN=COLLBENCH, COLLBENCH_LAUNCHER="mpirun",
                   COLLBENCH_DOCTOR=mode, COLLBENCH_JSONL=os.path.join(job_dir, "collbench.jsonl"))
        out = os.path.join(job_dir, "job.out")
        r = self.cluster.on(1, ["sbatch", "--wait", "-N", "3", f"--output={out}", TEMPLATE,
                                "all_reduce", "--backend", "mpi", "-b", "1K", "-e", "4K", "-n", "3",
                                "-w", "1", "--timeout", "60"], env=env, check=False, timeout=180)
        with open(out) as f:
            return r.returncode, f.read(), job_dir

    def test_the_sbatch_switch_runs_the_doctor_first(self):
        # require: node2's missing plugin is a failed check, so nothing is measured.
        rc, output, job_dir = self.sbatch("require")
        self.assertEqual(rc, 3, output)
        with open(os.path.join(job_dir, "exit_status")) as f:
            self.assertEqual(f.read().strip(), "3")
        self.assertTrue(os.path.exists(os.path.join(job_dir, "doctor.json")))
        self.assertFalse(os.path.exists(os.path.join(job_dir, "collbench.jsonl")), output)
        self.assertIn("the benchmark was not run (COLLBENCH_DOCTOR=require)", output)
        self.assertTrue(any(l.startswith("#   ") and "node2" in l for l in output.splitlines()), output)
        # check: the same finding is reported and the benchmark runs anyway.
        rc, output, job_dir = self.sbatch("check")
        self.assertEqual(rc, 0, output)
        self.assertIn("measuring anyway (COLLBENCH_DOCTOR=check)", output)
        with open(os.path.join(job_dir, "collbench.jsonl")) as f:
            rows = [json.loads(l) for l in f if '"record":"result"' in l.replace(" ", "")]
        self.assertTrue(rows and all(r["wrong"] == 0 and r["nodes"] == 3 for r in rows), rows)


if __name__ == "__main__":
    unittest.main()
