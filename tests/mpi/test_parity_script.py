#!/usr/bin/env python3
"""scripts/parity against stand-in OSU programs: it pairs collbench's rows with OSU's table by the
bytes each tool moved, alternates the order, and reports the ratio per size with its spread.

The real OSU binaries are not part of collbench and no test uses them: the stand-ins print OSU's
table with known times, so the ratios are known.
"""

import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest

COLLBENCH = os.environ["COLLBENCH"]
PARITY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "parity")

# OSU's output shape: a header, then "size value" lines, printed by rank 0 only.
FAKE_OSU = """#!/bin/sh
[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0
echo "$0 $*" >> "$(dirname "$0")/calls.log"
echo "# OSU MPI %(title)s Test v7.4"
echo "# Size       %(column)s"
for size in 8 16 32 64; do echo "$size %(value)s"; done
"""


class Parity(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.osu = os.path.join(self.dir.name, "osu-bin")
        os.makedirs(self.osu)
        # A second per message (bw: 0.00001 MB/s), so that collbench is far faster however
        # loaded the machine is: the ratios' side of the test is the script's arithmetic.
        programs = {"osu_latency": ("Latency", "Latency (us)", "1000000.00"),
                    "osu_allgather": ("Allgather Latency", "Avg Latency(us)", "1000000.00"),
                    "osu_bw": ("Bandwidth", "Bandwidth (MB/s)", "0.00001")}
        for name, (title, column, value) in programs.items():
            path = os.path.join(self.osu, name)
            with open(path, "w") as f:
                f.write(FAKE_OSU % {"title": title, "column": column, "value": value})
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)

    def tearDown(self):
        self.dir.cleanup()

    def test_ratios_pair_sizes_alternate_order_and_land_in_jsonl(self):
        out = os.path.join(self.dir.name, "out")
        p = subprocess.run([sys.executable, PARITY, "--osu", self.osu, "--collbench", COLLBENCH,
                            "--tests", "latency,all_gather,bw", "--ranks", "2", "--rounds", "2",
                            "--iters", "5", "--warmup", "1", "--max", "64", "--out", out],
                           capture_output=True, text=True, timeout=240)
        self.assertEqual(p.returncode, 0, p.stderr)
        points = [json.loads(line) for line in open(os.path.join(out, "ratios.jsonl"))]
        by_test = {}
        for point in points:
            by_test.setdefault(point["test"], set()).add(point["osu_bytes"])
            self.assertEqual(point["rounds"], 2)
            self.assertLessEqual(point["ratio_min"], point["ratio_median"])
            self.assertLessEqual(point["ratio_median"], point["ratio_max"])
            self.assertLess(point["ratio_median"], 0.5, point)
            self.assertFalse(point["within_target"])
        # OSU's allgather size is each rank's block: collbench's rows of 2 x that are matched.
        # collbench's blocks are whole 16-byte units (as nccl-tests'), so OSU's 8 B has no match.
        self.assertEqual(by_test, {"latency": {8, 16, 32, 64}, "all_gather": {16, 32, 64},
                                   "bw": {8, 16, 32, 64}})
        self.assertIn("outside +-5%", p.stdout)
        # Interleaved: OSU first in round 1, collbench first in round 2; both rounds' files kept.
        runs = sorted(os.listdir(os.path.join(out, "runs")))
        self.assertIn("all_gather-np2-r0.jsonl", runs)
        self.assertIn("all_gather-np2-r1-osu_allgather.txt", runs)
        with open(os.path.join(self.osu, "calls.log")) as f:
            self.assertEqual(len(f.read().splitlines()), 6)

    def test_unknown_test_is_refused(self):
        p = subprocess.run([sys.executable, PARITY, "--osu", self.osu, "--tests", "sendrecv"],
                           capture_output=True, text=True, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("no OSU counterpart", p.stderr)


if __name__ == "__main__":
    unittest.main()
