//! `[pooling]` of the config: the bounds of path search.

use serde::{Deserialize, Serialize};

use crate::config::validate::check;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolingConfig {
    pub max_path_length: usize,
    pub max_paths: usize,
    pub similarity_threshold: f32,
}

impl PoolingConfig {
    pub(crate) fn validate(&self) -> Result<(), (String, String)> {
        check(
            (1..=64).contains(&self.max_path_length),
            "pooling.max_path_length",
            "must be 1-64",
        )?;
        check(
            (1..=10_000_000).contains(&self.max_paths),
            "pooling.max_paths",
            "must be 1-10000000",
        )?;
        check(
            (-1.0..=1.0).contains(&self.similarity_threshold),
            "pooling.similarity_threshold",
            "must be a cosine similarity in [-1, 1]",
        )?;
        Ok(())
    }
}
