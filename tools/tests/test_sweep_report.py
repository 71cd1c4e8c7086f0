"""tools/sweep_report.py on committed sweeps (docs/results/from-nothing: the client's and
Minetest's batches): the numbers on the page, the links to the trials, bad input named, and the
page rendered by headless Chromium (scripts/setup.sh --with-x installs it)."""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import sweep_report  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "docs/results/from-nothing/minecraft-web-2011-2020-487b50d.json"
MINETEST = REPO / "docs/results/from-nothing/minetest-2001-2010-2e45d8d.json"


def write(batches) -> tuple[str, Path]:
    out = Path(tempfile.mkdtemp()) / "sweep.html"
    sweep_report.main([*map(str, batches), "-o", str(out)])
    return out.read_text(), out


class SweepReportTest(unittest.TestCase):
    def test_wilson_interval_of_none_and_all(self):
        lo, hi = sweep_report.wilson(0, 10)
        self.assertEqual(lo, 0.0)
        self.assertAlmostEqual(hi, 0.2775, places=3)
        lo, hi = sweep_report.wilson(10, 10)
        self.assertAlmostEqual(lo, 0.7225, places=3)
        self.assertEqual(hi, 1.0)
        lo, hi = sweep_report.wilson(7, 10)
        self.assertLess(lo, 0.7)
        self.assertGreater(hi, 0.7)

    def test_ticks_are_round_and_reach_the_top(self):
        self.assertEqual(sweep_report.nice_ticks(16.0), [0, 5, 10, 15, 20])
        self.assertEqual(sweep_report.nice_ticks(558), [0, 200, 400, 600])

    def test_the_page_holds_each_batchs_counts_the_paper_and_a_link_a_trial(self):
        page, _ = write([CLIENT, MINETEST])
        client = json.loads(CLIENT.read_text())
        held = sum(1 for r in client["runs"] if "stone_pickaxe" in r["milestones"])
        self.assertIn(f"{held}/{len(client['runs'])}", page)
        # The paper's stone pickaxe (1.00) and the milestones Minetest does not count.
        self.assertIn("the paper (Table 1): 1.00", page)
        self.assertIn("n/a (minetest has no crafting_table)", page)
        # A link a trial, to its session (the committed batches keep no session folders, so to
        # where the runner wrote them beside runs.json).
        links = re.findall(r'<a href="([^"]+)">sessions/', page)
        self.assertEqual(len(links), 20)
        self.assertTrue(all(re.search(r"sessions/stone_pickaxe-world20\d\d$", link) for link in links), links)
        # Self-contained: nothing fetched.
        self.assertNotIn("<script", page)
        self.assertNotRegex(page, r'(src|href)="https?://')

    def test_a_trial_that_failed_twice_is_listed_and_not_counted(self):
        client = json.loads(CLIENT.read_text())
        held = sum(1 for r in client["runs"] if "stone_pickaxe" in r["milestones"])
        client["runs"].append({"world": 2021, "trial_failed": "The node with node id ... has been marked dead"})
        path = Path(tempfile.mkdtemp()) / "runs.json"
        path.write_text(json.dumps(client))
        page, _ = write([path])
        self.assertIn(f"{held}/{len(client['runs']) - 1}", page)
        self.assertNotIn(f"/{len(client['runs'])}<", page)
        self.assertIn("trial failed twice, not counted: The node with node id", page)

    def test_a_file_that_is_no_runs_json_is_refused_by_name(self):
        bad = Path(tempfile.mkdtemp()) / "runs.json"
        bad.write_text(json.dumps({"runs": []}))
        with self.assertRaises(SystemExit) as e:
            sweep_report.main([str(bad), "-o", str(bad.with_suffix(".html"))])
        self.assertIn(str(bad), str(e.exception))
        self.assertFalse(bad.with_suffix(".html").exists())

    def test_the_page_renders_in_headless_chromium(self):
        _, out = write([CLIENT, MINETEST])
        base = ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                "--v=0"]
        try:
            dom = subprocess.run([*base, "--dump-dom", out.as_uri()], capture_output=True, text=True,
                                 timeout=120)
        except FileNotFoundError:
            self.fail("chromium is not installed: run scripts/setup.sh --with-x")
        for label in ("success rate per milestone", "minutes to each milestone", "steps to each milestone"):
            self.assertIn(f'aria-label="{label}"', dom.stdout)
        self.assertEqual(dom.stdout.count("<rect"), 13, "a bar per batch and milestone each counts")
        self.assertNotIn("CONSOLE", dom.stderr)
        shot = out.with_suffix(".png")
        taken = subprocess.run([*base, f"--screenshot={shot}", "--window-size=1000,1400", out.as_uri()],
                               capture_output=True, text=True, timeout=120)
        self.assertEqual(taken.returncode, 0, taken.stderr)
        png = shot.read_bytes()
        self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        width = int.from_bytes(png[16:20], "big")
        self.assertEqual(width, 1000)


if __name__ == "__main__":
    unittest.main()
