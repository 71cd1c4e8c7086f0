//! Turning a pooled graph into the prompt's knowledge, inventory and environment lines.
//!
//! Compact on purpose (the paper's names-only graph cut prompt tokens by 30%) and deterministic:
//! equal inputs give byte-identical text.

use serde::Serialize;

use super::embed::{VisualAttributes, VisualState};
use super::graph::KnowledgeGraph;
use super::pool::Subgraph;
use crate::perception::EnvironmentEntity;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PooledText {
    /// One fact per line: "Log is used to craft Planks."
    pub knowledge: String,
    /// Items in the hotbar / open GUI with their slot positions.
    pub inventory: String,
    /// World objects with position, size and reach.
    pub environment: String,
}

/// Where the status lines place things: world objects as offsets from the crosshair (the
/// way `turn` takes them), icons by the slot they sit on. Without a crosshair positions are
/// absolute; an icon without a slot here is unnamed.
#[derive(Debug, Clone, Default)]
pub struct ScreenText {
    pub crosshair: Option<(f32, f32)>,
    /// The slot of each icon that sits on one (the caller finds them in the GUI layout).
    pub slots: Vec<SlotLabel>,
}

/// The slot an icon sits on, as the inventory line names it.
#[derive(Debug, Clone, PartialEq)]
pub struct SlotLabel {
    /// The icon's centre, as detected.
    pub icon: (f32, f32),
    /// "hotbar key 3" (the HUD, drawn over the world) or the slot's location
    /// ("inventory.craft.0").
    pub label: String,
    /// On the HUD: listed after an open screen's slots, whose items the GUI skills take.
    pub hud: bool,
}

impl ScreenText {
    fn slot_of(&self, x: f32, y: f32) -> Option<&SlotLabel> {
        self.slots.iter().find(|s| s.icon == (x, y))
    }
}

/// Textualizes the pooled subgraph; status lines cover the pooled nodes that were seen.
pub fn textualize(
    kg: &KnowledgeGraph,
    pooled: &Subgraph,
    visual: &VisualState,
    screen: &ScreenText,
) -> PooledText {
    let mut facts: Vec<(String, &str, String)> = pooled
        .edges
        .iter()
        .filter_map(|e| kg.edge_triple(*e))
        .map(|(a, r, b)| (a.to_string(), r.as_str(), b.to_string()))
        .collect();
    facts.sort();
    let knowledge = facts
        .iter()
        .map(|(a, r, b)| format!("{a} {r} {b}."))
        .collect::<Vec<_>>()
        .join("\n");

    let mut seen: Vec<(&str, &VisualAttributes)> = pooled
        .nodes
        .iter()
        .filter_map(|n| visual.attributes.get(n).map(|a| (kg.name(*n), a)))
        .collect();
    seen.sort_by(|a, b| a.0.cmp(b.0));

    let inventory_parts: Vec<String> = seen
        .iter()
        .filter(|(_, a)| !a.icons.is_empty())
        .map(|(name, a)| inventory_line(name, a, screen))
        .collect();
    let environment_parts: Vec<String> = seen
        .iter()
        .flat_map(|(name, a)| a.entities.iter().map(|e| environment_line(name, e, screen)))
        .collect();
    PooledText {
        knowledge,
        inventory: if inventory_parts.is_empty() {
            "nothing relevant seen in the inventory".into()
        } else {
            inventory_parts.join("; ")
        },
        environment: if environment_parts.is_empty() {
            "nothing relevant in view".into()
        } else {
            environment_parts.join("; ")
        },
    }
}

/// "Planks: 2 slots at (x, y) x12 [main.3], ...": an open screen's slots first, the HUD under
/// it is not where GUI skills take from.
fn inventory_line(name: &str, a: &VisualAttributes, screen: &ScreenText) -> String {
    let mut icons: Vec<(bool, String)> = a
        .icons
        .iter()
        .map(|i| {
            let mut text = format!("({:.0}, {:.0})", i.x, i.y);
            if let Some(n) = i.count {
                // A read stack count: how many, not only where.
                text.push_str(&format!(" x{n}"));
            }
            let slot = screen.slot_of(i.x, i.y);
            if let Some(slot) = slot {
                text.push_str(&format!(" [{}]", slot.label));
            }
            (slot.is_some_and(|s| s.hud), text)
        })
        .collect();
    icons.sort_by_key(|(hud, _)| *hud);
    let slots = icons
        .into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(", ");
    let n = a.icons.len();
    format!(
        "{name}: {n} slot{} at {slots}",
        if n == 1 { "" } else { "s" }
    )
}

/// "Trunk at (+12, -40) from the crosshair, size 30x80, out of reach".
fn environment_line(name: &str, e: &EnvironmentEntity, screen: &ScreenText) -> String {
    let at = match screen.crosshair {
        Some((cx, cy)) => format!("at ({:+.0}, {:+.0}) from the crosshair", e.x - cx, e.y - cy),
        None => format!("at ({:.0}, {:.0})", e.x, e.y),
    };
    let reach = if e.in_reach {
        "within reach"
    } else {
        "out of reach"
    };
    format!("{name} {at}, size {:.0}x{:.0}, {reach}", e.w, e.h)
}

/// Graphviz of the whole graph with the pooled part highlighted (for `kg pool --dot`).
pub fn to_dot(kg: &KnowledgeGraph, pooled: &Subgraph, visual: &VisualState) -> String {
    let mut out = String::from(
        "digraph kg {\n  rankdir=LR;\n  node [shape=box, style=rounded, fontname=Helvetica];\n",
    );
    let mut nodes: Vec<_> = kg.graph.node_indices().collect();
    nodes.sort_by_key(|n| kg.name(*n).to_string());
    for n in nodes {
        let kept = pooled.nodes.contains(&n);
        let seen = visual.has_attributes(n);
        let style = match (kept, seen) {
            (true, true) => {
                "color=\"#1f77b4\", penwidth=2, style=\"rounded,filled\", fillcolor=\"#dbe9f6\""
            }
            (true, false) => "color=\"#1f77b4\", penwidth=2",
            (false, true) => "color=\"#999999\", style=\"rounded,filled\", fillcolor=\"#eeeeee\"",
            (false, false) => "color=\"#cccccc\", fontcolor=\"#999999\"",
        };
        out += &format!("  \"{}\" [{style}];\n", kg.name(n).replace('"', "\\\""));
    }
    let mut edges: Vec<_> = kg.graph.edge_indices().collect();
    edges.sort_by_key(|e| {
        kg.edge_triple(*e)
            .map(|(a, r, b)| (a.to_string(), r, b.to_string()))
    });
    for e in edges {
        if let Some((a, r, b)) = kg.edge_triple(e) {
            let style = if pooled.edges.contains(&e) {
                "color=\"#1f77b4\", penwidth=2"
            } else {
                "color=\"#dddddd\", fontcolor=\"#bbbbbb\""
            };
            out += &format!("  \"{a}\" -> \"{b}\" [label=\"{r}\", {style}];\n");
        }
    }
    out += "}\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::pool::{PathLimits, Strategy, pool};
    use crate::perception::{EnvironmentEntity, InventoryIcon};
    use std::path::Path;

    #[test]
    fn pooled_text_is_compact_sorted_and_repeatable() {
        let kg =
            KnowledgeGraph::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("kg/minecraft.toml"))
                .expect("graph");
        let mut visual = VisualState::default();
        let log = kg.node("Log").expect("node");
        let trunk = kg.node("Trunk").expect("node");
        let attrs = visual.attributes.entry(log).or_default();
        attrs.icons.push(InventoryIcon {
            class: "log_icon".into(),
            x: 412.0,
            y: 655.0,
            conf: 0.9,
            count: None,
        });
        attrs.icons.push(InventoryIcon {
            class: "log_icon".into(),
            x: 452.0,
            y: 655.0,
            conf: 0.8,
            count: Some(3),
        });
        visual
            .attributes
            .entry(trunk)
            .or_default()
            .entities
            .push(EnvironmentEntity {
                class: "trunk".into(),
                x: 640.0,
                y: 360.0,
                w: 120.0,
                h: 300.0,
                conf: 0.9,
                in_reach: true,
            });
        let target = kg.node("Planks").expect("node");
        let limits = PathLimits {
            max_length: 8,
            max_paths: 10_000,
        };
        let (pooled, _) = pool(
            &kg,
            target,
            "Obtain planks.",
            &visual,
            limits,
            Strategy::PspThenEmp,
        );
        let text = textualize(&kg, &pooled, &visual, &ScreenText::default());
        assert_eq!(
            text.knowledge,
            "Log is used to craft Planks.\nPlayer can mine Trunk.\nTrunk outputs Log."
        );
        assert_eq!(text.inventory, "Log: 2 slots at (412, 655), (452, 655) x3");
        assert_eq!(
            text.environment,
            "Trunk at (640, 360), size 120x300, within reach"
        );
        let again = textualize(&kg, &pooled, &visual, &ScreenText::default());
        assert_eq!(text, again);
        // With the crosshair and the slots: offsets as `turn` takes them, slots by name, an
        // open screen's slot before the HUD's.
        let slot = |x: f32, label: &str, hud: bool| SlotLabel {
            icon: (x, 655.0),
            label: label.into(),
            hud,
        };
        let screen = ScreenText {
            crosshair: Some((600.0, 400.0)),
            slots: vec![
                slot(412.0, "hotbar key 1", true),
                slot(452.0, "inventory.main.0", false),
            ],
        };
        let text = textualize(&kg, &pooled, &visual, &screen);
        assert_eq!(
            text.inventory,
            "Log: 2 slots at (452, 655) x3 [inventory.main.0], (412, 655) [hotbar key 1]"
        );
        assert_eq!(
            text.environment,
            "Trunk at (+40, -40) from the crosshair, size 120x300, within reach"
        );
        let dot = to_dot(&kg, &pooled, &visual);
        assert!(
            dot.contains("\"Trunk\" -> \"Log\" [label=\"outputs\", color=\"#1f77b4\""),
            "{dot}"
        );
    }
}
