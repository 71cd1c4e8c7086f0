#!/usr/bin/env python3
"""Reference detection metrics for an exported ONNX model, computed by Ultralytics' own `val` (the numbers that
`vistawise eval` must reproduce within 0.01).

Usage (from the repository root):
    python tools/detector/val_reference.py models/minecraft-detector.onnx .work/detector/data/data.yaml \\
        --split val --out .work/detector/val-reference.json

Fixed settings (Ultralytics 8.4.190 val defaults, written into the JSON under "settings"):
    conf=0.001, iou=0.7 (class-wise NMS, multi_label=True: one box may count for several classes), max_det=300
    (Ultralytics raises it to the largest object count of one image if that is higher), batch=1, single_cls=False,
    agnostic_nms=False, augment=False, fp32 (quantize=None), plots=False, device=cpu.
    imgsz = the ONNX input [h, w] from its metadata; rect=False (Ultralytics forces square-batch/fixed-shape mode for
    a non-dynamic ONNX, so every image gets the same [h, w] canvas; no rect batches).
Preprocessing (Ultralytics val dataloader, not the predict path):
    1. load_image: resize so that the LONG side = max(h, w) (ceil of each side, cv2.INTER_LINEAR; images smaller than
       that are UPscaled), 2. LetterBox(new_shape=(h, w), scaleup=False, center=True, pad value 114): scale down to fit
       (round each side, cv2.INTER_LINEAR), pad top/left = round(d/2 - 0.1), bottom/right = round(d/2 + 0.1),
    3. BGR->RGB, /255, NCHW float32.
Matching: predictions and ground truth are compared in the letterboxed input space (IoU on [h, w] canvas boxes),
at IoU thresholds 0.50:0.05:0.95: detections in descending confidence each claim the unclaimed same-class ground
truth with the highest IoU, separately per threshold (Ultralytics match_predictions, use_scipy=False).
AP: per class, COCO-style 101-point interpolated area under the monotone precision envelope; classes with no ground
truth in the split are left out of every mean (their per-class AP is null here). Precision/recall: per class at the
one confidence that maximises the (smoothed, 0.1) mean F1 over classes; mean precision/recall = mean over classes
with ground truth.

The script does not write label caches into the dataset folder (the held-out test set stays untouched).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _yolo_env as env  # noqa: E402

SETTINGS = dict(
    batch=1,
    conf=0.001,
    iou=0.7,
    max_det=300,
    rect=False,
    single_cls=False,
    agnostic_nms=False,
    augment=False,
    plots=False,
    save_json=False,
    save_txt=False,
    device="cpu",
    workers=0,
)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="exported .onnx")
    ap.add_argument("data", help="data.yaml (or its folder)")
    ap.add_argument("--split", choices=("val", "test"), default="val")
    ap.add_argument("--out", required=True, help="output JSON")
    ap.add_argument("--threads", type=int, default=None, help="CPU threads (default: cpu_count-1, max 8)")
    return ap.parse_args(argv)


def r6(x):
    return None if x is None else round(float(x), 6)


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.time()
    model_path = Path(args.model).expanduser().resolve()
    if not model_path.is_file():
        raise SystemExit(f"error: model not found: {model_path}")
    data_yaml = env.resolve_data_yaml(args.data)
    if not env.load_yaml(data_yaml).get(args.split):
        raise SystemExit(f"error: {data_yaml} has no '{args.split}' split")
    out = Path(args.out).expanduser().resolve()
    threads = args.threads or env.default_threads()
    env.setup_offline(env.REPO / ".work" / "detector" / ".ultralytics-config", threads, cpu_only=True)

    import ultralytics

    env.check_ultralytics_version()
    env.pin_threads(threads)
    import ultralytics.data.dataset as udd
    from ultralytics import YOLO

    def _no_cache_file(prefix, path, x, version):  # never write *.cache into the dataset (shared, read-only)
        x["version"] = version

    udd.save_dataset_cache_file = _no_cache_file

    captured = {}

    def on_val_end(validator):
        captured["v"] = validator

    model = YOLO(str(model_path), task="detect")
    model.add_callback("on_val_end", on_val_end)
    work = Path(tempfile.mkdtemp(prefix="vistawise-val-"))
    cwd = os.getcwd()
    os.chdir(data_yaml.parent)  # data.yaml files with `path: .` resolve against the cwd (Ultralytics rule)
    try:
        metrics = model.val(
            data=data_yaml.name, split=args.split, project=str(work), name="val", exist_ok=True, verbose=True, **SETTINGS
        )
    finally:
        os.chdir(cwd)
        shutil.rmtree(work, ignore_errors=True)
    v = captured["v"]
    va = v.args
    box = metrics.box
    names = env.names_list(metrics.names)
    nt_cls = [int(x) for x in metrics.nt_per_class]
    nt_img = [int(x) for x in metrics.nt_per_image]
    idx = {int(c): i for i, c in enumerate(box.ap_class_index)}
    per_class = []
    for c, name in enumerate(names):
        i = idx.get(c)
        per_class.append(
            {
                "id": c,
                "name": name,
                "images": nt_img[c] if c < len(nt_img) else 0,
                "instances": nt_cls[c] if c < len(nt_cls) else 0,
                "precision": r6(box.p[i]) if i is not None else None,
                "recall": r6(box.r[i]) if i is not None else None,
                "ap50": r6(box.ap50[i]) if i is not None else None,
                "ap50_95": r6(box.ap[i]) if i is not None else None,
                "ap_per_iou": [r6(a) for a in box.all_ap[i]] if i is not None else None,
            }
        )
    ds = v.dataloader.dataset
    imgsz = [int(x) for x in (va.imgsz if isinstance(va.imgsz, (list, tuple)) else (va.imgsz, va.imgsz))]
    result = {
        "tool": "tools/detector/val_reference.py",
        "ultralytics": ultralytics.__version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "model": {"file": model_path.name, "path": env.rel(model_path), "sha256": env.sha256_file(model_path)},
        "data": {"yaml": env.rel(data_yaml), "split": args.split, "images": [env.rel(p) for p in env.split_dirs(data_yaml, args.split)]},
        "settings": {
            "imgsz": imgsz,
            "batch": int(va.batch),
            "conf": float(va.conf),
            "iou": float(va.iou),
            "max_det": int(va.max_det),
            "rect": bool(getattr(ds, "rect", va.rect)),
            "single_cls": bool(va.single_cls),
            "agnostic_nms": bool(va.agnostic_nms),
            "multi_label": True,
            "end2end_model": bool(getattr(v, "end2end", False)),
            "augment": bool(va.augment),
            "quantize": va.quantize,  # None = fp32
            "letterbox": {
                "load_resize": "long side -> max(imgsz) (each side ceil'd, capped), cv2.INTER_LINEAR, small images upscaled",
                "canvas": imgsz,
                "scaleup": False,
                "center": True,
                "pad_value": 114,
                "pad_rounding": "top/left = round(d/2 - 0.1), bottom/right = round(d/2 + 0.1)",
                "interpolation": "cv2.INTER_LINEAR",
            },
            "match_space": "letterboxed input canvas",
            "matching": (
                "per image; detections (NMS output, conf descending) in turn claim, at each IoU threshold separately, "
                "the unclaimed same-class ground-truth box with the highest IoU (first in label order on ties); "
                "TP if that IoU >= threshold (Ultralytics match_predictions, use_scipy=False)"
            ),
            "iou_thresholds": [round(0.5 + 0.05 * k, 2) for k in range(10)],
            "ap_method": (
                "per class, predictions sorted by conf desc; recall = tpc/n_gt, precision = tpc/(tpc+fpc); "
                "mrec = [0, recall, recall[-1], 1], mpre = [1, precision, 0, 0], envelope = reverse cumulative max; "
                "AP = trapezoid(interp(linspace(0, 1, 101), mrec, mpre)) (COCO 101-point); mAP = mean over classes "
                "with ground truth (AP 0 if never predicted); predictions of classes without ground truth are ignored"
            ),
            "pr_operating_point": (
                "p/r curves interpolated at conf = linspace(0, 1, 1000); one index = argmax of smooth(mean F1 over "
                "classes with ground truth, 0.1) shared by all classes; precision/recall totals = mean over those classes"
            ),
        },
        "totals": {
            "images": len(ds),
            "instances": int(sum(nt_cls)),
            "classes_with_gt": len(idx),
            "precision": r6(box.mp),
            "recall": r6(box.mr),
            "mAP50": r6(box.map50),
            "mAP50-95": r6(box.map),
            "mAP75": r6(box.map75),
        },
        "per_class": per_class,
        "speed_ms_per_image": {k: round(float(x), 3) for k, x in (metrics.speed or {}).items()},
    }
    if result["settings"]["end2end_model"]:
        exp = model_path.with_name(model_path.name + ".export.json")
        baked = {}
        if exp.exists():
            e = json.loads(exp.read_text()).get("export", {})
            baked = {k: e.get(k) for k in ("conf", "iou", "max_det", "agnostic_nms")}
        result["settings"]["nms_in_graph"] = {
            "note": "NMS runs inside the ONNX graph with thresholds baked in at export; val's conf/iou/max_det only "
            "filter its [1, max_det, 6] output, so these numbers are not comparable with a raw-output model's",
            **baked,
        }
    out.parent.mkdir(parents=True, exist_ok=True)
    env.atomic_write_json(out, result)
    t = result["totals"]
    print(
        f"[val_reference] {model_path.name} on {args.split} ({t['images']} images, {t['instances']} instances): "
        f"mAP50={t['mAP50']:.4f} mAP50-95={t['mAP50-95']:.4f} P={t['precision']:.4f} R={t['recall']:.4f} "
        f"imgsz={imgsz} -> {env.rel(out)} ({time.time() - t0:.0f}s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
