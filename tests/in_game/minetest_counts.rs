//! Stack counts on the real game: `vistawise counts learn` takes the digit glyphs from Minetest,
//! and `vistawise counts read` reads back the stacks the probe put in the inventory, in the HUD
//! hotbar and in the open inventory, with the templates shipped in config/games/minetest.toml.

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use crate::support::MinetestGame;
use serde_json::json;
use vistawise::testworld::Probe;

fn vistawise(game: &MinetestGame, args: &[&str]) -> (bool, String, String) {
    let o = support::binary()
        .args(["--game", "minetest"])
        .args(args)
        .env("DISPLAY", &game.display)
        .output()
        .expect("run vistawise");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `location -> count` from `counts read`'s lines (`?` lines are left out).
fn read_counts(game: &MinetestGame, screen: &str) -> BTreeMap<String, u32> {
    let (ok, out, err) = vistawise(game, &["counts", "read", "--screen", screen]);
    assert!(ok, "counts read failed:\n{out}{err}");
    out.lines()
        .filter_map(|l| {
            let (loc, n) = l.split_once('\t')?;
            Some((loc.to_string(), n.parse().ok()?))
        })
        .collect()
}

#[test]
fn the_games_stack_counts_are_learnt_and_read_back() {
    let _game = support::one_game();
    let game = MinetestGame::start(2024);

    // Learning on the real game reads back (nearly) every slot it learnt from.
    let (ok, out, err) = vistawise(
        &game,
        &["counts", "learn", "--probe", &game.probe.to_string_lossy()],
    );
    assert!(ok, "counts learn failed:\n{out}{err}\n{}", game.log_tail());
    assert!(out.starts_with("[counts.glyphs]"), "{out}");
    for d in '0'..='9' {
        assert!(
            out.contains(&format!("\"{d}\" = [")),
            "digit {d} learnt:\n{out}"
        );
    }
    let back = err
        .split("reads ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.split_once('/'))
        .and_then(|(r, t)| Some((r.parse::<u32>().ok()?, t.parse::<u32>().ok()?)))
        .unwrap_or_else(|| panic!("no read-back figure in:\n{err}"));
    assert!(back.1 >= 100 && back.0 * 100 >= back.1 * 97, "{err}");

    // Stacks the shipped templates have to read: single digits, teens, the undrawn 1, 99.
    let mut probe = Probe::open(&game.probe).expect("probe");
    let counts = [1u32, 2, 3, 7, 10, 13, 56, 99, 4, 11, 20, 38, 45, 67, 80, 1];
    let items = [
        "default:cobble",
        "default:stick",
        "default:wood",
        "default:tree",
        "default:dirt",
        "default:coal_lump",
    ];
    let main: Vec<String> = counts
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{} {n}", items[i % items.len()]))
        .collect();
    probe.send(json!({"op": "clear_inv"})).expect("clear_inv");
    probe
        .send(json!({"op": "set_list", "list": "main", "items": main}))
        .expect("set_list");
    std::thread::sleep(Duration::from_millis(1000));

    let hud = read_counts(&game, "hud");
    for (i, n) in counts.iter().take(8).enumerate() {
        assert_eq!(
            hud.get(&format!("hud.hotbar.{i}")),
            Some(n),
            "HUD slot {i}: {hud:?}"
        );
    }

    // The open inventory shows the hotbar row and the main rows, with smaller slots.
    let key = std::process::Command::new("xdotool")
        .args(["key", "e"])
        .env("DISPLAY", &game.display)
        .status()
        .expect("xdotool");
    assert!(key.success());
    std::thread::sleep(Duration::from_millis(1000));
    let inv = read_counts(&game, "inventory");
    for (i, n) in counts.iter().enumerate() {
        let loc = if i < 8 {
            format!("inventory.hotbar.{i}")
        } else {
            format!("inventory.main.{}", i - 8)
        };
        assert_eq!(inv.get(&loc), Some(n), "{loc}: {inv:?}");
    }
    // An empty slot draws no digits: the undrawn count, 1 (the agent reads only slots with an icon).
    assert_eq!(inv.get("inventory.main.20"), Some(&1), "{inv:?}");
}
