//! The knowledge graph: static Minecraft facts (`kg/<game>.toml`), the visual attributes of the
//! current step, retrieval-based pooling, and the text the prompt gets.

pub mod embed;
pub mod evaluate;
mod graph;
pub mod pool;
pub(crate) mod settings;
pub mod similarity;
mod text;

pub use embed::{VisualState, embed};
pub use graph::{GraphError, KnowledgeGraph, Relation};
pub use pool::{PathLimits, PathReport, Strategy, Subgraph, pool};
pub use text::{PooledText, ScreenText, SlotLabel, textualize, to_dot};
