"""Screenshot-like finishing for synthetic frames: small colour jitter, sometimes a mild blur, resize so the
long side is at most MAX_SIDE, JPEG encoding at quality 70-95. Boxes are scaled along and normalised."""

from __future__ import annotations

import cv2
import numpy as np


def finish(img: np.ndarray, boxes, rng: np.random.Generator, max_side: int = 1280):
    """IMG: RGB uint8. BOXES: [(cls, x1, y1, x2, y2)] in IMG pixels.
    Returns (jpeg bytes, yolo lines, info dict)."""
    x = img.astype(np.float32)
    # colour jitter: brightness, contrast, saturation, per-channel gain
    b = rng.uniform(0.93, 1.07)
    c = rng.uniform(0.92, 1.08)
    sat = rng.uniform(0.9, 1.1)
    gain = rng.uniform(0.97, 1.03, size=3).astype(np.float32)
    mean = x.mean()
    x = (x - mean) * c + mean
    x *= b * gain
    grey = x @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    x = grey[..., None] + (x - grey[..., None]) * sat
    blur = None
    if rng.random() < 0.25:
        blur = float(rng.uniform(0.3, 0.9))
        x = cv2.GaussianBlur(x, (0, 0), blur)
    out = np.clip(x + 0.5, 0, 255).astype(np.uint8)
    h, w = out.shape[:2]
    f = min(1.0, max_side / max(h, w))
    if f < 1.0:
        nw, nh = int(round(w * f)), int(round(h * f))
        out = cv2.resize(out, (nw, nh), interpolation=cv2.INTER_AREA)
    else:
        nw, nh = w, h
    q = int(rng.integers(70, 96))
    ok, enc = cv2.imencode(".jpg", cv2.cvtColor(out, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, q])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    lines = []
    for cls, x1, y1, x2, y2 in boxes:
        x1, x2 = np.clip([x1 * f, x2 * f], 0, nw)
        y1, y2 = np.clip([y1 * f, y2 * f], 0, nh)
        if x2 - x1 < 2 or y2 - y1 < 2:
            continue
        lines.append(f"{int(cls)} {(x1 + x2) / 2 / nw:.6f} {(y1 + y2) / 2 / nh:.6f} {(x2 - x1) / nw:.6f} {(y2 - y1) / nh:.6f}")
    info = {"jpeg_quality": q, "blur_sigma": "" if blur is None else round(blur, 3), "size": f"{nw}x{nh}"}
    return enc.tobytes(), lines, info
