#!/usr/bin/python3
"""The build finds a cluster's own MPI, NCCL and libfabric (cmake/CollbenchClusterLibraries.cmake)
and says where each came from.

cluster_libraries_test.py SOURCE_DIR
- A tree laid out as the EFA installer and a source build of NCCL lay a cluster out
  (<root>/opt/amazon/openmpi, <root>/opt/amazon/efa, <root>/opt/nccl/build), holding this
  machine's Open MPI, libfabric and NCCL through links, with COLLBENCH_CLUSTER_ROOT=<root>
  standing for /: each library is found there, and configure's line names it and why.
- MPI_HOME and LIBFABRIC_HOME in the environment and -DNCCL_HOME win over that tree; a
  libfabric chosen beside an existing /opt/amazon/efa is warned about, as is an mpirun first on
  PATH that is not the MPI built against.
- An MPI_HOME that holds no MPI stops configure with one line naming it.
Only configure runs (no build). Skipped (77) where this machine lacks Open MPI or libfabric.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = sys.argv[1]
del sys.argv[1]
CUDA_NCCL = "/usr/local/cuda/include/nccl.h"


def real(path):
    return os.path.realpath(path)


def link(target, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)


def mpi_tree(prefix, mpirun=None):
    """An Open MPI installation at prefix: this machine's wrapper and launcher, linked."""
    link(real(shutil.which("mpicc")), os.path.join(prefix, "bin", "mpicc"))
    link(mpirun or real(shutil.which("mpirun")), os.path.join(prefix, "bin", "mpirun"))


def libfabric_tree(prefix):
    link("/usr/include/rdma", os.path.join(prefix, "include", "rdma"))
    link(real(LIBFABRIC), os.path.join(prefix, "lib", "libfabric.so"))


def nccl_tree(prefix):
    link(real(CUDA_NCCL), os.path.join(prefix, "include", "nccl.h"))
    lib = os.path.join(os.path.dirname(os.path.dirname(real(CUDA_NCCL))), "lib64", "libnccl.so")
    link(real(lib), os.path.join(prefix, "lib", "libnccl.so"))


def find_libfabric():
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"):
        if os.path.exists(os.path.join(d, "libfabric.so")):
            return os.path.join(d, "libfabric.so")
    return None


LIBFABRIC = find_libfabric()


class ClusterLibraries(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="collbench-cluster-libraries-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)
        self.root = os.path.join(self.dir, "root")
        mpi_tree(os.path.join(self.root, "opt/amazon/openmpi"))
        libfabric_tree(os.path.join(self.root, "opt/amazon/efa"))
        self.cuda = os.path.exists(CUDA_NCCL) and os.path.exists("/usr/local/cuda/bin/nvcc")
        if self.cuda:
            nccl_tree(os.path.join(self.root, "opt/nccl/build"))

    def configure(self, *args, env=None, check=True):
        e = {k: v for k, v in os.environ.items()
             if k not in ("MPI_HOME", "NCCL_HOME", "LIBFABRIC_HOME", "HPCX_MPI_DIR")}
        e.update(env or {})
        build = tempfile.mkdtemp(dir=self.dir, prefix="build-")
        r = subprocess.run(["cmake", "-S", SOURCE, "-B", build, "-G", "Ninja",
                            "-DCOLLBENCH_BUILD_TESTS=OFF", "-DCOLLBENCH_BUILD_BENCHMARKS=OFF",
                            f"-DCOLLBENCH_CLUSTER_ROOT={self.root}",
                            f"-DCOLLBENCH_WITH_CUDA={'AUTO' if self.cuda else 'OFF'}", *args],
                           capture_output=True, text=True, env=e, timeout=600)
        if check:
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r

    def line(self, out, library):
        found = [l for l in out.splitlines() if l.startswith(f"-- collbench: {library}: ")]
        self.assertEqual(len(found), 1, out)
        return found[0]

    def test_the_efa_installers_layout_is_found_and_said(self):
        r = self.configure()
        mpi = self.line(r.stdout, "MPI")
        self.assertIn(f"{self.root}/opt/amazon/openmpi/bin/mpicc (the EFA installer's Open MPI)", mpi)
        self.assertRegex(mpi, r"MPI: Open MPI \d+\.\d+")
        ofi = self.line(r.stdout, "libfabric")
        self.assertRegex(ofi, r"libfabric: \d+\.\d+, " + re.escape(
            f"{self.root}/opt/amazon/efa/lib/libfabric.so (the EFA installer's libfabric"))
        if self.cuda:
            nccl = self.line(r.stdout, "NCCL")
            self.assertIn(f"{self.root}/opt/nccl/build/lib/libnccl.so (NCCL built from source", nccl)
        # The tree's mpirun is this machine's, first on PATH too: nothing to warn about.
        self.assertNotIn("mpirun first on PATH", r.stderr)
        self.assertNotIn("may lack the efa provider", r.stderr)

    def test_the_homes_win_and_mix_ups_are_warned_about(self):
        other = os.path.join(self.dir, "other")
        # An MPI whose mpirun is not the one first on PATH.
        fake_mpirun = os.path.join(self.dir, "elsewhere", "mpirun")
        os.makedirs(os.path.dirname(fake_mpirun))
        with open(fake_mpirun, "w") as f:
            f.write("#!/bin/sh\nexit 1\n")
        os.chmod(fake_mpirun, 0o755)
        mpi_tree(os.path.join(other, "mpi"), mpirun=fake_mpirun)
        libfabric_tree(os.path.join(other, "ofi"))
        args = []
        if self.cuda:
            nccl_tree(os.path.join(other, "nccl"))
            args.append(f"-DNCCL_HOME={other}/nccl")
        r = self.configure(*args, env={"MPI_HOME": f"{other}/mpi", "LIBFABRIC_HOME": f"{other}/ofi"})
        self.assertIn(f"{other}/mpi/bin/mpicc (MPI_HOME in the environment)", self.line(r.stdout, "MPI"))
        self.assertIn(f"{other}/ofi/lib/libfabric.so (LIBFABRIC_HOME in the environment)",
                      self.line(r.stdout, "libfabric"))
        if self.cuda:
            self.assertIn(f"{other}/nccl/lib/libnccl.so (NCCL_HOME given to CMake)",
                          self.line(r.stdout, "NCCL"))
        warnings = re.sub(r"\s+", " ", r.stderr)
        self.assertIn(f"built against the MPI of {other}/mpi/bin, but the mpirun first on PATH is",
                      warnings)
        self.assertIn(f"this host has the EFA installer's libfabric ({self.root}/opt/amazon/efa)",
                      warnings)

    def test_a_home_without_the_library_is_one_line(self):
        r = self.configure(env={"MPI_HOME": f"{self.dir}/nothing"}, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(f"MPI_HOME={self.dir}/nothing holds no bin/mpicc", re.sub(r"\s+", " ", r.stderr))


if __name__ == "__main__":
    if not shutil.which("mpicc") or not shutil.which("mpirun") or not LIBFABRIC:
        print("skipped: needs Open MPI and libfabric (scripts/setup test)")
        sys.exit(77)
    unittest.main(verbosity=2)
