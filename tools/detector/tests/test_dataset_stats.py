"""tools/detector/dataset_stats.py on a small dataset (standard library only: run by scripts/test.sh
with the system python, no venv)."""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "dataset_stats.py"
PROFILE = """
[autolabel]
radius = 20.0
class_radius = { tree = 40.0 }
min_box_px = 8.0
merge_regions = ["stone", "tree"]
settle_ms = 700
hud_negatives = { fraction = 0.15, pitch_down_deg = 20.0, view = ["default:stone"] }

[autolabel.distractors]
"default:dirt" = 8

[autolabel.label_sets.mc]
classes = ["trunk"]
merge_columns = ["trunk"]
"""


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


class DatasetStats(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = Path(self.tmp.name)
        self.data = root / "data"
        (self.data / "train" / "labels").mkdir(parents=True)
        (self.data / "val" / "labels").mkdir(parents=True)
        (self.data / "data.yaml").write_text("path: x\ntrain: [train/images]\nnames:\n  0: tree\n  1: stone\n")
        (self.data / "train" / "labels" / "a.txt").write_text("0 0.5 0.5 0.1 0.2\n0 0.2 0.2 0.1 0.1\n1 0.5 0.5 1 1\n")
        (self.data / "train" / "labels" / "b.txt").write_text("")
        (self.data / "val" / "labels" / "c.txt").write_text("1 0.5 0.5 0.3 0.3\n")
        self.profile = root / "profile.toml"
        self.profile.write_text(PROFILE)

    def tearDown(self):
        self.tmp.cleanup()

    def test_counts_frames_and_boxes_per_split_and_records_the_rule(self):
        out = run(str(self.data), "--builder", "build it", "--split", "train=world 1",
                  "--split", "val=world 2", "--profile", str(self.profile))
        self.assertEqual(out.returncode, 0, out.stderr)
        stats = json.loads((self.data / "stats.json").read_text())
        self.assertEqual(stats["classes"], ["tree", "stone"])
        self.assertEqual(stats["splits"]["train"], {"from": "world 1", "frames": 2,
                                                    "boxes": {"tree": 2, "stone": 1}})
        self.assertEqual(stats["splits"]["val"]["boxes"], {"tree": 0, "stone": 1})
        rule = stats["labels"]
        self.assertEqual(rule["class_radius"], {"tree": 40.0})
        self.assertEqual(rule["merge_regions"], ["stone", "tree"])
        self.assertEqual(rule["distractors"], {"default:dirt": 8})
        self.assertEqual(rule["hud_negatives"]["fraction"], 0.15)
        self.assertNotIn("settle_ms", rule)  # timing decides no box

    def test_a_label_set_replaces_the_merges_and_drops_the_profiles_radii(self):
        out = run(str(self.data), "--builder", "b", "--split", "train=w", "--profile", str(self.profile),
                  "--label-set", "mc")
        self.assertEqual(out.returncode, 0, out.stderr)
        rule = json.loads((self.data / "stats.json").read_text())["labels"]
        self.assertEqual(rule["label_set"], "mc")
        self.assertEqual(rule["merge_columns"], ["trunk"])
        self.assertNotIn("class_radius", rule)

    def test_a_bad_label_line_is_named_with_its_file_and_line(self):
        bad = self.data / "train" / "labels" / "a.txt"
        bad.write_text("0 0.5 0.5 0.1 0.2\n7 0.5 0.5 0.1 0.2\n")
        out = run(str(self.data), "--builder", "b", "--split", "train=w", "--profile", str(self.profile))
        self.assertNotEqual(out.returncode, 0)
        self.assertIn(f"{bad}:2:", out.stderr)
        self.assertFalse((self.data / "stats.json").exists(), "nothing half-written")

    def test_a_missing_split_and_an_unknown_label_set_are_refused(self):
        out = run(str(self.data), "--builder", "b", "--split", "test=w", "--profile", str(self.profile))
        self.assertIn("test/labels is missing", out.stderr)
        out = run(str(self.data), "--builder", "b", "--profile", str(self.profile), "--label-set", "nope")
        self.assertIn("no [autolabel.label_sets.nope]", out.stderr)


if __name__ == "__main__":
    unittest.main()
