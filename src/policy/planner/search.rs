//! Getting an item from the world: finding the thing it comes from (looking around, the scout's
//! walks, detours, climbs), walking to it, aiming at it and mining it, and picking up its drop.

use super::config::skill_of;
use super::*;

impl Planner {
    pub(super) fn gather(&mut self, item: NodeIndex, view: &View) -> Result<(), String> {
        let name = view.kg.name(item).to_string();
        let rule = self
            .config
            .gather
            .get(&name)
            .cloned()
            .ok_or_else(|| format!("no gather rule for {name}"))?;
        if self.screen.is_some() {
            if self.looked_after_blind.take() == Some(item)
                && let Some((gathered, before)) = self.blind_before.take()
                && gathered == item
                && matches!((before, view.held(item)), (Some(b), Some(n)) if n <= b)
            {
                self.blind_gather_empty = Some(item);
            }
            self.close_screen(&format!("close the screen to go and get {name}"));
            return Ok(());
        }
        if self.gather_item != Some(item) {
            self.gather_item = Some(item);
            self.gather_streak = 0;
            self.approach_walks = None;
            self.fruitless_pickups = 0;
            self.mine_view = None;
        }
        let mut call = vec![ArgToken::Token(rule.skill.clone())];
        call.extend(rule.args.iter().cloned());
        let Some(approach) = rule.approach.as_deref() else {
            self.gather_blind(item, &name, call, view);
            return Ok(());
        };
        let goal = GatherGoal {
            item,
            name: &name,
            approach,
            rule: &rule,
            walk_seconds: rule
                .approach_seconds
                .unwrap_or(self.config.approach_seconds),
        };
        if self.walk_to_drop(&goal, view) {
            return Ok(());
        }
        match self.worth_approaching(nearest_entity(approach, view), approach) {
            None => match &rule.dig {
                Some(dig) => self.dig_for(item, approach, dig, view),
                None => self.look_for(approach, view),
            },
            Some(e) => self.close_in(&goal, &e, call, view),
        }
        Ok(())
    }

    /// A gather with nothing to approach (the rule's skill works where the player stands):
    /// queued, and its item looked for in the bag afterwards.
    pub(super) fn gather_blind(
        &mut self,
        item: NodeIndex,
        name: &str,
        call: Vec<ArgToken>,
        view: &View,
    ) {
        if self.blind_gather_empty.take() == Some(item) {
            let why = format!("the bag held no more {name} after the last try: go elsewhere first");
            match self.config.gather.get(name).map(|r| r.elsewhere.clone()) {
                Some(calls) if !calls.is_empty() => self.queue(&calls, &why),
                _ if !self.config.detour.is_empty() => self.go_round(&why),
                _ => {}
            }
        }
        self.gathered_unseen.insert(item);
        self.blind_before = Some((item, view.held(item)));
        self.pending.push_back((call, format!("get {name}")));
    }

    /// After a mine whose item did not come: walk to where the mined thing stood to pick up its
    /// drop (longer each fruitless time). True when the walk is queued.
    pub(super) fn walk_to_drop(&mut self, goal: &GatherGoal, view: &View) -> bool {
        let GatherGoal {
            item,
            name,
            approach,
            ..
        } = *goal;
        let Some((mined, before)) = self.mined.take() else {
            return false;
        };
        let Some(seconds) = self.config.pickup_walk.filter(|_| mined == item) else {
            return false;
        };
        let came = match (before, view.held(item)) {
            (Some(b), Some(n)) => n > b,
            (None, Some(_)) => true,
            (_, None) => false,
        };
        // Either way the next mine is a fresh try: the item came, or its drop is walked to.
        self.gather_streak = 0;
        if came {
            self.fruitless_pickups = 0;
            self.mine_view = None;
            self.climbed_for_drop = None;
            return false;
        }
        self.last_turn = None;
        if self.fruitless_pickups == 0 && self.hud_free_slots(view) <= 1 {
            // The hotbar may be full with one item the detector does not know: the
            // drop may have gone to the bag's other rows (the full chain's iron ore
            // went there twice, and the loop mined on to the step limit).
            self.gathered_unseen.insert(item);
        }
        let longer = 1 + (self.fruitless_pickups / 2).min(2);
        self.fruitless_pickups += 1;
        // The second walk in vain: the drop lies up a wall the walks cannot climb.
        if self.fruitless_pickups == 2
            && !self.config.climb.is_empty()
            && self.climbed_for_drop != Some(item)
        {
            self.climbed_for_drop = Some(item);
            let climb = self.config.climb.clone();
            self.queue(
                &climb,
                &format!(
                    "walks to the {name} the {approach} dropped did not get it: climb toward it"
                ),
            );
        }
        // With a jump first: the drop may lie a step up (a trunk on a terrace).
        self.walk(
            JUMP,
            (seconds * f64::from(longer) * 10.0).round() / 10.0,
            format!(
                "mined the {approach}: walk to where it stood to pick up the {name} it dropped"
            ),
        );
        true
    }

    /// Nothing to approach in view: walk to where the last aimed-at one was, go round after
    /// looking around too often, else look around.
    pub(super) fn look_for(&mut self, approach: &str, view: &View) {
        self.gather_streak = 0;
        self.approach_walks = None;
        let lost_on_the_way = std::mem::take(&mut self.approaching);
        if let (Some(seconds), true) = (
            self.config.lost_target_walk,
            self.last_turn.take().is_some() || lost_on_the_way,
        ) {
            self.walk(
                JUMP,
                seconds,
                format!("the {approach} aimed at a step ago is out of sight: walk to where it was"),
            );
            return;
        }
        if let Some(scout) = self.config.scout.clone() {
            self.scout(&scout, approach, view);
            return;
        }
        if self.explores_since_gather >= EXPLORES_BEFORE_DETOUR && !self.config.detour.is_empty() {
            // Not an exploration: the thing in view must not cut it short.
            self.explores_since_gather = 0;
            self.go_round(&format!(
                "looked around {EXPLORES_BEFORE_DETOUR} times for a {approach} without getting one: go round"
            ));
            return;
        }
        self.explores_since_gather += 1;
        let explore = self.config.explore.clone();
        self.queue(&explore, &format!("no {approach} in view: look around"));
        self.exploring_for = view.kg.node(approach);
    }

    /// Nothing to approach in view, with `[planner.scout]`: look around once, then walk on in
    /// the heading the look around came back to (a full circle ends where it began), a walk a
    /// step, turning aside first where the last walk left the view as it was (a wall, a cliff
    /// face) or what must be avoided (water) lies ahead. Whatever comes into view ends it. A
    /// round (a look around and its walks) after rounds with a blocked walk sets off
    /// `turn_deg` further round for each of them.
    pub(super) fn scout(&mut self, scout: &ScoutConfig, approach: &str, view: &View) {
        self.exploring_for = view.kg.node(approach);
        let digest = view.perception.view_digest.clone();
        if self.scout_legs_left == 0 && !self.give_up.passing_over() {
            let explore = self.config.explore.clone();
            self.queue(&explore, &format!("no {approach} in view: look around"));
            if std::mem::take(&mut self.scout_round_blocked) {
                self.scout_blocked_rounds += 1;
                let rounds = self.scout_blocked_rounds;
                // Within -180..180, the turn's range: 70, 140, -150, -80, ...
                let deg = (scout.turn_deg * f64::from(rounds) + 180.0).rem_euclid(360.0) - 180.0;
                self.pending.push_back((
                    vec![ArgToken::Token(TURN_BY.into()), ArgToken::Number(deg)],
                    format!(
                        "walks were blocked in {rounds} round(s) in a row: set off another way"
                    ),
                ));
            } else {
                self.scout_blocked_rounds = 0;
            }
            self.scout_legs_left = scout.legs;
            self.scout_from = None;
            self.scout_unlevel = false;
            return;
        }
        if std::mem::take(&mut self.scout_unlevel)
            && let Some(level) = &scout.level
        {
            self.queue(
                std::slice::from_ref(level),
                "the view was turned to aim: level it before walking on",
            );
            self.scout_from = None;
        }
        let blocked = self
            .scout_from
            .take()
            .and_then(|before| view_change(&before, &digest))
            .is_some_and(|change| change < scout.blocked_change);
        let ahead = scout.avoid.as_deref().and_then(|class| {
            let (cx, cy) = view.crosshair();
            let min_w = scout.avoid_width * view.perception.frame_w as f32;
            view.perception
                .entities
                .iter()
                .find(|e| {
                    e.class == class && e.y > cy && e.w >= min_w && (e.x - cx).abs() < e.w / 2.0
                })
                .map(|e| e.class.clone())
        });
        if !blocked {
            self.scout_climbed = false;
        } else {
            self.scout_round_blocked = true;
        }
        if blocked && ahead.is_none() && !self.config.climb.is_empty() && !self.scout_climbed {
            self.scout_climbed = true;
            let climb = self.config.climb.clone();
            self.queue(
                &climb,
                "the last walk did not change the view (a wall?): climb it",
            );
        } else if blocked || ahead.is_some() {
            self.scout_climbed = false;
            let why = match &ahead {
                Some(class) => format!("{class} ahead: turn aside"),
                None => "the last walk did not change the view (something in the way): turn aside"
                    .into(),
            };
            self.turn_aside(scout.turn_deg, why);
        }
        let left = self.scout_legs_left;
        self.scout_legs_left = left.saturating_sub(1);
        self.give_up.walked_on();
        self.scout_from = Some(digest);
        self.queue(
            std::slice::from_ref(&scout.leg),
            &format!(
                "no {approach} in view: walk on ({} of {} walks before looking around again)",
                scout.legs - left + 1,
                scout.legs
            ),
        );
    }

    /// Queues a turn of `degrees` to the right and the left in turn (the scout's turns aside).
    pub(super) fn turn_aside(&mut self, degrees: f64, why: String) {
        let side = if self.scout_turns.is_multiple_of(2) {
            1.0
        } else {
            -1.0
        };
        self.scout_turns += 1;
        self.pending.push_back((
            vec![
                ArgToken::Token(TURN_BY.into()),
                ArgToken::Number(side * degrees),
            ],
            why,
        ));
    }

    /// The thing to approach is in view: aim at it, walk closer, or mine it.
    pub(super) fn close_in(
        &mut self,
        goal: &GatherGoal,
        e: &EnvironmentEntity,
        call: Vec<ArgToken>,
        view: &View,
    ) {
        // Walking toward it is decided anew each time it is in view (`walk_closer`).
        self.approaching = false;
        let (cx, cy) = view.crosshair();
        let aim_y = e.y - e.h / 2.0 + e.h * goal.rule.aim_y.clamp(0.0, 1.0);
        let (dx, dy) = ((e.x - cx).round(), (aim_y - cy).round());
        let prev = self.last_turn.take();
        let before_prev = self.turn_before_last.take();
        let back_where_it_was = |x: f32, y: f32| x.hypot(y) <= 2.0 * self.config.aim_tolerance_px;
        let turns_back = prev.is_some_and(|(px, py)| {
            back_where_it_was(dx + px, dy + py)
                || before_prev.is_some_and(|(qx, qy)| back_where_it_was(dx + px + qx, dy + py + qy))
        });
        // A near object fills much of the view and its box jumps from frame to frame: with the
        // crosshair well inside it (the middle half across, below its top fifth) it is aimed at,
        // even away from the aim point (the closed loop turned at a trunk right in front of it
        // until its steps ran out).
        let inside_near = e.in_reach
            && (e.x - cx).abs() <= e.w / 4.0
            && cy >= e.y - e.h / 2.0 + 0.2 * e.h
            && cy <= e.y + e.h / 2.0;
        let aimed = dx.hypot(dy) <= self.config.aim_tolerance_px || inside_near;
        let approach = goal.approach;
        if !aimed && turns_back {
            self.gather_streak = 0;
            self.walk(
                WALK,
                goal.walk_seconds,
                format!("the {approach} to aim at is back where the view was: walk on instead"),
            );
        } else if !aimed {
            self.gather_streak = 0;
            self.last_turn = Some((dx, dy));
            self.turn_before_last = prev;
            self.scout_unlevel = true;
            self.pending.push_back((
                vec![
                    ArgToken::Token("turn".into()),
                    ArgToken::Number(f64::from(dx)),
                    ArgToken::Number(f64::from(dy)),
                ],
                format!("{approach} at ({dx:+}, {dy:+}) from the crosshair: aim at it"),
            ));
        } else if !e.in_reach || self.gather_streak % 2 == 1 {
            self.walk_closer(goal, e, view);
        } else {
            self.mine(goal, e, call, view);
        }
    }

    /// Aimed at the thing, but out of reach (or mined without its item coming): walk closer;
    /// jump when the last walk did not bring it closer, go round after too many walks.
    pub(super) fn walk_closer(&mut self, goal: &GatherGoal, e: &EnvironmentEntity, view: &View) {
        let seconds = self.approach_walk_seconds(goal, e, view);
        let GatherGoal { name, approach, .. } = *goal;
        let why = if e.in_reach {
            format!("still no {name} after mining the {approach}: walk closer")
        } else {
            format!("aimed at the {approach}, not in reach: walk closer")
        };
        self.gather_streak = if e.in_reach {
            self.gather_streak + 1
        } else {
            0
        };
        let walks = match self.approach_walks {
            Some((first, n)) if e.w <= first * (1.0 + APPROACH_GROWTH) => (first, n + 1),
            _ => (e.w, 1),
        };
        if walks.1 > WALKS_BEFORE_DETOUR && !self.config.detour.is_empty() {
            self.approach_walks = None;
            self.last_walk = None;
            self.go_round(&format!(
                "{WALKS_BEFORE_DETOUR} walks toward the {approach} did not bring it closer: go round"
            ));
            return;
        }
        self.approach_walks = Some(walks);
        // Lost from view after this walk, it is walked on to (`look_for`).
        self.approaching = !e.in_reach;
        // Not closer: the box stayed where it was and did not grow. The detector's boxes
        // of one trunk jitter by a quarter of their width from frame to frame (seed 187: a
        // stump 90-117 px wide, seven walks against a terrace wall without a jump).
        let stuck = self
            .last_walk
            .take()
            .is_some_and(|before| where_it_was(before, e) && e.w < before.2 * (1.0 + STUCK_JITTER));
        self.last_walk = Some((e.x, e.y, e.w));
        // Under the ground a walk ends at the next wall: a thing out of reach that did not come
        // closer there (an ore past a tunnel's corner, up in a wall) is dug toward, the tunnel
        // going on in the heading the aim left (a run from nothing jumped at an ore behind a
        // corner for a dozen steps).
        if let (Some(dig), true) = (&goal.rule.dig, stuck && !e.in_reach) {
            self.pending.push_back((
                dig.tunnel.clone(),
                format!("the {approach} did not come closer: dig toward it"),
            ));
        } else if stuck {
            self.walk(
                JUMP,
                seconds,
                format!("the {approach} did not come closer: jump forward onto the block"),
            );
        } else {
            let skill = if self.config.approach_jumping {
                JUMP
            } else {
                WALK
            };
            self.walk(skill, seconds, why);
        }
    }

    /// One walk toward `e`: `walk_seconds`, longer for a thing far off (`far_seconds`), rounded
    /// to a tenth.
    pub(super) fn approach_walk_seconds(
        &self,
        goal: &GatherGoal,
        e: &EnvironmentEntity,
        view: &View,
    ) -> f64 {
        let base = goal.walk_seconds;
        let reach = view.perception.reach_w;
        match self.config.far_seconds {
            Some(far) if reach > 0.0 && e.w > 0.0 && !e.in_reach => {
                let reaches = f64::from(reach / e.w);
                let seconds = base + far * (reaches - 1.0).max(0.0);
                (seconds.min(self.config.approach_max_seconds.max(base)) * 10.0).round() / 10.0
            }
            _ => base,
        }
    }

    /// Aimed at and in reach: mine it, unless it looked the same at several mines in a row
    /// (then go round).
    pub(super) fn mine(
        &mut self,
        goal: &GatherGoal,
        e: &EnvironmentEntity,
        call: Vec<ArgToken>,
        view: &View,
    ) {
        let GatherGoal {
            item,
            name,
            approach,
            ..
        } = *goal;
        let same = self.mine_view.is_some_and(|(before, _)| {
            where_it_was(before, e) && (before.2 - e.w).abs() < box_jitter(before.2)
        });
        let same_mines = if same {
            self.mine_view.map_or(0, |(_, n)| n) + 1
        } else {
            0
        };
        if same_mines >= SAME_MINES_BEFORE_DETOUR && !self.config.detour.is_empty() {
            self.mine_view = None;
            self.gather_streak = 0;
            self.go_round(&format!(
                "the {approach} looked the same at {} mines in a row and no {name} came: go round",
                same_mines + 1
            ));
            return;
        }
        self.mine_view = Some(((e.x, e.y, e.w), same_mines));
        self.gather_streak += 1;
        self.approach_walks = None;
        self.mined = Some((item, view.held(item)));
        if self.hud_hotbar_full(view) {
            self.gathered_unseen.insert(item);
        }
        self.pending.push_back((
            call,
            format!("{approach} aimed at and in reach: get {name}"),
        ));
    }

    /// Queues the next detour, with why.
    pub(super) fn go_round(&mut self, why: &str) {
        let detour = self.detour();
        self.queue(&detour, why);
    }

    /// The next detour: `detour` with its turns mirrored every other time.
    pub(super) fn detour(&mut self) -> Vec<CallTemplate> {
        let mirror = self.detours % 2 == 1;
        self.detours += 1;
        self.config
            .detour
            .iter()
            .map(|call| {
                let turn = matches!(skill_of(call), Some("turn" | TURN_BY));
                call.iter()
                    .enumerate()
                    .map(|(i, t)| match t {
                        ArgToken::Number(v) if mirror && turn && i == 1 => ArgToken::Number(-v),
                        other => other.clone(),
                    })
                    .collect()
            })
            .collect()
    }

    /// Queues one walk (or jump) of `seconds` toward what is aimed at.
    pub(super) fn walk(&mut self, skill: &str, seconds: f64, why: String) {
        self.pending.push_back((
            vec![ArgToken::Token(skill.into()), ArgToken::Number(seconds)],
            why,
        ));
    }

    /// Whether every slot of the HUD hotbar shows an icon (and no screen showed it empty since
    /// the last gather): an item picked up then goes to the bag's other rows.
    pub(super) fn hud_hotbar_full(&self, view: &View) -> bool {
        !view.layout.hotbar_row("hud").is_empty() && self.hud_free_slots(view) == 0
    }

    /// How many slots of the HUD hotbar show no icon or were shown empty by a screen since the
    /// last gather.
    pub(super) fn hud_free_slots(&self, view: &View) -> usize {
        view.layout
            .hotbar_row("hud")
            .iter()
            .filter(|(key, c)| self.empty_hotbar_keys.contains(key) || !any_icon_on(*c, view))
            .count()
    }
}
