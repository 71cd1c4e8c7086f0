//! What a target needs: the first missing item down the recipe graph, and how much of each raw
//! material the whole chain takes from the world.

use super::*;

impl Planner {
    /// Items a node needs before it can be made, from the graph and the rule's arguments.
    pub(super) fn requirements(&self, item: NodeIndex, view: &View) -> Vec<NodeIndex> {
        let kg = view.kg;
        let name = kg.name(item);
        let mut needs: BTreeSet<NodeIndex> = BTreeSet::new();
        for e in kg.graph.edges_directed(item, Direction::Incoming) {
            if matches!(
                *e.weight(),
                Relation::IsUsedToCraft | Relation::IsUsedToProduce
            ) {
                needs.insert(e.source());
            }
        }
        let tokens: Vec<&ArgToken> =
            match (self.config.craft.get(name), self.config.gather.get(name)) {
                (Some(c), _) => c.args.iter().collect(),
                (None, Some(g)) => g.args.iter().collect(),
                _ => Vec::new(),
            };
        for t in tokens {
            if let ArgToken::Token(t) = t {
                let n = item_token(t).unwrap_or(t);
                if let Some(node) = kg.node(n) {
                    needs.insert(node);
                }
            }
        }
        // A crafted item needs the station its screen stands on, which the graph may not link
        // to it (a furnace "outputs" iron ingots): from nothing, the iron pickaxe's chain went
        // to open a furnace it had never made.
        if let Some(station) = self
            .config
            .craft
            .get(name)
            .and_then(|r| self.config.screens.get(&r.screen))
            .and_then(|s| s.station.as_deref())
            .and_then(|n| kg.node(n))
        {
            needs.insert(station);
        }
        // A gathered item needs the tool that mines its source.
        if let Some(rule) = self.config.gather.get(name) {
            let source = rule.approach.as_deref().and_then(|a| kg.node(a));
            for s in source.into_iter().chain([item]) {
                for e in kg.graph.edges_directed(s, Direction::Incoming) {
                    if *e.weight() == Relation::CanBeUsedToMine {
                        needs.insert(e.source());
                    }
                }
            }
        }
        needs.remove(&item);
        // Deterministic order: by name.
        let mut out: Vec<NodeIndex> = needs.into_iter().collect();
        out.sort_by(|a, b| kg.name(*a).cmp(kg.name(*b)));
        out
    }

    /// Whether the bag holds enough of `need` to make `item`: any where the craft rule gives
    /// no number or the count cannot be read, else at least the rule's number.
    pub(super) fn enough(&self, view: &View, need: NodeIndex, item: NodeIndex) -> bool {
        if !self.holds(view, need) {
            return false;
        }
        let wanted = self
            .config
            .craft
            .get(view.kg.name(item))
            .and_then(|r| r.needs.get(view.kg.name(need)));
        let slots = self.take_slots(view);
        match (wanted, self.holding(view, need, slots.as_deref())) {
            (Some(n), Some(have)) => have >= *n,
            _ => true,
        }
    }

    /// What `target` needs from the world in all beyond what the bag in `view` holds (logs,
    /// cobblestone, ores), by name: the whole chain's raw materials, each craft's surplus
    /// serving the next consumer (see [`Self::to_gather`]).
    pub fn needs_from_world(&self, target: NodeIndex, view: &View) -> Vec<(String, u32)> {
        self.to_gather(target, view)
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(node, n)| (view.kg.name(node).to_string(), n))
            .collect()
    }

    /// How many more of each gathered item (logs, cobblestone) `target` needs than the bag
    /// holds, through the craft rules' `needs` and `yields`: what is in the bag is used first,
    /// stations and tools are needed once, an ingredient a rule gives no number for once per
    /// craft. A count that cannot be read counts as plenty (as in `enough`).
    pub(super) fn to_gather(&self, target: NodeIndex, view: &View) -> BTreeMap<NodeIndex, u32> {
        let mut demand = Demand {
            stock: BTreeMap::new(),
            once: BTreeSet::new(),
            short: BTreeMap::new(),
        };
        self.demand(target, 1, view, &mut demand, 0);
        demand.short
    }

    pub(super) fn demand(
        &self,
        item: NodeIndex,
        wanted: u32,
        view: &View,
        d: &mut Demand,
        depth: u32,
    ) {
        // The graph is a tree of recipes; the bound only guards against a cycle in user data.
        if wanted == 0 || depth > 32 {
            return;
        }
        let name = view.kg.name(item);
        let left = d.stock.entry(item).or_insert_with(|| {
            if self.station_in_use(name) || self.bag_tools.contains_key(&item) {
                return u32::MAX;
            }
            if !self.holds(view, item) {
                return 0;
            }
            let slots = self.take_slots(view);
            self.holding(view, item, slots.as_deref())
                .unwrap_or(u32::MAX)
        });
        let taken = (*left).min(wanted);
        *left -= taken;
        let wanted = wanted - taken;
        if wanted == 0 {
            return;
        }
        if self.config.gather.contains_key(name) {
            *d.short.entry(item).or_default() += wanted;
        }
        let rule = self.config.craft.get(name);
        let crafts = rule.map_or(1, |r| wanted.div_ceil(r.yields));
        // What a craft makes beyond the wanted is there for the next consumer: one log makes
        // four planks, and the table's four, the pickaxe's three and the sticks' two are three
        // logs, not one log per consumer (a stone pickaxe from nothing went for a fourth tree).
        if let Some(r) = rule {
            let surplus = crafts.saturating_mul(r.yields).saturating_sub(wanted);
            if let Some(left) = d.stock.get_mut(&item) {
                *left = left.saturating_add(surplus);
            }
        }
        for need in self.requirements(item, view) {
            let need_name = view.kg.name(need);
            let consumed = rule.and_then(|r| {
                r.needs.get(need_name).copied().or_else(|| {
                    r.args
                        .iter()
                        .any(|a| matches!(a, ArgToken::Token(t) if t == need_name))
                        .then_some(1)
                })
            });
            match consumed {
                Some(per) => self.demand(need, crafts.saturating_mul(per), view, d, depth + 1),
                // A station or a tool: one serves every craft and every consumer.
                None if d.once.insert(need) => self.demand(need, 1, view, d, depth + 1),
                None => {}
            }
        }
        // The station the craft's screen is opened on, which the graph may not link to the
        // item (a furnace "outputs" iron ingots): its 8 cobblestone belong to the iron chain.
        let station = rule
            .and_then(|r| self.config.screens.get(&r.screen))
            .and_then(|s| s.station.as_deref())
            .and_then(|n| view.kg.node(n));
        if let Some(station) = station
            && d.once.insert(station)
        {
            self.demand(station, 1, view, d, depth + 1);
        }
    }

    pub(super) fn first_missing(
        &self,
        item: NodeIndex,
        view: &View,
        short: &BTreeMap<NodeIndex, u32>,
        visited: &mut BTreeSet<NodeIndex>,
    ) -> Option<Goal> {
        if !visited.insert(item) {
            return None;
        }
        let at_its_station = self.at_its_station(item, view);
        for need in self.requirements(item, view) {
            // A gathered ingredient the whole target needs more of is gathered now, while its
            // source is at hand: a wooden pickaxe from one log went looking for a second tree
            // after the first had been left. Not at the placed station the item is made at,
            // with enough for it: the craft comes first (a stone pickaxe from nothing left its
            // table with six cobblestone to dig the furnace's five more with the wooden
            // pickaxe, which stuck at an iron ore under its shaft for 40 minutes).
            let gather_more = !at_its_station && short.get(&need).is_some_and(|n| *n > 0);
            if !gather_more
                && (self.enough(view, need, item)
                    || self.station_in_use(view.kg.name(need))
                    || self.bag_tools.contains_key(&need))
            {
                continue;
            }
            if let Some(g) = self.first_missing(need, view, short, visited) {
                return Some(g);
            }
        }
        let name = view.kg.name(item);
        if self.config.craft.contains_key(name) {
            Some(Goal::Craft(item))
        } else if self.config.gather.contains_key(name) {
            Some(Goal::Gather(item))
        } else {
            Some(Goal::Unknown(item))
        }
    }

    /// A blind gather (digging down for cobblestone) leaves the player at the bottom of a
    /// shaft: while the target still needs something gathered at the surface (a log, for a
    /// crafting table lost on the way), that comes first. A stone pickaxe run from nothing whose
    /// table did not come back dug down, then needed a log from the bottom of its shaft.
    pub(super) fn surface_first(
        &self,
        goal: Goal,
        view: &View,
        short: &BTreeMap<NodeIndex, u32>,
    ) -> Goal {
        let Goal::Gather(item) = goal else {
            return goal;
        };
        let blind = |n: NodeIndex| {
            self.config
                .gather
                .get(view.kg.name(n))
                .is_some_and(|r| r.approach.is_none())
        };
        if !blind(item) {
            return goal;
        }
        let surface = short.iter().find(|(n, k)| {
            **k > 0
                && **n != item
                && self
                    .config
                    .gather
                    .get(view.kg.name(**n))
                    .is_some_and(|r| r.approach.is_some())
        });
        match surface {
            Some((&n, _)) => {
                let mut visited = BTreeSet::new();
                match self.first_missing(n, view, short, &mut visited) {
                    Some(g @ Goal::Gather(_)) | Some(g @ Goal::Craft(_)) => g,
                    _ => goal,
                }
            }
            None => goal,
        }
    }

    /// Whether the screen `item` is crafted on is open and stands on a placed station (a
    /// crafting table, a furnace: placing one again costs steps; the inventory is always at hand).
    fn at_its_station(&self, item: NodeIndex, view: &View) -> bool {
        self.config
            .craft
            .get(view.kg.name(item))
            .filter(|r| self.screen.as_deref() == Some(r.screen.as_str()))
            .and_then(|r| self.config.screens.get(&r.screen))
            .is_some_and(|s| s.station.is_some())
    }

    /// A placed station (crafting table, furnace) whose screen is open has left the inventory
    /// but is there.
    pub(super) fn station_in_use(&self, name: &str) -> bool {
        self.screen
            .as_ref()
            .and_then(|s| self.config.screens.get(s))
            .and_then(|r| r.station.as_deref())
            == Some(name)
    }
}
