"""Real frames used as backgrounds for the synthetic sources, and their boxes.

Only the real dataset's train/ and val/ splits are ever read here. Its test/ split is held out and is
never opened (not even as a background): `BACKGROUND_SPLITS` maps each synthetic split to the real splits
it may draw from (train -> train, val -> val, test-synth -> train + val, with its own seed stream).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

BACKGROUND_SPLITS = {"train": ("train",), "val": ("val",), "test-synth": ("train", "val")}
ALLOWED_REAL_SPLITS = {"train", "val"}
# share of bright orange pixels above which a cave frame counts as showing lava (checked by eye: frames above it
# show lava, the ones just below only torches)
LAVA_THRESHOLD = 0.0003


@dataclass(frozen=True)
class Frame:
    split: str
    name: str  # file name
    image: str  # absolute path
    label: str  # absolute path
    kind: str  # "surface" (BRAD trees) or "cave" (MiDaS diamond ore)


def list_real(root: Path, split: str) -> list[Frame]:
    if split not in ALLOWED_REAL_SPLITS:
        raise ValueError(f"refusing to read real split {split!r}: only train/val may be used (test is held out)")
    img_dir = Path(root) / split / "images"
    out = []
    for p in sorted(img_dir.iterdir()):
        if p.suffix.lower() not in (".jpg", ".jpeg", ".png"):
            continue
        kind = "cave" if p.name.startswith("diamond") else "surface"
        out.append(Frame(split, p.name, str(p), str(Path(root) / split / "labels" / (p.stem + ".txt")), kind))
    return out


def read_yolo(label_path: str, w: int, h: int):
    boxes = []
    try:
        with open(label_path) as f:
            for line in f:
                parts = line.split()
                if len(parts) != 5:
                    continue
                c, cx, cy, bw, bh = int(parts[0]), *map(float, parts[1:])
                boxes.append((c, (cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h))
    except FileNotFoundError:
        pass
    return boxes


def load_frame(fr: Frame):
    """RGB uint8 image and its boxes in pixels."""
    bgr = cv2.imread(fr.image, cv2.IMREAD_COLOR)
    if bgr is None:
        raise RuntimeError(f"cannot read {fr.image}")
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    h, w = rgb.shape[:2]
    return rgb, read_yolo(fr.label, w, h)


def lava_fraction(rgb: np.ndarray) -> float:
    """Share of bright orange pixels (unlabelled lava in the real cave frames)."""
    small = cv2.resize(rgb, (240, 135), interpolation=cv2.INTER_AREA)
    hsv = cv2.cvtColor(small, cv2.COLOR_RGB2HSV)
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    m = (h >= 5) & (h <= 22) & (s >= 170) & (v >= 170)
    return float(m.mean())


def background_pool(root: Path, synth_split: str, min_width: int = 600, log=None) -> dict[str, list[Frame]]:
    """Frames by kind for one synthetic split. Drops tiny frames (320x180) and cave frames that show
    unlabelled lava (a synthetic frame must not contain unlabelled lava)."""
    frames = []
    for s in BACKGROUND_SPLITS[synth_split]:
        frames += list_real(root, s)
    pool = {"surface": [], "cave": []}
    dropped_lava = dropped_small = 0
    for fr in frames:
        im = cv2.imread(fr.image, cv2.IMREAD_REDUCED_COLOR_4)
        if im is None:
            continue
        if im.shape[1] * 4 < min_width:
            dropped_small += 1
            continue
        if fr.kind == "cave" and lava_fraction(cv2.cvtColor(im, cv2.COLOR_BGR2RGB)) > LAVA_THRESHOLD:
            dropped_lava += 1
            continue
        pool[fr.kind].append(fr)
    if log:
        log(f"backgrounds for {synth_split}: {len(pool['surface'])} surface, {len(pool['cave'])} cave "
            f"(dropped {dropped_lava} cave frames with lava, {dropped_small} small frames)")
    return pool
