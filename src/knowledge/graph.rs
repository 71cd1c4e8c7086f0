//! The knowledge graph: entity-name nodes, the nine VistaWise relations, and the mapping from
//! detector classes to nodes. Loaded from `kg/<game>.toml`.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// The nine relation types of the paper, and no others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Relation {
    #[serde(rename = "can use")]
    CanUse,
    #[serde(rename = "can mine")]
    CanMine,
    #[serde(rename = "is used to craft")]
    IsUsedToCraft,
    #[serde(rename = "is used to produce")]
    IsUsedToProduce,
    #[serde(rename = "can be put in/on")]
    CanBePutInOn,
    #[serde(rename = "is the fuel of")]
    IsTheFuelOf,
    #[serde(rename = "includes")]
    Includes,
    #[serde(rename = "can be used to mine")]
    CanBeUsedToMine,
    #[serde(rename = "outputs")]
    Outputs,
}

impl Relation {
    pub const ALL: [Relation; 9] = [
        Relation::CanUse,
        Relation::CanMine,
        Relation::IsUsedToCraft,
        Relation::IsUsedToProduce,
        Relation::CanBePutInOn,
        Relation::IsTheFuelOf,
        Relation::Includes,
        Relation::CanBeUsedToMine,
        Relation::Outputs,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Relation::CanUse => "can use",
            Relation::CanMine => "can mine",
            Relation::IsUsedToCraft => "is used to craft",
            Relation::IsUsedToProduce => "is used to produce",
            Relation::CanBePutInOn => "can be put in/on",
            Relation::IsTheFuelOf => "is the fuel of",
            Relation::Includes => "includes",
            Relation::CanBeUsedToMine => "can be used to mine",
            Relation::Outputs => "outputs",
        }
    }

    pub fn parse(text: &str) -> Option<Relation> {
        Relation::ALL.into_iter().find(|r| r.as_str() == text)
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The node every retrieval path starts from.
pub const PLAYER: &str = "Player";

#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}", .problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("\n"))]
    Invalid { problems: Vec<Problem> },
}

/// One thing wrong with a graph file, at a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: PathBuf,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGraph {
    #[serde(default)]
    node: Vec<RawNode>,
    #[serde(default)]
    edge: Vec<RawEdge>,
    #[serde(default)]
    detector_classes: BTreeMap<Spanned<String>, Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNode {
    name: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEdge {
    from: Spanned<String>,
    relation: Spanned<String>,
    to: Spanned<String>,
}

/// A graph under construction from its file, with the problems found so far.
struct Builder<'a> {
    lines: crate::toml_lines::LineIndex,
    path: &'a Path,
    problems: Vec<Problem>,
    graph: DiGraph<String, Relation>,
    by_name: HashMap<String, NodeIndex>,
}

impl Builder<'_> {
    fn line(&self, span: std::ops::Range<usize>) -> usize {
        self.lines.line(span.start)
    }

    fn problem(&mut self, line: usize, message: String) {
        self.problems.push(Problem {
            path: self.path.to_path_buf(),
            line,
            message,
        });
    }

    /// Every node once, by its trimmed name; the graph needs the player's.
    fn nodes(&mut self, nodes: &[RawNode]) {
        let mut first_line: HashMap<String, usize> = HashMap::new();
        for n in nodes {
            let name = n.name.get_ref().trim().to_string();
            let at = self.line(n.name.span());
            if name.is_empty() {
                self.problem(at, "node name is empty".into());
                continue;
            }
            if let Some(first) = first_line.get(&name) {
                self.problem(
                    at,
                    format!("node \"{name}\" is declared twice (first at line {first})"),
                );
                continue;
            }
            first_line.insert(name.clone(), at);
            let index = self.graph.add_node(name.clone());
            self.by_name.insert(name, index);
        }
        if !self.by_name.contains_key(PLAYER) {
            self.problem(1, format!("the graph needs a \"{PLAYER}\" node"));
        }
    }

    /// A declared node by name, or a problem at the name's line.
    fn endpoint(&mut self, s: &Spanned<String>) -> Option<NodeIndex> {
        let found = self.by_name.get(s.get_ref().trim()).copied();
        if found.is_none() {
            let at = self.line(s.span());
            self.problem(
                at,
                format!(
                    "edge names \"{}\", which is not a declared node",
                    s.get_ref()
                ),
            );
        }
        found
    }

    /// Every edge between declared nodes with a known relation, once, never to itself.
    fn edges(&mut self, edges: &[RawEdge]) {
        let mut seen_edges: HashMap<(NodeIndex, Relation, NodeIndex), usize> = HashMap::new();
        for e in edges {
            let at = self.line(e.relation.span());
            let relation = Relation::parse(e.relation.get_ref());
            if relation.is_none() {
                self.problem(
                    at,
                    format!(
                        "unknown relation \"{}\" (known: {})",
                        e.relation.get_ref(),
                        Relation::ALL.map(|r| format!("\"{r}\"")).join(", ")
                    ),
                );
            }
            let (from, to) = (self.endpoint(&e.from), self.endpoint(&e.to));
            let (Some(from), Some(relation), Some(to)) = (from, relation, to) else {
                continue;
            };
            if from == to {
                self.problem(at, format!("edge from \"{}\" to itself", e.from.get_ref()));
                continue;
            }
            if let Some(first) = seen_edges.get(&(from, relation, to)) {
                let message = format!(
                    "duplicate edge \"{}\" {relation} \"{}\" (first at line {first})",
                    e.from.get_ref(),
                    e.to.get_ref()
                );
                self.problem(at, message);
                continue;
            }
            seen_edges.insert((from, relation, to), at);
            self.graph.add_edge(from, to, relation);
        }
    }

    /// Detector class name -> node, for classes mapped to declared nodes.
    fn detector_classes(
        &mut self,
        classes: &BTreeMap<Spanned<String>, Spanned<String>>,
    ) -> BTreeMap<String, NodeIndex> {
        let mut out = BTreeMap::new();
        for (class, node) in classes {
            match self.by_name.get(node.get_ref().trim()) {
                Some(i) => {
                    out.insert(class.get_ref().clone(), *i);
                }
                None => {
                    let at = self.line(node.span());
                    self.problem(
                        at,
                        format!(
                            "detector class {} maps to \"{}\", which is not a declared node",
                            class.get_ref(),
                            node.get_ref()
                        ),
                    );
                }
            }
        }
        out
    }
}

/// The static graph.
#[derive(Debug, Clone)]
pub struct KnowledgeGraph {
    pub graph: DiGraph<String, Relation>,
    by_name: HashMap<String, NodeIndex>,
    /// Detector class name -> node.
    pub detector_classes: BTreeMap<String, NodeIndex>,
    pub source: PathBuf,
}

impl KnowledgeGraph {
    pub fn load(path: &Path) -> Result<Self, GraphError> {
        let text = std::fs::read_to_string(path).map_err(|source| GraphError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses graph text; every problem found is reported (not only the first), each at its line.
    pub fn parse(text: &str, path: &Path) -> Result<Self, GraphError> {
        let mut b = Builder {
            lines: crate::toml_lines::LineIndex::new(text),
            path,
            problems: Vec::new(),
            graph: DiGraph::new(),
            by_name: HashMap::new(),
        };
        let raw: RawGraph = crate::toml_lines::from_str(text).map_err(|(at, m)| {
            b.problem(at, m);
            GraphError::Invalid {
                problems: std::mem::take(&mut b.problems),
            }
        })?;
        b.nodes(&raw.node);
        b.edges(&raw.edge);
        let detector_classes = b.detector_classes(&raw.detector_classes);
        if !b.problems.is_empty() {
            return Err(GraphError::Invalid {
                problems: b.problems,
            });
        }
        Ok(KnowledgeGraph {
            graph: b.graph,
            by_name: b.by_name,
            detector_classes,
            source: path.to_path_buf(),
        })
    }

    pub fn node(&self, name: &str) -> Option<NodeIndex> {
        self.by_name.get(name).copied()
    }

    pub fn name(&self, node: NodeIndex) -> &str {
        &self.graph[node]
    }

    pub fn player(&self) -> NodeIndex {
        // `parse` refuses graphs without a Player node.
        self.by_name[PLAYER]
    }

    /// Node names in a stable order (alphabetical).
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.by_name.keys().map(String::as_str).collect();
        names.sort();
        names
    }

    /// `(from, relation, to)` of an edge.
    pub fn edge_triple(&self, e: EdgeIndex) -> Option<(&str, Relation, &str)> {
        let (a, b) = self.graph.edge_endpoints(e)?;
        Some((self.name(a), self.graph[e], self.name(b)))
    }

    /// Detector classes that map to no node, given the model's class list.
    pub fn unmapped_classes<'a>(&self, model_classes: &'a [String]) -> Vec<&'a str> {
        model_classes
            .iter()
            .filter(|c| !self.detector_classes.contains_key(*c))
            .map(String::as_str)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<KnowledgeGraph, GraphError> {
        KnowledgeGraph::parse(text, Path::new("kg/test.toml"))
    }

    const SMALL: &str = "[[node]]\nname = \"Player\"\n[[node]]\nname = \"Trunk\"\n[[node]]\nname = \"Log\"\n\
        [[edge]]\nfrom = \"Player\"\nrelation = \"can mine\"\nto = \"Trunk\"\n\
        [[edge]]\nfrom = \"Trunk\"\nrelation = \"outputs\"\nto = \"Log\"\n\
        [detector_classes]\ntrunk = \"Trunk\"\nlog_icon = \"Log\"\n";

    /// A chain of `n` nodes, each made from the one before, all mapped to detector classes.
    fn chain_graph(n: usize) -> String {
        let mut text = String::from("[[node]]\nname = \"Player\"\n");
        for i in 0..n {
            text.push_str(&format!("[[node]]\nname = \"Item {i}\"\n"));
        }
        text.push_str("[[edge]]\nfrom = \"Player\"\nrelation = \"can mine\"\nto = \"Item 0\"\n");
        for i in 1..n {
            text.push_str(&format!(
                "[[edge]]\nfrom = \"Item {}\"\nrelation = \"is used to craft\"\nto = \"Item {i}\"\n",
                i - 1
            ));
        }
        text.push_str("[detector_classes]\n");
        for i in 0..n {
            text.push_str(&format!("item_{i} = \"Item {i}\"\n"));
        }
        text
    }

    #[test]
    fn line_numbers_of_a_big_graph_cost_one_read_of_the_file_not_one_per_item() {
        // 10k nodes, 10k edges, 10k classes: a loader that counted lines from the file's start
        // for every item read the 1 MB file 30k times over (30 s).
        for n in [1_000, 10_000] {
            let text = chain_graph(n);
            let before = crate::toml_lines::scanned_bytes();
            let g = parse(&text).expect("valid");
            let read = crate::toml_lines::scanned_bytes() - before;
            assert_eq!(g.graph.node_count(), n + 1);
            assert_eq!(g.graph.edge_count(), n);
            assert!(
                read <= 2 * text.len() as u64,
                "{n} nodes: line lookups read {read} bytes of a {} byte file",
                text.len()
            );
        }
    }

    #[test]
    fn a_valid_graph_loads() {
        let g = parse(SMALL).expect("valid");
        assert_eq!(g.graph.node_count(), 3);
        assert_eq!(g.graph.edge_count(), 2);
        assert_eq!(g.detector_classes["trunk"], g.node("Trunk").expect("node"));
    }

    #[test]
    fn unknown_relation_dangling_name_and_duplicates_are_reported_with_lines() {
        let text = "[[node]]\nname = \"Player\"\n[[node]]\nname = \"Log\"\n[[node]]\nname = \"Log\"\n\
            [[edge]]\nfrom = \"Player\"\nrelation = \"can chop\"\nto = \"Log\"\n\
            [[edge]]\nfrom = \"Player\"\nrelation = \"can mine\"\nto = \"Tree\"\n\
            [[edge]]\nfrom = \"Player\"\nrelation = \"can mine\"\nto = \"Log\"\n\
            [[edge]]\nfrom = \"Player\"\nrelation = \"can mine\"\nto = \"Log\"\n\
            [detector_classes]\ntrunk = \"Trunk\"\n";
        let err = parse(text).expect_err("invalid").to_string();
        assert!(
            err.contains("kg/test.toml:6: node \"Log\" is declared twice (first at line 4)"),
            "{err}"
        );
        assert!(
            err.contains("kg/test.toml:9: unknown relation \"can chop\""),
            "{err}"
        );
        assert!(
            err.contains("kg/test.toml:14: edge names \"Tree\""),
            "{err}"
        );
        assert!(
            err.contains(
                "kg/test.toml:21: duplicate edge \"Player\" can mine \"Log\" (first at line 17)"
            ),
            "{err}"
        );
        assert!(
            err.contains("kg/test.toml:24: detector class trunk maps to \"Trunk\""),
            "{err}"
        );
    }

    #[test]
    fn syntax_errors_and_unknown_keys_name_the_line() {
        let err = parse("[[node]]\nname = \"Player\"\nlabel = \"x\"\n").expect_err("invalid");
        assert!(err.to_string().starts_with("kg/test.toml:3:"), "{err}");
    }

    #[test]
    fn the_shipped_minecraft_graph_is_valid_and_maps_every_detector_class() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("kg/minecraft.toml");
        let g = KnowledgeGraph::load(&path).expect("kg/minecraft.toml is valid");
        let classes: Vec<String> = [
            "trunk",
            "log_icon",
            "plank_icon",
            "stick_icon",
            "crafting_table_icon",
            "wood_pickaxe_icon",
            "cobblestone_icon",
            "non_cobblestone_icon",
            "stone_pickaxe_icon",
            "coal_ore",
            "coal_icon",
            "iron_ore",
            "iron_ore_icon",
            "iron_icon",
            "furnace_icon",
            "iron_pickaxe_icon",
            "diamond_ore",
            "diamond_icon",
            "diamond_pickaxe_icon",
            "dirt_icon",
            "lava",
            "water",
            "bedrock",
        ]
        .map(String::from)
        .to_vec();
        assert!(g.unmapped_classes(&classes).is_empty());
        for name in [
            "Log",
            "Planks",
            "Stick",
            "Crafting Table",
            "Wooden Pickaxe",
            "Cobblestone",
            "Stone Pickaxe",
            "Iron Ore",
            "Furnace",
            "Iron Ingot",
            "Iron Pickaxe",
            "Diamond",
            "Coal",
            "Charcoal",
        ] {
            assert!(g.node(name).is_some(), "{name} missing");
        }
    }
}
