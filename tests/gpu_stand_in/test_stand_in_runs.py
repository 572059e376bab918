#!/usr/bin/python3
"""collbench's NCCL path under mpirun on the CUDA + NCCL stand-in (no GPU).

What these runs prove: collbench's NCCL backend, CUDA device, thread ranks, watchdog, profiler
plugin, log parsers and device check do what they should against a CUDA runtime and an NCCL that
are as strict as the real ones where a mistake would show (docs/nccl.md, "Without a GPU"). What
they cannot prove: speed, real kernels on a real GPU, NCCL's own algorithms, a real network
plugin. The GPU machine's device check stays the only source of those.

Run one test: test_stand_in_runs.py Matrix.test_every_test_dtype_op_on_1_rank
Needs COLLBENCH (the stand-in build's binary), COLLBENCH_SCHEMA, COLLBENCH_BROKEN_VERIFY_SYNC,
COLLBENCH_BROKEN_HOST_POINTER, COLLBENCH_SOURCE_DIR and COLLBENCH_BUILD_DIR in the environment.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

COLLBENCH = os.environ["COLLBENCH"]
SCHEMA = os.environ["COLLBENCH_SCHEMA"]
SOURCE_DIR = os.environ.get("COLLBENCH_SOURCE_DIR", "")
BUILD_DIR = os.environ.get("COLLBENCH_BUILD_DIR", "")

TESTS = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "gather",
         "scatter", "sendrecv", "latency", "bw", "bibw"]
POINT_TO_POINT = {"latency", "bw", "bibw"}
REDUCING = {"all_reduce", "reduce_scatter", "reduce"}
IN_PLACE = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "gather", "scatter"}
DTYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16",
          "fp8_e4m3", "fp8_e5m2"]
OPS = ["sum", "prod", "max", "min", "avg"]
EMULATED = 'NCCL_HOSTID=emulated-$OMPI_COMM_WORLD_RANK exec "$0" "$@"'


def launch(np, args, env=None, binary=None, wrapper=None, device0=False):
    """The command line and environment of collbench on `np` ranks under mpirun. `wrapper`: a
    shell line run by every rank before collbench (e.g. EMULATED: one NCCL host per rank)."""
    cmd = ["mpirun", "-np", str(np), "--oversubscribe", "--mca", "btl", "self,vader,tcp"]
    for key in env or {}:
        cmd += ["-x", key]
    if wrapper:
        cmd += ["sh", "-c", wrapper]
    cmd += [binary or COLLBENCH]
    if device0:
        cmd += ["--device", "0"]
    return cmd + list(args), dict(os.environ, **(env or {}))


def run(np, args, env=None, timeout=600, **kwargs):
    """Runs collbench to the end (bounded): the CompletedProcess."""
    cmd, full_env = launch(np, args, env, **kwargs)
    proc = subprocess.Popen(cmd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"{' '.join(cmd)} ran past {timeout} s\n{err[-3000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def read_jsonl(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f]


def validate(testcase, records):
    """Every line against the checked-in JSON Schema."""
    import jsonschema
    with open(SCHEMA) as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    for i, record in enumerate(records):
        errors = sorted(validator.iter_errors(record), key=lambda e: e.path)
        testcase.assertFalse(errors, f"line {i + 1}: {[e.message for e in errors[:3]]}")


class Workdir(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="collbench-stand-in-")
        self.jsonl = os.path.join(self.dir.name, "out.jsonl")

    def tearDown(self):
        self.dir.cleanup()

    def fresh(self, name="out.jsonl"):
        self.jsonl = os.path.join(self.dir.name, name)
        if os.path.exists(self.jsonl):
            os.remove(self.jsonl)
        return self.jsonl

    def measured(self, p, minimum_rows=1):
        """The run passed: exit 0, every line valid, every row verified. Returns the records."""
        self.assertEqual(p.returncode, 0, p.stderr[-4000:])
        records = read_jsonl(self.jsonl)
        validate(self, records)
        self.assertEqual(records[0]["record"], "context")
        rows = [r for r in records[1:] if r["record"] == "result"]
        self.assertGreaterEqual(len(rows), minimum_rows)
        for row in rows:
            if row["status"] == "unsupported":
                continue
            self.assertEqual(row["status"], "ok", row)
            self.assertEqual(row.get("wrong"), 0, row)
            self.assertEqual(row["backend"], "nccl")
        return records[0], rows


class Matrix(Workdir):
    """Every test x dtype x op of the verification matrix, in place and out of place."""

    def run_matrix(self, np, env=None, **kwargs):
        # Four sizes, 8 B to 256 KiB: fewer elements than ranks, a few, and many per rank. What
        # the matrix covers is tests x dtypes x ops; more sizes between add run time, not cases.
        args = ["all", "-b", "8", "-e", "256K", "-f", "32", "-c", "1", "-d", "all", "-o", "all", "-n", "2",
                "-w", "1", "-r", str(np - 1), "--backend", "nccl", "--timeout", "120", "--jsonl",
                self.jsonl]
        p = run(np, args, env, timeout=800, **kwargs)
        context, rows = self.measured(p, 100)
        self.assertEqual(context["nranks"], np)
        self.assertIn("# Wrong elements: 0 OK", p.stdout)
        seen = {}
        for row in rows:
            key = (row["test"], row["dtype"], row.get("op"))
            if row["status"] == "unsupported":
                # Only a point-to-point test, or fp8 avg (NCCL's one-rank reduction has no fp8
                # kernel), on one rank may be left out, and it says why.
                self.assertEqual(np, 1, row)
                if row["test"] in POINT_TO_POINT:
                    self.assertIn("at least 2 ranks", row["note"])
                else:
                    self.assertIn(row["test"], REDUCING, row)
                    self.assertTrue(row["dtype"].startswith("fp8_") and row["op"] == "avg", row)
                    self.assertIn("avg on a single rank", row["note"])
                seen.setdefault(key, set()).add("unsupported")
                continue
            seen.setdefault(key, set()).add(row["placement"])
            if row["test"] in ("broadcast", "reduce", "gather", "scatter"):
                self.assertEqual(row["root"], np - 1)
        for test in TESTS:
            for dtype in DTYPES:
                for op in (OPS if test in REDUCING else [None]):
                    self.assertIn((test, dtype, op), seen)
                    if np == 1 and dtype.startswith("fp8_") and op == "avg":
                        self.assertEqual(seen[(test, dtype, op)], {"unsupported"}, (test, dtype, op))
                    elif test in IN_PLACE:
                        self.assertEqual(seen[(test, dtype, op)], {"out-of-place", "in-place"},
                                         (test, dtype, op))
        return context

    def test_every_test_dtype_op_on_1_rank(self):
        context = self.run_matrix(1)
        self.assertEqual(context["network"]["used"], "no")

    def test_every_test_dtype_op_on_2_gpus_of_one_host(self):
        # Each rank on the GPU its local rank names; NCCL connects them over P2P.
        context = self.run_matrix(2, {"COLLBENCH_STAND_IN_GPUS": "2"})
        self.assertEqual(context["network"]["transports"], "P2P")
        self.assertEqual(context["backend"]["facts"]["device_selection"], "local rank 0")
        buses = {r["device"]["pci_bus_id"] for r in context["ranks"]}
        self.assertEqual(len(buses), 2, context["ranks"])

    def test_every_test_dtype_op_on_4_emulated_nodes(self):
        context = self.run_matrix(4, wrapper=EMULATED, device0=True)
        self.assertEqual(context["network"]["net"], "Socket")
        self.assertEqual(context["network"]["ranks_using_network"], "4 of 4")
        self.assertEqual(context["nodes"], 4)


class Modes(Workdir):
    TESTS_ARG = "all_reduce,all_gather,reduce_scatter,broadcast,alltoall,sendrecv"

    def test_graphs_blocking_registration_aggregation_cycles_and_json(self):
        base = [self.TESTS_ARG, "-b", "1K", "-e", "256K", "-f", "16", "-n", "3", "-w", "1", "-d",
                "float,bfloat16", "--backend", "nccl", "--timeout", "60"]
        env = {"COLLBENCH_STAND_IN_GPUS": "2"}
        for mode in (["-G", "2"], ["-z", "1"], ["-R", "1"], ["-R", "2"], ["-m", "2"], ["-N", "2"],
                     ["-J", os.path.join(self.dir.name, "nccl-tests.json")]):
            with self.subTest(mode=mode):
                p = run(2, base + mode + ["--jsonl", self.fresh(f"mode{mode[0]}{mode[1][-1]}.jsonl")], env)
                context, rows = self.measured(p, 10)
                if mode[0] == "-G":
                    self.assertTrue(all(r["mode"] == "graph" and r["graph_launches"] == 2 for r in rows))
                elif mode[0] == "-z":
                    self.assertTrue(all(r["mode"] == "blocking" for r in rows))
                elif mode == ["-R", "1"]:
                    self.assertEqual(context["backend"]["facts"]["registration"],
                                     "ncclCommRegister requested; NCCL registers the buffers locally")
                elif mode == ["-R", "2"]:
                    self.assertIn("ncclCommWindowRegister requested; NCCL registers symmetric windows",
                                  context["backend"]["facts"]["registration"])
                elif mode[0] == "-m":
                    self.assertTrue(all(r["ops_per_iteration"] == 2 for r in rows))
                elif mode[0] == "-N":
                    self.assertEqual({r["cycle"] for r in rows}, {0, 1})
                else:
                    with open(mode[1]) as f:
                        doc = json.load(f)
                    self.assertTrue(doc)

    def test_split_by_node_and_in_pairs(self):
        # --split node: 4 ranks on 2 emulated nodes (COLLBENCH_NODE for collbench, NCCL_HOSTID for
        # NCCL), each rank on its own GPU; --split pairs: 4 nodes of one rank, every pair once.
        node = 'COLLBENCH_NODE=n$((OMPI_COMM_WORLD_RANK / 2)) NCCL_HOSTID=n$((OMPI_COMM_WORLD_RANK / 2)) exec "$0" "$@"'
        args = ["all_reduce,alltoall", "-b", "1K", "-e", "64K", "-f", "8", "-n", "2", "-w", "1", "--backend",
                "nccl", "--timeout", "60"]
        p = run(4, args + ["--split", "node", "--jsonl", self.fresh("node.jsonl")],
                {"COLLBENCH_STAND_IN_GPUS": "4"}, wrapper=node)
        _, rows = self.measured(p, 4)
        self.assertEqual({tuple(r["group"]["ranks"]) for r in rows}, {(0, 1), (2, 3)})
        pairs = 'COLLBENCH_NODE=n$OMPI_COMM_WORLD_RANK NCCL_HOSTID=n$OMPI_COMM_WORLD_RANK exec "$0" "$@"'
        # Every group's backend checks the network too: from the process's one capture of
        # NCCL's log (NCCL opens its log file once per process).
        p = run(4, args + ["--split", "pairs", "--require-net", "Socket", "--jsonl", self.fresh("pairs.jsonl")],
                wrapper=pairs, device0=True)
        _, rows = self.measured(p, 4)
        met = {tuple(sorted(r["group"]["hosts"])) for r in rows}
        self.assertEqual(len(met), 6, met)  # every pair of the 4 nodes
        self.assertEqual({r["group"]["round"] for r in rows}, {0, 1, 2})


class ThreadRanks(Workdir):
    TESTS_ARG = "all_reduce,all_gather,reduce_scatter,broadcast,alltoall,sendrecv"

    def check(self, p, ranks, option, value):
        context, rows = self.measured(p, 12)
        self.assertEqual(context["nranks"], ranks)
        self.assertEqual(context["options"][option], value)
        buses = {r["device"]["pci_bus_id"] for r in context["ranks"]}
        self.assertEqual(len(buses), ranks, "one GPU per rank")

    def test_gpus_per_thread(self):
        p = run(1, [self.TESTS_ARG, "-b", "8", "-e", "1M", "-f", "64", "-n", "2", "-w", "1", "-g", "2", "--backend",
                    "nccl", "--timeout", "60", "--jsonl", self.jsonl], {"COLLBENCH_STAND_IN_GPUS": "2"})
        self.check(p, 2, "gpus_per_thread", 2)

    def test_threads_per_process(self):
        p = run(1, [self.TESTS_ARG, "-b", "8", "-e", "1M", "-f", "64", "-n", "2", "-w", "1", "-t", "2", "--backend",
                    "nccl", "--timeout", "60", "--jsonl", self.jsonl], {"COLLBENCH_STAND_IN_GPUS": "2"})
        self.check(p, 2, "threads_per_process", 2)

    def test_threads_of_two_processes(self):
        # 2 processes x 2 threads: 4 ranks, each process on its own two GPUs of the host.
        p = run(2, [self.TESTS_ARG, "-b", "8", "-e", "256K", "-f", "64", "-n", "2", "-w", "1", "-t", "2",
                    "--backend", "nccl", "--timeout", "60", "--jsonl", self.jsonl],
                {"COLLBENCH_STAND_IN_GPUS": "4"})
        self.check(p, 4, "threads_per_process", 2)


def row_choices(rows):
    return sorted((r["test"], r["bytes"], r["placement"], r["algorithm"]["algorithm"],
                   r["algorithm"]["protocol"]) for r in rows)


class Algorithms(Workdir):
    def test_profiler_and_tuning_log_agree_row_by_row(self):
        args = ["all_reduce,all_gather", "-b", "1K", "-e", "4M", "-f", "16", "-n", "2", "-w", "1", "--backend",
                "nccl", "--algorithms", "1", "--timeout", "60"]
        p = run(2, args + ["--jsonl", self.fresh("profiler.jsonl")], wrapper=EMULATED, device0=True)
        context, rows = self.measured(p, 8)
        self.assertIn("NCCL's profiler interface", context["backend"]["facts"]["algorithms"])
        self.assertTrue(all("algorithm" in r and r["algorithm"]["source"] == "profiler" for r in rows), rows)
        profiler = row_choices(rows)
        # NCCL switches protocol across these sizes: a source that always said the same would pass
        # a comparison of two constants.
        self.assertGreater(len({c[4] for c in profiler}), 1, profiler)
        p = run(2, args + ["--jsonl", self.fresh("tuning.jsonl")], {"NCCL_PROFILER_PLUGIN": "none"},
                wrapper=EMULATED, device0=True)
        context, rows = self.measured(p, 8)
        self.assertIn("NCCL's TUNING log, not the profiler: NCCL_PROFILER_PLUGIN=none turns NCCL's profilers off",
                      context["backend"]["facts"]["algorithms"])
        self.assertTrue(all(r["algorithm"]["source"] == "tuning_log" for r in rows), rows)
        self.assertEqual(profiler, row_choices(rows))


class RequireNet(Workdir):
    def test_socket_passes_and_ib_exits_3_before_measuring(self):
        args = ["all_reduce", "-b", "8", "-e", "8", "-n", "1", "-w", "0", "--backend", "nccl", "--timeout", "30"]
        p = run(2, args + ["--require-net", "Socket", "--jsonl", self.fresh("socket.jsonl")], wrapper=EMULATED,
                device0=True)
        context, _ = self.measured(p)
        self.assertEqual(context["network"]["net"], "Socket")
        p = run(2, args + ["--require-net", "IB", "--jsonl", self.fresh("ib.jsonl")], wrapper=EMULATED,
                device0=True)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("--require-net IB: NCCL selected Socket on ranks 0-1", p.stderr)
        self.assertEqual([r for r in read_jsonl(self.jsonl) if r["record"] == "result"], [])

    def test_pretended_networks(self):
        # COLLBENCH_STAND_IN_NET makes NCCL log another network's lines: collbench must read them.
        args = ["all_reduce", "-b", "8", "-e", "1K", "-f", "32", "-n", "1", "-w", "0", "--backend", "nccl",
                "--timeout", "30"]
        p = run(2, args + ["--require-net", "IB", "--jsonl", self.fresh("ib.jsonl")],
                {"COLLBENCH_STAND_IN_NET": "IB"}, wrapper=EMULATED, device0=True)
        context, _ = self.measured(p)
        self.assertEqual(context["network"]["net"], "IB")
        self.assertEqual(context["network"]["gdr"], "yes")
        self.assertIn("mlx5_0", context["network"]["devices"])
        p = run(2, args + ["--require-net", "efa", "--jsonl", self.fresh("efa.jsonl")],
                {"COLLBENCH_STAND_IN_NET": "Libfabric"}, wrapper=EMULATED, device0=True)
        context, _ = self.measured(p)
        self.assertEqual(context["network"]["net"], "Libfabric")
        self.assertEqual(context["network"]["provider"], "efa")
        self.assertEqual(context["network"]["plugin"], "Libfabric")


class Faults(Workdir):
    def start(self, fault, args, np=2):
        cmd, env = launch(np, args + ["--jsonl", self.jsonl], {"COLLBENCH_STAND_IN_FAULT": fault},
                          wrapper=EMULATED, device0=True)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        lines = []  # (seconds since start, line) of stderr, as they come
        started = time.monotonic()

        def read():
            for line in proc.stderr:
                lines.append((time.monotonic() - started, line.rstrip("\n")))
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        return proc, lines, reader, started

    def finish(self, proc, reader, started, limit=120):
        try:
            proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            self.fail(f"the job ran past {limit} s")
        ended = time.monotonic() - started
        reader.join(10)
        proc.stdout.read()
        return proc.returncode, ended

    def test_hang_exits_3_naming_test_size_and_lagging_rank(self):
        # hang@3: the start-up all-reduce of the measured communicator is 1, the warm-up 2, the
        # timed operation 3 (-n 1: one operation per wait, so --timeout is the wait's bound).
        proc, lines, reader, started = self.start(
            "hang@3", ["all_reduce", "-b", "8", "-e", "1M", "-f", "64", "-n", "1", "-w", "1", "--backend", "nccl",
                       "--timeout", "2"])
        code, ended = self.finish(proc, reader, started)
        err = "\n".join(line for _, line in lines)
        self.assertEqual(code, 3, err)
        hung = [t for t, line in lines if "fault hang@3" in line]
        self.assertTrue(hung, err)
        # From the moment the collective hangs to the end of every rank (mpirun waits for all).
        self.assertLessEqual(ended - hung[0], 7.0, err)
        for rank in (0, 1):
            self.assertTrue(any(line.startswith(f"collbench: rank {rank} ") and "timeout" in line
                                and "all_reduce 8 B" in line for _, line in lines), err)
        self.assertTrue(any(re.search(r"NCCL RAS: rank 1 \(pid \d+ on [0-9.]+, GPU 0\) behind in AllReduce", line)
                            for _, line in lines), err)
        self.assertNotIn("NCCL RAS: NCCL RAS", err)

    def test_rows_before_a_hang_stay_and_parse(self):
        # Each size and placement runs 4 operations (warm-up, timed, per-iteration, verification)
        # after the start-up all-reduce: the 12th is in the third measurement, after two rows.
        proc, lines, reader, started = self.start(
            "hang@12", ["all_reduce", "-b", "8", "-e", "1M", "-f", "64", "-n", "1", "-w", "1", "--backend", "nccl",
                        "--timeout", "2"])
        code, _ = self.finish(proc, reader, started)
        err = "\n".join(line for _, line in lines)
        self.assertEqual(code, 3, err)
        with open(self.jsonl) as f:
            records = [json.loads(line) for line in f.read().splitlines()]  # every line parses
        validate(self, records)
        rows = [r for r in records if r["record"] == "result"]
        self.assertEqual(len(rows), 2, records)
        self.assertTrue(all(r["status"] == "ok" and r["bytes"] == 8 for r in rows))
        self.assertTrue(any("all_reduce 512 B" in line for _, line in lines), err)

    def test_async_error_exits_3_naming_the_nccl_error(self):
        proc, lines, reader, started = self.start(
            "async-error@3", ["all_reduce", "-b", "8", "-e", "1M", "-f", "64", "-n", "1", "-w", "1", "--backend",
                              "nccl", "--timeout", "30"])
        code, _ = self.finish(proc, reader, started)
        err = "\n".join(line for _, line in lines)
        self.assertEqual(code, 3, err)
        # As with NCCL, the error surfaces where rank 1 next looks: in the wait's poll of the
        # communicator ("asynchronous error") or, when the stream finished first, as the return of
        # its next collective. Either way the line names NCCL's error and its cause.
        self.assertTrue(any(line.startswith("collbench: rank 1 ") and
                            ("asynchronous error" in line or "ncclAllReduce failed" in line) and
                            "remote process exited or there was a network error" in line and
                            "injected by COLLBENCH_STAND_IN_FAULT=async-error@3" in line for _, line in lines), err)

    def test_init_hang_exits_3_within_the_timeout(self):
        proc, lines, reader, started = self.start(
            "init-hang", ["all_reduce", "-b", "8", "-e", "8", "-n", "1", "-w", "0", "--backend", "nccl", "--timeout",
                          "3"])
        code, ended = self.finish(proc, reader, started)
        err = "\n".join(line for _, line in lines)
        self.assertEqual(code, 3, err)
        hung = [t for t, line in lines if "fault init-hang" in line]
        self.assertTrue(hung, err)
        self.assertLessEqual(ended - hung[0], 3 + 4, err)
        self.assertTrue(any("initialisation" in line and "did not finish within --timeout 3 s" in line
                            for _, line in lines), err)
        self.assertEqual([r for r in read_jsonl(self.jsonl) if r["record"] == "result"], [])


class Broken(Workdir):
    """Deliberately broken collbench builds: the stand-in must not let them pass."""

    def test_missing_stream_sync_before_verification_fails(self):
        # collbench-broken-verify-sync reads the verification counters without waiting for the
        # copy that brings them from the device. A GPU would give whatever the buffer held before
        # (often a pass by luck); the stand-in's host buffer holds garbage until the copy runs.
        p = run(2, ["all_reduce,all_gather", "-b", "1K", "-e", "64K", "-f", "8", "-n", "2", "-w", "1", "--backend",
                    "nccl", "--timeout", "60", "--jsonl", self.jsonl], {"COLLBENCH_STAND_IN_GPUS": "2"},
                binary=os.environ["COLLBENCH_BROKEN_VERIFY_SYNC"])
        self.assertNotEqual(p.returncode, 0, p.stdout[-2000:])
        rows = [r for r in read_jsonl(self.jsonl) if r["record"] == "result"]
        self.assertFalse(any(r["status"] == "ok" for r in rows), rows)
        # The verification fails: wrong elements, or the read-back of a first mismatch that is not
        # one (its index is garbage too).
        self.assertTrue("wrong elements" in p.stderr or "result.first_index" in p.stderr, p.stderr[-3000:])

    def test_host_pointer_to_nccl_fails_with_the_stand_ins_message(self):
        p = run(2, ["all_reduce", "-b", "1K", "-e", "1K", "-n", "1", "-w", "1", "--backend", "nccl", "--timeout",
                    "60", "--jsonl", self.jsonl], {"COLLBENCH_STAND_IN_GPUS": "2"},
                binary=os.environ["COLLBENCH_BROKEN_HOST_POINTER"])
        self.assertEqual(p.returncode, 3, p.stderr[-3000:])
        self.assertRegex(p.stderr, r"ncclAllReduce failed on rank \d .*invalid argument.*AllReduce : sendbuff "
                                   r"0x[0-9a-f]+ is not a valid pointer \(collbench GPU stand-in: 1024 bytes at it "
                                   r"are host memory")


class DeviceCheck(Workdir):
    def test_device_check_run_on_the_stand_in_bundle(self):
        bundle = os.path.join(self.dir.name, "build")
        os.makedirs(bundle)
        for name in ("collbench", "collbench-kernels-bench", "collbench_gpu_tests", "collbench-report"):
            os.symlink(os.path.join(BUILD_DIR, name), os.path.join(bundle, name))
        script = os.path.join(SOURCE_DIR, "scripts", "device-check")
        env = dict(os.environ, NCCL_TESTS_ARCHIVE="")
        stage = subprocess.run(["bash", script, "stage", bundle], capture_output=True, text=True, timeout=300,
                               env=env)
        self.assertEqual(stage.returncode, 0, stage.stdout + stage.stderr)
        self.assertTrue(os.path.exists(os.path.join(bundle, "device-bundle", "lib",
                                                    "libcollbench_gpu_stand_in.so")), stage.stdout)
        out = os.path.join(self.dir.name, "device-check-out")
        tools = os.path.join(SOURCE_DIR, "tests", "gpu_stand_in", "bin")
        # The stand-in's nvidia-smi and NVML stand where the GPU machine has the driver's.
        nvml = os.environ["COLLBENCH_NVML_STAND_IN_DIR"]
        env = dict(os.environ, OUT=out, PATH=tools + os.pathsep + os.environ["PATH"],
                   LD_LIBRARY_PATH=nvml + (os.pathsep + os.environ["LD_LIBRARY_PATH"]
                                           if os.environ.get("LD_LIBRARY_PATH") else ""),
                   COLLBENCH_STAND_IN_GPUS="1", DEVICE_CHECK_BUDGET="800", DEVICE_CHECK_SCALE="stand-in")
        p = subprocess.run(["bash", script, "run", os.path.join(bundle, "device-bundle")], capture_output=True,
                           text=True, timeout=850, env=env)
        with open(os.path.join(out, "summary.txt")) as f:
            summary = f.read()
        print(summary)  # the record of what ran (ctest -V shows it)
        results = {}
        for line in summary.splitlines():
            m = re.match(r"^(PASS|FAIL|INFO|SKIP)\s+(.*?)\s{2,}(.*)$", line)
            if m:
                results[m.group(2).strip()] = (m.group(1), m.group(3))
        self.assertIn("collbench vs nccl-tests", summary)
        # The side-by-side part says, once, that it did not run.
        skipped = [name for name, (result, _) in results.items() if result == "SKIP"]
        self.assertEqual(len(skipped), 1, summary)
        self.assertIn("nccl-tests", skipped[0])
        # Speed is what the stand-in cannot prove (its times are the host's, under whatever load): those
        # checks run and report, pass or not.
        speed = re.compile(r"GB/s|us$|µs|lower the 8 B time|of peak|within \d+% of nccl-tests|within \d+ s of|"
                           r"same NCCL at run time")
        for name, (result, detail) in results.items():
            if result in ("SKIP", "INFO") or speed.search(name):
                continue
            self.assertEqual(result, "PASS", f"{name}: {detail}\n{summary}")
        self.assertGreaterEqual(len([r for r in results.values() if r[0] == "PASS"]), 12, summary)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:], verbosity=2)
