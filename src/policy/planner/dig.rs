//! Digging for what lies under the ground (a gather rule's `dig`): a staircase down to the
//! depth the thing lies at, then a level tunnel, one call a step, with a look back along the way
//! dug now and then. Whatever comes into view on the way is approached and mined as anything
//! else is; the digging goes on from wherever that left the player, in the heading it left the
//! view in.

use petgraph::graph::NodeIndex;

use super::config::{ArgToken, DigDepth, DigSearch, SquareHeading, skill_of};
use super::{Planner, TURN_BY, View};
use crate::perception::view_digest::central_change;

/// How far the digging has gone since the play began (the player stays down).
#[derive(Debug, Default)]
pub(super) struct Dug {
    /// Steps of staircase dug down.
    down: u32,
    /// Blocks of level tunnel dug since the staircase last went down.
    ahead: u32,
    /// Digs since the view last looked back along the way dug.
    since_look: u32,
    /// The view is turned round (a look back): the next dig turns it round again first.
    looking_back: bool,
    /// The heading was squared to the block grid (`dig.square`) and only digs and turns have
    /// run since.
    on_grid: bool,
    /// The skill of the look straight down queued to square the heading, until it runs.
    look_queued: Option<String>,
    /// The last call was that look: this step's frame shows the floor from above.
    looked_down: bool,
    /// The view digest of the frame before the look, and whether the look is a second try.
    before_look: Option<String>,
    look_retried: bool,
    /// Staircase steps before the depth is read again (`dig.depth`); None before the first read.
    depth_due_in: Option<u32>,
    /// The debug screen was asked for: this step's frame should show it.
    depth_asked: bool,
    /// Reads asked for that showed no position, in a row: after a few the debug screen is taken
    /// to be unreadable and the staircase goes its steps.
    depth_misses: u32,
    /// The feet were read at `stop_y` or deeper: the staircase is over.
    at_depth: bool,
}

/// Reads in a row that showed no position before the depth is no longer read.
const DEPTH_MISSES: u32 = 3;

impl Dug {
    /// Notes the call a step chose: a call other than a dig or a turn by degrees may have left
    /// the heading anywhere (an aim, a walk round, a screen's clicks), and the look straight
    /// down, once it has run, makes the next frame the one the grid is read from.
    pub(super) fn note_call<'d>(
        &mut self,
        skill: &str,
        mut digs: impl Iterator<Item = &'d DigSearch>,
    ) {
        self.looked_down = self.look_queued.as_deref() == Some(skill);
        if self.looked_down {
            self.look_queued = None;
        }
        // Showing and hiding the debug screen leaves the heading as it was.
        let keeps = digs.any(|d| {
            [&d.stairs, &d.tunnel]
                .iter()
                .any(|c| skill_of(c) == Some(skill))
                || d.square.as_ref().is_some_and(|s| s.turn == skill)
                || d.depth
                    .as_ref()
                    .is_some_and(|p| skill_of(&p.show) == Some(skill))
        });
        if !keeps && !self.looked_down {
            self.on_grid = false;
        }
    }
}

impl Planner {
    /// Nothing to approach in view and the thing lies under the ground: one more step of the
    /// staircase down, or, once as deep as `dig.down` says, one more block of tunnel; every
    /// `look_back_every` digs a half turn first, for one step's look at the walls dug past.
    pub(super) fn dig_for(
        &mut self,
        item: NodeIndex,
        approach: &str,
        dig: &DigSearch,
        view: &View,
    ) {
        self.gather_streak = 0;
        self.approach_walks = None;
        // A thing aimed at and lost is dug toward (the dig keeps the heading the aim left),
        // not walked to: underground a walk ends at the next wall.
        self.approaching = false;
        self.last_turn = None;
        if let Some(depth) = &dig.depth
            && self.read_depth(depth, dig.down, view)
        {
            return;
        }
        let half_turn = || vec![ArgToken::Token(TURN_BY.into()), ArgToken::Number(180.0)];
        let dug = &mut self.dug;
        if std::mem::take(&mut dug.looking_back) {
            let why = format!("no {approach} along the way dug: turn round and dig on");
            self.pending.push_back((half_turn(), why));
            // Two half turns by mouse counts are a degree or two off: squared anew after them.
            dug.on_grid = false;
        } else if dig.look_back_every.is_some_and(|n| dug.since_look >= n) {
            dug.since_look = 0;
            dug.looking_back = true;
            // What the digs cut through comes by itself, and with the hotbar full it goes to the
            // bag's other rows: look there now and then (a run tunnelled 70 blocks for coal
            // with seven in its bag, the hotbar full of saplings, leaves and an apple).
            if self.hud_free_slots(view) <= 1 {
                self.gathered_unseen.insert(item);
            }
            let why = format!("look back along the way dug for {approach} in its walls");
            self.pending.push_back((half_turn(), why));
            return;
        }
        if let Some(square) = &dig.square
            && !self.dug.on_grid
            && !self.square_heading(square, view)
        {
            return;
        }
        let dug = &mut self.dug;
        dug.since_look += 1;
        let (call, why) = if dug.down < dig.down && !dug.at_depth {
            dug.down += 1;
            dug.ahead = 0;
            if let Some(n) = &mut dug.depth_due_in {
                *n = n.saturating_sub(1);
            }
            (
                dig.stairs.clone(),
                format!(
                    "no {approach} in view: dig down for it (step {} of {} of the staircase)",
                    dug.down, dig.down
                ),
            )
        } else {
            dug.ahead += 1;
            (
                dig.tunnel.clone(),
                format!(
                    "no {approach} in view {} steps down: tunnel on ({} blocks)",
                    dug.down, dug.ahead
                ),
            )
        };
        self.pending.push_back((call, why));
    }

    /// The depth by the debug screen (`dig.depth`): shows it for one frame before the first
    /// step of the staircase and every `every` steps after, reads the feet's y off that frame
    /// (`perception.position`) and hides it again; at `stop_y` or deeper the staircase is over
    /// and the digging goes level. A frame that shows the debug screen unasked (a hide that did
    /// not take) hides it. True when a call was queued.
    fn read_depth(&mut self, depth: &DigDepth, down: u32, view: &View) -> bool {
        let dug = &mut self.dug;
        let position = view.perception.position;
        if std::mem::take(&mut dug.depth_asked) {
            match position {
                Some([_, y, _]) => {
                    dug.depth_misses = 0;
                    dug.at_depth |= y <= depth.stop_y;
                    // A step goes a block down: near the depth, read again as it is reached.
                    let steps_left = (y - depth.stop_y).ceil().max(1.0) as u32;
                    dug.depth_due_in = Some(steps_left.min(depth.every));
                    let why = if dug.at_depth {
                        format!(
                            "the debug screen says y {y:.1}, at {} or deeper: hide it and dig level",
                            depth.stop_y
                        )
                    } else {
                        format!(
                            "the debug screen says y {y:.1}, above {}: hide it and dig on down",
                            depth.stop_y
                        )
                    };
                    self.pending.push_back((depth.show.clone(), why));
                    return true;
                }
                None => {
                    dug.depth_misses += 1;
                    // Shown but unreadable: hidden again, or it would stay over the view. Not
                    // shown (the key was lost): nothing to hide.
                    if view.perception.debug_screen_shown {
                        let why = "the debug screen shows no position that reads: hide it";
                        self.pending
                            .push_back((depth.show.clone(), why.to_string()));
                        return true;
                    }
                }
            }
        } else if position.is_some() {
            let why = "the debug screen is still shown: hide it".to_string();
            self.pending.push_back((depth.show.clone(), why));
            return true;
        }
        // Not on the frame a look straight down shows: that one squares the heading first.
        let due = dug.depth_due_in.is_none_or(|n| n == 0) && !dug.looked_down;
        if dug.at_depth || dug.depth_misses >= DEPTH_MISSES || dug.down >= down || !due {
            return false;
        }
        dug.depth_due_in = Some(depth.every);
        dug.depth_asked = true;
        let why = "how deep is the staircase: show the debug screen".to_string();
        self.pending.push_back((depth.show.clone(), why));
        true
    }

    /// Squares the heading to the block grid before a dig: looks straight down first, then
    /// (on the frame that look shows) turns by the grid's angle. False while the look is queued
    /// (the dig waits for its frame).
    fn square_heading(&mut self, square: &SquareHeading, view: &View) -> bool {
        let dug = &mut self.dug;
        let digest = &view.perception.view_digest;
        let unchanged = dug
            .before_look
            .as_deref()
            .and_then(|before| central_change(before, digest))
            .is_some_and(|change| change < square.look_change);
        let retry = dug.looked_down && unchanged && !dug.look_retried;
        if !std::mem::take(&mut dug.looked_down) || retry {
            dug.look_queued = skill_of(&square.look).map(str::to_string);
            dug.before_look = Some(digest.clone());
            dug.look_retried = retry;
            let why = if retry {
                "the look down left the view as it was: look straight down again"
            } else {
                "square the heading to the block grid before digging: look straight down"
            };
            self.pending.push_back((square.look.clone(), why.into()));
            return false;
        }
        dug.before_look = None;
        dug.look_retried = false;
        // Read or not, the heading is taken as it is from here: a floor with no grid to see
        // (dark, water) is not looked at again and again.
        dug.on_grid = true;
        if let Some(angle) = view.perception.grid_angle
            && angle.strength >= square.min_strength
            && angle.degrees.abs() >= square.tolerance
        {
            let why = format!(
                "the block grid runs {:.1} degrees off the heading: turn square to it",
                angle.degrees
            );
            let turn = vec![
                ArgToken::Token(square.turn.clone()),
                ArgToken::Number(f64::from(angle.degrees)),
            ];
            self.pending.push_back((turn, why));
        }
        true
    }
}
