#!/usr/bin/python3
"""collbench's contract under hostile input, on one rank and under a real mpirun.

Exit codes (0 success, 1 checks failed, 2 bad usage, 3 runtime failure), one line on stderr for
bad usage with nothing written, every write checked, ranks that were given different options
refused at start-up, and a property test that feeds random hostile arguments to the real binary.

Run one test: test_collbench_hostile.py Property.test_random_arguments_on_one_rank
Needs COLLBENCH (the binary) in the environment; COLLBENCH_PROPERTY_SEED and
COLLBENCH_PROPERTY_CASES change the property test's seed and number of cases.
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import unittest

COLLBENCH = os.environ["COLLBENCH"]
CRASH_IN_FINALIZE_LIB = os.environ["COLLBENCH_CRASH_IN_FINALIZE_LIB"]
MPIRUN = ["mpirun", "--oversubscribe", "--mca", "btl", "self,vader,tcp"]
POINT_TO_POINT = {"latency", "bw", "bibw"}


def run(cmd, cwd, timeout=120, stdout=subprocess.PIPE):
    return subprocess.run(cmd, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, text=True,
                          errors="replace", timeout=timeout)


def ranks(np, args):
    """The command line of a job of `np` ranks, all given `args` (0: one rank, no launcher)."""
    if np == 0:
        return [COLLBENCH] + args
    return MPIRUN + ["-np", str(np), COLLBENCH] + args


def mpmd(per_rank):
    """One job whose rank r is given per_rank[r] (mpirun's colon syntax)."""
    cmd = list(MPIRUN)
    for r, args in enumerate(per_rank):
        if r:
            cmd.append(":")
        cmd += ["-np", "1", COLLBENCH] + args
    return cmd


# What collbench says when Open MPI's teardown faults after the run's outcome was decided
# (bench/backends/mpi/mpi_finalize.h): a note, not one of the run's error lines.
FINALIZE_NOTE = "collbench: note: the MPI library crashed in MPI_Finalize"


def our_lines(stderr):
    return [line for line in stderr.splitlines()
            if line.startswith("collbench:") and not line.startswith(FINALIZE_NOTE)]


class Workdir(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="collbench-hostile-")
        self.cwd = self.dir.name
        self.jsonl = os.path.join(self.cwd, "out.jsonl")

    def tearDown(self):
        self.dir.cleanup()

    def expect_usage_error(self, cmd, must_mention, timeout=120):
        start = time.monotonic()
        p = run(cmd, self.cwd, timeout=timeout)
        self.assertEqual(p.returncode, 2, f"{cmd}: {p.stderr[-2000:]}")
        ours = our_lines(p.stderr)
        self.assertEqual(len(ours), 1, f"{cmd}: one line expected, got {ours}")
        for text in must_mention:
            self.assertIn(text, ours[0], cmd)
        self.assertEqual(p.stdout, "", f"{cmd}: nothing on stdout on exit 2")
        self.assertEqual(os.listdir(self.cwd), [], f"{cmd}: nothing written on exit 2")
        return ours[0], time.monotonic() - start


class NothingMeasured(Workdir):
    """A command line that would measure nothing, or something twice, is refused (exit 2)."""

    def test_empty_lists_and_outputs(self):
        cases = [
            ([""], ["the test list ''", "names nothing"]),
            ([","], ["the test list ','", "names nothing"]),
            (["all_reduce", "-d", ","], ["-d ','", "names nothing"]),
            (["all_reduce", "-o", ","], ["-o ','", "names nothing"]),
            (["all_reduce", "-d", ""], ["''", "empty value"]),
            (["all_reduce", "-n", ""], ["''", "empty value"]),
            (["all_reduce", "--jsonl", ""], ["--jsonl", "''"]),
            (["all_reduce", "-J", ""], ["''"]),
        ]
        for np in (0, 2):
            for args, mention in cases:
                with self.subTest(np=np, args=args):
                    self.expect_usage_error(ranks(np, args + ["-b", "8", "-e", "8"]), mention)

    def test_degenerate_size_ranges(self):
        cases = [
            (["-b", "0", "-e", "1K", "-f", "2"], ["-b 0 -e 1024", "0 B", "nothing would be measured",
                                                  "-b above 0"]),
            (["-b", "0", "-e", "0"], ["nothing would be measured"]),
            (["-b", "1", "-e", "3", "-d", "double"], ["nothing would be measured", "raise -e"]),
            (["-b", "1", "-e", "1T", "-i", "1"], ["more than the 1000000", "raise -i"]),
        ]
        for np in (0, 2):
            for args, mention in cases:
                with self.subTest(np=np, args=args):
                    self.expect_usage_error(ranks(np, ["all_reduce", "--backend", "mpi"] + args),
                                            mention)

    def test_duplicates_are_refused(self):
        cases = [
            (["all_reduce,all_reduce"], ["all_reduce is named twice"]),
            (["all_reduce", "all_reduce"], ["all_reduce is named twice"]),
            (["all,broadcast"], ["broadcast is named twice"]),
            (["all_reduce", "-d", "float,float"], ["-d", "float is named twice"]),
            (["all_reduce", "-d", "all,int8"], ["int8 is named twice"]),
            (["all_reduce", "-o", "sum,max,sum"], ["-o", "sum is named twice"]),
        ]
        for args, mention in cases:
            with self.subTest(args=args):
                self.expect_usage_error(ranks(2, args + ["-b", "8", "-e", "8"]), mention)

    def test_all_on_one_rank_reports_point_to_point_as_not_measured(self):
        for np in (0, 1):
            with self.subTest(np=np):
                if os.path.exists(self.jsonl):
                    os.remove(self.jsonl)
                p = run(ranks(np, ["all", "-b", "8", "-e", "64", "-f", "8", "-n", "1", "-w", "0",
                                   "--backend", "mpi", "--jsonl", self.jsonl]), self.cwd)
                self.assertEqual(p.returncode, 0, p.stderr)
                with open(self.jsonl) as f:
                    rows = [json.loads(line) for line in f][1:]
                skipped = {r["test"] for r in rows if r["status"] == "unsupported"}
                self.assertEqual(skipped, POINT_TO_POINT)
                for r in rows:
                    if r["test"] in POINT_TO_POINT:
                        self.assertIn("at least 2 ranks", r["note"])
                self.assertIn("all_reduce", {r["test"] for r in rows if r["status"] == "ok"})
                self.assertIn("latency float: not measured: a point-to-point test", p.stdout)
        # Named explicitly, a point-to-point test on one rank is still bad usage.
        os.remove(self.jsonl)
        self.expect_usage_error(ranks(0, ["latency", "-b", "8", "-e", "8"]), ["at least 2 ranks"])


class CrashInFinalize(Workdir):
    """MPI_Finalize faulting on a thread of its own (the preloaded interposer), as Open MPI 4.1's
    teardown now and then does: the run's status, output and results stand, with one note."""

    def crash_env(self):
        return dict(os.environ, LD_PRELOAD=CRASH_IN_FINALIZE_LIB)

    def test_a_finished_run_keeps_its_status_and_its_results(self):
        for np in (0, 2):
            with self.subTest(np=np):
                if os.path.exists(self.jsonl):
                    os.remove(self.jsonl)
                cmd = ranks(np, ["all_reduce", "-b", "8", "-e", "64", "-f", "8", "-n", "2",
                                 "--backend", "mpi", "--jsonl", self.jsonl])
                p = subprocess.run(cmd, cwd=self.cwd, env=self.crash_env(), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, errors="replace", timeout=120)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn(FINALIZE_NOTE, p.stderr)
                self.assertEqual(our_lines(p.stderr), [], p.stderr)
                # stdout was flushed before the fault: the table is whole.
                self.assertIn("# Avg bus bandwidth", p.stdout)
                with open(self.jsonl) as f:
                    rows = [json.loads(line) for line in f]
                self.assertEqual(rows[0]["record"], "context")
                self.assertEqual(sorted({r["bytes"] for r in rows[1:]}), [8, 64])
                self.assertEqual({r["status"] for r in rows[1:]}, {"ok"})

    def test_bad_usage_still_exits_2_with_its_line(self):
        cmd = ranks(0, ["all_reduce", "--backend", "mpi", "-b", "0", "-e", "0"])
        p = subprocess.run(cmd, cwd=self.cwd, env=self.crash_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, errors="replace", timeout=120)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(FINALIZE_NOTE, p.stderr)
        self.assertEqual(len(our_lines(p.stderr)), 1, p.stderr)
        self.assertIn("nothing would be measured", our_lines(p.stderr)[0])
        self.assertEqual(os.listdir(self.cwd), [])


class Messages(Workdir):
    def test_hidden_bounds_are_stated(self):
        cases = [
            (["-n", "1000000000"], ["-n 1000000000", "1 to 100000000"]),
            (["-w", "1000000000"], ["-w 1000000000", "0 to 100000000"]),
            (["-f", "2000000"], ["-f 2000000", "1048576"]),
            (["-m", "2000000"], ["-m 2000000", "1 to 1048576"]),
            (["-N", "1000000000"], ["-N 1000000000", "100000000"]),
            (["-c", "1001"], ["-c 1001", "1000"]),
            (["-u", "2000000"], ["-u 2000000", "1048576"]),
            (["-G", "2000000"], ["-G 2000000", "1000000"]),
            (["-e", "2000000T"], ["-e 2000000T", "2^60"]),
        ]
        for args, mention in cases:
            with self.subTest(args=args):
                self.expect_usage_error(ranks(0, ["all_reduce"] + args), mention)

    def test_backend_option_the_backend_does_not_declare(self):
        for np in (0, 2):
            for args in (["-R", "1"], ["-R", "1", "--backend", "mpi"], ["--require-net", "efa"]):
                with self.subTest(np=np, args=args):
                    self.expect_usage_error(ranks(np, args + ["-b", "8", "-e", "8"]),
                                            ["the mpi backend does not take this option"])


class DamagedJsonl(Workdir):
    def test_append_after_a_cut_line_starts_a_fresh_line(self):
        cut = '{"schema": {"name": "collbench-results", "version": 1}, "record": "result", "te'
        with open(self.jsonl, "w") as f:
            f.write('{"first": 1}\n' + cut)
        p = run(ranks(2, ["all_reduce", "-b", "8", "-e", "8", "-n", "1", "--backend", "mpi",
                          "--jsonl", self.jsonl]), self.cwd)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.jsonl) as f:
            lines = f.read().split("\n")
        self.assertEqual(lines[0], '{"first": 1}')
        # The cut line is kept as it was, alone on its line, for readers to report.
        self.assertEqual(lines[1], cut)
        self.assertEqual(lines[-1], "")
        records = [json.loads(line) for line in lines[2:-1]]
        self.assertEqual(records[0]["record"], "context")
        self.assertEqual({r["record"] for r in records[1:]}, {"result"})
        # A file that ends with its newline gets no blank line.
        p = run(ranks(0, ["all_reduce", "-b", "8", "-e", "8", "-n", "1", "--backend", "mpi",
                          "--jsonl", self.jsonl]), self.cwd)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.jsonl) as f:
            self.assertNotIn("\n\n", f.read())


class WriteFailures(Workdir):
    def test_table_on_a_full_device_exits_3(self):
        # Without a launcher: under mpirun, rank 0 writes into mpirun's pipe, and mpirun alone
        # writes the terminal or file.
        for np in (0,):
            for args in (["all_reduce", "-b", "8", "-e", "8", "-n", "1"], ["--help"], ["--version"]):
                with self.subTest(np=np, args=args):
                    with open("/dev/full", "w") as full:
                        p = run(ranks(np, args + ["--backend", "mpi"]), self.cwd, stdout=full)
                    self.assertEqual(p.returncode, 3, p.stderr)
                    self.assertIn("write failed", p.stderr)
        # -q writes no table: nothing to fail.
        with open("/dev/full", "w") as full:
            p = run(ranks(0, ["all_reduce", "-b", "8", "-e", "8", "-n", "1", "-q", "--backend",
                              "mpi", "--jsonl", self.jsonl]), self.cwd, stdout=full)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_jsonl_on_a_full_device_exits_3(self):
        p = run(ranks(2, ["all_reduce", "-b", "8", "-e", "8", "-n", "1", "--backend", "mpi",
                          "--jsonl", "/dev/full"]), self.cwd)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("--jsonl /dev/full: write failed", p.stderr)


class JsonOutput(Workdir):
    def test_nccl_tests_json_never_replaces_a_device(self):
        # The finished file is renamed into place: over a device it would replace the device.
        self.expect_usage_error(ranks(0, ["all_reduce", "-b", "8", "-e", "8", "-J", "/dev/null"]),
                                ["-J /dev/null", "not a regular file"])
        self.assertFalse(os.path.isfile("/dev/null"))
        self.assertEqual([n for n in os.listdir("/dev") if n.startswith("null.tmp")], [])


class Disagreement(Workdir):
    """Ranks given different options are refused at start-up, naming the rank and the option,
    within seconds whatever --timeout is."""

    def test_ranks_given_different_options(self):
        base = ["all_reduce", "-b", "8", "-e", "1K", "-f", "4", "-n", "2", "--backend", "mpi",
                "--timeout", "300", "--jsonl", "out.jsonl"]
        cases = [
            (["-e", "1K"], ["-e", "2K"], ["rank 1", "-e is 2048 there and 1024 on rank 0"]),
            (["-n", "2"], ["-n", "3"], ["rank 1", "-n is 3"]),
            ([], ["-d", "double"], ["rank 1", "-d", "double"]),
            ([], ["-o", "max"], ["rank 1", "-o", "max"]),
            ([], ["--seed", "7"], ["rank 1", "--seed is 7 there and not given on rank 0"]),
            ([], ["-n", "x"], ["rank 1 refused its command line", "-n x"]),
            ([], ["--help"], ["rank 1 was given --help"]),
        ]
        for extra0, extra1, mention in cases:
            with self.subTest(rank0=extra0, rank1=extra1):
                def args(extra):
                    # A later -e/-n replaces none: each option is given once.
                    keys = {extra[i] for i in range(0, len(extra), 2)} if len(extra) > 1 else set()
                    out, i = [], 0
                    while i < len(base):
                        if base[i] in keys:
                            i += 2
                            continue
                        out.append(base[i])
                        i += 1
                    return out + extra
                _, seconds = self.expect_usage_error(mpmd([args(extra0), args(extra1)]), mention,
                                                     timeout=60)
                self.assertLess(seconds, 30)

    def test_the_third_rank_is_named(self):
        same = ["all_reduce", "-b", "8", "-e", "64", "-n", "1", "--backend", "mpi"]
        line, _ = self.expect_usage_error(mpmd([same, same, same + ["-r", "1"]]), ["rank 2", "-r"],
                                          timeout=60)
        self.assertNotIn("rank 1 ", line)


# Values a hostile user (or a broken script) gives, per option. The flags that cost time or
# memory get invalid or small values only, so that every case ends within seconds.
HOSTILE = ["", ",", " ", "-", "--", "0", "-1", "1e3", "nan", "inf", "0x10", "99999999999999999999",
           "\u00e9", "a" * 300, "\x01", "1,1", "all"]
FIFO = "fifo"  # a FIFO in the case's directory: read by a reader in some cases, by none in others
VALUES = {
    "-b": HOSTILE + ["8", "1K", "7", "1T", "64T", "2000T"],
    "-e": HOSTILE + ["8", "64", "3", "64T"],
    "-f": HOSTILE + ["1", "2", "4", "2000000"],
    "-i": HOSTILE + ["8", "1K"],
    "-n": ["", "0", "-1", "x", "1", "2", "1000000000"],
    "-w": ["", "-1", "x", "0", "1", "1000000000"],
    "-N": ["", "-1", "x", "1", "2", "1000000000"],
    "-m": ["", "0", "1", "2", "2000000"],
    "-c": HOSTILE + ["0", "1", "2"],
    "-d": HOSTILE + ["float", "float,float", "all", "half", "double,int8", "fp8_e4m3",
                     "float,,int8", "float,"],
    "-o": HOSTILE + ["sum", "sum,sum", "max,min", "xor", "avg", "sum,,max"],
    "-r": HOSTILE + ["0", "1", "2"],
    "-z": HOSTILE + ["0", "1", "2", "3", "4"],
    "-a": HOSTILE + ["0", "1", "2", "3"],
    "-G": ["", "x", "0", "1", "2000000"],
    "-u": HOSTILE + ["0", "1", "3"],
    "-K": HOSTILE + ["0", "1"],
    "-C": HOSTILE + ["0", "1"],
    "-S": HOSTILE + ["0", "1"],
    "-M": HOSTILE + ["0", "1"],
    "-t": HOSTILE + ["1", "2"],
    "-g": HOSTILE + ["1", "8"],
    "-R": HOSTILE + ["0", "1"],
    "--window": HOSTILE + ["1", "64", "70000"],
    "--seed": HOSTILE + ["1", "4294967296"],
    "--timeout": HOSTILE + ["0", "30", "1e400"],
    "--pairs": HOSTILE + ["first", "all"],
    "--min-busbw": HOSTILE + ["0", "1e-9", "1e9"],
    "--backend": HOSTILE + ["mpi", "nccl", "ofi"],
    "--require-net": HOSTILE + ["efa", "IB"],
    "--jsonl": ["", "out.jsonl", "missing-dir/x.jsonl", ".", "/dev/full", "out.json",
                "./out.jsonl", FIFO],
    "-J": ["", "out.json", "missing-dir/x.json", ".", "/dev/null", "out.jsonl", "./out.json"],
}
TEST_LISTS = ["", ",", "all_reduce", "all", "all_reduce,all_reduce", "bw", "latency,bw",
              "nonsense", "broadcast,reduce", "alltoall", "-", "all,all", "all_reduce,,bw",
              "all_reduce,"]
SWITCHES = ["-q", "--quiet", "--bogus", "-x", "--iters=1", "--help", "--version"]
# The files a case may create: what its --jsonl and -J name, inside its working directory (and
# the FIFO, which the case's directory holds from the start).
OUTPUTS = {"out.jsonl", "out.json", "fifo"}
# Every case starts with results an earlier run wrote to out.jsonl: they must survive it.
EARLIER = "".join(json.dumps({"record": "result", "earlier": i}) + "\n" for i in range(3))


def hostile_arguments(rng):
    args = []
    if rng.random() < 0.8:
        args.append(rng.choice(TEST_LISTS))
    for flag in rng.sample(sorted(VALUES), rng.randint(0, 6)):
        value = rng.choice(VALUES[flag])
        if rng.random() < 0.2 and flag.startswith("--"):
            args.append(f"{flag}={value}")
        else:
            args += [flag, value]
    if rng.random() < 0.15:
        args.append(rng.choice(SWITCHES))
    if rng.random() < 0.1:
        rng.shuffle(args)
    # Keep every case short unless the case itself sets these.
    for flag, value in (("-b", "8"), ("-e", "64"), ("-n", "1"), ("-w", "0"), ("--timeout", "30")):
        if flag not in args and not any(a.startswith(flag + "=") for a in args):
            args += [flag, value]
    return args


def given(args, flag):
    """The value of `flag` in `args` (the last one given), or None."""
    value = None
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(flag + "="):
            value = a[len(flag) + 1:]
    return value


def refused_by_rule(args):
    """Why a command line must be refused whatever else it holds, or None."""
    lists = [given(args, "-d"), given(args, "-o")]
    if args and not args[0].startswith("-"):
        lists.append(args[0])
    for item in lists:
        if item is not None and any(p.strip() for p in item.split(",")) and \
                any(not p.strip() for p in item.split(",")):
            return f"an empty item in {item!r}"
    for i, a in enumerate(args[:-1]):
        if a.startswith("-") and a not in SWITCHES and args[i + 1] == "":
            return f"{a} ''"
    if given(args, "-f") is not None and given(args, "-i") is not None:
        return "-f with -i"
    return None


class FifoReader:
    """Reads a FIFO on a thread until its writer closes it; what it got is finish()'s."""

    def __init__(self, path):
        import threading
        self.path, self.data = path, b""
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        with open(self.path, "rb") as f:  # waits for a writer
            self.data = f.read()

    def finish(self):
        if self.thread.is_alive():
            # No writer came: open the write end ourselves so that the reader's open returns.
            fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        self.thread.join(10)
        return self.data.decode(errors="replace")


class Property(unittest.TestCase):
    """Random hostile arguments to the real binary: the exit code is 0..3, never a signal,
    nothing is written outside the outputs named, and nothing is written on exit 2."""

    SEED = int(os.environ.get("COLLBENCH_PROPERTY_SEED", "11"))
    CASES = int(os.environ.get("COLLBENCH_PROPERTY_CASES", "60"))

    def check(self, np, n_cases, seed, disagree=False):
        rng = random.Random(seed)
        seen_codes = set()
        for case in range(n_cases):
            args = hostile_arguments(rng)
            per_rank = None
            if disagree:
                other = list(args)
                other[rng.randrange(len(other))] = rng.choice(HOSTILE + ["1", "8", "float"])
                per_rank = [args, other]
            jsonl = given(args, "--jsonl")
            to_fifo = jsonl == FIFO
            # A FIFO's reader is waited for --timeout seconds: keep those cases short.
            if to_fifo:
                args = [a for a in args] + ["--timeout", "2"]
            with tempfile.TemporaryDirectory(prefix="collbench-property-") as cwd:
                with open(os.path.join(cwd, "out.jsonl"), "w") as f:
                    f.write(EARLIER)
                os.mkfifo(os.path.join(cwd, FIFO))
                before = sorted(os.listdir(cwd))
                reader = FifoReader(os.path.join(cwd, FIFO)) if to_fifo and rng.random() < 0.5 \
                    else None
                cmd = mpmd(per_rank) if per_rank else ranks(np, args)
                where = f"seed {seed} case {case}: {cmd[len(MPIRUN):] if np else cmd}"
                try:
                    p = run(cmd, cwd, timeout=90)
                except subprocess.TimeoutExpired:
                    self.fail(f"{where}: still running after 90 s")
                finally:
                    received = reader.finish() if reader else None
                seen_codes.add(p.returncode)
                self.assertIn(p.returncode, (0, 1, 2, 3), f"{where}: {p.stderr[-1500:]}")
                for marker in ("Segmentation", "core dumped", "terminated with signal", "Aborted",
                               "terminate called"):
                    self.assertNotIn(marker, p.stderr, where)
                written = set(os.listdir(cwd))
                self.assertLessEqual(written, OUTPUTS, f"{where}: wrote {written - OUTPUTS}")
                # No result already written is lost, whatever the case did (two outputs that
                # are one file would replace it).
                with open(os.path.join(cwd, "out.jsonl")) as f:
                    self.assertTrue(f.read().startswith(EARLIER), f"{where}: lost earlier results")
                if p.returncode == 2:
                    self.assertEqual(sorted(written), before, f"{where}: wrote {written} on exit 2")
                    with open(os.path.join(cwd, "out.jsonl")) as f:
                        self.assertEqual(f.read(), EARLIER, f"{where}: changed out.jsonl on exit 2")
                    self.assertEqual(p.stdout, "", f"{where}: stdout on exit 2")
                    self.assertEqual(len(our_lines(p.stderr)), 1, f"{where}: {p.stderr[-1500:]}")
                # Rows sent into a FIFO nobody reads are not a success.
                if to_fifo and p.returncode == 0:
                    self.assertIsNotNone(reader, f"{where}: exit 0 with no reader of the FIFO")
                    self.assertIn('"record":"context"', received.replace(" ", ""), where)
                # What must be refused is refused: an empty item in a list, an empty value, -f
                # with -i.
                if refused_by_rule(args) and not disagree:
                    self.assertEqual(p.returncode, 2, f"{where}: accepted {refused_by_rule(args)}")
        # The generator reaches both accepted and refused command lines.
        self.assertIn(2, seen_codes)

    def test_random_arguments_on_one_rank(self):
        self.check(0, self.CASES, self.SEED)

    def test_random_arguments_on_two_ranks(self):
        self.check(2, max(1, self.CASES // 3), self.SEED + 1)

    def test_random_arguments_that_differ_between_ranks(self):
        self.check(2, max(1, self.CASES // 6), self.SEED + 2, disagree=True)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:], verbosity=2)
