//! The planner policy: a deterministic player with no LLM. The knowledge graph says what is
//! missing: it walks "is used to craft", "is used to produce", "outputs" and "can be used to
//! mine" back from the target to the first item not in the inventory. The `[planner]` section of
//! `config/games/<game>.toml` says how to get an item (which skill, on which screen, with which
//! arguments), and the detections give the arguments. Its calls are validated like the LLM's.
//!
//! It serves tests, the offline demo and as the baseline an LLM has to beat.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use serde::Deserialize;

use crate::game::ProfileFile;
use crate::knowledge::{KnowledgeGraph, Relation, VisualState};
use crate::perception::{EnvironmentEntity, InventoryIcon, Perception};
use crate::skills::gui::{GuiGeometry, GuiLayout};
use crate::skills::{CallArg, SkillCall, SkillLibrary};
use crate::toml_lines::DataFileError;

mod bag_memory;
mod give_up;

/// A skill-call argument in the planner's data: a number or a symbolic token.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ArgToken {
    Number(f64),
    Token(String),
}

/// `["skill", arg, ...]`.
pub type CallTemplate = Vec<ArgToken>;

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
}

/// The skills a walk toward a thing calls (`walk`): a plain walk, and a jump when stuck.
const WALK: &str = "move_forward";
const JUMP: &str = "jump_forward";
const TURN_BY: &str = "turn_by";
/// How much of its width the box of a target walked toward may move or grow between two walks
/// and still count as not closer (a walk of 0.5 s toward a trunk in sight grows its box by a
/// third or more).
const STUCK_JITTER: f32 = 0.15;

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
    /// The screen's marker (`[gui.screens.<name>] marker`) alone shows it open, its bag empty
    /// (no icon in its slots): Minetest's inventory opened on an empty bag was taken for no
    /// screen, opened again (which shut it) and "closed" with Escape, which opened the pause
    /// menu, where the rest of the run went.
    #[serde(default)]
    pub marker_alone: bool,
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
        let config = file
            .sections
            .planner
            .clone()
            .ok_or_else(|| file.error(1, "no [planner] section"))?;
        config
            .check(kg, library)
            .map_err(|m| file.error(line, format!("[planner]: {m}")))?;
        // `in_the_way` and `marker_alone` name screens of the same file's [gui] with a marker.
        let marked = config.in_the_way.keys().map(|s| (s, "in_the_way")).chain(
            config
                .screens
                .iter()
                .filter(|(_, r)| r.marker_alone)
                .map(|(s, _)| (s, "marker_alone")),
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

/// What the planner wants next.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanStep {
    /// Call this skill; the text says why (it goes into the memory stack).
    Act(SkillCall, String),
    /// The target is in the inventory.
    Done,
    /// No rule covers what is missing, or an argument cannot be read off the screen.
    Stuck(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Goal {
    Craft(NodeIndex),
    Gather(NodeIndex),
    Unknown(NodeIndex),
}

pub struct Planner {
    config: PlannerConfig,
    pending: VecDeque<(CallTemplate, String)>,
    /// The screen the planner opened last (it only knows its own actions).
    screen: Option<String>,
    /// Gather decisions in a row at an aimed, in-reach thing (reset by any aiming or walking
    /// for aim's sake): the thing is still missing after every odd one, so the even ones walk
    /// closer first. A loose box can look in reach from a step too far, and mining from there
    /// gets nothing, for ever.
    gather_streak: u32,
    /// The item that streak is about.
    gather_item: Option<NodeIndex>,
    /// The aiming turn of the step before, if the step before aimed: a turn straight back is
    /// two detections taking turns as the target (seen on the real game), and ends in a walk.
    last_turn: Option<(f32, f32)>,
    /// The aiming turn before `last_turn`, when both were aiming turns in a row: three turns that
    /// come back to where the view was are three detections taking turns (seed 195's coal pit:
    /// the same three turns for 27 steps).
    turn_before_last: Option<(f32, f32)>,
    /// The target's box (x, y, w) when the planner last walked toward it: the same box after
    /// the walk means the player is stuck against a block, and the next walk jumps.
    last_walk: Option<(f32, f32, f32)>,
    /// The target's box width at the first of the walks toward it that have not made it wider,
    /// and how many such walks: a way that does not bring the target closer is blocked (a wall,
    /// water, a cliff), and after `WALKS_BEFORE_DETOUR` of them the planner goes round (seed
    /// 202: 30 walks toward a trunk 33 px wide that stayed 30-37 px).
    approach_walks: Option<(f32, u32)>,
    /// The thing the queued exploration looks for: once it is in view the rest of the
    /// exploration is dropped (the loop walked on past coal ore that had come into view).
    exploring_for: Option<NodeIndex>,
    /// The item to gather the bag was last looked at for (`bag_screen`): a screen was open when
    /// gathering it was decided, so what it is wanted for was not just missing from the HUD.
    bag_seen_for: Option<NodeIndex>,
    /// Items a gather call went for since a screen last showed the bag, where the item may
    /// have gone past the HUD: a blind gather (no `approach`: nothing on screen says whether it
    /// brought anything) or a full HUD hotbar. The planner looks in the bag before gathering
    /// such an item again, the target too (seen there, the success check ends the task): a
    /// cobblestone task dug 22 cobblestone into the bag behind a hotbar of junk and dug on for
    /// 14 rounds, the HUD never showing one.
    gathered_unseen: BTreeSet<NodeIndex>,
    /// The item of the last blind gather and how many the bag held before it (0 when not
    /// seen, `None` when unread); the item the bag was last looked in for after a blind gather
    /// of it (`gathered_unseen`); and the item that look found no more of: the next blind
    /// gather of it starts with a `detour`, away from the spot (seed 199: twelve digs at one
    /// spot, the player never went down, one cobblestone more in all).
    blind_before: Option<(NodeIndex, Option<u32>)>,
    looked_after_blind: Option<NodeIndex>,
    blind_gather_empty: Option<NodeIndex>,
    /// Items an open screen showed missing from the bag: their sightings on the HUD hotbar
    /// (drawn over the world, whose empty slots show the world through) are left out until a
    /// screen shows them in the bag or the planner gathers again. Without this the closed loop
    /// opened and closed the inventory to craft planks from a log the HUD showed in an empty
    /// slot, for ever.
    refuted_on_hud: BTreeSet<NodeIndex>,
    /// Items the screen in view has shown in its bag since it came into view.
    seen_in_screen: BTreeSet<NodeIndex>,
    /// Tools (whatever "can be used to mine") the last open screen showed in the bag, with the
    /// hotbar key of their slot there. The HUD misses a used tool now and then (its wear bar and
    /// the selected-slot frame over it): the client's cobblestone task opened the inventory,
    /// saw the pickaxe, closed it, missed it on the HUD and went to craft another, for 20 steps.
    bag_tools: BTreeMap<NodeIndex, Option<u8>>,
    /// The item last fetched from the bag to the hotbar (`to_hotbar_skill`): tried once, so a
    /// move that did not take (a hotbar with no free slot) ends stuck instead of looping.
    fetched_to_hotbar: Option<NodeIndex>,
    /// The item fetched a second time with a hotbar slot freed first (`FREE_HOTBAR_SLOT`): a
    /// shift-click from the bag goes nowhere when all nine hotbar slots are taken (seed 209:
    /// the crafting table stayed in the bag behind dirt, saplings and apples).
    freed_hotbar_for: Option<NodeIndex>,
    /// The item whose thing was just mined (`pickup_walk`), and how many the bag held before.
    mined: Option<(NodeIndex, Option<u32>)>,
    /// Walks to a drop in a row after which the item had not come: each second one walks
    /// twice as long, up to three times (seed 202: a trunk column in a terrace wall dropped its
    /// logs on the terrace above; 17 mines and walks of one length never got there, two jumps
    /// in a row did).
    fruitless_pickups: u32,
    /// The target's box (x, y, w) at the last mine, and how many mines in a row since the item
    /// last came saw it the same: the walks to the drop go nowhere and the mines reach nothing
    /// (seed 206: a tree up a terraced hill looked in reach; 28 mines from one spot, the box
    /// the same to the pixel). After `SAME_MINES_BEFORE_DETOUR` the planner goes round.
    mine_view: Option<((f32, f32, f32), u32)>,
    /// The station the queued close calls take back (`taken_back`), until the step after them.
    taking_back: Option<String>,
    /// Hotbar keys whose slot the last screen in view showed empty in its hotbar row: what the
    /// HUD shows there is the world through the empty slot (a poppy behind one read as a log
    /// and planks, and the loop opened the inventory to craft planks and closed it to get a
    /// log for 60 steps). Kept until the planner gathers again or a screen is seen anew.
    empty_hotbar_keys: BTreeSet<u8>,
    /// Looks around queued since the last gather call (`detour`), and detours taken.
    explores_since_gather: u32,
    detours: u32,
    /// The scout's walks left in this heading before the next look around, the view digest
    /// before the last of them, and the turns aside taken (their side alternates).
    scout_legs_left: u32,
    scout_from: Option<String>,
    scout_turns: u32,
    /// The view was turned (an aim) since the scout last looked around or levelled it.
    scout_unlevel: bool,
    /// The scout climbed at its last blocked walk: blocked again, it turns aside.
    scout_climbed: bool,
    /// The item whose drop a climb went for: climbed once per mined thing.
    climbed_for_drop: Option<NodeIndex>,
    /// The last call walked toward an aimed-at thing: lost from view after it, the thing is
    /// walked on to (`lost_target_walk`) with the view as the aim left it, not searched for
    /// anew (a trunk high on a hill, levelled out of view, was left for a look around).
    approaching: bool,
    /// The reason given to the open calls of a screen queued last, and how many they were: once
    /// some have run, only they are pending and a screen is in view, the rest are dropped (the
    /// web client's placing click opened the table it placed, and the `use_block` after it
    /// clicked into the screen).
    opening: Option<(String, usize)>,
    /// What the last screen showed in the bag, and ingredient icons crafts proved wrong.
    bag: bag_memory::BagMemory,
    /// Steps toward things out of reach since one was last in reach, and walks left in which
    /// things out of reach are passed over (`give_up_after`).
    give_up: give_up::GiveUp,
}

/// Looks around in a row, with no gather between, after which the next one is a detour.
const EXPLORES_BEFORE_DETOUR: u32 = 2;

/// Walks toward a target that leave its box less than `APPROACH_GROWTH` wider than at the
/// first of them, after which the next is a detour. Two blocks a walk make a trunk 28 blocks
/// away 8% wider a walk, 44% after four; the detector's boxes jitter by 15%.
const WALKS_BEFORE_DETOUR: u32 = 4;

/// Mines in a row that saw the target's box the same as the mine before, after which the next
/// is a detour.
const SAME_MINES_BEFORE_DETOUR: u32 = 2;
const APPROACH_GROWTH: f32 = 0.2;

/// A target's demand being worked out: what is left in the bag, the stations and tools already
/// counted, and what must still come from the world.
struct Demand {
    stock: BTreeMap<NodeIndex, u32>,
    once: BTreeSet<NodeIndex>,
    short: BTreeMap<NodeIndex, u32>,
}

/// What the planner looks at in one step.
pub struct View<'a> {
    pub kg: &'a KnowledgeGraph,
    pub visual: &'a VisualState,
    pub perception: &'a Perception,
    pub layout: &'a GuiLayout<'a>,
}

impl View<'_> {
    /// The crosshair: the frame's centre.
    fn crosshair(&self) -> (f32, f32) {
        (
            self.perception.frame_w as f32 / 2.0,
            self.perception.frame_h as f32 / 2.0,
        )
    }

    /// Whether the player owns `node`: its icon in a bag slot (`[gui] bag_regions`), not one
    /// left in a craft grid.
    pub fn has(&self, node: NodeIndex) -> bool {
        self.icon(node).is_some()
    }

    /// How many of `node` the bag holds: the sum of its bag icons' counts (only those on
    /// `slots` when given and any is there: with a screen open the HUD hotbar under it shows
    /// the same stacks again, its digits dimmed), `None` where one of them could not be read
    /// (or the game's counts are not read at all).
    fn count(&self, node: NodeIndex, slots: Option<&[(f32, f32)]>) -> Option<u32> {
        let bag: Vec<_> = self
            .visual
            .attributes
            .get(&node)?
            .icons
            .iter()
            .filter(|i| self.layout.in_bag(i.x, i.y))
            .collect();
        let on_screen: Vec<_> = match slots {
            Some(s) => bag
                .iter()
                .filter(|i| on_a_slot(i.x, i.y, s, self))
                .copied()
                .collect(),
            None => Vec::new(),
        };
        let counted = if on_screen.is_empty() { bag } else { on_screen };
        counted.iter().map(|i| i.count).sum()
    }

    /// How many of `node` the bag holds as far as can be told: 0 when none shows, `None` when
    /// a count could not be read.
    fn held(&self, node: NodeIndex) -> Option<u32> {
        match self.count(node, None) {
            None if !self.has(node) => Some(0),
            n => n,
        }
    }

    /// Where `node`'s icon is in the bag: its biggest read stack, else the first.
    fn icon(&self, node: NodeIndex) -> Option<(f32, f32)> {
        self.bag_icon(node).map(|i| (i.x, i.y))
    }

    /// `node`'s icon in the bag that [`Self::icon`] points at.
    fn bag_icon(&self, node: NodeIndex) -> Option<&InventoryIcon> {
        biggest(
            self.visual
                .attributes
                .get(&node)?
                .icons
                .iter()
                .filter(|i| self.layout.in_bag(i.x, i.y)),
        )
    }
}

/// The centres of every slot of a screen (`inventory.*`), in window pixels.
/// The centres of the slots whose location starts with `prefix`: a screen (`inventory`) or one
/// of its regions (`inventory.hotbar`).
fn screen_slots(prefix: &str, view: &View) -> Vec<(f32, f32)> {
    let screen = prefix.split('.').next().unwrap_or(prefix);
    let dotted = format!("{prefix}.");
    view.layout
        .slots(Some(screen))
        .into_iter()
        .filter(|s| s.location == prefix || s.location.starts_with(&dotted))
        .map(|s| s.centre)
        .collect()
}

/// The icon with the biggest read count (a stack of 1 of a look-alike block was taken for the
/// recipe over the 9 cobblestones beside it), the first one when no count is read.
fn biggest<'a>(icons: impl Iterator<Item = &'a InventoryIcon>) -> Option<&'a InventoryIcon> {
    icons.min_by_key(|i| std::cmp::Reverse(i.count.unwrap_or(0)))
}

/// The slots of a hotbar row (`hud.hotbar`, `inventory.hotbar`): hotbar key (1-9) and centre.
fn hotbar_slots(row: &str, view: &View) -> Vec<(u8, (f32, f32))> {
    (0..9u8)
        .filter_map(|slot| {
            let centre = view.layout.slot_center(&format!("{row}.{slot}")).ok()?;
            Some((slot + 1, centre))
        })
        .collect()
}

/// How far the detector's box of a thing that did not move jumps from frame to frame: a
/// quarter of its width, at least 4 px.
fn box_jitter(w: f32) -> f32 {
    (w * STUCK_JITTER).max(4.0)
}

/// What a gather step works toward: the item, the thing approached to get it, and the rule.
struct GatherGoal<'r> {
    item: NodeIndex,
    name: &'r str,
    approach: &'r str,
    rule: &'r GatherRule,
    walk_seconds: f64,
}

/// Of the boxes of `approach` at least half as wide as the widest (the near ones: far trunks and
/// tree tops seen through leaves are narrow), the one nearest the crosshair, so that the target
/// stays the same from step to step.
fn nearest_entity(approach: &str, view: &View) -> Option<EnvironmentEntity> {
    let (cx, cy) = view.crosshair();
    let attributes = view.visual.attributes.get(&view.kg.node(approach)?)?;
    let widest = attributes
        .entities
        .iter()
        .map(|e| e.w)
        .fold(0.0f32, f32::max);
    attributes
        .entities
        .iter()
        .filter(|e| e.w >= widest / 2.0)
        .min_by(|p, q| {
            (p.x - cx)
                .hypot(p.y - cy)
                .total_cmp(&(q.x - cx).hypot(q.y - cy))
        })
        .cloned()
}

/// Whether `e`'s box is centred where the box `before` (x, y, w) was, within its jitter.
/// How much the view changed between two frames' digests (see `perception::view_digest`);
/// `None` when either is missing (a session recorded before digests).
fn view_change(before: &str, after: &str) -> Option<f32> {
    crate::perception::view_digest::change(before, after)
}

fn where_it_was(before: (f32, f32, f32), e: &EnvironmentEntity) -> bool {
    let near = box_jitter(before.2);
    (before.0 - e.x).abs() < near && (before.1 - e.y).abs() < near
}

/// A planner argument: the x and y of a hotbar slot whose item can go to the bag.
const FREE_HOTBAR_SLOT: &str = "@spare_hotbar_slot";

/// The hotbar key (1-9) of the slot of `row` that one of `icons` sits on.
fn hotbar_key_in(icons: &[&InventoryIcon], row: &str, view: &View) -> Option<u8> {
    hotbar_slots(row, view)
        .into_iter()
        .find(|(_, c)| icons.iter().any(|i| on_a_slot(i.x, i.y, &[*c], view)))
        .map(|(key, _)| key)
}

/// The item a one-number token names: `"hotbar:<Item>"` (its hotbar key) or `"count:<Item>"`
/// (how many the stack its icon shows holds).
fn item_token(t: &str) -> Option<&str> {
    t.strip_prefix("hotbar:")
        .or_else(|| t.strip_prefix(COUNT_PREFIX))
}

/// `"count:<Item>"`: the number drawn on the stack the same call's `<Item>` argument takes
/// (1 when none is drawn or it cannot be read: the game draws no count for a single item), so
/// a skill can size its work to the stack (smelt_iron_ore waits for every ore it puts in).
const COUNT_PREFIX: &str = "count:";

/// The item a `"hotbar:<Item>"` argument names.
fn hotbar_item(t: &ArgToken) -> Option<&str> {
    match t {
        ArgToken::Token(t) => t.strip_prefix("hotbar:"),
        ArgToken::Number(_) => None,
    }
}

/// Whether the detector found an icon of any class on the slot centred at `c`.
fn any_icon_on(c: (f32, f32), view: &View) -> bool {
    view.perception
        .icons
        .iter()
        .any(|i| view.layout.on_slot(i.x, i.y, c))
}

fn on_a_slot(x: f32, y: f32, slots: &[(f32, f32)], view: &View) -> bool {
    slots.iter().any(|c| view.layout.on_slot(x, y, *c))
}

impl Planner {
    pub fn new(config: PlannerConfig) -> Self {
        Planner {
            config,
            pending: VecDeque::new(),
            screen: None,
            gather_streak: 0,
            gather_item: None,
            last_turn: None,
            turn_before_last: None,
            last_walk: None,
            approach_walks: None,
            exploring_for: None,
            bag_seen_for: None,
            gathered_unseen: BTreeSet::new(),
            blind_before: None,
            looked_after_blind: None,
            blind_gather_empty: None,
            refuted_on_hud: BTreeSet::new(),
            seen_in_screen: BTreeSet::new(),
            bag_tools: BTreeMap::new(),
            fetched_to_hotbar: None,
            freed_hotbar_for: None,
            mined: None,
            fruitless_pickups: 0,
            mine_view: None,
            taking_back: None,
            empty_hotbar_keys: BTreeSet::new(),
            explores_since_gather: 0,
            detours: 0,
            scout_legs_left: 0,
            scout_from: None,
            scout_turns: 0,
            scout_unlevel: false,
            scout_climbed: false,
            climbed_for_drop: None,
            approaching: false,
            opening: None,
            bag: bag_memory::BagMemory::default(),
            give_up: give_up::GiveUp::default(),
        }
    }

    /// The rules the planner plans with.
    pub fn config(&self) -> &PlannerConfig {
        &self.config
    }

    /// The items a gather or craft rule obtains (`[planner.gather]`, `[planner.craft]`).
    pub fn obtainable(&self) -> Vec<String> {
        self.config
            .gather
            .keys()
            .chain(self.config.craft.keys())
            .cloned()
            .collect()
    }

    /// The next skill call towards `target`.
    pub fn next(&mut self, target: NodeIndex, view: &View) -> PlanStep {
        self.check_craft(view);
        let visual = self.without_refuted_hud_icons(view);
        let view = &View {
            visual: &visual,
            ..*view
        };
        self.note_bag_seen(view);
        let step = self.plan(target, view);
        if let PlanStep::Act(call, _) = &step
            && self.config.gather.values().any(|r| r.skill == call.skill)
        {
            // A gather may bring any of them, into any slot.
            self.give_up.reached();
            self.refuted_on_hud.clear();
            self.empty_hotbar_keys.clear();
            self.explores_since_gather = 0;
            // The next search starts with a look around where the player is then.
            self.scout_legs_left = 0;
            self.scout_from = None;
        }
        step
    }

    /// Whether an icon at (x, y) sits on the HUD hotbar: a bag slot of a screen the planner
    /// does not open itself.
    fn on_hud(&self, view: &View, x: f32, y: f32) -> bool {
        view.layout
            .bag_screen(x, y)
            .is_some_and(|s| !self.config.screens.contains_key(s))
    }

    /// With a screen in view, notes which items its bag lacks although the HUD shows them (and
    /// it has not shown them since it opened); then the visual state without the HUD sightings
    /// of those items, under the open screen too (a craft once took its ingredient from the
    /// HUD slot there).
    fn without_refuted_hud_icons(&mut self, view: &View) -> VisualState {
        let mut visual = view.visual.clone();
        self.without_refuted_slots(&mut visual, view);
        let in_view = self.screen_in_view(view);
        if in_view.is_some() {
            for (node, a) in &visual.attributes {
                let in_screen_bag = a
                    .icons
                    .iter()
                    .any(|i| view.layout.in_bag(i.x, i.y) && !self.on_hud(view, i.x, i.y));
                if in_screen_bag {
                    self.refuted_on_hud.remove(node);
                    self.seen_in_screen.insert(*node);
                } else if !self.seen_in_screen.contains(node)
                    && a.icons.iter().any(|i| self.on_hud(view, i.x, i.y))
                {
                    self.refuted_on_hud.insert(*node);
                }
            }
        } else {
            self.seen_in_screen.clear();
        }
        if let Some(screen) = &in_view {
            self.note_bag_tools(view, screen);
            self.note_empty_hotbar_keys(view, screen);
        }
        let empty_on_hud: Vec<(f32, f32)> = hotbar_slots("hud.hotbar", view)
            .into_iter()
            .filter(|(key, _)| self.empty_hotbar_keys.contains(key))
            .map(|(_, centre)| centre)
            .collect();
        if !empty_on_hud.is_empty() {
            for a in visual.attributes.values_mut() {
                a.icons
                    .retain(|i| !on_a_slot(i.x, i.y, &empty_on_hud, view));
            }
        }
        // A screen that names the slots ingredients come from (`take_from`) is the whole bag
        // while it is in view: the HUD drawn under it is not (a craft clicked the HUD's log
        // under the inventory for 70 steps, the inventory's own log already used).
        if in_view
            .as_ref()
            .and_then(|s| self.config.screens.get(s))
            .is_some_and(|r| !r.take_from.is_empty())
        {
            for a in visual.attributes.values_mut() {
                a.icons.retain(|i| !self.on_hud(view, i.x, i.y));
            }
        }
        for node in &self.refuted_on_hud {
            if let Some(a) = visual.attributes.get_mut(node) {
                a.icons.retain(|i| !self.on_hud(view, i.x, i.y));
            }
        }
        visual
    }

    /// Notes which slots of `screen`'s hotbar row (in view) hold no icon of any class.
    fn note_empty_hotbar_keys(&mut self, view: &View, screen: &str) {
        self.empty_hotbar_keys = hotbar_slots(&format!("{screen}.hotbar"), view)
            .into_iter()
            .filter(|(_, c)| !any_icon_on(*c, view))
            .map(|(key, _)| key)
            .collect();
    }

    /// Notes which tools and stations (the items calls take by hotbar key) the bag of `screen`
    /// (in view) holds, and their hotbar keys.
    fn note_bag_tools(&mut self, view: &View, screen: &str) {
        for tool in self.keyed_items(view) {
            let in_bag: Vec<&InventoryIcon> = view
                .visual
                .attributes
                .get(&tool)
                .map(|a| {
                    a.icons
                        .iter()
                        .filter(|i| view.layout.in_bag(i.x, i.y) && !self.on_hud(view, i.x, i.y))
                        .collect()
                })
                .unwrap_or_default();
            if in_bag.is_empty() {
                self.bag_tools.remove(&tool);
                continue;
            }
            let key = hotbar_key_in(&in_bag, &format!("{screen}.hotbar"), view);
            self.bag_tools.insert(tool, key);
        }
    }

    /// Drops the queued calls that what is in view made moot: the thing explored for came
    /// into view, or the screen being opened is open.
    fn settle_pending(&mut self, view: &View) {
        if self.pending.is_empty() {
            self.exploring_for = None;
        } else if let Some(sought) = self.exploring_for
            && view
                .visual
                .attributes
                .get(&sought)
                .is_some_and(|a| !a.entities.is_empty())
        {
            self.pending.clear();
            self.exploring_for = None;
        }
        if let Some((why, calls)) = &self.opening {
            if self.pending.is_empty() {
                self.opening = None;
            } else if self.pending.len() < *calls
                && self.pending.iter().all(|(_, w)| w == why)
                && self.screen_in_view(view).is_some()
            {
                self.pending.clear();
                self.opening = None;
            }
        }
    }

    /// The screen believed open, from the one in view: a marked screen in view is the one
    /// open; a station's screen that shows nothing did not open.
    fn settle_screen(&mut self, view: &View) {
        let in_view = self.screen_in_view(view);
        // A screen in view that its marker tells from the one believed open is the one open: the
        // success check opened the inventory while the planner was opening the crafting table
        // (whose screen never came), the opening stopped at the screen in view, and eleven
        // pickaxe crafts went into the inventory's grid.
        if let (Some(believed), Some(seen)) = (&self.screen, &in_view)
            && believed != seen
            && view.perception.marked_screens.contains(seen)
            && !view.perception.marked_screens.contains(believed)
        {
            self.screen = in_view.clone();
        }
        if let Some(station) = self
            .screen
            .as_ref()
            .and_then(|s| self.config.screens.get(s))
            .and_then(|r| r.station.as_deref())
            && in_view.is_none()
        {
            // A station's screen opened by the planner that shows no item in any slot did not
            // open: the block was placed out of reach or the click missed it (a crafting table
            // placed against leaves overhead, then 100 steps of "crafting" by clicking the
            // world). Plan from what is there: place it again, or make another. Placed, it is
            // no longer where a screen last showed it (seed 191: placed 11 times from the key
            // an old look at the bag gave it, the slot empty after the first).
            if let Some(node) = view.kg.node(station) {
                self.bag_tools.remove(&node);
            }
            let rule = self.screen.take().and_then(|s| self.config.screens.get(&s));
            if let Some(rule) = rule.filter(|r| !r.retrieve.is_empty()).cloned() {
                self.queue(
                    &rule.retrieve,
                    &format!("the {station}'s screen did not open: take the {station} back"),
                );
                self.taking_back = rule.station.clone();
            }
        }
        // A screen its marker alone shows open is shut when it does not show: a close call sent
        // to a shut screen is Escape, and Minetest's Escape opens the pause menu.
        if in_view.is_none()
            && self
                .screen
                .as_ref()
                .and_then(|s| self.config.screens.get(s))
                .is_some_and(|r| r.marker_alone)
        {
            self.screen = None;
        }
        if in_view.is_some() {
            self.gathered_unseen.clear();
        }
        if self.screen.is_none() {
            self.screen = in_view;
        }
    }

    fn plan(&mut self, target: NodeIndex, view: &View) -> PlanStep {
        if let Some((screen, calls)) = self
            .config
            .in_the_way
            .iter()
            .find(|(s, _)| view.perception.marked_screens.contains(s))
        {
            let (why, calls) = (
                format!("the {screen} screen is in the way: shut it"),
                calls.clone(),
            );
            self.pending.clear();
            self.opening = None;
            self.screen = None;
            self.queue(&calls, &why);
            return self.next_pending(view);
        }
        self.settle_pending(view);
        if !self.pending.is_empty() {
            return self.next_pending(view);
        }
        if view.has(target) {
            return PlanStep::Done;
        }
        if let Some(station) = self.taking_back.take()
            && let Some(seconds) = self.config.pickup_walk
            && view.kg.node(&station).is_some_and(|n| !view.has(n))
        {
            self.walk(
                JUMP,
                seconds,
                format!("took the {station} back but it did not come: walk to where it stood"),
            );
            return self.next_pending(view);
        }
        self.settle_screen(view);
        if !self.pending.is_empty() {
            return self.next_pending(view);
        }
        let mut visited = BTreeSet::new();
        let short = self.to_gather(target, view);
        let goal = self
            .first_missing(target, view, &short, &mut visited)
            .unwrap_or(Goal::Unknown(target));
        let goal = self.surface_first(goal, view, &short);
        let step = match goal {
            Goal::Craft(item) => self.craft(item, view),
            Goal::Gather(item) if self.look_in_bag_first(item, target, view) => Ok(()),
            Goal::Gather(item) => self.gather(item, view),
            Goal::Unknown(item) => Err(format!(
                "no planner rule obtains \"{}\"",
                view.kg.name(item)
            )),
        };
        match step {
            Ok(()) => self.next_pending(view),
            Err(e) => PlanStep::Stuck(e),
        }
    }

    /// A blind gather (digging down for cobblestone) leaves the player at the bottom of a
    /// shaft: while the target still needs something gathered at the surface (a log, for a
    /// crafting table lost on the way), that comes first. A stone pickaxe run from nothing whose
    /// table did not come back dug down, then needed a log from the bottom of its shaft.
    fn surface_first(&self, goal: Goal, view: &View, short: &BTreeMap<NodeIndex, u32>) -> Goal {
        let Goal::Gather(item) = goal else {
            return goal;
        };
        let blind = |n: NodeIndex| {
            self.config
                .gather
                .get(view.kg.name(n))
                .is_some_and(|r| r.approach.is_none())
        };
        if !blind(item) {
            return goal;
        }
        let surface = short.iter().find(|(n, k)| {
            **k > 0
                && **n != item
                && self
                    .config
                    .gather
                    .get(view.kg.name(**n))
                    .is_some_and(|r| r.approach.is_some())
        });
        match surface {
            Some((&n, _)) => {
                let mut visited = BTreeSet::new();
                match self.first_missing(n, view, short, &mut visited) {
                    Some(g @ Goal::Gather(_)) | Some(g @ Goal::Craft(_)) => g,
                    _ => goal,
                }
            }
            None => goal,
        }
    }

    /// Queues opening the bag screen (`bag_screen`) when gathering `item` was decided from the
    /// HUD alone and either the bag has not been looked at for it yet (an ingredient, not the
    /// target: a target in the bag shows on the HUD too unless the hotbar is full) or a gather
    /// of it since the last look may have put it past the HUD (`gathered_unseen`); true when
    /// it did.
    fn look_in_bag_first(&mut self, item: NodeIndex, target: NodeIndex, view: &View) -> bool {
        let Some(bag) = self.config.bag_screen.clone() else {
            return false;
        };
        if self.screen.is_some() {
            // An open screen shows the bag: the decision already saw it.
            self.bag_seen_for = Some(item);
            return false;
        }
        let unseen = self.gathered_unseen.remove(&item);
        if !unseen && (item == target || self.bag_seen_for == Some(item)) {
            return false;
        }
        let blind = self
            .config
            .gather
            .get(view.kg.name(item))
            .is_some_and(|r| r.approach.is_none());
        self.looked_after_blind = (unseen && blind).then_some(item);
        let Some(rule) = self.config.screens.get(&bag).cloned() else {
            return false;
        };
        self.bag_seen_for = Some(item);
        self.queue(
            &rule.open,
            &format!(
                "the HUD shows only the hotbar: look in the bag before going to get {}",
                view.kg.name(item)
            ),
        );
        self.screen = Some(bag);
        true
    }

    fn next_pending(&mut self, view: &View) -> PlanStep {
        // The move would take it off the hotbar (a shift-click goes both ways): keep its key.
        if let Some(key) = self.fetch_not_needed(view)
            && let Some((fetch, _)) = self.pending.pop_front()
            && let Some(ArgToken::Token(item)) = fetch.get(1)
            && let Some(node) = view.kg.node(item)
        {
            self.bag_tools.insert(node, Some(key));
        }
        match self.pending.pop_front() {
            Some((template, why)) => match self.resolve(&template, view) {
                Ok(call) => {
                    if self.fetched_to_hotbar.is_some_and(|n| {
                        template
                            .iter()
                            .any(|t| hotbar_item(t) == Some(view.kg.name(n)))
                    }) {
                        // It reached the hotbar: it may be fetched again when pushed off later.
                        self.fetched_to_hotbar = None;
                        self.freed_hotbar_for = None;
                    }
                    PlanStep::Act(call, why)
                }
                Err(e) => {
                    if self.fetch_to_hotbar_first(&template, &why, view) {
                        return self.next_pending(view);
                    }
                    self.pending.clear();
                    PlanStep::Stuck(e)
                }
            },
            None => PlanStep::Stuck("nothing to do".into()),
        }
    }

    /// The hotbar key of the item the next pending call would move to the hotbar
    /// (`to_hotbar_skill`) when the open bag shows it on its hotbar row already: the HUD had
    /// missed it (the selected-slot frame drawn over it), and a shift-click there moves it off.
    fn fetch_not_needed(&self, view: &View) -> Option<u8> {
        let skill = self.config.to_hotbar_skill.as_deref()?;
        let bag = self.config.bag_screen.as_deref()?;
        let (template, _) = self.pending.front()?;
        let (Some(ArgToken::Token(s)), Some(ArgToken::Token(item))) =
            (template.first(), template.get(1))
        else {
            return None;
        };
        if s != skill {
            return None;
        }
        let node = view.kg.node(item)?;
        let icons: Vec<&InventoryIcon> = view
            .visual
            .attributes
            .get(&node)
            .map(|a| {
                a.icons
                    .iter()
                    .filter(|i| !self.on_hud(view, i.x, i.y))
                    .collect()
            })
            .unwrap_or_default();
        hotbar_key_in(&icons, &format!("{bag}.hotbar"), view)
    }

    /// `template` needs an item on a hotbar key that is not on the hotbar: queues, before it
    /// (put back at the front), opening the bag screen, moving the item to the hotbar with
    /// `to_hotbar_skill`, and closing the screen (or only the move, with the bag in view).
    /// Once per item; false when there is nothing to try.
    fn fetch_to_hotbar_first(&mut self, template: &CallTemplate, why: &str, view: &View) -> bool {
        let (Some(skill), Some(bag)) = (
            self.config.to_hotbar_skill.clone(),
            self.config.bag_screen.clone(),
        ) else {
            return false;
        };
        let Some(item) = template
            .iter()
            .filter_map(hotbar_item)
            .find(|item| self.hotbar_key(item, view).is_err())
        else {
            return false;
        };
        let (Some(node), Some(rule)) = (view.kg.node(item), self.config.screens.get(&bag).cloned())
        else {
            return false;
        };
        let mut moves: Vec<CallTemplate> = Vec::new();
        let why = if self.fetched_to_hotbar == Some(node) {
            // The move did not take: most likely no hotbar slot was free. Once more, after
            // moving an item the tech tree has no use for off the hotbar (a move that picks its
            // slot makes its own room: nothing more to try).
            if self.freed_hotbar_for == Some(node) || self.config.to_hotbar_picks_slot {
                return false;
            }
            self.freed_hotbar_for = Some(node);
            moves.push(vec![
                ArgToken::Token(skill.clone()),
                ArgToken::Token(FREE_HOTBAR_SLOT.into()),
            ]);
            format!(
                "{item} did not reach the hotbar: free a hotbar slot, then move it there ({why})"
            )
        } else {
            format!("{item} is in the bag, not on the hotbar: move it there first ({why})")
        };
        self.fetched_to_hotbar = Some(node);
        let mut fetch = vec![ArgToken::Token(skill), ArgToken::Token(item.to_string())];
        if self.config.to_hotbar_picks_slot {
            fetch.push(ArgToken::Token(FREE_HOTBAR_SLOT.into()));
        }
        moves.push(fetch);
        let mut front: Vec<CallTemplate> = Vec::new();
        if self.screen.as_deref() == Some(bag.as_str()) {
            front.extend(moves);
        } else {
            front.extend(rule.open.iter().cloned());
            front.extend(moves);
            front.extend(rule.close.iter().cloned());
        }
        self.pending.push_front((template.clone(), why.clone()));
        for t in front.into_iter().rev() {
            self.pending.push_front((t, why.clone()));
        }
        true
    }

    /// Items a node needs before it can be made, from the graph and the rule's arguments.
    fn requirements(&self, item: NodeIndex, view: &View) -> Vec<NodeIndex> {
        let kg = view.kg;
        let name = kg.name(item);
        let mut needs: BTreeSet<NodeIndex> = BTreeSet::new();
        for e in kg.graph.edges_directed(item, Direction::Incoming) {
            if matches!(
                *e.weight(),
                Relation::IsUsedToCraft | Relation::IsUsedToProduce
            ) {
                needs.insert(e.source());
            }
        }
        let tokens: Vec<&ArgToken> =
            match (self.config.craft.get(name), self.config.gather.get(name)) {
                (Some(c), _) => c.args.iter().collect(),
                (None, Some(g)) => g.args.iter().collect(),
                _ => Vec::new(),
            };
        for t in tokens {
            if let ArgToken::Token(t) = t {
                let n = item_token(t).unwrap_or(t);
                if let Some(node) = kg.node(n) {
                    needs.insert(node);
                }
            }
        }
        // A gathered item needs the tool that mines its source.
        if let Some(rule) = self.config.gather.get(name) {
            let source = rule.approach.as_deref().and_then(|a| kg.node(a));
            for s in source.into_iter().chain([item]) {
                for e in kg.graph.edges_directed(s, Direction::Incoming) {
                    if *e.weight() == Relation::CanBeUsedToMine {
                        needs.insert(e.source());
                    }
                }
            }
        }
        needs.remove(&item);
        // Deterministic order: by name.
        let mut out: Vec<NodeIndex> = needs.into_iter().collect();
        out.sort_by(|a, b| kg.name(*a).cmp(kg.name(*b)));
        out
    }

    /// Whether the bag holds enough of `need` to make `item`: any where the craft rule gives
    /// no number or the count cannot be read, else at least the rule's number.
    fn enough(&self, view: &View, need: NodeIndex, item: NodeIndex) -> bool {
        if !self.holds(view, need) {
            return false;
        }
        let wanted = self
            .config
            .craft
            .get(view.kg.name(item))
            .and_then(|r| r.needs.get(view.kg.name(need)));
        let slots = self.take_slots(view);
        match (wanted, self.holding(view, need, slots.as_deref())) {
            (Some(n), Some(have)) => have >= *n,
            _ => true,
        }
    }

    /// What `target` needs from the world in all beyond what the bag in `view` holds (logs,
    /// cobblestone, ores), by name: the whole chain's raw materials, each craft's surplus
    /// serving the next consumer (see [`Self::to_gather`]).
    pub fn needs_from_world(&self, target: NodeIndex, view: &View) -> Vec<(String, u32)> {
        self.to_gather(target, view)
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(node, n)| (view.kg.name(node).to_string(), n))
            .collect()
    }

    /// How many more of each gathered item (logs, cobblestone) `target` needs than the bag
    /// holds, through the craft rules' `needs` and `yields`: what is in the bag is used first,
    /// stations and tools are needed once, an ingredient a rule gives no number for once per
    /// craft. A count that cannot be read counts as plenty (as in `enough`).
    fn to_gather(&self, target: NodeIndex, view: &View) -> BTreeMap<NodeIndex, u32> {
        let mut demand = Demand {
            stock: BTreeMap::new(),
            once: BTreeSet::new(),
            short: BTreeMap::new(),
        };
        self.demand(target, 1, view, &mut demand, 0);
        demand.short
    }

    fn demand(&self, item: NodeIndex, wanted: u32, view: &View, d: &mut Demand, depth: u32) {
        // The graph is a tree of recipes; the bound only guards against a cycle in user data.
        if wanted == 0 || depth > 32 {
            return;
        }
        let name = view.kg.name(item);
        let left = d.stock.entry(item).or_insert_with(|| {
            if self.station_in_use(name) || self.bag_tools.contains_key(&item) {
                return u32::MAX;
            }
            if !self.holds(view, item) {
                return 0;
            }
            let slots = self.take_slots(view);
            self.holding(view, item, slots.as_deref())
                .unwrap_or(u32::MAX)
        });
        let taken = (*left).min(wanted);
        *left -= taken;
        let wanted = wanted - taken;
        if wanted == 0 {
            return;
        }
        if self.config.gather.contains_key(name) {
            *d.short.entry(item).or_default() += wanted;
        }
        let rule = self.config.craft.get(name);
        let crafts = rule.map_or(1, |r| wanted.div_ceil(r.yields));
        // What a craft makes beyond the wanted is there for the next consumer: one log makes
        // four planks, and the table's four, the pickaxe's three and the sticks' two are three
        // logs, not one log per consumer (a stone pickaxe from nothing went for a fourth tree).
        if let Some(r) = rule {
            let surplus = crafts.saturating_mul(r.yields).saturating_sub(wanted);
            if let Some(left) = d.stock.get_mut(&item) {
                *left = left.saturating_add(surplus);
            }
        }
        for need in self.requirements(item, view) {
            let need_name = view.kg.name(need);
            let consumed = rule.and_then(|r| {
                r.needs.get(need_name).copied().or_else(|| {
                    r.args
                        .iter()
                        .any(|a| matches!(a, ArgToken::Token(t) if t == need_name))
                        .then_some(1)
                })
            });
            match consumed {
                Some(per) => self.demand(need, crafts.saturating_mul(per), view, d, depth + 1),
                // A station or a tool: one serves every craft and every consumer.
                None if d.once.insert(need) => self.demand(need, 1, view, d, depth + 1),
                None => {}
            }
        }
        // The station the craft's screen is opened on, which the graph may not link to the
        // item (a furnace "outputs" iron ingots): its 8 cobblestone belong to the iron chain.
        let station = rule
            .and_then(|r| self.config.screens.get(&r.screen))
            .and_then(|s| s.station.as_deref())
            .and_then(|n| view.kg.node(n));
        if let Some(station) = station
            && d.once.insert(station)
        {
            self.demand(station, 1, view, d, depth + 1);
        }
    }

    fn first_missing(
        &self,
        item: NodeIndex,
        view: &View,
        short: &BTreeMap<NodeIndex, u32>,
        visited: &mut BTreeSet<NodeIndex>,
    ) -> Option<Goal> {
        if !visited.insert(item) {
            return None;
        }
        for need in self.requirements(item, view) {
            // A gathered ingredient the whole target needs more of is gathered now, while its
            // source is at hand: a wooden pickaxe from one log went looking for a second tree
            // after the first had been left.
            let gather_more = short.get(&need).is_some_and(|n| *n > 0);
            if !gather_more
                && (self.enough(view, need, item)
                    || self.station_in_use(view.kg.name(need))
                    || self.bag_tools.contains_key(&need))
            {
                continue;
            }
            if let Some(g) = self.first_missing(need, view, short, visited) {
                return Some(g);
            }
        }
        let name = view.kg.name(item);
        if self.config.craft.contains_key(name) {
            Some(Goal::Craft(item))
        } else if self.config.gather.contains_key(name) {
            Some(Goal::Gather(item))
        } else {
            Some(Goal::Unknown(item))
        }
    }

    /// A placed station (crafting table, furnace) whose screen is open has left the inventory
    /// but is there.
    fn station_in_use(&self, name: &str) -> bool {
        self.screen
            .as_ref()
            .and_then(|s| self.config.screens.get(s))
            .and_then(|r| r.station.as_deref())
            == Some(name)
    }

    fn queue(&mut self, calls: &[CallTemplate], why: &str) {
        for c in calls {
            self.pending.push_back((c.clone(), why.to_string()));
        }
    }

    fn close_screen(&mut self, why: &str) {
        if let Some(open) = self.screen.take()
            && let Some(rule) = self.config.screens.get(&open).cloned()
        {
            self.queue(&rule.close, why);
            if rule.taken_back {
                // The station comes back into a slot the screen showed empty.
                self.empty_hotbar_keys.clear();
                self.taking_back = rule.station.clone();
            }
        }
    }

    fn craft(&mut self, item: NodeIndex, view: &View) -> Result<(), String> {
        let name = view.kg.name(item).to_string();
        let rule = self
            .config
            .craft
            .get(&name)
            .cloned()
            .ok_or_else(|| format!("no craft rule for {name}"))?;
        if self.screen.as_deref() != Some(rule.screen.as_str()) {
            self.close_screen(&format!("switching screens to craft {name}"));
            let screen = self
                .config
                .screens
                .get(&rule.screen)
                .cloned()
                .ok_or_else(|| format!("no screen {}", rule.screen))?;
            let why = format!("open the {} to craft {name}", rule.screen);
            self.queue(&screen.open, &why);
            self.opening = Some((why, screen.open.len()));
            self.screen = Some(rule.screen.clone());
            return Ok(());
        }
        let mut call = vec![ArgToken::Token(rule.skill.clone())];
        call.extend(rule.args.iter().cloned());
        let ingredients: Vec<NodeIndex> = rule
            .args
            .iter()
            .filter_map(|a| match a {
                ArgToken::Token(t) => view.kg.node(t),
                ArgToken::Number(_) => None,
            })
            .collect();
        self.note_craft_sent(item, &ingredients, view);
        self.pending.push_back((
            call,
            format!("all ingredients of {name} are here: craft it"),
        ));
        Ok(())
    }

    fn gather(&mut self, item: NodeIndex, view: &View) -> Result<(), String> {
        let name = view.kg.name(item).to_string();
        let rule = self
            .config
            .gather
            .get(&name)
            .cloned()
            .ok_or_else(|| format!("no gather rule for {name}"))?;
        if self.screen.is_some() {
            if self.looked_after_blind.take() == Some(item)
                && let Some((gathered, before)) = self.blind_before.take()
                && gathered == item
                && matches!((before, view.held(item)), (Some(b), Some(n)) if n <= b)
            {
                self.blind_gather_empty = Some(item);
            }
            self.close_screen(&format!("close the screen to go and get {name}"));
            return Ok(());
        }
        if self.gather_item != Some(item) {
            self.gather_item = Some(item);
            self.gather_streak = 0;
            self.approach_walks = None;
            self.fruitless_pickups = 0;
            self.mine_view = None;
        }
        let mut call = vec![ArgToken::Token(rule.skill.clone())];
        call.extend(rule.args.iter().cloned());
        let Some(approach) = rule.approach.as_deref() else {
            self.gather_blind(item, &name, call, view);
            return Ok(());
        };
        let goal = GatherGoal {
            item,
            name: &name,
            approach,
            rule: &rule,
            walk_seconds: rule
                .approach_seconds
                .unwrap_or(self.config.approach_seconds),
        };
        if self.walk_to_drop(&goal, view) {
            return Ok(());
        }
        match self.worth_approaching(nearest_entity(approach, view), approach) {
            None => self.look_for(approach, view),
            Some(e) => self.close_in(&goal, &e, call, view),
        }
        Ok(())
    }

    /// A gather with nothing to approach (the rule's skill works where the player stands):
    /// queued, and its item looked for in the bag afterwards.
    fn gather_blind(&mut self, item: NodeIndex, name: &str, call: Vec<ArgToken>, view: &View) {
        if self.blind_gather_empty.take() == Some(item) && !self.config.detour.is_empty() {
            self.go_round(&format!(
                "the bag held no more {name} after the last try: go elsewhere first"
            ));
        }
        self.gathered_unseen.insert(item);
        self.blind_before = Some((item, view.held(item)));
        self.pending.push_back((call, format!("get {name}")));
    }

    /// After a mine whose item did not come: walk to where the mined thing stood to pick up its
    /// drop (longer each fruitless time). True when the walk is queued.
    fn walk_to_drop(&mut self, goal: &GatherGoal, view: &View) -> bool {
        let GatherGoal {
            item,
            name,
            approach,
            ..
        } = *goal;
        let Some((mined, before)) = self.mined.take() else {
            return false;
        };
        let Some(seconds) = self.config.pickup_walk.filter(|_| mined == item) else {
            return false;
        };
        let came = match (before, view.held(item)) {
            (Some(b), Some(n)) => n > b,
            (None, Some(_)) => true,
            (_, None) => false,
        };
        // Either way the next mine is a fresh try: the item came, or its drop is walked to.
        self.gather_streak = 0;
        if came {
            self.fruitless_pickups = 0;
            self.mine_view = None;
            self.climbed_for_drop = None;
            return false;
        }
        self.last_turn = None;
        if self.fruitless_pickups == 0 && self.hud_free_slots(view) <= 1 {
            // The hotbar may be full with one item the detector does not know: the
            // drop may have gone to the bag's other rows (the full chain's iron ore
            // went there twice, and the loop mined on to the step limit).
            self.gathered_unseen.insert(item);
        }
        let longer = 1 + (self.fruitless_pickups / 2).min(2);
        self.fruitless_pickups += 1;
        // The second walk in vain: the drop lies up a wall the walks cannot climb.
        if self.fruitless_pickups == 2
            && !self.config.climb.is_empty()
            && self.climbed_for_drop != Some(item)
        {
            self.climbed_for_drop = Some(item);
            let climb = self.config.climb.clone();
            self.queue(
                &climb,
                &format!(
                    "walks to the {name} the {approach} dropped did not get it: climb toward it"
                ),
            );
        }
        // With a jump first: the drop may lie a step up (a trunk on a terrace).
        self.walk(
            JUMP,
            (seconds * f64::from(longer) * 10.0).round() / 10.0,
            format!(
                "mined the {approach}: walk to where it stood to pick up the {name} it dropped"
            ),
        );
        true
    }

    /// Nothing to approach in view: walk to where the last aimed-at one was, go round after
    /// looking around too often, else look around.
    fn look_for(&mut self, approach: &str, view: &View) {
        self.gather_streak = 0;
        self.approach_walks = None;
        let lost_on_the_way = std::mem::take(&mut self.approaching);
        if let (Some(seconds), true) = (
            self.config.lost_target_walk,
            self.last_turn.take().is_some() || lost_on_the_way,
        ) {
            self.walk(
                JUMP,
                seconds,
                format!("the {approach} aimed at a step ago is out of sight: walk to where it was"),
            );
            return;
        }
        if let Some(scout) = self.config.scout.clone() {
            self.scout(&scout, approach, view);
            return;
        }
        if self.explores_since_gather >= EXPLORES_BEFORE_DETOUR && !self.config.detour.is_empty() {
            // Not an exploration: the thing in view must not cut it short.
            self.explores_since_gather = 0;
            self.go_round(&format!(
                "looked around {EXPLORES_BEFORE_DETOUR} times for a {approach} without getting one: go round"
            ));
            return;
        }
        self.explores_since_gather += 1;
        let explore = self.config.explore.clone();
        self.queue(&explore, &format!("no {approach} in view: look around"));
        self.exploring_for = view.kg.node(approach);
    }

    /// Nothing to approach in view, with `[planner.scout]`: look around once, then walk on in
    /// the heading the look around came back to (a full circle ends where it began), a walk a
    /// step, turning aside first where the last walk left the view as it was (a wall, a cliff
    /// face) or what must be avoided (water) lies ahead. Whatever comes into view ends it.
    fn scout(&mut self, scout: &ScoutConfig, approach: &str, view: &View) {
        self.exploring_for = view.kg.node(approach);
        let digest = view.perception.view_digest.clone();
        if self.scout_legs_left == 0 && !self.give_up.passing_over() {
            let explore = self.config.explore.clone();
            self.queue(&explore, &format!("no {approach} in view: look around"));
            self.scout_legs_left = scout.legs;
            self.scout_from = None;
            self.scout_unlevel = false;
            return;
        }
        if std::mem::take(&mut self.scout_unlevel)
            && let Some(level) = &scout.level
        {
            self.queue(
                std::slice::from_ref(level),
                "the view was turned to aim: level it before walking on",
            );
            self.scout_from = None;
        }
        let blocked = self
            .scout_from
            .take()
            .and_then(|before| view_change(&before, &digest))
            .is_some_and(|change| change < scout.blocked_change);
        let ahead = scout.avoid.as_deref().and_then(|class| {
            let (cx, cy) = view.crosshair();
            let min_w = scout.avoid_width * view.perception.frame_w as f32;
            view.perception
                .entities
                .iter()
                .find(|e| {
                    e.class == class && e.y > cy && e.w >= min_w && (e.x - cx).abs() < e.w / 2.0
                })
                .map(|e| e.class.clone())
        });
        if !blocked {
            self.scout_climbed = false;
        }
        if blocked && ahead.is_none() && !self.config.climb.is_empty() && !self.scout_climbed {
            self.scout_climbed = true;
            let climb = self.config.climb.clone();
            self.queue(
                &climb,
                "the last walk did not change the view (a wall?): climb it",
            );
        } else if blocked || ahead.is_some() {
            self.scout_climbed = false;
            let side = if self.scout_turns.is_multiple_of(2) {
                1.0
            } else {
                -1.0
            };
            self.scout_turns += 1;
            let why = match &ahead {
                Some(class) => format!("{class} ahead: turn aside"),
                None => "the last walk did not change the view (something in the way): turn aside"
                    .into(),
            };
            self.pending.push_back((
                vec![
                    ArgToken::Token(TURN_BY.into()),
                    ArgToken::Number(side * scout.turn_deg),
                ],
                why,
            ));
        }
        let left = self.scout_legs_left;
        self.scout_legs_left = left.saturating_sub(1);
        self.give_up.walked_on();
        self.scout_from = Some(digest);
        self.queue(
            std::slice::from_ref(&scout.leg),
            &format!(
                "no {approach} in view: walk on ({} of {} walks before looking around again)",
                scout.legs - left + 1,
                scout.legs
            ),
        );
    }

    /// The thing to approach is in view: aim at it, walk closer, or mine it.
    fn close_in(
        &mut self,
        goal: &GatherGoal,
        e: &EnvironmentEntity,
        call: Vec<ArgToken>,
        view: &View,
    ) {
        // Walking toward it is decided anew each time it is in view (`walk_closer`).
        self.approaching = false;
        let (cx, cy) = view.crosshair();
        let aim_y = e.y - e.h / 2.0 + e.h * goal.rule.aim_y.clamp(0.0, 1.0);
        let (dx, dy) = ((e.x - cx).round(), (aim_y - cy).round());
        let prev = self.last_turn.take();
        let before_prev = self.turn_before_last.take();
        let back_where_it_was = |x: f32, y: f32| x.hypot(y) <= 2.0 * self.config.aim_tolerance_px;
        let turns_back = prev.is_some_and(|(px, py)| {
            back_where_it_was(dx + px, dy + py)
                || before_prev.is_some_and(|(qx, qy)| back_where_it_was(dx + px + qx, dy + py + qy))
        });
        // A near object fills much of the view and its box jumps from frame to frame: with the
        // crosshair well inside it (the middle half across, below its top fifth) it is aimed at,
        // even away from the aim point (the closed loop turned at a trunk right in front of it
        // until its steps ran out).
        let inside_near = e.in_reach
            && (e.x - cx).abs() <= e.w / 4.0
            && cy >= e.y - e.h / 2.0 + 0.2 * e.h
            && cy <= e.y + e.h / 2.0;
        let aimed = dx.hypot(dy) <= self.config.aim_tolerance_px || inside_near;
        let approach = goal.approach;
        if !aimed && turns_back {
            self.gather_streak = 0;
            self.walk(
                WALK,
                goal.walk_seconds,
                format!("the {approach} to aim at is back where the view was: walk on instead"),
            );
        } else if !aimed {
            self.gather_streak = 0;
            self.last_turn = Some((dx, dy));
            self.turn_before_last = prev;
            self.scout_unlevel = true;
            self.pending.push_back((
                vec![
                    ArgToken::Token("turn".into()),
                    ArgToken::Number(f64::from(dx)),
                    ArgToken::Number(f64::from(dy)),
                ],
                format!("{approach} at ({dx:+}, {dy:+}) from the crosshair: aim at it"),
            ));
        } else if !e.in_reach || self.gather_streak % 2 == 1 {
            self.walk_closer(goal, e, view);
        } else {
            self.mine(goal, e, call, view);
        }
    }

    /// Aimed at the thing, but out of reach (or mined without its item coming): walk closer;
    /// jump when the last walk did not bring it closer, go round after too many walks.
    fn walk_closer(&mut self, goal: &GatherGoal, e: &EnvironmentEntity, view: &View) {
        let seconds = self.approach_walk_seconds(goal, e, view);
        let GatherGoal { name, approach, .. } = *goal;
        let why = if e.in_reach {
            format!("still no {name} after mining the {approach}: walk closer")
        } else {
            format!("aimed at the {approach}, not in reach: walk closer")
        };
        self.gather_streak = if e.in_reach {
            self.gather_streak + 1
        } else {
            0
        };
        let walks = match self.approach_walks {
            Some((first, n)) if e.w <= first * (1.0 + APPROACH_GROWTH) => (first, n + 1),
            _ => (e.w, 1),
        };
        if walks.1 > WALKS_BEFORE_DETOUR && !self.config.detour.is_empty() {
            self.approach_walks = None;
            self.last_walk = None;
            self.go_round(&format!(
                "{WALKS_BEFORE_DETOUR} walks toward the {approach} did not bring it closer: go round"
            ));
            return;
        }
        self.approach_walks = Some(walks);
        // Lost from view after this walk, it is walked on to (`look_for`).
        self.approaching = !e.in_reach;
        // Not closer: the box stayed where it was and did not grow. The detector's boxes
        // of one trunk jitter by a quarter of their width from frame to frame (seed 187: a
        // stump 90-117 px wide, seven walks against a terrace wall without a jump).
        let stuck = self
            .last_walk
            .take()
            .is_some_and(|before| where_it_was(before, e) && e.w < before.2 * (1.0 + STUCK_JITTER));
        self.last_walk = Some((e.x, e.y, e.w));
        if stuck {
            self.walk(
                JUMP,
                seconds,
                format!("the {approach} did not come closer: jump forward onto the block"),
            );
        } else {
            let skill = if self.config.approach_jumping {
                JUMP
            } else {
                WALK
            };
            self.walk(skill, seconds, why);
        }
    }

    /// One walk toward `e`: `walk_seconds`, longer for a thing far off (`far_seconds`), rounded
    /// to a tenth.
    fn approach_walk_seconds(&self, goal: &GatherGoal, e: &EnvironmentEntity, view: &View) -> f64 {
        let base = goal.walk_seconds;
        let reach = view.perception.reach_w;
        match self.config.far_seconds {
            Some(far) if reach > 0.0 && e.w > 0.0 && !e.in_reach => {
                let reaches = f64::from(reach / e.w);
                let seconds = base + far * (reaches - 1.0).max(0.0);
                (seconds.min(self.config.approach_max_seconds.max(base)) * 10.0).round() / 10.0
            }
            _ => base,
        }
    }

    /// Aimed at and in reach: mine it, unless it looked the same at several mines in a row
    /// (then go round).
    fn mine(&mut self, goal: &GatherGoal, e: &EnvironmentEntity, call: Vec<ArgToken>, view: &View) {
        let GatherGoal {
            item,
            name,
            approach,
            ..
        } = *goal;
        let same = self.mine_view.is_some_and(|(before, _)| {
            where_it_was(before, e) && (before.2 - e.w).abs() < box_jitter(before.2)
        });
        let same_mines = if same {
            self.mine_view.map_or(0, |(_, n)| n) + 1
        } else {
            0
        };
        if same_mines >= SAME_MINES_BEFORE_DETOUR && !self.config.detour.is_empty() {
            self.mine_view = None;
            self.gather_streak = 0;
            self.go_round(&format!(
                "the {approach} looked the same at {} mines in a row and no {name} came: go round",
                same_mines + 1
            ));
            return;
        }
        self.mine_view = Some(((e.x, e.y, e.w), same_mines));
        self.gather_streak += 1;
        self.approach_walks = None;
        self.mined = Some((item, view.held(item)));
        if self.hud_hotbar_full(view) {
            self.gathered_unseen.insert(item);
        }
        self.pending.push_back((
            call,
            format!("{approach} aimed at and in reach: get {name}"),
        ));
    }

    /// Whether every slot of the HUD hotbar shows an icon (and no screen showed it empty since
    /// the last gather): an item picked up then goes to the bag's other rows.
    fn hud_hotbar_full(&self, view: &View) -> bool {
        !hotbar_slots("hud.hotbar", view).is_empty() && self.hud_free_slots(view) == 0
    }

    /// How many slots of the HUD hotbar show no icon or were shown empty by a screen since the
    /// last gather.
    fn hud_free_slots(&self, view: &View) -> usize {
        hotbar_slots("hud.hotbar", view)
            .iter()
            .filter(|(key, c)| self.empty_hotbar_keys.contains(key) || !any_icon_on(*c, view))
            .count()
    }

    /// Queues the next detour, with why.
    fn go_round(&mut self, why: &str) {
        let detour = self.detour();
        self.queue(&detour, why);
    }

    /// The next detour: `detour` with its turns mirrored every other time.
    fn detour(&mut self) -> Vec<CallTemplate> {
        let mirror = self.detours % 2 == 1;
        self.detours += 1;
        self.config
            .detour
            .iter()
            .map(|call| {
                let turn =
                    matches!(call.first(), Some(ArgToken::Token(t)) if t == "turn" || t == TURN_BY);
                call.iter()
                    .enumerate()
                    .map(|(i, t)| match t {
                        ArgToken::Number(v) if mirror && turn && i == 1 => ArgToken::Number(-v),
                        other => other.clone(),
                    })
                    .collect()
            })
            .collect()
    }

    /// Queues one walk (or jump) of `seconds` toward what is aimed at.
    fn walk(&mut self, skill: &str, seconds: f64, why: String) {
        self.pending.push_back((
            vec![ArgToken::Token(skill.into()), ArgToken::Number(seconds)],
            why,
        ));
    }

    /// Turns a template into a call, reading positions and hotbar keys off the screen.
    fn resolve(&self, template: &CallTemplate, view: &View) -> Result<SkillCall, String> {
        let (skill, args) = match template.split_first() {
            Some((ArgToken::Token(s), args)) => (s.clone(), args),
            _ => return Err("a planner call must start with a skill name".into()),
        };
        let mut out = Vec::new();
        let mut push = |value: f64| {
            out.push(CallArg { name: None, value });
        };
        for a in args {
            match a {
                ArgToken::Number(v) => push(*v),
                ArgToken::Token(t) => {
                    if let Some(item) = t.strip_prefix("hotbar:") {
                        push(f64::from(self.hotbar_key(item, view)?));
                        continue;
                    }
                    if let Some(item) = t.strip_prefix(COUNT_PREFIX) {
                        let node = view
                            .kg
                            .node(item)
                            .ok_or_else(|| format!("\"{item}\" is not a graph node"))?;
                        push(f64::from(self.stack_count(node, view)));
                        continue;
                    }
                    let (x, y) = if t == FREE_HOTBAR_SLOT {
                        self.spare_hotbar_slot(view)?
                    } else {
                        let node = view
                            .kg
                            .node(t)
                            .ok_or_else(|| format!("\"{t}\" is not a graph node"))?;
                        self.screen_icon(node, view)
                            .or_else(|| view.icon(node))
                            .ok_or_else(|| format!("no {t} icon on the screen"))?
                    };
                    push(f64::from(x.round()));
                    push(f64::from(y.round()));
                }
            }
        }
        Ok(SkillCall { skill, args: out })
    }

    /// The count drawn on the stack `resolve` takes `node` from (1 when none is read).
    fn stack_count(&self, node: NodeIndex, view: &View) -> u32 {
        self.screen_stack(node, view)
            .or_else(|| view.bag_icon(node))
            .and_then(|i| i.count)
            .unwrap_or(1)
            .max(1)
    }

    /// With a screen open, the item's icon that sits in one of that screen's slots: the HUD
    /// hotbar can still show under the screen (Minetest draws it), and a click there moves
    /// nothing.
    fn screen_icon(&self, node: NodeIndex, view: &View) -> Option<(f32, f32)> {
        self.screen_stack(node, view).map(|i| (i.x, i.y))
    }

    /// The icon [`Self::screen_icon`] points at.
    fn screen_stack<'v>(&self, node: NodeIndex, view: &View<'v>) -> Option<&'v InventoryIcon> {
        let slots = self.take_slots(view)?;
        let icons = &view.visual.attributes.get(&node)?.icons;
        biggest(icons.iter().filter(|i| on_a_slot(i.x, i.y, &slots, view)))
    }

    /// With a screen open, the slots ingredients are taken from (`take_from`, else all).
    fn take_slots(&self, view: &View) -> Option<Vec<(f32, f32)>> {
        let screen = self.screen.as_deref()?;
        Some(
            match self
                .config
                .screens
                .get(screen)
                .filter(|r| !r.take_from.is_empty())
            {
                Some(rule) => rule
                    .take_from
                    .iter()
                    .flat_map(|region| screen_slots(&format!("{screen}.{region}"), view))
                    .collect(),
                None => screen_slots(screen, view),
            },
        )
    }

    /// The screen whose slots hold the most icons on this frame, if any: a screen left open
    /// (by an earlier session, or by the player) is seen, not assumed closed.
    fn screen_in_view(&self, view: &View) -> Option<String> {
        self.config
            .screens
            .keys()
            .map(|screen| {
                let slots = screen_slots(screen, view);
                let n = view
                    .perception
                    .icons
                    .iter()
                    .filter(|i| on_a_slot(i.x, i.y, &slots, view))
                    .count();
                (n, screen)
            })
            .filter(|(n, s)| {
                *n > 0
                    || (view.perception.marked_screens.contains(s)
                        && self.config.screens.get(*s).is_some_and(|r| r.marker_alone))
            })
            // Screens that draw the bag alike tie: the one whose marker shows wins.
            .max_by_key(|(n, s)| (*n, view.perception.marked_screens.contains(s)))
            .map(|(_, s)| s.clone())
    }

    /// The hotbar key (1-9) whose slot holds `item`'s icon.
    fn hotbar_key(&self, item: &str, view: &View) -> Result<u8, String> {
        let node = view
            .kg
            .node(item)
            .ok_or_else(|| format!("\"{item}\" is not a graph node"))?;
        let icons: Vec<&InventoryIcon> = view
            .visual
            .attributes
            .get(&node)
            .map(|a| a.icons.iter().collect())
            .unwrap_or_default();
        // The planner's idea of the open screen can be a step ahead of the game (it queues a
        // screen's opening calls at once), so both the HUD hotbar and the screen's are tried.
        let mut regions = vec!["hud.hotbar".to_string()];
        if let Some(s) = &self.screen {
            regions.push(format!("{s}.hotbar"));
        }
        if let Some(key) = regions
            .iter()
            .find_map(|row| hotbar_key_in(&icons, row, view))
        {
            return Ok(key);
        }
        // A tool the last open screen showed in its hotbar row, missed on the HUD now.
        match self.bag_tools.get(&node) {
            Some(Some(key)) => Ok(*key),
            _ => Err(format!("{item} is not in the hotbar")),
        }
    }

    /// The centre of a hotbar slot of the open screen whose item can go to the bag: one whose
    /// icons are all of items the tech tree has no use for (nothing crafted, produced or mined
    /// with them, no fuel, no tool the bag showed), or one with no icon the detector named
    /// (empty, or saplings, apples, seeds: it has no class for them), from the right.
    fn spare_hotbar_slot(&self, view: &View) -> Result<(f32, f32), String> {
        let screen = self
            .screen
            .as_deref()
            .ok_or("no screen is open to free a hotbar slot in")?;
        let slots = hotbar_slots(&format!("{screen}.hotbar"), view);
        let items_on = |c: (f32, f32)| -> Vec<NodeIndex> {
            view.visual
                .attributes
                .iter()
                .filter(|(_, a)| a.icons.iter().any(|i| view.layout.on_slot(i.x, i.y, c)))
                .map(|(n, _)| *n)
                .collect()
        };
        let has_no_use = |n: NodeIndex| {
            !self.bag_tools.contains_key(&n)
                && !view.kg.graph.edges(n).any(|e| {
                    matches!(
                        *e.weight(),
                        Relation::IsUsedToCraft
                            | Relation::IsUsedToProduce
                            | Relation::CanBeUsedToMine
                            | Relation::IsTheFuelOf
                    )
                })
        };
        let junk = slots.iter().rev().find(|(_, c)| {
            let items = items_on(*c);
            !items.is_empty() && items.into_iter().all(has_no_use)
        });
        let unnamed = || slots.iter().rev().find(|(_, c)| !any_icon_on(*c, view));
        // A swap (`to_hotbar_picks_slot`) best goes to an empty slot; a shift-click off the
        // hotbar needs an item there.
        let slot = if self.config.to_hotbar_picks_slot {
            unnamed().or(junk)
        } else {
            junk.or_else(unnamed)
        };
        slot.map(|(_, c)| *c)
            .ok_or_else(|| "every hotbar slot holds an item the tech tree uses".into())
    }
}
