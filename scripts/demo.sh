#!/usr/bin/env bash
# The main job on a fresh machine: set up, build, start a seeded Minetest world under Xvfb and let
# the agent play it from the screen (planner policy) until it holds a tree log, then write the
# session's HTML report and print its path.
#
#   scripts/demo.sh [TASK]          closed loop (default task: log; planks, stick, wooden_pickaxe
#                                   play the crafting chain, not reliable yet: docs/minetest.md)
#   scripts/demo.sh detect [FRAME]  only the detector on one frame -> out/overlay.png
#
# Env: DEMO_SEED (world seed, default 2024: the player spawns facing a tree), DEMO_STEPS (60),
# GAME_DISPLAY (:79), GAME_DIR (out/minetest). The session goes to out/sessions/.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = detect ]; then
  bash scripts/setup.sh
  FRAME=${2:-tests/fixtures/detector/images/wide_16x9.png}
  MODEL=${VISTAWISE_DEMO_MODEL:-}
  if [ -z "$MODEL" ]; then
    if [ -f models/minecraft-detector.onnx ]; then MODEL=models/minecraft-detector.onnx
    else MODEL=tests/fixtures/detector/tiny-e2e.onnx; fi
  fi
  cargo build --locked -q
  ./target/debug/vistawise detect "$FRAME" --model "$MODEL" --overlay out/overlay.png
  exit 0
fi

TASK=${1:-log}
SEED=${DEMO_SEED:-2024}
STEPS=${DEMO_STEPS:-60}
export GAME_DISPLAY=${GAME_DISPLAY:-:79}
export GAME_DIR=${GAME_DIR:-$PWD/out/minetest}
bash scripts/setup.sh --with-x
cargo build --locked -q
BIN=./target/debug/vistawise

bash tests/minetest/gameenv.sh start "$SEED"
trap 'bash tests/minetest/gameenv.sh stop' EXIT
ID="demo-$TASK-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p out/sessions
status=0
DISPLAY=$GAME_DISPLAY "$BIN" --game minetest play --policy planner --task "$TASK" \
  --max-steps "$STEPS" --max-minutes 10 --session-id "$ID" --set session.dir=out/sessions || status=$?
"$BIN" report "out/sessions/$ID" -o "out/sessions/$ID/report.html"
# What the game itself says the player holds (the probe mod's ground truth).
python3 - "$GAME_DIR/world/agent_probe/state.json" <<'PY' || true
import json, sys
state = json.load(open(sys.argv[1]))
items = [f"{s['name']} x{int(s['count'])}" for s in (state.get("main") or [])]
print("inventory (from the game):", ", ".join(items) or "empty")
PY
echo "session report: $PWD/out/sessions/$ID/report.html"
exit "$status"
