#!/usr/bin/env bash
# Builds the Minetest detector's dataset from the real game: each split is a seeded world started
# with tests/minetest/gameenv.sh and labelled by `vistawise annotate --auto minetest`.
#
#   scripts/minetest-dataset.sh [OUT] [TRAIN VAL TEST [TRAIN2]]
#
# OUT defaults to .work/minetest/data; frame counts default to 600 120 160 400. The test split is a
# different world (seed 777) from train and val (2024, different labelling seeds), so it measures
# the detector on places it never saw; TRAIN2 more training frames come from a third world (99),
# so the detector does not learn one world by heart (0 leaves it out). Re-running resumes every split where it stopped (finished
# frames are kept). Progress: OUT/build.log. Writes OUT/data.yaml for tools/detector/train.py and
# OUT/stats.json (frames, boxes, labelling rule) for tools/detector/model_card.py --stats.
# A split with 0 frames is left out.
# Env: VISTAWISE_BIN (default target/debug/vistawise), GAME_DISPLAY (default :78),
# GAME_TEXTURE_PACK (a texture folder the game draws with), LABEL_SET (an
# [autolabel.label_sets] entry to label in), TRAIN_WORLD / TRAIN2_WORLD / TEST_WORLD (world seeds,
# default 2024 / 99 / 777; val shares train's world) and LABEL_SEED_BASE (default 0: the labelling
# seeds are BASE+1..BASE+4 for train, val, test, train2). Another set of frames to add to one
# built before: other worlds and seeds, e.g.
#   TRAIN_WORLD=5150 TRAIN2_WORLD=6262 LABEL_SEED_BASE=10 scripts/minetest-dataset.sh OUT 600 0 0 600
# The Minecraft detector's frames:
#   python tools/detector/minetest_texture_pack.py --out .work/minetest/mc-pack-1.19.1
#   GAME_TEXTURE_PACK=.work/minetest/mc-pack-1.19.1 LABEL_SET=minecraft \
#     scripts/minetest-dataset.sh .work/minetest/mc-look 600 0 0 0
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-.work/minetest/data}
TRAIN=${2:-600}; VAL=${3:-120}; TEST=${4:-160}; TRAIN2=${5:-400}
BIN=${VISTAWISE_BIN:-${CARGO_TARGET_DIR:-target}/debug/vistawise}
DISP=${GAME_DISPLAY:-:78}
[ -x "$BIN" ] || { echo "minetest-dataset: $BIN not found: run cargo build first" >&2; exit 1; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { echo "$(date -u +%FT%TZ) $*" | tee -a "$OUT/build.log"; }

# split world-seed label-seed frames
TW=${TRAIN_WORLD:-2024}; T2W=${TRAIN2_WORLD:-99}; XW=${TEST_WORLD:-777}; SB=${LABEL_SEED_BASE:-0}
specs=("train $TW $((SB + 1)) $TRAIN" "val $TW $((SB + 2)) $VAL" "test $XW $((SB + 3)) $TEST")
[ "$TRAIN2" -gt 0 ] && specs+=("train2 $T2W $((SB + 4)) $TRAIN2")
for spec in "${specs[@]}"; do
  read -r split world seed frames <<<"$spec"
  [ "$frames" -gt 0 ] || continue
  have=0; [ -d "$OUT/$split/labels" ] && have=$(find "$OUT/$split/labels" -name "*.txt" | wc -l)
  # Dropped frames (the player moved, no view found) are not retried: a split is done when a
  # run over all its frame indices finished.
  if [ -f "$OUT/$split/.complete" ]; then log "$split: $have frames, done"; continue; fi
  log "$split: world $world, seed $seed, $frames frames ($have already there)"
  export GAME_DIR="$OUT/.game-$split" GAME_DISPLAY=$DISP
  bash tests/minetest/gameenv.sh start "$world" >>"$OUT/build.log" 2>&1
  trap 'bash tests/minetest/gameenv.sh stop' EXIT
  DISPLAY=$DISP "$BIN" --game minetest annotate --auto minetest -o "$OUT/$split" \
    --frames "$frames" --seed "$seed" --probe "$GAME_DIR/world/agent_probe" \
    ${LABEL_SET:+--label-set "$LABEL_SET"} 2>&1 \
    | tr '\r' '\n' | grep -v '^\s*$' | tail -n 3 >>"$OUT/build.log"
  bash tests/minetest/gameenv.sh stop
  trap - EXIT
  touch "$OUT/$split/.complete"
  log "$split: $(ls "$OUT/$split/labels" | wc -l) frames"
done

{
  echo "# Minetest detector data (scripts/minetest-dataset.sh); labelled by the game itself."
  echo "path: $OUT"
  trains=(); [ "$TRAIN" -gt 0 ] && trains+=(train/images); [ "$TRAIN2" -gt 0 ] && trains+=(train2/images)
  [ ${#trains[@]} -gt 0 ] && echo "train: [$(IFS=,; echo "${trains[*]}" | sed 's/,/, /g')]"
  [ "$VAL" -gt 0 ] && echo "val: val/images"
  [ "$TEST" -gt 0 ] && echo "test: test/images"
  # The class names: from any split built (a run of val or test frames only has no train).
  for split in train train2 val test; do
    [ -f "$OUT/$split/data.yaml" ] && { sed -n '/^names:/,$p' "$OUT/$split/data.yaml"; break; }
  done
} > "$OUT/data.yaml"
log "wrote $OUT/data.yaml"

# Frames, boxes and the labelling rule in force, for the model card (model_card.py --stats).
stat_args=()
for spec in "${specs[@]}"; do
  read -r split world seed frames <<<"$spec"
  [ "$frames" -gt 0 ] && stat_args+=(--split "$split=world $world, labelling seed $seed")
done
python3 tools/detector/dataset_stats.py "$OUT" "${stat_args[@]}" \
  --builder "${TRAIN_WORLD:+TRAIN_WORLD=$TW }${TRAIN2_WORLD:+TRAIN2_WORLD=$T2W }${TEST_WORLD:+TEST_WORLD=$XW }${LABEL_SEED_BASE:+LABEL_SEED_BASE=$SB }scripts/minetest-dataset.sh $OUT $TRAIN $VAL $TEST $TRAIN2${GAME_TEXTURE_PACK:+ (GAME_TEXTURE_PACK=$GAME_TEXTURE_PACK)}" \
  ${LABEL_SET:+--label-set "$LABEL_SET"} | tee -a "$OUT/build.log"
