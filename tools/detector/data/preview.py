#!/usr/bin/env python3
"""Draw the label boxes of dataset images (for looking at them).

    python tools/detector/data/preview.py DATASET_DIR/train/images/icons_000001.jpg ... --out EXAMPLES_DIR
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from data.classes import NAMES  # noqa: E402

COLORS = [(0, 0, 255), (0, 200, 0), (255, 0, 0), (0, 220, 220), (255, 0, 255), (255, 255, 0), (0, 128, 255), (255, 128, 0)]


def draw(image_path: Path, out_path: Path, scale: float = 1.0):
    im = cv2.imread(str(image_path))
    h, w = im.shape[:2]
    lab = Path(str(image_path).replace("/images/", "/labels/")).with_suffix(".txt")
    if scale != 1.0:
        im = cv2.resize(im, None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST)
    H, W = im.shape[:2]
    for line in lab.read_text().splitlines() if lab.is_file() else []:
        c, cx, cy, bw, bh = line.split()
        c = int(c)
        cx, cy, bw, bh = float(cx) * W, float(cy) * H, float(bw) * W, float(bh) * H
        col = COLORS[c % len(COLORS)]
        x1, y1, x2, y2 = int(round(cx - bw / 2)), int(round(cy - bh / 2)), int(round(cx + bw / 2)), int(round(cy + bh / 2))
        cv2.rectangle(im, (x1, y1), (x2 - 1, y2 - 1), col, 1)
        cv2.putText(im, NAMES[c].replace("_icon", "*"), (x1, max(8, y1 - 2)), cv2.FONT_HERSHEY_SIMPLEX, 0.33, col, 1, cv2.LINE_AA)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out_path), im)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("images", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    for p in a.images:
        draw(p, a.out / (p.parent.parent.name + "_" + p.stem + ".png"), a.scale)


if __name__ == "__main__":
    main()
