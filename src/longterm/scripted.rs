//! Scripted episodes on the Minecraft profile, as detections (no game, no detector): the tests
//! and `vistawise memory tokens` run them through the real pipeline (graph, pooling, prompt)
//! with the long-term memory on and off.
//!
//! 1. `iron_ore`, failed: a wooden pickaxe in hand and iron ore in reach, `mine_iron_ore`
//!    twice, nothing gained (the graph says iron ore needs a stone pickaxe).
//! 2. `stone_pickaxe`, succeeded: dig for cobblestone, craft the stone pickaxe.
//! 3. `iron_ore` again, succeeded: with the stone pickaxe.
//! 4. `stone_pickaxe` again, succeeded: the same as 2 (what a repeat finds in memory).

use crate::perception::{EnvironmentEntity, InventoryIcon, Perception};
use crate::skills::ActResult;

#[derive(Debug, Clone)]
pub struct ScriptedStep {
    /// Detector icon classes in the hotbar.
    pub icons: Vec<&'static str>,
    /// Detector world classes in view, and whether in reach.
    pub entities: Vec<(&'static str, bool)>,
    /// The action taken at this step (None on the last, observed-only step).
    pub action: Option<&'static str>,
    pub result: ActResult,
}

#[derive(Debug, Clone)]
pub struct ScriptedEpisode {
    pub task_id: &'static str,
    pub steps: Vec<ScriptedStep>,
    pub success: bool,
}

pub const WINDOW: (u32, u32) = (1280, 720);

/// The frame's perception: icons along the hotbar, entities in the middle (big when in reach).
pub fn perception(step: &ScriptedStep) -> Perception {
    let (w, h) = WINDOW;
    Perception {
        frame_w: w,
        frame_h: h,
        entities: step
            .entities
            .iter()
            .enumerate()
            .map(|(i, (class, near))| {
                let (bw, bh) = if *near { (160.0, 300.0) } else { (40.0, 40.0) };
                EnvironmentEntity {
                    class: (*class).to_string(),
                    x: 640.0 + 200.0 * i as f32,
                    y: 360.0,
                    w: bw,
                    h: bh,
                    conf: 0.9,
                    in_reach: *near,
                }
            })
            .collect(),
        icons: step
            .icons
            .iter()
            .enumerate()
            .map(|(i, class)| InventoryIcon {
                class: (*class).to_string(),
                x: 480.0 + 40.0 * i as f32,
                y: 690.0,
                conf: 0.9,
                count: None,
            })
            .collect(),
        hidden_by_gui: 0,
        marked_screens: Vec::new(),
        gui_scale: None,
        view_digest: String::new(),
        grid_angle: None,
        reach_w: 0.0,
        set_aside: Vec::new(),
        position: None,
        debug_screen_shown: false,
    }
}

fn step(
    icons: &[&'static str],
    entities: &[(&'static str, bool)],
    action: Option<&'static str>,
) -> ScriptedStep {
    ScriptedStep {
        icons: icons.to_vec(),
        entities: entities.to_vec(),
        action,
        result: ActResult::Done,
    }
}

pub fn episodes() -> Vec<ScriptedEpisode> {
    let wood = ["wood_pickaxe_icon", "stick_icon", "crafting_table_icon"];
    let with_cobble = [
        "wood_pickaxe_icon",
        "stick_icon",
        "crafting_table_icon",
        "cobblestone_icon",
    ];
    let with_stone_pick = [
        "wood_pickaxe_icon",
        "stick_icon",
        "crafting_table_icon",
        "stone_pickaxe_icon",
    ];
    let mut with_iron = with_stone_pick.to_vec();
    with_iron.push("iron_ore_icon");
    let stone_pickaxe = ScriptedEpisode {
        task_id: "stone_pickaxe",
        steps: vec![
            step(&wood, &[], Some("dig_horizontal_mine_tunnels(1)")),
            step(
                &with_cobble,
                &[],
                Some("craft_stone_pickaxe(560, 300, 600, 340)"),
            ),
            step(&with_stone_pick, &[], None),
        ],
        success: true,
    };
    vec![
        ScriptedEpisode {
            task_id: "iron_ore",
            steps: vec![
                step(&wood, &[("iron_ore", true)], Some("mine_iron_ore(1, 2.0)")),
                step(&wood, &[("iron_ore", true)], Some("mine_iron_ore(1, 3.0)")),
                step(&wood, &[("iron_ore", true)], None),
            ],
            success: false,
        },
        stone_pickaxe.clone(),
        ScriptedEpisode {
            task_id: "iron_ore",
            steps: vec![
                step(
                    &with_stone_pick,
                    &[("iron_ore", true)],
                    Some("mine_iron_ore(4, 2.0)"),
                ),
                step(&with_iron, &[("iron_ore", true)], None),
            ],
            success: true,
        },
        stone_pickaxe,
    ]
}

/// A teacher's answer about the stone pickaxe (the how-to memory's canned entry for token
/// counts; the tests get theirs from a local HTTP teacher).
pub const STONE_PICKAXE_HOWTO: &str = r#"{"item": "Stone Pickaxe", "recipe": ["3 Cobblestone", "2 Stick"], "requirements": ["Crafting Table"], "procedure": ["Mine stone with a wooden pickaxe to get 3 cobblestone", "Place and open a crafting table", "Put 3 cobblestone across the top row and 2 sticks down the middle column", "Take the stone pickaxe from the result slot"], "related": ["Wooden Pickaxe", "Cobblestone"]}"#;
