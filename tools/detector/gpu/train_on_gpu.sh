#!/usr/bin/env bash
# The device side of tools/detector/gpu/stage.py (see tools/detector/README.md, "Training on a lent GPU").
#
#   train_on_gpu.sh receive PART            copy PART/real into the stage (/tmp/stage); every call but the last
#   train_on_gpu.sh train PART [ARGS...]    the last call: add PART, check the stage against PART/kit/expect.json,
#                                           install the carried wheels, rebuild the data, finetune, fill $OUT
#
# train: ARGS go to train.py after the fixed ones (--data, --run-dir, --init-weights PART/kit/init.pt, --imgsz 640,
# --patience 0, --device 0, --batch 64, --workers, cache=ram, deterministic=False); give at least a learning rate and a
# wall-clock budget, e.g. --set optimizer=AdamW --set lr0=0.001 --set close_mosaic=5 --set time=0.1 (hours).
# TRAIN_SECONDS (default time*3600 + 75) kills train.py if it overruns, so $OUT is still filled before the call's
# limit: best.pt, last.pt (without the optimizer state), logs.tgz (data build log and stats, run logs, results.csv, progress.json). The run stays
# in /tmp/gpu-runs/NAME (NAME: RUN_NAME, default gpu) for a follow-up call while the machine is warm.
# DRY=1: a rehearsal on a CPU box (a dozen synthetic frames, a few iterations); PY= picks the python there.
set -uo pipefail
T0=$(date +%s)
el() { echo "[$(($(date +%s) - T0))s] $*"; }
die() { echo "train_on_gpu: $*" >&2; exit "${2:-2}"; }
mode=${1:-}; part=${2:-}
[ -n "$mode" ] && [ -d "$part" ] || die "usage: $0 receive|train PART [train.py args...]"
shift 2
STAGE=${STAGE:-/tmp/stage}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$STAGE/real" "$OUT"
[ -d "$part/real" ] && cp -r "$part/real/." "$STAGE/real/"
el "stage: $(find "$STAGE/real" -type f | wc -l) files"
[ "$mode" = receive ] && exit 0
[ "$mode" = train ] || die "unknown mode $mode"

kit=$(cd "$part/kit" && pwd) || die "$part has no kit/: it is not the last part"
DRY=${DRY:-0}
PY=${PY:-python3}
# Every call but the last must have landed on this same machine: count what arrived.
$PY - "$kit/expect.json" "$STAGE/real" <<'PYEOF' || exit 3
import json, sys
from pathlib import Path
expect, root = json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2])
found = {k: len(list((root / k).glob("*"))) for k in expect}
bad = {k: (found[k], n) for k, n in expect.items() if found[k] != n}
if bad:
    sys.exit(f"train_on_gpu: stage incomplete (found, expected): {bad}; an earlier part did not land on this machine")
PYEOF

SITE=/tmp/gpu-site
[ "$DRY" = 1 ] && SITE=/tmp/gpu-site-dry
$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$kit"/whl/*.whl ||
  die "wheel install failed" 4
export PYTHONPATH=$SITE${EXTRA_PYTHONPATH:+:$EXTRA_PYTHONPATH}
TEXDATA=/tmp/gpu-work/npm/node_modules/minecraft-assets/minecraft-assets/data
mkdir -p "$TEXDATA" && tar xzf "$kit/tex.tgz" -C "$TEXDATA" || die "texture unpack failed" 5
el "ultralytics and textures in place"

workers=$(($(nproc) - 1))
if [ "$DRY" = 1 ]; then
  sizes=(--synthetic-train 12 --synthetic-val 6 --workers 2)
  fixed=(--device cpu --epochs 1 --batch 4 --workers 0 --threads 2 --set fraction=0.003)
else
  sizes=(--workers "$(nproc)")
  fixed=(--device 0 --batch 64 --workers "$workers")
  nvidia-smi -L
fi
# Client frames (stage.py --client-dir) arrived under real/client/SPLIT/NAME: a source of their own, listed
# CLIENT_REPEAT times (default 2) in train as the real frames are.
client=()
for d in "$STAGE"/real/client/{train,val}/*/; do
  [ -d "$d" ] && client+=(--client-dir "$(basename "$(dirname "$d")")=${d%/}")
done
sources=(--sources real,icons,world --repeat real=2)
[ ${#client[@]} -gt 0 ] && sources=(--sources real,icons,world,client --repeat "real=2,client=${CLIENT_REPEAT:-2}" "${client[@]}")
$PY tools/detector/build_dataset.py --out /tmp/gpu-data --seed 0 "${sources[@]}" \
  --synthetic-test 0 --real-root "$STAGE/real" --workdir /tmp/gpu-work --quiet "${sizes[@]}" || die "data build failed" 6
el "$(grep -h 'build done' /tmp/gpu-data/build.log)"

hours=$(printf '%s\n' "$@" | sed -n 's/^time=//p' | tail -1)
TRAIN_SECONDS=${TRAIN_SECONDS:-$($PY -c "print(int(float('${hours:-0.1}') * 3600 + 75))")}
RUN=/tmp/gpu-runs/${RUN_NAME:-gpu}
timeout -s TERM "$TRAIN_SECONDS" $PY tools/detector/train.py --data /tmp/gpu-data/data.yaml --run-dir "$RUN" \
  --init-weights "$kit/init.pt" --imgsz 640 --patience 0 --set cache=ram --set deterministic=False \
  "${fixed[@]}" "$@"
el "train.py exited with $?"
# A run cut off by TRAIN_SECONDS leaves checkpoints with the optimizer state (26 MB each for YOLO11n):
# more than a call brings back. Without it they are 5.5 MB, and they finetune or export as they are.
$PY - "$RUN/weights" "$OUT" <<'PYEOF' || die "the run left no weights" 7
import sys
from pathlib import Path
from ultralytics.utils.torch_utils import strip_optimizer
src, out = Path(sys.argv[1]), Path(sys.argv[2])
for name in ("best.pt", "last.pt"):
    strip_optimizer(str(src / name), str(out / name))
PYEOF
(cd / && tar czf "$OUT/logs.tgz" tmp/gpu-data/build.log tmp/gpu-data/stats.json tmp/gpu-data/data.yaml \
  $(ls -d "${RUN#/}"/*.{json,log,csv,yaml,txt} 2>/dev/null))
ls -la "$OUT"
el "done"
