#!/usr/bin/env python3
"""Success counts of the closed loop on a real game: N seeded runs of a task chain.

Two games (`--game`): the Minecraft browser client (`minecraft-web`: tests/mcweb, the chain
log -> planks -> crafting_table -> wooden_pickaxe -> cobblestone -> stone_pickaxe -> coal, each
judged by the test server's inventory; every run a fresh world, the player put 2.5-4.5 blocks
from a trunk with the run's seed; before coal, an open pit as for Minetest; `--chain` picks the
rest of the tech tree from declared starts: `iron` furnace -> iron_ingot -> iron_pickaxe,
`iron_ore`, `diamond`, or `full`, log to diamond; see MCWEB_CHAINS) and Minetest (`minetest`,
the default, as below).

Each Minetest run starts a fresh world (tests/minetest/gameenv.sh), stands the player in front of a tree
(the probe's view_near with the run's seed, as the closed-loop test does), then plays
log -> planks -> stick -> wooden_pickaxe -> cobblestone -> stone_pickaxe -> coal (`--tasks` picks
the first ones; before the coal task the probe digs an open pit and stands the player near its
ore) with `vistawise --game minetest play`, each task a session of its own, and asks the game
(the probe's inventory) whether the task's item is there. A task is only tried when the one
before it succeeded. Prints a table and writes OUT/runs.json with every
session's path, steps, end reason and the median time of each pipeline stage.

From nothing (`--start nothing`), as the paper counts and as a user starts: per run a world
seed (`--first-world`, consecutive, none skipped), the game's own spawn (the client: flying-squid's
rule drawn from the run's seed, MC_SPAWN=random:SEED; Minetest: the map generator's), an empty
bag and no scene command after the start; one `vistawise play --task TARGET` (`--target`,
default stone_pickaxe) plans the whole chain. A poller reads the game's state file (the server's
or the probe's inventory) every second and records, for each milestone of the tech tree up to the
target, the step and the time it was first held. Every command sent to the game is recorded with
the run; after the start there are none. `--table RUNS.json [RUNS.json ...]` prints the
milestone table of committed batches. A batch too long for one sitting is run in parts
(`--first-world`/`--runs`) with one snapshot of the binary and its data, named by `--commit`;
`--table` merges the parts and `--merge OUT.json` writes them as one batch.

Usage (from the repository root, after cargo build; stdlib only):
    python3 tools/closed_loop_runs.py --game minecraft-web --start nothing --runs 10 --first-world 1001 \
        --bin target/release/vistawise --out out/nothing-mcweb
    python3 tools/closed_loop_runs.py --table docs/results/from-nothing/*.json
    python3 tools/closed_loop_runs.py --table part1/runs.json part2/runs.json --merge batch.json
    python3 tools/closed_loop_runs.py --game minecraft-web --runs 10 [--first-seed 101]
    python3 tools/closed_loop_runs.py --game minecraft-web --chain iron --runs 15 --first-seed 701
    python3 tools/closed_loop_runs.py --runs 10 [--policy planner] [--world 2024] [--out out/closed-loop-runs]
    python3 tools/closed_loop_runs.py --runs 3 --policy llm -- --set llm.base_url=http://127.0.0.1:8080/v1
    python3 tools/closed_loop_runs.py --game minecraft-web --tasks 2 --runs 10 --policy subgoal -- --set llm.base_url=http://127.0.0.1:8088/v1 --set llm.model=local-qwen2.5-coder-1.5b
    python3 tools/closed_loop_runs.py --runs 5 --tasks 6 --keep stone_pickaxe:default:cobble:2   # too few cobblestones
    python3 tools/closed_loop_runs.py --runs 5 --tasks 4 --biome taiga,coniferous_forest --trunk default:pine_tree
Arguments after `--` go to every `vistawise play`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHAIN = [  # task, the game's item that proves it (group:NAME: any item of the group), step limit
    ("log", "group:tree", 40),  # any trunk is a log (pine, jungle, aspen, acacia)
    ("planks", "group:wood", 10),
    ("stick", "default:stick", 10),
    ("wooden_pickaxe", "default:pick_wood", 12),
    ("cobblestone", "default:cobble", 12),
    ("stone_pickaxe", "default:pick_stone", 12),
    ("coal", "default:coal_lump", 20),
]
# Before the coal task the player is put into an open pit (dug by the probe, 11x11 and 10 deep,
# 12 nodes from where the chain started) 2.5-4.5 nodes from exposed coal ore: ore is rarely in
# sight near the surface, as trees are for the log task. The agent still has to find, approach,
# aim at and mine it; coal lumps dug on the way down for cobblestone are taken away first. Ore
# comes in clusters, so a pit may show none: up to 4 pits are dug (east, south, west, north); a
# run none of whose pits shows ore counts as "no ore" (not tried).
PIT = {"half_width": 5, "depth": 10, "distance": 12, "tries": 4}
# The Minecraft client's chain: task, the end of the server's item name that proves it (any log
# is a log), step limit.
MCWEB_CHAIN = [
    ("log", "_log", 40),
    ("planks", "_planks", 12),
    ("crafting_table", "crafting_table", 14),
    ("wooden_pickaxe", "wooden_pickaxe", 120),
    ("cobblestone", "cobblestone", 20),
    ("stone_pickaxe", "stone_pickaxe", 60),
    ("coal", "coal", 30),
]

# The rest of the tech tree on the client, from declared starts (`--chain`), each a fresh world
# with the player 2.5-4.5 blocks from a trunk as for the log task and then:
#   iron: the bag set to `start` (window slots: 36-44 hotbar, 9-35 main: what the chain up to
#         coal and 3 iron ores leave, with a crafting table), then furnace -> iron_ingot ->
#         iron_pickaxe, each task from what the one before left;
#   iron_ore: a stone pickaxe, and the player in an open pit (as for coal) near iron ore;
#   diamond: an iron pickaxe, and the player in an open pit dug down to y 12 (the generator puts
#            diamond ore in stone below y 20) near diamond ore.
# The iron and diamond ore faced is in a wall at the feet or the eyes (`levels`): a diamond dug
# out of the pit's floor left its item in the hole, where the step forward and the walk to the
# drop did not reach it (3 of the first 4 diamond runs failed; the two looked at frame by frame so).
MCWEB_CHAINS = {
    "wood": {"tasks": MCWEB_CHAIN},
    "iron": {"tasks": [("furnace", "furnace", 30), ("iron_ingot", "iron_ingot", 40),
                       ("iron_pickaxe", "iron_pickaxe", 60)],
             "start": {"36": "crafting_table 1", "37": "cobblestone 10", "38": "oak_planks 10",
                       "39": "stick 2", "40": "stone_pickaxe 1", "41": "coal 2", "20": "iron_ore 3"}},
    "iron_ore": {"tasks": [("iron_ore", "iron_ore", 30)], "start": {"36": "stone_pickaxe 1"},
                 "pit": {"ore": "iron_ore", "drop": "iron_ore", "levels": [0, 1]}},
    "diamond": {"tasks": [("diamond", "diamond", 30)], "start": {"36": "iron_pickaxe 1"},
                "pit": {"ore": "diamond_ore", "drop": "diamond", "floor_y": 12, "levels": [0, 1]}},
}
# Before these tasks of a chain the player is put in an open pit near the ore (the scenes above);
# the bag is what the tasks before left, less the ore's own item.
PIT_BEFORE = {"coal": {}, "iron_ore": MCWEB_CHAINS["iron_ore"]["pit"], "diamond": MCWEB_CHAINS["diamond"]["pit"]}
# full: from an empty bag by a trunk to a diamond, each task from what the one before left, pits
# before coal, iron ore and diamond.
MCWEB_CHAINS["full"] = {"tasks": MCWEB_CHAIN + [("iron_ore", "iron_ore", 30)] + MCWEB_CHAINS["iron"]["tasks"]
                        + MCWEB_CHAINS["diamond"]["tasks"]}

# The client's sky colour (three.js clear colour "lightblue"), read from its frames.
SKY = (173, 217, 230)


class McwebGame:
    """tests/mcweb/mcweb.sh and its test server's command port."""

    def __init__(self, game_dir: Path, display: str, world: int, window: tuple[int, int] | None = None,
                 spawn: str | None = None):
        self.env = dict(os.environ, GAME_DIR=str(game_dir), GAME_DISPLAY=display,
                        MC_SEED=str(world), MC_SPAWN_LOOK="none", **window_env(window),
                        **({"MC_SPAWN": spawn} if spawn else {}))
        self.dir = game_dir
        # Every command sent to the test server, in order: a run's record proves what was set.
        self.commands: list[dict] = []

    def script(self, *args: str) -> str:
        out = subprocess.run(["bash", str(REPO / "tests/mcweb/mcweb.sh"), *args], env=self.env,
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"mcweb.sh {' '.join(args)} failed:\n{out.stdout}{out.stderr}")
        return out.stdout

    def send(self, cmd: dict) -> dict:
        self.commands.append({"t": round(time.time(), 1), **cmd})
        port = (self.dir / "cmd.port").read_text().strip()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/", data=json.dumps(cmd).encode(), method="POST")
        try:
            answer = json.loads(urllib.request.urlopen(req, timeout=90).read())
        except urllib.error.HTTPError as e:
            answer = json.loads(e.read() or b"{}")
        if "error" in answer:
            raise RuntimeError(f"test server refused {cmd['cmd']}: {answer['error']}")
        return answer

    def start_bare(self) -> None:
        """A fresh world with the player where the server spawned it, nothing sent to it."""
        self.script("build")
        self.script("start")
        self.wait_drawn()

    def inventory(self) -> list[dict]:
        """The player's slots from the server's state file (no command: the harness writes it
        every 0.5 s); [] until the player joined."""
        return [s for s in self.recorded_player().get("inventory", []) if s.get("slot", 0) >= 5]

    def health(self):
        """The player's health from the server's state file (0: dead); None until it joined."""
        return self.recorded_player().get("health")

    def recorded_player(self) -> dict:
        """The player's record in the server's state file, read without a command (a run from
        nothing sends none after its start); {} until it joined."""
        try:
            state = json.loads((self.dir / "state.json").read_text())
        except (OSError, json.JSONDecodeError):
            return {}
        return (state.get("players") or [{}])[0]

    def start(self, seed: int) -> None:
        self.script("build")
        self.script("start")
        self.send({"cmd": "clear"})
        self.send({"cmd": "face_block", "seed": seed, "min_dist": 2.5, "max_dist": 4.5, "levels": [0, 1]})
        # The client draws the new place a few frames after the teleport (a run started at once
        # showed the sky of the unloaded spawn and explored from there), and under load its chunks
        # came up to 30 s later (seed 184: eleven steps of sky, then a walk away from the trunk).
        time.sleep(3.0)
        self.wait_drawn()

    def wait_drawn(self, limit: float = 90.0) -> None:
        """Waits until the middle of the screen is not all sky: the player faces a trunk and the
        ground, and the client, which draws chunks only after the server sends them, shows
        nothing but its sky colour around the crosshair until it has drawn them."""
        # Only here: the Minetest runs do not need Pillow's X grab (scripts/setup.sh --with-x
        # installs it into .work/pyx).
        sys.path.insert(0, str(REPO / ".work/pyx"))
        try:
            from PIL import ImageGrab
        except ImportError as e:
            raise RuntimeError(f"Pillow is missing ({e}): run `bash scripts/setup.sh --with-x`") from e

        t0 = time.monotonic()
        while time.monotonic() - t0 < limit:
            frame = ImageGrab.grab(xdisplay=self.env["GAME_DISPLAY"]).convert("RGB")
            w, h = frame.size
            middle = frame.crop((w // 4, h // 4, 3 * w // 4, 3 * h // 4)).reduce(4)
            raw = middle.tobytes()
            pixels = [raw[i:i + 3] for i in range(0, len(raw), 3)]
            sky = sum(1 for p in pixels if max(abs(a - b) for a, b in zip(p, SKY)) <= 6)
            if sky < 0.85 * len(pixels):
                return
            time.sleep(1.0)
        print(f"the client still showed only sky after {limit:.0f} s; playing anyway", flush=True)

    def player(self) -> dict:
        """The player as the server's state has it ({} before it joined)."""
        return (self.send({"cmd": "state"}).get("players") or [{}])[0]

    def pose(self) -> dict:
        """The player's position, yaw and pitch as the server has them ({} when it has none)."""
        player = self.player()
        return {k: player[k] for k in ("pos", "yaw", "pitch") if k in player}

    def count(self, suffix: str) -> int:
        player = self.player()
        # Slots 0-4 are the 2x2 crafting grid and its result: not owned.
        return sum(int(s["count"]) for s in player.get("inventory", [])
                   if s["slot"] >= 5 and s["name"].endswith(suffix))

    def stand_near_ore(self, seed: int, ore: str = "coal_ore", drop: str = "coal",
                       floor_y: int | None = None, levels: list[int] | None = None) -> None:
        """As Minetest's `stand_near_ore`: the ore's item (`drop`) dug on the way is taken away,
        then an open pit is dug beside where the player is (up to PIT['tries'] places; down to
        `floor_y` when given) and the player put 2.5-4.5 blocks from `ore` in its walls (at
        these heights above the player's feet when `levels` is given)."""
        player = self.player()
        kept = {str(s["slot"]): f"{s['name']} {s['count']}" for s in player.get("inventory", [])
                if 9 <= s["slot"] <= 44 and s["name"] != drop}
        self.send({"cmd": "set_inventory", "slots": kept})
        try_pits(player["pos"],
                 lambda lo, hi: self.send({"cmd": "excavate", "min": lo, "max": hi}),
                 lambda floor, radius: self.send({"cmd": "face_block", "blocks": [ore], "seed": seed,
                                                  "x": floor[0], "y": floor[1], "z": floor[2], "radius": radius,
                                                  "min_dist": 2.5, "max_dist": 4.5,
                                                  **({"levels": levels} if levels else {})}),
                 floor_y)
        # A deep pit is thousands of changed blocks: the client drew the old place, by the trunk,
        # for the first 11 steps of a diamond run. `sync` answers once it has read every packet
        # sent before it (the teleport among them); it draws them a moment later.
        if not self.send({"cmd": "sync", "timeout_ms": 60000}).get("synced"):
            print("the client did not catch up with the pit within 60 s; playing anyway", flush=True)
        time.sleep(2.0)

    def stop(self) -> None:
        self.script("stop")


def window_env(window: tuple[int, int] | None) -> dict:
    """GAME_W / GAME_H for the game scripts (tests/mcweb/mcweb.sh, tests/minetest/gameenv.sh)."""
    return {"GAME_W": str(window[0]), "GAME_H": str(window[1])} if window else {}


def parse_window(text: str) -> tuple[int, int]:
    w, sep, h = text.lower().partition("x")
    if not (sep and w.isdigit() and h.isdigit() and int(w) >= 320 and int(h) >= 240):
        raise argparse.ArgumentTypeError(f"--window {text}: expected WIDTHxHEIGHT, at least 320x240 (e.g. 1024x600)")
    return int(w), int(h)


def parse_commit(text: str) -> str:
    if not (7 <= len(text) <= 40 and all(c in "0123456789abcdef" for c in text.lower())):
        raise argparse.ArgumentTypeError(f"--commit {text}: expected a git commit id (7-40 hex digits)")
    return text.lower()


def drop_item(probe: "Probe", item: str) -> None:
    """Takes every stack of `item` out of the main inventory (the rest stays in its slots)."""
    slots = [""] * 32
    for st in probe.state().get("main") or []:
        if st["name"] != item:
            slots[int(st["slot"]) - 1] = f"{st['name']} {int(st['count'])} {int(st.get('wear', 0))}"
    probe.send({"op": "set_list", "list": "main", "items": slots})


def keep_only(probe: "Probe", item: str, n: int) -> None:
    """Sets `item` in the main inventory to one stack of n, in its first stack's slot (fewer than a recipe needs,
    as a short dig brings: does the agent read the count and get more?)."""
    slots, first = [""] * 32, None
    for st in probe.state().get("main") or []:
        if st["name"] == item:
            first = int(st["slot"]) - 1 if first is None else first
        else:
            slots[int(st["slot"]) - 1] = f"{st['name']} {int(st['count'])} {int(st.get('wear', 0))}"
    if first is not None and n > 0:
        slots[first] = f"{item} {n}"
    probe.send({"op": "set_list", "list": "main", "items": slots})


def try_pits(start: dict, dig, face, floor_y: int | None = None) -> None:
    """Digs an open pit PIT['distance'] east, south, west, then north of `start` ({x, y, z}) until
    `face(floor [x, y, z], radius)` stands the player near ore in its walls; `dig(lo, hi)` clears
    a box ([x, y, z] corners, at most 64 apart: a deep pit is dug in slices). The pit is
    PIT['depth'] deep, or reaches down to `floor_y` (the diamond scene). `face` raises
    RuntimeError when a pit shows none."""
    y, hw = round(start["y"]), PIT["half_width"]
    bottom = y - PIT["depth"] if floor_y is None else floor_y - 1
    last = None
    for k in range(PIT["tries"]):
        dx, dz = [(1, 0), (0, 1), (-1, 0), (0, -1)][k % 4]
        cx, cz = round(start["x"] + dx * PIT["distance"]), round(start["z"] + dz * PIT["distance"])
        top = y + 16
        while top >= bottom:
            dig([cx - hw, max(bottom, top - 60), cz - hw], [cx + hw, top, cz + hw])
            top -= 61
        try:
            face([cx, bottom + 1, cz], hw + 2)
            # The client draws the pit only once the server has sent it the changed map blocks:
            # the first frames right after the teleport were black.
            time.sleep(3.0)
            return
        except RuntimeError as e:
            last = e
    raise RuntimeError(f"no ore in the walls of {PIT['tries']} pits ({last})")


def stand_near_ore(probe: "Probe", start: dict, seed: int) -> None:
    # Digging for cobblestone often brings coal too: the coal task starts without any.
    drop_item(probe, "default:coal_lump")
    xyz = lambda v: dict(zip("xyz", v))  # noqa: E731
    try_pits(start,
             lambda lo, hi: probe.send({"op": "excavate", "min": xyz(lo), "max": xyz(hi)}),
             lambda floor, radius: probe.send({"op": "view_near", "names": ["default:stone_with_coal"],
                                               "seed": seed, "center": xyz(floor), "radius": radius,
                                               "min_dist": 2.5, "max_dist": 4.5}))


# The tech tree's milestones from nothing, in order: name, the game's item that proves it (the
# client: the end of the server's item name; Minetest: an item or group:NAME).
MILESTONES = {
    "minecraft-web": [("log", "_log"), ("planks", "_planks"), ("stick", "stick"),
                      ("crafting_table", "crafting_table"), ("wooden_pickaxe", "wooden_pickaxe"),
                      ("cobblestone", "cobblestone"), ("stone_pickaxe", "stone_pickaxe"), ("coal", "coal"),
                      ("iron_ore", "iron_ore"), ("furnace", "furnace"), ("iron_ingot", "iron_ingot"),
                      ("iron_pickaxe", "iron_pickaxe"), ("diamond", "diamond")],
    "minetest": [("log", "group:tree"), ("planks", "group:wood"), ("stick", "default:stick"),
                 ("wooden_pickaxe", "default:pick_wood"), ("cobblestone", "default:cobble"),
                 ("stone_pickaxe", "default:pick_stone"), ("coal", "default:coal_lump"),
                 ("iron_ore", "default:iron_lump"), ("furnace", "default:furnace"),
                 ("iron_ingot", "default:steel_ingot"), ("iron_pickaxe", "default:pick_steel"),
                 ("diamond", "default:diamond")],
}


def holds(game: str, slots: list[dict], item: str) -> bool:
    """Whether the inventory `slots` (the client's server slots, or Minetest's main list) hold
    `item` (see MILESTONES)."""
    if game == "minecraft-web":
        return any(s.get("name", "").endswith(item) and int(s.get("count", 0)) > 0 for s in slots)
    group = item[len("group:"):] if item.startswith("group:") else None
    return any((group in (s.get("groups") or []) if group else s.get("name") == item)
               and int(s.get("count", 0)) > 0 for s in slots)


class MilestonePoller(threading.Thread):
    """Reads the game's inventory every `period` s while a play runs and records, per milestone,
    the seconds since the play started and the session's step count when it was first held; and,
    where the game tells the player's health (`read_health`), when it first died."""

    def __init__(self, game: str, read_slots, milestones: list[tuple[str, str]], session: Path,
                 period: float = 1.0, read_health=None):
        super().__init__(daemon=True)
        self.game, self.read_slots, self.milestones = game, read_slots, milestones
        self.read_health = read_health
        self.died: dict | None = None
        self.session, self.period = session, period
        self.t0 = time.time()
        self.first: dict[str, dict] = {}
        self.halt = threading.Event()
        self.steps, self.offset = 0, 0

    def count_steps(self) -> int:
        path = self.session / "session.jsonl"
        try:
            with open(path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except OSError:
            return self.steps
        # Whole lines only: a line being written is read next time.
        end = chunk.rfind(b"\n") + 1
        self.steps += chunk[:end].count(b'"kind":"step"')
        self.offset += end
        return self.steps

    def poll(self) -> None:
        slots = self.read_slots()
        steps = self.count_steps()
        for name, item in self.milestones:
            if name not in self.first and holds(self.game, slots, item):
                self.first[name] = {"seconds": round(time.time() - self.t0, 1), "step": steps}
        health = self.read_health() if self.read_health else None
        if self.died is None and health is not None and health <= 0:
            self.died = {"seconds": round(time.time() - self.t0, 1), "step": steps}

    def run(self) -> None:
        while not self.halt.is_set():
            self.poll()
            self.halt.wait(self.period)

    def stop(self) -> dict:
        self.halt.set()
        self.join(timeout=5)
        self.poll()
        return self.first


# How long a play stopped by Ctrl-C is given to end its session before it is killed.
PLAY_STOP_SECONDS = 30


def not_counted(run: dict) -> str | None:
    """Why a run is left out of every count, or None: a Ray trial that failed twice (a lost node,
    a game that never started) or a run stopped by Ctrl-C is no run of the agent."""
    if run.get("trial_failed"):
        return f"trial failed twice, not counted: {run['trial_failed']}"
    if run.get("interrupted"):
        return f"interrupted, not counted: {run['interrupted']}"
    return None


def git_commit() -> str:
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                           capture_output=True, text=True).stdout.strip()
    return out.stdout.strip() + ("+uncommitted" if dirty else "")


# How `vistawise play` says it was stopped by Ctrl-C or SIGTERM (src/skills/execute.rs).
PLAY_INTERRUPTED = "interrupted (Ctrl-C / SIGTERM)"


def play_from_nothing(args, game: str, env: dict, out: Path, sid: str, milestones, read_slots,
                      read_health=None) -> dict:
    """One `vistawise play --task TARGET` from where the game left the player, with the milestone
    poller beside it (and, where the game tells it, the player's health: `died` in the record)."""
    session = out / "sessions" / sid
    poller = MilestonePoller(game, read_slots, milestones, session, read_health=read_health)
    poller.start()
    t0 = time.time()
    interrupted = None
    play = subprocess.Popen(
        [args.bin, "--game", game, "play", "--policy", args.policy, "--task", args.target,
         "--max-steps", str(args.max_steps or 2000), "--max-minutes", str(args.max_minutes),
         "--session-id", sid, "--set", f"session.dir={out / 'sessions'}", *args.play_args],
        cwd=REPO, env=dict(env, DISPLAY=args.display), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    try:
        try:
            output, _ = play.communicate()
        except KeyboardInterrupt:
            # The play got the same Ctrl-C and ends its session itself (releasing what it
            # holds): given time for that, and the run is kept as interrupted, not counted.
            interrupted = f"Ctrl-C after {round(time.time() - t0)} s"
            try:
                output, _ = play.communicate(timeout=PLAY_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                play.kill()
                output, _ = play.communicate()
    finally:
        first = poller.stop()
    last = (output or "").strip().splitlines()[-1:] or [""]
    rec = {"target": args.target, "milestones": first, "success": args.target in first,
           "agent_exit": play.returncode, "agent_end": last[0][:300], "seconds": round(time.time() - t0, 1),
           "session": str(session.relative_to(out))}
    if not interrupted and PLAY_INTERRUPTED in last[0]:
        # The play alone got the signal (a runner started with `cmd &` ignores SIGINT, and a
        # signal can be sent to the play's pid): stopped from outside, no run of the agent.
        interrupted = f"the play was stopped by a signal after {round(time.time() - t0)} s"
    if interrupted:
        rec["interrupted"] = interrupted
    if poller.died is not None:
        rec["died"] = poller.died
    if (session / "session.jsonl").exists():
        rec["stage_ms_median"] = stage_medians(session)
        rec["steps"] = sum(1 for line in open(session / "session.jsonl") if '"kind":"step"' in line)
    return rec


def nothing_world(args, world: int, out: Path, milestones, display: str, strict: bool = False) -> dict:
    """One run from nothing in a fresh world `world` on `display`: the game started at its own
    spawn, one play of `--target`, the game stopped (also on Ctrl-C). A game that failed to start
    or to answer is the run's `error`, or, when `strict` (a Ray trial, retried once), raised."""
    sid = f"{args.target}-world{world}"
    run = {"world": world}
    t_start = None
    args = argparse.Namespace(**{**vars(args), "display": display})
    if args.game == "minecraft-web":
        game = McwebGame(out / f"mcweb-{world}", display, world, args.window, spawn=f"random:{world}")
        run["spawn"] = f"random:{world} (flying-squid's rule, seeded)"
        try:
            game.start_bare()
            t_start = time.time()
            run["start_pose"] = {k: v for k, v in (json.loads((game.dir / "state.json").read_text())
                                                   .get("players") or [{}])[0].items()
                                 if k in ("pos", "yaw", "pitch")}
            run.update(play_from_nothing(args, "minecraft-web", game.env, out, sid, milestones,
                                         game.inventory, game.health))
        except (RuntimeError, OSError) as e:
            game_failed(run, e, strict, f"; read {game.dir}/server.log")
        finally:
            game.stop()
        run["commands"] = game.commands
    else:
        game_dir = out / f"game-{world}"
        env = dict(os.environ, GAME_DIR=str(game_dir), GAME_DISPLAY=display, **window_env(args.window))
        run["spawn"] = "the map generator's (no static_spawnpoint)"
        probe = Probe(game_dir / "world" / "agent_probe")
        try:
            gameenv("start", str(world), env=env)
            t_start = time.time()
            state = probe.state()
            run["start_pose"] = {"pos": state.get("pos"), "yaw": state.get("yaw")}

            def read_main():
                try:
                    return probe.state().get("main") or []
                except (OSError, json.JSONDecodeError):
                    return []
            run.update(play_from_nothing(args, "minetest", env, out, sid, milestones, read_main))
        except (RuntimeError, OSError) as e:
            game_failed(run, e, strict)
        finally:
            gameenv("stop", env=env)
        run["commands"] = [{"n": i, **c} for i, c in enumerate(probe.sent)]
    run["commands_after_start"] = [c for c in run["commands"]
                                   if t_start is not None and c.get("t", 0) >= t_start]
    return run


def game_failed(run: dict, e: Exception, strict: bool, hint: str = "") -> None:
    """A game that failed to start or to answer: the run's `error`, or raised again for a Ray
    trial (`strict`), which is then retried."""
    if strict:
        raise e
    print(f"world {run['world']}: the game failed ({e}){hint}", flush=True)
    run["error"] = str(e)


def stop_world_game(args, world: int, out: Path, display: str) -> None:
    """Stops the game `nothing_world` started for `world` (a trial whose process was killed
    before its own `finally` ran)."""
    try:
        if args.game == "minecraft-web":
            McwebGame(out / f"mcweb-{world}", display, world).stop()
        else:
            gameenv("stop", env=dict(os.environ, GAME_DIR=str(out / f"game-{world}"), GAME_DISPLAY=display))
    except RuntimeError as e:
        print(f"world {world}: stopping the game failed: {e}", file=sys.stderr, flush=True)


def report_world(run: dict) -> None:
    """One line per finished run."""
    if why := not_counted(run):
        print(f"world {run['world']}: {why}", flush=True)
        return
    got = ", ".join(f"{m} @{v['step']}" for m, v in run.get("milestones", {}).items())
    print(f"world {run['world']}: {'ok' if run.get('success') else 'FAILED'} ({run.get('steps', '?')} steps, "
          f"{run.get('seconds', '?')} s; {got or 'nothing'})", flush=True)


def write_runs(out: Path, batch: dict, runs: list[dict]) -> None:
    """runs.json after every finished run (a crash loses none), in world order."""
    runs = sorted(runs, key=lambda r: r["world"])
    (out / "runs.json").write_text(json.dumps({"batch": batch, "runs": runs}, indent=2))


def nothing_runs(args, out: Path) -> int:
    """`--start nothing`: one play of `--target` per world seed, from the game's spawn with an
    empty bag, nothing set after the start (see the module's doc)."""
    names = [n for n, _ in MILESTONES[args.game]]
    if args.target not in names:
        print(f"closed_loop_runs: --target {args.target}: not a milestone of {args.game} "
              f"({', '.join(names)})", file=sys.stderr)
        return 2
    milestones = MILESTONES[args.game][:names.index(args.target) + 1]
    batch = {"game": args.game, "start": "nothing", "target": args.target, "policy": args.policy,
             "commit": args.commit or git_commit(), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
             "worlds": list(range(args.first_world, args.first_world + args.runs)),
             "window": f"{args.window[0]}x{args.window[1]}" if args.window else "default",
             "max_minutes": args.max_minutes, "play_args": args.play_args}
    if args.ray is not None:
        import ray_trials  # tools/ray_trials.py; only here: Ray is needed only for --ray
        runs = ray_trials.nothing_runs_on_ray(args, out, batch, milestones)
    else:
        runs = []
        for world in batch["worlds"]:
            runs.append(nothing_world(args, world, out, milestones, args.display))
            report_world(runs[-1])
            write_runs(out, batch, runs)
            if runs[-1].get("interrupted"):
                print(f"closed_loop_runs: interrupted; the runs so far are in {out / 'runs.json'}",
                      file=sys.stderr, flush=True)
                return 130
    print_table([{"batch": batch, "runs": runs}])
    print(f"details: {out / 'runs.json'}")
    return 0


def fmt_minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f}"


# The paper's Table 1, VistaWise's row: the success rate of each milestone of "obtain diamond"
# from an empty inventory (15 trials). The extracted text of the table lost its column names; the
# nine rates are read in the order of the tech tree the paper describes (crafting table first,
# diamond last), with the iron pickaxe at 0.73 and the diamond at 0.33 as its text says.
PAPER_TABLE1 = {"log": 1.00, "crafting_table": 1.00, "wooden_pickaxe": 1.00, "stone_pickaxe": 1.00,
                "furnace": 1.00, "iron_ore": 0.73, "iron_ingot": 0.73, "iron_pickaxe": 0.73,
                "diamond": 0.33}


# What makes two runs.json files parts of one batch: everything but the worlds and the date.
BATCH_KEYS = ("game", "start", "target", "policy", "commit", "window", "max_minutes", "play_args")


def merge_parts(files: list[tuple[Path, dict]]) -> list[dict]:
    """The batches of several runs.json files, parts of one batch (a batch of ten one-hour runs
    is run over several days) merged into one, in the order first seen: their worlds and runs
    joined in world order, their dates kept. A world in two parts of a batch is an error (which
    one counts?), as is a part whose runs are not among its worlds."""
    merged: dict[tuple, dict] = {}
    seen: dict[tuple, dict[int, Path]] = {}
    for path, data in files:
        batch = data["batch"]
        key = tuple(json.dumps(batch.get(k), sort_keys=True) for k in BATCH_KEYS)
        for r in data["runs"]:
            if r["world"] not in batch["worlds"]:
                raise ValueError(f"{path}: run of world {r['world']} outside its batch's worlds")
        worlds = seen.setdefault(key, {})
        for w in batch["worlds"]:
            if w in worlds:
                raise ValueError(f"{path}: world {w} is also in {worlds[w]}, a part of the same batch")
            worlds[w] = path
        if key not in merged:
            merged[key] = {"batch": dict(batch, dates=[batch["date"]]), "runs": list(data["runs"])}
            continue
        m = merged[key]
        m["batch"]["worlds"] = sorted(m["batch"]["worlds"] + batch["worlds"])
        m["batch"]["dates"].append(batch["date"])
        m["runs"] = sorted(m["runs"] + data["runs"], key=lambda r: r["world"])
    for m in merged.values():
        if len(m["batch"]["dates"]) == 1:
            del m["batch"]["dates"]
    return list(merged.values())


def print_table(batches: list[dict]) -> None:
    """The milestone table of from-nothing batches: per milestone and batch, how many runs held
    it, and the median and worst minutes and steps to it (over the runs that held it), beside the
    paper's rate for the milestones its Table 1 has."""
    print("| batch | milestone | held | paper (Table 1) | median min | worst min | median steps | worst steps |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for b in batches:
        # A Ray trial that failed twice or a run stopped by Ctrl-C is listed below, not counted.
        batch, runs = b["batch"], [r for r in b["runs"] if not not_counted(r)]
        label = f"{batch['game']} {batch['worlds'][0]}-{batch['worlds'][-1]} ({batch['commit'][:7]})"
        names = [n for n, _ in MILESTONES[batch["game"]]]
        for name in names[:names.index(batch["target"]) + 1]:
            got = [r["milestones"][name] for r in runs if name in r.get("milestones", {})]
            if got:
                secs, steps = [g["seconds"] for g in got], [g["step"] for g in got]
                row = (f"{fmt_minutes(statistics.median(secs))} | {fmt_minutes(max(secs))} | "
                       f"{statistics.median(steps):g} | {max(steps)}")
            else:
                row = "- | - | - | -"
            paper = f"{PAPER_TABLE1[name]:.2f}" if name in PAPER_TABLE1 else "-"
            print(f"| {label} | {name} | {len(got)}/{len(runs)} | {paper} | {row} |")
    for b in batches:
        batch = b["batch"]
        worlds = batch["worlds"]
        gaps = sorted(set(range(worlds[0], worlds[-1] + 1)) - set(worlds))
        print(f"{batch['game']}: worlds {worlds[0]}-{worlds[-1]}"
              + (f" (not run: {', '.join(map(str, gaps))})" if gaps else "")
              + f", target {batch['target']}, policy {batch['policy']}, window {batch['window']}, "
              f"commit {batch['commit']}, {', '.join(batch.get('dates', [batch['date']]))}")
        for r in b["runs"]:
            if why := not_counted(r):
                print(f"  world {r['world']}: {why}")


STAGES = ["capture", "detect", "graph", "prompt", "policy", "act"]


class Probe:
    """The probe mod's files: cmd.jsonl in, events.jsonl and state.json out."""

    def __init__(self, folder: Path):
        self.dir = folder
        self.n = 0
        # Every command sent, in order: a run's record proves what was set.
        self.sent: list[dict] = []

    def state(self) -> dict:
        return json.loads((self.dir / "state.json").read_text())

    def send(self, cmd: dict, timeout: float = 75.0) -> dict:
        self.n += 1
        cmd = dict(cmd, id=f"runs-{os.getpid()}-{self.n}")
        self.sent.append({"t": round(time.time(), 1), **cmd})
        events = self.dir / "events.jsonl"
        start = events.stat().st_size if events.exists() else 0
        with open(self.dir / "cmd.jsonl", "a") as f:
            f.write(json.dumps(cmd) + "\n")
        deadline = time.time() + timeout
        while time.time() < deadline:
            if events.exists():
                with open(events) as f:
                    f.seek(start)
                    for line in f:
                        try:
                            ev = json.loads(line)
                        except json.JSONDecodeError:
                            continue
                        if ev.get("ev") == "cmd_done" and ev.get("id") == cmd["id"]:
                            if not ev.get("ok", False):
                                raise RuntimeError(f"probe refused {cmd['op']}: {ev.get('err')}")
                            return ev
            time.sleep(0.1)
        raise TimeoutError(f"probe: no answer to {cmd['op']} in {timeout} s")

    def count(self, item: str) -> int:
        """How many of ITEM the main inventory holds; `group:NAME` counts every item of the group."""
        group = item[len("group:"):] if item.startswith("group:") else None
        return sum(int(s["count"]) for s in (self.state().get("main") or [])
                   if (group in (s.get("groups") or []) if group else s["name"] == item))


def gameenv(*args: str, env: dict) -> str:
    out = subprocess.run(["bash", str(REPO / "tests/minetest/gameenv.sh"), *args], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"gameenv.sh {' '.join(args)} failed:\n{out.stdout}{out.stderr}")
    return out.stdout


def stage_medians(session: Path) -> dict:
    times = {s: [] for s in STAGES}
    with open(session / "session.jsonl") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if rec.get("kind") == "step":
                for s in STAGES[:-1]:  # the act time is on the step's outcome line
                    if s in (rec.get("stage_ms") or {}):
                        times[s].append(float(rec["stage_ms"][s]))
            elif rec.get("kind") == "outcome" and "act_ms" in rec:
                times["act"].append(float(rec["act_ms"]))
    return {s: round(statistics.median(v), 1) for s, v in times.items() if v}


def play_task(args, game: str, task: str, steps: int, seed: int, max_minutes: int, env: dict, out: Path,
              count) -> dict:
    """One `vistawise --game GAME play` of a task, judged by `count()` (what the game says the player
    holds afterwards); the record runs.json keeps (session, steps, end, stage medians)."""
    sid = f"{task}-seed{seed}"
    t0 = time.time()
    p = subprocess.run(
        [args.bin, "--game", game, "play", "--policy", args.policy, "--task", task,
         "--max-steps", str(args.max_steps or steps), "--max-minutes", str(max_minutes), "--session-id", sid,
         "--set", f"session.dir={out / 'sessions'}", *args.play_args],
        cwd=REPO, env=dict(env, DISPLAY=args.display), capture_output=True, text=True)
    session = out / "sessions" / sid
    got = count()
    last = (p.stdout + p.stderr).strip().splitlines()[-1:] or [""]
    rec = {"task": task, "in_game": got, "success": got > 0 and p.returncode == 0,
           "agent_exit": p.returncode, "end": last[0][:200], "seconds": round(time.time() - t0, 1),
           "session": str(session)}
    if (session / "session.jsonl").exists():
        rec["stage_ms_median"] = stage_medians(session)
        rec["steps"] = sum(1 for line in open(session / "session.jsonl") if '"kind":"step"' in line)
    return rec


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="minetest", choices=["minetest", "minecraft-web"])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=1, help="view_near seeds are first..first+runs-1")
    ap.add_argument("--world", type=int, default=None,
                    help="world seed (default: 2024 for minetest, 20241024 for minecraft-web)")
    ap.add_argument("--policy", default="planner", choices=["planner", "llm", "subgoal"])
    ap.add_argument("--bin", default=str(Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
                                         / "debug/vistawise"))
    ap.add_argument("--out", default=str(REPO / "out/closed-loop-runs"))
    ap.add_argument("--display", default=":83")
    ap.add_argument("--window", type=parse_window, default=None, metavar="WxH",
                    help="the game window's size (default: the game script's, 1280x720 for the client, "
                         "854x480 for Minetest)")
    ap.add_argument("--chain", default="wood", choices=sorted(MCWEB_CHAINS),
                    help="minecraft-web: which part of the tech tree, from which start (see MCWEB_CHAINS)")
    ap.add_argument("--tasks", type=int, default=None,
                    help=f"play the first N tasks of the chain (default: all; minetest: "
                         f"{', '.join(t for t, _, _ in CHAIN)})")
    ap.add_argument("--max-steps", type=int, default=None,
                    help="step limit for every task (default: each task's own, 10-40)")
    ap.add_argument("--trunk", default="group:tree",
                    help="minetest: the node the player starts beside (default: any trunk)")
    ap.add_argument("--biome", default=None, metavar="NAME[,NAME]",
                    help="minetest: start in the nearest of these biomes instead of near the spawn "
                         "(e.g. taiga,coniferous_forest: pine trees; the probe's find_biome)")
    ap.add_argument("--keep", action="append", default=[], metavar="TASK:ITEM:N",
                    help="before TASK, set ITEM in the inventory to one stack of N (e.g. stone_pickaxe:default:cobble:2: "
                         "too few for the recipe; checks the stack count reading); repeatable")
    ap.add_argument("--start", default="staged", choices=["staged", "nothing"],
                    help="staged: the scenes above (a trunk in front, pits, bags set); nothing: the game's "
                         "spawn in a new world per run, an empty bag, nothing set after the start")
    ap.add_argument("--first-world", type=int, default=1001,
                    help="--start nothing: world seeds first..first+runs-1")
    ap.add_argument("--target", default="stone_pickaxe", help="--start nothing: the task played")
    ap.add_argument("--max-minutes", type=int, default=20, help="--start nothing: each run's time limit")
    ap.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                    help="--start nothing: each run a Ray task (tools/ray_trials.py, docs/sweeps.md): "
                         "on the cluster at ADDRESS, or with no ADDRESS the one `ray start` began on "
                         "this machine (RAY_ADDRESS), else a local one; --out must be a path every "
                         "node sees; --display is ignored (each trial takes a free one)")
    ap.add_argument("--trial-cpus", type=float, default=2.0,
                    help="--ray: the CPUs a trial asks for (game, client and agent: 2)")
    ap.add_argument("--commit", type=parse_commit, default=None, metavar="SHA",
                    help="--start nothing: the commit --bin and --root were built at, recorded with "
                         "the batch (default: this checkout's HEAD); a batch run in parts over "
                         "several days names the same one in each part")
    ap.add_argument("--table", nargs="+", type=Path, metavar="RUNS.json",
                    help="print the milestone table of from-nothing runs.json files and exit; the "
                         "parts of one batch (same game, start, target, policy, commit, window, "
                         "time limit and play arguments) are merged")
    ap.add_argument("--merge", type=Path, default=None, metavar="OUT.json",
                    help="with --table: also write the merged parts, which must be one batch, to OUT.json")
    ap.add_argument("play_args", nargs="*", help="extra arguments for every `vistawise play` (after --)")
    args = ap.parse_args()
    if args.merge and not args.table:
        ap.error("--merge needs --table with the parts to merge")
    if args.table:
        try:
            batches = merge_parts([(p, json.loads(p.read_text())) for p in args.table])
        except (OSError, json.JSONDecodeError, KeyError) as e:
            print(f"closed_loop_runs: cannot read the runs: {e}", file=sys.stderr)
            return 2
        except ValueError as e:
            print(f"closed_loop_runs: {e}", file=sys.stderr)
            return 2
        if args.merge:
            if len(batches) != 1:
                print(f"closed_loop_runs: --merge: the files hold {len(batches)} batches, not one",
                      file=sys.stderr)
                return 2
            args.merge.write_text(json.dumps(batches[0], indent=2))
        print_table(batches)
        return 0
    keep = {}
    for k in args.keep:
        task, _, rest = k.partition(":")
        item, _, n = rest.rpartition(":")
        if not (task and item and n.isdigit()):
            ap.error(f"--keep {k}: expected TASK:ITEM:N, e.g. stone_pickaxe:default:cobble:2")
        keep.setdefault(task, []).append((item, int(n)))
    if not Path(args.bin).exists():
        print(f"closed_loop_runs: {args.bin} not found: run cargo build first", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.start == "nothing":
        return nothing_runs(args, out)
    if args.game == "minecraft-web":
        return mcweb_runs(args, out)
    if args.world is None:
        args.world = 2024
    runs = []
    for seed in range(args.first_seed, args.first_seed + args.runs):
        game_dir = out / f"game-{seed}"
        env = dict(os.environ, GAME_DIR=str(game_dir), GAME_DISPLAY=args.display, **window_env(args.window))
        gameenv("start", str(args.world), env=env)
        run = {"seed": seed, "tasks": []}
        try:
            probe = Probe(game_dir / "world" / "agent_probe")
            probe.send({"op": "clear_inv"})
            start = probe.state()["pos"]
            view = {"op": "view_near", "names": [args.trunk], "seed": seed, "radius": 24,
                    "min_dist": 2.5, "max_dist": 4.5}
            if args.biome:
                found = probe.send({"op": "find_biome", "biomes": args.biome.split(",")})["result"]
                print(f"seed {seed}: {found['biome']} at {found['pos']}", flush=True)
                view["center"] = found["pos"]
            probe.send(view)
            for task, item, steps in CHAIN[:args.tasks]:
                if task == "coal":
                    try:
                        stand_near_ore(probe, start, seed)
                    except RuntimeError as e:
                        print(f"seed {seed} coal: no ore in the pit's walls ({e})", flush=True)
                        run["tasks"].append({"task": task, "item": item, "no_ore": True})
                        break
                for kept_item, n in keep.get(task, []):
                    keep_only(probe, kept_item, n)
                rec = play_task(args, "minetest", task, steps, seed, 5, env, out, lambda: probe.count(item))
                rec["item"] = item
                run["tasks"].append(rec)
                print(f"seed {seed} {task}: {'ok' if rec['success'] else 'FAILED'} "
                      f"({rec.get('steps', '?')} steps, {rec['seconds']} s; in the game: {item} x{rec['in_game']})",
                      flush=True)
                if not rec["success"]:
                    break
        finally:
            gameenv("stop", env=env)
        runs.append(run)
        (out / "runs.json").write_text(json.dumps(runs, indent=2))

    report(args, CHAIN[:args.tasks], runs, out)
    return 0


def mcweb_runs(args, out: Path) -> int:
    """The Minecraft client's chain (`--chain`) in a fresh world per run (see MCWEB_CHAINS)."""
    if args.world is None:
        args.world = 20241024
    scene = MCWEB_CHAINS[args.chain]
    chain = scene["tasks"][:args.tasks]
    runs = []
    for seed in range(args.first_seed, args.first_seed + args.runs):
        game = McwebGame(out / f"mcweb-{seed}", args.display, args.world, args.window)
        run = {"seed": seed, "tasks": []}
        current = None
        try:
            game.start(seed)
            if "start" in scene:
                game.send({"cmd": "set_inventory", "slots": scene["start"]})
            if "pit" in scene:
                try:
                    game.stand_near_ore(seed, **scene["pit"])
                except RuntimeError as e:
                    print(f"seed {seed}: no {scene['pit']['ore']} in the pit's walls ({e})", flush=True)
                    run["tasks"].append({"task": chain[0][0], "item": chain[0][1], "no_ore": True})
            for task, item, steps in chain if not run["tasks"] else []:
                current = task
                if task in PIT_BEFORE and "pit" not in scene:
                    try:
                        game.stand_near_ore(seed, **PIT_BEFORE[task])
                    except RuntimeError as e:
                        print(f"seed {seed} {task}: no ore in the pit's walls ({e})", flush=True)
                        run["tasks"].append({"task": task, "item": item, "no_ore": True})
                        break
                rec = play_task(args, "minecraft-web", task, steps, seed, 10, game.env, out,
                                lambda: game.count(item))
                rec["item"] = item
                # Where the task left the player, to set a later task up there again by hand.
                rec["end"] = game.pose()
                run["tasks"].append(rec)
                current = None
                print(f"seed {seed} {task}: {'ok' if rec['success'] else 'FAILED'} "
                      f"({rec.get('steps', '?')} steps, {rec['seconds']} s; server: *{item} x{rec['in_game']})",
                      flush=True)
                if not rec["success"]:
                    break
        except (RuntimeError, OSError) as e:
            # The game or its server died (flying-squid once crashed mid-dig): this run ends
            # here, counted as not won, and the next seed starts a fresh game.
            print(f"seed {seed}: the game failed ({e}); read {game.dir}/server.log", flush=True)
            run["error"] = str(e)
            if current:
                run["tasks"].append({"task": current, "success": False, "error": str(e)})
        finally:
            game.stop()
        runs.append(run)
        (out / "runs.json").write_text(json.dumps(runs, indent=2))
    report(args, chain, runs, out)
    return 0


def report(args, chain, runs, out: Path) -> None:
    """The success table, the median stage times and where the details are."""
    chain_name = f", chain {args.chain}" if args.game == "minecraft-web" else ""
    window = f", window {args.window[0]}x{args.window[1]}" if args.window else ""
    print(f"\n{args.runs} runs, {args.game}{chain_name}, world {args.world}, policy {args.policy}{window}")
    print("| task | successes | tried | median steps (successes) |")
    print("|---|---:|---:|---:|")
    for task, _, _ in chain:
        tried = [t for r in runs for t in r["tasks"] if t["task"] == task and not t.get("no_ore")]
        ok = [t for t in tried if t["success"]]
        steps = statistics.median([t.get("steps", 0) for t in ok]) if ok else "-"
        print(f"| {task} | {len(ok)} | {len(tried)} | {steps} |")
    allstages = {}
    for r in runs:
        for t in r["tasks"]:
            for s, v in (t.get("stage_ms_median") or {}).items():
                allstages.setdefault(s, []).append(v)
    print("median stage times (ms): " + ", ".join(f"{s} {statistics.median(v):.1f}" for s, v in allstages.items()))
    print(f"details: {out / 'runs.json'}")


if __name__ == "__main__":
    sys.exit(main())
