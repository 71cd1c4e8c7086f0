//! `vistawise annotate --auto minetest`: the game labels its own frames. The labeller moves the
//! player to random places near trees, stone and ores (the probe's `view_near`), fills the
//! inventory at random, takes a screenshot of the window, and labels it from the game's own
//! state: node boxes from the probe's ray-cast `scan` projected with the camera's pose and field
//! of view, icon boxes from the known slot layout and the inventory's contents.
//!
//! What to label and where is data: the `[autolabel]` section of `config/games/minetest.toml`.
//!
//! The game is reached through [`LabelGame`]: Minetest's probe mod here, the Minecraft client's
//! test server in `crate::mcweb` (`annotate --auto minecraft-web`), so both games share the
//! projection, the merging and the record format.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use image::RgbImage;
use serde::{Deserialize, Serialize};

use super::camera::{Camera, Merge, PixelBox, Scan, scan_boxes};
use super::minetest::{ProbeError, Stack};
use crate::config::GuiScale;
use crate::dataset::writer::{encode_jpeg, label_box_from_xyxy};
use crate::dataset::yolo::LabelBox;
use crate::perception::mask_areas;
use crate::profile_file::ProfileFile;
use crate::skills::GuiLayout;
use crate::toml_lines::{self, DataFileError};

/// `[autolabel]` of a game profile.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoLabelConfig {
    /// The detector's classes in id order.
    pub classes: Vec<String>,
    /// World classes: class -> the game's node names (or `group:NAME`).
    pub world: BTreeMap<String, Vec<String>>,
    /// Classes whose vertically stacked nodes are one object (a trunk).
    #[serde(default)]
    pub merge_columns: Vec<String>,
    /// Classes whose touching nodes are one object (a stone face).
    #[serde(default)]
    pub merge_regions: Vec<String>,
    /// Icon classes: item name -> class.
    pub icons: BTreeMap<String, String>,
    /// Items put into the random inventories but never labelled, with their weights: what a
    /// player also carries (dirt, leaves, saplings, apples), so the detector learns that they
    /// are none of the classes. Without them the closed loop read dug dirt as planks.
    #[serde(default)]
    pub distractors: BTreeMap<String, u32>,
    /// Open pits dug around the labelling centre before the first frame, so that stone and ore
    /// walls are in sunlight (ore exposed at the surface is rare and caves are unlit).
    #[serde(default)]
    pub pits: Option<PitConfig>,
    /// Node names the labeller stands near, drawn in turn.
    pub views: Vec<Vec<String>>,
    /// Nodes farther than this (nodes) from the eye are not labelled.
    pub radius: f64,
    /// Per class, a radius other than `radius`: trunks are seen much farther than ore, and one
    /// drawn but left unlabelled teaches the detector to miss the small ones it must find.
    #[serde(default)]
    pub class_radius: BTreeMap<String, f64>,
    /// Ray-cast cells per face edge (visibility resolution).
    pub grid: u32,
    /// Boxes narrower or lower than this (window pixels) are dropped.
    pub min_box_px: f64,
    /// Where to stand: `view_radius` around the current place, `min_dist`..`max_dist` from the node.
    pub view_radius: f64,
    pub min_dist: f64,
    pub max_dist: f64,
    /// Icon box side per screen region prefix (`hud`, `inventory`), window pixels.
    pub icon_box_px: BTreeMap<String, f64>,
    /// The inventory panel `[x1, y1, x2, y2]`: it hides the world behind it.
    pub inventory_panel: [f64; 4],
    /// The HUD hotbar `[x1, y1, x2, y2]`, drawn over the world on every frame: what is behind
    /// it is not labelled (the first labels had trunk bases there that nobody can see).
    #[serde(default)]
    pub hud_panel: Option<[f64; 4]>,
    /// Share of frames taken with the inventory open.
    pub inventory_fraction: f64,
    /// HUD hard negatives: frames with an empty hotbar row over stone (see [`HudNegatives`]).
    #[serde(default)]
    pub hud_negatives: Option<HudNegatives>,
    /// Wait after moving the player before the screenshot (the client must render the view).
    pub settle_ms: u64,
    /// The camera's vertical field of view (the game's `fov` setting).
    pub fov_deg: f64,
    /// World boxes darker than this mean luma (0-255) on the screenshot are not labelled.
    #[serde(default = "default_min_box_luma")]
    pub min_box_luma: f64,
    /// Other detectors' classes for the same frames (`--label-set NAME`), e.g. Minecraft's with
    /// the Minecraft texture pack.
    #[serde(default)]
    pub label_sets: BTreeMap<String, LabelSet>,
    /// The inventory's shape: main slots in all, the first `hotbar_slots` of them the hotbar
    /// (drawn on the HUD), and the crafting grid's slots (minetest_game: 32, 8, 9; Minecraft:
    /// 36, 9, 4).
    #[serde(default = "default_main_slots")]
    pub main_slots: usize,
    #[serde(default = "default_hotbar_slots")]
    pub hotbar_slots: usize,
    #[serde(default = "default_craft_slots")]
    pub craft_slots: usize,
    /// Window areas `[x1, y1, x2, y2]` painted flat grey in frames taken with the inventory open:
    /// what the game draws there cannot be labelled (the Minecraft client's list of every item
    /// beside its inventory: hundreds of icons, the classes' among them), and left as it is it
    /// would teach the detector that those icons are nothing. The world behind them is not
    /// labelled either.
    #[serde(default)]
    pub open_screen_masks: Vec<[f64; 4]>,
}

fn default_main_slots() -> usize {
    32
}
fn default_hotbar_slots() -> usize {
    8
}
fn default_craft_slots() -> usize {
    9
}

/// `[autolabel.label_sets.NAME]`: what to label, in another detector's classes. It replaces
/// `classes`, `world`, `icons` and the merges; `distractors` too when it gives them (an item a
/// set labels cannot be a distractor). Where to stand and how to label stay the profile's.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelSet {
    pub classes: Vec<String>,
    pub world: BTreeMap<String, Vec<String>>,
    pub icons: BTreeMap<String, String>,
    #[serde(default)]
    pub merge_columns: Vec<String>,
    #[serde(default)]
    pub merge_regions: Vec<String>,
    #[serde(default)]
    pub distractors: Option<BTreeMap<String, u32>>,
    /// As `[autolabel] class_radius`, in this set's classes (the profile's is not carried over).
    #[serde(default)]
    pub class_radius: BTreeMap<String, f64>,
}

/// `[autolabel] pits`: `count` pits, each `2 * half_width + 1` nodes square and `depth` nodes
/// deep below the centre's feet, their centres `distance` nodes from the labelling centre.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PitConfig {
    pub count: u32,
    pub half_width: i64,
    pub depth: i64,
    pub distance: f64,
}

/// `[autolabel] hud_negatives`: a `fraction` of the frames is taken with the inventory closed,
/// the hotbar row empty, near one of `view`'s nodes and looking `pitch_down_deg` further down,
/// so that stone floors and pit walls show through the empty translucent HUD slots. Without
/// them the detector read an empty slot over a dark stone wall as a coal lump (4 false
/// "done" in 9 closed-loop coal runs; an older detector: 0.69 on data11 val frame 55).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HudNegatives {
    pub fraction: f64,
    pub pitch_down_deg: f64,
    pub view: Vec<String>,
}

impl HudNegatives {
    fn check(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.fraction) {
            return Err(format!(
                "hud_negatives.fraction = {}: must be within 0..1",
                self.fraction
            ));
        }
        if !(0.0..=60.0).contains(&self.pitch_down_deg) {
            return Err(format!(
                "hud_negatives.pitch_down_deg = {}: must be within 0..60 degrees",
                self.pitch_down_deg
            ));
        }
        if self.view.is_empty() {
            return Err("hud_negatives.view needs at least one node name".into());
        }
        Ok(())
    }

    /// Whether frame `index` of a run seeded `seed` is a HUD negative. From a stream of its
    /// own, so a profile without `hud_negatives` labels the same frames as before it existed.
    pub fn picks(&self, seed: u64, index: u64) -> bool {
        let mut rng = SplitMix::new(seed ^ index.wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ 0x0048_5544);
        rng.unit() < self.fraction
    }
}

/// The largest scan radius (nodes) a config may ask for: the viewing range the harness sets
/// (tests/minetest/gameenv.sh), and a search cube the game answers in well under a second.
const MAX_SCAN_RADIUS: f64 = 60.0;

/// Nodes above the centre's feet a pit also clears (trees, a hillside), so its walls get sun.
const PIT_CLEAR_ABOVE: i64 = 16;

impl PitConfig {
    /// The pits' boxes around `center` (inclusive node corners `[min, max]`), evenly spread on
    /// a circle: they depend on the centre only, so a resumed run digs the same (already dug)
    /// pits again, which changes nothing.
    pub fn boxes(&self, center: [f64; 3]) -> Vec<[[i64; 3]; 2]> {
        (0..self.count)
            .map(|k| {
                let angle = std::f64::consts::TAU * f64::from(k) / f64::from(self.count.max(1));
                let cx = (center[0] + self.distance * angle.cos()).round() as i64;
                let cz = (center[2] + self.distance * angle.sin()).round() as i64;
                let y = center[1].round() as i64;
                [
                    [cx - self.half_width, y - self.depth, cz - self.half_width],
                    [
                        cx + self.half_width,
                        y + PIT_CLEAR_ABOVE,
                        cz + self.half_width,
                    ],
                ]
            })
            .collect()
    }

    fn check(&self) -> Result<(), String> {
        if self.half_width < 1 || self.depth < 1 || self.half_width > 30 || self.depth > 40 {
            return Err("pits need 1 <= half_width <= 30 and 1 <= depth <= 40".into());
        }
        // The player stands at the centre when the pits are dug: it must not fall in.
        if self.distance < (self.half_width as f64 + 1.0) * std::f64::consts::SQRT_2 {
            return Err(
                "pits.distance must keep the pits off the centre (> (half_width + 1) * 1.42)"
                    .into(),
            );
        }
        Ok(())
    }
}

fn default_min_box_luma() -> f64 {
    24.0
}

/// Mean luma (BT.601) of the screenshot inside a box, sampled on a grid of at most 64x64 points.
pub fn mean_luma(image: &RgbImage, b: &PixelBox) -> f64 {
    let (w, h) = image.dimensions();
    let x1 = b.x1.max(0.0).floor() as u32;
    let y1 = b.y1.max(0.0).floor() as u32;
    let x2 = (b.x2.ceil().max(0.0) as u32).min(w);
    let y2 = (b.y2.ceil().max(0.0) as u32).min(h);
    if x2 <= x1 || y2 <= y1 {
        return 0.0;
    }
    let step_x = ((x2 - x1) / 64).max(1);
    let step_y = ((y2 - y1) / 64).max(1);
    let (mut sum, mut n) = (0.0, 0u32);
    for y in (y1..y2).step_by(step_y as usize) {
        for x in (x1..x2).step_by(step_x as usize) {
            let [r, g, bl] = image.get_pixel(x, y).0;
            sum += 0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(bl);
            n += 1;
        }
    }
    if n == 0 { 0.0 } else { sum / f64::from(n) }
}

impl AutoLabelConfig {
    /// Reads `[autolabel]` from the game profile file at `path` (see [`Self::from_profile`]).
    pub fn load(path: &Path, label_set: Option<&str>) -> Result<Self, DataFileError> {
        Self::from_profile(&ProfileFile::read(path)?, label_set)
    }

    /// `[autolabel]` of a profile file, in its own classes or (`label_set`) in those of one of
    /// its `[autolabel.label_sets]`. Every set is checked, chosen or not.
    pub fn from_profile(
        file: &ProfileFile,
        label_set: Option<&str>,
    ) -> Result<Self, DataFileError> {
        let config: AutoLabelConfig = file.section("autolabel")?.ok_or_else(|| {
            file.error(1, "no [autolabel] section: this game cannot label itself")
        })?;
        let line = file.header_line("[autolabel]");
        config
            .check()
            .map_err(|m| file.error(line, format!("[autolabel]: {m}")))?;
        for name in config.label_sets.keys() {
            let header = format!("[autolabel.label_sets.{name}]");
            let at = toml_lines::header_line(&file.text, &header).unwrap_or(line);
            config
                .with_label_set(name)
                .map_err(|m| file.error(at, format!("{header}: {m}")))?;
        }
        match label_set {
            None => Ok(config),
            Some(name) => config.with_label_set(name).map_err(|m| file.error(line, m)),
        }
    }

    /// This configuration labelling in the classes of its label set `name`.
    pub fn with_label_set(&self, name: &str) -> Result<Self, String> {
        let set = self.label_sets.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.label_sets.keys().map(String::as_str).collect();
            format!(
                "no label set \"{name}\" in [autolabel.label_sets] (known: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )
        })?;
        let mut out = self.clone();
        out.classes = set.classes.clone();
        out.world = set.world.clone();
        out.icons = set.icons.clone();
        out.merge_columns = set.merge_columns.clone();
        out.merge_regions = set.merge_regions.clone();
        out.class_radius = set.class_radius.clone();
        if let Some(d) = &set.distractors {
            out.distractors = d.clone();
        }
        out.label_sets = BTreeMap::new();
        out.check()?;
        Ok(out)
    }

    fn check(&self) -> Result<(), String> {
        self.check_classes()?;
        self.check_numbers()
    }

    /// Every class named is in `classes`; radii are given for world classes only.
    fn check_classes(&self) -> Result<(), String> {
        let known = |c: &String, what: &str| {
            if self.classes.contains(c) {
                Ok(())
            } else {
                Err(format!("{what} names class \"{c}\", not in `classes`"))
            }
        };
        for c in self
            .world
            .keys()
            .chain(&self.merge_columns)
            .chain(&self.merge_regions)
        {
            known(c, "world/merge_columns/merge_regions")?;
        }
        for c in self.icons.values() {
            known(c, "icons")?;
        }
        if let Some(c) = self
            .class_radius
            .keys()
            .find(|c| !self.world.contains_key(*c))
        {
            return Err(format!(
                "class_radius names \"{c}\", not a class of [autolabel.world]"
            ));
        }
        Ok(())
    }

    /// Radii, slot counts, fractions, distances and the views are in range; distractors are
    /// no labelled items.
    fn check_numbers(&self) -> Result<(), String> {
        // The probe looks for nodes in a cube of this half-side: keep it within what the game
        // has loaded and can search at once.
        let radii = std::iter::once(("radius".to_string(), self.radius)).chain(
            self.class_radius
                .iter()
                .map(|(c, r)| (format!("class_radius.{c}"), *r)),
        );
        for (key, r) in radii {
            if !(r > 0.0 && r <= MAX_SCAN_RADIUS) {
                return Err(format!(
                    "{key} = {r}: must be within 0..{MAX_SCAN_RADIUS} nodes"
                ));
            }
        }
        if let Some(d) = self
            .distractors
            .keys()
            .find(|d| self.icons.contains_key(*d))
        {
            return Err(format!(
                "distractors names \"{d}\", a labelled item in [autolabel.icons]"
            ));
        }
        if let Some((d, _)) = self.distractors.iter().find(|(_, w)| **w == 0) {
            return Err(format!(
                "distractors gives \"{d}\" weight 0 (leave it out instead)"
            ));
        }
        if let Some(p) = &self.pits {
            p.check()?;
        }
        if let Some(n) = &self.hud_negatives {
            n.check()?;
        }
        if !(1..=self.main_slots).contains(&self.hotbar_slots) || self.craft_slots == 0 {
            return Err("need 1 <= hotbar_slots <= main_slots and craft_slots >= 1".into());
        }
        if self.views.is_empty() || self.views.iter().any(Vec::is_empty) {
            return Err("`views` needs at least one non-empty list of node names".into());
        }
        if !(0.0..=1.0).contains(&self.inventory_fraction) {
            return Err("inventory_fraction must be within 0..1".into());
        }
        if !(self.min_dist > 0.0 && self.max_dist > self.min_dist) {
            return Err("need 0 < min_dist < max_dist".into());
        }
        for region in ["hud", "inventory"] {
            if !self.icon_box_px.contains_key(region) {
                return Err(format!("icon_box_px needs a size for \"{region}\""));
            }
        }
        Ok(())
    }

    pub fn class_id(&self, class: &str) -> Option<usize> {
        self.classes.iter().position(|c| c == class)
    }
}

/// A small seeded generator (splitmix64): the labeller's choices must replay from a seed, and
/// this is all it needs of randomness.
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The inventory set up for one frame: lists of item strings ("" = empty slot).
#[derive(Debug, Clone, PartialEq)]
pub struct InventoryPlan {
    pub main: Vec<String>,
    pub craft: Vec<String>,
    pub wield: usize,
}

/// A random inventory: a few of the labelled items in random main slots (the hotbar's show in
/// the HUD), and with the inventory open some in the craft grid too. A labelled stack is an
/// icon class drawn uniformly, then one of that class's items (every trunk kind is a tree
/// icon: five trunk items must not make trunks five times as common). A third of the stacks
/// are distractors when the profile lists any.
pub fn random_inventory(config: &AutoLabelConfig, rng: &mut SplitMix, open: bool) -> InventoryPlan {
    let mut by_class: BTreeMap<&str, Vec<&String>> = BTreeMap::new();
    for (item, class) in &config.icons {
        by_class.entry(class.as_str()).or_default().push(item);
    }
    let labelled: Vec<Vec<&String>> = by_class.into_values().collect();
    let total_weight: u64 = config.distractors.values().map(|w| u64::from(*w)).sum();
    let pick = |rng: &mut SplitMix| -> String {
        if total_weight > 0 && rng.below(3) == 0 {
            // The item whose share of the summed weights holds r.
            let mut r = rng.next_u64() % total_weight;
            config
                .distractors
                .iter()
                .find(|(_, w)| {
                    let w = u64::from(**w);
                    let hit = r < w;
                    r = r.saturating_sub(w);
                    hit
                })
                .map(|(item, _)| item.clone())
                .unwrap_or_default()
        } else {
            let items = &labelled[rng.below(labelled.len())];
            items[rng.below(items.len())].clone()
        }
    };
    let mut main = vec![String::new(); config.main_slots];
    let stacks = rng.below(9);
    for _ in 0..stacks {
        // Half of the stacks go to the hotbar row, which every frame shows.
        let slot = if rng.below(2) == 0 {
            rng.below(config.hotbar_slots)
        } else {
            rng.below(config.main_slots)
        };
        let item = pick(rng);
        main[slot] = format!("{item} {}", 1 + rng.below(20));
    }
    let mut craft = vec![String::new(); config.craft_slots];
    if open {
        for slot in craft.iter_mut() {
            if rng.below(4) == 0 {
                *slot = format!("{} 1", pick(rng));
            }
        }
    }
    InventoryPlan {
        main,
        craft,
        wield: 1 + rng.below(config.hotbar_slots),
    }
}

fn icon_box(class: &str, center: (f32, f32), side: f64) -> PixelBox {
    let (x, y) = (f64::from(center.0), f64::from(center.1));
    PixelBox {
        class: class.to_string(),
        x1: x - side / 2.0,
        y1: y - side / 2.0,
        x2: x + side / 2.0,
        y2: y + side / 2.0,
    }
}

/// Icon boxes from the inventory's contents and the slot layout: the HUD hotbar always, the
/// inventory screen's lists when it is open (`preview`: the item the craft grid makes).
pub fn icon_boxes(
    config: &AutoLabelConfig,
    layout: &GuiLayout,
    main: &[Stack],
    craft: &[Stack],
    open: bool,
    preview: Option<&str>,
) -> Vec<PixelBox> {
    let mut out = Vec::new();
    let mut push = |item: &str, location: String, region: &str| {
        let (Some(class), Some(side), Ok(c)) = (
            config.icons.get(item),
            config.icon_box_px.get(region),
            layout.slot_center(&location),
        ) else {
            return;
        };
        out.push(icon_box(class, c, *side));
    };
    let hotbar = config.hotbar_slots;
    for s in main {
        if (1..=hotbar).contains(&s.slot) {
            push(&s.name, format!("hud.hotbar.{}", s.slot - 1), "hud");
        }
    }
    if open {
        for s in main {
            let location = if (1..=hotbar).contains(&s.slot) {
                format!("inventory.hotbar.{}", s.slot - 1)
            } else if (hotbar + 1..=config.main_slots).contains(&s.slot) {
                format!("inventory.main.{}", s.slot - hotbar - 1)
            } else {
                continue;
            };
            push(&s.name, location, "inventory");
        }
        for s in craft {
            push(
                &s.name,
                format!("inventory.craft.{}", s.slot - 1),
                "inventory",
            );
        }
        if let Some(item) = preview {
            push(item, "inventory.result".into(), "inventory");
        }
    }
    out
}

/// The frame's boxes as YOLO labels (class ids from the config's class list; boxes of other
/// classes and boxes with nothing left inside the window are dropped).
pub fn label_boxes(config: &AutoLabelConfig, boxes: &[PixelBox], w: u32, h: u32) -> Vec<LabelBox> {
    boxes
        .iter()
        .filter_map(|b| {
            let id = config.class_id(&b.class)?;
            let l = label_box_from_xyxy(
                id,
                [b.x1 as f32, b.y1 as f32, b.x2 as f32, b.y2 as f32],
                w,
                h,
            );
            (l.w > 0.0 && l.h > 0.0).then_some(l)
        })
        .collect()
}

/// The JPEG quality frames are saved at.
pub const JPEG_QUALITY: u8 = 90;

/// What the game said about one frame: enough to label it again without the game, with other
/// label rules (`annotate --auto GAME --relabel`). Kept as `records/<frame>.json` beside the
/// frame's image and label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameRecord {
    /// The probe's `scan` answer: the eye, the view and every visible face cell of the scanned
    /// nodes, with their node names.
    pub scan: serde_json::Value,
    /// The inventory when the frame was taken (`main`, `craft`: slots from 1).
    pub main: Vec<Stack>,
    pub craft: Vec<Stack>,
    /// The inventory screen was open.
    pub inventory_open: bool,
    /// What the open craft grid made (the result slot's item).
    pub preview: Option<String>,
    /// Taken as a HUD hard negative (`[autolabel] hud_negatives`).
    pub hud_negative: bool,
    /// The view's target node.
    pub target: String,
}

/// One labelled frame.
pub struct LabeledFrame {
    /// The frame as saved (JPEG at [`JPEG_QUALITY`]).
    pub jpeg: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub boxes: Vec<PixelBox>,
    pub record: FrameRecord,
}

/// The frame's bytes as saved, and its pixels as read back from them: labels judge the pixels
/// a later relabelling reads (the dark-box rule looks at them).
pub fn jpeg_round_trip(image: &RgbImage) -> Result<(Vec<u8>, RgbImage), AutoLabelError> {
    let bytes = encode_jpeg(image, JPEG_QUALITY)
        .map_err(|e| AutoLabelError::Capture(format!("cannot encode the frame: {e}")))?;
    let seen = image::load_from_memory_with_format(&bytes, image::ImageFormat::Jpeg)
        .map_err(|e| AutoLabelError::Capture(format!("cannot decode the frame: {e}")))?
        .to_rgb8();
    Ok((bytes, seen))
}

/// A frame's boxes from its record and its saved pixels, under `config`'s label rules: the
/// scanned nodes projected with the camera (merged, small and dark boxes dropped), then the
/// icons of the inventory's slots.
pub fn record_boxes(
    config: &AutoLabelConfig,
    layout: &GuiLayout,
    record: &FrameRecord,
    image: &RgbImage,
) -> Result<Vec<PixelBox>, AutoLabelError> {
    let mut scan: Scan = serde_json::from_value(record.scan.clone())
        .map_err(|e| AutoLabelError::Scan(e.to_string()))?;
    // Relabelling under narrower world rules: a node counts only where its class still names
    // its node (a `group:` entry cannot be resolved without the game and keeps what was found).
    scan.nodes.retain(|n| {
        config
            .world
            .get(&n.class)
            .is_some_and(|names| names.iter().any(|p| name_matches(p, &n.name)))
    });
    let (w, h) = image.dimensions();
    let camera = Camera::of_scan(&scan, config.fov_deg, w, h);
    let merge = Merge {
        columns: &config.merge_columns,
        regions: &config.merge_regions,
        hidden: record.inventory_open.then_some(config.inventory_panel),
        edge: config.hud_panel,
        covered: if record.inventory_open {
            &config.open_screen_masks
        } else {
            &[]
        },
    };
    let mut boxes = scan_boxes(&camera, &scan, merge, config.min_box_px);
    // A node the rays reach can still be unlit (a cave): nothing to see, nothing to label.
    boxes.retain(|b| mean_luma(image, b) >= config.min_box_luma);
    boxes.extend(icon_boxes(
        config,
        layout,
        &record.main,
        &record.craft,
        record.inventory_open,
        record.preview.as_deref().filter(|s| !s.is_empty()),
    ));
    Ok(boxes)
}

/// Whether a node name is one a `[autolabel.world]` entry names: `group:NAME` (Minetest, resolved
/// by the game only, so every name the scan gave under it), `*SUFFIX` (any name ending so, e.g.
/// Minecraft's `*_log`), or the name itself (a `minecraft:` prefix ignored).
pub fn name_matches(pattern: &str, name: &str) -> bool {
    if pattern.starts_with("group:") {
        return true;
    }
    if let Some(suffix) = pattern.strip_prefix('*') {
        return name.ends_with(suffix);
    }
    pattern.strip_prefix("minecraft:").unwrap_or(pattern) == name
}

#[derive(Debug, thiserror::Error)]
pub enum AutoLabelError {
    #[error(transparent)]
    Probe(#[from] ProbeError),
    #[error(transparent)]
    Mcweb(#[from] crate::testworld::mcweb::McwebError),
    #[error("no view this time: {0}")]
    NoView(String),
    #[error("the game's scan answer is not in the expected form: {0}")]
    Scan(String),
    #[error("capture: {0}")]
    Capture(String),
    #[error("input: {0}")]
    Input(String),
    #[error("the player moved while the frame was taken ({0:.2} nodes): frame dropped")]
    Moved(f64),
}

/// What the labeller needs from the desktop: a screenshot of the game window and key taps.
pub trait GameWindow {
    fn capture(&mut self) -> Result<RgbImage, AutoLabelError>;
    /// Taps a game action's key (`inventory`, `close_screen`).
    fn tap(&mut self, action: &str) -> Result<(), AutoLabelError>;
}

/// Where the labeller asks the game to stand the player.
#[derive(Debug, Clone)]
pub struct ViewRequest<'a> {
    /// Node or block names (patterns as in [`name_matches`]) to look at.
    pub names: &'a [String],
    pub seed: u64,
    /// The middle of the area searched, `radius` around it.
    pub center: [f64; 3],
    pub radius: f64,
    pub min_dist: f64,
    pub max_dist: f64,
    /// Degrees further down than the node (HUD hard negatives).
    pub pitch_offset: f64,
}

/// The player's feet, eye and look, as the game has them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    pub feet: [f64; 3],
    pub eye: [f64; 3],
    pub yaw_deg: f64,
    pub pitch_deg: f64,
}

impl Pose {
    /// How far apart two poses are: nodes of eye motion, or a tenth of the degrees turned.
    pub fn distance(&self, other: &Pose) -> f64 {
        self.eye
            .iter()
            .zip(other.eye)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
            .max((self.yaw_deg - other.yaw_deg).abs() / 10.0)
            .max((self.pitch_deg - other.pitch_deg).abs() / 10.0)
    }
}

/// The player as the game has it at one moment: pose and inventory (main slots from 1, the
/// hotbar first; the crafting grid's slots).
#[derive(Debug, Clone)]
pub struct GameState {
    pub pose: Pose,
    pub main: Vec<Stack>,
    pub craft: Vec<Stack>,
}

/// What the labeller needs of a running game's ground truth and commands.
pub trait LabelGame {
    /// The inventory exactly as planned: `plan.main` from slot 1 (the first `hotbar_slots` the
    /// hotbar), `plan.craft` in the crafting grid; everything else empty.
    fn set_inventory(&mut self, plan: &InventoryPlan) -> Result<(), AutoLabelError>;
    /// Stands the player near a node of `view.names`, looking at it (with some jitter); answers
    /// what it looks at. No such place this time: [`AutoLabelError::NoView`].
    fn view_near(&mut self, view: &ViewRequest) -> Result<serde_json::Value, AutoLabelError>;
    /// The pose and the inventory now (after at least one more game step), read together.
    fn state(&mut self) -> Result<GameState, AutoLabelError>;
    /// The item the crafting grid makes now (its result slot), by name.
    fn craft_preview(&mut self) -> Result<Option<String>, AutoLabelError>;
    /// The visible face cells of the nodes of `config.world`'s classes, as a [`Scan`].
    fn scan(&mut self, config: &AutoLabelConfig) -> Result<serde_json::Value, AutoLabelError>;
    /// Clears the box `lo..=hi` (an open pit, `[autolabel] pits`); answers the nodes cleared.
    fn excavate(&mut self, lo: [i64; 3], hi: [i64; 3]) -> Result<u64, AutoLabelError>;
    /// Waits until the game's client has caught up with what it was sent and the keys it was
    /// given (a client far behind draws an older scene). Nothing to wait for by default.
    fn catch_up(&mut self) -> Result<(), AutoLabelError> {
        Ok(())
    }
}

/// What one frame is to show: the inventory (open or not), and where to look.
struct FramePlan<'c> {
    open: bool,
    hud_negative: bool,
    inv: InventoryPlan,
    view: ViewRequest<'c>,
}

/// Draws frame `index`'s plan from `seed` alone: whether the inventory is open, what it holds,
/// and the view (names to look at, where and how far).
fn plan_frame<'c>(
    config: &'c AutoLabelConfig,
    center: [f64; 3],
    seed: u64,
    index: u64,
) -> FramePlan<'c> {
    let mut rng = SplitMix::new(seed ^ index.wrapping_mul(0xA24B_AED4_963E_E407));
    let hud_negative = config
        .hud_negatives
        .as_ref()
        .filter(|n| n.picks(seed, index));
    let open = rng.unit() < config.inventory_fraction && hud_negative.is_none();
    // The inventory draws from a stream of its own, so where the labeller stands does not
    // change with what the inventories hold (e.g. when distractor items are added).
    let mut inventory_rng = SplitMix::new(rng.next_u64());
    let mut inv = random_inventory(config, &mut inventory_rng, open);
    let mut names = &config.views[rng.below(config.views.len())];
    let mut pitch_offset = 0.0;
    if let Some(n) = hud_negative {
        inv.main
            .iter_mut()
            .take(config.hotbar_slots)
            .for_each(String::clear);
        names = &n.view;
        pitch_offset = n.pitch_down_deg;
    }
    let view_seed = rng.next_u64() >> 33;
    let view_center = [
        center[0] + (rng.unit() - 0.5) * config.view_radius,
        center[1],
        center[2] + (rng.unit() - 0.5) * config.view_radius,
    ];
    FramePlan {
        open,
        hud_negative: hud_negative.is_some(),
        inv,
        view: ViewRequest {
            names,
            seed: view_seed,
            center: view_center,
            radius: config.view_radius,
            min_dist: config.min_dist,
            max_dist: config.max_dist,
            pitch_offset,
        },
    }
}

/// Takes one labelled frame around `center` (a fixed place of the world, so that a frame
/// depends on the world, `seed` and `index` only, not on the frames before it).
pub fn label_frame(
    config: &AutoLabelConfig,
    layout: &GuiLayout,
    game: &mut dyn LabelGame,
    window: &mut dyn GameWindow,
    center: [f64; 3],
    seed: u64,
    index: u64,
) -> Result<LabeledFrame, AutoLabelError> {
    let plan = plan_frame(config, center, seed, index);
    let open = plan.open;
    let target = game.view_near(&plan.view)?;
    // After the move: a client busy drawing the new place can show an inventory sent before it
    // late.
    game.set_inventory(&plan.inv)?;
    // The selected slot is drawn highlighted: pick it the way a player does, with its key.
    window.tap(&format!("hotbar_{}", plan.inv.wield))?;
    if open {
        window.tap("inventory")?;
    }
    game.catch_up()?;
    std::thread::sleep(Duration::from_millis(config.settle_ms));
    let before = game.state()?.pose;
    let mut image = window.capture()?;
    let after = game.state()?;
    if open {
        mask_areas(&mut image, &config.open_screen_masks);
    }
    let moved = before.distance(&after.pose);
    let preview = if open { game.craft_preview()? } else { None };
    if open {
        window.tap("close_screen")?;
    }
    if moved > 0.02 {
        return Err(AutoLabelError::Moved(moved));
    }
    let scan = game.scan(config)?;
    let record = FrameRecord {
        scan,
        main: after.main,
        craft: after.craft,
        inventory_open: open,
        preview,
        hud_negative: plan.hud_negative,
        target: if target.is_null() {
            String::new()
        } else {
            target.to_string()
        },
    };
    let (jpeg, seen) = jpeg_round_trip(&image)?;
    let boxes = record_boxes(config, layout, &record, &seen)?;
    Ok(LabeledFrame {
        jpeg,
        width: seen.width(),
        height: seen.height(),
        boxes,
        record,
    })
}

/// The GUI layout the labeller uses (Minetest's formspecs ignore the GUI scale).
pub fn layout_for(gui: &crate::skills::GuiGeometry, w: u32, h: u32) -> GuiLayout<'_> {
    gui.layout(w, h, GuiScale::Auto)
}

#[cfg(test)]
mod tests;
