#!/usr/bin/python3
"""collbench-sweep hunt on a real Slurm cluster of network-namespace hosts (cbcluster.py): one
host's link shaped (found, named first and confirmed a bad node), one link between two hosts
shaped (named as a link, neither host excluded), each with every other host capped and with
nothing else capped, nothing shaped (five tournaments: no host named, nothing confirmed), and a
failing step (exit 3, one line).

MPI backend over TCP through mpirun in the job, as the campaign test does (Open MPI 4.1.4's TCP
BTL crashes in a few per cent of srun --mpi=pmix starts here; see netns-site.sh), one rank per
host, all_reduce at one size (256 KiB: collbench-report's pair evidence takes the largest sizes
a test was measured at, 1 MiB and more when there are any) with few iterations: a 4-host
tournament is 3 rounds of 2 pairs.

Environment (set by CTest): COLLBENCH, COLLBENCH_SWEEP, COLLBENCH_REPORT, COLLBENCH_SOURCE_DIR.
Exit code 77 (skipped) when the machine cannot build the cluster (not root, no Slurm).
"""

import json
import os
import re
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
REPORT = os.environ.get("COLLBENCH_REPORT", "build/collbench-report")
SOURCE = os.environ.get("COLLBENCH_SOURCE_DIR",
                        os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
TEMPLATE = os.path.join(SOURCE, "slurm", "collbench-hunt.sbatch")


# Every host's incoming traffic is capped at this rate (a tbf on its bridge port), so that healthy
# pairs are bound by the network, as on a real cluster, and not by the two cores that all ranks
# share here: unshaped, the pairs of one round differed up to six times with the CPU time each
# got.
CAP = "500mbit"
# A slow host or link is 25 times below the cap. The verdicts must hold on a loaded 2-core
# machine, where the CPU, not the cap, bounds healthy pairs (1 MiB all_reduce took 34-53 ms
# there, against 179 ms at 100 Mbit/s: a fault of five times had shrunk to four) and on a fast
# one: so the planted fault is far larger than anything the machine's load does. A size takes
# 21 operations (a warm-up, the timed batch of -n 10, the per-iteration pass) per placement:
# 256 KiB through 20 Mbit/s are 0.1 s each.
SLOW = "20mbit"
SIZE = "256K"
# With nothing capped, healthy pairs run at whatever the CPU gives them (up to six times apart
# on a loaded machine), so the fault is larger still: 256 KiB at 10 Mbit/s take 0.2 s, healthy
# pairs 1-10 ms. Uncapped, healthy pairs also differ far more: on a loaded 2-core machine six
# recorded tournaments had healthy pairs over a range of 45 times, and the reference of five
# such pairs then hides a link 100 times slower in 4 of the 6 (it was named in 12 of the 15
# combinations of two tournaments, in all 20 of three). The evidence, not the rule, is what is
# short with six pairs: these tests run three tournaments, as a user on a noisy cluster would
# (--repeats 3).
UNCAPPED_SLOW = "10mbit"
# A slow link slows one pair of the six, not three, so the five reference pairs keep all the
# noise the rest of the suite puts into a tournament, and their spread sets the margin. Under
# CAP the CPU, not the cap, bound the healthy pairs of a CI run under full load: over three
# tournaments they ran 8.5-91 ms, and a link at 10 Mbit/s (283-457 ms, 20 times the median
# pair) was inside the margin that spread gives. So the slow-link test caps its hosts at
# HEALTHY_CAP, where every healthy operation waits 21 ms for the network, and shapes the link
# at 3 Mbit/s: 0.7 s an operation, over 30 times a healthy pair.
SLOW_LINK = "3mbit"
# A slow link with nothing capped has the noisiest reference of all: five uncapped healthy pairs.
# With the rest of the suite and a build computing beside it, healthy pairs of one hunt ran
# 0.6-6.8 ms (per-iteration cv up to 1.6) while the link at 10 Mbit/s ran 255-442 ms, and the
# link was not named: 60-100 times slower was inside the margin such a reference gives. At 3
# Mbit/s the link is over 300 times slower (0.7 s an operation; named at 0.05% of the median
# pair): the hunt takes 161 s instead of 31 s, its retests included.
UNCAPPED_SLOW_LINK = "3mbit"
# The same holds, less extremely, for capped pairs once the rest of the suite computes beside
# them: with a test on each core, one tournament's healthy capped pairs ranged over 3 times and
# a pair's two placements differed up to 20 times, and one tournament missed the slow link or
# host in 3 of 12 hunts. The named slow host and link tests therefore hunt as a user on a noisy
# cluster would, with three tournaments (--repeats 3).
REPEATS = ("--repeats", "3")
# The time of a hunt is that of its slow pairs, and three tournaments of -n 10 through a slow
# host took 147 s uncapped: with the evidence in the tournaments, not in one pair's batch, a
# batch of 4 (9 operations per placement) keeps the verdicts and takes 65 s.
REPEAT_ITERS = "4"
# A hunt whose slow pairs are slower than SLOW (UNCAPPED_SLOW, the links at 3 Mbit/s) takes
# up to 250 s on a loaded CI machine, its retests included.
UNCAPPED_TIMEOUT = 400
# Where nothing is shaped, the cap alone decides what a healthy pair is, and at CAP it does not:
# 256 KiB pairs ran at about 210 Mbit/s there, under the two cores, not the cap. A CI run with
# the instruction gate and four other tests beside it slowed one pair of one tournament four
# times, and that tournament named it a slow link. At 100 Mbit/s every operation waits 21 ms
# for the network, which absorbs the CPU's ups and downs as a real cluster's network does.
HEALTHY_CAP = "100mbit"


def cap_every_host(cluster, but=(), rate=CAP):
    for i in range(1, cluster.nhosts + 1):
        if i in but:
            continue
        subprocess.run(["nsenter", f"--net=/run/netns/{cluster.prefix}br", "tc", "qdisc", "add", "dev",
                        f"p{i}", "root", "tbf", "rate", rate, "burst", "64kb", "latency", "50ms"],
                       check=True, capture_output=True)


class HuntTest(unittest.TestCase):
    hosts = 4
    leaves = None  # hosts per leaf switch; None: one flat network

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="collbench-hunt-test-")
        os.chmod(self.dir, 0o755)
        self.out = os.path.join(self.dir, "hunt")
        self.cluster = cbcluster.Cluster(hosts=self.hosts, leaves=self.leaves)
        self.cluster.__enter__()
        self.addCleanup(self.cluster.stop)  # runs even when the test fails
        self.t0 = time.monotonic()

    def tearDown(self):
        print(f"test time {time.monotonic() - self.t0:.1f} s", file=sys.stderr)
        if os.environ.get("COLLBENCH_KEEP_CLUSTER"):
            print(f"kept {self.dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def hunt(self, *args, check_rc=0, timeout=280, collbench=COLLBENCH, tests="all_reduce",
             size=SIZE, iters="10"):
        argv = [SWEEP, "hunt", "--nodes", str(self.hosts), "--launcher", "mpirun",
                "--site-env", "tcp-only", "--tests", tests, "-b", size, "-e", size,
                "-n", iters, "-w", "1", "--threshold", "50%", "--interval", "0.5",
                "--timeout", str(timeout - 30), "--collbench", collbench,
                "--collbench-report", REPORT, "--template", TEMPLATE, "-o", self.out, *args]
        t0 = time.monotonic()
        r = self.cluster.on(1, argv, check=False, timeout=timeout, cwd=self.dir)
        print(f"hunt took {time.monotonic() - t0:.1f} s\n{r.stdout}", file=sys.stderr)
        if r.returncode != check_rc:
            job = self.read("job.out") if os.path.exists(os.path.join(self.out, "job.out")) else ""
            self.fail(f"hunt exited {r.returncode}, expected {check_rc}\nstdout:\n{r.stdout}\n"
                      f"stderr:\n{r.stderr}\njob.out:\n{job[-3000:]}\n{self.cluster.logs()[-3000:]}")
        return r

    def read(self, name):
        with open(os.path.join(self.out, name)) as f:
            return f.read()

    def suspects(self):
        return self.read("suspects.txt").split()

    def evidence(self):
        """What the hunt measured and what the report made of it, for the message of a failed
        verdict: every pair row's time (ms) per tournament, round and placement, and the
        report's reasons."""
        folder = os.path.join(self.out, "tournament")
        lines = ["tournament rows (round: pair placement slowest-rank ms, per-iteration cv):"]
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name)) as f:
                for line in f:
                    row = json.loads(line)
                    if row.get("record") != "result" or not row.get("group"):
                        continue
                    t = row.get("time_us") or {}
                    cv = (t.get("per_iteration") or {}).get("cv")
                    lines.append(f"  {name} r{row['group']['round']}: "
                                 f"{'-'.join(row['group']['hosts'])} {row['placement']} "
                                 f"{(t.get('reported') or 0) / 1000:.1f} ms cv {cv} "
                                 f"{row['status']}")
        path = os.path.join(self.out, "suspects-evidence.txt")
        if os.path.exists(path):
            lines.append("collbench-report --suspects said:\n" + self.read("suspects-evidence.txt"))
        return "\n".join(lines)

    def assert_nothing_confirmed(self, summary, answers):
        """Nothing shaped: the hunt confirms nothing and excludes no host, and the tournaments
        together (each of `answers`, collbench-report --suspects --json of all of them) name no
        host and no switch: those take most of a host's pairs, or of the pairs across an uplink,
        slow. A link is one pair, and a loaded two-core machine can slow one pair in most of five
        tournaments (a CI run saw one at 72% of the median pair over all five, which its retest
        then measured at 98 to 106% of the reference): the tournaments' link is a suspect, and
        the verdict is its retest's, alone with a good node and against the reference pair."""
        self.assertEqual(self.suspects(), [], summary)
        self.assertRegex(summary, r"\nsuspects \(collbench-report --suspects\): (none|no host)\n")
        for verdict in ("bad node", "bad link", "slow uplink"):
            self.assertNotIn(f": {verdict}", summary)
        for answer in answers:
            self.assertEqual((answer["hosts"], answer.get("switches", [])), ([], []),
                             f"{answer}\n{self.evidence()}")
            for link in answer["links"]:
                self.assertIn(f"\n  {link['a']} <-> {link['b']}: not confirmed: ", summary,
                              f"{answer}\n{self.evidence()}")

    def check_outputs(self, r):
        summary = self.read("summary.txt")
        self.assertTrue(r.stdout.endswith(summary), "the summary is not printed at the end")
        self.assertLessEqual(len(summary.splitlines()), 40, summary)
        self.assertTrue(os.path.exists(os.path.join(self.out, "report", "index.html")),
                        os.listdir(self.out))
        self.assertEqual(self.read("exit_status"), "0\n")
        rounds = re.findall(r"pairs-r\d+: (\d+) rounds in ([\d.]+) s", summary)
        self.assertTrue(rounds, summary)
        for n, _ in rounds:
            self.assertEqual(int(n), self.hosts - 1 if self.hosts % 2 == 0 else self.hosts)
        return summary


class Hunt(HuntTest):
    def test_a_slow_host_is_named_first_and_confirmed_a_bad_node(self):
        cap_every_host(self.cluster, but=(3,))
        self.cluster.shape(3, SLOW)
        r = self.hunt(*REPEATS, iters=REPEAT_ITERS)
        summary = self.check_outputs(r)
        self.assertEqual(self.suspects(), ["node3"], summary + self.evidence())
        self.assertRegex(summary, r"\n  node3: bad node: node3 <-> node\d \d+% of the reference")
        self.assertIn("sbatch --exclude=$(paste -sd,", summary)
        # The retest of node3 ran on node3 and a good node only, once per tournament.
        retests = os.listdir(os.path.join(self.out, "retest"))
        self.assertIn("node3-node1.jsonl", retests, retests)
        with open(os.path.join(self.out, "retest", "node3-node1.jsonl")) as f:
            runs = [line for line in f if '"record":"context"' in line.replace(" ", "")]
        self.assertEqual(len(runs), 3)

    def test_a_slow_link_is_named_and_neither_end_is_excluded(self):
        cap_every_host(self.cluster, rate=HEALTHY_CAP)
        self.cluster.shape_link(2, 3, SLOW_LINK)
        r = self.hunt(*REPEATS, timeout=UNCAPPED_TIMEOUT, iters=REPEAT_ITERS)
        summary = self.check_outputs(r)
        self.assertEqual(self.suspects(), [], summary + self.evidence())
        self.assertRegex(self.read("suspects-report.txt"), r"# slow link: node2 <-> node3: ",
                         self.evidence())
        self.assertIn("node2 <-> node3: bad link (node2 with node3)", summary)

    def test_a_slow_host_with_nothing_else_capped_is_named_first_and_confirmed(self):
        self.cluster.shape(3, UNCAPPED_SLOW)
        r = self.hunt(*REPEATS, timeout=UNCAPPED_TIMEOUT, iters=REPEAT_ITERS)
        summary = self.check_outputs(r)
        self.assertEqual(self.suspects(), ["node3"], summary + self.evidence())
        self.assertRegex(summary, r"\n  node3: bad node: node3 <-> node\d \d+% of the reference")

    def test_a_slow_link_with_nothing_else_capped_is_named_as_the_link(self):
        self.cluster.shape_link(2, 3, UNCAPPED_SLOW_LINK)
        r = self.hunt(*REPEATS, timeout=UNCAPPED_TIMEOUT, iters=REPEAT_ITERS)
        summary = self.check_outputs(r)
        self.assertEqual(self.suspects(), [], summary + self.evidence())
        self.assertRegex(self.read("suspects-report.txt"), r"# slow link: node2 <-> node3: ",
                         self.evidence())
        self.assertIn("node2 <-> node3: bad link (node2 with node3)", summary)

    def test_nothing_shaped_names_no_suspect_in_five_tournaments(self):
        cap_every_host(self.cluster, rate=HEALTHY_CAP)
        r = self.hunt("--repeats", "5")
        summary = self.check_outputs(r)
        files = [os.path.join(self.out, "tournament", f"pairs-r{k}.jsonl") for k in range(5)]

        def suspects_of(paths):
            one = subprocess.run([REPORT, *paths, "--suspects", "--json", "-q"],
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(one.returncode, 0, one.stderr)
            return json.loads(one.stdout)

        # The five together, as the hunt judges them: no host; a link only as a suspect its
        # retest cleared.
        self.assert_nothing_confirmed(summary, [suspects_of(files)])
        # Each alone: no host (most of its pairs slow). One tournament measures a link once, and
        # one busy moment can slow that one measurement (test_cluster_topology.py says more): a
        # link of one tournament is the next tournaments' and the retest's to judge.
        named = {}
        for k, jsonl in enumerate(files):
            one = suspects_of([jsonl])
            named[k] = one["hosts"]
            print(f"tournament {k}: {one}", file=sys.stderr)
        self.assertEqual(named, {k: [] for k in range(5)}, self.evidence())

    def test_the_raw_fabric_names_the_slow_host_too(self):
        # The ofi backend (libfabric's tcp provider, the site file's FI_PROVIDER): each pair's
        # bw between its two ranks, no MPI collective in the measurement. bw keeps a window of
        # 64 messages in flight: 16 KiB ones are 1 MiB an iteration, 0.4 s through the slow
        # host and 17 ms through the cap.
        cap_every_host(self.cluster, but=(2,))
        self.cluster.shape(2, SLOW)
        r = self.hunt("--backend", "ofi", tests="bw", size="16K", iters="3")
        summary = self.check_outputs(r)
        self.assertEqual(self.suspects(), ["node2"], summary)
        rows = [line for line in open(os.path.join(self.out, "tournament", "pairs-r0.jsonl"))
                if '"record":"result"' in line.replace(" ", "")]
        self.assertTrue(rows and all('"backend":"ofi"' in row.replace(" ", "") for row in rows))

    def test_a_failing_step_exits_3_with_one_line(self):
        r = self.hunt(collbench="/nonexistent/collbench", check_rc=3)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertRegex(lines[0], r"^collbench-sweep: the hunt job \d+ ended .*job\.out$")
        self.assertIn("tournament", lines[0])


class HuntSix(HuntTest):
    hosts = 6

    def test_a_slow_host_among_six_is_named_first_and_confirmed(self):
        cap_every_host(self.cluster, but=(5,))
        self.cluster.shape(5, SLOW)
        r = self.hunt()
        summary = self.check_outputs(r)
        self.assertEqual(self.suspects(), ["node5"], summary)


if __name__ == "__main__":
    why = cbcluster.skip_reason()
    if why:
        print(f"skipped: {why}")
        sys.exit(cbcluster.SKIP)
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]], verbosity=2)
