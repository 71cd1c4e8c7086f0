//! The planner policy: a deterministic player with no LLM. The knowledge graph says what is
//! missing: it walks "is used to craft", "is used to produce", "outputs" and "can be used to
//! mine" back from the target to the first item not in the inventory. The `[planner]` section of
//! `config/games/<game>.toml` says how to get an item (which skill, on which screen, with which
//! arguments), and the detections give the arguments. Its calls are validated like the LLM's.
//!
//! It serves tests, the offline demo and as the baseline an LLM has to beat.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

use crate::knowledge::{KnowledgeGraph, Relation, VisualState};
use crate::perception::{EnvironmentEntity, InventoryIcon, Perception};
use crate::skills::GuiLayout;
use crate::skills::{CallArg, SkillCall};

mod bag_memory;
mod config;
mod demand;
mod dig;
mod give_up;
mod hud_reads;
mod screens;
mod search;

pub use config::{ArgToken, CallTemplate, DigDepth, GatherRule, PlannerConfig, ScoutConfig};

/// Where the last open screen showed a tool or station in the bag (`Planner::bag_tools`).
#[derive(Debug, Clone, Copy)]
struct BagTool {
    /// The hotbar key of its slot there; none: the bag's other rows.
    key: Option<u8>,
    /// How surely the screen's hotbar row read it at that key: a HUD read of the key as another
    /// item more surely forgets the tool (`hud_reads.rs`). None where it was noted otherwise
    /// (its key kept across a fetch to the hotbar).
    read: Option<f32>,
}

/// The skills a walk toward a thing calls (`walk`): a plain walk, and a jump when stuck.
const WALK: &str = "move_forward";
const JUMP: &str = "jump_forward";
const TURN_BY: &str = "turn_by";
/// How much of its width the box of a target walked toward may move or grow between two walks
/// and still count as not closer (a walk of 0.5 s toward a trunk in sight grows its box by a
/// third or more).
const STUCK_JITTER: f32 = 0.15;

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
    bag_tools: BTreeMap<NodeIndex, BagTool>,
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
    /// A walk of the scout's current round (a look around and its walks) was blocked, and how
    /// many rounds in a row before it had one: a look around ends where it began, so each such
    /// round sets off `turn_deg` further round than the one before (world 3105 from nothing:
    /// every round walked into the same hill, climbed, dug a block further into it, for 40
    /// minutes).
    scout_round_blocked: bool,
    scout_blocked_rounds: u32,
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
    /// How far the digging for things under the ground has gone (`dig`).
    dug: dig::Dug,
    /// What the HUD hotbar read, a slot a key, in the last frame with no screen in view.
    hud_reads: BTreeMap<u8, hud_reads::SlotRead>,
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
        self.held_on(node, None)
    }

    /// [`Self::held`], counting only the icons on `slots` when any is there (see
    /// [`Self::count`]).
    fn held_on(&self, node: NodeIndex, slots: Option<&[(f32, f32)]>) -> Option<u32> {
        match self.count(node, slots) {
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

/// How much the view changed between two frames' digests (see `perception::view_digest`);
/// `None` when either is missing (a session recorded before digests).
fn view_change(before: &str, after: &str) -> Option<f32> {
    crate::perception::view_digest::change(before, after)
}

/// Whether `e`'s box is centred where the box `before` (x, y, w) was, within its jitter.
fn where_it_was(before: (f32, f32, f32), e: &EnvironmentEntity) -> bool {
    let near = box_jitter(before.2);
    (before.0 - e.x).abs() < near && (before.1 - e.y).abs() < near
}

/// A planner argument: the x and y of a hotbar slot whose item can go to the bag.
const FREE_HOTBAR_SLOT: &str = "@spare_hotbar_slot";

/// The hotbar key (1-9) of the slot of `screen`'s hotbar row that one of `icons` sits on.
fn hotbar_key_in(icons: &[&InventoryIcon], screen: &str, view: &View) -> Option<u8> {
    view.layout
        .hotbar_row(screen)
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
            scout_round_blocked: false,
            scout_blocked_rounds: 0,
            climbed_for_drop: None,
            approaching: false,
            opening: None,
            bag: bag_memory::BagMemory::default(),
            give_up: give_up::GiveUp::default(),
            dug: dig::Dug::default(),
            hud_reads: BTreeMap::new(),
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
        if let PlanStep::Act(call, _) = &step {
            let digs = self.config.gather.values().filter_map(|r| r.dig.as_ref());
            self.dug.note_call(&call.skill, digs);
        }
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
            self.scout_round_blocked = false;
            self.scout_blocked_rounds = 0;
        }
        step
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

    fn next_pending(&mut self, view: &View) -> PlanStep {
        // The move would take it off the hotbar (a shift-click goes both ways): keep its key.
        if let Some(key) = self.fetch_not_needed(view)
            && let Some((fetch, _)) = self.pending.pop_front()
            && let Some(ArgToken::Token(item)) = fetch.get(1)
            && let Some(node) = view.kg.node(item)
        {
            self.bag_tools.insert(
                node,
                BagTool {
                    key: Some(key),
                    read: None,
                },
            );
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

    fn queue(&mut self, calls: &[CallTemplate], why: &str) {
        for c in calls {
            self.pending.push_back((c.clone(), why.to_string()));
        }
    }
}
