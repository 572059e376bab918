#!/usr/bin/python3
"""--buffers under a real mpirun: both policies measure, verify and are recorded in the context,
the header and every row; the mpi backend's default is stated, never left implicit.

Run one test: test_collbench_buffers.py Buffers.test_both_policies_verify_and_are_recorded
Needs COLLBENCH and COLLBENCH_SCHEMA in the environment.
"""
import unittest

from test_collbench_mpi import Workdir, mpirun, read_jsonl, validate


class Buffers(Workdir):
    def run_policy(self, extra):
        args = ["all_reduce,all_gather,latency,bw", "-b", "8", "-e", "64K", "-f", "8", "-n", "4",
                "-w", "1", "-c", "1", "--backend", "mpi", "--timeout", "60",
                "--jsonl", self.jsonl] + extra
        p = mpirun(2, args)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        records = read_jsonl(self.jsonl)
        validate(self, records)
        return p, records[0], records[1:]

    def test_both_policies_verify_and_are_recorded(self):
        for policy in ("rotate", "fixed"):
            with self.subTest(policy=policy):
                open(self.jsonl, "w").close()
                p, context, rows = self.run_policy(["--buffers", policy])
                self.assertEqual(context["options"]["buffers"], policy)
                self.assertIn(f"buffers {policy} (", p.stdout)
                self.assertIn("# Wrong elements: 0 OK", p.stdout)
                self.assertTrue(rows)
                for row in rows:
                    self.assertEqual(row["buffers"], policy, row)
                    self.assertEqual(row["status"], "ok", row)
                    self.assertEqual(row["wrong"], 0, row)

    def test_the_default_is_stated(self):
        p, context, rows = self.run_policy([])
        # The mpi backend rotates by default (as collbench did before the option existed).
        self.assertEqual(context["options"]["buffers"], "rotate")
        self.assertIn("buffers rotate (", p.stdout)
        self.assertTrue(all(row["buffers"] == "rotate" for row in rows))

    def test_an_unknown_policy_exits_2_with_one_line(self):
        p = mpirun(2, ["all_reduce", "--backend", "mpi", "--buffers", "warm", "--jsonl", self.jsonl])
        self.assertEqual(p.returncode, 2, p.stderr)
        lines = [line for line in p.stderr.splitlines() if line.startswith("collbench:")]
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("--buffers warm", lines[0])
        self.assertIn("rotate", lines[0])


if __name__ == "__main__":
    unittest.main()
