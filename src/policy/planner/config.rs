//! The planner's rules (`[planner]` of a game profile): how each item is obtained, which
//! screens crafts happen on, how the player searches, and their checks against the graph and
//! the skill library at load.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::{JUMP, TURN_BY, WALK, item_token};
use crate::knowledge::KnowledgeGraph;
use crate::profile_file::ProfileFile;
use crate::skills::GuiGeometry;
use crate::skills::SkillLibrary;
use crate::toml_lines::DataFileError;

/// A skill-call argument in the planner's data: a number or a symbolic token.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ArgToken {
    Number(f64),
    Token(String),
}

/// `["skill", arg, ...]`.
pub type CallTemplate = Vec<ArgToken>;

/// The skill a call template calls (its first token).
pub(super) fn skill_of(call: &CallTemplate) -> Option<&str> {
    match call.first() {
        Some(ArgToken::Token(t)) => Some(t),
        _ => None,
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatherRule {
    #[serde(default)]
    pub approach: Option<String>,
    /// Where on the approached object's box to aim, as a fraction of its height from the top
    /// (0.5: the centre). A tree trunk is best hit low, below the leaves.
    #[serde(default = "half")]
    pub aim_y: f32,
    pub skill: String,
    #[serde(default)]
    pub args: Vec<ArgToken>,
    /// How long one walk toward this thing lasts, in seconds, when it is not the planner's
    /// `approach_seconds` (ore in a wall is mined from farther than a trunk is walked to).
    #[serde(default)]
    pub approach_seconds: Option<f64>,
    /// The thing lies under the ground (ore in stone): when none is in view it is dug for, not
    /// looked for on the surface. Left out: looked for (`explore`, `[planner.scout]`).
    #[serde(default)]
    pub dig: Option<DigSearch>,
    /// A gather with nothing to approach (no `approach`) that brought nothing: these calls take
    /// the player elsewhere before the next, in place of the planner's `detour`. A walk round
    /// does not leave the bottom of a shaft dug straight down (a wooden pickaxe's shaft stopped
    /// on an iron ore it cannot break, and the detour's walks went nowhere for 40 minutes); a
    /// step of a staircase to one side does. Left out: the `detour`.
    #[serde(default)]
    pub elsewhere: Vec<CallTemplate>,
}

/// Digging for what lies under the ground: a staircase down (walkable back up) to the depth the
/// thing lies at, then a level tunnel; whatever comes into view on the way is approached and
/// mined as usual, and the digging goes on from wherever that left the player.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DigSearch {
    /// Steps of the staircase down before the search goes on level, counted over the whole
    /// session (the player stays down: a later item's search starts at the depth an earlier
    /// one reached). The game's generator says the depth (docs/minecraft-web.md).
    pub down: u32,
    /// One step of the staircase (`["dig_stairs_down", "hotbar:Stone Pickaxe", 1.3]`).
    pub stairs: CallTemplate,
    /// One block of the level tunnel (`["dig_tunnel_forward", ...]`).
    pub tunnel: CallTemplate,
    /// After this many calls of digging, the view is turned round (`turn_by` 180) for a step:
    /// from the wall a dig leaves the player against, the walls of the way dug are out of view
    /// (the client's run from nothing tunnelled 28 blocks past them looking at stone), and
    /// looking back along them shows their ores. The next dig turns round again first. Left
    /// out: never.
    #[serde(default)]
    pub look_back_every: Option<u32>,
    /// Square the heading to the block grid before digging on from a heading anything but a
    /// dig left: a staircase dug off the grid cuts the corner of every step and goes down half
    /// as fast (31 degrees off: 28 blocks down in 66 steps). Left out: the heading is dug on as
    /// it is.
    #[serde(default)]
    pub square: Option<SquareHeading>,
    /// Read the depth off the game's debug screen on the way down, and go level once as deep as
    /// `stop_y` (the staircase's steps alone do not say how deep it is: the surface it began
    /// at is anywhere from y 33 to 110, and a staircase that went on to the bedrock tunnelled
    /// along it, where a bedrock block at the feet stops the tunnel). Left out: the staircase
    /// goes `down` steps.
    #[serde(default)]
    pub depth: Option<DigDepth>,
}

/// How deep a staircase goes by the debug screen (`[position]` of the game profile reads it).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DigDepth {
    /// The call that shows the debug screen, and hides it again (`["toggle_debug_screen"]`).
    pub show: CallTemplate,
    /// Steps of the staircase between two reads (the first read comes before the first step).
    pub every: u32,
    /// Go level once the feet are this deep or deeper (y, blocks).
    pub stop_y: f32,
}

/// How the heading is squared to the block grid: a call that looks straight down, then a turn
/// by the angle the grid shows in that frame (`perception::grid_angle`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SquareHeading {
    /// The call that looks straight down (`["look_straight_down"]`).
    pub look: CallTemplate,
    /// The turn by degrees, right positive (`"turn_by"`): called with the angle read.
    #[serde(default = "turn_by")]
    pub turn: String,
    /// How much the frame's edges must agree for their angle to be turned by (0-1); below it
    /// the heading is dug on as it is.
    #[serde(default = "grid_strength")]
    pub min_strength: f32,
    /// Angles smaller than this, in degrees, are not turned by.
    #[serde(default = "grid_tolerance")]
    pub tolerance: f32,
    /// A look that changed the middle of the view digest less than this (mean luma 0-255 over
    /// the middle half of the view both ways) did not take (a turn lost while the client
    /// caught up): it is tried once more before the frame is read, else a wall's edges seen in
    /// perspective would be turned by.
    #[serde(default = "look_change")]
    pub look_change: f32,
}

fn look_change() -> f32 {
    6.0
}

fn turn_by() -> String {
    "turn_by".into()
}

fn grid_strength() -> f32 {
    0.2
}

fn grid_tolerance() -> f32 {
    2.0
}

fn default_approach_seconds() -> f64 {
    1.0
}

fn default_approach_max_seconds() -> f64 {
    3.0
}

fn half() -> f32 {
    0.5
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CraftRule {
    pub screen: String,
    pub skill: String,
    #[serde(default)]
    pub args: Vec<ArgToken>,
    /// How many of an ingredient one craft uses (`{ "Cobblestone" = 3 }`). Where the stack
    /// counts can be read (`[counts]`), fewer is missing: with 2 cobblestones the stone
    /// pickaxe's recipe made a hoe. An unread count counts as enough.
    #[serde(default)]
    pub needs: BTreeMap<String, u32>,
    /// How many items one craft makes (Minecraft: a log gives 4 planks, 2 planks give 4
    /// sticks). With `needs`, it tells how much a target needs from the world in all, so that
    /// one trip to a tree brings every log the chain will use.
    #[serde(default = "one")]
    pub yields: u32,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScreenRule {
    #[serde(default)]
    pub station: Option<String>,
    pub open: Vec<CallTemplate>,
    pub close: Vec<CallTemplate>,
    /// The screen's regions ingredients are taken from (`["hotbar", "main"]`); empty: all.
    /// Leaving out the craft grid and the result keeps a leftover there from being used.
    #[serde(default)]
    pub take_from: Vec<String>,
    /// The close calls take the placed station back (the web client's `take_back_block`): when
    /// it does not show in the bag after them, a `pickup_walk` toward where it stood follows,
    /// once (seed 198: the table, placed on a tree stump, was broken but never came back, and
    /// the stone pickaxe needed a new one from the bottom of a shaft).
    #[serde(default)]
    pub taken_back: bool,
    /// Calls that take the placed station back when its screen did not open (the web client:
    /// break the block in front, as `close` does without closing a screen). Without them the
    /// planner made another: a run from nothing placed its table, the screen never came (the
    /// page refused the pointer lock), and its planks went into a second and a third table.
    /// Left out: the station is placed again or made anew.
    #[serde(default)]
    pub retrieve: Vec<CallTemplate>,
    /// The screen's marker (`[gui.screens.<name>] marker`) tells whether it is open: shown, it
    /// is open with an empty bag too (Minetest's inventory opened on an empty bag was taken for
    /// no screen, opened again, which shut it, and "closed" with Escape, which opened the pause
    /// menu); not shown, it is shut whatever its slots seem to hold (icons read in the world
    /// where the screen's slots would be sent a close, Escape, into the pause menu again).
    #[serde(default)]
    pub told_by_marker: bool,
}

/// `[planner.scout]`: walking far to find what no look around shows (a spawn in a valley, a
/// desert, a plain with the nearest tree 40 blocks off).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoutConfig {
    /// One walk, e.g. `["jump_forward", 2.0]` (a jump first: the client has no auto-jump).
    pub leg: CallTemplate,
    /// Walks in one heading between two looks around.
    pub legs: u32,
    /// A walk whose view changed less than this (the mean absolute difference of the two
    /// frames' view digests, luma 0-255) ran into something: turn aside before the next.
    pub blocked_change: f32,
    /// The turn aside (degrees, `turn_by`), to the right and the left in turn.
    pub turn_deg: f64,
    /// A call that levels the view (`["look_level"]`), made before walking on when the view was
    /// turned since the last look around: an aim at a far trunk high on a hill, lost again,
    /// left the client walking on looking at the sky. Left out: none.
    #[serde(default)]
    pub level: Option<CallTemplate>,
    /// A detector class the player must not walk into (`water`): a box of it at least this
    /// share of the frame wide, its centre below the crosshair, is ahead: turn aside first.
    #[serde(default)]
    pub avoid: Option<String>,
    #[serde(default = "default_avoid_width")]
    pub avoid_width: f32,
    /// Steps spent aiming at and walking to things out of reach, with none coming into reach,
    /// after which the ones out of reach are passed over for `legs` walks (the scout turns aside
    /// and walks on): Minetest's detector read kelp on a sea floor as trees, and a run chased
    /// them for 450 steps. Left out: never.
    #[serde(default)]
    pub give_up_after: Option<u32>,
}

fn default_avoid_width() -> f32 {
    0.25
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannerConfig {
    pub aim_tolerance_px: f32,
    pub explore: Vec<CallTemplate>,
    /// How long one walk toward an aimed-at thing lasts, in seconds (`move_forward`).
    #[serde(default = "default_approach_seconds")]
    pub approach_seconds: f64,
    /// Seconds more per reach of distance beyond the first, for a thing far off: a trunk
    /// one block wide whose box is `n` times narrower than the in-reach width is about `n`
    /// reaches away, and is walked to `approach_seconds + far_seconds * (n - 1)` at a time (at
    /// most `approach_max_seconds`). The client walked 20 blocks to a far trunk in half-second
    /// steps, 30 of them. Left out: every walk is `approach_seconds`.
    #[serde(default)]
    pub far_seconds: Option<f64>,
    #[serde(default = "default_approach_max_seconds")]
    pub approach_max_seconds: f64,
    /// Walk to things with a jump first (`jump_forward`) rather than a plain walk: on terraced
    /// ground a plain walk stops at every one-block step and costs a step to notice. Left out:
    /// a plain walk, a jump only when a walk did not bring the thing closer.
    #[serde(default)]
    pub approach_jumping: bool,
    /// When the thing aimed at the step before is out of sight, jump-walk this many seconds
    /// toward where it was instead of exploring anew (far trunks come and go from frame to
    /// frame: the Minecraft client's loop aimed at one, lost it, and looked all around again
    /// for 100 steps). Left out: explore.
    #[serde(default)]
    pub lost_target_walk: Option<f64>,
    /// After mining a thing it had walked up to (a trunk, coal ore), when the item did not come,
    /// jump-walk this many seconds toward where the thing was before anything else: in Minecraft a
    /// broken block drops its item where it stood, and the player picks it up only within
    /// about 1.75 blocks (the client's wooden pickaxe run broke two logs out of a trunk from
    /// three blocks away, re-aimed at the rest of the trunk each time, and never walked to
    /// the drops). Left out (Minetest: the item goes straight to the bag): no walk.
    #[serde(default)]
    pub pickup_walk: Option<f64>,
    /// Calls that take the player round an obstacle (turn aside, walk and jump, turn back),
    /// queued instead of a third look around in a row with no gather between: a trunk on a
    /// hill behind a two-block wall was seen, walked to, lost against the wall and found
    /// again by looking around, for 100 steps. Every other detour turns the other way (the
    /// `turn` calls' first argument negated). Left out: no detour.
    #[serde(default)]
    pub detour: Vec<CallTemplate>,
    /// Calls that get the player up a wall two blocks high in front of it (on the client: cut
    /// the upper block at eye level, which leaves a step, then jump-walk up it). Made when the scout's walk ran
    /// into something (before turning aside) and when walks to a drop did not bring it (a log
    /// fell on a terrace above: a world from nothing lost both of its first logs so). Left out:
    /// no climbing.
    #[serde(default)]
    pub climb: Vec<CallTemplate>,
    /// Screens no plan opens that stop play while open, by their `[gui]` marker, and the calls
    /// that shut them (Minetest's pause menu, `[["close_screen"]]`): whatever is pending, they
    /// are shut first.
    #[serde(default)]
    pub in_the_way: BTreeMap<String, Vec<CallTemplate>>,
    /// How to search far for what is not in view (`[planner.scout]`): after a look around
    /// (`explore`) with nothing found, walk on in one heading for `legs` walks before looking
    /// around again, turning aside where a walk did not change the view (a wall) or water lies
    /// ahead. Left out: look around and `explore`'s own walk, detours between.
    #[serde(default)]
    pub scout: Option<ScoutConfig>,
    #[serde(default)]
    pub gather: BTreeMap<String, GatherRule>,
    #[serde(default)]
    pub craft: BTreeMap<String, CraftRule>,
    #[serde(default)]
    pub screens: BTreeMap<String, ScreenRule>,
    /// The screen that shows the whole bag (`"inventory"`). With it, before going to gather an
    /// ingredient (not the target) while no screen is open, the planner opens that screen once
    /// to look: the HUD shows only the hotbar, and an ingredient in the bag's other rows looked
    /// missing (the closed loop's stone pickaxe went for a tree to make the sticks its bag
    /// already held). It looks again, the target too, before gathering again what a blind
    /// gather (no `approach`) or a gather with a full HUD hotbar went for.
    #[serde(default)]
    pub bag_screen: Option<String>,
    /// The skill that moves an item from the open bag screen to the hotbar, called with the
    /// item's icon position (`move_item_to_hotbar`). A call that needs an item on a hotbar key
    /// (`hotbar:Crafting Table`) while the item sits in the bag's other rows (a full hotbar of
    /// logs, saplings, dirt pushed it there) opens `bag_screen`, moves it, and closes it
    /// first, once per item; left out, such a call is stuck.
    #[serde(default)]
    pub to_hotbar_skill: Option<String>,
    /// `to_hotbar_skill` also takes the x and y of the hotbar slot to put the item on (a
    /// hotbar slot that is empty or holds an item the tech tree has no use for): three plain
    /// clicks that swap the two, where a shift-click needs a free hotbar slot and a modifier
    /// the screen may miss (the web client's inventory sees Shift only once it has focus).
    #[serde(default)]
    pub to_hotbar_picks_slot: bool,
}

impl PlannerConfig {
    /// Loads `[planner]` of the profile file at `path` and checks it against the graph, the
    /// skill library and the file's own `[gui]`.
    pub fn load(
        path: &Path,
        kg: &KnowledgeGraph,
        library: &SkillLibrary,
    ) -> Result<Self, DataFileError> {
        let file = ProfileFile::read(path)?;
        let gui = GuiGeometry::from_profile(&file)?;
        Self::from_profile(&file, kg, library, &gui)
    }

    /// `[planner]` of a profile file, checked against the graph, the skill library and the
    /// profile's screens.
    pub fn from_profile(
        file: &ProfileFile,
        kg: &KnowledgeGraph,
        library: &SkillLibrary,
        gui: &GuiGeometry,
    ) -> Result<Self, DataFileError> {
        let line = file.header_line("[planner]");
        let config: PlannerConfig = file
            .section("planner")?
            .ok_or_else(|| file.error(1, "no [planner] section"))?;
        config
            .check(kg, library)
            .map_err(|m| file.error(line, format!("[planner]: {m}")))?;
        // `in_the_way` and `told_by_marker` name screens of the same file's [gui] with a marker.
        let marked = config.in_the_way.keys().map(|s| (s, "in_the_way")).chain(
            config
                .screens
                .iter()
                .filter(|(_, r)| r.told_by_marker)
                .map(|(s, _)| (s, "told_by_marker")),
        );
        for (screen, key) in marked {
            if !gui.has_marker(screen) {
                return Err(file.error(
                    line,
                    format!("[planner] {key}: [gui.screens.{screen}] has no marker"),
                ));
            }
        }
        // `take_from` names regions of the same file's [gui] screens.
        let locations = gui.locations();
        for (screen, rule) in &config.screens {
            for region in &rule.take_from {
                let prefix = format!("{screen}.{region}.");
                if !locations.iter().any(|l| l.starts_with(&prefix)) {
                    let header = format!("[planner.screens.{screen}]");
                    return Err(file.error(
                        file.key_line(&header, "take_from"),
                        format!(
                            "[planner.screens.{screen}] take_from: no region \"{region}\" in [gui.screens.{screen}]"
                        ),
                    ));
                }
            }
        }
        Ok(config)
    }

    fn check(&self, kg: &KnowledgeGraph, library: &SkillLibrary) -> Result<(), String> {
        let c = RuleCheck { kg, library };
        for t in &self.explore {
            c.template(t, "explore")?;
        }
        for t in &self.detour {
            c.template(t, "detour")?;
        }
        for t in &self.climb {
            c.template(t, "climb")?;
        }
        for (screen, calls) in &self.in_the_way {
            for t in calls {
                c.template(t, &format!("in_the_way.{screen}"))?;
            }
        }
        if let Some(scout) = &self.scout {
            c.template(&scout.leg, "scout.leg")?;
            if let Some(level) = &scout.level {
                c.template(level, "scout.level")?;
            }
            c.call(
                TURN_BY,
                &[ArgToken::Number(scout.turn_deg)],
                "scout.turn_deg",
            )?;
            if scout.give_up_after.is_some() {
                // Giving up turns aside twice as far.
                c.call(
                    TURN_BY,
                    &[ArgToken::Number(2.0 * scout.turn_deg)],
                    "scout.turn_deg (twice, for give_up_after)",
                )?;
            }
            if scout.legs == 0 || scout.blocked_change.is_nan() || scout.blocked_change < 0.0 {
                return Err("scout: legs must be at least 1 and blocked_change at least 0".into());
            }
            if !(0.0..=1.0).contains(&scout.avoid_width) {
                return Err("scout.avoid_width must be a share of the frame, 0-1".into());
            }
        }
        for (field, walk) in [
            ("lost_target_walk", self.lost_target_walk),
            ("pickup_walk", self.pickup_walk),
        ] {
            if let Some(w) = walk {
                c.walk_in_range(w, JUMP, field)?;
            }
        }
        for (item, rule) in &self.gather {
            c.node(item)?;
            if let Some(a) = &rule.approach {
                c.node(a)?;
            }
            let what = format!("gather \"{item}\"");
            c.call(&rule.skill, &rule.args, &what)?;
            for t in &rule.elsewhere {
                c.template(t, &format!("{what}: elsewhere"))?;
            }
            if let Some(dig) = &rule.dig {
                c.template(&dig.stairs, &format!("{what}: dig.stairs"))?;
                c.template(&dig.tunnel, &format!("{what}: dig.tunnel"))?;
                if let Some(every) = dig.look_back_every {
                    if every == 0 {
                        return Err(format!("{what}: dig.look_back_every must be at least 1"));
                    }
                    let half_turn = [ArgToken::Number(180.0)];
                    c.call(TURN_BY, &half_turn, &format!("{what}: dig.look_back_every"))?;
                }
                if let Some(depth) = &dig.depth {
                    c.template(&depth.show, &format!("{what}: dig.depth.show"))?;
                    if depth.every == 0 || !depth.stop_y.is_finite() {
                        return Err(format!(
                            "{what}: dig.depth needs every at least 1 and a number for stop_y"
                        ));
                    }
                }
            }
            // The walk is a call of the walking skills: their own ranges bound it.
            if let Some(w) = rule.approach_seconds {
                for walk in [WALK, JUMP] {
                    c.walk_in_range(w, walk, &format!("{what}: approach_seconds"))?;
                }
            }
        }
        for (item, rule) in &self.craft {
            self.check_craft(&c, item, rule)?;
        }
        self.check_hotbar(library)?;
        for (name, screen) in &self.screens {
            if let Some(s) = &screen.station {
                c.node(s)?;
            } else if screen.taken_back {
                return Err(format!(
                    "screen {name}: taken_back needs the station it takes back (station = \"...\")"
                ));
            }
            if !screen.retrieve.is_empty() && screen.station.is_none() {
                return Err(format!(
                    "screen {name}: retrieve needs the station it takes back (station = \"...\")"
                ));
            }
            for t in screen
                .open
                .iter()
                .chain(&screen.close)
                .chain(&screen.retrieve)
            {
                c.template(t, &format!("screen {name}"))?;
            }
        }
        Ok(())
    }

    fn check_craft(&self, c: &RuleCheck, item: &str, rule: &CraftRule) -> Result<(), String> {
        c.node(item)?;
        if !self.screens.contains_key(&rule.screen) {
            return Err(format!("craft \"{item}\": no screen \"{}\"", rule.screen));
        }
        c.call(&rule.skill, &rule.args, &format!("craft \"{item}\""))?;
        if rule.yields == 0 {
            return Err(format!(
                "craft \"{item}\": yields = 0 (one craft makes at least 1)"
            ));
        }
        for (ingredient, n) in &rule.needs {
            c.node(ingredient)?;
            if *n == 0 {
                return Err(format!(
                    "craft \"{item}\": needs \"{ingredient}\" = 0 (leave it out instead)"
                ));
            }
        }
        Ok(())
    }

    /// The skill that swaps an item onto the hotbar and the bag screen it works in.
    fn check_hotbar(&self, library: &SkillLibrary) -> Result<(), String> {
        if let Some(skill) = &self.to_hotbar_skill {
            if self.bag_screen.is_none() {
                return Err(format!(
                    "to_hotbar_skill = \"{skill}\" needs bag_screen (the screen it works in)"
                ));
            }
            let s = library
                .get(skill)
                .ok_or_else(|| format!("to_hotbar_skill: unknown skill {skill}"))?;
            let (want, what) = if self.to_hotbar_picks_slot {
                (
                    4,
                    "the item's x and y, then the hotbar slot's (4 arguments)",
                )
            } else {
                (2, "the item's x and y (2 arguments)")
            };
            if s.params.len() != want {
                return Err(format!(
                    "to_hotbar_skill: {} must take {what}",
                    s.signature()
                ));
            }
        }
        if let Some(b) = &self.bag_screen
            && !self.screens.contains_key(b)
        {
            return Err(format!(
                "bag_screen: no screen \"{b}\" in [planner.screens]"
            ));
        }
        Ok(())
    }
}

/// Checks of the planner's rules against the graph and the skill library.
struct RuleCheck<'a> {
    kg: &'a KnowledgeGraph,
    library: &'a SkillLibrary,
}

impl RuleCheck<'_> {
    fn node(&self, n: &str) -> Result<(), String> {
        self.kg
            .node(n)
            .map(|_| ())
            .ok_or_else(|| format!("\"{n}\" is not a node of {}", self.kg.source.display()))
    }

    /// A skill call of a rule: a known skill, item tokens naming graph nodes, and as many
    /// arguments as the skill takes ("aim" and a node name stand for two: an x and a y).
    fn call(&self, skill: &str, args: &[ArgToken], what: &str) -> Result<(), String> {
        let s = self
            .library
            .get(skill)
            .ok_or_else(|| format!("{what}: unknown skill {skill}"))?;
        let mut count = 0;
        for a in args {
            count += match a {
                ArgToken::Number(_) => 1,
                ArgToken::Token(t) if t == "aim" => 2,
                ArgToken::Token(t) => match item_token(t) {
                    Some(n) => {
                        self.node(n)?;
                        1
                    }
                    None => {
                        self.node(t)?;
                        2
                    }
                },
            };
        }
        if count != s.params.len() {
            return Err(format!(
                "{what}: {} takes {} arguments, the rule gives {count}",
                s.signature(),
                s.params.len()
            ));
        }
        Ok(())
    }

    fn template(&self, t: &CallTemplate, what: &str) -> Result<(), String> {
        match t.split_first() {
            Some((ArgToken::Token(skill), args)) => self.call(skill, args, what),
            _ => Err(format!("{what}: a call starts with the skill name")),
        }
    }

    /// A walk of `seconds` is within the range of the walking skill's first parameter.
    fn walk_in_range(&self, seconds: f64, skill: &str, what: &str) -> Result<(), String> {
        let Some(p) = self.library.get(skill).and_then(|s| s.params.first()) else {
            return Ok(());
        };
        let (lo, hi) = (p.min.unwrap_or(f64::MIN), p.max.unwrap_or(f64::MAX));
        if (lo..=hi).contains(&seconds) {
            return Ok(());
        }
        Err(format!(
            "{what} {seconds} is outside {lo}-{hi}, the range of {skill}'s {}",
            p.name
        ))
    }
}
