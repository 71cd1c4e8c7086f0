#!/usr/bin/env bash
# Idempotent set-up for a Debian 12 machine (root, package registries only):
#   - the Debian packages the Rust crates need to build (xcap: xcb/egl/gbm/wayland/pipewire),
#   - ONNX Runtime 1.31.1 from the PyPI wheel, unpacked into .ort/ (nothing else is downloaded),
#   - with --with-x: Xvfb + jwm + x11-utils for the tests that use a real X display.
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

ORT_VERSION=1.31.1
ORT_LIB=.ort/onnxruntime/capi/libonnxruntime.so.$ORT_VERSION
with_x=0
for arg in "$@"; do
  case "$arg" in
    --with-x) with_x=1 ;;
    *) echo "setup.sh: unknown option $arg (known: --with-x)" >&2; exit 2 ;;
  esac
done

packages=(pkg-config libxcb1-dev libegl-dev libgbm-dev libwayland-dev libpipewire-0.3-dev
          libclang1-14 libclang-common-14-dev ca-certificates)
# chromium: the session report is checked in a headless browser; minetest: the closed-loop
# test game (tests/minetest/gameenv.sh); ffmpeg: `vistawise annotate VIDEO` samples frames with it.
[ "$with_x" = 1 ] && packages+=(xvfb jwm x11-utils xdotool chromium minetest ffmpeg)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null; then
  echo "setup: cargo not found; install Rust 1.95 (rustup) first" >&2
  exit 1
fi

if [ ! -f "$ORT_LIB" ]; then
  echo "setup: installing ONNX Runtime $ORT_VERSION (PyPI wheel) into .ort/"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --upgrade \
    --target .ort "onnxruntime==$ORT_VERSION"
fi
test -f "$ORT_LIB" || { echo "setup: $ORT_LIB missing after install" >&2; exit 1; }

# Pillow for tools/closed_loop_runs.py (it grabs the Minecraft client's screen to wait until the
# world is drawn) and the data tools' tests, beside the repo like .ort: python3 may not be the
# system's.
PILLOW_VERSION=12.0.0
if [ "$with_x" = 1 ] && [ ! -d .work/pyx/PIL ]; then
  echo "setup: installing Pillow $PILLOW_VERSION (PyPI wheel) into .work/pyx/"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --upgrade \
    --target .work/pyx "pillow==$PILLOW_VERSION"
fi

# Ray for the sweep runner's cluster mode (tools/ray_trials.py, `closed_loop_runs.py --ray`) and
# its test, beside the repo as Pillow (PYTHONPATH=.work/raypy); nothing else needs it.
RAY_VERSION=2.60.0
if [ "$with_x" = 1 ] && [ ! -d .work/raypy/ray ]; then
  echo "setup: installing Ray $RAY_VERSION (PyPI wheel and its dependencies) into .work/raypy/"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --upgrade \
    --target .work/raypy "ray==$RAY_VERSION"
fi
echo "setup: ready (ONNX Runtime at $ORT_LIB)"
