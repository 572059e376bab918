#!/usr/bin/python3
"""The ofi (libfabric) backend under a real mpirun, over the providers this host has.

Run one test: test_collbench_ofi.py Providers.test_tcp_on_2_ranks
Needs COLLBENCH (the binary) and COLLBENCH_SCHEMA in the environment.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
import test_collbench_mpi as mpi  # noqa: E402  (shared launcher, schema and fault helpers)

OFI_TESTS = ["latency", "bw", "bibw", "sendrecv", "alltoall", "gather", "scatter"]
COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"]
ONE_PER_ELEMENT_SIZE = ["int8", "half", "float", "double"]


def ofi_run(np, args, env=None, timeout=240):
    return mpi.mpirun(np, args + ["--backend", "ofi"], timeout=timeout, env=env)


class Providers(mpi.Workdir):
    def run_provider(self, np, provider, layer, address_format, largest="4M", dtypes=None):
        """Every test the backend runs, in every dtype, verified, up to sizes past the providers'
        eager limits (so rendezvous protocols run too): 8 B, 512 B, 32 KiB and 2 MiB (with the
        default largest size), one of each kind of message; more sizes between add time, not cases."""
        dtypes = dtypes or mpi.DTYPES
        args = [",".join(OFI_TESTS), "-d", ",".join(dtypes), "-b", "8", "-e", largest, "-f", "64", "-n", "3", "-w", "1",
                "--pairs", "all", "--timeout", "60", "--jsonl", self.jsonl]
        p = ofi_run(np, args, env={"FI_PROVIDER": provider})
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        records = mpi.read_jsonl(self.jsonl)
        mpi.validate(self, records)
        context, rows = records[0], records[1:]
        self.assertEqual(context["backend"]["name"], "ofi")
        self.assertEqual(context["backend"]["memory"], "host")
        self.assertRegex(context["libraries"]["ofi"], r"^libfabric \d+\.\d+ \(")
        network = context["network"]
        self.assertEqual(network["net"], "Libfabric")
        self.assertIn(layer, network["provider"].split(";"))
        self.assertEqual(network["address_format"], address_format)
        if address_format == "ipv4":
            # Loopback only when the host has no other interface: the ranks use the real one.
            self.assertNotIn("lo", network["devices"].split(","))
        self.assertIn("# Wrong elements: 0 OK", p.stdout)
        seen = set()
        for row in rows:
            self.assertEqual(row["status"], "ok", row)
            self.assertEqual(row["wrong"], 0, row)
            seen.add((row["test"], row["dtype"]))
        for test in OFI_TESTS:
            for dtype in dtypes:
                self.assertIn((test, dtype), seen)
        # With --pairs all every rank takes part in a point-to-point test.
        pairs = {tuple(row["pair"]) for row in rows if row["test"] == "latency"}
        self.assertEqual(len(pairs), np // 2, pairs)

    def test_tcp_on_2_ranks(self):
        self.run_provider(2, "tcp", "tcp", "ipv4")

    # The backend moves data without reducing it: a dtype is an element size and a pattern.
    # Every dtype runs on 2 ranks over tcp; more ranks and the other providers run one dtype of
    # each element size.
    def test_tcp_on_4_ranks(self):
        self.run_provider(4, "tcp", "tcp", "ipv4", dtypes=ONE_PER_ELEMENT_SIZE)

    def test_shm_on_3_ranks(self):
        self.run_provider(3, "shm", "shm", "str", dtypes=ONE_PER_ELEMENT_SIZE)

    def test_sockets_on_2_ranks(self):
        # The deprecated sockets provider progresses in its own thread, which answers in about
        # 8 ms per message here: a few dtypes keep the test short.
        self.run_provider(2, "sockets", "sockets", "ipv4", largest="256K", dtypes=["int8", "bfloat16", "double"])


class Behaviour(mpi.FaultInjection):
    def test_messages_split_at_the_limit_arrive_whole(self):
        # Sizes that are not multiples of the limit: the last piece of every message is short.
        env = {"COLLBENCH_OFI_MAX_MESSAGE": "4096"}
        p = ofi_run(3, ["bw,sendrecv,alltoall", "-d", "float,int8", "-b", "10000", "-e", "1M", "-f", "9", "-n", "3",
                        "-w", "1", "--jsonl", self.jsonl], env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        records = mpi.read_jsonl(self.jsonl)
        self.assertEqual(records[0]["backend"]["facts"]["message_limit"], "4096")
        rows = records[1:]
        self.assertEqual(len(rows), 3 * 2 * 3)
        self.assertTrue(all(r["status"] == "ok" and r["wrong"] == 0 for r in rows), rows)
        bad = ofi_run(2, ["bw", "-b", "8", "-e", "8"], env={"COLLBENCH_OFI_MAX_MESSAGE": "lots"})
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertIn("COLLBENCH_OFI_MAX_MESSAGE=lots: expected a positive number of bytes", bad.stderr)

    def test_split_messages_beyond_the_queue_depth(self):
        # 4096 pieces per message, more than shm (1024) or tcp (2048) queue: every rank posting all
        # its receives before its sends ran out of queue space (shm) or waited forever (tcp).
        for provider in ("shm", "tcp"):
            with self.subTest(provider=provider):
                env = {"FI_PROVIDER": provider, "COLLBENCH_OFI_MAX_MESSAGE": "4096"}
                p = ofi_run(2, ["alltoall,bibw", "-b", "32M", "-e", "32M", "-n", "2", "-w", "1", "--window", "2",
                                "--timeout", "60"], env=env)
                self.assertEqual(p.returncode, 0, p.stderr[-3000:])
                self.assertIn("# Wrong elements: 0 OK", p.stdout)

    def test_registered_buffers(self):
        p = ofi_run(2, ["bw,latency", "-b", "8", "-e", "1M", "-f", "32", "-R", "1", "--jsonl", self.jsonl])
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        records = mpi.read_jsonl(self.jsonl)
        self.assertEqual(records[0]["backend"]["facts"]["registered"], "yes (-R)")
        self.assertTrue(all(r["status"] == "ok" and r["wrong"] == 0 for r in records[1:]))

    def test_all_reports_the_collectives_it_cannot_run(self):
        p = ofi_run(2, ["all", "-b", "8", "-e", "1K", "-f", "32", "--jsonl", self.jsonl])
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        records = mpi.read_jsonl(self.jsonl)
        mpi.validate(self, records)
        status = {}
        for row in records[1:]:
            status.setdefault(row["test"], set()).add(row["status"])
            if row["status"] == "unsupported":
                self.assertIn(f"no {row['test']} algorithm", row["note"])
        for test in COLLECTIVES:
            self.assertEqual(status[test], {"unsupported"}, test)
        for test in OFI_TESTS:
            self.assertEqual(status[test], {"ok"}, test)
        self.assertIn("not measured: libfabric moves messages point to point", p.stdout)

    def test_named_collective_is_a_usage_error(self):
        p = ofi_run(2, ["all_reduce", "-b", "8", "-e", "8"])
        self.assertEqual(p.returncode, 2, p.stderr)
        lines = [line for line in p.stderr.splitlines() if line.startswith("collbench:")]
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("all_reduce: libfabric moves messages point to point", lines[0])
        self.assertIn("use --backend mpi or nccl", lines[0])

    def test_require_net(self):
        p = ofi_run(2, ["latency", "-b", "8", "-e", "8", "--require-net", "efa"], env={"FI_PROVIDER": "tcp"})
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("--require-net efa: libfabric selected the tcp;ofi_rxm provider", p.stderr)
        self.assertIn("FI_PROVIDER=efa", p.stderr)
        self.assertFalse(os.path.exists(self.jsonl))
        p = ofi_run(2, ["latency", "-b", "8", "-e", "8", "--require-net", "TCP", "--jsonl", self.jsonl],
                    env={"FI_PROVIDER": "tcp"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(mpi.read_jsonl(self.jsonl)[0]["options"]["require_net"], "TCP")

    def test_missing_provider_exits_3_naming_it(self):
        # psm2 needs Omni-Path hardware: libfabric knows the provider but offers no endpoint here.
        p = ofi_run(2, ["latency", "-b", "8", "-e", "8"], env={"FI_PROVIDER": "psm2"})
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("libfabric offers no reliable-datagram endpoint with tagged messages", p.stderr)
        self.assertIn("with FI_PROVIDER=psm2", p.stderr)

    def test_stopped_rank_times_out_with_exit_3(self):
        self.assert_stopped_rank_times_out(3, ["sendrecv", "-b", "8", "-e", "16M", "-f", "2", "-d", "all", "-n",
                                               "300", "--backend", "ofi"], "sendrecv")

    def test_killed_rank_does_not_hang_the_job(self):
        # The peers of a killed rank busy-poll their completion queue: the provider's error, the
        # watchdog or the launcher must end them, with the results written so far intact.
        self.assert_killed_rank_ends_the_job(["sendrecv,alltoall", "-b", "8", "-e", "16M", "-f", "2", "-d", "all",
                                              "-n", "300", "--backend", "ofi"])


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:], verbosity=2)
