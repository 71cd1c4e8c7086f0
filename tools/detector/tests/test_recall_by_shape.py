"""tools/detector/recall_by_shape.py on a hand-made case (standard library only: run by
scripts/test.sh with the system python)."""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "recall_by_shape.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def yolo(cls: int, x1: float, y1: float, x2: float, y2: float, size: int = 100) -> str:
    return f"{cls} {(x1 + x2) / 2 / size} {(y1 + y2) / 2 / size} {(x2 - x1) / size} {(y2 - y1) / size}\n"


class RecallByShape(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = Path(self.tmp.name)
        self.labels = root / "labels"
        self.labels.mkdir()
        # a.jpg (100x100): a wide inner box (found), a thin strip at the left border (missed),
        # a wide box at the bottom border (found only by a box of another class: a miss), and a
        # class-1 box that is not counted.
        (self.labels / "a.txt").write_text(
            yolo(0, 30, 30, 60, 70) + yolo(0, 0, 10, 5, 90) + yolo(0, 40, 80, 80, 100) + yolo(1, 10, 10, 20, 20))
        # b.jpg: a thin inner box, found; another image prefix, skipped by --prefix.
        (self.labels / "b.txt").write_text(yolo(0, 50, 20, 58, 80))
        (self.labels / "skip_c.txt").write_text(yolo(0, 30, 30, 60, 70))
        rows = [
            {"image": "/x/a.jpg", "width": 100, "height": 100, "detections": [
                {"class_id": 0, "conf": 0.9, "xyxy": [31, 30, 60, 70]},
                {"class_id": 0, "conf": 0.8, "xyxy": [31, 31, 60, 70]},  # same truth again: a duplicate
                {"class_id": 1, "conf": 0.7, "xyxy": [40, 80, 80, 100]},
            ]},
            {"image": "/x/b.jpg", "width": 100, "height": 100, "detections": [
                {"class_id": 0, "conf": 0.5, "xyxy": [50, 20, 58, 80]}]},
            {"image": "/x/skip_c.jpg", "width": 100, "height": 100, "detections": []},
        ]
        self.dets = root / "dets.jsonl"
        self.dets.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def tearDown(self):
        self.tmp.cleanup()

    def test_groups_truths_by_border_and_thickness_and_counts_what_was_found(self):
        out = run(str(self.dets), str(self.labels), "--class-id", "0", "--thin", "10", "--json")
        self.assertEqual(out.returncode, 0, out.stderr)
        r = json.loads(out.stdout)
        self.assertEqual((r["images"], r["truths"], r["found"]), (3, 5, 2))
        g = r["groups"]
        self.assertEqual((g["edge-thin"]["truths"], g["edge-thin"]["found"]), (1, 0))
        self.assertEqual((g["edge-wide"]["truths"], g["edge-wide"]["found"]), (1, 0))
        self.assertEqual((g["inner-thin"]["truths"], g["inner-thin"]["found"]), (1, 1))
        self.assertEqual((g["inner-wide"]["truths"], g["inner-wide"]["found"]), (2, 1))
        self.assertAlmostEqual(r["ceiling_without_thin"], 3 / 5)

    def test_prefix_keeps_only_the_named_images(self):
        r = json.loads(run(str(self.dets), str(self.labels), "--thin", "10", "--prefix", "skip_",
                           "--json").stdout)
        self.assertEqual((r["images"], r["truths"], r["found"]), (1, 1, 0))

    def test_a_broken_detections_line_is_named(self):
        self.dets.write_text('{"image": "/x/a.jpg"}\n')
        out = run(str(self.dets), str(self.labels))
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("dets.jsonl:1", out.stderr)

    def test_a_missing_label_file_is_named(self):
        (self.labels / "b.txt").unlink()
        out = run(str(self.dets), str(self.labels))
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("b.txt", out.stderr)


if __name__ == "__main__":
    unittest.main()
