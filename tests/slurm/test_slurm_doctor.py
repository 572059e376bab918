#!/usr/bin/python3
"""COLLBENCH_DOCTOR in slurm/collbench.sbatch, outside Slurm (SLURM_JOB_ID set by hand) with
stand-in srun, mpirun and collbench programs that record how they were called: off runs no
doctor; check runs it one task per node and measures whatever it finds; require and strict stop
the job with exit status 3 when it fails or cannot run; strict passes --strict; an unknown value
is bad usage (2). The real doctor is not needed: the stand-in's exit status is chosen per test.

Run one test: test_slurm_doctor.py Doctor.test_off_runs_no_doctor
"""

import json
import os
import shutil
import subprocess
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("COLLBENCH_SOURCE_DIR", os.path.abspath(os.path.join(HERE, "../..")))
TEMPLATE = os.path.join(SOURCE, "slurm", "collbench.sbatch")

# srun and mpirun stand-ins: record argv (one JSON list a line), drop the launcher's own options
# and run the program on this host, once (the ranks are not what these tests are about).
LAUNCHER = """\
#!/usr/bin/python3
import json, os, sys
args = sys.argv[1:]
if args == ["--version"]:
    print(os.path.basename(sys.argv[0]) + " (stand-in) 0")
    sys.exit(0)
with open(os.environ["LAUNCH_LOG"], "a") as f:
    f.write(json.dumps([os.path.basename(sys.argv[0]), *args]) + "\\n")
while args and args[0].startswith("-"):
    option = args.pop(0)
    if option in ("-np", "--map-by", "--bind-to"):
        args.pop(0)
os.execvp(args[0], args)
"""

# The collbench stand-in: `doctor` prints a table, writes --json-file and exits with
# FAKE_DOCTOR_EXIT; anything else is the benchmark, which writes one result row to --jsonl.
COLLBENCH = """\
#!/usr/bin/python3
import json, os, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("collbench (stand-in) 0")
    sys.exit(0)
with open(os.environ["CALL_LOG"], "a") as f:
    f.write(json.dumps(args) + "\\n")
if args[0] == "doctor":
    code = int(os.environ.get("FAKE_DOCTOR_EXIT", "0"))
    print("HOST   CHECK        STATUS")
    print("node1  gpudirect    " + ("FAIL" if code == 1 else "ok"))
    if code >= 2:
        sys.stderr.write("collbench: doctor: cannot collect the facts\\n")
        sys.exit(code)
    path = args[args.index("--json-file") + 1]
    with open(path, "w") as f:
        json.dump({"strict": "--strict" in args, "exit_status": code}, f)
    sys.exit(code)
jsonl = args[args.index("--jsonl") + 1]
with open(jsonl, "a") as f:
    f.write(json.dumps({"record": "result", "wrong": 0}) + "\\n")
"""


class Doctor(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="collbench-doctor-template-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.bin = os.path.join(self.dir, "bin")
        os.makedirs(self.bin)
        for name, text in (("srun", LAUNCHER), ("mpirun", LAUNCHER), ("collbench", COLLBENCH)):
            path = os.path.join(self.bin, name)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o755)
        self.job_dir = os.path.join(self.dir, "job")
        self.launch_log = os.path.join(self.dir, "launch.log")
        self.call_log = os.path.join(self.dir, "calls.log")

    def run_template(self, doctor=None, doctor_exit=0, **settings):
        """Runs the template as a 2-node job; returns (exit code, exit_status or None, output)."""
        env = dict(os.environ, SLURM_JOB_ID="42", SLURM_JOB_NUM_NODES="2", COLLBENCH_TASKS_PER_NODE="4",
                   COLLBENCH_BIN=os.path.join(self.bin, "collbench"),
                   COLLBENCH_JSONL=os.path.join(self.job_dir, "collbench.jsonl.raw"),
                   PATH=self.bin + ":/usr/bin:/bin", LAUNCH_LOG=self.launch_log, CALL_LOG=self.call_log,
                   FAKE_DOCTOR_EXIT=str(doctor_exit))
        for name in ("COLLBENCH_SITE_ENV", "COLLBENCH_ENV_FILE", "COLLBENCH_LAUNCHER", "COLLBENCH_DOCTOR",
                     "COLLBENCH_CONTAINER_IMAGE", "COLLBENCH_CONTAINER_MOUNTS", "COLLBENCH_SRUN_MPI"):
            env.pop(name, None)
        if doctor is not None:
            env["COLLBENCH_DOCTOR"] = doctor
        env.update(settings)
        p = subprocess.run(["bash", TEMPLATE, "all_reduce", "-b", "8"], env=env, capture_output=True, text=True,
                           timeout=60)
        status_file = os.path.join(self.job_dir, "exit_status")
        status = None
        if os.path.exists(status_file):
            with open(status_file) as f:
                status = int(f.read())
        return p.returncode, status, p.stdout + p.stderr

    def calls(self):
        """collbench's calls: its argument lists, in order."""
        if not os.path.exists(self.call_log):
            return []
        with open(self.call_log) as f:
            return [json.loads(line) for line in f]

    def launches(self):
        """The launcher calls that started collbench (not the per-node probe)."""
        if not os.path.exists(self.launch_log):
            return []
        with open(self.launch_log) as f:
            calls = [json.loads(line) for line in f]
        return [c for c in calls if os.path.join(self.bin, "collbench") in c]

    def doctor_json(self):
        return os.path.join(self.job_dir, "doctor.json")

    def assert_benchmark_ran(self, out):
        self.assertEqual([c[0] for c in self.calls()][-1], "all_reduce", out)
        self.assertIn("# collbench exited with status 0", out)

    def test_off_runs_no_doctor(self):
        for value in (None, "", "off"):
            with self.subTest(value=value):
                shutil.rmtree(self.job_dir, ignore_errors=True)
                if os.path.exists(self.call_log):
                    os.remove(self.call_log)
                rc, status, out = self.run_template(doctor=value, doctor_exit=1)
                self.assertEqual((rc, status), (0, 0), out)
                self.assertEqual([c[0] for c in self.calls()], ["all_reduce"], out)
                self.assertNotIn("# doctor:", out)
                self.assertFalse(os.path.exists(self.doctor_json()))

    def test_check_with_a_failing_doctor_measures_anyway(self):
        rc, status, out = self.run_template(doctor="check", doctor_exit=1)
        self.assertEqual((rc, status), (0, 0), out)
        self.assertEqual([c[0] for c in self.calls()], ["doctor", "all_reduce"], out)
        self.assertEqual(self.calls()[0], ["doctor", "--json-file", self.doctor_json()])
        self.assertTrue(os.path.exists(self.doctor_json()))
        self.assert_benchmark_ran(out)
        # One task per node, under the benchmark's --mpi, before the benchmark's launch.
        doctor_launch, bench_launch = self.launches()
        # --kill-on-bad-exit=0: the doctor's ranks all exit 1 on a problem, and the first to exit
        # must not have the others killed (srun would then report 137, not 1).
        self.assertEqual(doctor_launch[:6], ["srun", "--mpi=pmix", "--kill-on-bad-exit=0", "--nodes=2",
                                             "--ntasks=2", "--ntasks-per-node=1"])
        self.assertIn("--ntasks=8", bench_launch)
        # The table under the "# doctor:" heading, in the header, then the warning.
        heading = out.index("# doctor: srun")
        self.assertLess(heading, out.index("#   node1  gpudirect    FAIL"))
        self.assertLess(out.index("# command:"), heading)
        self.assertIn(f"# warning: the doctor found a problem on the nodes (exit status 1; see {self.doctor_json()}); "
                      "measuring anyway (COLLBENCH_DOCTOR=check)", out)

    def test_check_with_a_passing_doctor_says_so(self):
        rc, status, out = self.run_template(doctor="check", doctor_exit=0)
        self.assertEqual((rc, status), (0, 0), out)
        self.assertIn("# doctor: every check passed (exit status 0)", out)
        self.assert_benchmark_ran(out)

    def test_require_with_a_failing_doctor_stops_the_job(self):
        for mode in ("require", "strict"):
            with self.subTest(mode=mode):
                shutil.rmtree(self.job_dir, ignore_errors=True)
                if os.path.exists(self.call_log):
                    os.remove(self.call_log)
                rc, status, out = self.run_template(doctor=mode, doctor_exit=1)
                self.assertEqual((rc, status), (3, 3), out)
                self.assertEqual([c[0] for c in self.calls()], ["doctor"], "the benchmark ran")
                self.assertTrue(os.path.exists(self.doctor_json()))
                lines = [x for x in out.splitlines() if "the benchmark was not run" in x]
                self.assertEqual(lines, [f"# collbench.sbatch: the doctor found a problem on the nodes (exit status 1; "
                                         f"see {self.doctor_json()}); the benchmark was not run "
                                         f"(COLLBENCH_DOCTOR={mode}); exit status 3"])
                self.assertFalse(os.path.exists(os.path.join(self.job_dir, "collbench.jsonl.raw")))

    def test_require_with_a_passing_doctor_measures(self):
        rc, status, out = self.run_template(doctor="require", doctor_exit=0)
        self.assertEqual((rc, status), (0, 0), out)
        self.assertEqual([c[0] for c in self.calls()], ["doctor", "all_reduce"])
        self.assert_benchmark_ran(out)

    def test_strict_passes_strict_and_the_others_do_not(self):
        for mode, strict in (("check", False), ("require", False), ("strict", True)):
            with self.subTest(mode=mode):
                if os.path.exists(self.call_log):
                    os.remove(self.call_log)
                rc, status, out = self.run_template(doctor=mode, doctor_exit=0)
                self.assertEqual((rc, status), (0, 0), out)
                self.assertEqual("--strict" in self.calls()[0], strict, self.calls())
                with open(self.doctor_json()) as f:
                    self.assertEqual(json.load(f)["strict"], strict)

    def test_a_doctor_that_cannot_run(self):
        for code in (2, 3):
            with self.subTest(mode="check", code=code):
                if os.path.exists(self.call_log):
                    os.remove(self.call_log)
                rc, status, out = self.run_template(doctor="check", doctor_exit=code)
                self.assertEqual((rc, status), (0, 0), out)
                self.assertIn(f"# warning: the doctor could not run (exit status {code}; see its output above); "
                              "measuring anyway", out)
                self.assertIn("#   collbench: doctor: cannot collect the facts", out)
                self.assert_benchmark_ran(out)
            with self.subTest(mode="require", code=code):
                if os.path.exists(self.call_log):
                    os.remove(self.call_log)
                rc, status, out = self.run_template(doctor="require", doctor_exit=code)
                self.assertEqual((rc, status), (3, 3), out)
                self.assertEqual([c[0] for c in self.calls()], ["doctor"], "the benchmark ran")
                self.assertIn(f"# collbench.sbatch: the doctor could not run (exit status {code}; see its output "
                              "above); the benchmark was not run (COLLBENCH_DOCTOR=require); exit status 3", out)

    def test_a_report_from_an_earlier_job_is_not_left_to_pass_for_this_one(self):
        os.makedirs(self.job_dir)
        with open(self.doctor_json(), "w") as f:
            f.write('{"old": true}')
        rc, status, out = self.run_template(doctor="check", doctor_exit=3)
        self.assertEqual((rc, status), (0, 0), out)
        self.assertFalse(os.path.exists(self.doctor_json()))

    def test_an_unknown_value_is_bad_usage(self):
        rc, status, out = self.run_template(doctor="yes")
        self.assertEqual(rc, 2, out)
        self.assertEqual(out.strip(), "collbench.sbatch: COLLBENCH_DOCTOR=yes; use off, check, require or strict")
        self.assertEqual(self.calls(), [])
        self.assertIsNone(status)

    def test_mpirun_starts_one_doctor_per_node(self):
        rc, status, out = self.run_template(doctor="check", COLLBENCH_LAUNCHER="mpirun")
        self.assertEqual((rc, status), (0, 0), out)
        doctor_launch, bench_launch = self.launches()
        self.assertEqual(doctor_launch[:7], ["mpirun", "-np", "2", "--map-by", "ppr:1:node", "--bind-to", "none"])
        self.assertEqual(bench_launch[:5], ["mpirun", "-np", "8", "--map-by", "ppr:4:node"])

    def test_the_doctor_runs_in_the_benchmarks_container(self):
        rc, status, out = self.run_template(doctor="check", COLLBENCH_CONTAINER_IMAGE="nvcr.io#nvidia/pytorch:24.01-py3",
                                            COLLBENCH_CONTAINER_MOUNTS="/fsx:/fsx", COLLBENCH_SRUN_MPI="pmi2")
        self.assertEqual((rc, status), (0, 0), out)
        doctor_launch, bench_launch = self.launches()
        for option in ("--mpi=pmi2", "--container-image=nvcr.io#nvidia/pytorch:24.01-py3",
                       f"--container-mounts={self.job_dir}:{self.job_dir},/fsx:/fsx"):
            self.assertIn(option, doctor_launch)
            self.assertIn(option, bench_launch)

    def test_sourcing_gives_the_functions_alone(self):
        script = textwrap.dedent(f"""\
            source {TEMPLATE}
            for v in "" off check require strict; do collbench_doctor_mode "$v"; done
            collbench_doctor_mode nope; echo "rc=$?"
            collbench_doctor_verdict check 1 r.json >/dev/null; echo "check 1 -> $?"
            collbench_doctor_verdict require 0 r.json >/dev/null; echo "require 0 -> $?"
            collbench_doctor_verdict require 1 r.json >/dev/null; echo "require 1 -> $?"
            collbench_doctor_verdict strict 3 r.json >/dev/null; echo "strict 3 -> $?"
            collbench_doctor_verdict check 137 r.json >/dev/null; echo "check 137 -> $?"
            """)
        p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30,
                           env={"PATH": "/usr/bin:/bin"})
        self.assertEqual(p.stdout.split("\n"), ["off", "off", "check", "require", "strict", "rc=2",
                                                "check 1 -> 0", "require 0 -> 0", "require 1 -> 3",
                                                "strict 3 -> 3", "check 137 -> 0", ""], p.stderr)
        self.assertIn("use off, check, require or strict", p.stderr)


if __name__ == "__main__":
    unittest.main()
