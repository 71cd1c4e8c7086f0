#!/usr/bin/env python3
"""Which truth boxes a detector misses, by their shape: recall of one class at IoU 0.5 for truth
boxes that touch the image border or not, and that are thin (shorter side under --thin pixels)
or not. It answers "what kind of box keeps AP down" where `vistawise eval` gives one number:
for the real trunk tiles, the thin strips that the 2x2 tiling cut off at a tile's edge.

Reads the detections `vistawise detect FOLDER --json` printed (one JSON object per image) and the
split's YOLO label files (standard library only):

    vistawise detect DATA/val/images --json --conf 0.25 > val.jsonl
    python3 tools/detector/recall_by_shape.py val.jsonl DATA/val/labels --class-id 0 [--prefix brad_] [--json]

Matching is greedy by confidence, same class, each truth claimed once (as `vistawise eval`).
The "ceiling" line is the recall the detector would have if it found every box except the thin
ones: an upper bound on AP50 while thin boxes stay unfound.
"""
import argparse
import json
import sys
from pathlib import Path

GROUPS = ("edge-thin", "edge-wide", "inner-thin", "inner-wide")


def iou(a: list[float], b: list[float]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def read_truths(label: Path, class_id: int, width: int, height: int) -> list[list[float]]:
    boxes = []
    for n, line in enumerate(label.read_text().splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            cls, cx, cy, w, h = int(parts[0]), *map(float, parts[1:5])
        except (ValueError, IndexError):
            sys.exit(f"{label}:{n}: expected `class cx cy w h`, got {line!r}")
        if cls == class_id:
            boxes.append([(cx - w / 2) * width, (cy - h / 2) * height, (cx + w / 2) * width, (cy + h / 2) * height])
    return boxes


def group(box: list[float], width: int, height: int, thin: float, edge: float) -> str:
    at_edge = box[0] < edge or box[1] < edge or box[2] > width - edge or box[3] > height - edge
    is_thin = min(box[2] - box[0], box[3] - box[1]) < thin
    return ("edge" if at_edge else "inner") + ("-thin" if is_thin else "-wide")


def matched(truths: list[list[float]], dets: list[dict], class_id: int, min_iou: float) -> list[bool]:
    """Which truths a detection of the class claims, detections in descending confidence."""
    found = [False] * len(truths)
    for d in sorted((d for d in dets if d["class_id"] == class_id), key=lambda d: -d["conf"]):
        best, best_iou = None, 0.0
        for i, t in enumerate(truths):
            overlap = 0.0 if found[i] else iou(t, d["xyxy"])
            if overlap > best_iou:
                best, best_iou = i, overlap
        if best is not None and best_iou >= min_iou:
            found[best] = True
    return found


def measure(detections: Path, labels: Path, class_id: int, thin: float, edge: float, min_iou: float,
            prefix: str) -> dict:
    counts = {g: [0, 0] for g in GROUPS}
    images = 0
    for n, line in enumerate(detections.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            image, width, height, dets = Path(row["image"]), row["width"], row["height"], row["detections"]
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            sys.exit(f"{detections}:{n}: not a `vistawise detect --json` line ({e})")
        if not image.name.startswith(prefix):
            continue
        label = labels / (image.stem + ".txt")
        if not label.is_file():
            sys.exit(f"{detections}:{n}: no label file {label} for {image.name}")
        images += 1
        truths = read_truths(label, class_id, width, height)
        for box, hit in zip(truths, matched(truths, dets, class_id, min_iou)):
            tally = counts[group(box, width, height, thin, edge)]
            tally[0] += 1
            tally[1] += hit
    total = sum(c[0] for c in counts.values())
    thin_total = counts["edge-thin"][0] + counts["inner-thin"][0]
    return {
        "images": images,
        "truths": total,
        "found": sum(c[1] for c in counts.values()),
        "groups": {g: {"truths": c[0], "found": c[1], "share": c[0] / total if total else 0.0,
                       "recall": c[1] / c[0] if c[0] else None} for g, c in counts.items()},
        "ceiling_without_thin": (total - thin_total) / total if total else None,
        "thin_px": thin,
        "edge_px": edge,
        "iou": min_iou,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("detections", type=Path, help="`vistawise detect FOLDER --json` output")
    ap.add_argument("labels", type=Path, help="the split's labels/ folder")
    ap.add_argument("--class-id", type=int, default=0)
    ap.add_argument("--thin", type=float, default=20.0, help="a box is thin below this shorter side (px)")
    ap.add_argument("--edge", type=float, default=2.0, help="a box touches the border within this (px)")
    ap.add_argument("--iou", type=float, default=0.5)
    ap.add_argument("--prefix", default="", help="only images whose file name starts with this")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    for path in (a.detections, a.labels):
        if not path.exists():
            sys.exit(f"{path}: not found")
    r = measure(a.detections, a.labels, a.class_id, a.thin, a.edge, a.iou, a.prefix)
    if a.json:
        print(json.dumps(r, indent=2))
        return
    print(f"{r['images']} images, {r['truths']} truths of class {a.class_id}, {r['found']} found at IoU {a.iou}")
    print(f"{'group':<11} {'truths':>6} {'share':>6} {'found':>6} {'recall':>6}")
    for g, v in r["groups"].items():
        rec = "-" if v["recall"] is None else f"{v['recall']:.2f}"
        print(f"{g:<11} {v['truths']:>6} {v['share']:>6.2f} {v['found']:>6} {rec:>6}")
    if r["ceiling_without_thin"] is not None:
        print(f"recall ceiling while thin boxes (< {a.thin:g} px) stay unfound: {r['ceiling_without_thin']:.3f}")


if __name__ == "__main__":
    main()
