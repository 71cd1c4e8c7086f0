//! A game: its profile, `config/games/<game>.toml` read once and checked, with its skills. Each
//! section is typed by the subsystem that uses it; this module puts them together and checks
//! them against each other (a `[success]` skill exists, keys are real keys...).

mod profile;
pub(crate) mod settings;
mod success_rule;

pub use profile::{GameProfile, ProfileError};
pub use success_rule::SuccessRule;
