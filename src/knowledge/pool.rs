//! Retrieval-based pooling (VistaWise Sec. 3.2): path searching pooling (PSP) keeps every node
//! and edge on simple paths from Player to the task's target; entity matching pooling (EMP) keeps
//! the nodes named in the task prompt or carrying visual attributes now, with the edges among
//! them. The paper's order is PSP then EMP; the other orders exist for the retrieval evaluation.

use std::collections::{BTreeSet, VecDeque};

use petgraph::Direction;
use petgraph::graph::{EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use serde::Serialize;

use super::embed::VisualState;
use super::graph::KnowledgeGraph;

/// Bounds on the simple-path enumeration, which can explode on dense graphs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathLimits {
    /// At most this many edges per path.
    pub max_length: usize,
    /// Stop after this many paths.
    pub max_paths: usize,
}

/// A set of nodes and edges (a subgraph of the knowledge graph).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subgraph {
    pub nodes: BTreeSet<NodeIndex>,
    pub edges: BTreeSet<EdgeIndex>,
}

/// What PSP found, and whether the limits cut it short.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PathReport {
    pub paths: usize,
    /// The path count limit was reached: more paths may exist.
    pub cut_by_count: bool,
    /// Some path would have been longer than the length limit.
    pub cut_by_length: bool,
}

impl PathReport {
    pub fn was_cut(&self) -> bool {
        self.cut_by_count || self.cut_by_length
    }
}

/// The four orders compared in the paper's Figure 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Strategy {
    PspThenEmp,
    EmpThenPsp,
    PspOnly,
    EmpOnly,
}

/// Shortest distance (in edges) from every node to `to` over the allowed edges, walking them
/// backwards (`usize::MAX`: cannot reach it). It prunes the path search's branches that cannot
/// reach the target within the remaining length.
fn distances_to(
    g: &petgraph::graph::DiGraph<String, super::graph::Relation>,
    to: NodeIndex,
    allowed_edge: &dyn Fn(EdgeIndex) -> bool,
) -> Vec<usize> {
    let mut dist = vec![usize::MAX; g.node_count()];
    dist[to.index()] = 0;
    let mut queue = VecDeque::from([to]);
    while let Some(v) = queue.pop_front() {
        for e in g.edges_directed(v, Direction::Incoming) {
            if allowed_edge(e.id()) && dist[e.source().index()] == usize::MAX {
                dist[e.source().index()] = dist[v.index()] + 1;
                queue.push_back(e.source());
            }
        }
    }
    dist
}

/// Union of all simple paths from `from` to `to` within `within` (or the whole graph), bounded.
pub fn path_search(
    kg: &KnowledgeGraph,
    from: NodeIndex,
    to: NodeIndex,
    within: Option<&Subgraph>,
    limits: PathLimits,
) -> (Subgraph, PathReport) {
    let g = &kg.graph;
    let allowed_edge = |e: EdgeIndex| within.is_none_or(|s| s.edges.contains(&e));
    let dist = distances_to(g, to, &allowed_edge);
    let mut result = Subgraph::default();
    let mut report = PathReport::default();
    if dist[from.index()] == usize::MAX {
        return (result, report);
    }
    // Iterative DFS over edges: the stack holds (node, its outgoing edges, next edge to try).
    let mut on_path = vec![false; g.node_count()];
    let mut path_edges: Vec<EdgeIndex> = Vec::new();
    let outgoing = |v: NodeIndex| -> Vec<EdgeIndex> {
        let mut es: Vec<EdgeIndex> = g
            .edges_directed(v, Direction::Outgoing)
            .map(|e| e.id())
            .filter(|e| allowed_edge(*e))
            .collect();
        es.sort();
        es
    };
    let mut stack: Vec<(NodeIndex, Vec<EdgeIndex>, usize)> = vec![(from, outgoing(from), 0)];
    on_path[from.index()] = true;
    while let Some((_, edges, next)) = stack.last_mut() {
        if *next >= edges.len() {
            let (v, _, _) = stack.pop().unwrap_or((from, Vec::new(), 0));
            on_path[v.index()] = false;
            path_edges.pop();
            continue;
        }
        let e = edges[*next];
        *next += 1;
        let Some((_, w)) = g.edge_endpoints(e) else {
            continue;
        };
        let depth = path_edges.len() + 1;
        if on_path[w.index()] || dist[w.index()] == usize::MAX {
            continue;
        }
        if depth + dist[w.index()] > limits.max_length {
            report.cut_by_length = true;
            continue;
        }
        if w == to {
            report.paths += 1;
            result.edges.extend(path_edges.iter().copied());
            result.edges.insert(e);
            if report.paths >= limits.max_paths {
                report.cut_by_count = true;
                break;
            }
            continue;
        }
        on_path[w.index()] = true;
        path_edges.push(e);
        let out = outgoing(w);
        stack.push((w, out, 0));
    }
    for e in &result.edges {
        if let Some((a, b)) = g.edge_endpoints(*e) {
            result.nodes.insert(a);
            result.nodes.insert(b);
        }
    }
    (result, report)
}

/// Nodes of `candidates` named in the prompt or seen now, plus Player (the anchor every path
/// starts from), with the edges of `edge_pool` among them.
pub fn entity_match(
    kg: &KnowledgeGraph,
    candidates: &BTreeSet<NodeIndex>,
    edge_pool: &BTreeSet<EdgeIndex>,
    prompt: &str,
    visual: &VisualState,
) -> Subgraph {
    let nodes: BTreeSet<NodeIndex> = candidates
        .iter()
        .copied()
        .filter(|&n| n == kg.player() || visual.has_attributes(n) || mentions(prompt, kg.name(n)))
        .collect();
    let edges = edge_pool
        .iter()
        .copied()
        .filter(|&e| {
            kg.graph
                .edge_endpoints(e)
                .is_some_and(|(a, b)| nodes.contains(&a) && nodes.contains(&b))
        })
        .collect();
    Subgraph { nodes, edges }
}

/// Whether `text` names `entity` as whole words, ignoring case; a plural "s"/"es" counts.
pub fn mentions(text: &str, entity: &str) -> bool {
    let text = text.to_lowercase();
    let entity = entity.to_lowercase();
    let bytes = text.as_bytes();
    let boundary = |i: usize| i >= bytes.len() || !bytes[i].is_ascii_alphanumeric();
    let mut start = 0;
    while let Some(pos) = text[start..].find(&entity) {
        let at = start + pos;
        let end = at + entity.len();
        let before_ok = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
        let after_ok = boundary(end)
            || (text[end..].starts_with('s') && boundary(end + 1))
            || (text[end..].starts_with("es") && boundary(end + 2));
        if before_ok && after_ok {
            return true;
        }
        start = at + 1;
    }
    false
}

/// Pools the graph for one step with the chosen strategy.
pub fn pool(
    kg: &KnowledgeGraph,
    target: NodeIndex,
    prompt: &str,
    visual: &VisualState,
    limits: PathLimits,
    strategy: Strategy,
) -> (Subgraph, PathReport) {
    let all_nodes: BTreeSet<NodeIndex> = kg.graph.node_indices().collect();
    let all_edges: BTreeSet<EdgeIndex> = kg.graph.edge_indices().collect();
    let player = kg.player();
    match strategy {
        Strategy::PspOnly => path_search(kg, player, target, None, limits),
        Strategy::PspThenEmp => {
            let (global, report) = path_search(kg, player, target, None, limits);
            let local = entity_match(kg, &global.nodes, &global.edges, prompt, visual);
            (local, report)
        }
        Strategy::EmpOnly => (
            entity_match(kg, &all_nodes, &all_edges, prompt, visual),
            PathReport::default(),
        ),
        Strategy::EmpThenPsp => {
            let matched = entity_match(kg, &all_nodes, &all_edges, prompt, visual);
            path_search(kg, player, target, Some(&matched), limits)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn minecraft() -> KnowledgeGraph {
        KnowledgeGraph::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("kg/minecraft.toml"))
            .expect("graph")
    }

    fn names(kg: &KnowledgeGraph, s: &Subgraph) -> Vec<String> {
        s.nodes.iter().map(|n| kg.name(*n).to_string()).collect()
    }

    const WIDE: PathLimits = PathLimits {
        max_length: 12,
        max_paths: 1_000_000,
    };

    #[test]
    fn psp_for_planks_is_the_wood_chain() {
        let kg = minecraft();
        let target = kg.node("Planks").expect("node");
        let (s, report) = path_search(&kg, kg.player(), target, None, WIDE);
        let mut got = names(&kg, &s);
        got.sort();
        // Player can mine Trunk -> outputs Log -> is used to craft Planks; axes mine trunks too.
        assert!(
            got.contains(&"Trunk".to_string()) && got.contains(&"Log".to_string()),
            "{got:?}"
        );
        assert!(!got.contains(&"Diamond".to_string()), "{got:?}");
        assert!(!report.was_cut());
        assert!(report.paths >= 1);
    }

    #[test]
    fn every_path_node_lies_between_player_and_target() {
        // Nodes kept by PSP must be reachable from Player and reach the target.
        let kg = minecraft();
        let target = kg.node("Diamond").expect("node");
        let (s, _) = path_search(&kg, kg.player(), target, None, WIDE);
        for n in &s.nodes {
            let from_player = petgraph::algo::has_path_connecting(&kg.graph, kg.player(), *n, None);
            let to_target = petgraph::algo::has_path_connecting(&kg.graph, *n, target, None);
            assert!(from_player && to_target, "{}", kg.name(*n));
        }
        assert!(s.nodes.contains(&kg.node("Iron Pickaxe").expect("node")));
        assert!(!s.nodes.contains(&kg.node("Lava").expect("node")));
    }

    #[test]
    fn limits_cut_and_say_so() {
        let kg = minecraft();
        let target = kg.node("Diamond").expect("node");
        let (_, short) = path_search(
            &kg,
            kg.player(),
            target,
            None,
            PathLimits {
                max_length: 3,
                max_paths: 1000,
            },
        );
        assert!(short.cut_by_length);
        let (_, few) = path_search(
            &kg,
            kg.player(),
            target,
            None,
            PathLimits {
                max_length: 12,
                max_paths: 2,
            },
        );
        assert!(few.cut_by_count);
        assert_eq!(few.paths, 2);
    }

    #[test]
    fn emp_keeps_named_and_seen_nodes_with_their_edges() {
        let kg = minecraft();
        let target = kg.node("Stick").expect("node");
        let mut visual = VisualState::default();
        visual
            .attributes
            .entry(kg.node("Log").expect("node"))
            .or_default()
            .icons
            .push(crate::perception::InventoryIcon {
                class: "log_icon".into(),
                x: 1.0,
                y: 2.0,
                conf: 0.9,
                count: None,
            });
        let (s, _) = pool(
            &kg,
            target,
            "Obtain sticks. Planks are crafted from logs.",
            &visual,
            WIDE,
            Strategy::PspThenEmp,
        );
        let mut got = names(&kg, &s);
        got.sort();
        assert_eq!(got, vec!["Log", "Planks", "Player", "Stick"]);
        let triples: Vec<String> = s
            .edges
            .iter()
            .filter_map(|e| kg.edge_triple(*e))
            .map(|(a, r, b)| format!("{a} {r} {b}"))
            .collect();
        assert!(
            triples.contains(&"Log is used to craft Planks".to_string()),
            "{triples:?}"
        );
        assert!(
            triples.contains(&"Planks is used to craft Stick".to_string()),
            "{triples:?}"
        );
    }

    #[test]
    fn emp_first_loses_the_links_psp_needs() {
        // Nothing seen, only the target named: EMP keeps Player and Stick, which no edge joins,
        // so PSP afterwards finds no path (the paper's argument for PSP -> EMP).
        let kg = minecraft();
        let target = kg.node("Stick").expect("node");
        let visual = VisualState::default();
        let (s, report) = pool(
            &kg,
            target,
            "Obtain a stick.",
            &visual,
            WIDE,
            Strategy::EmpThenPsp,
        );
        assert!(s.nodes.is_empty());
        assert_eq!(report.paths, 0);
    }

    #[test]
    fn mentions_matches_whole_words_and_plurals() {
        assert!(mentions("Obtain 4 Sticks now", "Stick"));
        assert!(mentions("craft a wooden pickaxe.", "Wooden Pickaxe"));
        assert!(mentions("two torches", "Torch"));
        assert!(!mentions("Obtain a stickman", "Stick"));
        assert!(!mentions("lumberjack", "Log"));
        assert!(mentions("Log", "Log"));
    }
}
