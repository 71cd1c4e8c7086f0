"""tools/detector/onnx_rewrite.py on small graphs built here, run by onnxruntime.

Needs numpy, onnx and onnxruntime (not torch): scripts/test.sh runs this folder with
PYTHONPATH=.work/pydeps:.ort, which scripts/fetch-minilm.sh and scripts/setup.sh fill.
"""
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _pydeps  # noqa: E402,F401  (a clear error when numpy / onnx / onnxruntime are missing)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onnx_rewrite  # noqa: E402


def dfl_like(opset: int = 18, axis: int = 1):
    """[1, 16, 4, N] -> Softmax(axis) -> 1x1 conv with weights 0..15 (the DFL expectation), plus a last-axis
    Softmax on a second branch that must stay as it is."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 4, "n"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 4, "n"])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 16, 4, "n"])
    w = numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(1, 16, 1, 1), "w")
    nodes = [
        helper.make_node("Softmax", ["x"], ["p"], name="dfl/Softmax", axis=axis),
        helper.make_node("Conv", ["p", "w"], ["y"], name="dfl/Conv"),
        helper.make_node("Softmax", ["x"], ["z"], name="attn/Softmax", axis=-1),
    ]
    graph = helper.make_graph(nodes, "dfl", [x], [y, z], initializer=[w])
    # IR 8, as the Ultralytics exports: onnx writes its newest by default, newer than onnxruntime 1.31 reads.
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


class SoftmaxToReductions(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, opset: int):
        model = dfl_like(opset)
        original = self.dir / f"original-{opset}.onnx"
        onnx.save(model, str(original))
        names = onnx_rewrite.softmax_to_reductions(model)
        self.assertEqual(names, ["dfl/Softmax"])
        onnx.checker.check_model(model)
        ops = [n.op_type for n in model.graph.node]
        self.assertEqual(ops, ["ReduceMax", "Sub", "Exp", "ReduceSum", "Div", "Conv", "Softmax"])
        rewritten = self.dir / f"rewritten-{opset}.onnx"
        onnx.save(model, str(rewritten))
        rng = np.random.default_rng(1)
        # Logits up to +-200: exp() alone would overflow; the max subtraction keeps it finite.
        inputs = [
            (rng.standard_normal((1, 16, 4, n)) * scale).astype(np.float32)
            for n, scale in ((30, 1.0), (7, 200.0))
        ]
        self.assertLess(onnx_rewrite.max_output_difference(original, rewritten, inputs), 1e-4)

    def test_the_dfl_softmax_becomes_reductions_with_the_same_output(self):
        self.check(18)

    def test_before_opset_18_reduce_max_takes_an_axes_attribute(self):
        self.check(13)

    def test_a_last_axis_softmax_and_old_opsets_are_left_alone(self):
        model = dfl_like(axis=3)  # axis 3 of a rank-4 input is the last one
        self.assertEqual(onnx_rewrite.softmax_to_reductions(model), [])
        self.assertEqual([n.op_type for n in model.graph.node], ["Softmax", "Conv", "Softmax"])
        old = dfl_like(opset=11)  # Softmax flattened to 2-D before opset 13: not the same operation
        self.assertEqual(onnx_rewrite.softmax_to_reductions(old), [])

    def test_a_model_that_computes_something_else_is_measured_as_different(self):
        model = dfl_like()
        original = self.dir / "original.onnx"
        onnx.save(model, str(original))
        model.graph.node[1].input[0] = "x"  # the conv now skips the softmax
        model.graph.node[1].input[1] = "w"
        changed = self.dir / "changed.onnx"
        onnx.save(model, str(changed))
        x = np.random.default_rng(2).standard_normal((1, 16, 4, 5)).astype(np.float32)
        self.assertGreater(onnx_rewrite.max_output_difference(original, changed, [x]), 1.0)


if __name__ == "__main__":
    unittest.main()
