//! The Minetest profile's data: slot positions against those measured on screenshots of the
//! real game at 854x480, and its knowledge graph against its tasks.

use crate::support;

use vistawise::config::GuiScale;
use vistawise::knowledge::KnowledgeGraph;
use vistawise::skills::GuiGeometry;
use vistawise::tasks::TaskList;

#[test]
fn slot_centres_match_the_measured_screens() {
    let gui = GuiGeometry::load(&support::repo().join("config/games/minetest.toml")).expect("gui");
    // The configured GUI scale does not matter: Minetest's formspecs have their own.
    for scale in [GuiScale::Auto, GuiScale::Fixed(3)] {
        let layout = gui.layout(854, 480, scale);
        for (location, measured) in [
            ("inventory.craft.0", (366.0, 122.0)),
            ("inventory.craft.4", (401.0, 154.0)),
            ("inventory.craft.8", (436.0, 186.0)),
            ("inventory.result", (506.0, 154.0)),
            ("inventory.hotbar.0", (305.0, 274.0)),
            ("inventory.hotbar.7", (550.0, 274.0)),
            ("inventory.main.0", (305.0, 311.0)),
            ("inventory.main.23", (550.0, 375.0)),
            ("hud.hotbar.0", (226.0, 447.0)),
            ("hud.hotbar.7", (632.0, 447.0)),
        ] {
            assert_eq!(
                layout.slot_center(location).expect(location),
                measured,
                "{location}"
            );
        }
    }
}

#[test]
fn every_minetest_task_targets_a_node_of_its_graph() {
    let kg = KnowledgeGraph::load(&support::repo().join("kg/minetest.toml")).expect("kg");
    let tasks = TaskList::load(&support::repo().join("config/tasks.toml")).expect("tasks");
    let ids: Vec<&str> = tasks
        .for_profile("minetest")
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "log",
            "planks",
            "stick",
            "wooden_pickaxe",
            "cobblestone",
            "stone_pickaxe",
            "coal"
        ]
    );
    for t in tasks.for_profile("minetest") {
        assert!(kg.node(&t.target).is_some(), "{} -> {}", t.id, t.target);
    }
}

/// The shipped Minetest planner rules, and the error (if any) of the same file with `from`
/// replaced by `to`, with the changed file's text.
fn planner_rules_with(
    from: &str,
    to: &str,
) -> (vistawise::policy::PlannerConfig, Result<(), String>, String) {
    use vistawise::game::GameProfile;
    use vistawise::policy::PlannerConfig;
    let repo = support::repo();
    let kg = KnowledgeGraph::load(&repo.join("kg/minetest.toml")).expect("kg");
    let profile = GameProfile::load(&repo, "minetest").expect("profile");
    let file = repo.join("config/games/minetest.toml");
    let config = PlannerConfig::load(&file, &kg, &profile.skills).expect("planner rules");
    let text = std::fs::read_to_string(&file).expect("read");
    let changed = text.replace(from, to);
    assert_ne!(
        changed, text,
        "the profile no longer has {from:?}: update this test"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let changed_file = dir.path().join("minetest.toml");
    std::fs::write(&changed_file, &changed).expect("write");
    let result = PlannerConfig::load(&changed_file, &kg, &profile.skills)
        .map(|_| ())
        .map_err(|e| e.to_string());
    (config, result, changed)
}

#[test]
fn the_planner_rules_load_and_a_wrong_take_from_region_is_named() {
    let (config, result, bad) = planner_rules_with(
        r#"take_from = ["hotbar", "main"]"#,
        r#"take_from = ["hotbar", "bag"]"#,
    );
    assert_eq!(
        config.screens["inventory"].take_from,
        vec!["hotbar".to_string(), "main".to_string()]
    );
    let err = result.expect_err("a region that does not exist is refused");
    let line = bad
        .lines()
        .position(|l| l.contains("take_from"))
        .map(|i| i + 1)
        .expect("line");
    assert!(
        err.contains(&format!("minetest.toml:{line}")) && err.contains("no region \"bag\""),
        "{err}"
    );
}

#[test]
fn a_gather_rule_walks_its_own_approach_time_and_a_wrong_one_is_refused() {
    let (config, result, _) =
        planner_rules_with("approach_seconds = 0.25", "approach_seconds = 5.0");
    // Coal ore in a pit wall is walked to a quarter second at a time, trunks half a second.
    assert_eq!(config.gather["Coal Lump"].approach_seconds, Some(0.25));
    assert_eq!(config.gather["Tree"].approach_seconds, None);
    assert_eq!(config.approach_seconds, 0.5);
    let err = result.expect_err("a walk the skills refuse is refused when the rules load");
    assert!(
        err.contains("Coal Lump") && err.contains("approach_seconds 5"),
        "{err}"
    );
}

#[test]
fn the_bag_screen_is_a_screen_of_the_rules_and_a_wrong_one_is_refused() {
    let (config, result, bad) =
        planner_rules_with(r#"bag_screen = "inventory""#, r#"bag_screen = "backpack""#);
    assert_eq!(config.bag_screen.as_deref(), Some("inventory"));
    let err = result.expect_err("a bag screen with no [planner.screens] rule is refused");
    let line = bad
        .lines()
        .position(|l| l.trim() == "[planner]")
        .map(|i| i + 1)
        .expect("line");
    assert!(
        err.contains(&format!("minetest.toml:{line}"))
            && err.contains(r#"bag_screen: no screen "backpack""#),
        "{err}"
    );
}

#[test]
fn the_profile_reads_stack_counts_and_a_broken_counts_section_is_refused_with_its_line() {
    use vistawise::game::GameProfile;
    let repo = support::repo();
    let profile = GameProfile::load(&repo, "minetest").expect("profile");
    let counts = profile.counts.expect("[counts]");
    assert_eq!(counts.glyphs.len(), 10, "the ten digits are shipped");
    assert_eq!(counts.undrawn, 1);

    let text = std::fs::read_to_string(repo.join("config/games/minetest.toml")).expect("read");
    let bad = text.replace("max_mismatch = 0.2", "max_mismatch = 2.0");
    assert_ne!(
        bad, text,
        "the profile no longer has max_mismatch = 0.2: update this test"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("minetest.toml"), &bad).expect("write");
    let err = GameProfile::load_from(
        &dir.path().join("minetest.toml"),
        &repo.join("skills/minetest"),
        "minetest",
    )
    .expect_err("a mismatch share above 1 is refused")
    .to_string();
    let line = bad
        .lines()
        .position(|l| l.starts_with("[counts]"))
        .map(|i| i + 1)
        .expect("line");
    assert!(
        err.contains(&format!("minetest.toml:{line}")) && err.contains("max_mismatch"),
        "{err}"
    );
}

#[test]
fn a_broken_success_section_is_refused_naming_the_field_and_its_line() {
    use vistawise::game::GameProfile;
    let repo = support::repo();
    let profile = GameProfile::load(&repo, "minetest").expect("profile");
    let rule = profile.success.expect("[success]");
    assert_eq!(
        (rule.confirm_skill.as_str(), rule.hud_screen.as_str()),
        ("open_inventory", "hud")
    );
    let text = std::fs::read_to_string(repo.join("config/games/minetest.toml")).expect("read");
    let line = text
        .lines()
        .position(|l| l.starts_with("[success]"))
        .map(|i| i + 1)
        .expect("[success] line");
    let dir = tempfile::tempdir().expect("temp dir");
    for (from, to, field) in [
        (
            "confirm_skill = \"open_inventory\"",
            "confirm_skill = \"peek\"",
            "no skill \"peek\"",
        ),
        (
            "confirm_skill = \"open_inventory\"",
            "confirm_skill = \"select_hotbar_slot\"",
            "takes parameters",
        ),
        (
            "hud_screen = \"hud\"",
            "hud_screen = \"hotbar\"",
            "success.hud_screen",
        ),
        (
            "ignore_steps = 3",
            "ignore_steps = 0",
            "success.ignore_steps",
        ),
        (
            "ignore_steps = 3",
            "ignore_steps = 3\ndeath_screen = \"hud\"",
            "success.death_screen",
        ),
    ] {
        let bad = text.replace(from, to);
        assert_ne!(
            bad, text,
            "the profile no longer has {from}: update this test"
        );
        std::fs::write(dir.path().join("minetest.toml"), &bad).expect("write");
        let err = GameProfile::load_from(
            &dir.path().join("minetest.toml"),
            &repo.join("skills/minetest"),
            "minetest",
        )
        .expect_err("refused")
        .to_string();
        assert!(
            err.contains(&format!("minetest.toml:{line}")) && err.contains(field),
            "{to}: {err}"
        );
    }
}

#[test]
fn a_craft_that_yields_nothing_is_refused() {
    let (config, result, _) = planner_rules_with(
        r#"args = ["Tree"], yields = 4"#,
        r#"args = ["Tree"], yields = 0"#,
    );
    assert_eq!(config.craft["Wooden Planks"].yields, 4);
    assert_eq!(config.craft["Stone Pickaxe"].yields, 1, "the default");
    let err = result.expect_err("yields = 0 would divide the demand by nothing");
    assert!(
        err.contains("Wooden Planks") && err.contains("yields = 0"),
        "{err}"
    );
}

#[test]
fn a_screen_that_takes_back_a_station_must_name_it() {
    let (config, result, _) = planner_rules_with(
        "[planner.screens.inventory]\nopen = [[\"open_inventory\"]]",
        "[planner.screens.inventory]\ntaken_back = true\nopen = [[\"open_inventory\"]]",
    );
    assert!(!config.screens["inventory"].taken_back);
    let err = result.expect_err("taken_back without a station is refused");
    assert!(
        err.contains("screen inventory: taken_back needs the station"),
        "{err}"
    );
}
