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

    def part(self, data: dict, worlds: list[int], date: str) -> dict:
        return {"batch": dict(data["batch"], worlds=worlds, date=date),
                "runs": [r for r in data["runs"] if r["world"] in worlds]}

    def test_the_parts_of_one_batch_give_the_whole_batchs_table(self):
        data = json.loads(CLIENT.read_text())
        first = self.part(data, list(range(2011, 2014)), "2026-12-07 13:00:00")
        second = self.part(data, list(range(2014, 2021)), "2026-12-08 09:00:00")
        merged = closed_loop_runs.merge_parts([(Path("b"), second), (Path("a"), first)])
        self.assertEqual(len(merged), 1)
        self.assertEqual(merged[0]["batch"]["worlds"], list(range(2011, 2021)))
        self.assertEqual([r["world"] for r in merged[0]["runs"]], list(range(2011, 2021)))
        whole_rows = [l for l in self.table(data).splitlines() if l.startswith("|")]
        merged_rows = [l for l in self.table(merged[0]).splitlines() if l.startswith("|")]
        self.assertEqual(merged_rows, whole_rows)
        self.assertIn("2026-12-08 09:00:00, 2026-12-07 13:00:00", self.table(merged[0]))

    def test_parts_of_other_commits_stay_apart_and_a_world_run_twice_is_refused(self):
        data = json.loads(CLIENT.read_text())
        first = self.part(data, [2011, 2012], "d1")
        other = self.part(data, [2013], "d2")
        other["batch"]["commit"] = "0" * 40
        self.assertEqual(len(closed_loop_runs.merge_parts([(Path("a"), first), (Path("b"), other)])), 2)
        again = self.part(data, [2012, 2013], "d3")
        with self.assertRaisesRegex(ValueError, "world 2012 is also in a"):
            closed_loop_runs.merge_parts([(Path("a"), first), (Path("c"), again)])

    def test_a_world_left_out_between_parts_is_named(self):
        data = json.loads(CLIENT.read_text())
        merged = closed_loop_runs.merge_parts([(Path("a"), self.part(data, [2011, 2012], "d1")),
                                               (Path("b"), self.part(data, [2015], "d2"))])
        self.assertIn("worlds 2011-2015 (not run: 2013, 2014)", self.table(merged[0]))


if __name__ == "__main__":
    unittest.main()
