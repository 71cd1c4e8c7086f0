"""Shared helpers for tools/detector/{train,export,val_reference}.py.

Import this module (and call setup_offline()) BEFORE importing ultralytics or torch: Ultralytics reads
YOLO_OFFLINE / YOLO_CONFIG_DIR and OpenMP reads OMP_NUM_THREADS at import time.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ULTRALYTICS_VERSION = "8.4.190"  # pinned in tools/detector/requirements.txt

# VistaWise class ids (fixed order; must match the Rust side and every data.yaml): one list, in data/classes.py.
from data.classes import NAMES as VISTAWISE_NAMES  # noqa: E402

# Held-out real test split: never trained on, never used for checkpoint selection or threshold tuning.
HELDOUT_TEST = Path(os.environ.get("VISTAWISE_HELDOUT_TEST", "/work/shared/datasets/minecraft-real/test"))

_FONT_CANDIDATES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
)


def default_threads() -> int:
    """Torch CPU threads: cpu_count - 1, clamped to [1, 8] (1 on a 2-core box)."""
    return max(1, min(8, (os.cpu_count() or 1) - 1))


def setup_offline(config_dir: Path, threads: int, cpu_only: bool = False) -> None:
    """Environment for a fully offline Ultralytics. Must run before ultralytics/torch are imported."""
    config_dir.mkdir(parents=True, exist_ok=True)
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ["YOLO_CONFIG_DIR"] = str(config_dir)
    os.environ.setdefault("YOLO_VERBOSE", "True")
    for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[k] = str(threads)
    if cpu_only:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    # check_font() would download Arial.ttf / Arial.Unicode.ttf: give it any local TTF under those names.
    for name in ("Arial.ttf", "Arial.Unicode.ttf"):
        dst = config_dir / name
        if dst.exists():
            continue
        src = next((Path(c) for c in _FONT_CANDIDATES if Path(c).exists()), None)
        if src is None:
            try:  # matplotlib (an ultralytics dependency) always ships DejaVuSans
                import matplotlib

                src = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
            except Exception:  # noqa: BLE001
                src = None
        if src is not None and src.exists():
            shutil.copy(src, dst)
        else:
            print(f"warning: no TTF to stand in for {name} (apt-get install -y fonts-dejavu-core)", file=sys.stderr)


def pin_threads(threads: int) -> None:
    """Keep torch at `threads`: ultralytics' select_device() resets it to NUM_THREADS (= cpu_count - 1)."""
    import torch

    torch.set_num_threads(threads)
    import ultralytics.data.base as db
    import ultralytics.data.dataset as dd
    import ultralytics.utils as uu
    import ultralytics.utils.torch_utils as tu

    for mod in (uu, tu, db, dd):
        mod.NUM_THREADS = threads


def check_ultralytics_version() -> None:
    import ultralytics

    if ultralytics.__version__ != ULTRALYTICS_VERSION:
        print(
            f"warning: ultralytics {ultralytics.__version__} != pinned {ULTRALYTICS_VERSION} "
            "(tools/detector/requirements.txt); numbers may not be comparable",
            file=sys.stderr,
        )


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a unique temp file in the same folder + fsync + rename: readers never see a partial file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_json(path: Path, obj) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, default=str) + "\n")


def rel(p: Path) -> str:
    """A path relative to the repository when it lies inside it (no local paths in sidecars)."""
    p = Path(p).resolve()
    try:
        return str(p.relative_to(REPO))
    except ValueError:
        return str(p)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_export_sidecar(model: Path) -> tuple[dict, str]:
    """The `<model>.export.json` that export.py (or quantize.py) wrote, and the model's sha256;
    ValueError when it is missing or describes another file."""
    path = Path(model).with_name(Path(model).name + ".export.json")
    if not path.is_file():
        raise ValueError(f"{path} is missing: export the model with tools/detector/export.py")
    sidecar = json.loads(path.read_text())
    digest = sha256_file(model)
    if sidecar.get("sha256") != digest:
        raise ValueError(f"{path} describes another file (sha256 {sidecar.get('sha256')} != {digest})")
    return sidecar, digest


def load_yaml(path: Path) -> dict:
    import yaml

    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f) or {}


def names_list(names) -> list[str]:
    """data.yaml / model `names` (dict {id: name} or list) -> list ordered by id."""
    if isinstance(names, dict):
        return [str(names[k]) for k in sorted(names, key=int)]
    return [str(n) for n in names]


def _dist_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def versions() -> dict:
    """Tool versions for provenance files (no imports of heavy modules beyond what is already loaded)."""
    out = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        **{
            k: _dist_version(k)
            for k in (
                "torch", "torchvision", "ultralytics", "onnx", "onnxslim", "onnxruntime", "numpy",
                "opencv-python", "opencv-python-headless", "PyYAML",
            )
        },
    }  # fmt: skip
    try:
        import torch

        out["torch_cuda"] = torch.version.cuda
        out["cuda_available"] = bool(torch.cuda.is_available())
        if out["cuda_available"]:
            out["cuda_device"] = torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001
        pass
    return {k: v for k, v in out.items() if v is not None}


def resolve_data_yaml(data: str | Path) -> Path:
    p = Path(data).expanduser()
    if p.is_dir():
        cands = [p / "data.yaml", *sorted(p.glob("*.yaml"))]
        p = next((c for c in cands if c.is_file()), p / "data.yaml")
    if not p.is_file():
        raise SystemExit(f"error: data YAML not found: {data}")
    return p.resolve()


def split_dirs(data_yaml: Path, split: str) -> list[Path]:
    """Resolve a split's image folders/files the way ultralytics does when run from the YAML's folder."""
    d = load_yaml(data_yaml)
    root = Path(d.get("path") or ".")
    if not root.is_absolute():
        root = data_yaml.parent / root
    v = d.get(split)
    if not v:
        return []
    return [(root / x).resolve() for x in (v if isinstance(v, list) else [v])]


def guard_heldout(data_yaml: Path, splits=("train", "val")) -> None:
    """Refuse to train/select on the held-out real test split."""
    held = HELDOUT_TEST.resolve() if HELDOUT_TEST.exists() else HELDOUT_TEST

    def bad(p: Path) -> bool:
        return p == held or held in p.parents or p in held.parents

    for s in splits:
        for p in split_dirs(data_yaml, s):
            if bad(p):
                raise SystemExit(
                    f"error: {data_yaml} split '{s}' -> {p} overlaps the held-out test set {held}. "
                    "Never train or select checkpoints on it."
                )
            # Symlinked images (build_dataset.py links real frames): check where each one points.
            if p.is_dir():
                for f in p.rglob("*"):
                    if f.is_symlink() and bad(f.resolve()):
                        raise SystemExit(
                            f"error: {f} (split '{s}') links into the held-out test set {held}. "
                            "Never train or select checkpoints on it."
                        )
