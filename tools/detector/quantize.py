#!/usr/bin/env python3
"""Quantize an exported detector to 8-bit integers (ONNX Runtime static QDQ) and verify it.

Usage (repository root, the detector venv):
    python tools/detector/quantize.py .work/detector/exports/s16-dyn640.onnx \\
        --out models/minecraft-detector.onnx [--data .work/detector/data] [--images 64] [--seed 0]

Why: on a CPU the int8 convolutions of ONNX Runtime do the same network in about 2/3 of the float
time (YOLO11n, one thread, 640x384: 71 -> 51 ms on an AVX2 machine), which is what the 60 ms target
of a 1280x720 frame needs.

What is kept in float, and why (each chosen on val, `vistawise eval`, see tools/detector/README.md):
- the Detect head's last 1x1 convolutions, the DFL and the box decoding: box coordinates (input
  pixels) and class scores share one output tensor, and one 8-bit scale for both wipes out the scores;
- the first blocks (`--float-blocks`, default 0,1,2: the stem at full resolution): quantizing the
  stem alone cost 0.02 val mAP50 and 0.05 trunk AP50; in float they cost almost no time.
Settings: activations uint8 with percentile calibration (MinMax lets a few outlier activations
stretch the scale: -0.015 val mAP50), weights int8 per channel with reduce_range (7-bit): on CPUs
without VNNI, ONNX Runtime's u8s8 kernel can saturate with 8-bit weights, and 7-bit weights give
the same numbers on every CPU at the same speed.

Calibration frames: --images frames of the --split (train: never val or test) of the dataset,
drawn with random.Random(--seed) from the sorted file list, each letterboxed into the export's
full input size (grey 114, centred, OpenCV bilinear, as vistawise and Ultralytics do). The
percentile calibration (the default) keeps one frame's activations in memory at a time and gives
the same ranges, so the same bytes, as onnxruntime's own, which holds all of them (64 frames of
YOLO11n at 640x384: 1.1 GB peak instead of about 19 GB); --method minmax and entropy use
onnxruntime's calibration as it is.

The check after quantizing: on --check-images other frames of the same split, the class scores of
every anchor the float model scores >= 0.25 must agree within --tolerance (mean |difference|); the
result goes into the sidecar. The sidecar `<out>.export.json` is the float model's (training,
export) with the new sha256 and a `quantization` section (source file and sha256, settings,
calibration frames, float nodes, check), so model_card.py writes the card as for any export.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _yolo_env as env  # noqa: E402
from letterbox import letterbox_file  # noqa: E402

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp"}
SCORE_FLOOR = 0.25  # anchors the float model scores at least this (vistawise's default detector.conf)
# The Detect head's feature convolutions (cv2.i.0/1 for boxes, cv3.i.0/1 for classes) are quantized;
# everything else in the head (its last 1x1 convs, DFL, decoding, concat) stays float.
HEAD_FEATURE = re.compile(r"/cv[23]\.\d+/cv[23]\.\d+\.[01]/")
BLOCK = re.compile(r"^/model\.(\d+)/")


class QuantizeError(Exception):
    """A problem with the inputs or the result, named with its file."""


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", type=Path, help="the float ONNX from export.py (its .export.json must sit next to it)")
    ap.add_argument("--out", type=Path, required=True, help="the int8 ONNX to write (and OUT.export.json)")
    ap.add_argument("--data", type=Path, default=env.REPO / ".work" / "detector" / "data",
                    help="dataset root with SPLIT/images (build_dataset.py's layout)")
    ap.add_argument("--split", default="train", choices=["train"],
                    help="calibration frames come from the training split only")
    ap.add_argument("--images", type=int, default=64, help="calibration frames")
    ap.add_argument("--check-images", type=int, default=16, help="other frames for the float-vs-int8 check")
    ap.add_argument("--seed", type=int, default=0, help="which frames (random.Random(seed) over the sorted list)")
    ap.add_argument("--float-blocks", default="0,1,2",
                    help="comma-separated Ultralytics block indices (/model.N/) kept in float ('' = none)")
    ap.add_argument("--method", default="percentile", choices=["percentile", "minmax", "entropy"],
                    help="activation calibration")
    ap.add_argument("--tolerance", type=float, default=0.05,
                    help="largest mean |score difference| allowed on anchors the float model scores >= 0.25")
    return ap.parse_args(argv)


def parse_blocks(text: str) -> list[int]:
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if not part.isdigit():
            raise QuantizeError(f"--float-blocks: {part!r} is not a block index (expected e.g. 0,1,2)")
        out.append(int(part))
    return sorted(set(out))


def float_nodes(node_names: list[str], float_blocks: list[int]) -> list[str]:
    """The nodes that stay float: the chosen blocks, and the Detect head (the last block) except its
    feature convolutions."""
    blocks = {int(m.group(1)) for m in map(BLOCK.match, node_names) if m}
    if not blocks:
        raise QuantizeError("no /model.N/ node names: not an Ultralytics export")
    head = max(blocks)
    missing = [b for b in float_blocks if b not in blocks]
    if missing:
        raise QuantizeError(f"--float-blocks {missing}: the model has blocks 0..{head}")
    keep = []
    for name in node_names:
        m = BLOCK.match(name)
        if not m:
            continue
        block = int(m.group(1))
        if block in float_blocks or (block == head and not HEAD_FEATURE.search(name)):
            keep.append(name)
    return keep


def pick_frames(images_dir: Path, count: int, check: int, seed: int) -> tuple[list[Path], list[Path]]:
    """Calibration frames and (other) check frames, reproducible from the seed."""
    if not images_dir.is_dir():
        raise QuantizeError(f"{images_dir}: no such folder (build the dataset with build_dataset.py)")
    files = sorted(p for p in images_dir.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if len(files) < count + check:
        raise QuantizeError(f"{images_dir}: {len(files)} images, {count} + {check} needed")
    chosen = random.Random(seed).sample(files, count + check)
    return chosen[:count], chosen[count:]


def load_frame(path: Path, height: int, width: int):
    """[1, 3, height, width] float32, as vistawise feeds the network."""
    frame = letterbox_file(path, height, width)
    if frame is None:
        raise QuantizeError(f"{path}: not a readable image")
    return frame[None]


class Frames:
    """onnxruntime's CalibrationDataReader protocol over prepared tensors."""

    def __init__(self, input_name: str, tensors):
        self.input_name = input_name
        self.tensors = list(tensors)
        self.next_index = 0

    def get_next(self):
        if self.next_index >= len(self.tensors):
            return None
        self.next_index += 1
        return {self.input_name: self.tensors[self.next_index - 1]}

    def rewind(self):
        self.next_index = 0


def static_settings(keep_float: list[str]) -> dict:
    """quantize_static's arguments besides the model, the calibration and its method."""
    from onnxruntime.quantization import QuantFormat, QuantType

    return dict(
        quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
        per_channel=True, reduce_range=True, nodes_to_exclude=keep_float,
    )  # fmt: skip


def quantize(src: Path, dst: Path, input_name: str, tensors, keep_float: list[str], method: str) -> None:
    from onnxruntime.quantization import CalibrationMethod, quantize_static

    settings = static_settings(keep_float)
    if method == "percentile":
        # The ranges are computed here one frame at a time and given to quantize_static as its calibration cache.
        with tempfile.TemporaryDirectory(dir=dst.parent) as work:
            cache = percentile_ranges(src, input_name, tensors, Path(work))
            quantize_static(str(src), str(dst), None, calibrate_method=CalibrationMethod.Percentile,
                            calibration_cache_path=str(cache), **settings)  # fmt: skip
        return
    # MinMax and entropy: onnxruntime's own calibration, which holds every frame's activations at once.
    methods = {"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy}
    quantize_static(str(src), str(dst), Frames(input_name, tensors), calibrate_method=methods[method], **settings)


def percentile_ranges(src: Path, input_name: str, tensors, workdir: Path) -> Path:
    """onnxruntime's percentile calibration with one frame's activations in memory instead of all of them.

    quantize_static keeps every activation of every calibration frame until it builds the histograms (64 frames of
    YOLO11n at 640x384: a peak of about 19 GB, enough to be killed on a 16 GB machine). The same histograms come out
    of two passes over the frames: the first finds each tensor's range, which fixes the bin edges np.histogram would
    pick for all frames at once; the second counts into those edges. Counts, edges and ranges are identical, so the
    thresholds and the model bytes are the same as onnxruntime's own (tested against it). Returns the calibration
    cache it writes into `workdir`, for quantize_static's calibration_cache_path.
    """
    import numpy as np
    from onnxruntime.quantization.calibrate import (
        CalibrationMethod, HistogramCollector, TensorsData, create_calibrator, save_tensors_data,
    )  # fmt: skip
    from onnxruntime.quantization.registry import QDQRegistry, QLinearOpsRegistry

    op_types = sorted(set(QLinearOpsRegistry) | set(QDQRegistry))  # what quantize_static calibrates by default
    calibrator = create_calibrator(Path(src), op_types, augmented_model_path=str(workdir / "augmented_model.onnx"),
                                   calibrate_method=CalibrationMethod.Percentile)  # fmt: skip
    if not calibrator.symmetric:
        raise QuantizeError("onnxruntime's percentile calibrator is not symmetric here: unsupported version")
    outputs = [o.name for o in calibrator.infer_session.get_outputs()]
    wanted = [(i, name) for i, name in enumerate(outputs) if name in calibrator.tensors_to_calibrate]

    def activations():
        for x in tensors:
            result = calibrator.infer_session.run(None, {input_name: x})
            yield [(name, result[i]) for i, name in wanted]

    ranges = {}  # name -> [min, max, min |x|, max |x|], float32 like the tensors
    for frame in activations():
        for name, a in frame:
            if a.size == 0:
                raise QuantizeError(f"{src}: tensor {name} is empty on a calibration frame")
            absolute = np.absolute(a)
            seen = (np.nanmin(a), np.nanmax(a), absolute.min(), absolute.max())
            old = ranges.get(name)
            ranges[name] = list(seen) if old is None else [
                np.minimum(old[0], seen[0]), np.maximum(old[1], seen[1]),
                np.minimum(old[2], seen[2]), np.maximum(old[3], seen[3]),
            ]  # fmt: skip
    edges = {n: np.histogram_bin_edges(np.array(r[2:], dtype=r[2].dtype), bins=calibrator.num_bins)
             for n, r in ranges.items()}  # fmt: skip
    counts = {n: np.zeros(calibrator.num_bins, dtype=np.intp) for n in ranges}
    for frame in activations():
        for name, a in frame:
            counts[name] += np.histogram(np.absolute(a).ravel(), bins=edges[name])[0]

    collector = HistogramCollector(method=calibrator.method, symmetric=True, num_bins=calibrator.num_bins,
                                   num_quantized_bins=calibrator.num_quantized_bins,
                                   percentile=calibrator.percentile, scenario=calibrator.scenario)  # fmt: skip
    for _, name in wanted:
        collector.histogram_dict[name] = (counts[name], edges[name], *ranges[name][:2])
    cache = workdir / "calibration.json"  # quantize_static's calibration cache format
    save_tensors_data(TensorsData(CalibrationMethod.Percentile, collector.compute_collection_result()), cache)
    return cache


def score_agreement(float_out, int8_out, classes_from: int = 4) -> dict:
    """Mean and max |class score difference| over the anchors the float model scores >= SCORE_FLOOR.
    Outputs are [1, 4 + nc, N] (Ultralytics' raw head)."""
    import numpy as np

    a = np.asarray(float_out)[0, classes_from:]
    b = np.asarray(int8_out)[0, classes_from:]
    if a.shape != b.shape:
        raise QuantizeError(f"output shapes differ: float {a.shape}, int8 {b.shape}")
    hot = a.max(axis=0) >= SCORE_FLOOR
    if not hot.any():
        return {"anchors": 0, "mean_abs": 0.0, "max_abs": 0.0}
    diff = np.abs(a[:, hot] - b[:, hot])
    return {"anchors": int(hot.sum()), "mean_abs": float(diff.mean()), "max_abs": float(diff.max())}


def check(src: Path, dst: Path, input_name: str, tensors, tolerance: float) -> dict:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sessions = [ort.InferenceSession(str(p), opts, providers=["CPUExecutionProvider"]) for p in (src, dst)]
    per_frame = []
    for x in tensors:
        f, q = (s.run(None, {input_name: x})[0] for s in sessions)
        per_frame.append(score_agreement(f, q))
    anchors = sum(r["anchors"] for r in per_frame)
    if anchors == 0:
        raise QuantizeError("the float model scores no anchor >= 0.25 on the check frames: pick other frames")
    mean_abs = sum(r["mean_abs"] * r["anchors"] for r in per_frame) / anchors
    result = {"frames": len(tensors), "anchors": anchors, "mean_abs_score_difference": mean_abs,
              "max_abs_score_difference": max(r["max_abs"] for r in per_frame), "tolerance": tolerance}
    if not mean_abs <= tolerance:
        raise QuantizeError(f"{dst}: class scores differ from the float model's by {mean_abs:.3f} on average "
                            f"(tolerance {tolerance}); nothing written")
    return result


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    args.argv = argv
    try:
        return run(args)
    except QuantizeError as e:
        print(f"quantize: {e}", file=sys.stderr)
        return 1


def run(args) -> int:
    import onnx

    if not args.model.is_file():
        raise QuantizeError(f"{args.model}: no such file")
    try:
        sidecar, source_sha = env.read_export_sidecar(args.model)
    except ValueError as e:
        raise QuantizeError(str(e)) from e
    if "quantization" in sidecar:
        raise QuantizeError(f"{args.model} is already quantized")
    if args.out.resolve() == args.model.resolve():
        raise QuantizeError("--out must differ from the float model")

    model = onnx.load(str(args.model), load_external_data=False)
    input_name = model.graph.input[0].name
    height, width = sidecar["export"]["imgsz_hw"]
    float_blocks = parse_blocks(args.float_blocks)
    keep_float = float_nodes([n.name for n in model.graph.node], float_blocks)

    calib_files, check_files = pick_frames(args.data / args.split / "images", args.images, args.check_images, args.seed)
    print(f"quantize: {len(calib_files)} calibration frames from {env.rel(args.data / args.split)}, "
          f"{len(keep_float)} of {len(model.graph.node)} nodes kept float", file=sys.stderr)
    calib = [load_frame(p, height, width) for p in calib_files]
    checks = [load_frame(p, height, width) for p in check_files]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # Written and checked beside --out, then renamed: a failure never leaves a model there.
    with tempfile.TemporaryDirectory(dir=args.out.parent) as tmp:
        staged = Path(tmp) / args.out.name
        quantize(args.model, staged, input_name, calib, keep_float, args.method)
        result = check(args.model, staged, input_name, checks, args.tolerance)
        digest = env.sha256_file(staged)
        staged.replace(args.out)

    import onnxruntime

    size = args.out.stat().st_size
    sidecar.update(file=args.out.name, sha256=digest, size_bytes=size)
    sidecar["quantization"] = {
        "command": ["python", "tools/detector/quantize.py", *argv_for_record(args.argv)],
        "source": {"file": env.rel(args.model), "sha256": source_sha},
        "format": "QDQ (onnxruntime.quantization.quantize_static)",
        "activations": "uint8", "weights": "int8 per channel, reduce_range (7-bit)",
        "calibration": {"method": args.method, "split": args.split, "dataset": env.rel(args.data),
                        "seed": args.seed, "frames": [p.name for p in calib_files], "input_hw": [height, width]},
        "float_blocks": float_blocks,
        "float_nodes": len(keep_float),
        "check": {**result, "frames_used": [p.name for p in check_files]},
        "onnxruntime": onnxruntime.__version__,
    }  # fmt: skip
    env.atomic_write_json(args.out.with_name(args.out.name + ".export.json"), sidecar)
    print(f"quantize: wrote {args.out} ({size} bytes); class scores within "
          f"{result['mean_abs_score_difference']:.4f} (mean) of the float model's on {result['anchors']} anchors",
          file=sys.stderr)
    return 0


def argv_for_record(argv: list[str]) -> list[str]:
    """The command as given, with paths inside the repository made relative (no local paths in the card)."""
    out = []
    for a in argv:
        p = Path(a)
        out.append(env.rel(p) if p.is_absolute() else a)
    return out


if __name__ == "__main__":
    sys.exit(main())
