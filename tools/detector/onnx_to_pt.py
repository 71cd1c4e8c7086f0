#!/usr/bin/env python3
"""Turn a shipped detector ONNX back into an Ultralytics checkpoint to finetune from (--init-weights).

The project ships only ONNX files (models/*.onnx); their .pt checkpoints stay on the machine that trained them. An
Ultralytics export folds every BatchNorm into the convolution before it (weight and bias), and keeps the module
names (`model.2.m.0.cv1.conv.weight`). So a model built from the same YAML takes those weights back exactly: each
conv gets the folded weight, and its BatchNorm becomes the identity plus the folded bias (gamma 1, beta = bias,
mean 0, var 1 - eps). The checkpoint computes what the ONNX computes (checked here on a random input).

In training mode a BatchNorm normalises by the batch's own statistics, so the identity above would turn into a
different function at the first training step (the first epochs of a finetune relearn what the ONNX knew).
`--calibrate IMAGES` fixes that: it runs real frames through the model, measures every BatchNorm input's
per-channel mean m and variance v, and sets mean m, var v, gamma sqrt(v + eps), beta m + bias: inference is still
exactly the ONNX, and a training batch like those frames passes through nearly unchanged.

Usage (from the repository root):
    python tools/detector/onnx_to_pt.py models/minetest-detector.onnx --model-yaml yolo11n.yaml \\
        --out .work/detector/minetest-detector-init.pt
    python tools/detector/train.py --data DATA.yaml --name ft --init-weights .work/detector/minetest-detector-init.pt
    # continuing a shipped model's training: calibrate its BatchNorms on training frames
    # (the float file: models/minecraft-detector.onnx itself is int8)
    python tools/detector/onnx_to_pt.py models/minecraft-detector-fp32.onnx --out .work/detector/mc-init.pt \
        --calibrate .work/detector/data/train/images
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _yolo_env as env  # noqa: E402
from letterbox import PAD_VALUE, letterbox_file  # noqa: E402


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("onnx", help="a detector ONNX exported by Ultralytics (raw output, not --end2end)")
    ap.add_argument("--out", required=True, help="checkpoint to write (.pt)")
    ap.add_argument(
        "--model-yaml",
        default="yolo11n.yaml",
        help="the architecture the ONNX was trained as (a name shipped with ultralytics or a path); default %(default)s",
    )
    ap.add_argument(
        "--calibrate",
        metavar="IMAGES",
        help="a folder of training frames to set the BatchNorm statistics from (for continuing training)",
    )
    ap.add_argument("--calibrate-images", type=int, default=64, help="how many frames (evenly spread); default %(default)s")
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
    if any(n.op_type == "DequantizeLinear" for n in proto.graph.node):
        fp32 = src.with_name(src.stem + "-fp32" + src.suffix)
        print(f"onnx_to_pt: {src} is quantized (int8, quantize.py): give the float model it was made from "
              f"({fp32} for a shipped one; its .export.json names the source under quantization.source)",
              file=sys.stderr)
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
    dims = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    if len(dims) == 4 and not (dims[2] and dims[3]):
        # A dynamic-size export (export.py --dynamic): its export size is in the metadata.
        imgsz = ast.literal_eval(meta.get("imgsz", "[640, 640]"))
        h, w = (imgsz, imgsz) if isinstance(imgsz, int) else imgsz
        dims[2:] = [h, w]
    shape = [d or 1 for d in dims]
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

    if args.calibrate:
        frames = calibration_batch(Path(args.calibrate), args.calibrate_images, shape[2], shape[3])
        if frames is None:
            print(f"onnx_to_pt: no .jpg/.png frames in {args.calibrate}", file=sys.stderr)
            return 2
        calibrate(model, torch.from_numpy(frames))
        with torch.no_grad():
            again = model(torch.from_numpy(x))
        again = (again[0] if isinstance(again, (list, tuple)) else again).numpy()
        drift = float(np.abs(again - want).max())
        print(f"onnx_to_pt: BatchNorms calibrated on {len(frames)} frames of {args.calibrate}; "
              f"max |torch - onnxruntime| = {drift:.2e}")
        if not drift <= args.tolerance:
            print("onnx_to_pt: calibration changed the function; not writing", file=sys.stderr)
            return 1

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    torch.save({"model": model.float(), "train_args": {}, "source_onnx": str(src),
                "source_sha256": env.sha256_file(src)}, tmp)
    tmp.replace(out)
    print(f"wrote {out}")
    return 0


def calibration_batch(folder: Path, count: int, h: int, w: int):
    """COUNT frames evenly spread over FOLDER, letterboxed to H x W as the exporter's input ([N, 3, H, W], 0..1)."""
    import numpy as np

    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    if not files:
        return None
    picks = [files[round(i * (len(files) - 1) / max(count - 1, 1))] for i in range(min(count, len(files)))]
    out = np.full((len(picks), 3, h, w), PAD_VALUE / 255, np.float32)
    for k, p in enumerate(picks):
        frame = letterbox_file(p, h, w)
        if frame is not None:
            out[k] = frame
    return out


def calibrate(model, frames) -> None:
    """Set every BatchNorm's statistics to those of its input on FRAMES, keeping inference unchanged (see top)."""
    import torch

    stats = {}

    def hook(bn):
        def grab(_mod, inputs, _out):
            x = inputs[0].double()
            stats[bn] = (x.mean(dim=(0, 2, 3)), x.var(dim=(0, 2, 3), unbiased=False))

        return grab

    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    handles = [bn.register_forward_hook(hook(bn)) for bn in bns]
    model.eval()
    with torch.no_grad():
        for i in range(0, len(frames), 8):  # the model is exact in eval mode, so one pass measures every layer
            batch = frames[i : i + 8]
            part = {}
            stats.clear()
            model(batch)
            part.update(stats)
            for bn, (m, v) in part.items():
                acc = getattr(bn, "_calib", None)
                n = len(batch)
                if acc is None:
                    bn._calib = [m * n, (v + m * m) * n, n]
                else:
                    acc[0] += m * n
                    acc[1] += (v + m * m) * n
                    acc[2] += n
    for h in handles:
        h.remove()
    with torch.no_grad():
        for bn in bns:
            if not hasattr(bn, "_calib"):
                continue
            s1, s2, n = bn._calib
            del bn._calib
            mean = s1 / n
            var = (s2 / n - mean * mean).clamp_min(0.0)
            bias = bn.bias.double().clone()  # the folded conv bias (gamma is 1, mean 0, var 1 - eps here)
            bn.running_mean.copy_(mean.float())
            bn.running_var.copy_(var.float())
            bn.weight.copy_(torch.sqrt(var + bn.eps).float())
            bn.bias.copy_((mean + bias).float())


if __name__ == "__main__":
    sys.exit(main())
