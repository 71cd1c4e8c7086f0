//! `[safety]` and `[session]` of the config: the play loop's limits and stops, and its recording.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::validate::check;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SafetyConfig {
    pub max_steps: u64,
    pub max_minutes: f64,
    pub max_cost_usd: f64,
    pub emergency_stop_key: String,
    pub corner_stop_secs: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionConfig {
    pub dir: PathBuf,
    pub jpeg_quality: u8,
}

impl SafetyConfig {
    pub(crate) fn validate(&self) -> Result<(), (String, String)> {
        let s = self;
        check(
            s.max_minutes >= 0.0 && s.max_minutes.is_finite(),
            "safety.max_minutes",
            "must be >= 0 (0 = no limit)",
        )?;
        check(
            s.max_cost_usd >= 0.0 && s.max_cost_usd.is_finite(),
            "safety.max_cost_usd",
            "must be >= 0 (0 = no limit)",
        )?;
        check(
            !s.emergency_stop_key.trim().is_empty(),
            "safety.emergency_stop_key",
            "must name a key (e.g. F12)",
        )?;
        check(
            s.corner_stop_secs > 0.0 && s.corner_stop_secs <= 60.0,
            "safety.corner_stop_secs",
            "must be in (0, 60]",
        )?;
        Ok(())
    }
}

impl SessionConfig {
    pub(crate) fn validate(&self) -> Result<(), (String, String)> {
        check(
            !self.dir.as_os_str().is_empty(),
            "session.dir",
            "must not be empty",
        )?;
        check(
            (1..=100).contains(&self.jpeg_quality),
            "session.jpeg_quality",
            "must be 1-100",
        )?;
        Ok(())
    }
}
