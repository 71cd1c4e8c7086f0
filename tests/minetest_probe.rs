//! The probe's map commands on the real game: land nobody has been near is generated before
//! `view_near` searches it and `excavate` clears it, so neither wrongly finds nothing there (a
//! fresh CI machine once failed the closed-loop test's set-up with "no node of default:tree":
//! the land around the player had not been generated yet).

mod support;

use serde_json::json;
use support::MinetestGame;
use vistawise::minetest::probe::Probe;

/// Far enough from the spawn point (0, 0) that no map block there exists when the game starts.
const FAR: f64 = 1000.0;

#[test]
fn map_commands_wait_for_land_nobody_has_been_near() {
    let game = MinetestGame::start(2024);
    let mut probe = Probe::open(&game.probe).expect("probe");

    let center = [FAR, 8.0, FAR];
    let view = probe
        .send(json!({
            "op": "view_near", "names": ["group:tree", "group:soil"], "seed": 5,
            "center": {"x": center[0], "y": center[1], "z": center[2]},
            "radius": 24, "min_dist": 2.5, "max_dist": 4.5,
        }))
        .expect("view_near in land not generated before the command");
    let target: Vec<f64> = ["x", "y", "z"]
        .iter()
        .map(|k| view["target"][k].as_f64().expect("target position"))
        .collect();
    for (t, c) in target.iter().zip(center) {
        assert!(
            (t - c).abs() <= 24.0,
            "target {target:?} outside the searched box"
        );
    }
    // The player was put there, a few nodes from the node it looks at.
    let state = probe
        .fresh_state(std::time::Duration::from_secs(5))
        .expect("state");
    let flat = ((state.pos.x - target[0]).powi(2) + (state.pos.z - target[2]).powi(2)).sqrt();
    assert!(
        (1.5..=5.5).contains(&flat),
        "player at {:?}, {flat:.1} nodes from the target {target:?}",
        state.pos.as_array()
    );

    // Underground in other land nobody has been near: 5 x 5 x 5 nodes, nearly all solid
    // (a cave may cross it); before the wait it cleared nothing, the blocks did not exist.
    let cleared = probe
        .send(json!({
            "op": "excavate",
            "min": {"x": -FAR, "y": -30, "z": -FAR},
            "max": {"x": -FAR + 4.0, "y": -26, "z": -FAR + 4.0},
        }))
        .expect("excavate in land not generated before the command");
    let n = cleared["cleared"]
        .as_f64()
        .unwrap_or_else(|| panic!("no cleared count in {cleared}"));
    assert!(n >= 60.0, "excavate cleared only {n} of 125 nodes");
}
