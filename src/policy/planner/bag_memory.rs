//! What the planner remembers of the bag between looks: what the last open screen showed in
//! it, and ingredient icons that a craft proved wrong.

use std::collections::{BTreeMap, BTreeSet};

use petgraph::Direction;
use petgraph::graph::NodeIndex;

use super::{Planner, View, on_a_slot};
use crate::knowledge::{Relation, VisualState};

/// Crafts in a row whose item did not come, each taking an ingredient from the same slot,
/// after which that slot's icon is not the ingredient (a sand stack read as planks was crafted
/// into sticks 200 times).
const CRAFT_MISSES_BEFORE_REFUTING: u32 = 2;

/// The bag as the planner last saw it.
#[derive(Debug, Default)]
pub(super) struct BagMemory {
    /// What the last screen in view showed in its bag, with the count read (`None`: not
    /// readable). Tools and stations are left to `bag_tools` (they leave the bag when placed or
    /// worn out, with no screen open). With no screen in view the planner plans from this for
    /// what the HUD does not show: the Minetest HUD shows only the hotbar, and a stone pickaxe
    /// from nothing opened and closed the inventory for 670 steps, the sticks in the bag's main
    /// rows deciding "get cobblestone" with it open and "get a tree for sticks" with it shut.
    seen: BTreeMap<NodeIndex, Option<u32>>,
    /// The craft call last queued: its item, how many the bag held then, and the ingredient
    /// icons it takes (item, slot centre).
    craft_sent: Option<CraftSent>,
    /// Crafts in a row whose item did not come, by ingredient and slot (rounded centre).
    misses: BTreeMap<(NodeIndex, i32, i32), u32>,
    /// Ingredient icons a craft refuted at a bag slot: left out of the view until a screen
    /// shows that slot without the icon.
    refuted: Vec<(NodeIndex, (f32, f32))>,
    /// The slots of the last screen's hotbar row that showed an item: hotbar key -> the count
    /// read there (`None`: a single item). See [`Planner::without_stacks_the_bag_showed_as_other`].
    row: BTreeMap<u8, Option<u32>>,
}

#[derive(Debug)]
struct CraftSent {
    item: NodeIndex,
    before: Option<u32>,
    takes: Vec<(NodeIndex, (f32, f32))>,
}

fn slot_key(node: NodeIndex, (x, y): (f32, f32)) -> (NodeIndex, i32, i32) {
    (node, x.round() as i32, y.round() as i32)
}

impl Planner {
    /// Whether the bag holds `node`: in view, or (with no screen open) as the last screen
    /// showed it.
    pub(super) fn holds(&self, view: &View, node: NodeIndex) -> bool {
        view.has(node) || self.remembered(view, node).is_some()
    }

    /// How many of `node` the bag holds as far as can be told (`None`: a count not readable):
    /// the most of what the view shows and what the last screen showed (a gather since may
    /// have added to a stack the HUD shows; nothing is used up with no screen open).
    pub(super) fn holding(
        &self,
        view: &View,
        node: NodeIndex,
        slots: Option<&[(f32, f32)]>,
    ) -> Option<u32> {
        let shown = view.has(node).then(|| view.count(node, slots));
        match (shown, self.remembered(view, node)) {
            (Some(Some(a)), Some(Some(b))) => Some(a.max(b)),
            (Some(n), None) | (None, Some(n)) => n,
            (Some(None), _) | (_, Some(None)) => None,
            (None, None) => Some(0),
        }
    }

    /// What the last screen showed of `node`, when no screen is open (believed or in view):
    /// with one believed open, what is in view is what a craft can take.
    fn remembered(&self, view: &View, node: NodeIndex) -> Option<Option<u32>> {
        if self.screen.is_some() || self.screen_in_view(view).is_some() {
            return None;
        }
        self.bag.seen.get(&node).copied()
    }

    /// Items a call takes by hotbar key: tools (whatever "can be used to mine") and stations.
    pub(super) fn keyed_items(&self, view: &View) -> BTreeSet<NodeIndex> {
        let graph = &view.kg.graph;
        let mut out: BTreeSet<NodeIndex> = self
            .config
            .screens
            .values()
            .filter_map(|r| r.station.as_deref().and_then(|s| view.kg.node(s)))
            .collect();
        out.extend(graph.node_indices().filter(|n| {
            graph
                .edges_directed(*n, Direction::Outgoing)
                .any(|e| *e.weight() == Relation::CanBeUsedToMine)
        }));
        out
    }

    /// With a screen in view, remembers what its bag shows (see [`BagMemory::seen`]).
    pub(super) fn note_bag_seen(&mut self, view: &View) {
        if self.screen_in_view(view).is_none() {
            return;
        }
        let keyed = self.keyed_items(view);
        let slots = self.take_slots(view);
        let seen = view
            .visual
            .attributes
            .iter()
            .filter(|(node, a)| {
                !keyed.contains(node)
                    && a.icons
                        .iter()
                        .any(|i| view.layout.in_bag(i.x, i.y) && !self.on_hud(view, i.x, i.y))
            })
            .map(|(node, _)| (*node, view.count(*node, slots.as_deref())))
            .collect();
        self.bag.seen = seen;
    }

    /// With a screen in view, notes the stacks of its hotbar row (key and count).
    pub(super) fn note_bag_row(&mut self, view: &View, screen: &str) {
        self.bag.row = view
            .layout
            .hotbar_row(screen)
            .into_iter()
            .filter_map(|(key, centre)| {
                let icon = view
                    .perception
                    .icons
                    .iter()
                    .filter(|i| view.layout.on_slot(i.x, i.y, centre))
                    .max_by(|a, b| a.conf.total_cmp(&b.conf))?;
                Some((key, icon.count))
            })
            .collect();
    }

    /// `visual` without the HUD's stacks (a count drawn) of an item the last screen showed none
    /// of in the bag (tools and stations aside: they have rules of their own), on a hotbar key
    /// where that screen showed a stack too: the same stack, which the screen read as something
    /// else. A stack does not give way to another with no screen open (the planner places
    /// only stations; a pickup joins its own stack or an empty slot). The counts need not
    /// agree: the client's 3 and 8 differ in two cells. The HUD read a stack of eight coarse
    /// dirt as iron ore (0.65-0.72), the furnace's screen showed no iron ore (and the stack as
    /// three of something else); the planner opened the furnace to smelt it and closed it to
    /// dig for iron ore, in turn, for six minutes (world 3112 from nothing).
    pub(super) fn without_stacks_the_bag_showed_as_other(
        &self,
        visual: &mut VisualState,
        view: &View,
    ) {
        if self.bag.row.is_empty() {
            return;
        }
        let keyed = self.keyed_items(view);
        for (key, centre) in view.layout.hotbar_row("hud") {
            if !matches!(self.bag.row.get(&key), Some(Some(_))) {
                continue;
            }
            for (node, a) in visual.attributes.iter_mut() {
                if keyed.contains(node) || self.bag.seen.contains_key(node) {
                    continue;
                }
                a.icons
                    .retain(|i| !(i.count.is_some() && on_a_slot(i.x, i.y, &[centre], view)));
            }
        }
    }

    /// How many of `node` the open screen's bag holds (0 when none shows).
    fn in_screen_bag(&self, view: &View, node: NodeIndex) -> Option<u32> {
        view.held_on(node, self.take_slots(view).as_deref())
    }

    /// Notes the craft of `item` being queued and the ingredient icons it will take.
    pub(super) fn note_craft_sent(
        &mut self,
        item: NodeIndex,
        ingredients: &[NodeIndex],
        view: &View,
    ) {
        let takes = ingredients
            .iter()
            .filter_map(|n| {
                self.screen_icon(*n, view)
                    .or_else(|| view.icon(*n))
                    .map(|c| (*n, c))
            })
            .collect();
        self.bag.craft_sent = Some(CraftSent {
            item,
            before: self.in_screen_bag(view, item),
            takes,
        });
    }

    /// After a craft, with its screen still in view: whether its item came. A slot whose
    /// ingredient made nothing `CRAFT_MISSES_BEFORE_REFUTING` times in a row is refuted. A
    /// refuted slot seen without the icon is believed again.
    pub(super) fn check_craft(&mut self, view: &View) {
        if self.screen_in_view(view).is_none() {
            self.bag.craft_sent = None;
            return;
        }
        self.bag.refuted.retain(|(node, slot)| {
            view.visual
                .attributes
                .get(node)
                .is_some_and(|a| a.icons.iter().any(|i| on_a_slot(i.x, i.y, &[*slot], view)))
        });
        let Some(sent) = self.bag.craft_sent.take() else {
            return;
        };
        let came = match (sent.before, self.in_screen_bag(view, sent.item)) {
            (Some(b), Some(n)) => n > b,
            // A count not read: the item showing is all that can be told.
            _ => view.has(sent.item),
        };
        if came {
            self.bag.misses.clear();
            return;
        }
        for (node, slot) in sent.takes {
            let misses = self.bag.misses.entry(slot_key(node, slot)).or_default();
            *misses += 1;
            if *misses >= CRAFT_MISSES_BEFORE_REFUTING {
                self.bag.misses.remove(&slot_key(node, slot));
                self.bag.refuted.push((node, slot));
            }
        }
    }

    /// `visual` without the ingredient icons a craft refuted; the items that lost an icon so.
    pub(super) fn without_refuted_slots(
        &self,
        visual: &mut VisualState,
        view: &View,
    ) -> BTreeSet<NodeIndex> {
        let mut lost = BTreeSet::new();
        for (node, slot) in &self.bag.refuted {
            if let Some(a) = visual.attributes.get_mut(node) {
                let before = a.icons.len();
                a.icons.retain(|i| !on_a_slot(i.x, i.y, &[*slot], view));
                if a.icons.len() < before {
                    lost.insert(*node);
                }
            }
        }
        lost
    }
}
