#!/usr/bin/python3
"""`collbench doctor` itself: the real binary on the fixture trees of a p5, a p4d, a g5 and an
InfiniBand host (tests/doctor/fixtures/make_trees.py), with net plugins built for the tests in
NCCL's place, bad usage, write failures, and hosts emulated under mpirun (COLLBENCH_NODE) that
are set up differently.

The libraries are this machine's (NCCL, libfabric, no CUDA driver): assertions are about what
the fixture trees and the test plugins decide, and about findings by their check id.

Run one test: test_doctor_command.py Fixtures.test_a_port_down_fails_and_names_the_device
Environment (set by CTest): COLLBENCH, DOCTOR_PLUGIN_DIR, COLLBENCH_SOURCE_DIR.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

COLLBENCH = os.environ.get("COLLBENCH", "build/collbench")
SOURCE = os.environ.get("COLLBENCH_SOURCE_DIR",
                        os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
PLUGINS = os.environ.get("DOCTOR_PLUGIN_DIR", "build/tests/doctor/net-plugins")
TREES = os.path.join(SOURCE, "tests", "doctor", "fixtures", "make_trees.py")
SCHEMA = os.path.join(SOURCE, "results", "schema", "collbench-doctor.schema.json")

# What each fixture host has (the tree's own facts, independent of this machine).
HOSTS = {
    "p5": ("p5.48xlarge", "NVIDIA H100 80GB HBM3", 32, "efa"),
    "p4d": ("p4d.24xlarge", "NVIDIA A100-SXM4-40GB", 4, "efa"),
    "g5": ("g5.48xlarge", "NVIDIA A10G", 1, "efa"),
    "ib": ("", "NVIDIA H100 80GB HBM3", 8, "infiniband"),
}
# Per-host hardware checks that fail on a broken host; a healthy fixture has none of them.
HARDWARE_FAILURES = {"gpus.driver", "instance.gpus", "instance.efa", "nics.ports_down", "gpudirect.rdma"}


def clean_env(**extra):
    """This process's environment without NCCL_/FI_/OFI_ settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NCCL_", "FI_", "OFI_NCCL_", "COLLBENCH_NODE"))}
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    env.update(extra)
    return env


def doctor(args, env=None, stdout=subprocess.PIPE, timeout=60):
    return subprocess.run([COLLBENCH, "doctor"] + args, stdout=stdout, stderr=subprocess.PIPE,
                          text=True, env=env or clean_env(), timeout=timeout)


def checks(report, severity=None):
    return {f["check"] for f in report["findings"] if severity in (None, f["severity"])}


def finding(report, check):
    found = [f for f in report["findings"] if f["check"] == check]
    return found[0] if found else None


class Trees(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="collbench-doctor-")

    def tearDown(self):
        self.dir.cleanup()

    def tree(self, host, *options):
        out = os.path.join(self.dir.name, "-".join((host,) + options).replace("/", "_"))
        if not os.path.exists(out):
            subprocess.run([sys.executable, TREES, host, out] + list(options), check=True)
        return out

    def empty_root(self):
        root = os.path.join(self.dir.name, "empty")
        os.makedirs(root, exist_ok=True)
        return root

    def json_of(self, args, env=None, code=None):
        p = doctor(args + ["--json"], env)
        if code is not None:
            self.assertEqual(p.returncode, code, p.stderr + p.stdout[-2000:])
        try:
            return json.loads(p.stdout), p
        except json.JSONDecodeError as e:
            self.fail(f"collbench doctor {' '.join(args)} --json exited {p.returncode} with no "
                      f"JSON document ({e}); stdout: {p.stdout[-2000:]!r}; stderr: {p.stderr[-4000:]}")


class Fixtures(Trees):
    def test_each_fixture_host_reports_its_hardware(self):
        for name, (instance, model, nics, kind) in HOSTS.items():
            with self.subTest(host=name):
                report, _ = self.json_of(["--sysfs-root", self.tree(name)])
                self.assertEqual(len(report["hosts"]), 1)
                host = report["hosts"][0]
                self.assertEqual(host["instance_type"], instance)
                self.assertEqual(len(host["gpus"]), 8)
                self.assertEqual({g["model"] for g in host["gpus"]}, {model})
                self.assertEqual(len(host["nics"]), nics)
                self.assertEqual({n["kind"] for n in host["nics"]}, {kind})
                self.assertTrue(all(p["state"] == "ACTIVE" for n in host["nics"] for p in n["ports"]))
                self.assertEqual(len(host["affinities"]), 8)
                self.assertEqual(len(host["ranks"]), 1)
                self.assertFalse(checks(report, "failure") & HARDWARE_FAILURES, report["findings"])
                self.assertEqual(finding(report, "host.summary")["severity"], "ok")

    def test_a_port_down_fails_and_names_the_device(self):
        healthy, _ = self.json_of(["--sysfs-root", self.tree("p5")])
        device = healthy["hosts"][0]["nics"][5]["name"]
        root = self.tree("p5", "--port-down", device)
        report, p = self.json_of(["--sysfs-root", root], code=1)
        down = finding(report, "nics.ports_down")
        self.assertEqual(down["severity"], "failure")
        self.assertIn(device, down["message"])
        table = doctor(["--sysfs-root", root])
        self.assertEqual(table.returncode, 1, f"stdout: {table.stdout[-2000:]}\nstderr: {table.stderr[-4000:]}")
        self.assertTrue(any(l.startswith("FAILURE") and "nics.ports_down" in l and device in l
                            for l in table.stdout.splitlines()), table.stdout)
        # Fewer GPUs than a p5 has, and no way for the NICs to reach GPU memory.
        report, _ = self.json_of(["--sysfs-root", self.tree("p5", "--gpus", "6", "--no-peermem",
                                                            "--module", "proprietary")], code=1)
        self.assertEqual(finding(report, "instance.gpus")["severity"], "failure")
        self.assertIn("6", finding(report, "instance.gpus")["message"])
        self.assertEqual(finding(report, "gpudirect.rdma")["severity"], "failure")

    def test_json_validates_against_the_schema(self):
        try:
            import jsonschema
        except ImportError:
            self.skipTest("python3-jsonschema is not installed")
        with open(SCHEMA) as f:
            schema = json.load(f)
        for name in HOSTS:
            report, _ = self.json_of(["--sysfs-root", self.tree(name)])
            jsonschema.Draft202012Validator(schema).validate(report)
        self.assertEqual(report["schema"], {"name": "collbench-doctor", "version": 1})

    def test_strict_fails_on_warnings(self):
        root = self.empty_root()  # no GPU, no NIC: nothing to fail
        self.assertEqual(doctor(["--sysfs-root", root]).returncode, 0)
        self.assertEqual(doctor(["--sysfs-root", root, "--strict"]).returncode, 0)
        verbose = clean_env(NCCL_DEBUG="INFO")  # a warning: NCCL logs every line
        report, _ = self.json_of(["--sysfs-root", root], verbose, code=0)
        self.assertEqual(finding(report, "env.NCCL_DEBUG.verbose")["severity"], "warning")
        self.assertEqual(doctor(["--sysfs-root", root, "--strict"], verbose).returncode, 1)


class Plugins(Trees):
    def test_the_plugin_nccl_would_load_is_named_with_its_version(self):
        env = clean_env(LD_LIBRARY_PATH=PLUGINS, NCCL_NET_PLUGIN="fakeofi")
        report, _ = self.json_of(["--sysfs-root", self.tree("p5")], env)
        plugin = next(l for l in report["hosts"][0]["libraries"] if l["name"] == "net_plugin")
        self.assertTrue(plugin["found"])
        self.assertEqual(plugin["path"], os.path.join(PLUGINS, "libnccl-net-fakeofi.so"))
        self.assertEqual(plugin["version"], "1.14.0")
        self.assertEqual(plugin["details"]["network"], "Libfabric")
        self.assertNotIn("net_plugin.missing", checks(report))
        # The same p5 without the plugin: NCCL would fall back to sockets.
        report, _ = self.json_of(["--sysfs-root", self.tree("p5")], clean_env(NCCL_NET_PLUGIN="absent"))
        self.assertEqual(finding(report, "net_plugin.missing")["severity"], "failure")
        # NCCL_NET names the network the newer plugins register; the old one registers
        # "AWS Libfabric" only, so NCCL would find no network of that name.
        env = clean_env(LD_LIBRARY_PATH=PLUGINS, NCCL_NET_PLUGIN="fakeold", NCCL_NET="Libfabric")
        report, _ = self.json_of(["--sysfs-root", self.empty_root()], env, code=1)
        self.assertEqual(finding(report, "env.NCCL_NET.unknown")["severity"], "failure")
        env["NCCL_NET_PLUGIN"] = "fakeofi"
        report, _ = self.json_of(["--sysfs-root", self.empty_root()], env)
        self.assertIsNone(finding(report, "env.NCCL_NET.unknown"))

    def test_the_two_commonest_ways_efa_goes_unused_are_named_on_a_p5(self):
        # With the plugin loading, NCCL_NET=Socket and FI_PROVIDER=tcp each have a finding of
        # their own, also beside each other and beside a broken tree's failures.
        root = self.tree("p5", "--no-peermem")
        for name, value, rule in (("NCCL_NET", "Socket", "env.NCCL_NET.bypasses_efa"),
                                  ("FI_PROVIDER", "tcp", "env.FI_PROVIDER.excludes_efa")):
            env = clean_env(LD_LIBRARY_PATH=PLUGINS, NCCL_NET_PLUGIN="fakeofi", **{name: value})
            report, _ = self.json_of(["--sysfs-root", root], env, code=1)
            self.assertEqual(finding(report, rule)["severity"], "failure", checks(report))
            self.assertIn(f"{name}={value} (environment)", finding(report, rule)["message"])
        env = clean_env(LD_LIBRARY_PATH=PLUGINS, NCCL_NET_PLUGIN="fakeofi", NCCL_NET="Socket",
                        FI_PROVIDER="tcp")
        report, _ = self.json_of(["--sysfs-root", root], env, code=1)
        self.assertIsNotNone(finding(report, "env.NCCL_NET.bypasses_efa"))
        self.assertIsNotNone(finding(report, "env.FI_PROVIDER.excludes_efa"))

    def test_the_libraries_collbench_loaded_against_the_clusters(self):
        # A p5 with the EFA installer's libfabric and Open MPI: collbench (built against this
        # machine's, as a build on a head node against the distribution's would be) loaded other
        # files. The libfabric is a failure on an EFA host, the MPI a warning; each names the fix.
        root = self.tree("p5", "--efa-installer")
        env = clean_env(LD_LIBRARY_PATH=PLUGINS, NCCL_NET_PLUGIN="fakeofi")
        report, _ = self.json_of(["--sysfs-root", root], env, code=1)
        fabric = finding(report, "libraries.libfabric_not_the_clusters")
        self.assertEqual(fabric["severity"], "failure", checks(report))
        self.assertIn("not the cluster's /opt/amazon/efa/lib/libfabric.so.1", fabric["message"])
        self.assertIn("LIBFABRIC_HOME=/opt/amazon/efa", fabric["reason"])
        libraries = {l["name"]: l for l in report["hosts"][0]["libraries"]}
        if libraries["mpi"]["found"]:
            mpi = finding(report, "libraries.mpi_not_the_clusters")
            self.assertEqual(mpi["severity"], "warning", checks(report))
            self.assertIn("MPI_HOME=/opt/amazon/openmpi", mpi["reason"])
        # The cluster's copy is the file collbench loaded: nothing to say.
        loaded = libraries["libfabric"]["path"]
        copy = os.path.join(root, "opt/amazon/efa/lib/libfabric.so.1")
        os.remove(copy)
        os.symlink(os.path.realpath(loaded), copy)
        report, _ = self.json_of(["--sysfs-root", root], env)
        self.assertIsNone(finding(report, "libraries.libfabric_not_the_clusters"))
        # Without the installer's tree there is no cluster copy to compare with.
        report, _ = self.json_of(["--sysfs-root", self.tree("p5")], env)
        self.assertIsNone(finding(report, "libraries.libfabric_not_the_clusters"))
        self.assertIsNone(finding(report, "libraries.mpi_not_the_clusters"))

    def test_a_plugin_that_cannot_load_is_a_failure(self):
        env = clean_env(LD_LIBRARY_PATH=PLUGINS, NCCL_NET_PLUGIN="broken")
        report, p = self.json_of(["--sysfs-root", self.empty_root()], env, code=1)
        load = finding(report, "libraries.net_plugin_load")
        self.assertEqual(load["severity"], "failure")
        self.assertIn("libdoctor_missing_dependency.so", load["message"])
        # With the dependency's folder on the path it loads.
        env["LD_LIBRARY_PATH"] = PLUGINS + ":" + os.environ.get("DOCTOR_HIDDEN_DIR", "")
        report, _ = self.json_of(["--sysfs-root", self.empty_root()], env)
        self.assertIsNone(finding(report, "libraries.net_plugin_load"))


class Usage(Trees):
    def test_bad_options_exit_2_with_one_line(self):
        cases = [
            (["--bogus"], "--bogus"),
            (["--sysfs-root", os.path.join(self.dir.name, "absent")], "--sysfs-root"),
            (["--timeout", "-1"], "--timeout"),
            (["--json-file", self.dir.name], "--json-file"),
            (["--json-file", "/dev/null"], "--json-file"),
        ]
        for args, mention in cases:
            with self.subTest(args=args):
                p = doctor(args)
                self.assertEqual(p.returncode, 2, p.stderr)
                lines = p.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertTrue(lines[0].startswith("collbench: doctor: "), lines[0])
                self.assertIn(mention, lines[0])
                self.assertEqual(p.stdout, "")
        self.assertEqual(os.listdir(self.dir.name), [])  # nothing written
        help_text = doctor(["--help"])
        self.assertEqual(help_text.returncode, 0)
        self.assertIn("--sysfs-root", help_text.stdout)

    def test_json_file_is_written_whole_or_not_at_all(self):
        root = self.tree("g5")
        out = os.path.join(self.dir.name, "doctor.json")
        p = doctor(["--sysfs-root", root, "--json-file", out, "--json"])
        with open(out) as f:
            written = json.load(f)
        self.assertEqual(written, json.loads(p.stdout))
        self.assertFalse(os.path.exists(out + ".partial"))
        # A folder that does not exist: exit 3, one line, nothing left behind.
        missing = os.path.join(self.dir.name, "no", "doctor.json")
        p = doctor(["--sysfs-root", root, "--json-file", missing])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertFalse(os.path.exists(os.path.dirname(missing)))

    def test_write_failures_exit_3(self):
        with open("/dev/full", "w") as full:
            p = doctor(["--sysfs-root", self.empty_root()], stdout=full)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("stdout", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


class Hosts(Trees):
    def test_emulated_hosts_that_differ_are_named(self):
        # 5 ranks on 3 emulated hosts (n0: ranks 0-1, n1: 2-3, n2: 4); n2 sets another
        # NCCL_BUFFSIZE and lacks the net plugin the others find.
        out = os.path.join(self.dir.name, "doctor.json")
        wrapper = ('r=$OMPI_COMM_WORLD_RANK; export COLLBENCH_NODE=n$((r / 2)); '
                   'if [ "$r" = 4 ]; then export NCCL_BUFFSIZE=4194304 NCCL_NET_PLUGIN=absent; fi; '
                   'exec "$0" "$@"')
        env = clean_env(LD_LIBRARY_PATH=PLUGINS, NCCL_NET_PLUGIN="fakeofi", NCCL_BUFFSIZE="8388608")
        cmd = ["mpirun", "-np", "5", "--oversubscribe", "--mca", "btl", "self,vader,tcp",
               "-x", "LD_LIBRARY_PATH", "-x", "NCCL_NET_PLUGIN", "-x", "NCCL_BUFFSIZE",
               "sh", "-c", wrapper, COLLBENCH, "doctor", "--sysfs-root", self.empty_root(),
               "--json-file", out]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 1, p.stderr + p.stdout)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual([h["host"] for h in report["hosts"]], ["n0", "n1", "n2"])
        self.assertEqual([[r["rank"] for r in h["ranks"]] for h in report["hosts"]],
                         [[0, 1], [2, 3], [4]])
        self.assertEqual([r["local_rank"] for r in report["hosts"][0]["ranks"]], [0, 1])
        self.assertEqual(report["hosts"][2]["env"]["NCCL_BUFFSIZE"], "4194304")
        named = [f for f in report["findings"] if "NCCL_BUFFSIZE" in f["message"]]
        self.assertTrue(named and all(f["hosts"] == ["n2"] for f in named), named)
        # The value the others have, with their names.
        self.assertEqual(named[0]["message"], "NCCL_BUFFSIZE: 8388608 on n[0-1]; 4194304 on n2")
        plugin = [f for f in report["findings"] if f["hosts"] == ["n2"] and f["severity"] == "failure"
                  and "net_plugin" in f["check"]]
        self.assertTrue(plugin, report["findings"])
        self.assertTrue(any("NCCL_BUFFSIZE" in l and "n2" in l for l in p.stdout.splitlines()), p.stdout)


if __name__ == "__main__":
    unittest.main()
