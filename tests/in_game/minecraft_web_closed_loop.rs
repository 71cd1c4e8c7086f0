//! The closed loop on the Minecraft client: `vistawise --game minecraft-web play --policy
//! planner` on minecraft-web-client (tests/mcweb), judged by the test server's inventory, never
//! by what the agent believes. Sessions and their HTML reports are kept under
//! `target/artifacts/minecraft-web-closed-loop/` (CI keeps them).

use crate::support;

use std::path::{Path, PathBuf};

use crate::support::McwebGame;
use serde_json::json;

fn artifacts() -> PathBuf {
    let dir = support::repo().join("target/artifacts/minecraft-web-closed-loop");
    std::fs::create_dir_all(&dir).expect("artifacts dir");
    dir
}

/// Plays one task to its end; returns whether the agent saw it done, the session folder and the
/// command's output. `attempt` keeps the session ids of a retry apart from the first try's.
fn play(game: &McwebGame, task: &str, max_steps: u32, attempt: u64) -> (bool, PathBuf, String) {
    let sessions = artifacts();
    let id = format!("{task}-{}-{attempt}", std::process::id());
    let o = support::binary()
        .args([
            "--game",
            "minecraft-web",
            "play",
            "--policy",
            "planner",
            "--task",
            task,
        ])
        .args(["--max-steps", &max_steps.to_string(), "--max-minutes", "10"])
        .args(["--session-id", &id])
        .arg("--set")
        .arg(format!("session.dir={}", sessions.display()))
        .current_dir(support::repo())
        .env("DISPLAY", &game.display)
        .output()
        .expect("run vistawise play");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let session = sessions.join(&id);
    let report = support::binary()
        .arg("report")
        .arg(&session)
        .arg("-o")
        .arg(session.join("report.html"))
        .output()
        .expect("run vistawise report");
    assert!(
        report.status.success(),
        "report of {}: {}",
        session.display(),
        String::from_utf8_lossy(&report.stderr)
    );
    (o.status.success(), session, log)
}

/// Stands the player 2.5-4.5 blocks from a trunk whose foot is at its feet or eyes, looking at
/// it (the test's starting place; the agent still has to aim at, chop and pick up the log from
/// the screen).
fn face_a_tree(game: &McwebGame, seed: u64) {
    let server = game.server();
    server.clear().expect("clear");
    server
        .command(json!({"cmd": "face_block", "seed": seed,
                        "min_dist": 2.5, "max_dist": 4.5, "levels": [0, 1]}))
        .expect("face_block");
    // The client draws the new place a few frames after the teleport (the first frame of a
    // play started at once still showed the spawn).
    std::thread::sleep(std::time::Duration::from_secs(3));
}

/// The skills of the session's steps in order (`None`: no action, e.g. the "done" step).
fn actions(session: &Path) -> Vec<Option<String>> {
    let text = std::fs::read_to_string(session.join("session.jsonl")).expect("session.jsonl");
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "step")
        .map(|v| v["action"]["skill"].as_str().map(str::to_string))
        .collect()
}

/// The tasks of the chain, each a `play` of its own on one world, in tech-tree order: (task, the
/// end of the server's item name that proves it, step limit). Any log counts as a log. The
/// wooden pickaxe needs a second log (the log task brings one or two), chopped from the rest of
/// the first tree.
const CHAIN: [(&str, &str, u32); 4] = [
    ("log", "_log", 40),
    ("planks", "_planks", 12),
    ("crafting_table", "crafting_table", 14),
    ("wooden_pickaxe", "wooden_pickaxe", 120),
];

fn play_chain(game: &McwebGame, attempt: u64) -> Result<(), String> {
    for (task, item, max_steps) in CHAIN {
        let (ok, session, log) = play(game, task, max_steps, attempt);
        let player = game.server().player().expect("the server's state");
        let held = player.count(item);
        let steps = actions(&session);
        // A chopped log lands in the HUD hotbar, drawn over the world: the agent takes it as
        // obtained only after opening the inventory and seeing it in the bag ([success]).
        if ok
            && task == "log"
            && steps[steps.len().saturating_sub(2)..] != [Some("open_inventory".into()), None]
        {
            return Err(format!(
                "task log ended without confirming the log in the open inventory: {steps:?}\n\
                 session {}",
                session.display()
            ));
        }
        if held < 1 || !ok {
            return Err(format!(
                "task {task}: *{item} x{held} in the server's inventory, agent ok={ok}; \
                 player {:?}\nsession {}\n{log}\n{}",
                player.inventory,
                session.display(),
                game.log_tail()
            ));
        }
    }
    Ok(())
}

/// The chain log -> planks -> crafting table -> wooden pickaxe with the planner, from a player
/// standing near a trunk with nothing in the inventory, each task judged by what the server says
/// the player holds. An agent's task has a success rate (docs/minecraft-web.md), so the chain is
/// tried in up to three fresh worlds with other starting views; every session is kept.
#[test]
fn planner_gets_a_log_then_crafts_up_to_a_wooden_pickaxe_on_the_minecraft_client() {
    let _game = support::one_game();
    let mut failures = Vec::new();
    for view_seed in [21, 22, 23] {
        let game = McwebGame::start(20241024);
        face_a_tree(&game, view_seed);
        match play_chain(&game, view_seed) {
            Ok(()) => return,
            Err(e) => failures.push(format!("view seed {view_seed}: {e}")),
        }
    }
    panic!(
        "the chain failed in three fresh worlds:\n{}",
        failures.join("\n---\n")
    );
}

/// Whether a player can stand with its feet in block (x, y, z): a full block under it, two of
/// air above (the server's block names; "air" and the cave/void airs).
fn standable(server: &vistawise::testworld::McwebServer, x: i64, y: i64, z: i64) -> bool {
    let name = |dy: i64| {
        server
            .command(json!({"cmd": "getblock", "x": x, "y": y + dy, "z": z}))
            .ok()
            .and_then(|b| b["name"].as_str().map(str::to_string))
            .unwrap_or_default()
    };
    let air = |n: &str| n.ends_with("air");
    let ground = name(-1);
    !air(&ground)
        && !ground.is_empty()
        && !ground.contains("leaves")
        && air(&name(0))
        && air(&name(1))
}

/// The skill `dig_vertical_mine_tunnels` from the corner of a block, where the player's box
/// (0.6 wide) stands on four blocks at once: a shaft dug only under the eye left the player up on
/// the other three. Judged by the server: the first call took the player down, and calls made
/// as the planner makes them (again while the bag holds fewer than three, at most three) reach the
/// stone and the cobblestone of the stone pickaxe's recipe. How deep one call goes depends on the
/// soil and on how fast the client draws (under load one call went 3 blocks deep, all dirt, where
/// it goes 11 on an idle machine). A dig has a success rate too (docs/minecraft-web.md
/// "Closed-loop counts"; its history: docs/results/minecraft-web-history.md): two corners, each
/// in a fresh world, are tried.
#[test]
fn digging_down_from_the_corner_of_a_block_reaches_stone_on_the_minecraft_client() {
    let _game = support::one_game();
    let mut failures = Vec::new();
    for seeds in [[31, 32, 33, 34], [35, 36, 37, 38]] {
        match dig_from_a_corner(&seeds) {
            Ok(()) => return,
            Err(e) => failures.push(e),
        }
    }
    panic!("both digs failed:\n{}", failures.join("\n---\n"));
}

/// Stands the player at the corner of a block near a tree of one of `seeds` (whose three other
/// blocks are standable at the same height) with a wooden pickaxe, digs down, and says how it
/// ended when it did not go down three blocks with three cobblestone.
fn dig_from_a_corner(seeds: &[u64]) -> Result<(), String> {
    let game = McwebGame::start(20241024);
    let server = game.server();
    let mut start = None;
    'seeds: for &seed in seeds {
        face_a_tree(&game, seed);
        let pos = server.player().expect("state").pos.expect("a position");
        let (bx, by, bz) = (
            pos.x.floor() as i64,
            pos.y.round() as i64,
            pos.z.floor() as i64,
        );
        for (sx, sz) in [(1, 1), (1, -1), (-1, 1), (-1, -1)] {
            if [(sx, 0), (0, sz), (sx, sz)]
                .iter()
                .all(|&(dx, dz)| standable(&server, bx + dx, by, bz + dz))
            {
                let x = bx as f64 + if sx > 0 { 0.97 } else { 0.03 };
                let z = bz as f64 + if sz > 0 { 0.97 } else { 0.03 };
                start = Some((x, by as f64, z));
                break 'seeds;
            }
        }
    }
    let (x, y, z) = start.expect("no block with a flat corner near four trees");
    server
        .command(json!({"cmd": "tp", "x": x, "y": y, "z": z, "yaw": 30.0, "pitch": 10.0}))
        .expect("tp");
    server
        .command(json!({"cmd": "set_inventory", "slots": {"44": "wooden_pickaxe 1"}}))
        .expect("set_inventory");
    std::thread::sleep(std::time::Duration::from_secs(3));
    let mut ends = Vec::new();
    for call in 1..=3 {
        run_skill(&game, &["dig_vertical_mine_tunnels", "9", "16"]);
        let player = server.player().expect("state");
        let end = player.pos.expect("a position");
        ends.push(format!(
            "call {call} ended at ({:.2}, {}, {:.2}) holding {:?}",
            end.x, end.y, end.z, player.inventory
        ));
        // The corner's failure: the player stays up on the blocks beside the shaft.
        if call == 1 && end.y > y - 2.0 {
            break;
        }
        if end.y <= y - 3.0 && player.count("cobblestone") >= 3 {
            return Ok(());
        }
    }
    Err(format!("from ({x:.2}, {y}, {z:.2}): {}", ends.join("; ")))
}

/// Runs one skill call on the game's window (`vistawise skills run`), which must succeed.
fn run_skill(game: &McwebGame, args: &[&str]) {
    let o = support::binary()
        .args(["--game", "minecraft-web", "skills", "run"])
        .args(args)
        .current_dir(support::repo())
        .env("DISPLAY", &game.display)
        .output()
        .expect("run vistawise skills run");
    assert!(
        o.status.success(),
        "skills run {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The steps of a session as `(frame width, frame height, GUI scale, where it came from)`.
fn gui_readings(session: &Path) -> Vec<(u64, u64, f64, String)> {
    let text = std::fs::read_to_string(session.join("session.jsonl")).expect("session.jsonl");
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "step")
        .map(|v| {
            let p = &v["perception"];
            (
                p["frame_w"].as_u64().unwrap_or(0),
                p["frame_h"].as_u64().unwrap_or(0),
                p["gui_scale"]["scale"].as_f64().unwrap_or(0.0),
                p["gui_scale"]["source"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Log, then planks crafted in the inventory screen, at a window size; judged by the server.
fn log_and_planks(game: &McwebGame, attempt: u64) -> Result<(), String> {
    let mut readings = Vec::new();
    for (task, item, max_steps) in [("log", "_log", 40), ("planks", "_planks", 12)] {
        let (ok, session, log) = play(game, task, max_steps, attempt);
        let player = game.server().player().expect("the server's state");
        let held = player.count(item);
        if held < 1 || !ok {
            return Err(format!(
                "task {task}: *{item} x{held} in the server's inventory, agent ok={ok}\n\
                 session {}\n{log}",
                session.display()
            ));
        }
        readings.extend(gui_readings(&session));
    }
    // The client draws its GUI at 3 at these sizes, where vanilla's rule says 2: the agent read
    // it off the hotbar (a screen over the hotbar, as when planks start with the inventory the
    // log task's look left open, keeps what was measured, or takes the client's own rule).
    if !readings
        .iter()
        .any(|(_, _, s, src)| *s == 3.0 && src == "measured")
        || readings.iter().any(|(_, _, s, _)| *s != 3.0)
    {
        return Err(format!("the GUI scale was not read as 3: {readings:?}"));
    }
    Ok(())
}

/// A player's window is not 1280x720: at 1024x600 and 1279x719 (a window manager's border takes
/// a pixel) the client draws its GUI at scale 3 where vanilla's rule gives 2. The agent reads the
/// scale off the hotbar and gets a log and crafts planks in the inventory screen at that scale.
/// Each size is tried in up to two fresh worlds (docs/minecraft-web.md "Window sizes").
#[test]
fn log_and_planks_at_other_window_sizes_on_the_minecraft_client() {
    let _game = support::one_game();
    for (w, h) in [("1024", "600"), ("1279", "719")] {
        let mut failures = Vec::new();
        for view_seed in [41, 42] {
            let game = McwebGame::start_with(20241024, &[("GAME_W", w), ("GAME_H", h)]);
            face_a_tree(&game, view_seed);
            match log_and_planks(&game, view_seed) {
                Ok(()) => break,
                Err(e) => failures.push(format!("{w}x{h}, view seed {view_seed}: {e}")),
            }
        }
        assert!(
            failures.len() < 2,
            "log and planks failed twice at {w}x{h}:\n{}",
            failures.join("\n---\n")
        );
    }
}

/// The window is resized while the agent plays (an ordinary browser window on a larger
/// display): the steps after it see frames of the new size, read the GUI scale off them anew,
/// and the task ends with the log confirmed in the inventory screen at the new size.
#[test]
fn a_window_resized_during_play_is_followed_without_a_restart() {
    let _game = support::one_game();
    let mut failures = Vec::new();
    for view_seed in [51, 52] {
        let game = McwebGame::start_with(
            20241024,
            &[
                ("GAME_SCREEN", "1400x860"),
                ("GAME_W", "1280"),
                ("GAME_H", "720"),
            ],
        );
        face_a_tree(&game, view_seed);
        match play_through_a_resize(&game, view_seed) {
            Ok(()) => return,
            Err(e) => failures.push(format!("view seed {view_seed}: {e}")),
        }
    }
    panic!(
        "the resized play failed twice:\n{}",
        failures.join("\n---\n")
    );
}

fn play_through_a_resize(game: &McwebGame, attempt: u64) -> Result<(), String> {
    let sessions = artifacts();
    let id = format!("resize-{}-{attempt}", std::process::id());
    let session = sessions.join(&id);
    let mut child = support::binary()
        .args(["--game", "minecraft-web", "play", "--policy", "planner"])
        .args(["--task", "log", "--max-steps", "40", "--max-minutes", "10"])
        .args(["--session-id", &id])
        .arg("--set")
        .arg(format!("session.dir={}", sessions.display()))
        .current_dir(support::repo())
        .env("DISPLAY", &game.display)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run vistawise play");
    // After the first step's action ran (its outcome line), the window shrinks to 1024x600.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut resized = false;
    while std::time::Instant::now() < deadline {
        let text = std::fs::read_to_string(session.join("session.jsonl")).unwrap_or_default();
        if text.contains("\"kind\":\"outcome\"") {
            let o = std::process::Command::new("xdotool")
                .args(["search", "--onlyvisible", "--name", "Prismarine Web Client"])
                .args(["windowsize", "%1", "1024", "600"])
                .env("DISPLAY", &game.display)
                .output()
                .expect("run xdotool");
            assert!(o.status.success(), "xdotool windowsize failed");
            resized = true;
            break;
        }
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let status = child.wait().expect("wait for play");
    if !resized {
        return Err(format!(
            "the session ended before its first step ran ({status})"
        ));
    }
    let readings = gui_readings(&session);
    let held = game.server().player().expect("state").count("_log");
    let first = readings.first().cloned();
    let after: Vec<_> = readings
        .iter()
        .filter(|(w, h, _, _)| (*w, *h) == (1024, 600))
        .collect();
    let measured_after = after
        .iter()
        .any(|(_, _, s, src)| *s == 3.0 && src == "measured");
    if status.success()
        && held >= 1
        && first.is_some_and(|(w, h, _, _)| (w, h) == (1280, 720))
        && measured_after
        && after.iter().all(|(_, _, s, _)| *s == 3.0)
    {
        return Ok(());
    }
    Err(format!(
        "play ok={}, log x{held} in the server; steps (w, h, scale, source): {readings:?}\n\
         session {}",
        status.success(),
        session.display()
    ))
}

/// From nothing, as a user starts: a world seed the chain was never tuned on (not 20241024), the
/// spawn drawn by flying-squid's own rule from the seed (`MC_SPAWN=random:SEED`), an empty bag and
/// no scene command at all: the agent finds a tree from wherever it stands and gets a log, judged
/// by the server. Two worlds are tried (a run has a success rate: docs/minecraft-web.md "From
/// nothing").
#[test]
fn a_log_from_the_games_own_spawn_in_an_unseen_world() {
    let _game = support::one_game();
    let mut failures = Vec::new();
    for world in [4101u64, 4102] {
        let spawn = format!("random:{world}");
        let game = McwebGame::start_with(world, &[("MC_SPAWN", spawn.as_str())]);
        let (ok, session, log) = play(&game, "log", 150, world);
        let player = game.server().player().expect("the server's state");
        let held = player.count("_log");
        if ok && held >= 1 {
            return;
        }
        failures.push(format!(
            "world {world}: *_log x{held} in the server's inventory, agent ok={ok}\nsession {}\n{log}",
            session.display()
        ));
    }
    panic!(
        "no log from nothing in two worlds:\n{}",
        failures.join("\n---\n")
    );
}

/// Where the stone tests carve their air pocket (feet), in world 3002's stone.
const POCKET: (i32, i32, i32) = (70, 70, 70);

/// A world (3002) with an air pocket two blocks high carved in stone at [`POCKET`], the player
/// in it looking `yaw` degrees (and one more, the turn that shows the client answers) and 10
/// down, holding `slots` (`set_inventory`'s), once the client draws it: under load it draws a
/// new place seconds late, and a turn made before it does is undone when it does (the
/// teleport's look replaces the view's).
fn stone_pocket(yaw: f64, slots: serde_json::Value) -> McwebGame {
    let game = McwebGame::start(3002);
    let server = game.server();
    let (x, y, z) = POCKET;
    for dy in [0, 1] {
        server
            .command(json!({"cmd": "setblock", "x": x, "y": y + dy, "z": z, "block": "air"}))
            .expect("setblock");
    }
    server
        .command(json!({"cmd": "tp", "x": x as f64 + 0.5, "y": y, "z": z as f64 + 0.5, "yaw": yaw, "pitch": 10.0}))
        .expect("tp");
    server
        .command(json!({"cmd": "set_inventory", "slots": slots}))
        .expect("set_inventory");
    for _ in 0..40 {
        if server.player().is_ok_and(|p| !p.teleport_pending) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    // A freshly started client may draw the place and still turn nothing for a while (a play
    // that began then saw three identical frames): a small turn must reach the server first.
    for _ in 0..5 {
        run_skill(&game, &["turn_by", "1"]);
        std::thread::sleep(std::time::Duration::from_secs(2));
        if server
            .player()
            .is_ok_and(|p| (p.yaw - yaw).rem_euclid(360.0) > 0.5)
        {
            return game;
        }
    }
    panic!("the client turned nothing in five tries after the teleport");
}

/// The way down to the ores and back: in stone (an air pocket carved for the player, a stone
/// pickaxe on key 1), `dig_stairs_down` goes down a block a call with the three blocks' drops,
/// and jump-walks back up the staircase (at most ten for four steps) reach the start again.
#[test]
fn a_staircase_dug_down_through_stone_is_walked_back_up_on_the_minecraft_client() {
    let _game = support::one_game();
    let game = stone_pocket(180.0, json!({"36": "stone_pickaxe 1"}));
    let server = game.server();
    let y = POCKET.1;
    let skill = |args: &[&str]| {
        run_skill(&game, args);
        std::thread::sleep(std::time::Duration::from_millis(700));
        server.player().expect("state")
    };
    let mut player = server.player().expect("state");
    for _ in 0..4 {
        player = skill(&["dig_stairs_down", "1", "1.2"]);
    }
    let bottom = player.pos.expect("a position").y;
    assert!(
        bottom <= f64::from(y) - 3.0 && player.count("cobblestone") >= 9,
        "four steps down from y {y} ended at y {bottom} holding {:?}",
        player.inventory
    );
    // A jump a step, and a few more: under load the client's frame rate drops and a jump is
    // now and then lost (a step taken on the next one), which a player shrugs off too.
    skill(&["turn_by", "180"]);
    let mut jumps = 0;
    let mut top = bottom;
    while top < f64::from(y) - 0.5 && jumps < 10 {
        player = skill(&["jump_forward", "0.5"]);
        top = player.pos.expect("a position").y;
        jumps += 1;
    }
    assert!(
        top >= f64::from(y) - 0.5,
        "walked back up from y {bottom} only to y {top} in {jumps} jumps"
    );
}

/// A heading off the block grid is squared before the planner digs: in stone (an air pocket,
/// the wooden and stone pickaxes on keys 1 and 2), facing 26 degrees off the grid, the coal
/// task looks straight down, turns by the angle the floor's edges show (`perception::grid_angle`
/// on the client's own drawing) and digs: the server's yaw ends within 3 degrees of the grid,
/// and the step went down a block.
#[test]
fn the_heading_is_squared_to_the_block_grid_before_digging_on_the_minecraft_client() {
    let _game = support::one_game();
    let game = stone_pocket(
        206.0,
        json!({"36": "wooden_pickaxe 1", "37": "stone_pickaxe 1"}),
    );
    let server = game.server();
    let y = POCKET.1;
    // A look, a second one if the first left the view as it was, the turn, a step down.
    let (_, session, log) = play(&game, "coal", 4, 0);
    let player = server.player().expect("state");
    let off_grid = (player.yaw.rem_euclid(90.0)).min(90.0 - player.yaw.rem_euclid(90.0));
    let steps = actions(&session);
    let first_dig = steps
        .iter()
        .position(|s| s.as_deref() == Some("dig_stairs_down"))
        .unwrap_or(steps.len());
    let before_dig = &steps[..first_dig];
    let bottom = player.pos.expect("a position").y;
    assert!(
        before_dig.first() == Some(&Some("look_straight_down".into()))
            && before_dig.last() == Some(&Some("turn_by".into()))
            && off_grid <= 3.0
            && bottom <= f64::from(y) - 0.5,
        "yaw {} ({off_grid:.1} off the grid), y {bottom}, steps {steps:?}\nsession {}\n{log}",
        player.yaw,
        session.display()
    );
}

/// A player killed in the game: the client's death screen (its red tint) ends `play` at the
/// first step as `died`, recorded as the session's end, and the command fails.
#[test]
fn the_death_screen_ends_a_play_as_died_on_the_minecraft_client() {
    let _game = support::one_game();
    let game = McwebGame::start(3003);
    let server = game.server();
    server
        .command(json!({"cmd": "run", "command": "kill agent"}))
        .expect("kill");
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(server.player().expect("state").health, Some(0.0));
    let (ok, session, log) = play(&game, "log", 20, 0);
    assert!(!ok, "a play that died succeeded:\n{log}");
    let recorded = vistawise::agent::Session::load(&session).expect("session");
    assert_eq!(recorded.steps.len(), 1, "{log}");
    let end = recorded.end.expect("an end line");
    assert!(end.starts_with("died"), "{end}\n{log}");
}

/// `vistawise position read` on the live client's window: the position the debug screen prints.
fn read_position(game: &McwebGame) -> Result<[f64; 3], String> {
    let o = support::binary()
        .args(["--game", "minecraft-web", "position", "read"])
        .current_dir(support::repo())
        .env("DISPLAY", &game.display)
        .output()
        .expect("run vistawise position read");
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    if !o.status.success() {
        return Err(format!("{out}{}", String::from_utf8_lossy(&o.stderr)));
    }
    let v: Vec<f64> = out
        .split_whitespace()
        .filter_map(|t| t.parse().ok())
        .collect();
    match v[..] {
        [x, y, z] => Ok([x, y, z]),
        _ => Err(format!("not three numbers: {out}")),
    }
}

/// The debug screen's position on the client, at its default size and at one whose GUI scale
/// is 2: `toggle_debug_screen` shows it, the profile's glyphs read it as the server has the
/// player, and the same key hides it (nothing left to read). `position learn` takes the glyphs
/// from the client and reads back every line it learnt from.
#[test]
fn the_debug_screen_position_is_read_as_the_server_has_it_on_the_minecraft_client() {
    let _game = support::one_game();
    for (w, h) in [("1280", "720"), ("900", "600")] {
        let game = McwebGame::start_with(3003, &[("GAME_W", w), ("GAME_H", h)]);
        let server = game.server();
        std::thread::sleep(std::time::Duration::from_secs(3));
        let pos = server.player().expect("state").pos.expect("a position");
        // The client draws a few frames a second: the debug screen shows a frame or two after
        // the key. A key the client lost while it caught up is pressed again once (the
        // planner does the same on a read with nothing shown).
        run_skill(&game, &["toggle_debug_screen"]);
        std::thread::sleep(std::time::Duration::from_secs(1));
        let read = read_position(&game).or_else(|e| {
            if !e.contains("not shown") {
                return Err(e);
            }
            run_skill(&game, &["toggle_debug_screen"]);
            std::thread::sleep(std::time::Duration::from_secs(1));
            read_position(&game)
        });
        let read = read.unwrap_or_else(|e| panic!("{w}x{h}: {e}"));
        for (r, want) in read.iter().zip([pos.x, pos.y, pos.z]) {
            assert!(
                (r - want).abs() < 0.002,
                "{w}x{h}: read {read:?}, the server has {pos:?}"
            );
        }
        run_skill(&game, &["toggle_debug_screen"]);
        std::thread::sleep(std::time::Duration::from_secs(1));
        let hidden = read_position(&game);
        assert!(
            hidden.as_ref().is_err_and(|e| e.contains("not shown")),
            "{w}x{h}: {hidden:?}"
        );
        if w == "1280" {
            let o = support::binary()
                .args(["--game", "minecraft-web", "position", "learn", "--mcweb"])
                .arg(format!("127.0.0.1:{}", game.cmd_port))
                .current_dir(support::repo())
                .env("DISPLAY", &game.display)
                .output()
                .expect("run vistawise position learn");
            let err = String::from_utf8_lossy(&o.stderr);
            // "reads R/N lines back right": every line kept (a place where the player did not
            // stand still is skipped), at least three of the five.
            let back = err
                .split("reads ")
                .nth(1)
                .and_then(|t| t.split(" lines").next())
                .and_then(|t| t.split_once('/'))
                .and_then(|(r, n)| Some((r.parse::<u32>().ok()?, n.parse::<u32>().ok()?)));
            assert!(
                o.status.success() && back.is_some_and(|(r, n)| r == n && n >= 3),
                "{err}"
            );
            let out = String::from_utf8_lossy(&o.stdout);
            for c in "0123456789/XYZ:".chars() {
                assert!(out.contains(&format!("\"{c}\" = [")), "no {c}: {out}");
            }
        }
    }
}
