//! Detections in frame pixels, split the way VistaWise uses them: environment entities carry a
//! box and an in-reach flag, inventory icons carry a position.

use super::grid_angle::GridAngle;
use serde::{Deserialize, Serialize};

/// One detected object in original frame pixels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detection {
    pub class_id: usize,
    pub class: String,
    pub conf: f32,
    /// `[x1, y1, x2, y2]`.
    pub xyxy: [f32; 4],
}

impl Detection {
    pub fn center(&self) -> (f32, f32) {
        (
            (self.xyxy[0] + self.xyxy[2]) / 2.0,
            (self.xyxy[1] + self.xyxy[3]) / 2.0,
        )
    }
    pub fn size(&self) -> (f32, f32) {
        (self.xyxy[2] - self.xyxy[0], self.xyxy[3] - self.xyxy[1])
    }
    pub fn is_icon_class(&self) -> bool {
        self.class.ends_with(ICON_SUFFIX)
    }
}

pub const ICON_SUFFIX: &str = "_icon";

/// A world object: centre, size, and whether it is within the player's interaction range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvironmentEntity {
    pub class: String,
    pub x: f32,
    pub y: f32,
    pub w: f32,
    pub h: f32,
    pub conf: f32,
    pub in_reach: bool,
}

/// An item in the hotbar or an open GUI: where to click.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InventoryIcon {
    pub class: String,
    pub x: f32,
    pub y: f32,
    pub conf: f32,
    /// How many: the number drawn in the slot, where the game profile says how counts are
    /// drawn (`[counts]`) and it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
}

/// A window-relative rectangle in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rect {
    pub x: f32,
    pub y: f32,
    pub w: f32,
    pub h: f32,
}

impl Rect {
    pub fn contains(&self, px: f32, py: f32) -> bool {
        px >= self.x && py >= self.y && px < self.x + self.w && py < self.y + self.h
    }
}

/// What the split needs besides the detections.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitContext {
    pub frame_w: u32,
    pub frame_h: u32,
    /// In-reach thresholds at 1080p (scaled by frame height / 1080).
    pub k_w: f32,
    pub k_h: f32,
    /// The open inventory/crafting/furnace panel, if a GUI screen is open.
    pub gui_panel: Option<Rect>,
}

/// The perception result for one frame.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Perception {
    pub frame_w: u32,
    pub frame_h: u32,
    pub entities: Vec<EnvironmentEntity>,
    pub icons: Vec<InventoryIcon>,
    /// World-class detections inside an open GUI panel that have no icon class: the panel hides
    /// the world there, so they cannot be world objects, and they are left out.
    pub hidden_by_gui: usize,
    /// Screens whose marker (`[gui.screens.<name>] marker`) the frame shows: of screens whose
    /// slots show as many items, these are the one in view.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marked_screens: Vec<String>,
    /// The GUI scale the frame is drawn at and where it came from; absent in sessions recorded
    /// before it was read (the profile's rule then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gui_scale: Option<GuiScaleReading>,
    /// The frame's view digest (`view_digest`): whether a walk moved the player. Empty in
    /// sessions recorded before it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub view_digest: String,
    /// Which way the block grid runs on screen (`grid_angle`): read on every frame, meant for
    /// one that looks straight down. Absent in sessions recorded before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid_angle: Option<GridAngle>,
    /// The in-reach width threshold in this frame's pixels (`detector.k_w` scaled to its
    /// height): how far a thing of one block is can be told from its box (0: unknown).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reach_w: f32,
    /// Icons left out because a more confident icon sat on the same slot (a slot holds one
    /// item): kept so that a slot read as two items is known to be in doubt (the success check
    /// takes no sighting of the target from such a slot).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set_aside: Vec<InventoryIcon>,
    /// The player's position `[x, y, z]` as the game's debug screen prints it, on frames that
    /// show it (`[position]` of the game profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<[f32; 3]>,
    /// The position's line shows text, read or not: the debug screen is shown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub debug_screen_shown: bool,
}

fn is_zero(v: &f32) -> bool {
    *v == 0.0
}

/// The GUI scale a frame is drawn at (window pixels per GUI pixel) and how it was found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GuiScaleReading {
    pub scale: f32,
    pub source: ScaleSource,
}

/// Where a [`GuiScaleReading`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScaleSource {
    /// Measured on this frame (the HUD hotbar's outline).
    Measured,
    /// Measured on an earlier frame of the same size (this one hides what it is measured from:
    /// a screen over the HUD, a dark cave).
    Kept,
    /// The game's rule for the window size (`[gui.scale] rule`): nothing measured at this size.
    Rule,
}

impl std::fmt::Display for ScaleSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ScaleSource::Measured => "measured",
            ScaleSource::Kept => "measured on an earlier frame",
            ScaleSource::Rule => "the profile's rule",
        })
    }
}

/// Splits detections into environment entities and inventory icons: by class (`_icon` suffix)
/// and, while a GUI screen is open, by region: inside the panel everything is an item, so a
/// world class (`iron_ore`) becomes its icon class (`iron_ore_icon`) when the model has one.
pub fn split(detections: &[Detection], class_names: &[String], ctx: &SplitContext) -> Perception {
    let scale = ctx.frame_h as f32 / 1080.0;
    let (k_w, k_h) = (ctx.k_w * scale, ctx.k_h * scale);
    let mut out = Perception {
        frame_w: ctx.frame_w,
        frame_h: ctx.frame_h,
        reach_w: k_w,
        ..Perception::default()
    };
    for d in detections {
        let (x, y) = d.center();
        let (w, h) = d.size();
        let in_panel = ctx.gui_panel.is_some_and(|p| p.contains(x, y));
        let icon_class = if d.is_icon_class() {
            Some(d.class.clone())
        } else if in_panel {
            let candidate = format!("{}{ICON_SUFFIX}", d.class);
            if class_names.contains(&candidate) {
                Some(candidate)
            } else {
                out.hidden_by_gui += 1;
                continue;
            }
        } else {
            None
        };
        match icon_class {
            Some(class) => out.icons.push(InventoryIcon {
                class,
                x,
                y,
                conf: d.conf,
                count: None,
            }),
            None => out.entities.push(EnvironmentEntity {
                class: d.class.clone(),
                x,
                y,
                w,
                h,
                conf: d.conf,
                in_reach: w > k_w || h > k_h,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn det(class: &str, xyxy: [f32; 4]) -> Detection {
        Detection {
            class_id: 0,
            class: class.into(),
            conf: 0.9,
            xyxy,
        }
    }

    fn names() -> Vec<String> {
        ["trunk", "log_icon", "iron_ore", "iron_ore_icon", "lava"]
            .map(String::from)
            .to_vec()
    }

    fn ctx(frame_h: u32, gui_panel: Option<Rect>) -> SplitContext {
        SplitContext {
            frame_w: frame_h * 16 / 9,
            frame_h,
            k_w: 110.0,
            k_h: 275.0,
            gui_panel,
        }
    }

    #[test]
    fn icons_and_entities_split_by_suffix() {
        let p = split(
            &[
                det("trunk", [100.0, 100.0, 150.0, 300.0]),
                det("log_icon", [10.0, 10.0, 30.0, 30.0]),
            ],
            &names(),
            &ctx(1080, None),
        );
        assert_eq!(p.entities.len(), 1);
        assert_eq!(p.entities[0].x, 125.0);
        assert_eq!(p.entities[0].h, 200.0);
        assert_eq!(
            p.icons,
            vec![InventoryIcon {
                class: "log_icon".into(),
                x: 20.0,
                y: 20.0,
                conf: 0.9,
                count: None,
            }]
        );
    }

    #[test]
    fn in_reach_thresholds_scale_with_frame_height() {
        // At 1080p k_w = 110: a 120 px wide box is in reach, a 100 px one is not.
        let p = split(
            &[
                det("trunk", [0.0, 0.0, 120.0, 50.0]),
                det("trunk", [0.0, 0.0, 100.0, 50.0]),
            ],
            &names(),
            &ctx(1080, None),
        );
        assert!(p.entities[0].in_reach);
        assert!(!p.entities[1].in_reach);
        // At 720p k_w = 73.3 and k_h = 183.3: 80 px wide is in reach, and so is 190 px tall.
        let p = split(
            &[
                det("trunk", [0.0, 0.0, 80.0, 50.0]),
                det("trunk", [0.0, 0.0, 10.0, 190.0]),
                det("trunk", [0.0, 0.0, 70.0, 180.0]),
            ],
            &names(),
            &ctx(720, None),
        );
        assert_eq!(
            p.entities.iter().map(|e| e.in_reach).collect::<Vec<_>>(),
            vec![true, true, false]
        );
    }

    #[test]
    fn open_gui_turns_world_classes_inside_the_panel_into_icons() {
        let panel = Rect {
            x: 500.0,
            y: 200.0,
            w: 400.0,
            h: 400.0,
        };
        let p = split(
            &[
                det("iron_ore", [600.0, 300.0, 640.0, 340.0]), // inside: the item
                det("lava", [700.0, 300.0, 740.0, 340.0]),     // inside, no lava icon class
                det("trunk", [0.0, 0.0, 100.0, 300.0]),        // outside: world
            ],
            &names(),
            &ctx(1080, Some(panel)),
        );
        assert_eq!(p.icons.len(), 1);
        assert_eq!(p.icons[0].class, "iron_ore_icon");
        assert_eq!(p.entities.len(), 1);
        assert_eq!(p.entities[0].class, "trunk");
        assert_eq!(p.hidden_by_gui, 1);
    }
}
