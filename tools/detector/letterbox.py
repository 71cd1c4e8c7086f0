"""A frame as a detector export's input: aspect kept, centred, grey 114 padding, OpenCV bilinear
resize, RGB, [3, H, W] float32 in [0, 1]; what vistawise (src/perception/letterbox.rs) and
Ultralytics feed the network. Shared by quantize.py (calibration frames) and onnx_to_pt.py
(BatchNorm calibration)."""

from __future__ import annotations

from pathlib import Path

PAD_VALUE = 114


def letterbox_file(path: Path, height: int, width: int):
    """The image at PATH letterboxed into HEIGHT x WIDTH, or None when OpenCV cannot read it."""
    import cv2
    import numpy as np

    bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if bgr is None:
        return None
    h, w = bgr.shape[:2]
    scale = min(height / h, width / w)
    new_w, new_h = round(w * scale), round(h * scale)
    canvas = np.full((height, width, 3), PAD_VALUE, dtype=np.uint8)
    top, left = (height - new_h) // 2, (width - new_w) // 2
    resized = cv2.resize(bgr, (new_w, new_h), interpolation=cv2.INTER_LINEAR)
    canvas[top : top + new_h, left : left + new_w] = resized[:, :, ::-1]
    return canvas.transpose(2, 0, 1).astype(np.float32) / np.float32(255)
