//! Cross-modal embedding: one step's detections become visual attributes of graph nodes.
//!
//! Attributes live beside the static graph and are rebuilt every step, so the previous step's
//! sightings are replaced, never merged.

use std::collections::BTreeMap;

use petgraph::graph::NodeIndex;
use serde::Serialize;

use super::graph::KnowledgeGraph;
use crate::perception::{EnvironmentEntity, InventoryIcon, Perception};

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct VisualAttributes {
    pub entities: Vec<EnvironmentEntity>,
    pub icons: Vec<InventoryIcon>,
}

/// The visual attributes of one step, keyed by node.
#[derive(Debug, Clone, Default)]
pub struct VisualState {
    pub attributes: BTreeMap<NodeIndex, VisualAttributes>,
    /// Detector classes the graph does not map (reported, not silently dropped).
    pub unmapped_classes: Vec<String>,
}

impl VisualState {
    pub fn has_attributes(&self, node: NodeIndex) -> bool {
        self.attributes
            .get(&node)
            .is_some_and(|a| !a.entities.is_empty() || !a.icons.is_empty())
    }
}

/// Attaches a frame's environment entities and inventory icons to their nodes.
pub fn embed(kg: &KnowledgeGraph, perception: &Perception) -> VisualState {
    let mut state = VisualState::default();
    let node_of = |class: &str, state: &mut VisualState| match kg.detector_classes.get(class) {
        Some(n) => Some(*n),
        None => {
            if !state.unmapped_classes.iter().any(|c| c == class) {
                state.unmapped_classes.push(class.to_string());
            }
            None
        }
    };
    for e in &perception.entities {
        if let Some(n) = node_of(&e.class, &mut state) {
            state
                .attributes
                .entry(n)
                .or_default()
                .entities
                .push(e.clone());
        }
    }
    for i in &perception.icons {
        if let Some(n) = node_of(&i.class, &mut state) {
            state.attributes.entry(n).or_default().icons.push(i.clone());
        }
    }
    // Stable order for the prompt: left to right, then top to bottom.
    for attrs in state.attributes.values_mut() {
        attrs
            .entities
            .sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
        attrs
            .icons
            .sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    }
    state.unmapped_classes.sort();
    state
}
