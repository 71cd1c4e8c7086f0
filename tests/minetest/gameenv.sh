#!/usr/bin/env bash
# The closed-loop test game: Minetest 5.6 + minetest_game (Debian) in a seeded world under Xvfb
# with the jwm window manager, and the project's ground-truth probe mod (agent_probe/).
#
#   gameenv.sh install            Debian packages (idempotent, ~30 s the first time)
#   gameenv.sh start [SEED]       a fresh world from SEED (default 2024); returns once the player
#                                 has joined and the window has focus; prints DISPLAY, WINDOW, PROBE
#   gameenv.sh stop               stops the game, the window manager and the X server
#   gameenv.sh status             exit 0 when the game is running
#
# Environment: GAME_DIR (default /tmp/vistawise-minetest), GAME_DISPLAY (:77), GAME_W x GAME_H
# (854x480: the window the minetest profile's GUI geometry was measured at), GAME_EXTRA_CONF
# (extra minetest.conf lines), GAME_PORT (the local server's UDP port; default 30000 + display),
# GAME_TEXTURE_PACK (a texture folder the game draws with, e.g. the Minecraft look built by
# tools/detector/minetest_texture_pack.py).
# Ground truth, written by the probe into $GAME_DIR/world/agent_probe/:
#   state.json    player pose, look, inventory lists, 5 times a second (written atomically)
#   events.jsonl  join / dig / place / craft / inventory / cmd_done events, one JSON object a line
#   cmd.jsonl     test and labelling commands, appended by the caller (see agent_probe/init.lua)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
GD=${GAME_DIR:-/tmp/vistawise-minetest}
# Absolute, so that the pid files and the world path do not depend on the caller's directory.
mkdir -p "$GD" && GD=$(cd "$GD" && pwd)
DISP=${GAME_DISPLAY:-:77}
W=${GAME_W:-854}; H=${GAME_H:-480}
# The game's local server port, one per display so that games on other displays do not clash.
PORT=${GAME_PORT:-$((30000 + ${DISP#:}))}
# The X screen is larger than the game window so jwm's title bar does not push it off-screen.
SW=$((W + 96)); SH=$((H + 96))

stop_pid() {
  local f=$GD/$1.pid
  [ -f "$f" ] || return 0
  local p; p=$(cat "$f")
  kill "$p" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$p" 2>/dev/null || true
  rm -f "$f"
}
stop() { stop_pid minetest; stop_pid jwm; stop_pid xvfb; }

case "${1:-}" in
install)
  if command -v /usr/games/minetest >/dev/null && command -v Xvfb >/dev/null \
     && command -v jwm >/dev/null && command -v xdotool >/dev/null \
     && [ -d /usr/share/games/minetest/games/minetest_game ]; then exit 0; fi
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends minetest minetest-data xvfb jwm xdotool \
    x11-utils libgl1-mesa-dri >/dev/null
  ;;
stop) stop ;;
status)
  [ -f "$GD/minetest.pid" ] && kill -0 "$(cat "$GD/minetest.pid")" 2>/dev/null
  ;;
start)
  SEED=${2:-2024}
  command -v /usr/games/minetest >/dev/null || { echo "minetest is not installed: run $0 install" >&2; exit 1; }
  TEXTURES=
  if [ -n "${GAME_TEXTURE_PACK:-}" ]; then
    [ -d "$GAME_TEXTURE_PACK" ] || { echo "GAME_TEXTURE_PACK=$GAME_TEXTURE_PACK is not a folder" >&2; exit 1; }
    TEXTURES="texture_path = $(cd "$GAME_TEXTURE_PACK" && pwd)"
  fi
  stop
  rm -rf "$GD/world" "$GD/home"
  mkdir -p "$GD/home" "$GD/world/worldmods"
  cat > "$GD/minetest.conf" <<CONF
screen_w = $W
screen_h = $H
autosave_screensize = false
fullscreen = false
vsync = false
fps_max = 30
fps_max_unfocused = 30
pause_on_lost_focus = false
viewing_range = 60
enable_clouds = false
menu_clouds = false
enable_shaders = false
enable_particles = false
enable_minimap = false
smooth_lighting = true
leaves_style = simple
enable_sound = false
mute_sound = true
fixed_map_seed = $SEED
mg_name = v7
time_speed = 0
world_start_time = 10000
enable_weather = false
enable_damage = false
creative_mode = false
give_initial_stuff = false
default_privs = interact, shout, give, teleport, settime, fly, fast, noclip, debug, home
debug_log_level = action
chat_log_level = error
show_debug = false
bind_address = 127.0.0.1
port = $PORT
remote_port = $PORT
mouse_sensitivity = 0.2
fov = 72
view_bobbing_amount = 0
fall_bobbing_amount = 0
num_emerge_threads = 1
keymap_inventory = KEY_KEY_E
keymap_aux1 = KEY_LCONTROL
secure.enable_security = true
$TEXTURES
${GAME_EXTRA_CONF:-}
CONF
  printf 'gameid = minetest_game\nbackend = sqlite3\nplayer_backend = sqlite3\nauth_backend = sqlite3\nmod_storage_backend = sqlite3\n' > "$GD/world/world.mt"
  printf 'mg_name = v7\nseed = %s\n[end_of_params]\n' "$SEED" > "$GD/world/map_meta.txt"
  cp -r "$HERE/agent_probe" "$GD/world/worldmods/agent_probe"
  export DISPLAY=$DISP
  if ! xdpyinfo >/dev/null 2>&1; then
    Xvfb "$DISP" -screen 0 "${SW}x${SH}x24" -nolisten tcp -noreset >"$GD/xvfb.log" 2>&1 &
    echo $! > "$GD/xvfb.pid"
    for _ in $(seq 100); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
    xdpyinfo >/dev/null 2>&1 || { echo "Xvfb did not start on $DISP:" >&2; cat "$GD/xvfb.log" >&2; exit 1; }
  fi
  # jwm publishes _NET_CLIENT_LIST_STACKING (window capture needs it); sloppy focus sends keys to
  # the window under the pointer.
  printf '<?xml version="1.0"?><JWM><FocusModel>sloppy</FocusModel></JWM>\n' > "$GD/home/.jwmrc"
  HOME="$GD/home" setsid jwm >"$GD/jwm.log" 2>&1 < /dev/null & echo $! > "$GD/jwm.pid"
  LIBGL_ALWAYS_SOFTWARE=1 GALLIUM_DRIVER=llvmpipe HOME="$GD/home" setsid /usr/games/minetest --go \
    --world "$GD/world" --name agent --password '' --config "$GD/minetest.conf" \
    --logfile "$GD/debug.txt" >"$GD/stdout.log" 2>&1 < /dev/null &
  echo $! > "$GD/minetest.pid"
  alive() {
    kill -0 "$(cat "$GD/minetest.pid")" 2>/dev/null && return 0
    echo "minetest exited during start-up; the end of $GD/debug.txt:" >&2
    tail -20 "$GD/debug.txt" >&2; exit 1
  }
  WID=
  for _ in $(seq 600); do
    alive
    WID=$(xdotool search --onlyvisible --name '^Minetest' 2>/dev/null | head -1 || true)
    [ -n "$WID" ] && break; sleep 0.1
  done
  [ -n "$WID" ] || { echo "no Minetest window after 60 s" >&2; exit 1; }
  PROBE=$GD/world/agent_probe
  for _ in $(seq 600); do alive; [ -s "$PROBE/state.json" ] && break; sleep 0.1; done
  [ -s "$PROBE/state.json" ] || { echo "the player never joined (no $PROBE/state.json)" >&2; exit 1; }
  # Irrlicht ignores mouse-look until its window has X input focus.
  xdotool windowactivate --sync "$WID" 2>/dev/null || xdotool windowfocus --sync "$WID"
  eval "$(xdotool getwindowgeometry --shell "$WID")"
  xdotool mousemove $((X + W / 2)) $((Y + H / 2))
  echo "DISPLAY=$DISP WINDOW=$WID PID=$(cat "$GD/minetest.pid") PROBE=$PROBE"
  ;;
*) echo "usage: $0 install|start [SEED]|stop|status" >&2; exit 2 ;;
esac
