//! The similarity-based retrieval baseline of the paper's Figure 4: embed the task prompt and
//! each node's text (its name and its current visual attributes) with all-MiniLM-L6-v2 and keep
//! the nodes whose cosine similarity to the prompt reaches a threshold, with the edges among them.
//!
//! It exists to be compared with pooling (`vistawise kg eval`); the agent itself pools.

use std::collections::{BTreeSet, HashMap};

use super::embed::VisualState;
use super::graph::KnowledgeGraph;
use super::pool::Subgraph;
use crate::embedding::{EmbeddingError, SentenceEncoder, cosine};

/// A node as text: its name, plus where the detector sees it this step.
pub fn node_text(
    kg: &KnowledgeGraph,
    node: petgraph::graph::NodeIndex,
    visual: &VisualState,
) -> String {
    let mut text = kg.name(node).to_string();
    if let Some(a) = visual.attributes.get(&node) {
        if !a.entities.is_empty() {
            text.push_str(", seen on screen");
        }
        if !a.icons.is_empty() {
            text.push_str(", in the inventory");
        }
    }
    text
}

/// Embeds texts once each (node texts repeat across steps and cases).
pub struct SimilarityRetriever<'e> {
    encoder: &'e mut SentenceEncoder,
    cache: HashMap<String, Vec<f32>>,
}

impl<'e> SimilarityRetriever<'e> {
    pub fn new(encoder: &'e mut SentenceEncoder) -> Self {
        SimilarityRetriever {
            encoder,
            cache: HashMap::new(),
        }
    }

    fn embedding(&mut self, text: &str) -> Result<&[f32], EmbeddingError> {
        if !self.cache.contains_key(text) {
            let v = self.encoder.embed(text)?;
            self.cache.insert(text.to_string(), v);
        }
        Ok(self.cache.get(text).map(Vec::as_slice).unwrap_or_default())
    }

    /// Every node with its similarity to the prompt, most similar first (ties by name).
    pub fn rank(
        &mut self,
        kg: &KnowledgeGraph,
        prompt: &str,
        visual: &VisualState,
    ) -> Result<Vec<(petgraph::graph::NodeIndex, f32)>, EmbeddingError> {
        let query = self.embedding(prompt)?.to_vec();
        let mut scored = Vec::with_capacity(kg.graph.node_count());
        for node in kg.graph.node_indices() {
            let text = node_text(kg, node, visual);
            scored.push((node, cosine(&query, self.embedding(&text)?)));
        }
        scored.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| kg.name(a.0).cmp(kg.name(b.0)))
        });
        Ok(scored)
    }

    /// Nodes at or above `threshold`, and the graph's edges among them.
    pub fn retrieve(
        &mut self,
        kg: &KnowledgeGraph,
        prompt: &str,
        visual: &VisualState,
        threshold: f32,
    ) -> Result<Subgraph, EmbeddingError> {
        let nodes: BTreeSet<_> = self
            .rank(kg, prompt, visual)?
            .into_iter()
            .filter(|(_, s)| *s >= threshold)
            .map(|(n, _)| n)
            .collect();
        let edges = kg
            .graph
            .edge_indices()
            .filter(|&e| {
                kg.graph
                    .edge_endpoints(e)
                    .is_some_and(|(a, b)| nodes.contains(&a) && nodes.contains(&b))
            })
            .collect();
        Ok(Subgraph { nodes, edges })
    }
}
