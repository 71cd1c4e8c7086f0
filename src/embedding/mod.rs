//! Text embeddings (all-MiniLM-L6-v2 through ONNX Runtime): the knowledge graph's similarity
//! baseline uses them, and the long-term memories will.

mod minilm;
pub(crate) mod settings;
mod wordpiece;

pub use minilm::{EmbeddingError, SentenceEncoder, cosine};
pub use wordpiece::{Encoding, WordPiece};
