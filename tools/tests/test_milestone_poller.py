"""tools/closed_loop_runs.py's MilestonePoller on a scripted game: milestones when first held,
and the first death where the game tells the player's health."""

import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import closed_loop_runs  # noqa: E402


class Scripted:
    """A game that answers from a list, one state per poll (the last one repeats)."""

    def __init__(self, states):
        self.states, self.i = states, 0

    def next(self):
        state = self.states[min(self.i, len(self.states) - 1)]
        self.i += 1
        return state


class MilestonePollerTest(unittest.TestCase):
    def poller(self, states, health=True):
        game = Scripted(states)
        current = {}

        def slots():
            current.update(game.next())
            return current["slots"]

        session = Path(tempfile.mkdtemp()) / "session"
        session.mkdir()
        (session / "session.jsonl").write_text('{"kind":"step"}\n{"kind":"step"}\n')
        milestones = [("log", "oak_log"), ("planks", "oak_planks")]
        read_health = (lambda: current.get("health")) if health else None
        return closed_loop_runs.MilestonePoller("minecraft-web", slots, milestones, session,
                                                read_health=read_health)

    def test_a_milestone_and_a_death_are_recorded_when_first_seen(self):
        log = [{"name": "oak_log", "count": 1}]
        p = self.poller([{"slots": [], "health": 20}, {"slots": log, "health": 20},
                         {"slots": log, "health": 0}, {"slots": [], "health": 20}])
        for _ in range(4):
            p.poll()
        self.assertEqual(set(p.first), {"log"})
        self.assertEqual(p.first["log"]["step"], 2)
        self.assertIsNotNone(p.died)
        self.assertEqual(p.died["step"], 2)

    def test_no_health_told_no_death_recorded(self):
        p = self.poller([{"slots": [], "health": 0}], health=False)
        p.poll()
        self.assertIsNone(p.died)

    def test_a_player_alive_throughout_has_no_death(self):
        p = self.poller([{"slots": [], "health": 20}, {"slots": [], "health": 3}])
        p.poll()
        p.poll()
        self.assertIsNone(p.died)


if __name__ == "__main__":
    unittest.main()
