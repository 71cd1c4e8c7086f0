#!/usr/bin/env python3
"""Measure `vistawise counts read` (the Minecraft profile's [counts]) on frames of the detector data builder's
`icons` source: its generator draws the stack counts itself (data/gui.py, from the game's drawing rule) and
records every stack it drew (meta "slots"), an independent check of the templates learnt with
`vistawise counts learn --font`.

    .venv-detector/bin/python tools/detector/measure_counts.py --n 300 [--binary target/debug/vistawise]

The frames are the builder's test-synth icons frames (same seeds as build_dataset.py --seed SEED), taken before
its screenshot finishing (colour jitter, blur, JPEG, resizing), i.e. at window size as a window capture is. Every
drawn stack in a slot of the profile's screen is compared with what `counts read --screen` says there, at the
frame's GUI scale. Not part of the test suite (it needs the builder's Python environment and the real frames).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from PIL import Image  # noqa: E402

from build_dataset import DEFAULT_REAL, DEFAULT_WORK  # noqa: E402
from data.assets import Assets, ensure_assets  # noqa: E402
from data.backgrounds import background_pool  # noqa: E402
from data.rng import image_rng  # noqa: E402
from data.sources import REGISTRY, Context  # noqa: E402

SPLIT = "test-synth"
# the generator's screen names -> the profile's
SCREENS = {"hotbar": "hud", "inventory": "inventory", "crafting_table": "crafting_table", "furnace": "furnace"}


def slot_names(gui: dict, screen: str, W: int, H: int, s: int) -> dict[tuple[int, int], str]:
    """(gx, gy) item-area top-left in GUI pixels -> location, for one screen of the profile's [gui]."""
    sw, sh = -(-W // s), -(-H // s)
    scr = gui["screens"][screen]
    w, h = scr["size"]
    left = (sw - w) // 2
    top = sh - h if scr.get("anchor") == "bottom_center" else (sh - h) // 2
    out = {}
    for name, r in scr["regions"].items():
        cols, rows = r.get("columns", 1), r.get("rows", 1)
        p = r.get("pitch", gui["pitch"])
        px, py = (p, p) if isinstance(p, int) else p
        for i in range(cols * rows):
            at = (left + r["origin"][0] + (i % cols) * px, top + r["origin"][1] + (i // cols) * py)
            out[at] = f"{screen}.{name}" if cols * rows == 1 else f"{screen}.{name}.{i}"
    return out


def covers(a, b) -> bool:
    """Whether the 18x18 GUI areas (item area plus count) at top-lefts A and B overlap."""
    return abs(a[0] - b[0]) < 18 and abs(a[1] - b[1]) < 18


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=300, help="frames (test-synth icons indices 0..N-1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--binary", type=Path, default=REPO / "target/debug/vistawise")
    ap.add_argument("--workdir", type=Path, default=DEFAULT_WORK, help="where npm installs the textures (WORKDIR/npm)")
    ap.add_argument("--real-root", type=Path, default=DEFAULT_REAL)
    ap.add_argument("--root", type=Path, default=REPO, help="project root whose config/games/minecraft.toml is read")
    ap.add_argument("--keep", type=Path, help="keep the frames and a report of the misreads here")
    args = ap.parse_args(argv)

    gui = tomllib.loads((args.root / "config/games/minecraft.toml").read_text())["gui"]
    assets = Assets(ensure_assets(args.workdir.resolve()))
    ctx = Context(assets, args.real_root, {SPLIT: background_pool(args.real_root, SPLIT)}, {"max_side": 1280})
    source = REGISTRY["icons"](ctx)
    with tempfile.TemporaryDirectory(prefix="measure-counts-") as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        measure(args, gui, source, out)


def measure(args, gui, source, out: Path):
    tally = Counter()
    misreads = []
    for index in range(args.n):
        path, meta_path = out / f"icons_{args.seed}_{index:06d}.png", out / f"icons_{args.seed}_{index:06d}.json"
        if path.is_file() and meta_path.is_file():  # kept by an earlier run (--keep): the same frame
            meta = json.loads(meta_path.read_text())
        else:
            sample = source.generate(image_rng(args.seed, SPLIT, "icons", index), SPLIT, index)
            meta = sample.meta
            Image.fromarray(sample.image).save(path)
            meta_path.write_text(json.dumps(meta))
        W, H = (int(v) for v in meta["window"].split("x"))
        s, screen = meta["gui_scale"], SCREENS[meta["screen"]]
        run = subprocess.run([str(args.binary), "--game", "minecraft", "--set", f"game.gui_scale={s}", "counts", "read",
                              str(path), "--screen", screen, "--root", str(args.root)], cwd=REPO, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"{path}: counts read failed: {run.stderr}")
        read = dict(line.split("\t", 1) for line in run.stdout.splitlines() if "\t" in line)
        names = slot_names(gui, screen, W, H, s)
        cursor = [tuple(x[1:3]) for x in meta["slots"] if x[0] == "cursor"]
        hovered = tuple(meta["hovered"]) if meta.get("hovered") else None
        for where, gx, gy, count in meta["slots"]:
            location = names.get((gx, gy))
            # the darkened HUD under an open screen, armour, off-hand and the carried stack are no slots of the screen
            if location is None or where == "cursor" or (screen != "hud" and where == "hud_hotbar"):
                continue
            kind = ("covered" if any(covers((gx, gy), c) for c in cursor) else
                    "hovered" if hovered == (gx, gy) else "drawn" if count > 1 else "undrawn")
            got = read.get(location, "missing")
            # unreadable ("?": the agent then takes the count as enough) is told from a wrong number
            verdict = "right" if got == str(count) else "unreadable" if got.startswith("?") else "wrong"
            tally[kind, verdict] += 1
            if verdict != "right":
                misreads.append(f"{path.name} {meta['texture_version']} {meta['window']} s{s} {location}: "
                                f"{count} read as {got} ({kind})")
    for kind in ("drawn", "undrawn", "hovered", "covered"):
        right, unreadable, wrong = (tally[kind, v] for v in ("right", "unreadable", "wrong"))
        n = right + unreadable + wrong
        if n:
            print(f"{kind:8s} {right}/{n} read right ({100 * right / n:.1f}%), {unreadable} unreadable, {wrong} wrong")
    print(f"frames: {args.n} (kept in {out})" if args.keep else f"frames: {args.n}")
    if args.keep:
        (out / "misreads.txt").write_text("\n".join(misreads) + "\n")
    for m in misreads[:40]:
        print("  " + m)


if __name__ == "__main__":
    main()
