#!/usr/bin/python3
"""--split under a real mpirun: groups measured at the same time, rows that name their group,
round, hosts and ranks, on the mpi and ofi backends. Nodes are emulated on one host with
COLLBENCH_NODE (each rank's node name), as the test cluster's hosts would be.

Run one test: test_collbench_split.py Split.test_pairs_tournament_on_four_nodes
Needs COLLBENCH and COLLBENCH_SCHEMA in the environment.
"""
import itertools
import os
import subprocess
import unittest

from test_collbench_mpi import COLLBENCH, Workdir, read_jsonl, validate


def mpirun_nodes(np, per_node, args, env=None, timeout=240):
    """collbench on `np` ranks, `per_node` consecutive ranks per emulated node n0, n1, ..."""
    cmd = ["mpirun", "-np", str(np), "--oversubscribe", "--mca", "btl", "self,vader,tcp"]
    for key in env or {}:
        cmd += ["-x", key]
    wrapper = f'COLLBENCH_NODE=n$((OMPI_COMM_WORLD_RANK / {per_node})) exec "$0" "$@"'
    return subprocess.run(cmd + ["sh", "-c", wrapper, COLLBENCH] + args, capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ, **(env or {})))


class Split(Workdir):
    def run_split(self, np, per_node, extra, env=None):
        args = ["-b", "1K", "-e", "64K", "-f", "64", "-n", "3", "-w", "1", "-c", "1", "--timeout", "60",
                "--jsonl", self.jsonl] + extra
        p = mpirun_nodes(np, per_node, args, env)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        records = read_jsonl(self.jsonl)
        validate(self, records)
        return p, records[0], records[1:]

    def test_pairs_tournament_on_four_nodes(self):
        p, context, rows = self.run_split(8, 2, ["all_reduce,sendrecv", "--split", "pairs", "--backend", "mpi"])
        self.assertEqual(context["options"]["split"], "pairs")
        self.assertTrue(rows)
        met = {}
        for row in rows:
            group = row["group"]
            self.assertEqual(group["mode"], "pairs")
            self.assertEqual(len(group["hosts"]), 2)
            self.assertEqual(row["nranks"], 4)
            self.assertEqual(row["nodes"], 2)
            self.assertEqual(row["wrong"], 0)
            # The group's ranks are its two nodes' ranks, numbered as in the whole job.
            self.assertEqual(sorted({f"n{r // 2}" for r in group["ranks"]}), sorted(group["hosts"]))
            self.assertIn(row["slowest_rank"], group["ranks"])
            self.assertEqual(row["slowest_host"], f"n{row['slowest_rank'] // 2}")
            met.setdefault(tuple(sorted(group["hosts"])), set()).add(group["round"])
        # 4 nodes: 3 rounds, every pair of nodes exactly once.
        self.assertEqual(set(met), set(itertools.combinations(["n0", "n1", "n2", "n3"], 2)))
        self.assertTrue(all(len(rounds) == 1 for rounds in met.values()), met)
        self.assertEqual({r for rounds in met.values() for r in rounds}, {0, 1, 2})
        self.assertIn("# group 0 of round 1/3: n0, n3 (ranks 0, 1, 6, 7)", p.stdout)

    def test_rail_and_node_groups(self):
        _, _, rows = self.run_split(6, 2, ["all_reduce", "--split", "rail", "--backend", "mpi"])
        self.assertEqual({tuple(r["group"]["ranks"]) for r in rows}, {(0, 2, 4), (1, 3, 5)})
        self.assertTrue(all(r["nranks"] == 3 and r["nodes"] == 3 for r in rows))
        open(self.jsonl, "w").close()
        _, _, rows = self.run_split(6, 2, ["all_reduce", "--split", "node", "--backend", "mpi"])
        self.assertEqual({tuple(r["group"]["ranks"]) for r in rows}, {(0, 1), (2, 3), (4, 5)})
        self.assertTrue(all(r["nodes"] == 1 and r["wrong"] == 0 for r in rows))

    def test_nccl_tests_split_variables(self):
        _, context, rows = self.run_split(4, 1, ["all_reduce", "--split", "nccl-tests", "--backend", "mpi"],
                                          env={"NCCL_TESTS_SPLIT": "MOD 2"})
        self.assertEqual(context["options"]["split"], "nccl-tests MOD 2")
        self.assertEqual({tuple(r["group"]["ranks"]) for r in rows}, {(0, 2), (1, 3)})

    def test_ofi_backend_pairs(self):
        _, _, rows = self.run_split(4, 1, ["alltoall,bw", "--split", "pairs", "--backend", "ofi"],
                                    env={"FI_PROVIDER": "tcp"})
        self.assertEqual(len({r["group"]["round"] for r in rows}), 3)
        for row in rows:
            self.assertEqual(row["wrong"], 0)
            if row["test"] == "bw":
                self.assertEqual(sorted(row["pair"]), row["group"]["ranks"])

    def test_refusals_exit_2_with_one_line(self):
        cases = [
            (["--split", "triples"], "triples"),
            (["--split", "pairs", "-J", os.path.join(self.dir.name, "out.json")], "-J"),
            (["--split", "pairs"], "pairs"),  # one node: no pair to form
        ]
        for args, mention in cases:
            with self.subTest(args=args):
                p = subprocess.run(["mpirun", "-np", "2", "--oversubscribe", COLLBENCH, "all_reduce", "--backend",
                                    "mpi"] + args, capture_output=True, text=True, timeout=120)
                self.assertEqual(p.returncode, 2, p.stderr[-2000:])
                lines = [line for line in p.stderr.splitlines() if line.startswith("collbench:")]
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn(mention, lines[0])

    def test_ranks_with_different_split_rules_disagree(self):
        # nccl-tests' rule is read from each rank's environment: a host set up differently must
        # not silently measure other groups.
        wrapper = 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then export NCCL_TESTS_SPLIT="DIV 2"; fi; exec "$0" "$@"'
        p = subprocess.run(["mpirun", "-np", "2", "--oversubscribe", "-x", "NCCL_TESTS_SPLIT", "sh", "-c", wrapper,
                            COLLBENCH, "all_reduce", "--backend", "mpi", "--split", "nccl-tests"],
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, NCCL_TESTS_SPLIT="MOD 2"))
        self.assertEqual(p.returncode, 2, p.stderr[-2000:])
        self.assertIn("--split", p.stderr)


if __name__ == "__main__":
    unittest.main()
