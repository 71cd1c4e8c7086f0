//! `[game]` of the config: which profile, which window, and how it is read.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::config::validate::check;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameConfig {
    pub profile: String,
    pub window_title: String,
    pub gui_scale: GuiScale,
    /// Wait after an action before the next capture, so the frame shows what it changed.
    pub settle_ms: u64,
    /// How the game window's pixels are read.
    pub capture: crate::capture::Transport,
}

/// `"auto"` or a fixed scale 1..=6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuiScale {
    Fixed(u8),
    Auto,
}

impl Serialize for GuiScale {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            GuiScale::Fixed(n) => s.serialize_u8(*n),
            GuiScale::Auto => s.serialize_str("auto"),
        }
    }
}

impl<'de> Deserialize<'de> for GuiScale {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = GuiScale;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"auto\" or a GUI scale 1-6")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<GuiScale, E> {
                u8::try_from(v)
                    .ok()
                    .filter(|n| (1..=6).contains(n))
                    .map(GuiScale::Fixed)
                    .ok_or_else(|| E::custom(format!("GUI scale {v} is not 1-6")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<GuiScale, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<GuiScale, E> {
                match v {
                    "auto" => Ok(GuiScale::Auto),
                    other => Err(E::custom(format!(
                        "expected \"auto\" or a number 1-6, got \"{other}\""
                    ))),
                }
            }
        }
        d.deserialize_any(Visitor)
    }
}

impl GameConfig {
    pub(crate) fn validate(&self) -> Result<(), (String, String)> {
        check(
            !self.profile.trim().is_empty()
                && self
                    .profile
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "game.profile",
            "must be a non-empty name of letters, digits, '-' or '_'",
        )?;
        check(
            !self.window_title.trim().is_empty(),
            "game.window_title",
            "must not be empty",
        )?;
        if let GuiScale::Fixed(s) = self.gui_scale {
            check(
                (1..=6).contains(&s),
                "game.gui_scale",
                "must be \"auto\" or 1-6",
            )?;
        }
        Ok(())
    }
}
