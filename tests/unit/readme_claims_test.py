#!/usr/bin/python3
"""The README's statements about setup, the build and the tests, held to what the Makefile,
scripts/setup, CMake and CTest do, so that none of them goes stale unnoticed.

readme_claims_test.py SOURCE_DIR BUILD_DIR
- `make demo` builds the three tools alone, configured without the tests, after `scripts/setup
  demo`; `make test` builds everything after `scripts/setup test`, then runs CTest (make -n).
- The purposes of scripts/setup nest (build in demo in test); the demo needs no GoogleTest, Slurm,
  munge or chromium; where a Slurm is configured (here: an sinfo on PATH that no package
  installed) the tests' purpose holds no Slurm or munge (--dry-run installs nothing).
- The CUDA families the README lists are the ones cmake/CollbenchDependencies.cmake builds.
- The label table of the README's testing section lists every CTest label of the build, and no
  other (the stand-in's label lives in its own build directory; `gpu` needs CUDA and NCCL).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE, BUILD = sys.argv[1], sys.argv[2]
del sys.argv[1:3]


def readme():
    with open(os.path.join(SOURCE, "README.md"), encoding="utf-8") as f:
        return f.read()


def dry_run(purpose, path=None, extra_env=None):
    env = {k: v for k, v in os.environ.items() if k not in ("MPI_HOME", "HPCX_MPI_DIR")}
    env.update(extra_env or {})
    if path:
        env["PATH"] = path + os.pathsep + env["PATH"]
    r = subprocess.run([os.path.join(SOURCE, "scripts", "setup"), "--dry-run", purpose],
                       capture_output=True, text=True, env=env, timeout=60)
    if r.returncode != 0:
        raise AssertionError(f"setup --dry-run {purpose}: {r.stderr}")
    line = [l for l in r.stdout.splitlines() if " needs: " in l]
    if not line:
        raise unittest.SkipTest(f"no package list (not a Debian system?): {r.stdout}")
    return r.stdout, set(line[-1].split(" needs: ", 1)[1].split(";", 1)[0].split())


class Makefile(unittest.TestCase):
    def commands(self, target):
        with tempfile.TemporaryDirectory() as build:
            r = subprocess.run(["make", "-n", "-C", SOURCE, target, f"BUILD={build}"],
                               capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_the_demo_builds_the_three_tools_alone(self):
        out = self.commands("demo")
        self.assertIn("scripts/setup demo", out)
        self.assertIn("-DCOLLBENCH_BUILD_TESTS=OFF", out)
        self.assertIn("-DCOLLBENCH_BUILD_BENCHMARKS=OFF", out)
        self.assertRegex(out, r"--target collbench collbench-sweep collbench-report")
        self.assertNotIn("scripts/setup test", out)
        self.assertIn("scripts/demo", out)

    def test_the_tests_build_everything_then_run_ctest(self):
        out = self.commands("test")
        self.assertIn("scripts/setup test", out)
        self.assertIn("-DCOLLBENCH_BUILD_TESTS=ON", out)
        self.assertNotIn("--target", out)
        self.assertIn("ctest", out)

    def test_the_readme_opens_with_both_commands(self):
        head = readme().splitlines()[:40]
        self.assertTrue(any(l.startswith("make demo") for l in head))
        self.assertTrue(any(l.startswith("make test") for l in head))


class Setup(unittest.TestCase):
    def test_purposes_nest_and_the_demo_needs_no_test_packages(self):
        _, build = dry_run("build")
        _, demo = dry_run("demo")
        _, test = dry_run("test")
        self.assertLess(build, demo)
        self.assertLess(demo, test)
        for package in ("libgtest-dev", "libbenchmark-dev", "chromium", "slurm-wlm", "munge"):
            self.assertNotIn(package, demo)
            self.assertIn(package, test)

    def test_no_slurm_or_munge_where_a_slurm_is_configured(self):
        with tempfile.TemporaryDirectory() as bin_dir:
            sinfo = os.path.join(bin_dir, "sinfo")
            with open(sinfo, "w") as f:
                f.write("#!/bin/sh\necho 'PARTITION AVAIL'\n")
            os.chmod(sinfo, 0o755)
            out, test = dry_run("test", bin_dir)
        self.assertIn("a Slurm is already configured here", out)
        self.assertIn(sinfo, out)
        for package in ("slurm-wlm", "slurmctld", "slurmd", "slurm-client", "munge"):
            self.assertNotIn(package, test)
        self.assertIn("libgtest-dev", test)

    def test_no_second_mpi_where_the_cluster_has_one(self):
        # The places CMake looks first (cmake/CollbenchClusterLibraries.cmake).
        for name in ("MPI_HOME", "HPCX_MPI_DIR"):
            with self.subTest(variable=name), tempfile.TemporaryDirectory() as prefix:
                os.makedirs(os.path.join(prefix, "bin"))
                mpicc = os.path.join(prefix, "bin", "mpicc")
                with open(mpicc, "w") as f:
                    f.write("#!/bin/sh\n")
                os.chmod(mpicc, 0o755)
                out, demo = dry_run("demo", extra_env={name: prefix})
                self.assertIn("using the cluster's MPI", out)
                self.assertNotIn("openmpi-bin", demo)
                self.assertNotIn("libopenmpi-dev", demo)

    def test_a_purpose_is_required(self):
        r = subprocess.run([os.path.join(SOURCE, "scripts", "setup")], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("give a purpose", r.stderr)


class Build(unittest.TestCase):
    def test_the_cuda_families_are_the_ones_cmake_builds(self):
        with open(os.path.join(SOURCE, "cmake", "CollbenchDependencies.cmake")) as f:
            families = re.search(r"set\(COLLBENCH_CUDA_FAMILIES ([0-9 ]+)\)", f.read()).group(1)
        quoted = re.search(r"CUDA families: ([0-9 ]+)", readme().replace("\n", " "))
        self.assertIsNotNone(quoted, "the README names the CUDA families")
        self.assertEqual(quoted.group(1).split(), families.split())
        self.assertNotIn("sm_90` plus `compute_90", readme())


class Labels(unittest.TestCase):
    def test_the_readme_table_lists_every_label_and_no_other(self):
        # In a copy of the build's test lists: ctest writes its log in the directory it runs in,
        # and this test runs inside `make test`, whose log must stay the suite's.
        with tempfile.TemporaryDirectory() as copy:
            for folder, _, files in os.walk(BUILD):
                if "CTestTestfile.cmake" in files:
                    target = os.path.join(copy, os.path.relpath(folder, BUILD))
                    os.makedirs(target, exist_ok=True)
                    shutil.copy(os.path.join(folder, "CTestTestfile.cmake"), target)
            r = subprocess.run(["ctest", "--print-labels"], cwd=copy, capture_output=True,
                               text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        labels = {l.strip() for l in r.stdout.splitlines()[1:] if l.startswith("  ")}
        self.assertTrue(labels, r.stdout)
        text = readme()
        section = text[text.index("## Testing"):text.index("## Benchmarks of collbench itself")]
        listed = set()
        for row in section.splitlines():
            if row.startswith("| `"):
                listed.update(re.findall(r"`([a-z-]+)`", row.split("|")[1]))
        self.assertLessEqual(labels, listed, "labels the README does not describe")
        # A build without CUDA and NCCL has no GPU tests, and no stand-in to run them on.
        self.assertLessEqual(listed - labels, {"gpu", "gpu-stand-in"},
                             "labels the README describes, not found")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:], verbosity=2)
