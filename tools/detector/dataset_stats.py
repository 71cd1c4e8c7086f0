#!/usr/bin/env python3
"""Writes a YOLO dataset's stats.json, the `--stats` that model_card.py records as the card's data
section: frames and boxes per split and class, how the set was built, and the labelling rule in
force when it was (the `[autolabel]` keys of the game profile that decide what gets a box).

Used by scripts/minetest-dataset.sh for the game's auto-labelled sets; standard library only.

    python3 tools/detector/dataset_stats.py DATASET_DIR --builder "COMMAND" \
        [--split NAME=DESCRIPTION ...] [--profile config/games/minetest.toml] [--label-set NAME]
"""
import argparse
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _yolo_env as env  # noqa: E402  (standard library only at import)

# The [autolabel] keys that decide which boxes a frame gets.
RULE_KEYS = ("radius", "class_radius", "grid", "min_box_px", "min_box_luma", "merge_columns",
             "merge_regions", "hud_panel", "inventory_panel", "inventory_fraction", "distractors",
             "pits", "views", "hud_negatives")
SET_KEYS = ("classes", "merge_columns", "merge_regions", "class_radius", "distractors")


def class_names(dataset: Path) -> list[str]:
    """The class names of data.yaml's `names:` block (`  0: tree` lines)."""
    yaml = dataset / "data.yaml"
    if not yaml.is_file():
        sys.exit(f"{yaml}: missing (build the dataset first)")
    names, inside = {}, False
    for n, line in enumerate(yaml.read_text().splitlines(), 1):
        if line.startswith("names:"):
            inside = True
        elif inside and line.startswith("  "):
            key, _, value = line.strip().partition(":")
            if not key.isdigit() or not value.strip():
                sys.exit(f"{yaml}:{n}: expected `  ID: name` in names, got {line!r}")
            names[int(key)] = value.strip()
        elif inside and line.strip():
            break
    if not names:
        sys.exit(f"{yaml}: no `names:` block")
    return [names[i] for i in sorted(names)]


def split_counts(folder: Path, names: list[str]) -> dict:
    """Frames and boxes per class of one split folder (labels/*.txt)."""
    boxes = {name: 0 for name in names}
    frames = 0
    for label in sorted((folder / "labels").glob("*.txt")):
        frames += 1
        for n, line in enumerate(label.read_text().splitlines(), 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 5 or not fields[0].isdigit() or int(fields[0]) >= len(names):
                sys.exit(f"{label}:{n}: not a `class cx cy w h` line of {len(names)} classes: {line!r}")
            boxes[names[int(fields[0])]] += 1
    return {"frames": frames, "boxes": boxes}


def labelling_rule(profile: Path, label_set: str | None) -> dict:
    try:
        autolabel = tomllib.loads(profile.read_text()).get("autolabel") or {}
    except (OSError, tomllib.TOMLDecodeError) as e:
        sys.exit(f"{profile}: {e}")
    rule = {k: autolabel[k] for k in RULE_KEYS if k in autolabel}
    if label_set:
        chosen = autolabel.get("label_sets", {}).get(label_set)
        if chosen is None:
            sys.exit(f"{profile}: no [autolabel.label_sets.{label_set}]")
        rule.pop("class_radius", None)  # a set's classes differ: the profile's radii stay behind
        rule.update({k: chosen[k] for k in SET_KEYS if k in chosen})
        rule["label_set"] = label_set
    rule["profile"] = str(profile)
    return rule


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", type=Path, help="the folder with data.yaml and one folder per split")
    ap.add_argument("--builder", required=True, help="the command that built the set")
    ap.add_argument("--split", action="append", default=[], metavar="NAME=DESCRIPTION",
                    help="a split folder to count, with where its frames come from (repeatable)")
    ap.add_argument("--profile", type=Path, default=Path("config/games/minetest.toml"))
    ap.add_argument("--label-set", help="the [autolabel.label_sets] entry the frames were labelled in")
    ap.add_argument("--out", type=Path, help="default: DATASET/stats.json")
    args = ap.parse_args()

    names = class_names(args.dataset)
    splits = {}
    for item in args.split:
        name, _, description = item.partition("=")
        folder = args.dataset / name
        if not (folder / "labels").is_dir():
            sys.exit(f"--split {item}: {folder / 'labels'} is missing")
        splits[name] = {"from": description, **split_counts(folder, names)}
    stats = {
        "builder": args.builder,
        "classes": names,
        "splits": splits,
        "labels": labelling_rule(args.profile, args.label_set),
    }
    out = args.out or args.dataset / "stats.json"
    env.atomic_write_json(out, stats)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
