//! The LIFO memory stack of past decisions (the paper's short-term memory): every step pushes
//! its action, a short reasoning summary and, once known, the outcome; the prompt recalls the
//! newest `memory.recall_steps` of them, newest first.

use serde::{Deserialize, Serialize};

use crate::skills::SkillCall;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub step: u64,
    pub action: SkillCall,
    /// The model's reasoning, shortened to [`SUMMARY_CHARS`].
    pub reasoning: String,
    /// "done", "failed: <why>", "stopped: <why>" ... once the step has run.
    pub outcome: Option<String>,
}

pub const SUMMARY_CHARS: usize = 160;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryStack {
    decisions: Vec<Decision>,
}

/// The last non-empty line of a reasoning text, shortened on a character boundary.
pub fn summarize(reasoning: &str) -> String {
    let line = reasoning
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.to_ascii_lowercase().starts_with("action"))
        .unwrap_or("");
    if line.chars().count() <= SUMMARY_CHARS {
        line.to_string()
    } else {
        line.chars().take(SUMMARY_CHARS - 1).collect::<String>() + "…"
    }
}

impl MemoryStack {
    pub fn push(&mut self, step: u64, action: SkillCall, reasoning: &str) {
        self.decisions.push(Decision {
            step,
            action,
            reasoning: summarize(reasoning),
            outcome: None,
        });
    }

    /// Records what happened to the newest decision.
    pub fn set_outcome(&mut self, outcome: impl Into<String>) {
        if let Some(last) = self.decisions.last_mut() {
            last.outcome = Some(outcome.into());
        }
    }

    pub fn len(&self) -> usize {
        self.decisions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.decisions.is_empty()
    }

    /// The newest `n` decisions, newest first.
    pub fn recall(&self, n: usize) -> impl Iterator<Item = &Decision> {
        self.decisions.iter().rev().take(n)
    }

    /// The prompt's "previous decisions" lines.
    pub fn recall_text(&self, n: usize) -> String {
        self.recall(n)
            .map(|d| {
                let mut line = format!("step {}: {}", d.step, d.action);
                if let Some(o) = &d.outcome {
                    line.push_str(&format!(" -> {o}"));
                }
                if !d.reasoning.is_empty() {
                    line.push_str(&format!(" (because: {})", d.reasoning));
                }
                line
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str) -> SkillCall {
        SkillCall {
            skill: name.into(),
            args: vec![],
        }
    }

    #[test]
    fn recall_is_newest_first_and_bounded() {
        let mut m = MemoryStack::default();
        m.push(
            1,
            call("open_inventory"),
            "The inventory is closed.\nAction: open_inventory()",
        );
        m.set_outcome("done");
        m.push(2, call("close_screen"), "");
        m.push(3, call("mine_log"), "x");
        assert_eq!(
            m.recall_text(2),
            "step 3: mine_log() (because: x)\nstep 2: close_screen()"
        );
        assert_eq!(
            m.recall_text(10).lines().last(),
            Some("step 1: open_inventory() -> done (because: The inventory is closed.)")
        );
        assert_eq!(m.recall_text(0), "");
    }

    #[test]
    fn summaries_are_short_and_cut_on_char_boundaries() {
        let long = "é".repeat(500);
        let s = summarize(&long);
        assert_eq!(s.chars().count(), SUMMARY_CHARS);
        assert!(s.ends_with('…'));
    }
}
