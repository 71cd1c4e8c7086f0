#!/usr/bin/env python3
"""Build the detector's training set (Ultralytics layout) from real frames and synthetic frames.

    python tools/detector/build_dataset.py --out DIR --seed 0 \
        [--synthetic-train N --synthetic-val N --synthetic-test N] [--sources real,icons,world] [--workers K]

Output (DIR, default .work/detector/data/, gitignored):
    train/images, train/labels     real train frames (symlinks) + synthetic frames
    val/images, val/labels         real val frames (symlinks) + synthetic frames
    test-synth/images, labels      synthetic held-out split (icon and block classes)
    data.yaml                      absolute path, train/val, test: test-synth/images, the 23 names
    manifest.csv, stats.json       per image / per split summaries
    build.log                      progress log
    .meta/                         per-image generation records (used to resume and for the manifest)

Deterministic: each synthetic image is seeded from (seed, split, source, index), so the same arguments give
byte-identical images and labels whatever the number of workers. Resumable: finished images are skipped
(every file is written to a temporary name, then renamed).
See tools/detector/README.md, "Building the dataset".
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from data.assets import Assets, ensure_assets  # noqa: E402
from data.backgrounds import background_pool  # noqa: E402
from data.classes import NAMES  # noqa: E402
from data.post import finish  # noqa: E402
from data.rng import image_rng, image_seed_words  # noqa: E402
from data.sources import REGISTRY, Context  # noqa: E402

GENERATOR_VERSION = "vistawise-detector-data/3"  # bump when the generators change output on purpose
DEFAULT_OUT = REPO / ".work" / "detector" / "data"
DEFAULT_WORK = REPO / ".work"
DEFAULT_REAL = Path("/work/shared/datasets/minecraft-real")
SPLITS = ["train", "val", "test-synth"]
MANIFEST_FIELDS = ["file", "split", "source", "seed", "index", "texture_version", "gui_scale", "screen", "window",
                   "size", "background", "jpeg_quality", "blur_sigma", "boxes", "class_counts", "flags"]


# ------------------------------------------------------------------------------------------------ logging
class Log:
    def __init__(self, path: Path | None, quiet: bool = False):
        self.path = path
        self.quiet = quiet

    def __call__(self, msg: str):
        line = f"{time.strftime('%Y-%m-%d %H:%M:%S')} {msg}"
        if not self.quiet:
            print(line, flush=True)
        if self.path is not None:
            with open(self.path, "a") as f:
                f.write(line + "\n")


# ------------------------------------------------------------------------------------------------ files
def atomic_write(path: Path, data: bytes):
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def split_dirs(out: Path, split: str):
    return out / split / "images", out / split / "labels", out / ".meta" / split


# ------------------------------------------------------------------------------------------------ workers
_W: dict = {}


def _init_worker(cfg: dict):
    cv2.setNumThreads(1)
    assets = Assets(Path(cfg["assets"]))
    ctx = Context(assets, Path(cfg["real_root"]), cfg["backgrounds"], cfg["options"])
    _W["cfg"] = cfg
    _W["sources"] = {n: REGISTRY[n](ctx) for n in cfg["synthetic_sources"]}


def _expected_meta(cfg, split, source, index):
    return {"generator": GENERATOR_VERSION, "seed": cfg["seed"], "split": split, "source": source, "index": index,
            "options": cfg["options"]}


def _task(task):
    """Generate one synthetic image (or return the record of an existing one)."""
    split, source, index = task
    cfg = _W["cfg"]
    out = Path(cfg["out"])
    img_dir, lab_dir, meta_dir = split_dirs(out, split)
    stem = f"{source}_{index:06d}"
    meta_path = meta_dir / f"{stem}.json"
    want = _expected_meta(cfg, split, source, index)
    if meta_path.is_file() and (img_dir / f"{stem}.jpg").is_file() and (lab_dir / f"{stem}.txt").is_file():
        try:
            rec = json.loads(meta_path.read_text())
            if all(rec.get(k) == v for k, v in want.items()):
                return rec, True
        except (json.JSONDecodeError, OSError):
            pass
    errors = []
    for attempt in range(4):  # a failed draw is retried with a derived seed (still deterministic)
        rng = image_rng(cfg["seed"], split, source, index, attempt)
        try:
            sample = _W["sources"][source].generate(rng, split, index)
            jpg, lines, info = finish(sample.image, sample.boxes, rng, cfg["options"]["max_side"])
            break
        except Exception as e:  # noqa: BLE001
            errors.append(f"{type(e).__name__}: {e}")
    else:
        raise RuntimeError(f"{split}/{source}_{index:06d} failed 4 times: {errors}")
    atomic_write(lab_dir / f"{stem}.txt", ("\n".join(lines) + ("\n" if lines else "")).encode())
    atomic_write(img_dir / f"{stem}.jpg", jpg)
    counts = Counter(int(l.split()[0]) for l in lines)
    rec = dict(want)
    rec.update({k: v for k, v in sample.meta.items() if k not in rec})
    rec.update(info)
    rec["file"] = f"{split}/images/{stem}.jpg"
    rec["seed_words"] = image_seed_words(cfg["seed"], split, source, index, attempt)
    if errors:
        rec["flags"] = "retried:" + " | ".join(errors)
    rec["boxes"] = len(lines)
    rec["class_counts"] = {NAMES[c]: counts[c] for c in sorted(counts)}
    atomic_write(meta_path, json.dumps(rec, sort_keys=True).encode())
    return rec, False


# ------------------------------------------------------------------------------------------------ main
def parse_mix(text: str, sources: list[str]) -> dict[str, float]:
    mix = {s: 1.0 for s in sources}
    if text:
        for part in text.split(","):
            k, v = part.split("=")
            if k.strip() in mix:
                mix[k.strip()] = float(v)
    return mix


def allocate(n: int, mix: dict[str, float]) -> dict[str, int]:
    """Split N images over the synthetic sources by weight (exact total, deterministic)."""
    names = [k for k, w in mix.items() if w > 0]
    if not names:
        return {}
    tot = sum(mix[k] for k in names)
    raw = {k: n * mix[k] / tot for k in names}
    out = {k: int(np.floor(raw[k])) for k in names}
    for k in sorted(names, key=lambda k: -(raw[k] - out[k]))[: n - sum(out.values())]:
        out[k] += 1
    return out


def parse_repeat(text: str, static: list[str]) -> dict[str, int]:
    """`real=2,minetest=3` -> {source: times}; only static sources (their frames are files to list again)."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, times = part.partition("=")
        if name not in static or not times.isdigit() or int(times) < 1:
            raise SystemExit(f"build_dataset: --repeat {part!r}: want SRC=N with N >= 1 and SRC one of {static}")
        out[name] = int(times)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--synthetic-train", type=int, default=3000)
    ap.add_argument("--synthetic-val", type=int, default=300)
    ap.add_argument("--synthetic-test", type=int, default=400)
    ap.add_argument("--sources", default="real,icons,world", help="comma list of: " + ",".join(REGISTRY))
    ap.add_argument("--mix", default="icons=1,world=1", help="weights of the synthetic sources, e.g. icons=1,world=1")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--real-root", type=Path, default=DEFAULT_REAL, help="real dataset (only train/ and val/ are read)")
    ap.add_argument("--workdir", type=Path, default=DEFAULT_WORK, help="where npm installs the textures (WORKDIR/npm)")
    ap.add_argument("--max-side", type=int, default=1280, help="long side of the saved synthetic frames")
    ap.add_argument("--world-box-mode", choices=["block", "face"], default="block",
                    help="ores/bedrock: one box per block (default) or per visible face (as the real diamond labels)")
    ap.add_argument("--minetest-dir", type=Path, action="append", default=[],
                    help="with --sources ...,minetest: a folder of Minetest frames labelled in the Minecraft classes "
                         "(scripts/minetest-dataset.sh with LABEL_SET=minecraft); repeatable")
    ap.add_argument("--client-dir", action="append", default=[], metavar="SPLIT=DIR",
                    help="with --sources ...,client: a folder written by `vistawise annotate --auto minecraft-web -o DIR`"
                         " listed in SPLIT (train or val); repeatable")
    ap.add_argument("--repeat", default="", metavar="SRC=N",
                    help="train-split only: list the frames of these static sources N times in data.yaml (e.g. real=2:"
                         " the real trunk tiles are a fifth of the frames but the only real trunks); folders train-rep*/")
    ap.add_argument("--no-prune", action="store_true", help="keep files of earlier runs that this run would not write")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    client_dirs: dict[str, list[str]] = {"train": [], "val": []}
    for item in args.client_dir:
        split, _, d = item.partition("=")
        if split not in client_dirs or not d:
            ap.error(f"--client-dir {item!r}: want train=DIR or val=DIR (the held-out test set stays out of the build)")
        if not (Path(d) / "labels").is_dir():
            ap.error(f"--client-dir {item!r}: {d} has no labels/ (not a folder written by vistawise annotate)")
        client_dirs[split].append(str(Path(d).resolve()))
    if "client" in args.sources.split(",") and not args.client_dir:
        ap.error("--sources with client needs --client-dir SPLIT=DIR")

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    log = Log(out / "build.log", args.quiet)
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    unknown = [s for s in sources if s not in REGISTRY]
    if unknown:
        ap.error(f"unknown source(s) {unknown}; known: {sorted(REGISTRY)}")
    cv2.setNumThreads(1)
    t0 = time.time()
    log(f"build start: out={out} seed={args.seed} sources={sources} synthetic train/val/test="
        f"{args.synthetic_train}/{args.synthetic_val}/{args.synthetic_test} workers={args.workers}")

    assets_dir = ensure_assets(args.workdir.resolve(), log)
    synthetic = [s for s in sources if REGISTRY[s].synthetic]
    static = [s for s in sources if not REGISTRY[s].synthetic]
    # (options are part of every synthetic image's resume record: the static sources' folders are not)
    options = {"max_side": args.max_side, "world_box_mode": args.world_box_mode}
    if "minetest" in sources and not args.minetest_dir:
        ap.error("--sources with minetest needs --minetest-dir DIR")
    backgrounds = {sp: background_pool(args.real_root, sp, log=log) for sp in SPLITS} if synthetic else {}
    cfg = {"out": str(out), "seed": args.seed, "assets": str(assets_dir), "real_root": str(args.real_root),
           "backgrounds": backgrounds, "options": options, "synthetic_sources": synthetic}
    for sp in SPLITS:
        for d in split_dirs(out, sp):
            d.mkdir(parents=True, exist_ok=True)

    # ---- synthetic images
    mix = parse_mix(args.mix, synthetic)
    counts = {"train": args.synthetic_train, "val": args.synthetic_val, "test-synth": args.synthetic_test}
    tasks = []
    for sp in SPLITS:
        alloc = allocate(counts[sp], mix)
        log(f"{sp}: synthetic {alloc}")
        for src, n in alloc.items():
            tasks += [(sp, src, k) for k in range(n)]
    records = []
    done = skipped = 0
    last = time.time()
    tg = time.time()
    if tasks:
        if args.workers <= 1:
            _init_worker(cfg)
            it = map(_task, tasks)
            pool = None
        else:
            import multiprocessing as mp

            pool = mp.get_context("fork").Pool(args.workers, initializer=_init_worker, initargs=(cfg,))
            it = pool.imap_unordered(_task, tasks, chunksize=4)
        try:
            for rec, was_done in it:
                records.append(rec)
                done += 1
                skipped += was_done
                now = time.time()
                if now - last > 30 or done == len(tasks):
                    made = done - skipped
                    rate = made / max(now - tg, 1e-6)
                    eta = (len(tasks) - done) / rate if rate > 0 else 0
                    log(f"progress {done}/{len(tasks)} ({skipped} already there) {rate:.2f} img/s, ETA {eta / 60:.1f} min")
                    last = now
        finally:
            if pool is not None:
                pool.close()
                pool.join()
    gen_time = time.time() - tg
    made = done - skipped
    if made:
        log(f"generated {made} synthetic images in {gen_time:.0f} s ({made / gen_time:.2f} img/s)")

    # ---- static sources (real frames): symlink the images, copy the labels
    for src in static:
        static_options = {**options, "minetest_dirs": [str(d) for d in args.minetest_dir], "client_dirs": client_dirs}
        s = REGISTRY[src](Context(Assets(assets_dir), args.real_root, backgrounds, static_options))
        for sp in SPLITS:
            img_dir, lab_dir, _ = split_dirs(out, sp)
            for item in s.items(sp):
                dst = img_dir / item.name
                if dst.is_symlink() or dst.exists():
                    if not (dst.is_symlink() and os.readlink(dst) == item.image):
                        dst.unlink()
                if not dst.is_symlink():
                    os.symlink(item.image, dst)
                lab = Path(item.label).read_bytes() if Path(item.label).is_file() else b""
                ldst = lab_dir / (Path(item.name).stem + ".txt")
                if not ldst.is_file() or ldst.read_bytes() != lab:
                    atomic_write(ldst, lab)
                cc = Counter(int(l.split()[0]) for l in lab.decode().splitlines() if l.strip())
                rec = {"file": f"{sp}/images/{item.name}", "split": sp, "source": src, "seed": "", "index": "",
                       "boxes": sum(cc.values()), "class_counts": {NAMES[c]: cc[c] for c in sorted(cc)}}
                rec.update(item.meta)
                records.append(rec)

    # ---- repeated train frames: extra folders of symlinks to the same images and labels (Ultralytics reads every
    # listed folder, so a frame listed twice is drawn twice an epoch; val and test stay as they are)
    repeats = parse_repeat(args.repeat, static)
    train_dirs = ["train/images"]
    for old_rep in out.glob("train-rep*"):
        shutil.rmtree(old_rep)
    for k in range(1, max(repeats.values(), default=1)):
        rep = out / f"train-rep{k}"
        (rep / "images").mkdir(parents=True)
        (rep / "labels").mkdir()
        n = 0
        for r in records:
            if r["split"] == "train" and repeats.get(r["source"], 1) > k:
                name = Path(r["file"]).name
                os.symlink((out / r["file"]).resolve(), rep / "images" / name)
                os.symlink((out / "train" / "labels" / (Path(name).stem + ".txt")).resolve(),
                           rep / "labels" / (Path(name).stem + ".txt"))
                n += 1
        train_dirs.append(f"train-rep{k}/images")
        log(f"train-rep{k}: {n} frames listed again ({args.repeat})")

    # ---- prune files of earlier runs that this run does not produce (only names our sources write)
    expected = {r["file"] for r in records}
    if not args.no_prune:
        prefixes = tuple(f"{n}_" for n in REGISTRY)
        removed = 0
        for sp in SPLITS:
            img_dir, lab_dir, meta_dir = split_dirs(out, sp)
            for p in list(img_dir.iterdir()):
                if p.name.startswith(prefixes) and f"{sp}/images/{p.name}" not in expected:
                    p.unlink()
                    removed += 1
            stems = {Path(f).stem for f in expected if f.startswith(f"{sp}/")}
            for d, ext in ((lab_dir, ".txt"), (meta_dir, ".json")):
                for p in list(d.iterdir()):
                    if p.name.startswith(prefixes) and p.suffix == ext and p.stem not in stems:
                        p.unlink()
                        removed += 1
            for d in (img_dir, lab_dir, meta_dir):  # temporary files of interrupted runs
                for p in d.glob(".*.tmp*"):
                    p.unlink()
        if removed:
            log(f"pruned {removed} stale files from earlier runs")

    # ---- data.yaml, manifest.csv, stats.json
    records.sort(key=lambda r: (SPLITS.index(r["split"]), r["file"]))
    yaml_text = (
        "# vistawise detector training set, built by tools/detector/build_dataset.py\n"
        f"# seed {args.seed}; sources {','.join(sources)}; see manifest.csv and stats.json\n"
        "# test: test-synth/images is a SYNTHETIC held-out split (icons and blocks). The real held-out test set\n"
        f"# ({args.real_root}/test) is not part of this folder and is never read by the builder.\n"
        f"path: {out}\n"
        f"train: [{', '.join(train_dirs)}]\n"
        "val: val/images\n"
        "test: test-synth/images\n"
        f"nc: {len(NAMES)}\n"
        "names:\n" + "".join(f"  {i}: {n}\n" for i, n in enumerate(NAMES))
    )
    atomic_write(out / "data.yaml", yaml_text.encode())
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=MANIFEST_FIELDS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in records:
        row = dict(r)
        cc = r.get("class_counts", {})
        row["class_counts"] = ";".join(f"{n}={cc[n]}" for n in NAMES if cc.get(n))  # class-id order
        row["source"] = r.get("source", "")
        w.writerow({k: row.get(k, "") for k in MANIFEST_FIELDS})
    atomic_write(out / "manifest.csv", buf.getvalue().encode())
    stats = {}
    for sp in SPLITS:
        rs = [r for r in records if r["split"] == sp]
        by_src = Counter(r["source"] for r in rs)
        cls = Counter()
        cls_src: dict[str, Counter] = {}
        for r in rs:
            for k, v in r.get("class_counts", {}).items():
                cls[k] += v
                cls_src.setdefault(r["source"], Counter())[k] += v
        stats[sp] = {
            "images": len(rs),
            "images_by_source": dict(sorted(by_src.items())),
            "images_without_boxes": sum(1 for r in rs if not r.get("boxes")),
            "boxes": sum(cls.values()),
            "boxes_by_class": {n: cls.get(n, 0) for n in NAMES},
            "boxes_by_source": {s: {n: c[n] for n in NAMES if c.get(n)} for s, c in sorted(cls_src.items())},
        }
    if repeats:
        stats["train"]["repeats"] = repeats
    atomic_write(out / "stats.json", (json.dumps(stats, indent=2) + "\n").encode())
    log(f"build done in {time.time() - t0:.0f} s: " + ", ".join(f"{sp} {stats[sp]['images']} images / {stats[sp]['boxes']} boxes" for sp in SPLITS))


if __name__ == "__main__":
    main()
