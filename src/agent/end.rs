//! Why a session ended.

use crate::skills::StopReason;

/// Why a play session ended; the session's end record holds its text.
#[derive(Debug, Clone, PartialEq)]
pub enum EndReason {
    /// The task's target is in the inventory.
    Success,
    Stopped(StopReason),
    StepLimit(u64),
    /// Minutes.
    TimeLimit(f64),
    /// US dollars.
    CostCap(f64),
    /// Played on recorded frames, and they ran out.
    FramesRanOut,
    WindowGone,
    /// An error ended the loop (the error itself is returned too).
    Error(String),
    /// The game showed its death screen (`[success] death_screen`).
    Died,
}

impl EndReason {
    pub fn is_success(&self) -> bool {
        *self == EndReason::Success
    }
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EndReason::Success => f.write_str("success: the target is in the inventory"),
            EndReason::Stopped(why) => write!(f, "stopped: {why}"),
            EndReason::StepLimit(n) => write!(f, "step limit ({n}) reached"),
            EndReason::TimeLimit(min) => write!(f, "time limit ({min} min) reached"),
            EndReason::CostCap(usd) => write!(f, "cost cap (${usd:.2}) reached"),
            EndReason::FramesRanOut => f.write_str("no more recorded frames"),
            EndReason::WindowGone => f.write_str("the game window disappeared"),
            EndReason::Error(e) => write!(f, "error: {e}"),
            EndReason::Died => f.write_str("died: the game showed its death screen"),
        }
    }
}
