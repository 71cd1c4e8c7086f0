#!/usr/bin/env python3
"""Writes a detector's model card, models/<name>.json, from what the pipeline already measured:

- the export sidecar `<model>.onnx.export.json` (export.py): sha256, input size, export args,
  tool versions, the training run's command, epochs and best val metrics; for an int8 model
  (quantize.py) also its `quantization` section;
- the dataset's `stats.json` (build_dataset.py): data sources and per-class counts per split;
- `vistawise eval --json` reports (the project's own Rust runtime), one per split:
  val, the real held-out test split (reported once per released model), the synthetic test split.

Usage (repository root; --bootstrap 1000 puts each AP's 95% interval on the card beside it):
    ./target/debug/vistawise eval models/minecraft-detector.onnx .work/detector/data --split val --bootstrap 1000 --json > val.json
    ./target/debug/vistawise eval models/minecraft-detector.onnx ../shared/datasets/minecraft-real --split test --bootstrap 1000 --json > test-real.json
    ./target/debug/vistawise eval models/minecraft-detector.onnx .work/detector/data --split test --bootstrap 1000 --json > test-synth.json
    python tools/detector/model_card.py models/minecraft-detector.onnx --stats .work/detector/data/stats.json \
        --eval val=val.json --eval test_real=test-real.json --eval test_synthetic=test-synth.json

The card is checked before it is written: the sha256 of the ONNX must equal the one in the export sidecar and in
every eval report, so numbers of another model can never end up on this card.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _yolo_env as env  # noqa: E402


def per_class(report: dict) -> dict:
    """Per-class numbers of a `vistawise eval --json` report, keyed by class name; with the 95%
    intervals (`ap50_ci`, `ap50_95_ci`: [low, high]) when it was run with --bootstrap."""
    intervals = {c["class_id"]: c for c in (report.get("bootstrap") or {}).get("classes", [])}
    out = {}
    for c in report["classes"]:
        row = {k: c[k] for k in ("instances", "images", "ap50", "ap50_95", "precision", "recall")}
        if c["class_id"] in intervals:
            ci = intervals[c["class_id"]]
            row.update(ap50_ci=span(ci["ap50"]), ap50_95_ci=span(ci["ap50_95"]))
        out[c["class"]] = row
    return out


def span(interval: dict) -> list:
    return [interval["low"], interval["high"]]


def bootstrap_section(report: dict) -> dict:
    """The means' intervals and how they were drawn; empty without --bootstrap."""
    b = report.get("bootstrap")
    if not b:
        return {}
    return {
        "map50_ci": span(b["map50"]),
        "map50_95_ci": span(b["map50_95"]),
        "intervals": {"method": "percentile bootstrap over the images (vistawise eval --bootstrap)",
                      "level": b["level"], "resamples": b["resamples"], "seed": b["seed"]},
    }


def data_section(stats: list[Path]):
    """One stats.json as it is; several (a model trained on more than one data set) as a list."""
    sections = [json.loads(p.read_text()) for p in stats]
    if not sections:
        return None
    return sections[0] if len(sections) == 1 else sections


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", type=Path, help="the exported ONNX (its .export.json must sit next to it)")
    ap.add_argument("--stats", type=Path, action="append", default=[],
                    help="the dataset's stats.json (build_dataset.py, dataset_stats.py); repeat it for "
                         "a model trained on several data sets: the card's data is then a list")
    ap.add_argument("--eval", action="append", default=[], metavar="NAME=FILE",
                    help="a `vistawise eval --json` report (repeatable): val=..., test_real=..., test_synthetic=...")
    ap.add_argument("--notes", default="", help="free text: what the numbers mean, known gaps")
    ap.add_argument("--out", type=Path, help="default: the model path with .json")
    args = ap.parse_args()

    try:
        sidecar, digest = env.read_export_sidecar(args.model)
    except ValueError as e:
        sys.exit(str(e))

    evaluations = {}
    for item in args.eval:
        name, _, file = item.partition("=")
        if not file:
            sys.exit(f"--eval {item}: expected NAME=FILE")
        report = json.loads(Path(file).read_text())
        if report.get("model_sha256") != digest:
            sys.exit(f"{file} was measured on another model (sha256 {report.get('model_sha256')})")
        evaluations[name] = {
            "dataset": report["dataset"],
            "split": report["split"],
            "images": report["images"],
            "instances": report["instances"],
            "ap_method": report["ap_method"],
            "conf_for_precision_recall": report["conf"],
            "map50": report["map50"],
            "map50_95": report["map50_95"],
            **bootstrap_section(report),
            "per_class": per_class(report),
        }

    meta = sidecar["onnx"]["metadata"]
    card = {
        "name": args.model.stem,
        "file": args.model.name,
        "sha256": digest,
        "size_bytes": args.model.stat().st_size,
        "classes": sidecar.get("classes") or meta.get("names"),
        "input_size_hw": sidecar["export"]["imgsz_hw"],
        # Dynamic: any size up to input_size_hw; each frame gets the smallest stride-multiple rectangle.
        "input_dynamic": bool(sidecar["export"].get("dynamic", False)),
        "output": sidecar["export"]["output"],
        "data": data_section(args.stats),
        "training": sidecar.get("training"),
        "export": sidecar["export"],
        # quantize.py's: the float source (file, sha256), settings, calibration frames, the check.
        **({"quantization": sidecar["quantization"]} if "quantization" in sidecar else {}),
        "versions": sidecar["versions"],
        "evaluation": evaluations,
        "evaluated_with": "vistawise eval (the project's Rust runtime); AP is COCO-style 101-point",
        "notes": args.notes,
    }
    out = args.out or args.model.with_suffix(".json")
    env.atomic_write_json(out, card)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
