"""Pack what a detector run needs on a GPU machine into parts that each fit one device call.

The machine lent through the workplace's `device` tool starts bare, reaches no network, and takes
at most 64 MiB of working tree a call, the repository's tracked files (about 33 MB) included. The
real frames alone are 78 MB, so they travel in parts: every call but the last copies its part
into /tmp/stage there (`train_on_gpu.sh receive`), and the last call adds its part and trains
(`train_on_gpu.sh train`). The machine keeps /tmp while it stays warm (30 s after a call), so the
calls must follow each other at once. The synthetic frames are not carried: they are rebuilt
there by build_dataset.py from the real frames and the texture files listed in textures.txt,
byte for byte as on the CPU box.

The last part holds the kit: the texture subset (tex.tgz), the ultralytics and ultralytics-thop
wheels (torch, numpy, opencv and the rest are preinstalled there), the init weights, and
expect.json (file counts the train step checks before it starts).

    python tools/detector/gpu/stage.py --init .work/detector/runs/RUN/weights/best.pt
    # -> .gpu/p1 ... .gpu/pN and .gpu/parts.txt (the device calls to make, in order)
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))

import _yolo_env as env  # noqa: E402  (standard library only at import)

# ultralytics-thop: the version the reference venv holds (ultralytics needs it; requirements.txt does not pin it).
WHEELS = (f"ultralytics=={env.ULTRALYTICS_VERSION}", "ultralytics-thop==2.2.3")


def on_disk(size: int, block: int = 4096) -> int:
    """What a file of SIZE bytes counts against a call's limit: the device tool measures the
    working tree by disk blocks, so 2,000 label files of a few bytes take 8 MB, not 20 KB (a part
    packed by byte sizes was refused as over 64 MiB)."""
    return -(-size // block) * block


def tracked_bytes() -> int:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return sum(on_disk((REPO / n).stat().st_size) for n in out.decode().split("\0") if n and (REPO / n).is_file())


def texture_names(path: Path, generator_version: str) -> list[str]:
    lines = path.read_text().splitlines()
    if not lines or lines[0].strip() != f"# {generator_version}":
        raise SystemExit(
            f"{path}: recorded for {lines[0][2:] if lines else 'nothing'}, the generator is {generator_version}; "
            "run tools/detector/gpu/record_textures.py again"
        )
    return [n for n in lines[1:] if n.strip()]


def pack(files: list[tuple[Path, int]], kit_bytes: int, budget: int) -> list[list[Path]]:
    """Files (path, size) in order into parts of at most BUDGET bytes each; the kit (KIT_BYTES) rides in the last
    part when it fits there, else in one more part of its own."""
    parts: list[list[Path]] = [[]]
    room = budget
    for rel, size in files:
        if size > budget:
            raise SystemExit(f"{rel}: {size / 1e6:.1f} MB, more than a call carries ({budget / 1e6:.1f} MB)")
        if size > room:
            parts.append([])
            room = budget
        parts[-1].append(rel)
        room -= size
    if kit_bytes > budget:
        raise SystemExit(f"the kit is {kit_bytes / 1e6:.1f} MB, more than a call carries ({budget / 1e6:.1f} MB)")
    if kit_bytes > room:
        parts.append([])
    return parts


def shrink_client_frames(src: Path, dst: Path, side: int) -> int:
    """SRC's labelled frames (images/, labels/, data.yaml) into DST, each image a JPEG of SIDE px on its long
    side: training reads them at that size anyway, and full 1280x720 frames would take a call each 200.
    YOLO labels are relative to the image, so they are copied as they are. Returns the number of frames."""
    import cv2

    (dst / "images").mkdir(parents=True, exist_ok=True)
    (dst / "labels").mkdir(parents=True, exist_ok=True)
    shutil.copy2(src / "data.yaml", dst / "data.yaml")
    n = 0
    for label in sorted((src / "labels").glob("*.txt")):
        image = next((p for p in (src / "images" / (label.stem + e) for e in (".jpg", ".png")) if p.is_file()), None)
        if image is None:
            continue
        im = cv2.imread(str(image), cv2.IMREAD_COLOR)
        if im is None:
            raise SystemExit(f"{image}: not an image")
        scale = side / max(im.shape[:2])
        if scale < 1:
            im = cv2.resize(im, (round(im.shape[1] * scale), round(im.shape[0] * scale)), interpolation=cv2.INTER_AREA)
        if not cv2.imwrite(str(dst / "images" / (label.stem + ".jpg")), im, [cv2.IMWRITE_JPEG_QUALITY, 92]):
            raise SystemExit(f"{dst}: cannot write")
        shutil.copy2(label, dst / "labels" / label.name)
        n += 1
    return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--init", type=Path, required=True, help="init weights (.pt) for the finetune")
    ap.add_argument("--out", type=Path, default=REPO / ".gpu")
    ap.add_argument("--real-root", type=Path, help="default: build_dataset.py's")
    ap.add_argument("--workdir", type=Path, default=REPO / ".work", help="where the textures are installed (WORKDIR/npm)")
    ap.add_argument("--textures", type=Path, default=HERE / "textures.txt")
    ap.add_argument("--limit-mb", type=float, default=64 * 1.048576, help="a call's working-tree limit (MB)")
    ap.add_argument("--margin-mb", type=float, default=2.0, help="left free in each call for uncommitted files")
    ap.add_argument("--client-dir", action="append", default=[], metavar="SPLIT=DIR",
                    help="labelled client frames (vistawise annotate --auto minecraft-web -o DIR) for SPLIT (train or "
                         "val); they travel as JPEGs of --client-side px on the long side; repeatable")
    ap.add_argument("--client-side", type=int, default=640, help="long side of the carried client frames (the imgsz)")
    args = ap.parse_args(argv)

    import build_dataset  # numpy, PIL: only here, so the tests run on the standard library
    from data.assets import data_dir_for

    real_root = args.real_root or build_dataset.DEFAULT_REAL
    if not args.init.is_file():
        raise SystemExit(f"--init {args.init}: no such file")
    tex_dir = data_dir_for(args.workdir)
    names = texture_names(args.textures, build_dataset.GENERATOR_VERSION)
    missing = [n for n in names if not (tex_dir / n).is_file()]
    if missing:
        raise SystemExit(f"{len(missing)} textures missing under {tex_dir} (first {missing[0]}): run scripts/fetch-minecraft-assets.sh")

    tracked = tracked_bytes()
    budget = int((args.limit_mb - args.margin_mb) * 1e6) - tracked
    if budget < 10e6:
        raise SystemExit(f"only {budget / 1e6:.1f} MB a call left beside the tracked files")

    if args.out.exists():
        shutil.rmtree(args.out)
    kit = args.out / "kit"
    (kit / "whl").mkdir(parents=True)
    with tarfile.open(kit / "tex.tgz", "w:gz") as tar:
        for n in names:
            tar.add(tex_dir / n, arcname=n)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                    "-d", str(kit / "whl"), *WHEELS], check=True)
    shutil.copy2(args.init, kit / "init.pt")

    files = []  # (path relative to the real root, size)
    expect = {}
    for split in ("train", "val"):
        for sub in ("images", "labels"):
            d = real_root / split / sub
            got = sorted(p for p in d.iterdir() if p.is_file())
            expect[f"{split}/{sub}"] = len(got)
            files += [(p.relative_to(real_root), on_disk(p.stat().st_size)) for p in got]
    client = args.out / "client"  # frames shrunk here, then packed as the real ones (under real/client/)
    for item in args.client_dir:
        split, _, d = item.partition("=")
        src = Path(d)
        if split not in ("train", "val") or not (src / "labels").is_dir() or not (src / "data.yaml").is_file():
            raise SystemExit(f"--client-dir {item!r}: want train=DIR or val=DIR, DIR written by vistawise annotate")
        rel_root = Path("client") / split / src.name
        n = shrink_client_frames(src, client / rel_root, args.client_side)
        for sub in ("images", "labels"):
            got = sorted(p for p in (client / rel_root / sub).iterdir() if p.is_file())
            expect[str(rel_root / sub)] = len(got)
            files += [(Path(p.relative_to(client)), on_disk(p.stat().st_size)) for p in got]
        files.append((rel_root / "data.yaml", on_disk((client / rel_root / "data.yaml").stat().st_size)))
        print(f"{src}: {n} client frames for {split}")
    (kit / "expect.json").write_text(json.dumps(expect, indent=1) + "\n")
    kit_bytes = sum(on_disk(p.stat().st_size) for p in kit.rglob("*") if p.is_file())

    parts = pack(files, kit_bytes, budget)
    n_parts = len(parts)
    for k, rels in enumerate(parts, 1):
        part = args.out / f"p{k}"
        for rel in rels:
            dst = part / "real" / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2((client if rel.parts[0] == "client" else real_root) / rel, dst)
    if client.exists():
        shutil.rmtree(client)
    shutil.move(str(kit), str(args.out / f"p{n_parts}" / "kit"))

    lines = []
    for k in range(1, n_parts + 1):
        size = sum(on_disk(p.stat().st_size) for p in (args.out / f"p{k}").rglob("*") if p.is_file())
        verb = "train" if k == n_parts else "receive"
        lines.append(f"call {k}: carry [\".gpu/p{k}\"]  command: bash tools/detector/gpu/train_on_gpu.sh {verb} .gpu/p{k}"
                     f"   ({size / 1e6:.1f} MB)")
    (args.out / "parts.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"budget {budget / 1e6:.1f} MB a call beside {tracked / 1e6:.1f} MB of tracked files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
