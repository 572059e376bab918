#!/usr/bin/python3
"""collbench-sweep against a real Slurm cluster of four network-namespace hosts (cbcluster.py):
a campaign submitted (by two concurrent submits), waited for, collected and checked; a job killed
mid-run, reported failed and completed by a resubmit; one host's link shaped to 100 Mbit/s and
the runs that include it found slower at large sizes.

Environment (set by CTest): COLLBENCH, COLLBENCH_SWEEP, COLLBENCH_SOURCE_DIR.
Exit code 77 (skipped) when the machine cannot build the cluster (not root, no Slurm).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbcluster  # noqa: E402

SWEEP = os.environ.get("COLLBENCH_SWEEP", "build/collbench-sweep")
COLLBENCH = os.environ.get("COLLBENCH", "build/collbench")
SOURCE = os.environ.get("COLLBENCH_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
TEMPLATE = os.path.join(SOURCE, "slurm", "collbench.sbatch")
# The test cluster's site file (a path, relative names resolve against slurm/env/).
SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "netns-site.sh")

NASTY = ("spaces  'single' \"double\" $(touch {marker}) `touch {marker}` ; touch {marker} | x > y < z "
         "\\ back\nline two\t$HOME ${{PATH}} ü€\n")


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class ClusterTest(unittest.TestCase):
    cluster_args = {}

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="collbench-cluster-test-")
        os.chmod(self.dir, 0o755)
        self.results = os.path.join(self.dir, "results")
        self.marker = os.path.join(self.dir, "MARKER")
        self.cluster = cbcluster.Cluster(**self.cluster_args)
        self.cluster.__enter__()
        self.addCleanup(self.cluster.stop)  # runs even when the test fails

    def tearDown(self):
        if os.environ.get("COLLBENCH_KEEP_CLUSTER"):
            print(f"kept {self.dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def campaign(self, name, text):
        path = os.path.join(self.dir, name + ".yaml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def sweep(self, *args, check_rc=None, timeout=240):
        """collbench-sweep on the cluster's login host (node1)."""
        argv = [SWEEP, *args, "--collbench", COLLBENCH, "--template", TEMPLATE, "--results", self.results]
        r = self.cluster.on(1, argv, check=False, timeout=timeout, cwd=self.dir)
        if check_rc is not None and r.returncode != check_rc:
            self.fail(f"{' '.join(args)} exited {r.returncode}, expected {check_rc}\nstdout:\n{r.stdout}\n"
                      f"stderr:\n{r.stderr}\n{self.cluster.logs()[-4000:]}")
        return r

    def status(self, camp):
        return json.loads(self.sweep("status", "--json", camp, check_rc=0).stdout)

    def manifest(self, name):
        return read_jsonl(os.path.join(self.results, name, "manifest.jsonl"))


class Campaign(ClusterTest):
    # node4 is the least preferred host, so that the first 2-node job avoids it.
    cluster_args = {"node_weights": {"node4": 10}}

    def test_campaign_submit_wait_collect_with_a_slow_host(self):
        # One host on a 100 Mbit/s link (both ends), from the start.
        self.cluster.shape(4, "100mbit")
        value = NASTY.format(marker=self.marker)
        camp = self.campaign("cluster", f"""\
campaign: cluster
description: 2 variants x node counts 2 and 4 x 2 tasks per node, MPI backend over TCP
tests: [all_reduce, all_gather]
backend: mpi
sizes: {{min: 1K, max: 1M, factor: 4}}
iters: 5
warmup: 1
check: 1
timeout: 120
nodes: [2, 4]
tasks_per_node: 2
# mpirun (through Slurm) rather than srun: with Debian's Open MPI 4.1.4 the TCP BTL crashes in
# MPI_Init in a few per cent of srun --mpi=pmix starts here (see netns-site.sh), and this test
# measures the TCP BTL's bandwidth. srun is exercised by the other tests and tests/slurm.
launcher: mpirun
partitions:
  - {{name: all, instance_type: netns-host, site_env: tcp-only}}
variants:
  - name: probe
    env:
      COLLBENCH_PROBE: {json.dumps(value)}
      NCCL_SOMETHING: "x;y"
  - name: tcpself
    description: TCP between the ranks of a host too, and fewer iterations
    iters: 3
    env: {{OMPI_MCA_btl: "self,tcp"}}
time_limit: "5"
""")
        # Two submits at once: the manifest lock lets exactly one submit each run.
        argv = [SWEEP, "submit", camp, "--collbench", COLLBENCH, "--template", TEMPLATE, "--results", self.results]
        procs = [self.cluster.popen_on(1, argv, log=f"submit-{i}.out") for i in range(2)]
        for p in procs:
            self.assertEqual(p.wait(timeout=60), 0, self.cluster.logs())
        submitted = [e for e in self.manifest("cluster") if e["event"] == "submitted"]
        self.assertEqual(len(submitted), 4, submitted)
        self.assertEqual(len({e["run"] for e in submitted}), 4, "a run was submitted twice")
        r = self.cluster.on(1, ["squeue", "-h", "-t", "all", "-o", "%i %j"])
        self.assertEqual(len(r.stdout.split("\n")) - 1, 4, f"Slurm holds other than 4 jobs:\n{r.stdout}")

        self.sweep("wait", camp, "--interval", "0.5", "--timeout", "200", check_rc=0, timeout=240)
        r = self.sweep("collect", camp, check_rc=0)
        self.assertIn("collected 4 now", r.stdout)
        st = self.status(camp)
        self.assertEqual(st["counts"]["done"], 4, st)

        bandwidth = {}  # run -> (hosts, busbw of all_reduce at 1 MiB)
        for e in submitted:
            run = e["run"]
            labels = e["labels"]
            records = read_jsonl(os.path.join(self.results, "cluster", run + ".jsonl"))
            contexts = [x for x in records if x["record"] == "context"]
            results = [x for x in records if x["record"] == "result"]
            self.assertEqual(len(contexts), 1, run)
            self.assertGreater(len(results), 0, run)
            for x in records:
                self.assertEqual(x["labels"], {"campaign": "cluster", "variant": labels["variant"], "partition": "all",
                                               "instance_type": "netns-host", "repeat": 0,
                                               "nodes": labels["nodes"], "tasks_per_node": 2, "run": run})
            self.assertTrue(all(x["wrong"] == 0 for x in results), run)
            ctx = contexts[0]
            self.assertEqual(ctx["nodes"], labels["nodes"])
            self.assertEqual(ctx["nranks"], 2 * labels["nodes"])
            self.assertEqual(ctx["slurm"]["job_id"], e["job_id"])
            self.assertEqual(ctx["slurm"]["partition"], "all")
            # The site file (tcp-only) applies; the variant's values win and arrive literally.
            self.assertEqual(ctx["env"]["OMPI_MCA_pml"], "ob1")
            self.assertEqual(ctx["env"]["FI_PROVIDER"], "tcp")
            if labels["variant"] == "probe":
                self.assertEqual(ctx["env"]["COLLBENCH_PROBE"], value)
                self.assertEqual(ctx["env"]["NCCL_SOMETHING"], "x;y")
                self.assertEqual(ctx["env"]["OMPI_MCA_btl"], "self,vader,tcp")
                self.assertEqual(ctx["options"]["iters"], 5)
            else:
                self.assertEqual(ctx["env"]["OMPI_MCA_btl"], "self,tcp")
                self.assertNotIn("COLLBENCH_PROBE", ctx["env"])
                self.assertEqual(ctx["options"]["iters"], 3)
            hosts = {h["name"] for h in ctx["hosts"]}
            big = [x for x in results if x["test"] == "all_reduce" and x["bytes"] == 1 << 20
                   and x["placement"] == "out-of-place"]
            self.assertEqual(len(big), 1, run)
            bandwidth[run] = (hosts, big[0]["busbw_gbps"])
        self.assertFalse(os.path.exists(self.marker), "an environment value was executed")

        slow = {r: bw for r, (hosts, bw) in bandwidth.items() if "node4" in hosts}
        fast = {r: bw for r, (hosts, bw) in bandwidth.items() if "node4" not in hosts}
        self.assertTrue(slow and fast, f"need runs with and without node4: {bandwidth}")
        print(f"busbw at 1 MiB (GB/s): with the 100 Mbit/s host {slow}, without {fast}", file=sys.stderr)
        self.assertLess(max(slow.values()), min(fast.values()),
                        f"runs through the 100 Mbit/s host are not slower: {bandwidth}")
        # 100 Mbit/s is 0.0125 GB/s on the wire; all_reduce's busbw cannot exceed it by much.
        self.assertLess(max(slow.values()), 0.03)

        # Everything is done: another submit submits nothing.
        r = self.sweep("submit", camp, check_rc=0)
        self.assertIn("0 submitted, 4 already done", r.stdout)

    def test_killed_job_is_reported_failed_and_resubmit_completes_it(self):
        # Long enough to be cancelled after its first size (400 iterations each), short enough
        # that the resubmitted run completes quickly: three sizes.
        camp = self.campaign("killed", """\
campaign: killed
tests: [all_reduce]
backend: mpi
sizes: {min: 1K, max: 16K, factor: 4}
iters: 400
warmup: 1
timeout: 120
nodes: [2]
tasks_per_node: 2
partitions: [{name: all, site_env: %s}]
""" % SITE)
        self.sweep("submit", camp, check_rc=0)
        [sub] = [e for e in self.manifest("killed") if e["event"] == "submitted"]
        job = sub["job_id"]
        # Wait until it is measuring (result rows on disk), then cancel it.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if os.path.exists(sub["raw_jsonl"]):
                with open(sub["raw_jsonl"]) as f:
                    if '"record":"result"' in f.read():
                        break
            time.sleep(0.1)
        else:
            self.fail(f"job {job} never started measuring\n{self.cluster.logs()[-3000:]}")
        self.cluster.on(1, ["scancel", job])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            st = self.status(camp)
            if st["runs"][0]["state"] == "failed":
                break
            time.sleep(0.3)
        run = st["runs"][0]
        self.assertEqual(run["state"], "failed", st)
        self.assertTrue(run["detail"].startswith("cancelled:"), run)
        r = self.sweep("collect", camp, check_rc=3)
        self.assertIn(f"failed all-n2x2-default-r0 (job {job}): cancelled", r.stdout)
        failed = [e for e in self.manifest("killed") if e["event"] == "failed"]
        self.assertEqual(len(failed), 1)
        self.assertFalse(os.path.exists(os.path.join(self.results, "killed", "all-n2x2-default-r0.jsonl")))
        # Not resubmitted unless asked; then it completes.
        r = self.sweep("submit", camp, check_rc=0)
        self.assertIn("1 failed skipped", r.stdout)
        r = self.sweep("submit", "--retry-failed", camp, check_rc=0)
        self.assertIn("submitted all-n2x2-default-r0 as job", r.stdout)
        self.sweep("wait", camp, "--interval", "0.5", "--timeout", "200", check_rc=0, timeout=240)
        self.sweep("collect", camp, check_rc=0)
        self.assertEqual(self.status(camp)["counts"]["done"], 1)
        events = [e["event"] for e in self.manifest("killed")]
        self.assertEqual(events, ["submitted", "failed", "submitted", "collected"])
        records = read_jsonl(os.path.join(self.results, "killed", "all-n2x2-default-r0.jsonl"))
        self.assertTrue(all(x["labels"]["run"] == "all-n2x2-default-r0" for x in records))
        self.assertTrue(all(x["wrong"] == 0 for x in records if x["record"] == "result"))

    def test_repeats_as_a_job_array(self):
        camp = self.campaign("array", """\
campaign: array
tests: [all_reduce]
backend: mpi
sizes: {min: 8, max: 4K, factor: 8}
iters: 3
nodes: [2]
tasks_per_node: 1
repeats: 2
partitions: [{name: all, site_env: %s}]
""" % SITE)
        r = self.sweep("submit", "--array", camp, check_rc=0)
        ids = [e["job_id"] for e in self.manifest("array") if e["event"] == "submitted"]
        self.assertEqual(len(ids), 2)
        base = ids[0].split("_")[0]
        self.assertEqual(ids, [f"{base}_0", f"{base}_1"], r.stdout)
        self.sweep("wait", camp, "--interval", "0.5", "--timeout", "120", check_rc=0, timeout=180)
        self.sweep("collect", camp, check_rc=0)
        for repeat in (0, 1):
            records = read_jsonl(os.path.join(self.results, "array", f"all-n2x1-default-r{repeat}.jsonl"))
            self.assertEqual(records[0]["labels"]["repeat"], repeat)
            self.assertEqual(records[0]["env"]["SLURM_ARRAY_TASK_ID"], str(repeat))
            self.assertEqual(records[0]["env"]["SLURM_ARRAY_JOB_ID"], base)


    def test_ofi_backend_across_hosts_uses_the_network_and_sees_the_slow_link(self):
        # The raw-fabric backend between two hosts: it must skip loopback (which every host has
        # and which reaches no other host), open the provider on the hosts' real interface, and
        # move its bytes over that link: through the 100 Mbit/s host, bw is bounded by it.
        self.cluster.shape(4, "100mbit")
        camp = self.campaign("fabric", f"""\
campaign: fabric
tests: [bw, latency]
backend: ofi
sizes: {{min: 8, max: 1M, factor: 32}}
iters: 5
warmup: 1
timeout: 120
args: [--require-net, tcp]
nodes: [2]
tasks_per_node: 1
partitions: [{{name: all, site_env: {SITE}}}]
variants:
  - {{name: slow, sbatch_args: ["--nodelist=node1,node4"]}}
  - {{name: fast, sbatch_args: ["--nodelist=node1,node2"]}}
time_limit: "5"
""")
        self.sweep("submit", camp, check_rc=0)
        self.sweep("wait", camp, "--interval", "0.5", "--timeout", "150", check_rc=0, timeout=200)
        self.sweep("collect", camp, check_rc=0)
        bw = {}
        for variant, far in (("slow", "node4"), ("fast", "node2")):
            records = read_jsonl(os.path.join(self.results, "fabric", f"all-n2x1-{variant}-r0.jsonl"))
            ctx, rows = records[0], records[1:]
            self.assertEqual(ctx["backend"]["name"], "ofi")
            self.assertEqual({h["name"] for h in ctx["hosts"]}, {"node1", far})
            self.assertEqual(ctx["network"]["provider"], "tcp;ofi_rxm")
            self.assertEqual(ctx["network"]["devices"], "eth0")  # not lo
            self.assertEqual(ctx["network"]["address_format"], "ipv4")
            self.assertTrue(all(r["status"] == "ok" and r["wrong"] == 0 for r in rows), rows)
            big = [r for r in rows if r["test"] == "bw" and r["bytes"] == 256 << 10]
            self.assertEqual(len(big), 1, rows)
            bw[variant] = big[0]["busbw_gbps"]
        print(f"ofi bw at 256 KiB (GB/s): {bw}", file=sys.stderr)
        # 100 Mbit/s is 0.0125 GB/s on the wire; 64 messages of 256 KiB one way cannot exceed it
        # by much (the shaper's 64 KiB burst is a small share of 16 MiB).
        self.assertLess(bw["slow"], 0.016, bw)
        self.assertGreater(bw["fast"], 4 * bw["slow"], bw)


class CampaignPlacement(ClusterTest):
    """A campaign on eight hosts over three leaf switches (3, 3, 2) that Slurm knows
    (TopologyPlugin=topology/tree): one variant asks for one leaf, one for two leaves at least,
    and collect labels each run with where it ran."""
    cluster_args = {"hosts": 8, "leaves": (3, 3, 2)}

    def test_same_leaf_and_across_reach_slurm_and_the_labels_say_where_runs_ran(self):
        camp = self.campaign("placed", """\
campaign: placed
tests: [all_reduce]
backend: mpi
sizes: {min: 1K, max: 64K, factor: 8}
iters: 3
warmup: 1
timeout: 120
nodes: [3]
tasks_per_node: 1
launcher: mpirun
topology: slurm
switch_wait: "1:00"
partitions:
  - {name: all, site_env: tcp-only}
variants:
  - {name: near, placement: same-leaf}
  - {name: far, placement: across}
time_limit: "5"
""")
        plan = self.sweep("plan", camp, check_rc=0)
        self.assertIn("--switches=1@1:00", plan.stdout)
        # Across: one host of each leaf, in Slurm's order.
        self.assertIn("--nodelist=node1,node4,node7", plan.stdout)
        self.sweep("submit", camp, check_rc=0)
        self.sweep("wait", camp, "--interval", "0.5", "--timeout", "200", check_rc=0, timeout=240)
        self.sweep("collect", camp, check_rc=0)
        leaf = {f"node{i}": self.cluster.leaf_of(i) for i in range(1, 9)}
        seen = {}
        for e in self.manifest("placed"):
            if e["event"] != "submitted":
                continue
            records = read_jsonl(os.path.join(self.results, "placed", e["run"] + ".jsonl"))
            context = next(x for x in records if x["record"] == "context")
            hosts = sorted(h["name"] for h in context["hosts"])
            label = {x["labels"]["placement"] for x in records}
            self.assertEqual(len(label), 1, records[0]["labels"])
            seen[e["labels"]["variant"]] = (hosts, label.pop())
        near_hosts, near_label = seen["near"]
        far_hosts, far_label = seen["far"]
        self.assertEqual(len({leaf[h] for h in near_hosts}), 1, seen)
        self.assertEqual(near_label, "same-leaf", seen)
        self.assertEqual(far_hosts, ["node1", "node4", "node7"], seen)
        self.assertEqual(far_label, "across-level-2", seen)


class Fixture(unittest.TestCase):
    def test_teardown_removes_everything_also_after_a_failure(self):
        c = cbcluster.Cluster()
        try:
            with c:
                pids = [p.pid for _, p in c.daemons]
                c.on(1, ["sbatch", "--output=/dev/null", "--wrap", "sleep 300", "-N", "2"])
                time.sleep(1.5)
                raise RuntimeError("a failing test")
        except RuntimeError:
            pass
        names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        self.assertNotIn(c.prefix, names)
        for pid in pids:
            self.assertFalse(os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split()[2] != "Z",
                             f"daemon {pid} still running")
        self.assertFalse(os.path.exists(c.dir))
        # No process is left in the cluster's namespaces (the job's sleep included).
        left = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if os.stat(f"/proc/{pid}/ns/net").st_ino in c.ns_inodes:
                    left.append(pid)
            except OSError:
                pass
        self.assertEqual(left, [])


if __name__ == "__main__":
    why = cbcluster.skip_reason()
    if why:
        print(f"skipped: {why}")
        sys.exit(cbcluster.SKIP)
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]], verbosity=2)
