//! The agent: the loop that plays (`play`), and the session recording around it.

pub mod pipeline;
pub mod play;
pub mod session;
