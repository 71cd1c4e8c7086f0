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

    def test_an_eval_of_another_model_is_refused(self):
        report = {"model_sha256": "0" * 64}
        (self.dir / "val.json").write_text(json.dumps(report))
        run, card = self.card("--eval", f"val={self.dir / 'val.json'}")
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("another model", run.stderr)
        self.assertFalse((self.dir / "card.json").exists())


if __name__ == "__main__":
    unittest.main()
