#!/usr/bin/env bash
# The Minecraft client of the closed-loop tests: minecraft-web-client (Minecraft 1.14.4 in
# Chromium, kiosk mode, 1280x720) under Xvfb + jwm, playing on the project's test server
# (tests/mcweb/server/server.js: flying-squid plus ground truth and scene commands).
#
#   mcweb.sh build          build the client once into $MCWEB_BUILD (default .work/mcweb) from
#                           the package in $MCWEB_SRC (default ../shared/mcweb); ~1-5 min, npm
#                           registry only; skipped when that build is complete
#   mcweb.sh start          a fresh world from $MC_SEED; returns once the player stands in it;
#                           prints DISPLAY=, CMD_PORT=, STATE= lines
#   mcweb.sh stop           stops every process this game dir started (by pid, process groups)
#   mcweb.sh status         exit 0 when the server and the browser run
#
# Environment: GAME_DIR (default /tmp/vistawise-mcweb: pids, logs, state.json), GAME_DISPLAY
# (:78), GAME_W / GAME_H (the window, 1280 x 720), GAME_SCREEN (WxH: a larger display with a
# resizable window), MC_PORT / WEB_PORT / CMD_PORT (default: free ports), MC_SEED (20241024), MC_SPAWN
# ("28,26"; "random" for flying-squid's own), START_TIMEOUT (180 s).
# Ground truth: $GAME_DIR/state.json every 0.5 s; commands: POST JSON to 127.0.0.1:$CMD_PORT
# (tests/mcweb/server/README.md).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SRC=${MCWEB_SRC:-$REPO/../shared/mcweb}
BUILD=${MCWEB_BUILD:-$REPO/.work/mcweb}
GD=${GAME_DIR:-/tmp/vistawise-mcweb}
mkdir -p "$GD" && GD=$(cd "$GD" && pwd)
DISP=${GAME_DISPLAY:-:78}
# The window: GAME_W x GAME_H (default 1280x720), full screen on a display of that size (kiosk).
# GAME_SCREEN=WxH makes the display larger and the client an ordinary window of the browser
# (--app: no tabs or address bar) that a player or a test can resize.
W=${GAME_W:-1280}; H=${GAME_H:-720}
SCREEN=${GAME_SCREEN:-}

die() { echo "mcweb: $*" >&2; exit 1; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

stop_pid() {
  local f=$GD/$1.pid
  [ -f "$f" ] || return 0
  local p; p=$(cat "$f")
  # Each process was started in its own session: its pid is its process group.
  kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true
  rm -f "$f"
}
stop() { stop_pid chromium; stop_pid web; stop_pid server; stop_pid jwm; stop_pid xvfb; }
launch() { # name cmd...: own session, pid recorded, output to GAME_DIR/name.log
  local name=$1; shift
  setsid "$@" >"$GD/$name.log" 2>&1 < /dev/null &
  echo $! > "$GD/$name.pid"
}
alive() { [ -s "$GD/$1.pid" ] && kill -0 "$(cat "$GD/$1.pid")" 2>/dev/null; }

build_complete() {
  [ -f "$BUILD/dist/index.html" ] && [ -f "$BUILD/webserve.js" ] \
    && [ -d "$BUILD/server/node_modules/@zardoy/flying-squid" ]
}

build() {
  if build_complete; then echo "mcweb: client already built in $BUILD"; return 0; fi
  [ -f "$SRC/build.sh" ] && [ -f "$SRC/client-src.tar.gz" ] \
    || die "no client package at $SRC (needs build.sh and client-src.tar.gz); set MCWEB_SRC to the mcweb package folder"
  for c in node npm chromium Xvfb jwm xdotool; do
    command -v "$c" >/dev/null || die "$c is not installed: run scripts/setup.sh --with-x"
  done
  mkdir -p "$BUILD"
  echo "mcweb: building the client into $BUILD (npm registry; a few minutes; log: $BUILD/build.log)"
  # build.sh prints one line per step with its time: shown as it goes, all kept in the log.
  if ! bash "$SRC/build.sh" "$BUILD" 2>&1 | tee "$BUILD/build.log" | grep --line-buffered -E '^(== |   done|OK|FAIL|ERROR)'; then
    die "client build failed; read $BUILD/build.log (and $BUILD/logs/)"
  fi
  build_complete || die "client build ended without dist/ or the server's modules; read $BUILD/build.log"
}

start() {
  build_complete || die "the client is not built in $BUILD: run $0 build"
  command -v chromium >/dev/null || die "chromium is not installed: run scripts/setup.sh --with-x"
  stop
  rm -f "$GD"/*.log "$GD/state.json" "$GD/commands.jsonl" "$GD/commands.jsonl.out"
  local mc=${MC_PORT:-$(free_port)} web=${WEB_PORT:-$(free_port)} cmd=${CMD_PORT:-$(free_port)}
  for p in "$mc" "$web" "$cmd"; do port_open "$p" && die "port $p is in use"; done
  # Any failure from here on stops what was started, and names the log to read.
  trap 'rc=$?; if [ $rc -ne 0 ]; then stop; fi' EXIT
  export DISPLAY=$DISP
  if ! xdpyinfo >/dev/null 2>&1; then
    launch xvfb Xvfb "$DISP" -screen 0 "${SCREEN:-${W}x${H}}x24" -nolisten tcp -noreset
    for _ in $(seq 100); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
    xdpyinfo >/dev/null 2>&1 || die "Xvfb did not start on $DISP; read $GD/xvfb.log"
  fi
  # jwm publishes _NET_CLIENT_LIST_STACKING (window capture needs it); sloppy focus.
  mkdir -p "$GD/home"
  printf '<?xml version="1.0"?><JWM><FocusModel>sloppy</FocusModel></JWM>\n' > "$GD/home/.jwmrc"
  HOME="$GD/home" launch jwm jwm

  (cd "$GD" && MC_PORT=$mc CMD_PORT=$cmd STATE_FILE="$GD/state.json" CMD_FILE="$GD/commands.jsonl" \
     MC_SEED=${MC_SEED:-20241024} MC_SPAWN=${MC_SPAWN:-28,26} MC_SPAWN_LOOK=${MC_SPAWN_LOOK:-180,10} \
     NODE_PATH="$BUILD/server/node_modules" launch server node "$HERE/server/server.js")
  for _ in $(seq 240); do
    alive server || die "the test server exited during start-up; read $GD/server.log"
    port_open "$cmd" && port_open "$mc" && break; sleep 0.5
  done
  port_open "$mc" || die "the test server did not open port $mc in 120 s; read $GD/server.log"

  launch web node "$BUILD/webserve.js" "$BUILD/src" "$BUILD/dist" "$web" 127.0.0.1
  for _ in $(seq 120); do port_open "$web" && break; sleep 0.5; done
  port_open "$web" || die "the web server did not start; read $GD/web.log"

  local url="http://127.0.0.1:$web/?ip=127.0.0.1:$mc&version=1.14.4&username=agent&proxy=127.0.0.1:$web&autoConnect=1&setting=closeConfirmation:false"
  rm -rf "$GD/chrome-profile"
  local mode=(--kiosk "$url")
  # --test-type: no "unsupported command-line flag" bar above the page in a window.
  [ -n "$SCREEN" ] && mode=(--test-type --app="$url")
  launch chromium chromium --no-sandbox --use-gl=angle --use-angle=gl --ignore-gpu-blocklist \
    --user-data-dir="$GD/chrome-profile" --no-first-run --no-default-browser-check --disable-default-apps \
    --disable-session-crashed-bubble --noerrdialogs --disable-infobars --password-store=basic --disable-sync \
    --disable-component-update --disable-features=Translate,MediaRouter,DialMediaRouteProvider \
    --disable-background-timer-throttling --disable-renderer-backgrounding \
    --disable-backgrounding-occluded-windows --window-position=0,0 --window-size=$W,$H "${mode[@]}"

  local t0=$SECONDS limit=${START_TIMEOUT:-180}
  until player_on_ground; do
    alive chromium || die "chromium exited during start-up; read $GD/chromium.log"
    alive server || die "the test server exited; read $GD/server.log"
    [ $((SECONDS - t0)) -lt "$limit" ] \
      || die "the player did not stand in the world within ${limit} s; read $GD/server.log and $GD/chromium.log"
    sleep 0.5
  done
  local wid
  wid=$(xdotool search --onlyvisible --name 'Prismarine Web Client' 2>/dev/null | head -1 || true)
  [ -n "$wid" ] || die "no 'Prismarine Web Client' window; read $GD/chromium.log"
  xdotool windowactivate --sync "$wid" 2>/dev/null || xdotool windowfocus --sync "$wid" 2>/dev/null || true
  printf '%s\n' "$mc" > "$GD/mc.port"; printf '%s\n' "$cmd" > "$GD/cmd.port"
  trap - EXIT
  echo "DISPLAY=$DISP"
  echo "WINDOW=$wid"
  echo "CMD_PORT=$cmd"
  echo "STATE=$GD/state.json"
  echo "mcweb: player in the world after $((SECONDS - t0)) s (logs in $GD)" >&2
}

player_on_ground() {
  [ -s "$GD/state.json" ] && python3 - "$GD/state.json" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(1)
sys.exit(0 if any(p.get("pos") and p.get("onGround") for p in s.get("players", [])) else 1)
PY
}

case "${1:-}" in
build) build ;;
start) start ;;
stop) stop ;;
status) alive server && alive chromium ;;
*) echo "usage: $0 build|start|stop|status" >&2; exit 2 ;;
esac
