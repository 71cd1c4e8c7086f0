//! The agent: one step over a frame (`step`), the drivers around it (`play` on the game window,
//! `replay` on a recorded session, `bench`), the session recording, and the session report.

pub mod bench;
pub mod decision_bench;
mod end;
mod memory_step;
pub mod pipeline;
pub mod play;
pub mod policy_choice;
pub mod replay;
pub mod scripted_run;
mod see;
pub mod session;
pub mod session_report;
pub(crate) mod settings;
pub mod setup;
mod step;
mod success;
