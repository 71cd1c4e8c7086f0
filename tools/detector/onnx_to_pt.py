#!/usr/bin/env python3
"""Turn a shipped detector ONNX back into an Ultralytics checkpoint to finetune from (--init-weights).

The project ships only ONNX files (models/*.onnx); their .pt checkpoints stay on the machine that trained them. An
Ultralytics export folds every BatchNorm into the convolution before it (weight and bias), and keeps the module
names (`model.2.m.0.cv1.conv.weight`). So a model built from the same YAML takes those weights back exactly: each
conv gets the folded weight, and its BatchNorm becomes the identity plus the folded bias (gamma 1, beta = bias,
mean 0, var 1 - eps). The checkpoint computes what the ONNX computes (checked here on a random input); training
then moves the BatchNorm statistics on from there.

Usage (from the repository root):
    python tools/detector/onnx_to_pt.py models/minetest-detector.onnx --model-yaml yolo11n.yaml \\
        --out .work/detector/minetest-detector-init.pt
    python tools/detector/train.py --data DATA.yaml --name ft --init-weights .work/detector/minetest-detector-init.pt
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _yolo_env as env  # noqa: E402


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("onnx", help="a detector ONNX exported by Ultralytics (raw output, not --end2end)")
    ap.add_argument("--out", required=True, help="checkpoint to write (.pt)")
    ap.add_argument(
        "--model-yaml",
        default="yolo11n.yaml",
        help="the architecture the ONNX was trained as (a name shipped with ultralytics or a path); default %(default)s",
    )
    ap.add_argument("--tolerance", type=float, default=1e-3, help="largest allowed |torch - onnxruntime| output")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    env.setup_offline(env.REPO / ".work" / "detector" / "yolo-config", threads=2, cpu_only=True)
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    from onnx import numpy_helper
    from ultralytics import YOLO

    src = Path(args.onnx)
    if not src.is_file():
        print(f"onnx_to_pt: no such file {src}", file=sys.stderr)
        return 2
    proto = onnx.load(str(src))
    meta = {p.key: p.value for p in proto.metadata_props}
    if "names" not in meta:
        print(f"onnx_to_pt: {src} has no Ultralytics 'names' metadata", file=sys.stderr)
        return 2
    names = ast.literal_eval(meta["names"])
    weights = {i.name: numpy_helper.to_array(i) for i in proto.graph.initializer}

    model = YOLO(args.model_yaml, task="detect").model
    if model.yaml.get("nc") != len(names):
        model.yaml["nc"] = len(names)
        from ultralytics.nn.tasks import DetectionModel

        model = DetectionModel(model.yaml, nc=len(names), verbose=False)
    model.names = names
    model.eval()

    loaded, missing = 0, []
    with torch.no_grad():
        for mname, mod in model.named_modules():
            conv = getattr(mod, "conv", None)
            bn = getattr(mod, "bn", None)
            if isinstance(conv, torch.nn.Conv2d) and isinstance(bn, torch.nn.BatchNorm2d):
                w, b = weights.get(f"{mname}.conv.weight"), weights.get(f"{mname}.conv.bias")
                if w is None or b is None or tuple(w.shape) != tuple(conv.weight.shape):
                    missing.append(f"{mname}.conv")
                    continue
                conv.weight.copy_(torch.from_numpy(w.copy()))
                bn.weight.fill_(1.0)
                bn.bias.copy_(torch.from_numpy(b.copy()))
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
                loaded += 1
            elif isinstance(mod, torch.nn.Conv2d) and mod.bias is not None and not mname.endswith(".conv"):
                if mname.endswith("dfl.conv"):
                    continue  # fixed arange weights, folded into constants by the export
                w, b = weights.get(f"{mname}.weight"), weights.get(f"{mname}.bias")
                if w is None or b is None or tuple(w.shape) != tuple(mod.weight.shape):
                    missing.append(mname)
                    continue
                mod.weight.copy_(torch.from_numpy(w.copy()))
                mod.bias.copy_(torch.from_numpy(b.copy()))
                loaded += 1
    if missing:
        print(f"onnx_to_pt: {len(missing)} layers not found in {src} (another architecture?): {missing[:8]}",
              file=sys.stderr)
        return 1

    # Same function as the ONNX? Compare the raw outputs on a random input of the ONNX's shape.
    inp = proto.graph.input[0]
    shape = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    sess = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    want = sess.run(None, {inp.name: x})[0]
    with torch.no_grad():
        got = model(torch.from_numpy(x))
    got = (got[0] if isinstance(got, (list, tuple)) else got).numpy()
    diff = float(np.abs(got - want).max()) if got.shape == want.shape else float("inf")
    print(f"onnx_to_pt: {loaded} layers loaded; max |torch - onnxruntime| = {diff:.2e} on {shape}")
    if not diff <= args.tolerance:
        print(f"onnx_to_pt: outputs differ (shape {got.shape} vs {want.shape}); not writing {args.out}",
              file=sys.stderr)
        return 1

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    torch.save({"model": model.float(), "train_args": {}, "source_onnx": str(src),
                "source_sha256": env.sha256_file(src)}, tmp)
    tmp.replace(out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
