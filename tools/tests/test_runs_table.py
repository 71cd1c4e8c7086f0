"""tools/closed_loop_runs.py's milestone table: a Ray trial that failed twice is listed apart and
not counted in any milestone's share."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import closed_loop_runs  # noqa: E402

CLIENT = Path(__file__).resolve().parents[2] / "docs/results/from-nothing/minecraft-web-2011-2020-487b50d.json"


class RunsTableTest(unittest.TestCase):
    def table(self, data: dict) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            closed_loop_runs.print_table([data])
        return out.getvalue()

    def test_a_failed_trial_is_listed_and_not_counted(self):
        data = json.loads(CLIENT.read_text())
        before = self.table(data)
        self.assertIn("| log | 10/10 |", before)
        data["runs"].append({"world": 2021, "trial_failed": "worker died twice"})
        after = self.table(data)
        self.assertIn("| log | 10/10 |", after)
        self.assertIn("world 2021: trial failed twice, not counted: worker died twice", after)

    def test_rows_are_written_in_world_order(self):
        with tempfile.TemporaryDirectory() as tmp:
            closed_loop_runs.write_runs(Path(tmp), {"worlds": [1, 2]}, [{"world": 2}, {"world": 1}])
            written = json.loads((Path(tmp) / "runs.json").read_text())
        self.assertEqual([r["world"] for r in written["runs"]], [1, 2])


if __name__ == "__main__":
    unittest.main()
