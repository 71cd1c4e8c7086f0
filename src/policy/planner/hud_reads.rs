//! The HUD hotbar and an open screen's hotbar row show the same stacks: where the two read one
//! slot's stack (the same count, or both a single item with no count drawn) as different items,
//! the more confident read is taken. The client's inventory read a stack of 12 planks on its
//! hotbar row as dirt (0.61) that the HUD read as planks (0.91) a step before, and the planner
//! opened the inventory to craft sticks and closed it to fetch a log, in turn, until the run's
//! time ran out; a crafting table's screen read the stone pickaxe the HUD had read (0.98) as an
//! iron one (0.76), and the planner went down for diamonds with two iron ores and no furnace.
//! The HUD's read of a slot is its surest since the stack's count last changed.

use std::collections::BTreeMap;

use petgraph::graph::NodeIndex;

use super::{Planner, View, on_a_slot};
use crate::knowledge::VisualState;

/// One HUD hotbar slot's read: the icon's class, its confidence and its stack count (none
/// for a single item, whose count the game does not draw).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SlotRead {
    class: String,
    conf: f32,
    count: Option<u32>,
}

impl Planner {
    /// With no screen in view, keeps what the HUD hotbar reads, a slot a key; with `screen` in
    /// view, gives each icon of its hotbar row the HUD's class where the HUD read the same
    /// count (or none, a single item) there as another item, more confidently.
    pub(super) fn cross_check_hotbar(
        &mut self,
        visual: &mut VisualState,
        view: &View,
        screen: Option<&str>,
    ) {
        let Some(screen) = screen else {
            let fresh = reads_of("hud", visual, view);
            self.hud_reads = fresh
                .into_iter()
                .map(|(key, read)| (key, surer(self.hud_reads.get(&key), read)))
                .collect();
            self.forget_bag_tools_the_hud_refutes(view);
            return;
        };
        let row = reads_of(screen, visual, view);
        // A stack whose count changed in the screen (a craft used it, or put another item
        // there) is not the one the HUD read.
        self.hud_reads
            .retain(|key, hud| row.get(key).is_none_or(|seen| seen.count == hud.count));
        for (key, centre) in view.layout.hotbar_row(screen) {
            let (Some(hud), Some(seen)) = (self.hud_reads.get(&key), row.get(&key)) else {
                continue;
            };
            let Some(&node) = view.kg.detector_classes.get(&hud.class) else {
                continue;
            };
            if hud.count != seen.count || hud.class == seen.class || hud.conf <= seen.conf {
                continue;
            }
            let mut moved = Vec::new();
            for a in visual.attributes.values_mut() {
                let (on, off): (Vec<_>, Vec<_>) = std::mem::take(&mut a.icons)
                    .into_iter()
                    .partition(|i| on_a_slot(i.x, i.y, &[centre], view));
                a.icons = off;
                moved.extend(on);
            }
            for mut icon in moved {
                icon.class = hud.class.clone();
                visual.attributes.entry(node).or_default().icons.push(icon);
            }
        }
    }

    /// Forgets a tool a screen noted at a hotbar key (`bag_tools`) where the HUD reads another
    /// item at that key more surely. The other way round from the cross-check: a crafting
    /// table's screen read the stone pickaxe just crafted as an iron one (0.80) before the HUD
    /// had read that slot at all, and the planner dug a staircase for diamonds with no iron
    /// pickaxe; the HUD read the slot as a stone pickaxe (0.98) on the next frame.
    fn forget_bag_tools_the_hud_refutes(&mut self, view: &View) {
        let refuted: Vec<NodeIndex> = self
            .bag_tools
            .iter()
            .filter_map(|(tool, noted)| {
                let hud = self.hud_reads.get(&noted.key?)?;
                let read = view.kg.detector_classes.get(&hud.class)?;
                (read != tool && hud.conf > noted.read?).then_some(*tool)
            })
            .collect();
        for tool in refuted {
            self.bag_tools.remove(&tool);
        }
    }
}

/// Of a slot's last kept read and this frame's, the one to keep: the same count read as
/// another item less surely is the same stack misread (the selected slot's frame or a wear bar
/// over the icon: a HUD read the stone pickaxe at 0.98, then at 0.78 after the slot was
/// selected, and the furnace's screen read it as an iron one at 0.79), and the same item keeps
/// its surest read.
fn surer(kept: Option<&SlotRead>, read: SlotRead) -> SlotRead {
    match kept {
        Some(old) if old.count == read.count && old.conf > read.conf => old.clone(),
        _ => read,
    }
}

/// The read of each slot of `screen`'s hotbar row (`hud`, `inventory`) that shows an icon, by
/// hotbar key.
fn reads_of(screen: &str, visual: &VisualState, view: &View) -> BTreeMap<u8, SlotRead> {
    let mut reads = BTreeMap::new();
    for (key, centre) in view.layout.hotbar_row(screen) {
        let icon = visual
            .attributes
            .values()
            .flat_map(|a| &a.icons)
            .filter(|i| on_a_slot(i.x, i.y, &[centre], view))
            .max_by(|a, b| a.conf.total_cmp(&b.conf));
        if let Some(i) = icon {
            reads.insert(
                key,
                SlotRead {
                    class: i.class.clone(),
                    conf: i.conf,
                    count: i.count,
                },
            );
        }
    }
    reads
}
