#!/usr/bin/env bash
# The main job on its built-in default: set up, build, and run the detector on a frame shipped in
# the repository, writing the labelled overlay to out/overlay.png.
# (Until the closed-loop agent lands this is `vistawise detect`; later it becomes `play`.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
FRAME=${1:-tests/fixtures/detector/images/wide_16x9.png}
MODEL=${VISTAWISE_DEMO_MODEL:-}
if [ -z "$MODEL" ]; then
  if [ -f models/minecraft-detector.onnx ]; then MODEL=models/minecraft-detector.onnx
  else MODEL=tests/fixtures/detector/tiny-e2e.onnx; fi
fi
cargo build --locked -q
./target/debug/vistawise detect "$FRAME" --model "$MODEL" --overlay out/overlay.png
