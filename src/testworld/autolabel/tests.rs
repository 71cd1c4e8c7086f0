use std::collections::BTreeSet;

use super::*;

fn config() -> AutoLabelConfig {
    AutoLabelConfig::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("config/games/minetest.toml"),
        None,
    )
    .expect("the shipped [autolabel] loads")
}

#[test]
fn world_name_patterns_match_groups_suffixes_and_names() {
    assert!(name_matches("group:tree", "default:jungletree"));
    assert!(name_matches("*_log", "birch_log"));
    assert!(!name_matches("*_log", "oak_planks"));
    assert!(name_matches("coal_ore", "coal_ore"));
    assert!(name_matches("minecraft:coal_ore", "coal_ore"));
    assert!(!name_matches("coal_ore", "iron_ore"));
}

#[test]
fn the_client_profile_labels_in_the_minecraft_classes_with_its_inventory_shape() {
    let c = AutoLabelConfig::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("config/games/minecraft-web.toml"),
        None,
    )
    .expect("the client's [autolabel] loads");
    let card: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("models/minecraft-detector.json"),
        )
        .expect("card"),
    )
    .expect("card is JSON");
    let names: Vec<&str> = card["classes"]
        .as_str()
        .expect("classes")
        .split('\'')
        .skip(1)
        .step_by(2)
        .collect();
    assert_eq!(
        c.classes, names,
        "the shipped detector's classes, in its order"
    );
    assert_eq!((c.main_slots, c.hotbar_slots, c.craft_slots), (36, 9, 4));
    let inv = random_inventory(&c, &mut SplitMix::new(3), true);
    assert_eq!((inv.main.len(), inv.craft.len()), (36, 4));
    assert!((1..=9).contains(&inv.wield));
    // Slot 10 is the first main slot after the 9 of the hotbar: the inventory's main row 0.
    let main = [Stack {
        slot: 10,
        name: "stick".into(),
        count: 2,
        groups: None,
    }];
    let gui =
        crate::game::GameProfile::load(Path::new(env!("CARGO_MANIFEST_DIR")), "minecraft-web")
            .expect("profile")
            .gui;
    let layout = layout_for(&gui, 1280, 720);
    let boxes = icon_boxes(&c, &layout, &main, &[], true, None);
    let want = layout.slot_center("inventory.main.0").expect("slot");
    assert_eq!(boxes.len(), 1);
    assert!(
        (boxes[0].x1 + 24.0 - f64::from(want.0)).abs() < 1e-3,
        "{boxes:?}"
    );
}

#[test]
fn a_pose_distance_is_the_largest_move_or_a_tenth_of_the_turn() {
    let a = Pose {
        feet: [0.0; 3],
        eye: [0.0, 1.0, 0.0],
        yaw_deg: 10.0,
        pitch_deg: 0.0,
    };
    let mut b = a;
    b.eye[2] = 0.05;
    assert!((a.distance(&b) - 0.05).abs() < 1e-12);
    b.yaw_deg = 12.0;
    assert!((a.distance(&b) - 0.2).abs() < 1e-12);
}

#[test]
fn the_same_seed_gives_the_same_inventory() {
    let c = config();
    let a = random_inventory(&c, &mut SplitMix::new(5), true);
    let b = random_inventory(&c, &mut SplitMix::new(5), true);
    let other = random_inventory(&c, &mut SplitMix::new(6), true);
    assert_eq!(a, b);
    assert_ne!(a, other);
    assert_eq!(a.main.len(), 32);
    assert_eq!(a.craft.len(), 9);
}

#[test]
fn hud_negatives_are_a_seeded_share_of_the_frames() {
    let c = config();
    let n = c
        .hud_negatives
        .clone()
        .expect("the shipped profile has hud_negatives");
    let picked: Vec<u64> = (0..4000).filter(|i| n.picks(3, *i)).collect();
    let share = picked.len() as f64 / 4000.0;
    assert!((share - n.fraction).abs() < 0.03, "share {share}");
    // The same seed picks the same frames; another seed others.
    assert_eq!(
        picked,
        (0..4000).filter(|i| n.picks(3, *i)).collect::<Vec<_>>()
    );
    assert_ne!(
        picked,
        (0..4000).filter(|i| n.picks(4, *i)).collect::<Vec<_>>()
    );
    let none = HudNegatives {
        fraction: 0.0,
        ..n.clone()
    };
    assert!((0..4000).all(|i| !none.picks(3, i)));
}

#[test]
fn hud_negatives_out_of_range_are_refused() {
    let mut c = config();
    let good = c.hud_negatives.clone().expect("shipped");
    for (bad, what) in [
        (
            HudNegatives {
                fraction: 1.5,
                ..good.clone()
            },
            "fraction",
        ),
        (
            HudNegatives {
                pitch_down_deg: 75.0,
                ..good.clone()
            },
            "pitch_down_deg",
        ),
        (
            HudNegatives {
                view: vec![],
                ..good.clone()
            },
            "view",
        ),
    ] {
        c.hud_negatives = Some(bad);
        let err = c.check().expect_err(what);
        assert!(err.contains(what), "{err}");
    }
}

#[test]
fn distractors_fill_some_slots_and_get_no_box() {
    let c = config();
    assert!(
        !c.distractors.is_empty(),
        "the shipped profile lists distractors"
    );
    let mut rng = SplitMix::new(1);
    let mut placed = 0;
    for _ in 0..50 {
        let inv = random_inventory(&c, &mut rng, true);
        for stack in inv.main.iter().chain(&inv.craft) {
            let item = stack.split(' ').next().unwrap_or_default();
            if c.distractors.contains_key(item) {
                placed += 1;
                assert!(!c.icons.contains_key(item), "{item} is labelled");
            }
        }
    }
    // A third of about 4 stacks (+ 2 grid items) over 50 inventories.
    assert!(placed > 30, "{placed} distractor stacks");
}

#[test]
fn labelled_stacks_are_drawn_by_class_then_item() {
    let mut c = config();
    c.distractors.clear();
    for trunk in [
        "default:pine_tree",
        "default:jungletree",
        "default:aspen_tree",
    ] {
        c.icons.insert(trunk.into(), "tree_icon".into());
    }
    let classes = c.icons.values().collect::<BTreeSet<_>>().len();
    let mut rng = SplitMix::new(5);
    let (mut trunks, mut stacks) = (0, 0);
    let mut kinds = BTreeSet::new();
    for _ in 0..600 {
        for stack in random_inventory(&c, &mut rng, false).main {
            let Some(item) = stack.split(' ').next().filter(|i| !i.is_empty()) else {
                continue;
            };
            stacks += 1;
            if c.icons.get(item).is_some_and(|class| class == "tree_icon") {
                trunks += 1;
                kinds.insert(item.to_string());
            }
        }
    }
    // One class of `classes`, not one item in four of the items.
    let share = f64::from(trunks) / f64::from(stacks);
    let expected = 1.0 / classes as f64;
    assert!(
        (share - expected).abs() < 0.35 * expected,
        "trunk share {share:.3}, expected {expected:.3}"
    );
    let trunk_kinds = c.icons.values().filter(|v| *v == "tree_icon").count();
    assert!(trunk_kinds >= 4, "{trunk_kinds} trunk items");
    assert_eq!(
        kinds.len(),
        trunk_kinds,
        "every trunk kind is drawn: {kinds:?}"
    );
}

#[test]
fn distractors_are_drawn_by_weight() {
    let mut c = config();
    c.distractors = [
        ("default:dirt".to_string(), 9),
        ("default:sand".to_string(), 1),
    ]
    .into_iter()
    .collect();
    let mut rng = SplitMix::new(3);
    let (mut dirt, mut sand) = (0, 0);
    for _ in 0..400 {
        for stack in random_inventory(&c, &mut rng, true).main {
            match stack.split(' ').next() {
                Some("default:dirt") => dirt += 1,
                Some("default:sand") => sand += 1,
                _ => {}
            }
        }
    }
    assert!(sand > 0, "a light item is still drawn");
    assert!(dirt > 5 * sand, "dirt {dirt}, sand {sand}");
}

#[test]
fn pits_ring_the_centre_without_touching_it() {
    let pits = PitConfig {
        count: 3,
        half_width: 5,
        depth: 10,
        distance: 10.0,
    };
    let boxes = pits.boxes([100.4, 9.5, -20.0]);
    assert_eq!(boxes.len(), 3);
    for [lo, hi] in &boxes {
        assert_eq!(hi[0] - lo[0], 10, "11 nodes across");
        assert_eq!(lo[1], 0, "10 below the feet (y 9.5 rounds to 10)");
        assert_eq!(hi[1], 10 + PIT_CLEAR_ABOVE);
        let inside = (lo[0]..=hi[0]).contains(&100) && (lo[2]..=hi[2]).contains(&-20);
        assert!(
            !inside,
            "the player at the centre would fall in: {lo:?}..{hi:?}"
        );
    }
    assert_ne!(boxes[0], boxes[1]);
    assert_eq!(
        boxes,
        pits.boxes([100.4, 9.5, -20.0]),
        "same centre, same pits"
    );
    let close = PitConfig {
        distance: 6.0,
        ..pits
    };
    assert!(close.check().is_err(), "a pit under the player is refused");
}

#[test]
fn class_radius_must_name_a_world_class_and_stay_within_the_scan_limit() {
    let c = config();
    assert_eq!(c.class_radius.get("tree"), Some(&40.0));
    let (_d, path) = shipped_with(
        "class_radius = { tree = 40.0 }",
        "class_radius = { tree_icon = 40.0 }",
    );
    let err = AutoLabelConfig::load(&path, None).expect_err("an icon class has no radius");
    assert!(
        err.to_string().contains("class_radius names \"tree_icon\""),
        "{err}"
    );
    let (_d, path) = shipped_with(
        "class_radius = { tree = 40.0 }",
        "class_radius = { tree = 400.0 }",
    );
    let err = AutoLabelConfig::load(&path, None).expect_err("too far");
    assert!(err.to_string().contains("class_radius.tree = 400"), "{err}");
    // The Minecraft label set names trunks, not trees: the profile's radii stay behind.
    let mc = c.with_label_set("minecraft").expect("label set");
    assert!(mc.class_radius.is_empty());
}

#[test]
fn the_mean_luma_of_a_box_sees_an_unlit_area_as_dark() {
    // Left half black (an unlit cave), right half daylight grey.
    let image = RgbImage::from_fn(200, 100, |x, _| {
        if x < 100 {
            image::Rgb([3, 3, 3])
        } else {
            image::Rgb([150, 150, 150])
        }
    });
    let b = |x1: f64, x2: f64| PixelBox {
        class: "stone".into(),
        x1,
        y1: 10.0,
        x2,
        y2: 90.0,
    };
    assert!(mean_luma(&image, &b(0.0, 90.0)) < 5.0);
    assert!((mean_luma(&image, &b(110.0, 200.0)) - 150.0).abs() < 1.0);
    assert_eq!(
        mean_luma(&image, &b(250.0, 300.0)),
        0.0,
        "outside the image"
    );
}

#[test]
fn labels_are_normalised_and_use_the_class_ids() {
    let c = config();
    let tree = c.class_id("tree").expect("tree class");
    let labels = label_boxes(
        &c,
        &[PixelBox {
            class: "tree".into(),
            x1: 0.0,
            y1: 0.0,
            x2: 427.0,
            y2: 480.0,
        }],
        854,
        480,
    );
    assert_eq!(
        crate::dataset::writer::format_labels(&labels),
        format!("{tree} 0.250000 0.500000 0.500000 1.000000\n")
    );
}

#[test]
fn a_config_naming_an_unknown_class_is_refused_with_its_line() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("g.toml");
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("config/games/minetest.toml"),
    )
    .expect("read");
    std::fs::write(
        &path,
        shipped.replace(
            "\"default:stick\" = \"stick_icon\"",
            "\"default:stick\" = \"bogus\"",
        ),
    )
    .expect("write");
    let err = AutoLabelConfig::load(&path, None).expect_err("unknown class");
    assert!(err.to_string().contains("bogus"), "{err}");
}

fn shipped_with(from: &str, to: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("g.toml");
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("config/games/minetest.toml"),
    )
    .expect("read");
    assert!(shipped.contains(from), "the shipped profile has {from:?}");
    std::fs::write(&path, shipped.replacen(from, to, 1)).expect("write");
    (dir, path)
}

#[test]
fn the_minecraft_label_set_labels_in_the_shipped_minecraft_detectors_classes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mc = AutoLabelConfig::load(&root.join("config/games/minetest.toml"), Some("minecraft"))
        .expect("the minecraft label set loads");
    let card: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("models/minecraft-detector.json")).expect("card"),
    )
    .expect("card is JSON");
    // The card keeps Ultralytics' class map as written: "{0: 'trunk', 1: 'log_icon', ...}".
    let classes = card["classes"].as_str().expect("classes");
    let names: Vec<&str> = classes.split('\'').skip(1).step_by(2).collect();
    assert_eq!(names.len(), 23, "{classes}");
    assert_eq!(mc.classes, names);
    // Trunk columns are one object, as in the real frames; dirt is a class there, so it
    // cannot stay a distractor.
    assert_eq!(mc.merge_columns, ["trunk"]);
    assert_eq!(
        mc.icons.get("default:dirt").map(String::as_str),
        Some("dirt_icon")
    );
    assert!(!mc.distractors.contains_key("default:dirt"));
    assert!(mc.label_sets.is_empty());
    // The profile's own classes are untouched.
    assert_eq!(config().classes[0], "tree");
}

#[test]
fn an_unknown_label_set_is_refused_naming_the_known_ones() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let err = AutoLabelConfig::load(&root.join("config/games/minetest.toml"), Some("bogus"))
        .expect_err("no such set");
    let msg = err.to_string();
    assert!(
        msg.contains("\"bogus\"") && msg.contains("minecraft"),
        "{msg}"
    );
}

#[test]
fn a_broken_label_set_is_refused_at_load_with_its_header_line() {
    // A set labelling dirt while its distractors still hold it.
    let (_dir, path) = shipped_with(
        "[autolabel.label_sets.minecraft.distractors]\n",
        "[autolabel.label_sets.minecraft.distractors]\n\"default:dirt\" = 2\n",
    );
    let text = std::fs::read_to_string(&path).expect("read");
    let header = text
        .lines()
        .position(|l| l.starts_with("[autolabel.label_sets.minecraft]"))
        .expect("the set's header")
        + 1;
    let err = AutoLabelConfig::load(&path, None).expect_err("dirt is labelled");
    let msg = err.to_string();
    assert!(msg.contains("default:dirt"), "{msg}");
    assert!(msg.contains(&format!(":{header}")), "{msg}");
}
