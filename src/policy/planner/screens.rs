//! Screens and the bag: which screen is open, what its bag shows (and what the HUD shows wrongly),
//! crafting on it, and turning call templates into calls with positions and hotbar keys read off
//! the screen.

use super::*;

impl Planner {
    /// Whether an icon at (x, y) sits on the HUD hotbar: a bag slot of a screen the planner
    /// does not open itself.
    pub(super) fn on_hud(&self, view: &View, x: f32, y: f32) -> bool {
        view.layout
            .bag_screen(x, y)
            .is_some_and(|s| !self.config.screens.contains_key(s))
    }

    /// With a screen in view, notes which items its bag lacks although the HUD shows them (and
    /// it has not shown them since it opened); then the visual state without the HUD sightings
    /// of those items, under the open screen too (a craft once took its ingredient from the
    /// HUD slot there).
    pub(super) fn without_refuted_hud_icons(&mut self, view: &View) -> VisualState {
        let mut visual = view.visual.clone();
        let in_view = self.screen_in_view(view);
        self.cross_check_hotbar(&mut visual, view, in_view.as_deref());
        let craft_refuted = self.without_refuted_slots(&mut visual, view);
        if in_view.is_some() {
            for (node, a) in &visual.attributes {
                let in_screen_bag = a
                    .icons
                    .iter()
                    .any(|i| view.layout.in_bag(i.x, i.y) && !self.on_hud(view, i.x, i.y));
                if in_screen_bag {
                    self.refuted_on_hud.remove(node);
                    self.seen_in_screen.insert(*node);
                } else if craft_refuted.contains(node) {
                    // A craft refuted every bag icon of it: its HUD icon is the same misreading,
                    // shown under the screen or not (sand read as planks: the HUD sent the
                    // planner back to the bag to craft sticks, the bag sent it out for a tree,
                    // for 150 steps).
                    self.seen_in_screen.remove(node);
                    self.refuted_on_hud.insert(*node);
                } else if !self.seen_in_screen.contains(node)
                    && a.icons.iter().any(|i| self.on_hud(view, i.x, i.y))
                {
                    self.refuted_on_hud.insert(*node);
                }
            }
        } else {
            self.seen_in_screen.clear();
        }
        if in_view.is_none() {
            self.without_stacks_the_bag_showed_as_other(&mut visual, view);
        }
        if let Some(screen) = &in_view {
            self.note_bag_row(view, screen);
            // The tools as the cross-check corrected them: a stone pickaxe misread as iron in a
            // furnace's screen (the HUD's 0.99 against 0.78) was kept as an iron pickaxe in
            // the bag, and the run went for diamonds without one.
            let checked = View {
                visual: &visual,
                ..*view
            };
            self.note_bag_tools(&checked, screen);
            self.note_empty_hotbar_keys(view, screen);
        }
        let empty_on_hud: Vec<(f32, f32)> = view
            .layout
            .hotbar_row("hud")
            .into_iter()
            .filter(|(key, _)| self.empty_hotbar_keys.contains(key))
            .map(|(_, centre)| centre)
            .collect();
        if !empty_on_hud.is_empty() {
            for a in visual.attributes.values_mut() {
                a.icons
                    .retain(|i| !on_a_slot(i.x, i.y, &empty_on_hud, view));
            }
        }
        // A screen that names the slots ingredients come from (`take_from`) is the whole bag
        // while it is in view: the HUD drawn under it is not (a craft clicked the HUD's log
        // under the inventory for 70 steps, the inventory's own log already used).
        if in_view
            .as_ref()
            .and_then(|s| self.config.screens.get(s))
            .is_some_and(|r| !r.take_from.is_empty())
        {
            for a in visual.attributes.values_mut() {
                a.icons.retain(|i| !self.on_hud(view, i.x, i.y));
            }
        }
        for node in &self.refuted_on_hud {
            if let Some(a) = visual.attributes.get_mut(node) {
                a.icons.retain(|i| !self.on_hud(view, i.x, i.y));
            }
        }
        visual
    }

    /// Notes which slots of `screen`'s hotbar row (in view) hold no icon of any class.
    pub(super) fn note_empty_hotbar_keys(&mut self, view: &View, screen: &str) {
        self.empty_hotbar_keys = view
            .layout
            .hotbar_row(screen)
            .into_iter()
            .filter(|(_, c)| !any_icon_on(*c, view))
            .map(|(key, _)| key)
            .collect();
    }

    /// Notes which tools and stations (the items calls take by hotbar key) the bag of `screen`
    /// (in view) holds, and their hotbar keys.
    pub(super) fn note_bag_tools(&mut self, view: &View, screen: &str) {
        for tool in self.keyed_items(view) {
            let in_bag: Vec<&InventoryIcon> = view
                .visual
                .attributes
                .get(&tool)
                .map(|a| {
                    a.icons
                        .iter()
                        .filter(|i| view.layout.in_bag(i.x, i.y) && !self.on_hud(view, i.x, i.y))
                        .collect()
                })
                .unwrap_or_default();
            if in_bag.is_empty() {
                self.bag_tools.remove(&tool);
                continue;
            }
            // The first slot of the screen's hotbar row that shows it, and its surest read there.
            let on_row = view
                .layout
                .hotbar_row(screen)
                .into_iter()
                .find_map(|(key, centre)| {
                    in_bag
                        .iter()
                        .filter(|i| on_a_slot(i.x, i.y, &[centre], view))
                        .map(|i| i.conf)
                        .reduce(f32::max)
                        .map(|conf| (key, conf))
                });
            let noted = BagTool {
                key: on_row.map(|(key, _)| key),
                read: on_row.map(|(_, conf)| conf),
            };
            self.bag_tools.insert(tool, noted);
        }
    }

    /// The screen believed open, from the one in view: a marked screen in view is the one
    /// open; a station's screen that shows nothing did not open.
    pub(super) fn settle_screen(&mut self, view: &View) {
        let in_view = self.screen_in_view(view);
        // A screen in view that its marker tells from the one believed open is the one open: the
        // success check opened the inventory while the planner was opening the crafting table
        // (whose screen never came), the opening stopped at the screen in view, and eleven
        // pickaxe crafts went into the inventory's grid.
        if let (Some(believed), Some(seen)) = (&self.screen, &in_view)
            && believed != seen
            && view.perception.marked_screens.contains(seen)
            && !view.perception.marked_screens.contains(believed)
        {
            self.screen = in_view.clone();
        }
        if let Some(station) = self
            .screen
            .as_ref()
            .and_then(|s| self.config.screens.get(s))
            .and_then(|r| r.station.as_deref())
            && in_view.is_none()
        {
            // A station's screen opened by the planner that shows no item in any slot did not
            // open: the block was placed out of reach or the click missed it (a crafting table
            // placed against leaves overhead, then 100 steps of "crafting" by clicking the
            // world). Plan from what is there: place it again, or make another. Placed, it is
            // no longer where a screen last showed it (seed 191: placed 11 times from the key
            // an old look at the bag gave it, the slot empty after the first).
            if let Some(node) = view.kg.node(station) {
                self.bag_tools.remove(&node);
            }
            let rule = self.screen.take().and_then(|s| self.config.screens.get(&s));
            if let Some(rule) = rule.filter(|r| !r.retrieve.is_empty()).cloned() {
                self.queue(
                    &rule.retrieve,
                    &format!("the {station}'s screen did not open: take the {station} back"),
                );
                self.taking_back = rule.station.clone();
            }
        }
        // A screen its marker alone shows open is shut when it does not show: a close call sent
        // to a shut screen is Escape, and Minetest's Escape opens the pause menu.
        if in_view.is_none()
            && self
                .screen
                .as_ref()
                .and_then(|s| self.config.screens.get(s))
                .is_some_and(|r| r.told_by_marker)
        {
            self.screen = None;
        }
        if in_view.is_some() {
            self.gathered_unseen.clear();
        }
        if self.screen.is_none() {
            self.screen = in_view;
        }
    }

    /// Queues opening the bag screen (`bag_screen`) when gathering `item` was decided from the
    /// HUD alone and either the bag has not been looked at for it yet (an ingredient, not the
    /// target: a target in the bag shows on the HUD too unless the hotbar is full) or a gather
    /// of it since the last look may have put it past the HUD (`gathered_unseen`); true when
    /// it did.
    pub(super) fn look_in_bag_first(
        &mut self,
        item: NodeIndex,
        target: NodeIndex,
        view: &View,
    ) -> bool {
        let Some(bag) = self.config.bag_screen.clone() else {
            return false;
        };
        if self.screen.is_some() {
            // An open screen shows the bag: the decision already saw it, unless something
            // stands in the screen's own slots (its grid, its result): a frame taken right after
            // a craft's shift-click showed the planks still in the grid and the sticks in the
            // result, while the server had put the sticks in the bag's main rows (the hotbar
            // full); the planner closed the screen to get a log for more planks and looked for
            // trees for 30 minutes with the sticks in its bag (world 3101, from nothing). The
            // bag is looked at again, once the screen is shut, before the world is searched.
            if !self.screen_slots_in_use(view) {
                self.bag_seen_for = Some(item);
            }
            return false;
        }
        let unseen = self.gathered_unseen.remove(&item);
        if !unseen && (item == target || self.bag_seen_for == Some(item)) {
            return false;
        }
        let blind = self
            .config
            .gather
            .get(view.kg.name(item))
            .is_some_and(|r| r.approach.is_none());
        self.looked_after_blind = (unseen && blind).then_some(item);
        let Some(rule) = self.config.screens.get(&bag).cloned() else {
            return false;
        };
        self.bag_seen_for = Some(item);
        self.queue(
            &rule.open,
            &format!(
                "the HUD shows only the hotbar: look in the bag before going to get {}",
                view.kg.name(item)
            ),
        );
        self.screen = Some(bag);
        true
    }

    /// Whether the open screen shows an item in a slot of its own, one that is not the bag's
    /// (`[gui] bag_regions`): a craft grid's ingredients, a result not taken, a furnace's input.
    pub(super) fn screen_slots_in_use(&self, view: &View) -> bool {
        let Some(screen) = self.screen.as_deref() else {
            return false;
        };
        screen_slots(screen, view)
            .into_iter()
            .filter(|&(x, y)| !view.layout.in_bag(x, y))
            .any(|c| any_icon_on(c, view))
    }

    pub(super) fn close_screen(&mut self, why: &str) {
        if let Some(open) = self.screen.take()
            && let Some(rule) = self.config.screens.get(&open).cloned()
        {
            self.queue(&rule.close, why);
            if rule.taken_back {
                // The station comes back into a slot the screen showed empty.
                self.empty_hotbar_keys.clear();
                self.taking_back = rule.station.clone();
            }
        }
    }

    pub(super) fn craft(&mut self, item: NodeIndex, view: &View) -> Result<(), String> {
        let name = view.kg.name(item).to_string();
        let rule = self
            .config
            .craft
            .get(&name)
            .cloned()
            .ok_or_else(|| format!("no craft rule for {name}"))?;
        if self.screen.as_deref() != Some(rule.screen.as_str()) {
            self.close_screen(&format!("switching screens to craft {name}"));
            let screen = self
                .config
                .screens
                .get(&rule.screen)
                .cloned()
                .ok_or_else(|| format!("no screen {}", rule.screen))?;
            let why = format!("open the {} to craft {name}", rule.screen);
            self.queue(&screen.open, &why);
            self.opening = Some((why, screen.open.len()));
            self.screen = Some(rule.screen.clone());
            return Ok(());
        }
        let mut call = vec![ArgToken::Token(rule.skill.clone())];
        call.extend(rule.args.iter().cloned());
        let ingredients: Vec<NodeIndex> = rule
            .args
            .iter()
            .filter_map(|a| match a {
                ArgToken::Token(t) => view.kg.node(t),
                ArgToken::Number(_) => None,
            })
            .collect();
        self.note_craft_sent(item, &ingredients, view);
        self.pending.push_back((
            call,
            format!("all ingredients of {name} are here: craft it"),
        ));
        Ok(())
    }

    /// Turns a template into a call, reading positions and hotbar keys off the screen.
    pub(super) fn resolve(
        &self,
        template: &CallTemplate,
        view: &View,
    ) -> Result<SkillCall, String> {
        let (skill, args) = match template.split_first() {
            Some((ArgToken::Token(s), args)) => (s.clone(), args),
            _ => return Err("a planner call must start with a skill name".into()),
        };
        let mut out = Vec::new();
        let mut push = |value: f64| {
            out.push(CallArg { name: None, value });
        };
        for a in args {
            match a {
                ArgToken::Number(v) => push(*v),
                ArgToken::Token(t) => {
                    if let Some(item) = t.strip_prefix("hotbar:") {
                        push(f64::from(self.hotbar_key(item, view)?));
                        continue;
                    }
                    if let Some(item) = t.strip_prefix(COUNT_PREFIX) {
                        let node = view
                            .kg
                            .node(item)
                            .ok_or_else(|| format!("\"{item}\" is not a graph node"))?;
                        push(f64::from(self.stack_count(node, view)));
                        continue;
                    }
                    let (x, y) = if t == FREE_HOTBAR_SLOT {
                        self.spare_hotbar_slot(view)?
                    } else {
                        let node = view
                            .kg
                            .node(t)
                            .ok_or_else(|| format!("\"{t}\" is not a graph node"))?;
                        self.screen_icon(node, view)
                            .or_else(|| view.icon(node))
                            .ok_or_else(|| format!("no {t} icon on the screen"))?
                    };
                    push(f64::from(x.round()));
                    push(f64::from(y.round()));
                }
            }
        }
        Ok(SkillCall { skill, args: out })
    }

    /// The count drawn on the stack `resolve` takes `node` from (1 when none is read).
    pub(super) fn stack_count(&self, node: NodeIndex, view: &View) -> u32 {
        self.screen_stack(node, view)
            .or_else(|| view.bag_icon(node))
            .and_then(|i| i.count)
            .unwrap_or(1)
            .max(1)
    }

    /// With a screen open, the item's icon that sits in one of that screen's slots: the HUD
    /// hotbar can still show under the screen (Minetest draws it), and a click there moves
    /// nothing.
    pub(super) fn screen_icon(&self, node: NodeIndex, view: &View) -> Option<(f32, f32)> {
        self.screen_stack(node, view).map(|i| (i.x, i.y))
    }

    /// The icon [`Self::screen_icon`] points at.
    pub(super) fn screen_stack<'v>(
        &self,
        node: NodeIndex,
        view: &View<'v>,
    ) -> Option<&'v InventoryIcon> {
        let slots = self.take_slots(view)?;
        let icons = &view.visual.attributes.get(&node)?.icons;
        biggest(icons.iter().filter(|i| on_a_slot(i.x, i.y, &slots, view)))
    }

    /// With a screen open, the slots ingredients are taken from (`take_from`, else all).
    pub(super) fn take_slots(&self, view: &View) -> Option<Vec<(f32, f32)>> {
        let screen = self.screen.as_deref()?;
        Some(
            match self
                .config
                .screens
                .get(screen)
                .filter(|r| !r.take_from.is_empty())
            {
                Some(rule) => rule
                    .take_from
                    .iter()
                    .flat_map(|region| screen_slots(&format!("{screen}.{region}"), view))
                    .collect(),
                None => screen_slots(screen, view),
            },
        )
    }

    /// The screen whose slots hold the most icons on this frame, if any: a screen left open
    /// (by an earlier session, or by the player) is seen, not assumed closed.
    pub(super) fn screen_in_view(&self, view: &View) -> Option<String> {
        self.config
            .screens
            .keys()
            .map(|screen| {
                let slots = screen_slots(screen, view);
                let n = view
                    .perception
                    .icons
                    .iter()
                    .filter(|i| on_a_slot(i.x, i.y, &slots, view))
                    .count();
                (n, screen)
            })
            .filter(|(n, s)| {
                let marked = view.perception.marked_screens.contains(s);
                match self.config.screens.get(*s) {
                    Some(r) if r.told_by_marker => marked,
                    _ => *n > 0,
                }
            })
            // Screens that draw the bag alike tie: the one whose marker shows wins.
            .max_by_key(|(n, s)| (*n, view.perception.marked_screens.contains(s)))
            .map(|(_, s)| s.clone())
    }

    /// The hotbar key (1-9) whose slot holds `item`'s icon.
    pub(super) fn hotbar_key(&self, item: &str, view: &View) -> Result<u8, String> {
        let node = view
            .kg
            .node(item)
            .ok_or_else(|| format!("\"{item}\" is not a graph node"))?;
        let icons: Vec<&InventoryIcon> = view
            .visual
            .attributes
            .get(&node)
            .map(|a| a.icons.iter().collect())
            .unwrap_or_default();
        // The planner's idea of the open screen can be a step ahead of the game (it queues a
        // screen's opening calls at once), so both the HUD hotbar and the screen's are tried.
        let mut screens = vec!["hud"];
        if let Some(s) = &self.screen {
            screens.push(s.as_str());
        }
        if let Some(key) = screens
            .iter()
            .find_map(|screen| hotbar_key_in(&icons, screen, view))
        {
            return Ok(key);
        }
        // A tool the last open screen showed in its hotbar row, missed on the HUD now.
        match self.bag_tools.get(&node).and_then(|t| t.key) {
            Some(key) => Ok(key),
            _ => Err(format!("{item} is not in the hotbar")),
        }
    }

    /// The centre of a hotbar slot of the open screen whose item can go to the bag: one whose
    /// icons are all of items the tech tree has no use for (nothing crafted, produced or mined
    /// with them, no fuel, no tool the bag showed), or one with no icon the detector named
    /// (empty, or saplings, apples, seeds: it has no class for them), from the right.
    pub(super) fn spare_hotbar_slot(&self, view: &View) -> Result<(f32, f32), String> {
        let screen = self
            .screen
            .as_deref()
            .ok_or("no screen is open to free a hotbar slot in")?;
        let slots = view.layout.hotbar_row(screen);
        let items_on = |c: (f32, f32)| -> Vec<NodeIndex> {
            view.visual
                .attributes
                .iter()
                .filter(|(_, a)| a.icons.iter().any(|i| view.layout.on_slot(i.x, i.y, c)))
                .map(|(n, _)| *n)
                .collect()
        };
        let has_no_use = |n: NodeIndex| {
            !self.bag_tools.contains_key(&n)
                && !view.kg.graph.edges(n).any(|e| {
                    matches!(
                        *e.weight(),
                        Relation::IsUsedToCraft
                            | Relation::IsUsedToProduce
                            | Relation::CanBeUsedToMine
                            | Relation::IsTheFuelOf
                    )
                })
        };
        let junk = slots.iter().rev().find(|(_, c)| {
            let items = items_on(*c);
            !items.is_empty() && items.into_iter().all(has_no_use)
        });
        let unnamed = || slots.iter().rev().find(|(_, c)| !any_icon_on(*c, view));
        // A swap (`to_hotbar_picks_slot`) best goes to an empty slot; a shift-click off the
        // hotbar needs an item there.
        let slot = if self.config.to_hotbar_picks_slot {
            unnamed().or(junk)
        } else {
            junk.or_else(unnamed)
        };
        slot.map(|(_, c)| *c)
            .ok_or_else(|| "every hotbar slot holds an item the tech tree uses".into())
    }

    /// The hotbar key of the item the next pending call would move to the hotbar
    /// (`to_hotbar_skill`) when the open bag shows it on its hotbar row already: the HUD had
    /// missed it (the selected-slot frame drawn over it), and a shift-click there moves it off.
    pub(super) fn fetch_not_needed(&self, view: &View) -> Option<u8> {
        let skill = self.config.to_hotbar_skill.as_deref()?;
        let bag = self.config.bag_screen.as_deref()?;
        let (template, _) = self.pending.front()?;
        let (Some(ArgToken::Token(s)), Some(ArgToken::Token(item))) =
            (template.first(), template.get(1))
        else {
            return None;
        };
        if s != skill {
            return None;
        }
        let node = view.kg.node(item)?;
        let icons: Vec<&InventoryIcon> = view
            .visual
            .attributes
            .get(&node)
            .map(|a| {
                a.icons
                    .iter()
                    .filter(|i| !self.on_hud(view, i.x, i.y))
                    .collect()
            })
            .unwrap_or_default();
        hotbar_key_in(&icons, bag, view)
    }

    /// `template` needs an item on a hotbar key that is not on the hotbar: queues, before it
    /// (put back at the front), opening the bag screen, moving the item to the hotbar with
    /// `to_hotbar_skill`, and closing the screen (or only the move, with the bag in view).
    /// Once per item; false when there is nothing to try.
    pub(super) fn fetch_to_hotbar_first(
        &mut self,
        template: &CallTemplate,
        why: &str,
        view: &View,
    ) -> bool {
        let (Some(skill), Some(bag)) = (
            self.config.to_hotbar_skill.clone(),
            self.config.bag_screen.clone(),
        ) else {
            return false;
        };
        let Some(item) = template
            .iter()
            .filter_map(hotbar_item)
            .find(|item| self.hotbar_key(item, view).is_err())
        else {
            return false;
        };
        let (Some(node), Some(rule)) = (view.kg.node(item), self.config.screens.get(&bag).cloned())
        else {
            return false;
        };
        let mut moves: Vec<CallTemplate> = Vec::new();
        let why = if self.fetched_to_hotbar == Some(node) {
            // The move did not take: most likely no hotbar slot was free. Once more, after
            // moving an item the tech tree has no use for off the hotbar (a move that picks its
            // slot makes its own room: nothing more to try).
            if self.freed_hotbar_for == Some(node) || self.config.to_hotbar_picks_slot {
                return false;
            }
            self.freed_hotbar_for = Some(node);
            moves.push(vec![
                ArgToken::Token(skill.clone()),
                ArgToken::Token(FREE_HOTBAR_SLOT.into()),
            ]);
            format!(
                "{item} did not reach the hotbar: free a hotbar slot, then move it there ({why})"
            )
        } else {
            format!("{item} is in the bag, not on the hotbar: move it there first ({why})")
        };
        self.fetched_to_hotbar = Some(node);
        let mut fetch = vec![ArgToken::Token(skill), ArgToken::Token(item.to_string())];
        if self.config.to_hotbar_picks_slot {
            fetch.push(ArgToken::Token(FREE_HOTBAR_SLOT.into()));
        }
        moves.push(fetch);
        let mut front: Vec<CallTemplate> = Vec::new();
        if self.screen.as_deref() == Some(bag.as_str()) {
            front.extend(moves);
        } else {
            front.extend(rule.open.iter().cloned());
            front.extend(moves);
            front.extend(rule.close.iter().cloned());
        }
        self.pending.push_front((template.clone(), why.clone()));
        for t in front.into_iter().rev() {
            self.pending.push_front((t, why.clone()));
        }
        true
    }
}
