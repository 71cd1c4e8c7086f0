"""train.read_results_csv_stdlib: the polars-free reader of Ultralytics' results.csv (standard library
only: run by scripts/test.sh with the system python)."""
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import train  # noqa: E402


class ReadResultsCsvStdlib(unittest.TestCase):
    def test_columns_become_float_lists(self):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "results.csv"
            p.write_text("epoch,  train/box_loss,metrics/mAP50(B)\n1,1.25,0.5\n2, 1.0 ,0.75\n")
            self.assertEqual(
                train.read_results_csv_stdlib(p),
                {"epoch": [1.0, 2.0], "train/box_loss": [1.25, 1.0], "metrics/mAP50(B)": [0.5, 0.75]},
            )

    def test_text_cells_stay_text(self):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "results.csv"
            p.write_text("epoch,note\n1,warmup\n")
            self.assertEqual(train.read_results_csv_stdlib(p), {"epoch": [1.0], "note": ["warmup"]})

    def test_missing_or_header_only_file_is_empty(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(train.read_results_csv_stdlib(Path(d) / "absent.csv"), {})
            p = Path(d) / "results.csv"
            p.write_text("epoch,lr/pg0\n")
            self.assertEqual(train.read_results_csv_stdlib(p), {})


if __name__ == "__main__":
    unittest.main()
