//! all-MiniLM-L6-v2 sentence embeddings through ONNX Runtime: WordPiece ids -> BERT encoder ->
//! mean over the tokens -> L2 normalisation (the sentence-transformers pipeline).
//!
//! The model folder is what `scripts/fetch-minilm.sh` (or `tools/kg/export_minilm.py`) writes:
//! `model.onnx` (encoder only, output `last_hidden_state`) and `vocab.txt`.

use std::path::{Path, PathBuf};

use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::TensorRef;

use super::wordpiece::{VocabError, WordPiece};
use crate::perception::runtime;

/// The sequence length all-MiniLM-L6-v2 was trained with ([CLS] and [SEP] included).
pub const MAX_SEQ_LEN: usize = 256;

#[derive(Debug, thiserror::Error)]
pub enum EmbeddingError {
    #[error("ONNX Runtime is not initialised")]
    RuntimeNotInitialised,
    #[error(
        "sentence-embedding model folder {0} lacks model.onnx or vocab.txt; run `bash scripts/fetch-minilm.sh` to build it"
    )]
    Missing(PathBuf),
    #[error(transparent)]
    Vocab(#[from] VocabError),
    #[error("cannot load {path}: {reason}")]
    Load { path: PathBuf, reason: String },
    #[error("embedding model {path} failed: {reason}")]
    Run { path: PathBuf, reason: String },
}

pub struct SentenceEncoder {
    session: Session,
    tokenizer: WordPiece,
    model_path: PathBuf,
}

impl SentenceEncoder {
    /// Loads `dir/model.onnx` and `dir/vocab.txt`; ONNX Runtime must be initialised.
    pub fn load(dir: &Path, threads: usize) -> Result<Self, EmbeddingError> {
        let env = runtime::environment().ok_or(EmbeddingError::RuntimeNotInitialised)?;
        let model_path = dir.join("model.onnx");
        let vocab_path = dir.join("vocab.txt");
        if !model_path.is_file() || !vocab_path.is_file() {
            return Err(EmbeddingError::Missing(dir.to_path_buf()));
        }
        let tokenizer = WordPiece::from_file(&vocab_path, MAX_SEQ_LEN)?;
        let load_err = |reason: String| EmbeddingError::Load {
            path: model_path.clone(),
            reason,
        };
        let session = Session::builder(env)
            .map_err(|e| load_err(e.to_string()))?
            .with_intra_threads(threads.max(1))
            .map_err(|e| load_err(e.to_string()))?
            .with_optimization_level(GraphOptimizationLevel::Level3)
            .map_err(|e| load_err(e.to_string()))?
            .commit_from_file(&model_path)
            .map_err(|e| load_err(format!("not a loadable ONNX model: {e}")))?;
        Ok(SentenceEncoder {
            session,
            tokenizer,
            model_path,
        })
    }

    pub fn tokenizer(&self) -> &WordPiece {
        &self.tokenizer
    }

    /// The L2-normalised embedding of one text.
    pub fn embed(&mut self, text: &str) -> Result<Vec<f32>, EmbeddingError> {
        let ids = self.tokenizer.encode(text).ids;
        let run_err = |reason: String| EmbeddingError::Run {
            path: self.model_path.clone(),
            reason,
        };
        let n = ids.len();
        let mask = vec![1i64; n];
        let types = vec![0i64; n];
        let shape = [1usize, n];
        let ids_t = TensorRef::from_array_view((shape, ids.as_slice()))
            .map_err(|e| run_err(e.to_string()))?;
        let mask_t = TensorRef::from_array_view((shape, mask.as_slice()))
            .map_err(|e| run_err(e.to_string()))?;
        let types_t = TensorRef::from_array_view((shape, types.as_slice()))
            .map_err(|e| run_err(e.to_string()))?;
        let outputs = self
            .session
            .run(ort::inputs![
                "input_ids" => ids_t,
                "attention_mask" => mask_t,
                "token_type_ids" => types_t,
            ])
            .map_err(|e| run_err(e.to_string()))?;
        let (shape, hidden) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(|e| run_err(format!("output is not f32: {e}")))?;
        let dims: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
        if dims.len() != 3 || dims[0] != 1 || dims[1] != n || dims[2] == 0 {
            return Err(run_err(format!(
                "expected last_hidden_state [1, {n}, hidden], got {dims:?}"
            )));
        }
        Ok(mean_pool_normalised(hidden, dims[2]))
    }
}

/// Mean over the token rows (all attended), then divide by the L2 norm.
fn mean_pool_normalised(hidden: &[f32], width: usize) -> Vec<f32> {
    let rows = hidden.len() / width;
    let mut mean = vec![0f32; width];
    for row in hidden.chunks_exact(width) {
        for (m, v) in mean.iter_mut().zip(row) {
            *m += v;
        }
    }
    mean.iter_mut().for_each(|m| *m /= rows.max(1) as f32);
    let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    mean.iter_mut().for_each(|m| *m /= norm);
    mean
}

/// Cosine similarity of two L2-normalised vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_pooling_then_unit_length() {
        let v = mean_pool_normalised(&[1.0, 0.0, 3.0, 4.0], 2);
        // mean (2, 2) -> (1/sqrt2, 1/sqrt2)
        assert!((v[0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert!((cosine(&v, &v) - 1.0).abs() < 1e-6);
    }
}
