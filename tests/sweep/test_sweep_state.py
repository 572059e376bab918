#!/usr/bin/python3
"""collbench-sweep's state under signals, edits and deleted files, with real mpirun and collbench
for local runs and stand-in Slurm commands for submissions; and slurm/collbench.sbatch's exit
status when a signal stops its launcher (run as a plain script with a stand-in launcher).

Environment (set by CTest): COLLBENCH, COLLBENCH_SWEEP, COLLBENCH_SOURCE_DIR.
Run one test: test_sweep_state.py Signals.test_sigkill_and_sigterm_take_the_launch_down
"""

import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collbench_lines import CONTEXT_LINE, RESULT_LINE  # noqa: E402
from test_sweep_cli import COLLBENCH, SOURCE, SWEEP, FakeSlurm, Temp, manifest, read_jsonl, sweep  # noqa: E402

TEMPLATE = os.path.join(SOURCE, "slurm", "collbench.sbatch")


def processes_mentioning(text):
    """Pids of the live processes whose command line contains `text` (zombies aside)."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text.encode() in cmdline and state != "Z":
            out.append(int(pid))
    return out


def eventually(check, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


class Campaigns(Temp):
    def tearDown(self):
        # A failing test must not leave the very orphans it looks for.
        for pid in processes_mentioning(self.results):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        super().tearDown()

    def small_campaign(self, max_size="64", iters=3, name="state"):
        return self.write("small.yaml", f"""\
            campaign: {name}
            tests: [all_reduce]
            backend: mpi
            sizes: {{min: 8, max: {max_size}, factor: 8}}
            iters: {iters}
            warmup: 1
            timeout: 600
            nodes: [1]
            tasks_per_node: [2]
            variants:
              - {{name: a}}
            """)

    def local(self, *args, **kw):
        return sweep(*args, "--collbench", COLLBENCH, "--results", self.results, **kw)

    def start_local(self, camp, *extra):
        log = open(os.path.join(self.dir, "sweep.out"), "a")
        p = subprocess.Popen([SWEEP, "run", "--local", camp, "--collbench", COLLBENCH, "--results",
                              self.results, *extra], stdout=log, stderr=log)
        log.close()
        return p

    def starts(self, campaign):
        return [e for e in manifest(self.results, campaign) if e["event"] == "started"]

    def sweep_log(self):
        with open(os.path.join(self.dir, "sweep.out")) as f:
            return f.read()

    def wait_for_launch(self, campaign, proc, earlier_starts=0):
        """The launch of the start after the earlier_starts the manifest already held, once the
        manifest records it (not an earlier start's, whose launch is gone)."""
        def started():
            events = self.starts(campaign)[earlier_starts:]
            return events[-1]["launch"] if events and "launch" in events[-1] else None
        self.assertTrue(eventually(lambda: started() or proc.poll() is not None, 60), self.sweep_log())
        self.assertIsNone(proc.poll(), "the sweep ended before its run started: " + self.sweep_log())
        return started()


def session_members(sid):
    """Pids of the live processes of session `sid` (zombies aside), as the sweep counts what a
    launch left: a process on its way out has lost its command line but not its session."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            out.append(int(pid))
    return out


class Signals(Campaigns):
    def test_sigkill_and_sigterm_take_the_launch_down(self):
        # A run that would measure for minutes: mpirun and two collbench ranks.
        camp = self.small_campaign(max_size="1M", iters=100000000, name="killed")
        for sig in (signal.SIGKILL, signal.SIGTERM):
            earlier = len(self.starts("killed"))
            p = self.start_local(camp)
            launch = self.wait_for_launch("killed", p, earlier)
            self.assertTrue(eventually(lambda: len(processes_mentioning(self.results)) >= 3, 60),
                            f"mpirun and its ranks never showed up: {processes_mentioning(self.results)}; "
                            + self.sweep_log())
            p.send_signal(sig)
            p.wait(timeout=30)
            # Nothing the sweep launched survives it: no mpirun, no rank still writing.
            self.assertTrue(eventually(lambda: not processes_mentioning(self.results), 20),
                            f"{sig.name} left {processes_mentioning(self.results)} running")
            self.assertTrue(eventually(lambda: not session_members(launch["pid"]), 20),
                            f"{sig.name} left {session_members(launch['pid'])} in the launch's session")
            self.assertFalse(os.path.exists(f"/proc/{launch['pid']}"))
        # The rerun sees the interrupted run and runs it again (a short one now).
        camp = self.small_campaign(name="killed")
        r = self.local("run", "--local", camp)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("1 of 1 runs done", r.stdout)

    def test_a_rerun_refuses_a_launch_that_outlived_its_sweep(self):
        # A launcher that ignores SIGTERM, and a sweep and supervisor both killed with SIGKILL:
        # the one case where a launch can outlive its sweep.
        self.outlived_launch_is_refused(sweep_records_the_failure=False)

    def test_a_rerun_refuses_a_launch_whose_sweep_recorded_it_failed(self):
        # The same, but the sweep outlives its supervisor long enough to record the run failed
        # (which it could also do between the two kills above): the launch still runs.
        self.outlived_launch_is_refused(sweep_records_the_failure=True)

    def outlived_launch_is_refused(self, sweep_records_the_failure):
        bin_dir = os.path.join(self.dir, "bin")
        os.makedirs(bin_dir)
        mpirun = os.path.join(bin_dir, "mpirun")
        ready = os.path.join(self.dir, "launcher-ignores-term")
        with open(mpirun, "w") as f:
            f.write(f"#!/bin/sh\ntrap '' TERM INT HUP\ntouch {ready}\nexec sleep 120\n")
        os.chmod(mpirun, 0o755)
        camp = self.small_campaign(name="outlived")
        p = self.start_local(camp, "--mpirun", mpirun)
        launch = self.wait_for_launch("outlived", p)
        # The sweep records the launch once it runs, which can be before its shell has read the
        # trap: the supervisor is killed only once the launcher ignores SIGTERM.
        self.assertTrue(eventually(lambda: os.path.exists(ready), 60), self.sweep_log())
        def comm(pid):
            try:
                with open(f"/proc/{pid}/comm") as f:
                    return f.read().strip()
            except OSError:  # it ended since it was listed
                return ""
        mentioning = {pid: comm(pid) for pid in processes_mentioning(self.results)}
        supervisors = [pid for pid, name in mentioning.items() if pid != p.pid
                       and pid != launch["pid"] and name.startswith("collbench")]
        self.assertEqual(len(supervisors), 1,
                         f"sweep {p.pid}, launch {launch['pid']}, processes {mentioning}\n"
                         + self.sweep_log())
        if sweep_records_the_failure:
            os.kill(supervisors[0], signal.SIGKILL)
            p.wait(timeout=60)
            self.assertTrue(any(e["event"] == "failed" for e in manifest(self.results, "outlived")),
                            self.sweep_log())
        else:
            # The sweep is stopped before its supervisor is killed: a sweep that ran on between
            # the two kills could see the supervisor die and record the run failed (the case above).
            os.kill(p.pid, signal.SIGSTOP)
            os.kill(supervisors[0], signal.SIGKILL)
            p.kill()
            p.wait(timeout=30)
        try:
            time.sleep(0.5)
            self.assertTrue(os.path.exists(f"/proc/{launch['pid']}"), self.sweep_log())
            r = self.local("run", "--local", camp, "--mpirun", mpirun, timeout=60)
            said = f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}\nmanifest:\n{manifest(self.results, 'outlived')}"
            self.assertEqual(r.returncode, 3, said)
            self.assertIn("still running", r.stderr, said)
            self.assertIn(f"pkill -TERM -s {launch['pid']}", r.stderr, said)
            self.assertEqual(len([e for e in manifest(self.results, "outlived") if e["event"] == "started"]), 1,
                             "the rerun started the run beside the live one")
            r = sweep("status", "--json", camp, "--results", self.results)
            self.assertEqual(r.returncode, 0, r.stderr)
            row = json.loads(r.stdout)["runs"][0]
            self.assertEqual(row["state"], "running", row)
            self.assertIn(str(launch["pid"]), row["detail"])
        finally:
            os.kill(launch["pid"], signal.SIGKILL)
        self.assertTrue(eventually(lambda: not os.path.exists(f"/proc/{launch['pid']}"), 10),
                        f"the launch {launch['pid']} outlived SIGKILL by 10 s")
        r = sweep("status", "--json", camp, "--results", self.results)
        self.assertEqual(r.returncode, 0, r.stderr)
        # Once the launch is gone: what the sweep recorded, a run that never ended or one that failed.
        self.assertEqual(json.loads(r.stdout)["runs"][0]["state"],
                         "failed" if sweep_records_the_failure else "interrupted", r.stdout)


class State(Campaigns):
    def test_status_and_collect_see_local_runs_and_notice_a_deleted_file(self):
        camp = self.small_campaign()
        r = self.local("run", "--local", camp)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        run = [e["run"] for e in manifest(self.results, "state") if e["event"] == "collected"][0]
        # status and collect without --local: the same runs, under the same names, done.
        r = sweep("status", "--json", camp, "--results", self.results)
        self.assertEqual(r.returncode, 0, r.stderr)
        st = json.loads(r.stdout)
        self.assertEqual([(x["run"], x["state"], x["mode"]) for x in st["runs"]], [(run, "done", "local")])
        self.assertEqual(st["counts"]["unsubmitted"], 0)
        r = sweep("collect", camp, "--results", self.results)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("1 of 1 done", r.stdout)
        r = sweep("wait", camp, "--results", self.results)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("ran locally", r.stdout)
        # A deleted results file is noticed, and collect brings it back from the raw results.
        collected = os.path.join(self.results, "state", run + ".jsonl")
        before = read_jsonl(collected)
        os.remove(collected)
        r = sweep("status", "--json", camp, "--results", self.results)
        row = json.loads(r.stdout)["runs"][0]
        self.assertEqual(row["state"], "lost", row)
        self.assertIn("was deleted", row["detail"])
        r = sweep("collect", camp, "--results", self.results)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("restored " + run, r.stdout)
        self.assertEqual(read_jsonl(collected), before)
        # With the raw results gone too, it is measured again.
        os.remove(collected)
        for e in manifest(self.results, "state"):
            if e.get("raw_jsonl") and os.path.exists(e["raw_jsonl"]):
                os.remove(e["raw_jsonl"])
        r = sweep("collect", camp, "--results", self.results)
        self.assertIn("raw results are gone", r.stdout)
        self.assertIn("0 of 1 done", r.stdout)
        r = self.local("run", "--local", camp)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("was deleted; measuring it again", r.stdout)
        self.assertTrue(os.path.exists(collected))

    def test_a_changed_campaign_is_measured_again_never_reused(self):
        camp = self.small_campaign(max_size="64")
        r = self.local("run", "--local", camp)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        camp = self.small_campaign(max_size="512")
        r = sweep("status", "--json", camp, "--results", self.results)
        row = json.loads(r.stdout)["runs"][0]
        self.assertEqual(row["state"], "changed", row)
        self.assertIn("-e 64", row["detail"])
        self.assertIn("-e 512", row["detail"])
        r = sweep("collect", camp, "--results", self.results)
        self.assertIn("0 of 1 done", r.stdout)
        self.assertIn("measure them again with: collbench-sweep run --local", r.stdout)
        # A resumed run measures it again rather than counting the old results as done.
        r = self.local("run", "--local", camp)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("changed since this run was started", r.stdout)
        self.assertIn("1 of 1 runs done", r.stdout)
        run = [e["run"] for e in manifest(self.results, "state") if e["event"] == "collected"][-1]
        sizes = {x["bytes"] for x in read_jsonl(os.path.join(self.results, "state", run + ".jsonl"))
                 if x["record"] == "result"}
        self.assertEqual(max(sizes), 512)
        r = self.local("run", "--local", camp)
        self.assertIn("0 to do", r.stdout)


class SubmitState(FakeSlurm):
    def finish_jobs(self):
        for e in manifest(self.results, "fake"):
            if e["event"] != "submitted":
                continue
            os.makedirs(os.path.dirname(e["raw_jsonl"]), exist_ok=True)
            with open(e["output"], "w") as f:
                f.write("# collbench exited with status 0\n")
            with open(os.path.join(os.path.dirname(e["raw_jsonl"]), "exit_status"), "w") as f:
                f.write("0\n")
            with open(e["raw_jsonl"], "w") as f:
                f.write(CONTEXT_LINE + "\n" + RESULT_LINE + "\n")

    def test_a_changed_campaign_is_submitted_again(self):
        self.sbatch_that_accepts()
        self.squeue_that_forgot_every_job()
        args = [self.campaign, "--collbench", COLLBENCH, "--results", self.results]
        r = sweep("submit", *args, path=self.path())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(self.campaign, "a") as f:
            f.write("iters: 7\n")
        # In flight under the old definition: named, not submitted twice.
        r = sweep("submit", *args, path=self.path())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("measures the old definition", r.stdout)
        self.assertIn("0 submitted, 8 already submitted", r.stdout)
        self.finish_jobs()
        r = sweep("collect", *args, path=self.path())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("0 of 8 done", r.stdout)
        r = sweep("status", "--json", *args, path=self.path())
        st = json.loads(r.stdout)
        self.assertEqual(st["counts"].get("changed"), 8, st["counts"])
        self.assertIn("-n 7", st["runs"][0]["detail"])
        r = sweep("submit", *args, path=self.path())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("8 submitted", r.stdout)
        with open(self.log) as f:
            self.assertEqual(len(f.read().splitlines()), 16)
        self.finish_jobs()
        r = sweep("collect", *args, path=self.path())
        self.assertIn("8 of 8 done", r.stdout)


class Template(Temp):
    """slurm/collbench.sbatch outside Slurm (SLURM_JOB_ID set by hand) with a stand-in mpirun."""

    def run_template(self, mpirun_body, send=None):
        bin_dir = os.path.join(self.dir, "bin")
        os.makedirs(bin_dir, exist_ok=True)
        started = os.path.join(self.dir, "launcher-started")
        # One test runs the template several times: what an earlier run left must not say that
        # this one's launcher started (a signal sent before the template's trap is in place
        # would be lost) or give its exit status.
        for stale in (started, os.path.join(self.dir, "job", "exit_status")):
            if os.path.exists(stale):
                os.remove(stale)
        # The stand-in says it started once its body's set-up is done ({ready} in the body),
        # so that a signal never arrives before its trap is in place.
        ready = f"touch {started}\n"
        body = mpirun_body.format(ready=ready) if "{ready}" in mpirun_body else ready + mpirun_body
        with open(os.path.join(bin_dir, "mpirun"), "w") as f:
            f.write("#!/bin/bash\n"
                    'if [[ $1 == --version ]]; then echo "mpirun (stand-in) 0"; exit 0; fi\n' + body)
        with open(os.path.join(bin_dir, "srun"), "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        for name in ("mpirun", "srun"):
            os.chmod(os.path.join(bin_dir, name), 0o755)
        jsonl = os.path.join(self.dir, "job", "collbench.jsonl.raw")
        env = dict(os.environ, SLURM_JOB_ID="42", COLLBENCH_LAUNCHER="mpirun", COLLBENCH_BIN="true",
                   COLLBENCH_JSONL=jsonl, COLLBENCH_TASKS_PER_NODE="2",
                   PATH=bin_dir + ":/usr/bin:/bin")
        env.pop("COLLBENCH_SITE_ENV", None)
        env.pop("COLLBENCH_ENV_FILE", None)
        p = subprocess.Popen(["bash", TEMPLATE, "all_reduce"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        if send:
            self.assertTrue(eventually(lambda: os.path.exists(started), 30))
            time.sleep(0.3)
            p.send_signal(send)
        out, _ = p.communicate(timeout=60)
        with open(os.path.join(self.dir, "job", "exit_status")) as f:
            return p.returncode, int(f.read()), out

    def test_a_signal_that_stops_the_launcher_exits_3(self):
        # Open MPI's mpirun answers SIGTERM and SIGINT with exit status 1 ("check failed").
        # (Its sleep does not hold the output pipe: were it left behind, the test would wait on it.)
        like_mpirun = "trap 'kill $!; exit 1' TERM INT\nsleep 60 >/dev/null 2>&1 &\n{ready}wait\n"
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            rc, status, out = self.run_template(like_mpirun, send=sig)
            self.assertEqual((rc, status), (3, 3), out)
            self.assertIn(f"the launcher was stopped by {sig.name} (its exit status 1)", out)

    def test_a_launcher_killed_by_a_signal_exits_3_and_its_own_status_stays(self):
        rc, status, out = self.run_template("kill -9 $$\n")
        self.assertEqual((rc, status), (3, 3), out)
        self.assertIn("the launcher was killed by signal 9", out)
        rc, status, out = self.run_template("exit 1\n")
        self.assertEqual((rc, status), (1, 1), out)


if __name__ == "__main__":
    unittest.main()
