"""Small raster helpers: alpha compositing onto a float RGB canvas (window resolution)."""

from __future__ import annotations

import numpy as np


def upscale(rgba: np.ndarray, s: int) -> np.ndarray:
    """Nearest-neighbour integer upscale (how the game draws GUI textures at GUI scale s)."""
    if s == 1:
        return rgba
    return np.repeat(np.repeat(rgba, s, axis=0), s, axis=1)


def blit(canvas: np.ndarray, rgba: np.ndarray, x: int, y: int, alpha_mul: float = 1.0) -> None:
    """Composite an RGBA uint8 image (straight alpha) onto a float32 RGB canvas at (x, y), clipped."""
    H, W = canvas.shape[:2]
    h, w = rgba.shape[:2]
    x0, y0 = max(0, x), max(0, y)
    x1, y1 = min(W, x + w), min(H, y + h)
    if x0 >= x1 or y0 >= y1:
        return
    src = rgba[y0 - y : y1 - y, x0 - x : x1 - x]
    a = src[..., 3:4].astype(np.float32) * (alpha_mul / 255.0)
    dst = canvas[y0:y1, x0:x1]
    dst *= 1.0 - a
    dst += src[..., :3].astype(np.float32) * a


def fill(canvas: np.ndarray, x: int, y: int, w: int, h: int, rgb, alpha: float = 1.0) -> None:
    H, W = canvas.shape[:2]
    x0, y0, x1, y1 = max(0, x), max(0, y), min(W, x + w), min(H, y + h)
    if x0 >= x1 or y0 >= y1:
        return
    dst = canvas[y0:y1, x0:x1]
    dst *= 1.0 - alpha
    dst += np.asarray(rgb, dtype=np.float32) * alpha


def paint_mask(canvas: np.ndarray, mask: np.ndarray, x: int, y: int, rgb, alpha: float = 1.0) -> None:
    """Paint RGB where a bool mask (already at canvas resolution) is set."""
    H, W = canvas.shape[:2]
    h, w = mask.shape
    x0, y0, x1, y1 = max(0, x), max(0, y), min(W, x + w), min(H, y + h)
    if x0 >= x1 or y0 >= y1:
        return
    m = mask[y0 - y : y1 - y, x0 - x : x1 - x]
    dst = canvas[y0:y1, x0:x1]
    dst[m] = dst[m] * (1.0 - alpha) + np.asarray(rgb, dtype=np.float32) * alpha


def alpha_bbox(rgba: np.ndarray, x: int = 0, y: int = 0):
    """Tight box (x1, y1, x2, y2), exclusive max, of the non-transparent pixels, offset by (x, y)."""
    a = rgba[..., 3] > 0
    rows = np.where(a.any(axis=1))[0]
    cols = np.where(a.any(axis=0))[0]
    if len(rows) == 0:
        return None
    return (x + int(cols[0]), y + int(rows[0]), x + int(cols[-1]) + 1, y + int(rows[-1]) + 1)


def crop_resize(img: np.ndarray, W: int, H: int, rng: np.random.Generator, boxes=None, interp=None):
    """Random crop of IMG with aspect W:H (covering at least 70% of the short side), resized to WxH.

    BOXES (list of (cls, x1, y1, x2, y2) in IMG pixels) are mapped to the output; boxes cut by the crop are
    clipped and kept when at least half of their area remains."""
    import cv2

    h, w = img.shape[:2]
    target = W / H
    if w / h > target:
        ch_max, cw_max = h, int(round(h * target))
    else:
        cw_max, ch_max = w, int(round(w / target))
    f = float(rng.uniform(0.7, 1.0))
    cw, ch = max(8, int(cw_max * f)), max(8, int(ch_max * f))
    x0 = int(rng.integers(0, w - cw + 1))
    y0 = int(rng.integers(0, h - ch + 1))
    crop = img[y0 : y0 + ch, x0 : x0 + cw]
    out = cv2.resize(crop, (W, H), interpolation=interp if interp is not None else cv2.INTER_LINEAR)
    mapped = []
    if boxes:
        sx, sy = W / cw, H / ch
        for c, bx1, by1, bx2, by2 in boxes:
            area = max(1e-6, (bx2 - bx1) * (by2 - by1))
            cx1, cy1 = max(bx1, x0), max(by1, y0)
            cx2, cy2 = min(bx2, x0 + cw), min(by2, y0 + ch)
            if cx2 <= cx1 or cy2 <= cy1:
                continue
            if (cx2 - cx1) * (cy2 - cy1) / area < 0.5:
                continue
            mapped.append((c, (cx1 - x0) * sx, (cy1 - y0) * sy, (cx2 - x0) * sx, (cy2 - y0) * sy))
    return out, mapped


def occlude_boxes(boxes, covered: np.ndarray, min_visible: float = 0.6):
    """Background boxes under a synthetic overlay (bool mask COVERED): a box is shrunk to the bounding box of its
    uncovered pixels and kept only if at least MIN_VISIBLE of that shrunk box is uncovered (so a box whose middle
    is hidden by a GUI panel, leaving an L-shaped visible part, is dropped rather than kept spanning the panel)."""
    out = []
    H, W = covered.shape
    for c, x1, y1, x2, y2 in boxes:
        ix1, iy1 = int(max(0, np.floor(x1))), int(max(0, np.floor(y1)))
        ix2, iy2 = int(min(W, np.ceil(x2))), int(min(H, np.ceil(y2)))
        if ix2 <= ix1 or iy2 <= iy1:
            continue
        free = ~covered[iy1:iy2, ix1:ix2]
        if free.all():
            out.append((c, x1, y1, x2, y2))
            continue
        rows = np.where(free.any(axis=1))[0]
        cols = np.where(free.any(axis=0))[0]
        if len(rows) == 0:
            continue
        sub = free[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
        if sub.mean() < min_visible:
            continue
        out.append((c, max(x1, ix1 + cols[0]), max(y1, iy1 + rows[0]), min(x2, ix1 + cols[-1] + 1), min(y2, iy1 + rows[-1] + 1)))
    return out
