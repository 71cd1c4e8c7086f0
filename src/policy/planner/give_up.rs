//! Passing over things out of reach that never come into reach (the scout's `give_up_after`).

use super::Planner;
use crate::perception::EnvironmentEntity;

#[derive(Debug, Default)]
pub(super) struct GiveUp {
    /// Steps toward things out of reach since one was last in reach.
    unreached: u32,
    /// Scout walks left in which things out of reach are passed over.
    pass_legs: u32,
}

impl GiveUp {
    /// One scout walk done.
    pub(super) fn walked_on(&mut self) {
        self.pass_legs = self.pass_legs.saturating_sub(1);
    }

    /// Whether things out of reach are being passed over.
    pub(super) fn passing_over(&self) -> bool {
        self.pass_legs > 0
    }

    /// Something came into reach, or was gathered.
    pub(super) fn reached(&mut self) {
        self.unreached = 0;
    }
}

impl Planner {
    /// `nearest`, unless it is out of reach and things out of reach are passed over: after
    /// `give_up_after` steps toward things out of reach with none coming into reach, the scout
    /// turns aside and walks on past them for its `legs` walks.
    pub(super) fn worth_approaching(
        &mut self,
        nearest: Option<EnvironmentEntity>,
        approach: &str,
    ) -> Option<EnvironmentEntity> {
        let e = nearest?;
        if e.in_reach {
            self.give_up.reached();
            return Some(e);
        }
        if self.give_up.passing_over() {
            return None;
        }
        let Some((limit, legs, turn)) = self
            .config
            .scout
            .as_ref()
            .and_then(|s| Some((s.give_up_after?, s.legs, s.turn_deg)))
        else {
            return Some(e);
        };
        self.give_up.unreached += 1;
        if self.give_up.unreached <= limit {
            return Some(e);
        }
        self.give_up.unreached = 0;
        self.give_up.pass_legs = legs;
        // A fresh start in a new heading: no walk on to a lost target, no stale view to compare.
        self.scout_legs_left = legs;
        self.scout_from = None;
        self.approaching = false;
        self.last_turn = None;
        self.approach_walks = None;
        self.last_walk = None;
        self.turn_aside(
            2.0 * turn,
            format!(
                "{limit} steps toward a {approach} out of reach brought none into reach: turn aside and walk on past them"
            ),
        );
        None
    }
}
