"""tools/detector/model_card.py on a stand-in model file (the card reads only its bytes and the
export sidecar; standard library only: run by scripts/test.sh with the system python)."""
import hashlib
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "model_card.py"


class ModelCard(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.model = self.dir / "det.onnx"
        self.model.write_bytes(b"not really a network")
        self.sha = hashlib.sha256(self.model.read_bytes()).hexdigest()
        sidecar = {
            "sha256": self.sha,
            "classes": {"0": "tree"},
            "onnx": {"metadata": {}},
            "export": {"imgsz_hw": [288, 512], "output": "output0"},
            "versions": {"ultralytics": "x"},
            "training": {"epochs": 1},
        }
        (self.dir / "det.onnx.export.json").write_text(json.dumps(sidecar))
        for name in ("a", "b"):
            (self.dir / f"{name}.json").write_text(json.dumps({"builder": f"build {name}"}))

    def tearDown(self):
        self.tmp.cleanup()

    def card(self, *args: str):
        out = self.dir / "card.json"
        run = subprocess.run([sys.executable, str(SCRIPT), str(self.model), "--out", str(out), *args],
                             capture_output=True, text=True)
        return run, (json.loads(out.read_text()) if run.returncode == 0 else None)

    def test_one_data_set_is_the_stats_itself(self):
        run, card = self.card("--stats", str(self.dir / "a.json"))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(card["data"], {"builder": "build a"})
        self.assertEqual(card["sha256"], self.sha)

    def test_several_data_sets_are_a_list_in_order(self):
        run, card = self.card("--stats", str(self.dir / "a.json"), "--stats", str(self.dir / "b.json"))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(card["data"], [{"builder": "build a"}, {"builder": "build b"}])

    def test_the_input_is_fixed_unless_the_export_was_dynamic(self):
        run, card = self.card()
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual((card["input_size_hw"], card["input_dynamic"]), ([288, 512], False))
        sidecar_path = self.dir / "det.onnx.export.json"
        sidecar = json.loads(sidecar_path.read_text())
        sidecar["export"].update(imgsz_hw=[640, 640], dynamic=True)
        sidecar_path.write_text(json.dumps(sidecar))
        run, card = self.card()
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual((card["input_size_hw"], card["input_dynamic"]), ([640, 640], True))

    def test_a_quantized_models_card_carries_the_quantization_and_a_float_ones_has_none(self):
        run, card = self.card()
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("quantization", card)
        sidecar_path = self.dir / "det.onnx.export.json"
        sidecar = json.loads(sidecar_path.read_text())
        sidecar["quantization"] = {"source": {"file": "models/det-fp32.onnx", "sha256": "f" * 64}}
        sidecar_path.write_text(json.dumps(sidecar))
        run, card = self.card()
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(card["quantization"]["source"]["file"], "models/det-fp32.onnx")

    def test_bootstrap_intervals_go_beside_their_numbers_and_are_absent_without_them(self):
        row = {"class_id": 0, "class": "tree", "instances": 3, "images": 2, "ap50": 0.5, "ap50_95": 0.3,
               "precision": 1.0, "recall": 0.5}
        report = {"model_sha256": self.sha, "dataset": "d", "split": "val", "images": 2, "instances": 3,
                  "ap_method": "coco", "conf": 0.25, "map50": 0.5, "map50_95": 0.3, "classes": [row]}
        (self.dir / "plain.json").write_text(json.dumps(report))
        report["bootstrap"] = {"resamples": 1000, "seed": 0, "level": 0.95,
                               "map50": {"low": 0.2, "high": 0.8}, "map50_95": {"low": 0.1, "high": 0.4},
                               "classes": [{"class_id": 0, "resamples": 990, "ap50": {"low": 0.2, "high": 0.8},
                                            "ap50_95": {"low": 0.1, "high": 0.4}}]}
        (self.dir / "boot.json").write_text(json.dumps(report))
        run, card = self.card("--eval", f"val={self.dir / 'plain.json'}", "--eval", f"test={self.dir / 'boot.json'}")
        self.assertEqual(run.returncode, 0, run.stderr)
        plain, boot = card["evaluation"]["val"], card["evaluation"]["test"]
        self.assertNotIn("map50_ci", plain)
        self.assertNotIn("ap50_ci", plain["per_class"]["tree"])
        self.assertEqual((boot["map50_ci"], boot["map50_95_ci"]), ([0.2, 0.8], [0.1, 0.4]))
        self.assertEqual(boot["intervals"]["resamples"], 1000)
        self.assertEqual(boot["per_class"]["tree"]["ap50_ci"], [0.2, 0.8])
        self.assertEqual(boot["per_class"]["tree"]["ap50_95_ci"], [0.1, 0.4])
        self.assertEqual(boot["per_class"]["tree"]["ap50"], 0.5)

    def test_an_eval_of_another_model_is_refused(self):
        report = {"model_sha256": "0" * 64}
        (self.dir / "val.json").write_text(json.dumps(report))
        run, card = self.card("--eval", f"val={self.dir / 'val.json'}")
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("another model", run.stderr)
        self.assertFalse((self.dir / "card.json").exists())


if __name__ == "__main__":
    unittest.main()
