"""Imported first by the tests that need numpy, OpenCV, onnx and onnxruntime (not torch): when one is
missing they fail with how to get them, never a silent skip. scripts/test.sh runs this folder with
PYTHONPATH=.work/pydeps:.ort, which scripts/fetch-minilm.sh and scripts/setup.sh fill."""

try:
    import cv2  # noqa: F401
    import numpy  # noqa: F401
    import onnx  # noqa: F401
    import onnxruntime  # noqa: F401
except ImportError as e:
    raise ImportError(
        f"{e}: run with PYTHONPATH=.work/pydeps:.ort (scripts/fetch-minilm.sh and scripts/setup.sh install them)"
    ) from e
