//! Retrieval evaluation (the paper's Figure 4): labelled cases -> false positive and false
//! negative rates of each retrieval strategy.
//!
//! A case is a task, what the detector saw, and the nodes and edges a knowledgeable player would
//! want retrieved at that moment. Retrieved items are nodes and edges together:
//! FPR = retrieved but not labelled / retrieved ("redundant information"),
//! FNR = labelled but not retrieved / labelled ("missed information"), summed over all cases.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use petgraph::graph::NodeIndex;

use super::embed::{VisualState, embed};
use super::graph::{KnowledgeGraph, Relation};
use super::pool::{PathLimits, Strategy, Subgraph, pool};
use super::similarity::SimilarityRetriever;
use crate::embedding::EmbeddingError;
use crate::perception::{EnvironmentEntity, InventoryIcon, Perception};
use crate::tasks::TaskList;
use crate::toml_lines::{self, DataFileError};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCases {
    case: Vec<Spanned<RawCase>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    id: String,
    task: String,
    #[serde(default)]
    note: String,
    #[serde(default)]
    entities: Vec<RawEntity>,
    #[serde(default)]
    icons: Vec<RawIcon>,
    nodes: Vec<String>,
    #[serde(default)]
    edges: Vec<(String, String, String)>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntity {
    class: String,
    x: f32,
    y: f32,
    w: f32,
    h: f32,
    in_reach: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIcon {
    class: String,
    x: f32,
    y: f32,
}

/// One labelled case, resolved against the graph and the task list.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    pub task: String,
    pub note: String,
    pub line: usize,
    pub perception: Perception,
    pub expected: BTreeSet<String>,
}

/// A node or edge as a comparable string: `Log` or `Log -is used to craft-> Planks`.
fn node_item(name: &str) -> String {
    name.to_string()
}
fn edge_item(from: &str, relation: Relation, to: &str) -> String {
    format!("{from} -{relation}-> {to}")
}

pub fn subgraph_items(kg: &KnowledgeGraph, s: &Subgraph) -> BTreeSet<String> {
    let mut items: BTreeSet<String> = s.nodes.iter().map(|n| node_item(kg.name(*n))).collect();
    items.extend(
        s.edges
            .iter()
            .filter_map(|e| kg.edge_triple(*e))
            .map(|(a, r, b)| edge_item(a, r, b)),
    );
    items
}

/// Loads and validates cases: every task, class, node and edge must exist.
pub fn load_cases(
    path: &Path,
    kg: &KnowledgeGraph,
    tasks: &TaskList,
    profile: &str,
) -> Result<Vec<Case>, DataFileError> {
    let text = toml_lines::read(path)?;
    let invalid = |line: usize, message: String| DataFileError::at(path, line, message);
    let raw: RawCases = toml_lines::from_str(&text).map_err(|(line, m)| invalid(line, m))?;
    let lines = toml_lines::LineIndex::new(&text);
    let mut ids = BTreeSet::new();
    let mut cases = Vec::new();
    for spanned in raw.case {
        let line = lines.line(spanned.span().start);
        let c = spanned.into_inner();
        let bad = |m: String| invalid(line, format!("case {}: {m}", c.id));
        if !ids.insert(c.id.clone()) {
            return Err(bad("id used twice".into()));
        }
        let task = tasks
            .get(profile, &c.task)
            .map_err(|e| bad(e.to_string()))?;
        let expected = expected_items(&c, kg, &task.target).map_err(bad)?;
        cases.push(Case {
            perception: case_perception(&c),
            id: c.id,
            task: c.task,
            note: c.note,
            line,
            expected,
        });
    }
    Ok(cases)
}

/// A case's labelled nodes and edges as items, once its classes, nodes, edges and the task's
/// target are checked against the graph.
fn expected_items(
    c: &RawCase,
    kg: &KnowledgeGraph,
    target: &str,
) -> Result<BTreeSet<String>, String> {
    let classes = c.entities.iter().map(|e| &e.class);
    if let Some(class) = classes
        .chain(c.icons.iter().map(|i| &i.class))
        .find(|class| !kg.detector_classes.contains_key(class.as_str()))
    {
        return Err(format!("unknown detector class {class}"));
    }
    let mut expected = BTreeSet::new();
    for n in &c.nodes {
        if kg.node(n).is_none() {
            return Err(format!("\"{n}\" is not a node of {}", kg.source.display()));
        }
        expected.insert(node_item(n));
    }
    for (a, r, b) in &c.edges {
        let relation = Relation::parse(r).ok_or_else(|| format!("unknown relation \"{r}\""))?;
        let exists = kg.graph.edge_indices().any(|e| {
            kg.edge_triple(e)
                .is_some_and(|(x, y, z)| x == a && y == relation && z == b)
        });
        if !exists {
            return Err(format!("edge \"{a}\" {r} \"{b}\" is not in the graph"));
        }
        if !c.nodes.contains(a) || !c.nodes.contains(b) {
            return Err(format!("edge \"{a}\" {r} \"{b}\" joins nodes not labelled"));
        }
        expected.insert(edge_item(a, relation, b));
    }
    if !c.nodes.iter().any(|n| n == target) {
        return Err(format!("the target \"{target}\" must be labelled"));
    }
    Ok(expected)
}

/// What a case's frame shows, as the detector would report it (a 1280x720 frame, certain).
fn case_perception(c: &RawCase) -> Perception {
    Perception {
        frame_w: 1280,
        frame_h: 720,
        entities: c
            .entities
            .iter()
            .map(|e| EnvironmentEntity {
                class: e.class.clone(),
                x: e.x,
                y: e.y,
                w: e.w,
                h: e.h,
                conf: 1.0,
                in_reach: e.in_reach,
            })
            .collect(),
        icons: c
            .icons
            .iter()
            .map(|i| InventoryIcon {
                class: i.class.clone(),
                x: i.x,
                y: i.y,
                conf: 1.0,
                count: None,
            })
            .collect(),
        hidden_by_gui: 0,
        marked_screens: Vec::new(),
        gui_scale: None,
        view_digest: String::new(),
        grid_angle: None,
        reach_w: 0.0,
        set_aside: Vec::new(),
        position: None,
        debug_screen_shown: false,
    }
}

/// Error counts of one method over all cases.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Rates {
    pub method: String,
    pub retrieved: usize,
    pub expected: usize,
    pub false_positives: usize,
    pub false_negatives: usize,
    pub fpr: f64,
    pub fnr: f64,
}

impl Rates {
    fn add(&mut self, retrieved: &BTreeSet<String>, expected: &BTreeSet<String>) {
        self.retrieved += retrieved.len();
        self.expected += expected.len();
        self.false_positives += retrieved.difference(expected).count();
        self.false_negatives += expected.difference(retrieved).count();
    }
    fn finish(mut self) -> Self {
        self.fpr = ratio(self.false_positives, self.retrieved);
        self.fnr = ratio(self.false_negatives, self.expected);
        self
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

pub const STRATEGIES: [(Strategy, &str); 4] = [
    (Strategy::PspThenEmp, "PSP->EMP"),
    (Strategy::EmpThenPsp, "EMP->PSP"),
    (Strategy::PspOnly, "PSP"),
    (Strategy::EmpOnly, "EMP"),
];

/// FPR/FNR of the four pooling strategies over the cases.
pub fn evaluate(
    kg: &KnowledgeGraph,
    tasks: &TaskList,
    profile: &str,
    cases: &[Case],
    limits: PathLimits,
) -> Vec<Rates> {
    STRATEGIES
        .iter()
        .map(|(strategy, name)| {
            let pooled = rates_of(kg, tasks, profile, cases, name, |target, prompt, visual| {
                Ok::<_, std::convert::Infallible>(
                    pool(kg, target, prompt, visual, limits, *strategy).0,
                )
            });
            match pooled {
                Ok(rates) => rates,
                Err(never) => match never {},
            }
        })
        .collect()
}

/// FPR/FNR of the similarity baseline (nodes whose text embedding is within `threshold` cosine
/// similarity of the task prompt's).
pub fn evaluate_similarity(
    kg: &KnowledgeGraph,
    tasks: &TaskList,
    profile: &str,
    cases: &[Case],
    retriever: &mut SimilarityRetriever,
    threshold: f32,
) -> Result<Rates, EmbeddingError> {
    let name = format!("similarity@{threshold}");
    rates_of(kg, tasks, profile, cases, &name, |_, prompt, visual| {
        retriever.retrieve(kg, prompt, visual, threshold)
    })
}

/// Runs one retrieval method over every case and counts its errors.
fn rates_of<E>(
    kg: &KnowledgeGraph,
    tasks: &TaskList,
    profile: &str,
    cases: &[Case],
    method: &str,
    mut retrieve: impl FnMut(NodeIndex, &str, &VisualState) -> Result<Subgraph, E>,
) -> Result<Rates, E> {
    let mut rates = Rates {
        method: method.to_string(),
        ..Rates::default()
    };
    for c in cases {
        // load_cases checked the task and its target.
        let Ok(task) = tasks.get(profile, &c.task) else {
            continue;
        };
        let Some(target) = kg.node(&task.target) else {
            continue;
        };
        let visual = embed(kg, &c.perception);
        let retrieved = retrieve(target, &task.description, &visual)?;
        rates.add(&subgraph_items(kg, &retrieved), &c.expected);
    }
    Ok(rates.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_count_items_across_cases() {
        let mut r = Rates::default();
        let set = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        r.add(&set(&["a", "b", "c", "d"]), &set(&["a", "b", "e"]));
        r.add(&set(&["x"]), &set(&["x"]));
        let r = r.finish();
        assert_eq!((r.false_positives, r.false_negatives), (2, 1));
        assert!((r.fpr - 2.0 / 5.0).abs() < 1e-12);
        assert!((r.fnr - 1.0 / 4.0).abs() < 1e-12);
    }
}
