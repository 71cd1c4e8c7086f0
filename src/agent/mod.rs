//! The agent: one step over a frame (`step`), the drivers around it (`play` on the game window,
//! `replay` on a recorded session, `bench`), the session recording, and the session report.

pub mod bench;
pub mod decision_bench;
mod end;
mod memory_step;
pub mod pipeline;
pub mod play;
mod policy_choice;
mod replay;
pub mod scripted_run;
mod see;
mod session;
pub mod session_report;
pub(crate) mod settings;
mod setup;
mod step;
mod success;

pub use policy_choice::{LlmOptions, PolicyChoice, build_policy};
pub use replay::{StepDiff, replay};
pub use session::{Recorder, Session, Validation};
pub use setup::{GraphFiles, Setup};
