#!/usr/bin/python3
"""The campaign's doctor: key. Local runs (real mpirun and collbench behind a stand-in whose
`doctor` subcommand prints a table, writes its --json-file and exits with a status chosen per
test): off runs no doctor; check runs it once per run and measures whatever it finds; require and
strict fail the run without measuring (exit 3, the reason in the manifest, status and collect)
when it fails or cannot run; strict passes --strict; an edited doctor: marks runs changed.
Submission (stand-in sbatch): COLLBENCH_DOCTOR reaches the job, and collect reports a job the
doctor stopped in the template's words.

Environment (set by CTest): COLLBENCH, COLLBENCH_SWEEP, COLLBENCH_SOURCE_DIR.
Run one test: test_sweep_doctor.py LocalDoctor.test_off_runs_no_doctor
"""

import json
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collbench_lines import CONTEXT_LINE, RESULT_LINE  # noqa: E402
from test_sweep_cli import COLLBENCH, FakeSlurm, Temp, manifest, read_jsonl, sweep  # noqa: E402

STAND_IN = """\
#!/usr/bin/python3
import json, os, sys

args = sys.argv[1:]
if args[:1] == ["doctor"]:
    with open({log!r}, "a") as f:
        f.write(json.dumps(args) + "\\n")
    code = int(os.environ.get("FAKE_DOCTOR_EXIT", "0"))
    print("HOST  CHECK      STATUS")
    print("this  gpudirect  " + ("FAIL" if code == 1 else "ok"))
    if code >= 2:
        sys.stderr.write("collbench: doctor: cannot collect the facts\\n")
        sys.exit(code)
    with open(args[args.index("--json-file") + 1], "w") as f:
        json.dump({{"strict": "--strict" in args, "variable": os.environ.get("COLLBENCH_PROBE")}}, f)
    sys.exit(code)
os.execv({real!r}, [{real!r}, *args])
"""


class LocalDoctor(Temp):
    def setUp(self):
        super().setUp()
        self.log = os.path.join(self.dir, "doctor.log")
        self.collbench = os.path.join(self.dir, "collbench")
        with open(self.collbench, "w") as f:
            f.write(STAND_IN.format(log=self.log, real=os.path.abspath(COLLBENCH)))
        os.chmod(self.collbench, 0o755)
        self.root = os.path.join(self.results, "doc")

    def campaign(self, doctor=None):
        lines = ["campaign: doc", "tests: [all_reduce]", "backend: mpi", "sizes: {min: 8, max: 64, factor: 8}",
                 "iters: 2", "warmup: 1", "timeout: 60", "nodes: [1]", "tasks_per_node: [1]", 'time_limit: "5"',
                 "variants:", '  - {name: a, env: {COLLBENCH_PROBE: "from a"}}', "  - {name: b}"]
        if doctor is not None:
            lines.append(f"doctor: {doctor}")
        return self.write("doc.yaml", "\n".join(lines) + "\n")

    def run_local(self, camp, doctor_exit=0, *extra):
        return sweep("run", "--local", camp, "--collbench", self.collbench, "--results", self.results, *extra,
                     env={"FAKE_DOCTOR_EXIT": str(doctor_exit)})

    def doctor_calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [json.loads(line) for line in f]

    def attempt_dir(self, run, attempt=1):
        return os.path.join(self.root, "runs", run, f"local-{attempt}")

    def test_off_runs_no_doctor(self):
        for doctor in (None, "off"):
            with self.subTest(doctor=doctor):
                camp = self.campaign(doctor)
                r = self.run_local(camp, 1, "--redo")
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertEqual(self.doctor_calls(), [])
                self.assertFalse(os.path.exists(os.path.join(self.attempt_dir("local-n1x1-a-r0"), "doctor.json")))
                with open(os.path.join(self.attempt_dir("local-n1x1-a-r0"), "output.log")) as f:
                    self.assertNotIn("# doctor:", f.read())

    def test_check_with_a_failing_doctor_measures_anyway(self):
        camp = self.campaign("check")
        r = self.run_local(camp, 1)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # Once per run, alone (no mpirun), its report in the run's directory, no --strict.
        reports = [os.path.join(self.attempt_dir(run), "doctor.json") for run in ("local-n1x1-a-r0", "local-n1x1-b-r0")]
        self.assertEqual(self.doctor_calls(), [["doctor", "--json-file", p] for p in reports])
        for p in reports:
            self.assertTrue(os.path.exists(p))
        # The run's own variables reach the doctor.
        with open(reports[0]) as f:
            self.assertEqual(json.load(f)["variable"], "from a")
        for run in ("local-n1x1-a-r0", "local-n1x1-b-r0"):
            self.assertGreater(len(read_jsonl(os.path.join(self.root, run + ".jsonl"))), 1)
        self.assertIn("ok     local-n1x1-a-r0", r.stdout)
        self.assertIn("(the doctor found a problem on the host (exit status 1; see", r.stdout)
        # The doctor's table under its heading, then its verdict, then the benchmark's output.
        with open(os.path.join(self.attempt_dir("local-n1x1-a-r0"), "output.log")) as f:
            log = f.read()
        heading = log.index("# doctor: ")
        self.assertIn(self.collbench + " doctor --json-file", log[heading:].splitlines()[0])
        self.assertLess(heading, log.index("this  gpudirect  FAIL"))
        self.assertLess(log.index("this  gpudirect  FAIL"), log.index("measuring anyway (doctor: check)"))
        self.assertEqual([e["event"] for e in manifest(self.results, "doc")],
                         ["started", "collected", "started", "collected"])

    def test_require_with_a_failing_doctor_fails_the_run_unmeasured(self):
        for mode in ("require", "strict"):
            with self.subTest(mode=mode):
                shutil.rmtree(self.results, ignore_errors=True)  # each mode from the start
                camp = self.campaign(mode)
                r = self.run_local(camp, 1)
                self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
                self.assertIn("FAILED local-n1x1-a-r0: non-zero exit: the doctor found a problem on the host "
                              "(exit status 1; see ", r.stdout)
                self.assertIn(f"not measured (doctor: {mode}; see ", r.stdout)
                self.assertIn("0 of 2 runs done, 2 failed", r.stdout)
                events = manifest(self.results, "doc")[-4:]
                self.assertEqual([e["event"] for e in events], ["started", "failed", "started", "failed"])
                self.assertEqual(events[0]["definition"]["doctor"], mode)
                self.assertNotIn("launch", events[0], "mpirun never started")
                self.assertEqual(events[1]["failure"], "non_zero_exit")
                self.assertIn("doctor.json", events[1]["reason"])
                for run in ("local-n1x1-a-r0", "local-n1x1-b-r0"):
                    attempt = self.attempt_dir(run, events[0]["attempt"])
                    self.assertFalse(os.path.exists(os.path.join(attempt, "collbench.jsonl.raw")), "it measured")
                    self.assertTrue(os.path.exists(os.path.join(attempt, "doctor.json")))
                    self.assertFalse(os.path.exists(os.path.join(self.root, run + ".jsonl")))
                r = sweep("status", "--local", camp, "--results", self.results)
                self.assertRegex(r.stdout, r"local-n1x1-a-r0\s+failed\s+-\s+non-zero exit: the doctor found a problem")
                r = sweep("collect", camp, "--results", self.results)
                self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
                self.assertIn("0 of 2 done, 2 failed", r.stdout)
                # Once the hosts are fixed, --retry-failed measures them.
                r = self.run_local(camp, 0, "--retry-failed")
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertIn("2 of 2 runs done, 0 failed", r.stdout)

    def test_strict_passes_strict_and_the_others_do_not(self):
        for mode, strict in (("check", False), ("require", False), ("strict", True)):
            with self.subTest(mode=mode):
                before = len(self.doctor_calls())
                camp = self.campaign(mode)
                r = sweep("plan", "--local", camp, "--collbench", self.collbench, "--results", self.results)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                shown = [x for x in r.stdout.splitlines() if f"{self.collbench} doctor --json-file" in x]
                self.assertEqual(len(shown), 2, r.stdout)
                self.assertTrue(all(x.endswith("/doctor.json --strict") == strict for x in shown), shown)
                r = self.run_local(camp, 0, "--redo")
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                calls = self.doctor_calls()[before:]
                self.assertEqual(len(calls), 2)
                self.assertTrue(all(("--strict" in c) == strict for c in calls), calls)
                self.assertNotIn("(the doctor", r.stdout, "a passing doctor adds no note")

    def test_a_doctor_that_cannot_run(self):
        r = self.run_local(self.campaign("check"), 3)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("(the doctor could not run (exit status 3))", r.stdout)
        r = self.run_local(self.campaign("require"), 3, "--redo")
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("FAILED local-n1x1-a-r0: non-zero exit: the doctor could not run (exit status 3); "
                      "not measured (doctor: require; see ", r.stdout)
        with open(os.path.join(self.attempt_dir("local-n1x1-a-r0", 2), "output.log")) as f:
            self.assertIn("collbench: doctor: cannot collect the facts", f.read())

    def test_an_edited_doctor_marks_runs_changed(self):
        r = self.run_local(self.campaign(), 0)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        camp = self.campaign("require")
        r = sweep("status", "--local", camp, "--results", self.results)
        self.assertRegex(r.stdout, r"local-n1x1-a-r0\s+changed")
        self.assertIn("doctor off -> require", r.stdout)
        r = self.run_local(camp, 0)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(len(self.doctor_calls()), 2, "the changed runs are measured again, with the doctor")

    def test_an_unknown_mode_is_bad_usage_with_its_place(self):
        camp = self.campaign("yes")
        for sub in (["plan"], ["run", "--local"], ["submit", "--dry-run"]):
            r = sweep(*sub, camp, "--results", self.results)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn("doc.yaml:14:9: 'doctor' must be off, check, require or strict, not 'yes'", r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertEqual(self.doctor_calls(), [])


class SubmitDoctor(FakeSlurm):
    def sbatch_that_records_the_doctor(self):
        self.fake("sbatch", f"""\
            import os
            with open({self.log!r}, "a+") as f:
                f.seek(0)
                n = 100 + len(f.read().splitlines())
                f.write(os.environ.get("COLLBENCH_DOCTOR", "<missing>") + "\\n")
            print(n)
            """)

    def test_the_mode_reaches_the_job_and_a_stopped_job_is_reported(self):
        self.sbatch_that_records_the_doctor()
        self.squeue_that_forgot_every_job()
        with open(self.campaign, "a") as f:
            f.write("doctor: require\n")
        args = [self.campaign, "--collbench", COLLBENCH, "--results", self.results]
        # A value left in the submitter's shell does not change the campaign's.
        r = sweep("submit", *args, path=self.path(), env={"COLLBENCH_DOCTOR": "off"})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(self.log) as f:
            self.assertEqual(f.read().splitlines(), ["require"] * 8)
        submitted = [e for e in manifest(self.results, "fake") if e["event"] == "submitted"]
        self.assertTrue(all(e["definition"]["doctor"] == "require" for e in submitted))
        # Pretend the jobs ran: the doctor stopped one, the others measured with its report beside.
        for e in submitted:
            job_dir = os.path.dirname(e["raw_jsonl"])
            os.makedirs(job_dir, exist_ok=True)
            report = os.path.join(job_dir, "doctor.json")
            with open(report, "w") as f:
                f.write("{}\n")
            with open(os.path.join(job_dir, "exit_status"), "w") as f:
                f.write("3\n" if e["run"] == "default-n2x2-b-r0" else "0\n")
            with open(e["output"], "w") as f:
                if e["run"] == "default-n2x2-b-r0":
                    f.write(f"# collbench.sbatch: the doctor found a problem on the nodes (exit status 1; see {report}); "
                            "the benchmark was not run (COLLBENCH_DOCTOR=require); exit status 3\n")
                    continue
                f.write("# collbench exited with status 0\n")
            with open(e["raw_jsonl"], "w") as f:
                f.write(CONTEXT_LINE + "\n" + RESULT_LINE + "\n")
        r = sweep("collect", *args, path=self.path())
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("failed default-n2x2-b-r0 (job ", r.stdout)
        self.assertIn("non-zero exit: the doctor found a problem on the nodes (exit status 1; see ", r.stdout)
        self.assertIn("the benchmark was not run (COLLBENCH_DOCTOR=require) (see ", r.stdout)
        self.assertRegex(r.stdout, r"collected default-n1x2-a-r0 \(job \d+\): 1 result rows -> .*; doctor report: "
                                   r".*/doctor\.json")
        failed = [e for e in manifest(self.results, "fake") if e["event"] == "failed"]
        self.assertEqual([e["run"] for e in failed], ["default-n2x2-b-r0"])
        self.assertIn("the doctor found a problem", failed[0]["reason"])


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:]], verbosity=2)
