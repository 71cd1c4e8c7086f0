//! The knowledge graph: static Minecraft facts (`kg/<game>.toml`), the visual attributes of the
//! current step, retrieval-based pooling, and the text the prompt gets.

mod embed;
pub mod evaluate;
mod graph;
mod pool;
pub(crate) mod settings;
mod similarity;
mod text;

pub use embed::{VisualState, embed};
pub use graph::{GraphError, KnowledgeGraph, Relation};
pub use pool::{PathLimits, PathReport, Strategy, Subgraph, mentions, path_search, pool};
pub use similarity::SimilarityRetriever;
pub use text::{PooledText, ScreenText, SlotLabel, textualize, to_dot};
