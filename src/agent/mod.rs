//! The agent: the loop that plays (`play`), the session recording around it, replay of recorded
//! sessions, and the session report.

pub mod bench;
pub mod decide;
pub mod pipeline;
pub mod play;
pub mod policy_eval;
pub mod replay;
pub mod report;
pub mod scripted;
pub mod session;
pub mod settings;
pub mod success;
