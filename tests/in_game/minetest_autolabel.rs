//! `vistawise annotate --auto minetest` on the real game: labelled frames in the YOLO layout,
//! deterministic choices, pits for stone and ore views, resume without redoing work.

use crate::support;

use std::collections::BTreeMap;

use crate::support::MinetestGame;

fn annotate(game: &MinetestGame, out: &std::path::Path, frames: u32) -> (bool, String) {
    annotate_in(game, &support::repo(), out, frames)
}

/// Whether a run succeeded, and its stdout and stderr together.
fn succeeded_with_log(o: &std::process::Output) -> (bool, String) {
    (
        o.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// A project root whose Minetest profile is the shipped one with each `(from, to)` replaced once
/// (each must be there), and the shipped Minetest skills.
fn profile_root(changes: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("tmp");
    for dir in ["config/games", "skills/minetest"] {
        std::fs::create_dir_all(root.path().join(dir)).expect("mkdir");
    }
    let mut profile = std::fs::read_to_string(support::repo().join("config/games/minetest.toml"))
        .expect("profile");
    for (from, to) in changes {
        assert!(
            profile.contains(from),
            "the shipped profile has no {from:?}"
        );
        profile = profile.replacen(from, to, 1);
    }
    std::fs::write(root.path().join("config/games/minetest.toml"), profile).expect("write");
    for e in std::fs::read_dir(support::repo().join("skills/minetest")).expect("skills") {
        let e = e.expect("entry");
        std::fs::copy(
            e.path(),
            root.path().join("skills/minetest").join(e.file_name()),
        )
        .expect("copy skill");
    }
    root
}

/// `annotate --auto minetest --relabel` of `out` with the profile under `root` (no game).
fn relabel(root: &std::path::Path, out: &std::path::Path) -> (bool, String) {
    let o = support::binary()
        .args([
            "--game",
            "minetest",
            "annotate",
            "--auto",
            "minetest",
            "--relabel",
            "--root",
        ])
        .arg(root)
        .arg("-o")
        .arg(out)
        .env_remove("DISPLAY")
        .output()
        .expect("run vistawise");
    succeeded_with_log(&o)
}

/// `root`: the project root whose config/games/minetest.toml the labeller reads.
fn annotate_in(
    game: &MinetestGame,
    root: &std::path::Path,
    out: &std::path::Path,
    frames: u32,
) -> (bool, String) {
    let o = support::binary()
        .args([
            "--game", "minetest", "annotate", "--auto", "minetest", "--root",
        ])
        .arg(root)
        .arg("-o")
        .arg(out)
        .args(["--frames", &frames.to_string(), "--seed", "3", "--probe"])
        .arg(&game.probe)
        .env("DISPLAY", &game.display)
        .output()
        .expect("run vistawise");
    succeeded_with_log(&o)
}

#[test]
fn the_game_labels_its_own_frames_and_resumes() {
    let _game = support::one_game();
    let game = MinetestGame::start(2024);
    let out = tempfile::tempdir().expect("tmp");
    let (ok, log) = annotate(&game, out.path(), 8);
    assert!(ok, "annotate --auto failed:\n{log}\n{}", game.log_tail());

    let yaml = std::fs::read_to_string(out.path().join("data.yaml")).expect("data.yaml");
    assert!(
        yaml.contains("0: tree") && yaml.contains("9: coal_lump_icon"),
        "{yaml}"
    );
    let labels = support::sorted_files(&out.path().join("labels"));
    // A frame whose view finds no place to stand is dropped, never labelled, and said so.
    let refused = log.matches("the game refused command view_near").count();
    assert_eq!(
        labels.len() + refused,
        8,
        "every frame labelled or its drop reported:\n{log}"
    );
    assert!(
        labels.len() >= 4,
        "at most half of 8 frames may be dropped: {labels:?}\n{log}"
    );
    let mut per_class: BTreeMap<usize, usize> = BTreeMap::new();
    for l in &labels {
        let stem = l.file_stem().expect("stem").to_string_lossy().to_string();
        assert!(
            out.path()
                .join("images")
                .join(format!("{stem}.jpg"))
                .is_file(),
            "{stem} has no image"
        );
        for line in std::fs::read_to_string(l).expect("read").lines() {
            let v: Vec<f64> = line
                .split(' ')
                .map(|x| x.parse().expect("number"))
                .collect();
            assert_eq!(v.len(), 5, "{line}");
            assert!(
                v[0] < 10.0 && v[1..].iter().all(|x| (0.0..=1.0).contains(x)),
                "{line}"
            );
            *per_class.entry(v[0] as usize).or_default() += 1;
        }
    }
    // Views are taken near trees, and the random inventories show icons in the hotbar.
    assert!(
        per_class.get(&0).copied().unwrap_or(0) >= 3,
        "tree boxes: {per_class:?}"
    );
    assert!(
        per_class.keys().any(|c| *c >= 3),
        "no icon boxes: {per_class:?}"
    );
    // The pits the labeller digs first put stone and coal ore walls in sunlight.
    assert!(
        per_class.get(&1).copied().unwrap_or(0) + per_class.get(&2).copied().unwrap_or(0) >= 1,
        "no stone or coal ore boxes: {per_class:?}\n{log}"
    );

    // Resume: the same command finds every frame done and rewrites nothing.
    let before: Vec<_> = labels
        .iter()
        .map(|l| {
            std::fs::metadata(l)
                .expect("meta")
                .modified()
                .expect("mtime")
        })
        .collect();
    let (ok, log) = annotate(&game, out.path(), 8);
    assert!(ok, "{log}");
    let after: Vec<_> = labels
        .iter()
        .map(|l| {
            std::fs::metadata(l)
                .expect("meta")
                .modified()
                .expect("mtime")
        })
        .collect();
    assert_eq!(before, after, "a resumed run rewrote finished frames");

    // Relabelling from the records, without the game: with the same rules every label file
    // comes out byte for byte the same (the dark-box rule reads the saved JPEG both times).
    let texts = |labels: &[std::path::PathBuf]| -> Vec<String> {
        labels
            .iter()
            .map(|l| std::fs::read_to_string(l).expect("read"))
            .collect()
    };
    let original = texts(&labels);
    for l in &labels {
        let stem = l.file_stem().expect("stem").to_string_lossy().to_string();
        assert!(
            out.path()
                .join("records")
                .join(format!("{stem}.json"))
                .is_file(),
            "{stem} has no record"
        );
    }
    let (ok, log) = relabel(&support::repo(), out.path());
    assert!(ok, "{log}");
    assert!(
        log.contains(&format!("{} frames relabelled", labels.len())),
        "{log}"
    );
    assert_eq!(
        texts(&labels),
        original,
        "the same rules labelled differently"
    );
    // Narrower rules: stone and coal ore as a node these frames do not show. Their boxes go;
    // every other line stays.
    let narrow = profile_root(&[
        (
            r#"stone = ["default:stone"]"#,
            r#"stone = ["default:desert_stone"]"#,
        ),
        (
            r#"coal_ore = ["default:stone_with_coal"]"#,
            r#"coal_ore = ["default:desert_stone"]"#,
        ),
    ]);
    let (ok, log) = relabel(narrow.path(), out.path());
    assert!(ok, "{log}");
    let stone_or_coal = |line: &&str| matches!(line.split(' ').next(), Some("1" | "2"));
    for (was, now) in original.iter().zip(texts(&labels)) {
        let kept: Vec<&str> = was.lines().filter(|l| !stone_or_coal(l)).collect();
        assert_eq!(now.lines().collect::<Vec<_>>(), kept, "was:\n{was}");
    }

    // HUD hard negatives: with every frame one, the hotbar row is empty and the inventory
    // closed, so no frame has an icon box (the stone under the HUD is what it teaches).
    let root = profile_root(&[(
        "hud_negatives = { fraction = 0.15,",
        "hud_negatives = { fraction = 1.0,",
    )]);
    let negatives = tempfile::tempdir().expect("tmp");
    let (ok, log) = annotate_in(&game, root.path(), negatives.path(), 3);
    assert!(ok, "{log}");
    let labels = support::sorted_files(&negatives.path().join("labels"));
    assert!(!labels.is_empty(), "no HUD negative frame:\n{log}");
    assert!(
        log.contains(&format!("{} HUD negatives", labels.len())),
        "every labelled frame is a HUD negative:\n{log}"
    );
    for l in &labels {
        let text = std::fs::read_to_string(l).expect("read");
        assert!(
            text.lines()
                .all(|line| line.split(' ').next().and_then(|c| c.parse::<u32>().ok()) < Some(3)),
            "{}: an icon box on a HUD negative:\n{text}",
            l.display()
        );
    }
}
