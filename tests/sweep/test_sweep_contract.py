#!/usr/bin/python3
"""collbench-sweep's contract under hostile input, against the real binary: exit codes 0-3 and
never a signal, one line on stderr for bad usage, nothing written on exit 2 and nothing outside
the campaign's results directory, every write to stdout checked, outputs kept apart from inputs.

The property test feeds random hostile arguments and campaign files; it is seeded and
reproducible. Environment: COLLBENCH_SWEEP (the binary), COLLBENCH_PROPERTY_SEED (default 1103),
COLLBENCH_PROPERTY_CASES (default 400), COLLBENCH_PROPERTY_CASE (replay one case).
Run one test: test_sweep_contract.py Property.test_random_hostile_input_keeps_the_contract
"""

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collbench_lines import CONTEXT_LINE, RESULT_LINE  # noqa: E402

SWEEP = os.path.abspath(os.environ.get("COLLBENCH_SWEEP", "build/collbench-sweep"))
CASE_TIMEOUT_S = 30

GOOD = textwrap.dedent("""\
    campaign: t
    tests: [all_reduce]
    backend: mpi
    nodes: [1]
    tasks_per_node: 2
    sizes: {min: 8, max: 64, factor: 8}
    iters: 1
    warmup: 0
    timeout: 5
    time_limit: "1"
    """)


def snapshot(root):
    """Every entry under root: kind and content (files), target (links)."""
    entries = {}
    for base, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = os.path.join(base, name)
            if os.path.islink(path):
                entries[path] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                entries[path] = ("dir",)
            else:
                try:
                    with open(path, "rb") as f:
                        entries[path] = ("file", hashlib.sha1(f.read()).hexdigest())
                except OSError as e:
                    entries[path] = ("unreadable", str(e))
    return entries


def changes(before, after):
    return sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))


class Sandbox:
    """A directory with inputs (in/), stand-in programs (bin/), and a working directory (work/),
    HOME and TMPDIR inside it, so that every write the sweep makes shows in one snapshot."""

    def __init__(self):
        self.root = os.path.realpath(tempfile.mkdtemp(prefix="collbench-sweep-contract-"))
        for d in ("in", "bin", "work", "home", "tmp"):
            os.makedirs(os.path.join(self.root, d))
        self.stub("sbatch", "echo 4242")
        self.stub("squeue", "exit 0")
        self.stub("mpirun", "exit 1")
        self.stub("collbench", "exit 1")
        with open(os.path.join(self.root, "in", "collbench.sbatch"), "w") as f:
            f.write("#!/bin/sh\nexit 0\n")

    def stub(self, name, body):
        path = os.path.join(self.root, "bin", name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, 0o755)

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def env(self):
        return dict(PATH=self.path("bin"), HOME=self.path("home"), TMPDIR=self.path("tmp"),
                    LANG="C.UTF-8")

    def run(self, args, stdout="pipe"):
        """Runs the sweep in work/; stdout is a pipe, /dev/full or a pipe nobody reads."""
        kw = dict(cwd=self.path("work"), env=self.env(), stderr=subprocess.PIPE, timeout=CASE_TIMEOUT_S)
        if stdout == "pipe":
            r = subprocess.run([SWEEP, *args], stdout=subprocess.PIPE, **kw)
            return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
        if stdout == "full":
            with open("/dev/full", "wb") as full:
                r = subprocess.run([SWEEP, *args], stdout=full, **kw)
            return r.returncode, "", r.stderr.decode(errors="replace")
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            r = subprocess.run([SWEEP, *args], stdout=write_end, **kw)
        finally:
            os.close(write_end)
        return r.returncode, "", r.stderr.decode(errors="replace")

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


class Case(unittest.TestCase):
    def setUp(self):
        self.box = Sandbox()
        self.addCleanup(self.box.close)

    def write(self, name, text):
        path = self.box.path("in", name)
        with open(path, "w") as f:
            f.write(text)
        return path


class Writes(Case):
    def test_every_subcommand_exits_3_when_stdout_is_full_or_closed(self):
        camp = self.write("c.yaml", GOOD)
        res = self.box.path("work", "out")
        for mode in ("full", "closed"):
            for args in (["plan", camp], ["plan", "--local", camp], ["status", camp, "--results", res],
                         ["submit", "--dry-run", camp], ["--help"], ["--version"], ["plan", "--help"]):
                rc, _, err = self.box.run(args, stdout=mode)
                self.assertEqual(rc, 3, f"{mode} {args}: {err}")
                self.assertIn("cannot write to standard output", err)
        # Bad usage stays 2 (and says why) even with stdout gone.
        rc, _, err = self.box.run(["plan", self.box.path("in", "missing.yaml")], stdout="full")
        self.assertEqual(rc, 2, err)


class Messages(Case):
    def test_a_directory_is_reported_as_a_directory(self):
        rc, out, err = self.box.run(["plan", self.box.path("in")])
        self.assertEqual(rc, 2)
        self.assertIn("a directory, not a regular file", err)
        self.assertNotIn("empty", err)
        self.assertEqual(out, "")

    def test_an_unknown_subcommand_is_unknown_with_the_one_meant(self):
        rc, _, err = self.box.run(["pla", "c.yaml"])
        self.assertEqual(rc, 2)
        self.assertIn("unknown subcommand 'pla'; did you mean 'plan'?", err)
        rc, _, err = self.box.run(["plan", "c.yaml", "--resluts", "x"])
        self.assertEqual(rc, 2)
        self.assertIn("did you mean --results?", err)

    def test_errors_go_to_stderr(self):
        camp = self.write("c.yaml", GOOD)
        rc, out, err = self.box.run(["wait", camp])
        self.assertEqual(rc, 2, out + err)
        self.assertIn("nothing submitted yet", err)
        self.assertNotIn("nothing submitted", out)
        self.box.stub("sbatch", "echo 'sbatch: error: Invalid account' >&2; exit 1")
        rc, out, err = self.box.run(["submit", camp, "--template", self.box.path("in", "collbench.sbatch"),
                                     "--collbench", self.box.path("bin", "collbench")])
        self.assertEqual(rc, 3, out + err)
        self.assertIn("Invalid account", err)
        self.assertNotIn("Invalid account", out)

    def test_the_stated_bounds(self):
        camp = self.write("c.yaml", GOOD.replace("tasks_per_node: 2", "tasks_per_node: 200000"))
        rc, _, err = self.box.run(["plan", camp])
        self.assertEqual(rc, 2)
        self.assertIn("from 1 to 100000", err)
        rc, _, err = self.box.run(["wait", camp, "--interval", "0"])
        self.assertEqual(rc, 2)
        self.assertIn("from 0.1 to 3600 seconds", err)


class Inputs(Case):
    def assert_refused_untouched(self, args, expect):
        before = snapshot(self.box.root)
        rc, out, err = self.box.run(args)
        self.assertEqual(rc, 2, out + err)
        self.assertIn(expect, err)
        self.assertEqual(changes(before, snapshot(self.box.root)), [])

    def test_an_output_that_is_an_input_is_refused_however_spelled(self):
        camp = self.write("c.yaml", GOOD)
        os.makedirs(self.box.path("work", "out", "t"))
        # The campaign is the manifest through a link, "./" and ".." spellings.
        os.symlink(camp, self.box.path("work", "out", "t", "manifest.jsonl"))
        for sub in (["plan"], ["submit"], ["run", "--local"], ["collect"]):
            self.assert_refused_untouched([*sub, camp, "--results", "out"], "is the campaign's manifest")
            self.assert_refused_untouched([*sub, "./../in/c.yaml", "--results", "./out/../out"],
                                          "is the campaign's manifest")
        # A run's collected results as the sbatch template; a file where results would go.
        self.assert_refused_untouched(["submit", "--dry-run", camp, "--results", "out2", "--template",
                                       "out2/t/default-n1x2-default-r0.jsonl"], "collected results of a run")
        self.assert_refused_untouched(["run", "--local", camp, "--results", camp], "is a file, not a directory")

    def test_nul_in_an_environment_value_is_refused_before_anything_is_written(self):
        camp = self.write("c.yaml", GOOD + 'variants:\n  - {name: a, env: {X: "a\\0b"}}\n')
        for sub in (["plan"], ["submit", "--dry-run"], ["submit"], ["run", "--local"], ["status"]):
            self.assert_refused_untouched([*sub, camp, "--results", "out", "--collbench",
                                           self.box.path("bin", "collbench")], "c.yaml:12:24: the value of X")


class Lists(Case):
    def test_duplicates_empty_lists_and_degenerate_sizes_exit_2(self):
        for change, expect in [
            (("tests: [all_reduce]", "tests: [all_reduce, all_reduce]"), "lists all_reduce twice"),
            (("tests: [all_reduce]", "tests: ','"), "'tests' is empty"),
            (("backend: mpi", "backend: mpi\ndtypes: [float, fp32]"), "lists fp32 twice"),
            (("backend: mpi", "backend: mpi\nops: [sum, sum]"), "lists sum twice"),
            (("nodes: [1]", "nodes: [1, 1]"), "lists 1 twice"),
            (("{min: 8, max: 64, factor: 8}", "{min: 0, max: 1K, factor: 2}"), "only 0 B"),
        ]:
            camp = self.write("c.yaml", GOOD.replace(*change))
            rc, out, err = self.box.run(["plan", camp])
            self.assertEqual(rc, 2, f"{change}: {out}{err}")
            self.assertIn(expect, err)
            self.assertEqual(out, "")


# The property test's vocabulary: pieces of argument lists and campaign files, valid and hostile.
NUMBERS = ["0", "1", "5", "0.1", "-1", "nan", "inf", "-inf", "1e400", "abc", "", "2592001", "1e-9"]
HOSTILE_VALUES = ['""', "''", "','", "[]", "{}", "~", "[[[]]]", '"\\0"', '"a\\nb"', "-1", "0",
                  "99999999999999999999999", "1e308", "all", "[all, all]", "[1, 1]", "*nowhere",
                  "&a [1]", "!!binary AAAA", "'" + "x" * 3000 + "'", "[" * 300 + "]" * 300, "\t"]
KEY_VALUES = {
    "campaign": ["t", "u", "../x", "a/b", "''", "x" * 100, '"t\\0"'],
    "tests": ["[all_reduce]", "all", "[all_reduce, all_reduce]", "[all, all_reduce]", "','", "''",
              "[all_reducee]", "'all_reduce,all_gather'", "[sendrecv]"],
    "backend": ["mpi", "nccl", "gloo", "ofi"],
    "nodes": ["[1]", "[1, 2]", "[1, 1]", "[0]", "[100001]", "[4096]", "1"],
    "tasks_per_node": ["1", "2", "[2, 2]", "100000", "512", "[]"],
    "sizes": ["{min: 8, max: 64, factor: 8}", "{min: 0, max: 1K, factor: 2}", "{min: 8, max: 10, factor: 2}",
              "{min: 1K, max: 8}", "{min: 8, max: 1K, step: 0}", "{min: 8, max: 99999999999G}",
              "{min: 0, max: 0}", "{min: 8, max: 64, step: 8}"],
    "dtypes": ["[float]", "[float, fp32]", "[]", "','", "[all, float]", "[complex]", "float,half"],
    "ops": ["[sum]", "[sum, sum]", "[all, max]", "[xor]", "''"],
    "iters": ["1", "0", "100000001", "x"],
    "repeats": ["1", "2", "0", "1001"],
    "time_limit": ['"1"', '"1' + "0" * 400 + '"', "soon", "0", '"1-00:00:00"', '"99:99:99"'],
    "output": ["out2", "''", "in", '"a\\0"'],
    "launcher": ["srun", "mpirun", "bash"],
    "args": ["[-w, '0']", "[-n, '5', -n, '6']", "['--pairs', 'al\\0l']", "[--bogus]"],
    "variants": ["[{name: a}, {name: b, env: {X: '1'}}]", "[{name: a}, {name: a}]",
                 "[{name: a, env: {X: \"a\\0b\"}}]", "[{name: a, env: {'1X': y}}]", "[{name: a, dtypes: []}]",
                 "[{name: a, sizes: {min: 0, max: 8}}]", "[{name: a, env: {X: \"$(touch PWNED)\"}}]"],
    "partitions": ["[p5]", "[p5, p5]", "[{name: p, site_env: ../in/c.yaml}]", "[{name: p, site_env: nowhere}]"],
}
# The options each subcommand takes besides --results, --collbench, --template, --lock-timeout.
SUBCOMMANDS = {"plan": ["--local"], "submit": ["--dry-run", "--retry-failed", "--array"],
               "status": ["--json", "--local"], "wait": ["--timeout", "--interval"], "collect": [],
               "run": ["--local", "--local", "--mpirun", "--retry-failed", "--redo", "--dry-run", "--array",
                       "--timeout", "--interval"]}
GOOD_NUMBERS = ["0", "1", "0.1", "5"]


def hostile_campaign(r):
    lines = dict((line.split(":", 1)[0], line.split(":", 1)[1].strip()) for line in GOOD.splitlines())
    for _ in range(r.choices([0, 1, 2, 3, 4], [10, 4, 2, 1, 1])[0]):
        action = r.random()
        key = r.choice(sorted(KEY_VALUES))
        if action < 0.55:
            lines[key] = r.choice(KEY_VALUES[key])
        elif action < 0.7:
            lines[key] = r.choice(HOSTILE_VALUES)
        elif action < 0.8:
            lines.pop(r.choice(sorted(lines)), None)
        else:
            lines[r.choice(["node", "colour", "tests ", "variant"])] = r.choice(HOSTILE_VALUES)
    text = "".join(f"{k}: {v}\n" for k, v in lines.items())
    roll = r.random()
    if roll < 0.05:
        text = bytes(r.randrange(256) for _ in range(r.randint(0, 300))).decode("latin-1")
    elif roll < 0.1:
        cut = r.randint(0, len(text))
        text = text[:cut] + "\0" + text[cut:]
    elif roll < 0.15:
        text = text[:r.randint(0, len(text))]
    elif roll < 0.18:
        text += "tests: [all_reduce]\n"  # a key twice
    return text


def hostile_arguments(r, box):
    camp = box.path("in", "c.yaml")
    campaign_paths = [camp] * 16 + ["../in/c.yaml", box.path("in"), box.path("in", "missing.yaml"),
                                   "/dev/null", "", box.path("in", "link.yaml"), "/dev/zero"]
    results = ["out"] * 8 + ["out/sub", camp, "", "pct%dir", "./out/../out", box.path("in")]

    def number():
        return r.choice(GOOD_NUMBERS) if r.random() < 0.7 else r.choice(NUMBERS)

    def value_of(option):
        if option == "--results":
            return [r.choice(results)]
        if option == "--collbench":
            return [r.choice([box.path("bin", "collbench")] * 8 + ["", camp, "nowhere"])]
        if option == "--template":
            return [r.choice([box.path("in", "collbench.sbatch")] * 8 +
                             ["", "out/t/manifest.jsonl", box.path("in", "missing")])]
        if option == "--mpirun":
            return [r.choice([box.path("bin", "mpirun")] * 8 + ["", "nowhere"])]
        if option in ("--timeout", "--interval", "--lock-timeout"):
            return [number()]
        return []

    roll = r.random()
    if roll < 0.85:
        sub = r.choice(sorted(SUBCOMMANDS))
        valid = SUBCOMMANDS[sub] + ["--results", "--collbench", "--template", "--lock-timeout"]
    elif roll < 0.93:
        sub = r.choice(["pla", "sumbit", "frobnicate", "", "Plan", "run\n"])
        valid = []
    else:
        sub = r.choice(["--help", "--version", "-x", "--results"])
        valid = []
    hostile = ["--bogus", "--resluts", "--results", "-x", "--help", "--json", "--redo", "--local"]
    args = []
    # Mostly options the subcommand takes, each once, so that many cases get past the parser.
    for option in r.sample(valid, min(len(valid), r.choices([0, 1, 2, 3, 4], [2, 4, 3, 2, 1])[0])):
        args += [option, *value_of(option)]
    if not valid or r.random() < 0.15:
        args.append(r.choice(hostile))
    place = r.random()
    if place < 0.9:
        args.insert(r.randint(0, len(args)), r.choice(campaign_paths))
    elif place < 0.95:
        args += [camp, camp]
    return [sub] + args


VALUE_OPTIONS = ("--results", "--collbench", "--template", "--mpirun", "--timeout", "--interval",
                 "--lock-timeout")


def read_arguments(args):
    """The positional arguments and the option values of a command line, as the parser takes them."""
    positional, values = [], {}
    i = 1
    while i < len(args):
        a = args[i]
        if a in VALUE_OPTIONS and i + 1 < len(args):
            values[a] = args[i + 1]
            i += 2
            continue
        if a.startswith("--") and "=" in a:
            values[a.split("=", 1)[0]] = a.split("=", 1)[1]
        elif not a.startswith("-"):
            positional.append(a)
        i += 1
    return positional, values


# A stand-in mpirun that does what a successful collbench run does: writes a context and one
# result row to the --jsonl file it was given.
MEASURING_MPIRUN = textwrap.dedent("""\
    jsonl=""
    while [ $# -gt 0 ]; do
      if [ "$1" = --jsonl ]; then jsonl=$2; fi
      shift
    done
    [ -n "$jsonl" ] || exit 1
    printf '%s\\n' '{context}' > "$jsonl"
    printf '%s\\n' '{result}' >> "$jsonl"
    """).replace("{context}", CONTEXT_LINE).replace("{result}", RESULT_LINE)

DAMAGES = ["delete", "empty", "reverse", "shuffle", "cut", "garbage", "newer", "cut-then-run"]


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def damage(r, path, kind):
    with open(path, "rb") as f:
        data = f.read()
    lines = data.splitlines(keepends=True)
    if kind == "delete":
        os.remove(path)
        return
    if kind == "empty":
        data = b""
    elif kind == "reverse":
        data = b"".join(reversed(lines))
    elif kind == "shuffle":
        r.shuffle(lines)
        data = b"".join(lines)
    elif kind in ("cut", "cut-then-run"):
        data = data[:r.randint(max(0, len(data) - len(lines[-1])), len(data) - 2)]
    elif kind == "garbage":
        lines.insert(r.randrange(len(lines) + 1), b"this is not an event\n")
        data = b"".join(lines)
    elif kind == "newer":
        data += (b'{"event":"collected","run":"x","schema":{"name":"collbench-sweep-manifest",'
                 b'"version":2},"time":"2099-01-01T00:00:00.000Z"}\n')
    with open(path, "wb") as f:
        f.write(data)


class ManifestDamage(unittest.TestCase):
    """A finished local campaign whose manifest is then deleted, emptied, reordered, cut, given a
    line that is no event or one from a newer collbench-sweep: the results on disk are the truth,
    so a rerun never measures a finished run again or touches its file, a damaged manifest is
    bad input (exit 2, naming the line) and never exit 3, and a cut last line is continued on a
    fresh line so that the manifest stays readable."""

    def test_a_damaged_manifest_never_costs_a_result(self):
        seed = int(os.environ.get("COLLBENCH_PROPERTY_SEED", "1103"))
        cases = int(os.environ.get("COLLBENCH_MANIFEST_CASES", "24"))
        for index in range(cases):
            r = random.Random(f"manifest:{seed}:{index}")
            kind = DAMAGES[index % len(DAMAGES)]
            with self.subTest(case=index, damage=kind):
                box = Sandbox()
                try:
                    self.check(r, box, kind)
                finally:
                    box.close()

    def check(self, r, box, kind):
        box.stub("mpirun", MEASURING_MPIRUN)
        camp = box.path("in", "c.yaml")
        with open(camp, "w") as f:
            f.write(GOOD + "variants:\n  - name: a\n  - name: b\n")
        run = ["run", "--local", camp, "--results", "out", "--collbench",
               box.path("bin", "collbench"), "--mpirun", box.path("bin", "mpirun")]
        rc, out, err = box.run(run)
        self.assertEqual(rc, 0, f"{out}\n{err}")
        results = box.path("work", "out", "t")
        files = sorted(f for f in os.listdir(results) if f.endswith(".jsonl") and
                       f != "manifest.jsonl")
        self.assertEqual(len(files), 2, os.listdir(results))
        kept = {f: (os.stat(os.path.join(results, f)).st_mtime_ns,
                    read_bytes(os.path.join(results, f))) for f in files}
        manifest = os.path.join(results, "manifest.jsonl")
        damage(r, manifest, kind)
        where = f"damage {kind}, manifest {read_bytes(manifest) if os.path.exists(manifest) else None!r}"
        rc, out, err = box.run(run)
        self.assertIn(rc, (0, 2), f"{where}: exit {rc}\n{out}\n{err}")
        if rc == 2:
            self.assertEqual(len(err.strip().splitlines()), 1, f"{where}: {err}")
            self.assertIn("manifest.jsonl:", err, where)
        else:
            self.assertIn("0 to do", out, f"{where}: {out}")
        for f, (mtime, data) in kept.items():
            path = os.path.join(results, f)
            self.assertEqual(os.stat(path).st_mtime_ns, mtime, f"{where}: {f} was written again")
            self.assertEqual(read_bytes(path), data, where)
        if kind == "cut-then-run":
            # A run after the cut appends on a fresh line: status reads the manifest still.
            rc, out, err = box.run(["run", "--local", camp, "--results", "out", "--redo",
                                    "--collbench", box.path("bin", "collbench"), "--mpirun",
                                    box.path("bin", "mpirun")])
            self.assertEqual(rc, 0, f"{where}: {out}\n{err}")
            rc, out, err = box.run(["status", camp, "--results", "out", "--local"])
            self.assertEqual(rc, 0, f"{where}: status after the cut: {err}")


class Property(unittest.TestCase):
    def results_dir(self, box, args):
        """The campaign's results directory as the sweep itself reports it, or None."""
        positional, values = read_arguments(args)
        if len(positional) != 1:
            return None
        oracle = ["status", "--json", positional[0]]
        for name in ("--results", "--collbench", "--template"):
            if values.get(name):
                oracle += [name, values[name]]
        if "--local" in args:
            oracle.append("--local")
        rc, out, _ = box.run(oracle)
        if rc != 0:
            return None
        return os.path.realpath(json.loads(out)["results"])

    def check_case(self, seed, index):
        r = random.Random(f"{seed}:{index}")
        box = Sandbox()
        try:
            text = hostile_campaign(r)
            with open(box.path("in", "c.yaml"), "w", encoding="latin-1", newline="") as f:
                f.write(text)
            os.symlink(box.path("in", "c.yaml"), box.path("in", "link.yaml"))
            if r.random() < 0.15:
                # The trap: a manifest that is the campaign file.
                os.makedirs(box.path("work", "out", "t"))
                os.symlink(box.path("in", "c.yaml"), box.path("work", "out", "t", "manifest.jsonl"))
            args = hostile_arguments(r, box)
            stdout = r.choices(["pipe", "full", "closed"], [8, 1, 1])[0]
            where = (f"case {index} of seed {seed} (replay: COLLBENCH_PROPERTY_SEED={seed} "
                     f"COLLBENCH_PROPERTY_CASE={index}): args {args!r}, stdout {stdout}, campaign {text!r}")
            before = snapshot(box.root)
            try:
                rc, out, err = box.run(args, stdout=stdout)
            except subprocess.TimeoutExpired:
                self.fail(f"no answer within {CASE_TIMEOUT_S} s: {where}")
            self.assertGreaterEqual(rc, 0, f"killed by signal {-rc}: {where}\n{err}")
            self.assertLessEqual(rc, 3, f"exit code {rc}: {where}\n{err}")
            lines = err.strip().splitlines()
            if rc == 2:
                self.assertEqual(len(lines), 1, f"bad usage is one line on stderr: {where}\n{err}")
                self.assertTrue(lines[0].startswith("collbench-sweep: "), f"{where}\n{err}")
            if stdout != "pipe":
                self.assertIn(rc, (2, 3), f"a failed write to stdout is exit 3: {where}\n{err}")
            changed = changes(before, snapshot(box.root))
            if rc == 2:
                self.assertEqual(changed, [], f"exit 2 wrote files: {where}\n{err}")
                return
            if not changed:
                return
            allowed = self.results_dir(box, args)
            self.assertIsNotNone(allowed, f"wrote {changed} but no results directory: {where}\n{err}")
            for path in changed:
                real = os.path.realpath(path) if os.path.exists(path) else path
                inside = real == allowed or real.startswith(allowed + os.sep)
                # The directories above the results directory that it had to create.
                above = allowed.startswith(path + os.sep) and os.path.isdir(path)
                self.assertTrue(inside or above, f"wrote {path} outside {allowed}: {where}\n{err}")
        finally:
            box.close()

    def test_random_hostile_input_keeps_the_contract(self):
        seed = int(os.environ.get("COLLBENCH_PROPERTY_SEED", "1103"))
        cases = int(os.environ.get("COLLBENCH_PROPERTY_CASES", "400"))
        only = os.environ.get("COLLBENCH_PROPERTY_CASE")
        for index in ([int(only)] if only else range(cases)):
            with self.subTest(case=index):
                self.check_case(seed, index)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]], verbosity=2)
