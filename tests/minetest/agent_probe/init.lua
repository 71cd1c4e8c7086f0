-- vistawise ground-truth probe for Minetest 5.6 (minetest_game). Writes only inside the world dir:
--   <world>/agent_probe/state.json    player pose + inventory lists, 5 times a second (atomic)
--   <world>/agent_probe/events.jsonl  join/dig/place/craft/inventory/cmd_done, one JSON object a line
-- and reads commands appended to <world>/agent_probe/cmd.jsonl, one JSON object a line (ops below).
-- Every command is answered by {"ev":"cmd_done","line":N,"id":<its id>,"ok":...,"err":...,"result":...}.
local dir = minetest.get_worldpath() .. "/agent_probe"
minetest.mkdir(dir)
local ev = io.open(dir .. "/events.jsonl", "a")

local function emit(t)
  t.t = minetest.get_us_time() / 1e6
  t.gametime = minetest.get_gametime()
  ev:write(minetest.write_json(t) .. "\n")
  ev:flush()
end

local function inv_list(player, list)
  local out = {}
  for i, st in ipairs(player:get_inventory():get_list(list) or {}) do
    if not st:is_empty() then
      -- The item's groups (tree, wood, ...), so a judge can take any trunk as a log.
      local groups
      for g, rating in pairs((minetest.registered_items[st:get_name()] or {}).groups or {}) do
        if rating ~= 0 then groups = groups or {}; groups[#groups + 1] = g end
      end
      if groups then table.sort(groups) end
      out[#out + 1] = {slot = i, name = st:get_name(), count = st:get_count(), wear = st:get_wear(),
        groups = groups}
    end
  end
  return out
end

local function eye_of(player)
  local p = player:get_pos()
  local props = player:get_properties()
  local off = player:get_eye_offset() or {x = 0, y = 0, z = 0}
  return {x = p.x + off.x / 10, y = p.y + (props.eye_height or 1.625) + off.y / 10, z = p.z + off.z / 10}
end

local function snapshot(player)
  local p = player:get_pos()
  return {name = player:get_player_name(), pos = {x = p.x, y = p.y, z = p.z}, eye = eye_of(player),
    yaw_deg = math.deg(player:get_look_horizontal()), pitch_deg = math.deg(player:get_look_vertical()),
    hp = player:get_hp(), wield_index = player:get_wield_index(),
    wielded = player:get_wielded_item():to_string(),
    main = inv_list(player, "main"), craft = inv_list(player, "craft"),
    craftresult = inv_list(player, "craftresult"), cursor = inv_list(player, "hand"),
    time_of_day = minetest.get_timeofday(), t = minetest.get_us_time() / 1e6}
end

local acc = 0
minetest.register_globalstep(function(dtime)
  acc = acc + dtime
  if acc < 0.2 then return end
  acc = 0
  for _, player in ipairs(minetest.get_connected_players()) do
    minetest.safe_file_write(dir .. "/state.json", minetest.write_json(snapshot(player)))
  end
end)

minetest.register_on_joinplayer(function(p) emit({ev = "join", player = p:get_player_name(), state = snapshot(p)}) end)
minetest.register_on_dignode(function(pos, old, digger)
  emit({ev = "dig", node = old.name, pos = pos, player = digger and digger:get_player_name() or nil})
end)
minetest.register_on_placenode(function(pos, new, placer)
  emit({ev = "place", node = new.name, pos = pos, player = placer and placer:get_player_name() or nil})
end)
minetest.register_on_craft(function(stack, player)
  emit({ev = "craft", item = stack:to_string(), player = player:get_player_name()})
end)
minetest.register_on_player_inventory_action(function(player, action, inv, info)
  emit({ev = "inventory", action = action, info = {from_list = info.from_list, to_list = info.to_list,
    from_index = info.from_index, to_index = info.to_index, count = info.count,
    listname = info.listname, index = info.index, stack = info.stack and info.stack:to_string() or nil}})
end)
minetest.register_on_shutdown(function() emit({ev = "shutdown"}); ev:close() end)

-- Geometry helpers ---------------------------------------------------------------------------

-- A node that hides what is behind it (full opaque cube).
local function opaque(pos)
  local def = minetest.registered_nodes[minetest.get_node(pos).name]
  return def ~= nil and def.drawtype == "normal"
end

local FACES = {
  {axis = "x", sign = 1}, {axis = "x", sign = -1},
  {axis = "y", sign = 1}, {axis = "y", sign = -1},
  {axis = "z", sign = 1}, {axis = "z", sign = -1},
}
local OTHER = {x = {"y", "z"}, y = {"x", "z"}, z = {"x", "y"}}

-- Does the first node a ray from `from` to `to` hits sit at `target`?
local function ray_reaches(from, to, target)
  for pointed in minetest.raycast(from, to, false, false) do
    if pointed.type == "node" then
      local u = pointed.under
      return u.x == target.x and u.y == target.y and u.z == target.z
    end
  end
  return false
end

-- The cells (grid x grid per face) of a node's faces that the eye sees, as
-- {cx, cy, cz, face_index} with the cell's centre on the face.
local function visible_cells(eye, pos, grid)
  local cells = {}
  for fi, f in ipairs(FACES) do
    local plane = pos[f.axis] + 0.5 * f.sign
    local facing = (eye[f.axis] - plane) * f.sign > 0
    local npos = vector.new(pos); npos[f.axis] = npos[f.axis] + f.sign
    if facing and not opaque(npos) then
      local a, b = OTHER[f.axis][1], OTHER[f.axis][2]
      for i = 0, grid - 1 do
        for j = 0, grid - 1 do
          local c = {}
          c[f.axis] = plane
          c[a] = pos[a] - 0.5 + (i + 0.5) / grid
          c[b] = pos[b] - 0.5 + (j + 0.5) / grid
          -- Aim just inside the face so the ray ends in the node itself.
          local inside = {x = c.x, y = c.y, z = c.z}
          inside[f.axis] = plane - 0.02 * f.sign
          if ray_reaches(eye, inside, pos) then
            cells[#cells + 1] = {c.x, c.y, c.z, fi}
          end
        end
      end
    end
  end
  return cells
end

local function look_dir(yaw, pitch)
  return {x = -math.sin(yaw) * math.cos(pitch), y = -math.sin(pitch), z = math.cos(yaw) * math.cos(pitch)}
end

-- Nodes of the given classes near the eye, in front of it (within max_angle of the look direction),
-- with the face cells the eye sees. names = {class = {"node:name" or "group:x", ...}};
-- radii = {class = r} gives a class another radius than `radius`.
local function scan(player, c)
  local eye = eye_of(player)
  local yaw, pitch = player:get_look_horizontal(), player:get_look_vertical()
  local dir = look_dir(yaw, pitch)
  local grid = c.grid or 3
  local cos_max = math.cos(math.rad(c.max_angle or 70))
  local out = {}
  for class, names in pairs(c.names or {}) do
    local r = (type(c.radii) == "table" and c.radii[class]) or c.radius or 10
    local found = minetest.find_nodes_in_area(vector.subtract(eye, r), vector.add(eye, r), names)
    for _, pos in ipairs(found) do
      local d = vector.subtract(pos, eye)
      local len = vector.length(d)
      if len <= r and len > 0.01 and vector.dot(d, dir) / len >= cos_max then
        local cells = visible_cells(eye, pos, grid)
        if #cells > 0 then
          out[#out + 1] = {class = class, name = minetest.get_node(pos).name, pos = pos, cells = cells}
        end
      end
    end
  end
  return {eye = eye, yaw_deg = math.deg(yaw), pitch_deg = math.deg(pitch), grid = grid, nodes = out}
end

-- A random standing place from which the player sees a node of the given names: picks a node,
-- then a spot min_dist..max_dist away on solid ground with two free nodes above, and looks at the
-- node with some jitter. Deterministic for a seed.
local function view_near(player, c)
  local rng = PcgRandom(c.seed or 0)
  local center = c.center or player:get_pos()
  local r = c.radius or 24
  local all = minetest.find_nodes_in_area(vector.subtract(center, r), vector.add(center, r), c.names)
  -- Only nodes with an open side can be seen.
  local found = {}
  for _, pos in ipairs(all) do
    for _, f in ipairs(FACES) do
      local n = vector.new(pos); n[f.axis] = n[f.axis] + f.sign
      if not opaque(n) then found[#found + 1] = pos; break end
    end
  end
  if #found == 0 then return nil, "no node of " .. table.concat(c.names, ",") .. " within " .. r end
  local props = player:get_properties()
  local eh = props.eye_height or 1.625
  -- The first 60 draws are what a seed has always meant (recorded runs name their seeds); the
  -- rest only turn a refusal into a view where the land is steep or dense.
  local tries, no_ground, blocked = 300, 0, 0
  for _ = 1, tries do
    local target = found[rng:next(1, #found)]
    local ang = rng:next(0, 359) * math.pi / 180
    local dist = (c.min_dist or 2) + rng:next(0, 1000) / 1000 * ((c.max_dist or 7) - (c.min_dist or 2))
    local x = math.floor(target.x + math.cos(ang) * dist + 0.5)
    local z = math.floor(target.z + math.sin(ang) * dist + 0.5)
    local stood = false
    for y = target.y + 3, target.y - 4, -1 do
      local ground = {x = x, y = y, z = z}
      local a1, a2 = {x = x, y = y + 1, z = z}, {x = x, y = y + 2, z = z}
      local gdef = minetest.registered_nodes[minetest.get_node(ground).name]
      if gdef and gdef.walkable and minetest.get_node(a1).name == "air" and minetest.get_node(a2).name == "air" then
        local pos = {x = x, y = y + 0.5, z = z}
        local eye = {x = x, y = pos.y + eh, z = z}
        local aim = {x = target.x + (rng:next(-40, 40) / 100), y = target.y + (rng:next(-40, 40) / 100),
                     z = target.z + (rng:next(-40, 40) / 100)}
        local d = vector.subtract(aim, eye)
        local hd = math.sqrt(d.x * d.x + d.z * d.z)
        if hd > 0.5 and ray_reaches(eye, target, target) then
          local yaw = math.atan2(-d.x, d.z) + math.rad(rng:next(-(c.yaw_jitter or 20), c.yaw_jitter or 20))
          local pitch = -math.atan2(d.y, hd) + math.rad(rng:next(-(c.pitch_jitter or 10), c.pitch_jitter or 10))
            + math.rad(c.pitch_offset or 0)  -- degrees further down (HUD hard negatives)
          pitch = math.max(-math.rad(80), math.min(math.rad(80), pitch))
          player:set_pos(pos)
          player:set_look_horizontal(yaw)
          player:set_look_vertical(pitch)
          return {pos = pos, yaw_deg = math.deg(yaw), pitch_deg = math.deg(pitch), target = target}
        end
        stood = true
        break
      end
    end
    if stood then blocked = blocked + 1 else no_ground = no_ground + 1 end
  end
  return nil, "no free standing place found near " .. table.concat(c.names, ",") .. " (" .. #found ..
    " visible nodes; of " .. tries .. " tries " .. no_ground .. " found no ground with two free nodes above, " ..
    blocked .. " no clear view)"
end

-- The nearest column (on square rings `step` nodes apart around `center` or the player, out to
-- `max` nodes) whose biome at height `y` is one of `biomes`, and so are the columns `margin`
-- nodes around it (a column at a biome's edge had no pine within 24 nodes): a run can start in
-- a taiga ("taiga", "coniferous_forest": pine trees) of any world. Biomes come from the map
-- generator's noise, so nothing needs to be generated to ask.
local function find_biome(player, c)
  local want = {}
  for _, b in ipairs(c.biomes or {}) do want[b] = true end
  local center = c.center or player:get_pos()
  local step, max, y, margin = c.step or 16, c.max or 3000, c.y or 10, c.margin or 24
  local function name_at(x, z)
    local data = minetest.get_biome_data({x = x, y = y, z = z})
    return data and minetest.get_biome_name(data.biome)
  end
  local function biome_at(dx, dz)
    local x, z = math.floor(center.x + dx * step), math.floor(center.z + dz * step)
    local name = name_at(x, z)
    if not (name and want[name]) then return nil end
    for _, o in ipairs({{-1, -1}, {-1, 0}, {-1, 1}, {0, -1}, {0, 1}, {1, -1}, {1, 0}, {1, 1}}) do
      if not want[name_at(x + o[1] * margin, z + o[2] * margin) or ""] then return nil end
    end
    return {pos = {x = x, y = y, z = z}, biome = name}
  end
  local found = biome_at(0, 0)
  if found then return found end
  for ring = 1, math.floor(max / step) do
    for i = -ring, ring - 1 do  -- the ring's four sides, each without its last corner
      found = biome_at(i, -ring) or biome_at(ring, i) or biome_at(-i, ring) or biome_at(-ring, -i)
      if found then return found end
    end
  end
  return nil, "no biome " .. table.concat(c.biomes or {}, ",") .. " within " .. max .. " nodes"
end

-- Clears every loaded node in the box min..max (inclusive; "air" and unloaded nodes are left),
-- so that the sun lights what is under it: an open pit shows stone and ore walls the way a quarry
-- does. Returns how many nodes were cleared.
local function excavate(c)
  local lo, hi = vector.round(c.min), vector.round(c.max)
  if hi.x - lo.x > 64 or hi.y - lo.y > 64 or hi.z - lo.z > 64 then error("excavate: box larger than 64 nodes") end
  minetest.load_area(lo, hi)
  local cleared = {}
  for x = lo.x, hi.x do
    for y = lo.y, hi.y do
      for z = lo.z, hi.z do
        local pos = {x = x, y = y, z = z}
        local name = minetest.get_node(pos).name
        if name ~= "air" and name ~= "ignore" then cleared[#cleared + 1] = pos end
      end
    end
  end
  minetest.bulk_set_node(cleared, {name = "air"})
  return {cleared = #cleared}
end

-- Commands ---------------------------------------------------------------------------------------
-- {"op":"give","item":"default:tree 3"}                {"op":"clear_inv"} (main, craft, craftresult)
-- {"op":"set_list","list":"main","items":["default:tree 4","","default:stick 2"]}
-- {"op":"tp","pos":{"x":0,"y":10,"z":0}}              {"op":"look","yaw_deg":90,"pitch_deg":10}
-- {"op":"set_node","pos":{...},"name":"default:tree"} {"op":"time","value":0.5}
-- (No wield op: Minetest 5.6 has no set_wield_index; tests select a slot with its key.)
-- {"op":"scan","names":{"tree":["group:tree"]},"radius":10,"radii":{"tree":40},"grid":3,"max_angle":70}
-- {"op":"view_near","names":["group:tree"],"seed":7,"radius":24,"min_dist":2,"max_dist":7,"pitch_offset":0}
-- {"op":"excavate","min":{"x":..},"max":{"x":..}}  (clears the box: an open pit)
-- {"op":"find_biome","biomes":["taiga","coniferous_forest"],"step":16,"max":3000,"y":10,"margin":24}  (-> {pos, biome})
-- {"op":"ping"}  (answers the state)   {"op":"craft_preview"}  (the craft grid's result)
-- Any command may carry "id", echoed in its cmd_done event.
local ops = {
  give = function(p, c) return {leftover = p:get_inventory():add_item("main", ItemStack(c.item)):to_string()} end,
  clear_inv = function(p)
    local inv = p:get_inventory()
    inv:set_list("main", {}); inv:set_list("craft", {}); inv:set_list("craftresult", {})
  end,
  set_list = function(p, c)
    local inv = p:get_inventory()
    if not inv:get_list(c.list) then error("no list " .. tostring(c.list)) end
    local stacks = {}
    for i, s in ipairs(c.items or {}) do stacks[i] = ItemStack(s) end
    inv:set_list(c.list, {})
    for i, s in ipairs(stacks) do inv:set_stack(c.list, i, s) end
  end,
  tp = function(p, c) p:set_pos(c.pos) end,
  look = function(p, c)
    p:set_look_horizontal(math.rad(c.yaw_deg)); p:set_look_vertical(math.rad(c.pitch_deg))
  end,
  set_node = function(_, c) minetest.set_node(c.pos, {name = c.name}) end,
  time = function(_, c) minetest.set_timeofday(c.value) end,
  scan = function(p, c) return scan(p, c) end,
  view_near = function(p, c)
    local r, err = view_near(p, c)
    if not r then error(err) end
    return r
  end,
  excavate = function(_, c) return excavate(c) end,
  find_biome = function(p, c)
    local r, err = find_biome(p, c)
    if not r then error(err) end
    return r
  end,
  ping = function(p) return snapshot(p) end,
  -- What the craft grid makes now (the client draws it in the result slot before it is taken).
  craft_preview = function(p)
    local inv = p:get_inventory()
    local out = minetest.get_craft_result({method = "normal", width = inv:get_width("craft"),
                                           items = inv:get_list("craft")})
    return {item = out.item:to_string()}
  end,
}

-- Commands that search or change the map (view_near, excavate, set_node) see only generated, loaded map blocks: right after
-- the player joins, or on a busy machine, the land around them may not exist yet, and a search
-- would wrongly find nothing. Such a command first has its area emerged (generated or loaded);
-- the command queue waits for it, up to MAP_WAIT_S, then the command runs on what is there.
local MAP_WAIT_S = 60
local map_waits = {}  -- cmd.jsonl line -> {since = us, ready = bool}
local function map_area(c, player)
  if c.op == "excavate" then return c.min, c.max end
  -- A node set in a block that is not loaded is silently dropped (a pillar high in the sky).
  if c.op == "set_node" and type(c.pos) == "table" then return c.pos, c.pos end
  if c.op ~= "view_near" then return nil end
  local center = c.center or player:get_pos()
  -- The standing place lies up to max_dist beyond a node at the box's edge, its ground up to 4
  -- below: all of it generated, or a search near the edge reads "ignore" and finds no place.
  local r = (c.radius or 24) + (c.max_dist or 7) + 5
  return vector.subtract(center, r), vector.add(center, r)
end
-- nil: run the command now; "waiting": not yet; any other string: give up with that error.
local function map_wait(line, c, player)
  local lo, hi = map_area(c, player)
  if not lo then return nil end
  local w = map_waits[line]
  if not w then
    w = {since = minetest.get_us_time(), ready = false}
    map_waits[line] = w
    minetest.emerge_area(lo, hi, function(_, _, remaining)
      if remaining == 0 then w.ready = true end
    end)
  end
  if w.ready then map_waits[line] = nil; return nil end
  if (minetest.get_us_time() - w.since) / 1e6 > MAP_WAIT_S then
    map_waits[line] = nil
    return "the map around " .. minetest.pos_to_string(vector.round(lo)) .. ".." ..
      minetest.pos_to_string(vector.round(hi)) .. " was not generated within " .. MAP_WAIT_S .. " s"
  end
  return "waiting"
end

local cmd_path, cmd_done = dir .. "/cmd.jsonl", 0
local cacc = 0
minetest.register_globalstep(function(dtime)
  cacc = cacc + dtime
  if cacc < 0.1 then return end
  cacc = 0
  local player = minetest.get_connected_players()[1]
  if not player then return end
  local f = io.open(cmd_path, "r")
  if not f then return end
  local lines = {}
  for l in f:lines() do lines[#lines + 1] = l end
  f:close()
  -- A line still being written has no newline yet: it is read on the next round.
  for i = cmd_done + 1, #lines do
    local c = minetest.parse_json(lines[i])
    local ok, res
    if type(c) ~= "table" then
      ok, res = false, "line " .. i .. " of cmd.jsonl is not a JSON object"
    elseif not ops[c.op] then
      ok, res = false, "unknown op " .. tostring(c.op)
    else
      local wait = map_wait(i, c, player)
      if wait == "waiting" then return end  -- this line and the ones after it run next round
      if wait then
        ok, res = false, wait
      else
        ok, res = pcall(ops[c.op], player, c)
      end
    end
    emit({ev = "cmd_done", line = i, id = type(c) == "table" and c.id or nil, ok = ok,
          err = (not ok) and tostring(res) or nil, result = ok and res or nil})
    cmd_done = i
  end
end)
