"""tools/closed_loop_runs.py on Ctrl-C: the play (which gets the same Ctrl-C) is given time to end
its session, and the run is kept in the record as interrupted, listed apart and never counted.
The play here is a real process standing in for `vistawise play`: it ends on SIGINT as the agent
does (its session closed, exit 130)."""

import argparse
import os
import signal
import sys
import tempfile
import textwrap
import threading
import time
import unittest
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import closed_loop_runs  # noqa: E402

PLAY = textwrap.dedent("""\
    import os, signal, sys, time
    with open(os.environ["PLAY_PID_FILE"], "w") as f:
        f.write(str(os.getpid()))
    def stop(*_):
        time.sleep(0.5)  # closing the session takes a moment
        print("interrupted (Ctrl-C / SIGTERM); session closed")
        sys.exit(130)
    signal.signal(signal.SIGINT, stop)
    time.sleep(60)
    print("ran to its end")
""")


def play_and_signal(tmp: Path, runner_too: bool) -> dict:
    """One `play_from_nothing` of the stand-in play, SIGINT sent to the play half a second in
    (and to this process, the runner, when `runner_too`); the run's record."""
    play = tmp / "play.py"
    play.write_text(PLAY)
    script = tmp / "vistawise"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {play} \"$@\"\n")
    script.chmod(0o755)
    pid_file = tmp / "play.pid"
    args = argparse.Namespace(bin=str(script), policy="planner", target="log", max_steps=10,
                              max_minutes=1, play_args=[], display=":0")

    def send():
        while not pid_file.exists() or not pid_file.read_text():
            time.sleep(0.05)
        os.kill(int(pid_file.read_text()), signal.SIGINT)
        if runner_too:
            os.kill(os.getpid(), signal.SIGINT)

    threading.Timer(0.5, send).start()
    env = dict(os.environ, PLAY_PID_FILE=str(pid_file))
    return closed_loop_runs.play_from_nothing(args, "minecraft-web", env, tmp, "log-world1",
                                              [("log", "_log")], lambda: [])


class InterruptedRunTest(unittest.TestCase):
    def test_a_run_stopped_by_ctrl_c_is_kept_as_interrupted_and_not_counted(self):
        # A runner started in the background (`cmd &`, as CI may) inherits SIGINT ignored:
        # the terminal's Ctrl-C, which reaches the runner and the play alike, is the default
        # handler's.
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        self.addCleanup(signal.signal, signal.SIGINT, previous)
        with tempfile.TemporaryDirectory() as tmp:
            rec = play_and_signal(Path(tmp), runner_too=True)
        self.assertTrue(rec["interrupted"].startswith("Ctrl-C after"), rec)
        self.assertEqual(rec["agent_exit"], 130, rec)
        self.assertIn("session closed", rec["agent_end"])
        self.assertFalse(rec["success"])
        run = {"world": 1, **rec}
        self.assertIn("interrupted, not counted", closed_loop_runs.not_counted(run))
        self.assertIsNone(closed_loop_runs.not_counted({"world": 2, "success": False}))

    def test_a_play_stopped_by_a_signal_the_runner_did_not_get_is_interrupted_too(self):
        # A runner started with `cmd &` ignores SIGINT; only the play, which installs its own
        # handler, ends on it (world 3101's try was recorded as a failure so).
        with tempfile.TemporaryDirectory() as tmp:
            rec = play_and_signal(Path(tmp), runner_too=False)
        self.assertTrue(rec["interrupted"].startswith("the play was stopped by a signal"), rec)
        self.assertIn("interrupted, not counted", closed_loop_runs.not_counted({"world": 1, **rec}))

if __name__ == "__main__":
    unittest.main()
