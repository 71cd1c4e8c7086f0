"""tools/detector/quantize.py: which nodes stay float, the frame draw, the score check, and a real
onnxruntime quantization of a small graph named as Ultralytics names its blocks.

Needs numpy, onnx, onnxruntime and packaging (not torch, not OpenCV): scripts/test.sh runs this
folder with PYTHONPATH=.work/pydeps:.ort, which scripts/fetch-minilm.sh and scripts/setup.sh fill.
"""
import contextlib
import io
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _pydeps  # noqa: E402,F401  (a clear error when numpy / onnx / onnxruntime are missing)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import quantize  # noqa: E402

HEAD_NODES = [
    "/model.23/cv2.0/cv2.0.0/conv/Conv",  # box features: quantized
    "/model.23/cv3.0/cv3.0.1/cv3.0.1.0/conv/Conv",  # class features: quantized
    "/model.23/cv2.0/cv2.0.2/Conv",  # last 1x1 conv: float
    "/model.23/cv3.0/cv3.0.2/Conv",  # last 1x1 conv: float
    "/model.23/dfl/conv/Conv",
    "/model.23/Concat_4",
]


class FloatNodes(unittest.TestCase):
    def test_the_chosen_blocks_and_the_heads_decoding_stay_float(self):
        names = ["/model.0/conv/Conv", "/model.1/conv/Conv", "/model.10/m/m.0/attn/MatMul", *HEAD_NODES, "images"]
        keep = quantize.float_nodes(names, [0])
        self.assertEqual(
            keep,
            ["/model.0/conv/Conv", "/model.23/cv2.0/cv2.0.2/Conv", "/model.23/cv3.0/cv3.0.2/Conv",
             "/model.23/dfl/conv/Conv", "/model.23/Concat_4"],
        )  # fmt: skip
        # Block 1 is not block 10 or 23: the index is matched whole.
        self.assertNotIn("/model.10/m/m.0/attn/MatMul", quantize.float_nodes(names, [1]))

    def test_a_block_the_model_lacks_and_a_graph_without_block_names_are_errors(self):
        with self.assertRaisesRegex(quantize.QuantizeError, r"--float-blocks \[30\]: the model has blocks 0..23"):
            quantize.float_nodes(["/model.0/conv/Conv", *HEAD_NODES], [30])
        with self.assertRaisesRegex(quantize.QuantizeError, "not an Ultralytics export"):
            quantize.float_nodes(["conv1", "relu1"], [])

    def test_block_lists_parse_and_reject_words(self):
        self.assertEqual(quantize.parse_blocks("2, 0,1,,2"), [0, 1, 2])
        self.assertEqual(quantize.parse_blocks(""), [])
        with self.assertRaisesRegex(quantize.QuantizeError, "'stem' is not a block index"):
            quantize.parse_blocks("0,stem")


class Frames(unittest.TestCase):
    def test_the_draw_is_reproducible_disjoint_and_skips_non_images(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            for i in range(20):
                (d / f"f{i:02d}.jpg").write_bytes(b"")
            (d / "notes.txt").write_text("")
            calib, check = quantize.pick_frames(d, 5, 3, seed=7)
            again = quantize.pick_frames(d, 5, 3, seed=7)
            other = quantize.pick_frames(d, 5, 3, seed=8)
        self.assertEqual((calib, check), again)
        self.assertNotEqual(calib, other[0])
        self.assertEqual((len(calib), len(check)), (5, 3))
        self.assertFalse(set(calib) & set(check))
        self.assertTrue(all(p.suffix == ".jpg" for p in calib + check))

    def test_too_few_frames_and_a_missing_folder_name_the_folder(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "a.png").write_bytes(b"")
            with self.assertRaisesRegex(quantize.QuantizeError, r"1 images, 4 \+ 2 needed"):
                quantize.pick_frames(Path(tmp), 4, 2, seed=0)
            with self.assertRaisesRegex(quantize.QuantizeError, "missing: no such folder"):
                quantize.pick_frames(Path(tmp) / "missing", 4, 2, seed=0)


class ScoreAgreement(unittest.TestCase):
    def test_only_anchors_the_float_model_scores_count(self):
        # [1, 4 + 2, 3]: anchor 0 scored 0.9 (float) / 0.8 (int8), anchor 1 below the floor, anchor 2 0.3 / 0.3.
        f = np.array([[[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0.9, 0.1, 0.3], [0.0, 0.2, 0.1]]], np.float32)
        q = f.copy()
        q[0, 4, 0] = 0.8
        q[0, 5, 1] = 0.9  # a low float anchor that int8 scores high is not counted (it is the float's miss)
        r = quantize.score_agreement(f, q)
        self.assertEqual(r["anchors"], 2)
        self.assertAlmostEqual(r["mean_abs"], 0.1 / 4, places=6)
        self.assertAlmostEqual(r["max_abs"], 0.1, places=6)

    def test_different_shapes_are_an_error(self):
        with self.assertRaisesRegex(quantize.QuantizeError, "output shapes differ"):
            quantize.score_agreement(np.zeros((1, 6, 3)), np.zeros((1, 6, 4)))


def two_conv_model(path: Path):
    """images [1, 3, 'h', 'w'] -> /model.0 conv -> /model.1 conv -> /model.2 (the head: here a Sigmoid):
    output [1, 3, h, w]."""
    rng = np.random.default_rng(0)
    x = helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, "h", "w"])
    y = helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 3, "h", "w"])
    w0 = numpy_helper.from_array(rng.normal(0, 0.5, (8, 3, 3, 3)).astype(np.float32), "w0")
    w1 = numpy_helper.from_array(rng.normal(0, 0.5, (3, 8, 1, 1)).astype(np.float32), "w1")
    nodes = [
        helper.make_node("Conv", ["images", "w0"], ["a"], name="/model.0/conv/Conv", pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["a", "w1"], ["b"], name="/model.1/conv/Conv"),
        helper.make_node("Sigmoid", ["b"], ["output0"], name="/model.2/Sigmoid"),
    ]
    graph = helper.make_graph(nodes, "two", [x], [y], initializer=[w0, w1])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8), str(path))


class QuantizeStatic(unittest.TestCase):
    def test_kept_blocks_stay_float_the_rest_gets_int8_weights_and_outputs_stay_close(self):
        rng = np.random.default_rng(1)
        frames = [rng.random((1, 3, 16, 16), dtype=np.float32) for _ in range(8)]
        with tempfile.TemporaryDirectory() as tmp:
            src, dst = Path(tmp) / "f.onnx", Path(tmp) / "q.onnx"
            two_conv_model(src)
            keep = quantize.float_nodes([n.name for n in onnx.load(str(src)).graph.node], [0])
            self.assertEqual(keep, ["/model.0/conv/Conv", "/model.2/Sigmoid"])
            quantize.quantize(src, dst, "images", frames, keep, "minmax")
            graph = onnx.load(str(dst)).graph
            # The kept conv reads the float weight itself; the other reads a dequantized int8 one.
            convs = {n.name: n for n in graph.node if n.op_type == "Conv"}
            self.assertEqual(convs["/model.0/conv/Conv"].input[1], "w0")
            dq = {n.output[0]: n for n in graph.node if n.op_type == "DequantizeLinear"}
            w1_dq = dq[convs["/model.1/conv/Conv"].input[1]]
            w1_q = next(i for i in graph.initializer if i.name == w1_dq.input[0])
            self.assertEqual(w1_q.data_type, TensorProto.INT8)
            # reduce_range: 7-bit weights.
            self.assertLessEqual(np.abs(numpy_helper.to_array(w1_q)).max(), 64)
            sessions = [ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]) for p in (src, dst)]
            x = rng.random((1, 3, 24, 32), dtype=np.float32)  # another size: the input stays dynamic
            f, q = (s.run(None, {"images": x})[0] for s in sessions)
        self.assertEqual(f.shape, (1, 3, 24, 32))
        self.assertLess(np.abs(f - q).mean(), 0.02)
        self.assertGreater(np.abs(f - q).max(), 0.0)  # it is quantized, not the same graph

    def test_percentile_one_frame_at_a_time_writes_onnxruntimes_own_bytes(self):
        from onnxruntime.quantization import CalibrationMethod, quantize_static

        rng = np.random.default_rng(2)
        # Ranges grow frame by frame and the frames differ in size: bin edges taken from any one frame, or
        # histograms merged the way onnxruntime merges batches, would give other thresholds.
        frames = [rng.normal(0, 1 + i, (1, 3, 16, 16 + 8 * (i % 2))).astype(np.float32) for i in range(6)]
        same_size = [f[..., :16] for f in frames]
        with tempfile.TemporaryDirectory() as tmp:
            src, ours, theirs = Path(tmp) / "f.onnx", Path(tmp) / "ours.onnx", Path(tmp) / "theirs.onnx"
            two_conv_model(src)
            keep = ["/model.2/Sigmoid"]
            quantize.quantize(src, ours, "images", same_size, keep, "percentile")
            quantize_static(str(src), str(theirs), quantize.Frames("images", same_size),
                            calibrate_method=CalibrationMethod.Percentile, **quantize.static_settings(keep))  # fmt: skip
            self.assertEqual(ours.read_bytes(), theirs.read_bytes())
            self.assertEqual(sorted(p.name for p in Path(tmp).iterdir()), ["f.onnx", "ours.onnx", "theirs.onnx"])
            # onnxruntime itself cannot stack frames of different sizes; one frame at a time can.
            quantize.quantize(src, ours, "images", frames, keep, "percentile")
            self.assertNotEqual(ours.read_bytes(), theirs.read_bytes())
            graph = onnx.load(str(ours)).graph
            self.assertIn("QuantizeLinear", {n.op_type for n in graph.node})


class Command(unittest.TestCase):
    def test_a_model_without_its_export_sidecar_is_refused_and_nothing_is_written(self):
        with tempfile.TemporaryDirectory() as tmp:
            src, out = Path(tmp) / "f.onnx", Path(tmp) / "out" / "q.onnx"
            two_conv_model(src)
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                rc = quantize.main([str(src), "--out", str(out)])
            self.assertEqual(rc, 1)
            self.assertIn("f.onnx.export.json is missing", err.getvalue())
            self.assertFalse(out.exists())


if __name__ == "__main__":
    unittest.main()
