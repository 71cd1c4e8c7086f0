//! The closed loop on a real game client: `vistawise --game minetest play --policy planner` in a
//! seeded Minetest world, judged by the game's own ground truth (the probe's inventory and dig
//! events), not by what the agent believes. Sessions and their HTML reports are kept under
//! `target/artifacts/minetest-closed-loop/` (CI keeps them).

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::MinetestGame;
use serde_json::json;
use vistawise::testworld::{PlayerState, Probe};

fn artifacts() -> PathBuf {
    let dir = support::repo().join("target/artifacts/minetest-closed-loop");
    std::fs::create_dir_all(&dir).expect("artifacts dir");
    dir
}

/// Plays one task to its end; returns the session folder and the command's output. `attempt`
/// keeps the session ids of a retry apart from the first try's.
fn play(game: &MinetestGame, task: &str, max_steps: u32, attempt: u64) -> (bool, PathBuf, String) {
    let sessions = artifacts();
    let id = format!("{task}-{}-{attempt}", std::process::id());
    let o = support::binary()
        .args([
            "--game", "minetest", "play", "--policy", "planner", "--task", task,
        ])
        .args(["--max-steps", &max_steps.to_string(), "--max-minutes", "4"])
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

fn inventory(probe: &Probe) -> PlayerState {
    probe
        .fresh_state(Duration::from_secs(5))
        .expect("probe state")
}

/// Stands the player a couple of nodes from a trunk, looking at it (the test's starting place;
/// the agent still has to find, approach, aim at and chop it from the screen).
fn face_a_tree(probe: &mut Probe, seed: u64) {
    probe
        .batch(
            vec![
                json!({"op": "clear_inv"}),
                json!({"op": "view_near", "names": ["group:tree"], "seed": seed,
                       "radius": 24, "min_dist": 2.5, "max_dist": 4.5}),
            ],
            // view_near waits (up to 60 s in the probe) for the land around to be generated.
            Duration::from_secs(75),
        )
        .expect("set-up commands");
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

fn check_report(session: &Path) {
    let html = std::fs::read_to_string(session.join("report.html")).expect("report.html");
    assert!(html.contains("<html"), "not an HTML report");
}

/// The tasks of the closed loop, each a `play` of its own on one world, in tech-tree order:
/// (task, the game's item that proves it, `group:` for any item of the group: any trunk is a
/// log, step limit). Cobblestone and the stone pickaxe follow
/// in `tools/closed_loop_runs.py` but are not reliable enough for CI yet (docs/minetest.md).
const CHAIN: [(&str, &str, u32); 4] = [
    ("log", "group:tree", 40),
    ("planks", "group:wood", 10),
    ("stick", "default:stick", 10),
    ("wooden_pickaxe", "default:pick_wood", 12),
];

/// Plays the chain on a running game; the first task whose item is not in the game's
/// inventory afterwards (or that the agent did not see done) ends it with the reason.
fn play_chain(game: &MinetestGame, probe: &Probe, attempt: u64) -> Result<(), String> {
    for (task, item, max_steps) in CHAIN {
        let (ok, session, log) = play(game, task, max_steps, attempt);
        check_report(&session);
        let inv = inventory(probe);
        // A chopped log lands in the HUD hotbar, drawn over the world: the agent takes it as
        // obtained only after opening the inventory and seeing it in the bag ([success]).
        let steps = actions(&session);
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
        if inv.count(item) < 1 || !ok {
            return Err(format!(
                "task {task}: {item} x{} in the game's inventory, agent ok={ok}; inventory {:?}\n\
                 session {}\n{log}\ngame log:\n{}",
                inv.count(item),
                inv.main,
                session.display(),
                game.log_tail()
            ));
        }
    }
    Ok(())
}

/// The closed loop in a fresh world 2024: the player stands in front of a tree (the test's
/// set-up) and must find, approach, aim at and chop it from the screen, then craft planks,
/// sticks and a wooden pickaxe, each judged by what the game says the player holds. An agent's task has a success rate, not a certainty
/// (measured in docs/minetest.md: the four tasks succeeded together in 9 of 10 seeded runs; dug
/// dirt read as planks is the known failure), so the chain is tried in up to three fresh worlds
/// with other starting views before the test fails; every session stays in the artifacts.
#[test]
fn planner_gets_a_log_then_crafts_up_to_a_wooden_pickaxe_in_the_real_game() {
    let _game = support::one_game();
    let mut failures = Vec::new();
    for view_seed in [11, 12, 13] {
        let game = MinetestGame::start(2024);
        let mut probe = Probe::open(&game.probe).expect("probe");
        face_a_tree(&mut probe, view_seed);
        match play_chain(&game, &probe, view_seed) {
            Ok(()) => return,
            Err(e) => failures.push(format!("view seed {view_seed}: {e}")),
        }
    }
    panic!(
        "the chain failed in three fresh worlds:\n{}",
        failures.join("\n---\n")
    );
}
