//! `[embedding]` of the config: the text encoder.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::validate::check;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingConfig {
    pub model_dir: PathBuf,
    pub threads: usize,
}

impl EmbeddingConfig {
    pub(crate) fn validate(&self) -> Result<(), (String, String)> {
        check(
            !self.model_dir.as_os_str().is_empty(),
            "embedding.model_dir",
            "must name a folder",
        )?;
        check(
            (1..=64).contains(&self.threads),
            "embedding.threads",
            "must be 1-64",
        )?;
        Ok(())
    }
}
