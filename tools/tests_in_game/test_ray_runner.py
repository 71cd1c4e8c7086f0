"""The from-nothing runner through Ray (tools/ray_trials.py) on a one-node local cluster, with
the real client: two short trials (the log task) give the sequential runner's rows, and Ctrl-C
cancels a trial and leaves no process behind.

Needs what the in-game tests need (scripts/test.sh: the client built into .work/mcweb, Xvfb,
target/debug/vistawise) and Ray on PYTHONPATH (.work/raypy); run alone, nothing heavy beside:
    PYTHONPATH=.work/raypy python3 -m unittest discover -s tools/tests_in_game
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "debug/vistawise"
# The row of a run from nothing as the sequential runner writes it (a committed batch's).
SEQUENTIAL = REPO / "docs/results/from-nothing/minecraft-web-iron-3002-3003-07dd35b.json"


def processes_with(token: str) -> list[str]:
    """Processes whose environment holds `token`: everything the runner started inherits it
    (Ray's own processes, the games' servers, Xvfb, Chromium, the agent)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes()
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if token.encode() in env:
            found.append(f"{pid} {cmd[:120]}")
    return found


def wait_none_left(token: str, limit: float = 60.0) -> list[str]:
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        left = processes_with(token)
        if not left:
            return []
        time.sleep(1.0)
    return processes_with(token)


class RayRunner(unittest.TestCase):
    def setUp(self):
        if not BIN.exists():
            self.fail(f"{BIN} not found: cargo build first")
        self.token = f"VW_RAY_TEST={uuid.uuid4()}"
        self.tmp = tempfile.TemporaryDirectory(prefix="vw-ray-")
        self.out = Path(self.tmp.name)
        self.addCleanup(self.tmp.cleanup)

    def runner(self, *extra: str) -> subprocess.Popen:
        key, value = self.token.split("=")
        env = dict(os.environ, **{key: value})
        # Ray's local cluster keeps its session files under RAY_TMPDIR; its own per test.
        env["RAY_TMPDIR"] = str(self.out / "ray")
        cmd = [sys.executable, str(REPO / "tools/closed_loop_runs.py"), "--game", "minecraft-web",
               "--start", "nothing", "--target", "log", "--max-minutes", "3", "--max-steps", "150",
               "--bin", str(BIN), "--out", str(self.out / "runs"), "--ray", *extra]
        # A session of its own: Ctrl-C in a terminal goes to the whole foreground group, as
        # killpg does here.
        p = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
        self.addCleanup(self.kill_left, p)
        return p

    def kill_left(self, p: subprocess.Popen) -> None:
        """A runner that failed the test is not left running (nor anything it started)."""
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        for line in processes_with(self.token):
            try:
                os.kill(int(line.split()[0]), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        if p.stdout:
            p.stdout.close()

    def test_two_trials_give_the_sequential_runners_rows_and_leave_no_process(self):
        p = self.runner("--runs", "2", "--first-world", "2015")
        output, _ = p.communicate(timeout=900)
        self.assertEqual(p.returncode, 0, output)
        data = json.loads((self.out / "runs/runs.json").read_text())
        sequential = json.loads(SEQUENTIAL.read_text())
        self.assertEqual(set(data["batch"]) - {"ray"}, set(sequential["batch"]))
        self.assertEqual(data["batch"]["ray"]["nodes"], 1)
        self.assertEqual([r["world"] for r in data["runs"]], [2015, 2016])
        # Every key of a sequential row (a run that did not die has no `died`), and the trial's
        # own record beside them.
        keys = set(sequential["runs"][0]) - {"died"}
        for run in data["runs"]:
            self.assertNotIn("trial_failed", run, output)
            self.assertTrue(keys <= set(run), f"missing {keys - set(run)}")
            self.assertEqual(set(run) - keys - {"died"}, {"trial"})
            self.assertEqual(run["commands_after_start"], [])
            self.assertTrue((self.out / "runs" / run["session"] / "session.jsonl").is_file())
            self.assertGreater(run["steps"], 0)
            if run["success"]:
                self.assertIn("log", run["milestones"])
        self.assertIn("| minecraft-web 2015-2016", output)
        self.assertEqual(wait_none_left(self.token), [])

    def test_ctrl_c_cancels_the_trial_and_stops_its_game(self):
        p = self.runner("--runs", "1", "--first-world", "2017")
        session = self.out / "runs/sessions/log-world2017/session.jsonl"
        t0 = time.monotonic()
        while time.monotonic() - t0 < 300 and p.poll() is None:
            if session.exists() and '"kind":"step"' in session.read_text():
                break
            time.sleep(1.0)
        self.assertIsNone(p.poll(), "the runner ended before its trial played a step")
        self.assertTrue(session.exists(), "no step played in 300 s")
        os.killpg(p.pid, signal.SIGINT)
        output, _ = p.communicate(timeout=180)
        self.assertNotEqual(p.returncode, 0, output)
        self.assertEqual(wait_none_left(self.token), [], output)


if __name__ == "__main__":
    unittest.main()
