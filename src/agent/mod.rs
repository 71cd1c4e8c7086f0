//! The agent: one step over a frame (`step`), the drivers around it (`play` on the game window,
//! `replay` on a recorded session, `bench`), the session recording, and the session report.

pub mod bench;
pub mod decide;
pub mod long_term;
pub mod pipeline;
pub mod play;
pub mod policy_eval;
pub mod replay;
pub mod report;
pub mod scripted;
pub mod session;
pub mod settings;
pub mod setup;
pub mod step;
pub mod success;
