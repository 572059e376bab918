#!/usr/bin/env python3
"""collbench-report's contract under hostile input, as a hostile user meets it:

- every exit code is 0-3, never a signal;
- nothing is written outside the output (the report directory, or the JSON file);
- nothing at all is written on exit 2;
- a failed write (a full device, a file size limit) is exit 3 and leaves no partial report.

The property test feeds random hostile arguments and files (seeded: COLLBENCH_CONTRACT_SEED,
COLLBENCH_CONTRACT_CASES) and checks the contract on each; a failure names the case's seed and
command line.

usage: report_contract_test.py COLLBENCH_REPORT FIXTURES SCRATCH
"""
import collections
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import unittest

BIN, FIXTURES, SCRATCH = sys.argv[1:4]
SEED = int(os.environ.get("COLLBENCH_CONTRACT_SEED", "20261130"))
CASES = int(os.environ.get("COLLBENCH_CONTRACT_CASES", "300"))

HOSTILE_TESTS = ["x/../../PWNED", "a/b", "../../PWNED-up", "/tmp/PWNED-abs", "", ".", "..",
                 "hypercube", "all_reduce/../../PWNED", "busbw-all_reduce", "a" * 300, "nul\u0000x",
                 "\u00e9\u202e", "all_reduce\n", "index"]
KNOWN_TESTS = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall",
               "gather", "scatter", "sendrecv", "latency", "bw", "bibw"]


def scratch(name):
    path = os.path.join(SCRATCH, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def row(test="all_reduce", size=1024, run_id="00000000000000c1", **changes):
    t = 10.0 + size / 1e4
    r = {"schema": {"name": "collbench-results", "version": 1}, "record": "result",
         "run_id": run_id, "test": test, "backend": "nccl", "dtype": "float",
         "op": "sum" if test in ("all_reduce", "reduce", "reduce_scatter") else None,
         "root": None, "bytes": size, "count": size // 4, "nranks": 2, "nodes": 1,
         "placement": "out-of-place", "mode": "batch", "iterations": 20, "warmup": 5,
         "graph_launches": 0, "window": None, "pair": None,
         "time_us": {"reported": t, "slowest": t, "mean": t, "fastest": t,
                     "per_iteration": {"n": 20, "min": t, "p50": t, "p99": t, "max": t,
                                       "mean": t, "cv": 0.01}},
         "algbw_gbps": size / t / 1e3, "busbw_gbps": size / t / 1e3, "slowest_rank": 0,
         "slowest_host": "lab", "wrong": 0, "status": "ok"}
    r.update(changes)
    return json.dumps(r) + "\n"


def good_rows(test="all_reduce"):
    return "".join(row(test, s) for s in (8, 1024, 65536, 1 << 20))


def run(args, cwd=None, stdout=subprocess.PIPE, limit=None, timeout=60):
    def limits():
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    p = subprocess.run([BIN, *args], cwd=cwd, stdout=stdout, stderr=subprocess.PIPE,
                       timeout=timeout, preexec_fn=limits)
    out = p.stdout.decode(errors="replace") if isinstance(p.stdout, bytes) else ""
    return p.returncode, out, p.stderr.decode(errors="replace")


def snapshot(root):
    """Every path below root with what would show a write: type, size, mtime, inode."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if os.path.isdir(path) and not os.path.islink(path):
                # A directory's own mtime changes with its entries, which are listed themselves.
                state[path] = (st.st_mode >> 12, st.st_ino)
            else:
                state[path] = (st.st_mode >> 12, st.st_size, st.st_mtime_ns, st.st_ino)
    return state


def changes(before, after):
    return sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))


def inside(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


class Contract(unittest.TestCase):
    def test_full_device_is_exit_3(self):
        box = scratch("full")
        with open(os.path.join(box, "run.jsonl"), "w") as f:
            f.write(good_rows())
        with open("/dev/full", "wb") as full:
            for args in (["run.jsonl", "--format", "gbench", "-o", "-"],
                         ["run.jsonl", "--format", "gbench"],
                         ["run.jsonl", "-o", "report"],
                         ["--help"], ["--version"]):
                code, _, stderr = run(args, cwd=box, stdout=full)
                self.assertEqual(code, 3, f"{args}: {stderr}")
                self.assertIn("cannot write to standard output", stderr)
            # Nothing to write on stdout: nothing fails.
            code, _, stderr = run(["run.jsonl", "-q", "-o", "quiet"], cwd=box, stdout=full)
            self.assertEqual(code, 0, stderr)
        code, _, stderr = run(["run.jsonl", "--format", "gbench", "-o", "/dev/full"], cwd=box)
        self.assertEqual(code, 3, stderr)

    def test_file_size_limit_is_exit_3_without_a_partial_report(self):
        box = scratch("fsize")
        with open(os.path.join(box, "run.jsonl"), "w") as f:
            f.write(good_rows())
        # Small files fit, index.html does not: the failure comes part-way.
        code, _, stderr = run(["run.jsonl", "-o", "report"], cwd=box, limit=3000)
        self.assertEqual(code, 3, stderr)
        self.assertFalse(os.path.exists(os.path.join(box, "report")), os.listdir(box))
        # An earlier report stays whole.
        code, _, stderr = run(["run.jsonl", "-o", "report"], cwd=box)
        self.assertEqual(code, 0, stderr)
        before = snapshot(os.path.join(box, "report"))
        code, _, stderr = run(["run.jsonl", "-o", "report"], cwd=box, limit=3000)
        self.assertEqual(code, 3, stderr)
        self.assertEqual(snapshot(os.path.join(box, "report")), before)

    def test_crafted_test_names_write_nothing_outside_the_report(self):
        jail = scratch("crafted")
        box = os.path.join(jail, "box")
        os.makedirs(box)
        text = good_rows() + "".join(row(t) for t in ("x/../../NAME", "a/b", "../NAME2", "hypercube"))
        with open(os.path.join(box, "run.jsonl"), "w") as f:
            f.write(text)
        before = snapshot(jail)
        code, _, stderr = run(["run.jsonl", "-o", "out"], cwd=box)
        self.assertEqual(code, 0, stderr)
        for path in changes(before, snapshot(jail)):
            self.assertTrue(inside(path, os.path.join(box, "out")), path)
        self.assertIn("test \"x/../../NAME\"", stderr)
        self.assertEqual(stderr.count("not a collbench test"), 4, stderr)

    def test_output_that_is_an_input_is_exit_2(self):
        box = scratch("same-file")
        with open(os.path.join(box, "X.jsonl"), "w") as f:
            f.write(good_rows())
        os.symlink("X.jsonl", os.path.join(box, "link.jsonl"))
        before = snapshot(box)
        for out in ("X.jsonl", "./X.jsonl", "link.jsonl", os.path.join(box, "X.jsonl")):
            for fmt in ("gbench", "html"):
                code, _, stderr = run(["X.jsonl", "--format", fmt, "-o", out], cwd=box)
                self.assertEqual(code, 2, f"{out} {fmt}: {stderr}")
                self.assertIn("is the input", stderr)
        self.assertEqual(snapshot(box), before)

    def test_property_hostile_arguments_and_files(self):
        rng = random.Random(SEED)
        failures = []
        self.codes = collections.Counter()
        for case in range(CASES):
            seed = rng.randrange(1 << 30)
            problem = self.one_case(case, seed)
            if problem:
                failures.append(problem)
                if len(failures) >= 5:
                    break
        # What the cases exercised, so that a generator that only ever makes usage errors shows.
        print(f"\nexit codes over {CASES} cases (seed {SEED}): {dict(sorted(self.codes.items()))}",
              file=sys.stderr)
        self.assertEqual(failures, [], "\n\n".join(failures))
        self.assertGreater(self.codes[0] + self.codes[1] + self.codes[3], CASES // 8,
                           "too few cases got as far as writing")

    # --- the property test's pieces -------------------------------------------------------

    def hostile_file(self, rng, box, name):
        kind = rng.choice(["rows", "rows", "rows", "nccl", "osu", "garbage", "empty", "cut"])
        path = os.path.join(box, name + (".log" if kind in ("nccl", "osu") else ".jsonl"))
        if kind == "rows":
            lines = []
            for _ in range(rng.randint(1, 8)):
                changes = {}
                if rng.random() < 0.3:
                    field, value = rng.choice([
                        ("test", rng.choice(HOSTILE_TESTS)),
                        ("nranks", rng.choice([0, -1, 2 ** 31 - 1, "2", None])),
                        ("nodes", rng.choice([0, -5])),
                        ("busbw_gbps", rng.choice([-1.0, 0.0, 1e308, "fast", None])),
                        ("algbw_gbps", rng.choice([-0.5, 1e-300])),
                        ("bytes", rng.choice([-1, 2 ** 64, 0, 1.5])),
                        ("dtype", rng.choice(["complex", "float", ""])),
                        ("op", rng.choice(["xor", None, "max"])),
                        ("time_us", rng.choice([None, {"reported": -1}, "x",
                                                {"reported": 5, "slowest": -5, "mean": 5,
                                                 "fastest": 5, "per_iteration": {}}])),
                        ("status", rng.choice(["wrong", "unsupported", "bogus"])),
                        ("schema", rng.choice([{"name": "collbench-results", "version": 99},
                                               None])),
                    ])
                    changes[field] = value
                changes.setdefault("test", rng.choice(KNOWN_TESTS))
                lines.append(row(size=rng.choice([0, 8, 1024, 1 << 20]), **changes))
            text = "".join(lines)
            data = text.encode()
        elif kind == "nccl":
            program = rng.choice(["all_reduce", "gather", "x/../../y", "hypercube"])
            busbw = rng.choice(["0.00", "-1.50", "nan", "1e999"])
            data = (f"# Collective test starting: {program}_perf\n"
                    "# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 1 "
                    "iters: 20 agg iters: 1 validation: 1 graph: 0\n"
                    "#  Rank  0 Group  0 Pid    149 on     h device  0 [0x56] NVIDIA A100\n"
                    "#       size         count      type   redop    root     time   algbw   "
                    "busbw #wrong     time   algbw   busbw #wrong\n"
                    f"           8             2     float     sum      -1    10.00    0.00    "
                    f"{busbw}      0    -10.00    0.00    0.00      0\n").encode()
        elif kind == "osu":
            data = ("# OSU MPI Latency Test v7.4\n# Size       Avg Latency(us)\n"
                    f"8    {rng.choice(['0.49', '-0.45', 'nan', '1e400'])}\n").encode()
        elif kind == "garbage":
            data = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4000)))
        elif kind == "cut":
            data = good_rows().encode()[:-rng.randint(1, 200)]
        else:
            data = b""
        with open(path, "wb") as f:
            f.write(data)
        return os.path.basename(path)

    def one_case(self, case, seed):
        rng = random.Random(seed)
        jail = scratch(f"property/{case}")
        box = os.path.join(jail, "box")
        os.makedirs(os.path.join(box, "dir"))
        files = [self.hostile_file(rng, box, f"in{i}") for i in range(rng.randint(1, 3))]
        if rng.random() < 0.5:
            with open(os.path.join(box, "dir", "good.jsonl"), "w") as f:
                f.write(good_rows(rng.choice(KNOWN_TESTS)))
        if rng.random() < 0.3:
            os.symlink(files[0], os.path.join(box, "link.jsonl"))
            files.append("link.jsonl")
        if rng.random() < 0.3:
            os.makedirs(os.path.join(box, "old-report"))
            with open(os.path.join(box, "old-report", "index.html"), "w") as f:
                f.write("an earlier report")
        spelt = lambda name: rng.choice([name, "./" + name, os.path.join(box, name),
                                         "dir/../" + name])
        # Inputs that are not regular files: a FIFO no one writes (reading it would block) and a
        # device without end.
        specials = []
        if rng.random() < 0.1:
            os.mkfifo(os.path.join(box, "fifo.jsonl"))
            specials.append("fifo.jsonl")
        if rng.random() < 0.05:
            specials.append("/dev/zero")
        count = rng.randint(1, 3) if rng.random() < 0.9 else 0
        inputs = [spelt(rng.choice(files + ["dir"])) for _ in range(count)] + specials
        args = []
        mode = rng.random()
        if mode < 0.2:
            inputs = [*(inputs or ["dir"]), spelt(rng.choice(files + ["dir"]))]
            args += ["--baseline", *inputs[:-1], "--candidate", inputs[-1]]
        else:
            args += inputs
        output = rng.choice(["out", "out/deeper", "old-report", "-", None, "/dev/full",
                             "dir", "dir/../escape", files[0], spelt(files[-1]), "link.jsonl",
                             "res.json"])
        if output is not None:
            args += ["-o", output]
        fmt = rng.choice([None, None, "html", "gbench", "gbench", "html", "html", "csv"])
        if fmt:
            args += ["--format", fmt]
        for _ in range(rng.randint(0, 4)):
            # Mostly options a report can go ahead with, so that most cases get to writing.
            args += rng.choice([
                ["--y-scale", "log"], ["--line", "headline"], ["--max-series", "2"],
                ["--facet-by", "none"], ["--latency-max", "1K"], ["--scaling-sizes", "1M,64M"],
                ["--title", rng.choice(["<script>alert(1)</script>", "\u202e", "a" * 5000])],
                ["--dtype", "FP32"], ["-q"], ["--suspects"],
            ] if rng.random() < 0.75 else [
                ["--dtype", rng.choice(["complex", "double", ""])],
                ["--op", rng.choice(["sum", "xor", "max"])],
                ["--placement", rng.choice(["in-place", "sideways"])],
                ["--y-scale", "cubic"], ["--line", "p75"],
                ["--max-series", rng.choice(["-1", "0", "x", "99999999999"])],
                ["--facet-by", rng.choice(["nodes", "color"])],
                ["--latency-max", rng.choice(["0", "-1", "1Z"])],
                ["--scaling-sizes", rng.choice(["", ",", "1M,0", "1M,1M"])],
                ["--threshold", rng.choice(["5%", "-1", "200%", "nan", "0.5"])],
                ["--match-ignore", rng.choice(["nodes", "flavour"])],
                ["--strict"], ["--nope"], ["\u0001"], ["-o"], ["--format"],
                # Empty values, never the default silently.
                ["-o", ""], ["--threshold", ""], ["--title", ""], ["--max-series", ""],
            ])
        # The files this invocation reads (by where they really are): never to be changed.
        read = set()
        for name in inputs:
            path = os.path.realpath(os.path.join(box, name))
            if os.path.isdir(path):
                read.update(os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs)
            elif os.path.exists(path):
                read.add(path)
        full = rng.random() < 0.15
        before = snapshot(jail)
        try:
            if full:
                with open("/dev/full", "wb") as f:
                    code, _, stderr = run(args, cwd=box, stdout=f, timeout=60)
            else:
                code, _, stderr = run(args, cwd=box, timeout=60)
        except subprocess.TimeoutExpired:
            return f"case {case} (seed {seed}): hung: {args}"
        after = snapshot(jail)
        changed = changes(before, after)
        self.codes[code] += 1
        if os.environ.get("COLLBENCH_CONTRACT_VERBOSE"):
            print(code, (stderr.strip().splitlines() or [""])[-1][:150], file=sys.stderr)
        where = f"case {case} (seed {seed}), exit {code}: {args}\n{stderr[-600:]}"
        if code not in (0, 1, 2, 3):
            return f"{where}\nexit code not in 0-3 (a negative code is a signal)"
        if code == 2 and changed:
            return f"{where}\nexit 2 but wrote: {changed}"
        if specials and code != 2:
            return f"{where}\nread {specials}, which are not files, with exit {code}"
        if any(args[i + 1] == "" for i in range(len(args) - 1) if args[i].startswith("-")) and \
                code != 2:
            return f"{where}\nan empty value was taken for the default (exit {code})"
        # Where the output may go: the last -o, else "report" (html) or stdout (gbench).
        outs = [args[i + 1] for i in range(len(args) - 1) if args[i] == "-o"]
        out = outs[-1] if outs else None
        gbench = "gbench" in [args[i + 1] for i in range(len(args) - 1) if args[i] == "--format"]
        allowed = None
        if out is None and not gbench:
            allowed = os.path.join(box, "report")
        elif out is not None and out != "-":
            allowed = os.path.normpath(os.path.join(box, out))
        for path in read:
            if path in before and before.get(path) != after.get(path):
                return f"{where}\nan input was overwritten: {path}"
        # A report written into a directory that is one of the inputs mixes with its results.
        if out not in (None, "-") and code != 2 and any(
                os.path.isdir(os.path.join(box, i)) and
                os.path.realpath(os.path.join(box, i)) == os.path.realpath(os.path.join(box, out))
                for i in inputs):
            return f"{where}\nthe report went into the input directory {out}"
        for path in changed:
            # The output directory's missing parents are made for it.
            if allowed and inside(allowed, path) and os.path.isdir(path):
                continue
            if allowed is None or not inside(path, allowed):
                return f"{where}\nwrote outside the output ({allowed}): {path}"
            if path.endswith(".partial"):
                return f"{where}\nleft a temporary file: {path}"
        return None


if __name__ == "__main__":
    os.makedirs(SCRATCH, exist_ok=True)
    unittest.main(argv=[sys.argv[0], "-v"])
