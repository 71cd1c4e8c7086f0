"""Graph rewrites for an exported detector: the same function, cheaper for ONNX Runtime's CPU kernels.

`softmax_to_reductions`: Ultralytics' DFL head takes a Softmax over axis 1 of a [1, 16, 4, N] tensor (16 distance
bins per box side). ONNX Runtime computes a softmax that is not over the last axis through transposes, which took
4.2 ms of about 80 ms for YOLO11n at 384x640 on one thread of the development machine. The same softmax written as
ReduceMax, Sub, Exp, ReduceSum and Div (what Softmax is defined as) takes about 1 ms there. A softmax over the last
axis is left alone: ONNX Runtime's own kernel is the fast path for it.

Needs only onnx (and numpy + onnxruntime for `max_output_difference`), not torch: export.py applies it after the
Ultralytics export, and tests/test_onnx_rewrite.py runs it in CI with the packages scripts/fetch-minilm.sh installs.
"""

from __future__ import annotations

from pathlib import Path


def _opset(model) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def _ranks(model) -> dict[str, int]:
    """Rank of every tensor whose shape inference knows it."""
    import onnx

    inferred = onnx.shape_inference.infer_shapes(model)
    g = inferred.graph
    out = {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        t = vi.type.tensor_type
        if t.HasField("shape"):
            out[vi.name] = len(t.shape.dim)
    return out


def softmax_to_reductions(model) -> list[str]:
    """Rewrite, in place, every Softmax that is not over its input's last axis; return the rewritten node names.

    Only opset >= 13 graphs (where Softmax is over one axis; before that it flattened to 2-D) are touched.
    """
    from onnx import TensorProto, helper

    opset = _opset(model)
    if opset < 13:
        return []
    ranks = _ranks(model)
    g = model.graph
    done = []
    i = 0
    while i < len(g.node):
        node = g.node[i]
        rank = ranks.get(node.input[0]) if node.op_type == "Softmax" else None
        axis = next((a.i for a in node.attribute if a.name == "axis"), -1)
        if rank is None or axis % rank == rank - 1:
            i += 1
            continue
        x, y, p = node.input[0], node.output[0], node.name or f"softmax_{i}"
        axes = f"{p}/axes"
        g.initializer.append(helper.make_tensor(axes, TensorProto.INT64, [1], [axis % rank]))
        if opset >= 18:  # ReduceMax takes its axes as an input from opset 18, ReduceSum from 13
            reduce_max = helper.make_node("ReduceMax", [x, axes], [f"{p}/max"], name=f"{p}/ReduceMax", keepdims=1)
        else:
            reduce_max = helper.make_node(
                "ReduceMax", [x], [f"{p}/max"], name=f"{p}/ReduceMax", keepdims=1, axes=[axis % rank]
            )
        new = [
            reduce_max,
            helper.make_node("Sub", [x, f"{p}/max"], [f"{p}/shifted"], name=f"{p}/Sub"),
            helper.make_node("Exp", [f"{p}/shifted"], [f"{p}/exp"], name=f"{p}/Exp"),
            helper.make_node("ReduceSum", [f"{p}/exp", axes], [f"{p}/sum"], name=f"{p}/ReduceSum", keepdims=1),
            helper.make_node("Div", [f"{p}/exp", f"{p}/sum"], [y], name=f"{p}/Div"),
        ]
        del g.node[i]
        for k, n in enumerate(new):
            g.node.insert(i + k, n)
        done.append(p)
        i += len(new)
    return done


def max_output_difference(a: Path, b: Path, inputs: list) -> float:
    """Largest |a - b| over the first output of two models run by onnxruntime on the same inputs (one thread)."""
    import numpy as np
    import onnxruntime as ort

    def session(path):
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])

    sa, sb = session(a), session(b)
    name = sa.get_inputs()[0].name
    worst = 0.0
    for x in inputs:
        ya = sa.run(None, {name: x})[0]
        yb = sb.run(None, {name: x})[0]
        diff = np.abs(ya - yb) if ya.shape == yb.shape else None
        if diff is None or not np.isfinite(diff).all():  # NaN would slip through max()
            return float("inf")
        worst = max(worst, float(diff.max()))
    return worst
