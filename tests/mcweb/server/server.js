#!/usr/bin/env node
// Standalone test server: @zardoy/flying-squid (MIT) + a tiny test-harness plugin.
// Not a product: a fixture for driving minecraft-web-client through a desktop agent.
//
// This is the project's copy of /work/shared/mcweb/server/server.js (MIT fixture), extended for the
// closed-loop tests so that it plays by Minecraft 1.14 rules where flying-squid 0.0.49 does not:
//   - crafting in the player's own 2x2 grid (window 0) and a rewritten crafting table (3x3), both with
//     one recipe matcher over minecraft-data (shaped + shapeless, any position, mirrored shapes);
//     result slot taken by click (whole result onto the cursor) or shift-click (as many as fit);
//   - vanilla shift-click between inventory parts (main <-> hotbar, grid -> inventory);
//   - items in a crafting grid (and on the server-side cursor) go back into the inventory when the
//     window closes (dropped when it is full) instead of being lost;
//   - picked-up items go into the inventory only (never into the crafting/armor slots) with their count;
//   - every slot change is sent to the client (flying-squid changes stack counts in place unsent);
//   - scene commands face_block, close_window, drop; state.json gains cursor, crafted, window.slots;
//   - blocks that need a harvest tool (stone, ores) drop nothing when dug without one;
//   - working furnaces: the window (type 13), smelting on the server tick with vanilla fuel and cook times,
//     contents kept with the block (and dropped when it is dug), the `furnace` command, state.json's
//     window.kind 'furnace' and `smelted`.
// See README.md next to this file. The upstream header follows.
//
// Environment (all optional):
//   MC_HOST=127.0.0.1  MC_PORT=25565  MC_VERSION=1.14.4  MC_SEED=20241024
//   VIEW_DISTANCE=4    CMD_PORT=25580 (127.0.0.1 only)    STATE_FILE=./state.json
//   STATE_INTERVAL_MS=500  CMD_FILE=./commands.jsonl (one JSON command per line, consumed & truncated)
//   Added by this copy:
//   MCWEB_SERVER_MODULES=<dir>  where the server's node_modules are (else NODE_PATH / normal resolution,
//                       else <repo>/.work/mcweb/server/node_modules)
//   MC_IMPLICIT_INV_CLOSE=1  treat a swing/dig/place/use as "the E inventory was closed" (see README)
//   MC_CURSOR_ON_CLOSE=return  what happens to the cursor stack on close: return (to the inventory,
//                       dropped if full) or drop (vanilla 1.14 throws it)
//
// The world is generated in memory from the fixed seed on every start (no world folder is written),
// so every start gives the same terrain: zardoy's diamond-square fork (plains/forest/desert biomes,
// oak trees, ores in stone).
'use strict'
const fs = require('fs')
const path = require('path')
const http = require('http')
const Module = require('module')

// ---- module root ----
// Node resolves bare names from this script's folder upwards first and only then from NODE_PATH, so
// `NODE_PATH=<server>/node_modules node tests/mcweb/server/server.js` works as long as no node_modules
// folder above this file shadows them. MCWEB_SERVER_MODULES (the node_modules folder, or the folder
// holding it) pins the root explicitly; the repo's build output is the last resort.
const req = (() => {
  const fromDir = (dir) => Module.createRequire(path.join(path.resolve(dir), '__mcweb_server__.js'))
  if (process.env.MCWEB_SERVER_MODULES) return fromDir(process.env.MCWEB_SERVER_MODULES)
  try { require.resolve('@zardoy/flying-squid'); return require } catch { }
  return fromDir(path.resolve(__dirname, '../../../.work/mcweb/server/node_modules'))
})()
const { Vec3 } = req('vec3')

const env = (k, d) => (process.env[k] === undefined || process.env[k] === '' ? d : process.env[k])
const VERSION = env('MC_VERSION', '1.14.4')
const STATE_FILE = path.resolve(env('STATE_FILE', path.join(__dirname, 'state.json')))
const CMD_FILE = path.resolve(env('CMD_FILE', path.join(__dirname, 'commands.jsonl')))
const CMD_PORT = +env('CMD_PORT', 25580)
const STATE_INTERVAL_MS = +env('STATE_INTERVAL_MS', 500)
const IMPLICIT_INV_CLOSE = env('MC_IMPLICIT_INV_CLOSE', '1') !== '0'
const CURSOR_ON_CLOSE = env('MC_CURSOR_ON_CLOSE', 'return')

fs.mkdirSync(path.join(process.cwd(), 'logs'), { recursive: true }) // flying-squid writes logs/<time>.log in the cwd
const mcServer = req('@zardoy/flying-squid')
const serv = mcServer.createMCServer({
  motd: 'mcweb test server',
  host: env('MC_HOST', '127.0.0.1'),
  port: +env('MC_PORT', 25565),
  'max-players': 10,
  'online-mode': false,
  logging: true,
  gameMode: 0, // survival
  difficulty: 1,
  // no worldFolder: world lives in memory and is regenerated identically from the seed on each start
  generation: { name: 'diamond_square', options: { seed: +env('MC_SEED', 20241024) } },
  kickTimeout: 10 * 60 * 1000, // keep-alive timeout raised from 30 s to 10 min
  plugins: {},
  modpe: false,
  'view-distance': +env('VIEW_DISTANCE', 4),
  'player-list-text': { header: { text: 'mcweb' }, footer: { text: 'test server' } },
  'everybody-op': true,
  'max-entities': 100,
  version: VERSION
})

// Fixed spawn (flying-squid picks a random x,z in 0..30 otherwise): MC_SPAWN="x,z" (y = first air above ground),
// MC_SPAWN_LOOK="yaw,pitch" sent once after joining. Default: 4 blocks south of an oak tree (trunk x=28,z=22)
// for the default seed, facing it. MC_SPAWN=random restores flying-squid's behaviour; MC_SPAWN=random:N draws
// the spawn as flying-squid does (x,z in 0..30, stepped east out of water, on the ground) from seed N instead of
// Math.random, so that a run can be repeated.
const SPAWN = env('MC_SPAWN', '28,26')
const SPAWN_LOOK = env('MC_SPAWN_LOOK', '180,10').split(',').map(Number)
if (SPAWN.startsWith('random:')) {
  const n = Number(SPAWN.slice('random:'.length))
  if (!Number.isInteger(n)) throw new Error(`MC_SPAWN=${SPAWN}: expected random:<integer seed>`)
  // mulberry32: a small seeded generator, enough to draw two numbers.
  let a = n >>> 0
  const next = () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const sx = Math.floor(next() * 30)
  const sz = Math.floor(next() * 30)
  const blocks = req('minecraft-data')(VERSION).blocksByName
  const waterIds = new Set(['water', 'flowing_water'].map(b => blocks[b]?.id).filter(x => x !== undefined))
  let spawn = null
  serv.getSpawnPoint = async (world) => {
    if (spawn) return spawn
    let p = new Vec3(sx, 81, sz)
    while ((await world.getBlockStateId(p)) === 0 && p.y > 0) p = p.offset(0, -1, 0)
    for (let i = 0; i < 600 && waterIds.has(await world.getBlockType(p)); i++) p = p.offset(1, 0, 0)
    while ((await world.getBlockStateId(p)) !== 0) p = p.offset(0, 1, 0)
    spawn = new Vec3(p.x + 0.5, p.y, p.z + 0.5)
    return spawn
  }
} else if (SPAWN !== 'random') {
  const [sx, sz] = SPAWN.split(',').map(Number)
  let spawn = null
  serv.getSpawnPoint = async (world) => {
    if (spawn) return spawn
    let y = 250
    while (y > 1 && (await world.getBlockStateId(new Vec3(sx, y, sz))) === 0) y--
    spawn = new Vec3(sx + 0.5, y + 1, sz + 0.5)
    return spawn
  }
}

const mcData = req('minecraft-data')(VERSION)
const Item = req('prismarine-item')(VERSION)
const Block = req('prismarine-block')(VERSION)
const windows = req('prismarine-windows')(VERSION)
// flying-squid 0.0.49's crafting table sends open_window with a string type ('minecraft:crafting'), but from 1.14
// on the protocol wants the numeric menu id; without this fix the client shows a 9x3 chest-like window.
const windowTypeIds = Object.keys(windows.windows || {}).filter(k => k !== 'minecraft:inventory')
const numericWindowTypes = mcData.isNewerOrEqualTo('1.14')

// ---- per-player bookkeeping (look in degrees, open window, crafting) ----
const extra = new WeakMap()
serv.on('newPlayer', (player) => {
  const x = {
    yaw: 0,
    pitch: 0,
    window: null,
    table: null, // the open crafting table: { win, id, sent: [], shift: 1 }
    furnace: null, // the open furnace window: { win, id, sent: [], shift: -6, f (the block's furnace), props: [] }
    sent0: new Array(46).fill(''), // window-0 slot contents as last sent to the client (keys), to send in-place changes
    sentCursor: '',
    crafted: [], // recent crafts, newest last
    smelted: [] // furnace results the player took, newest last
  }
  extra.set(player, x)
  const onLook = ({ yaw, pitch }) => { if (typeof yaw === 'number') { x.yaw = yaw; x.pitch = pitch } }
  player._client.on('look', onLook)
  player._client.on('position_look', onLook)
  if (!SPAWN.startsWith('random') && SPAWN_LOOK.length === 2 && SPAWN_LOOK.every(Number.isFinite)) {
    player.once('spawned', () => setTimeout(() => {
      if (player.position) teleport(player, player.position.x, player.position.y, player.position.z, SPAWN_LOOK[0], SPAWN_LOOK[1]).catch(() => {})
    }, 1000))
  }
  const write = player._client.write.bind(player._client)
  player._client.write = (name, params) => {
    if (name === 'open_window') {
      let title = params.windowTitle
      try { title = JSON.parse(title) } catch { }
      x.window = { id: params.windowId, type: params.inventoryType, title: title?.text ?? title }
      if (numericWindowTypes && typeof params.inventoryType === 'string' && windowTypeIds.includes(params.inventoryType)) {
        params = { ...params, inventoryType: windowTypeIds.indexOf(params.inventoryType) }
      }
      // it also JSON-encodes the title ('"Crafting"'), which this client prints verbatim, quotes included
      if (typeof title === 'string') params = { ...params, windowTitle: title }
    } else if (name === 'close_window') x.window = null
    return write(name, params)
  }
  setupCrafting(player, x)
  setupFurnace(player, x)
  // Minecraft's harvest rule: a block that names harvest tools (stone, cobblestone, ores) drops
  // nothing when dug with anything else (flying-squid drops every block's loot whatever is held).
  player.on('dug', (data) => {
    const tools = data.block?.harvestTools
    if (!tools || !data.dropBlock) return
    const held = player.inventory.slots[36 + player.heldItemSlot]
    if (held && tools[held.type]) return
    data.dropBlock = false
    console.log(`[harness] ${player.username}: ${data.block.name} dug with ${held ? itemName(held) : 'an empty hand'}: no drop (needs a harvest tool)`)
  })
})

// =====================================================================================================
// Crafting, inventory clicks and closing (the additions of this copy)
// =====================================================================================================
//
// Window-click protocol as relied on here (1.14.4, protocol 498; wiki.vg "Click Window" of that era):
//   window_click {windowId u8, slot i16, mouseButton i8, action i16, mode i8, item slot}
//   - windowId 0 is the player's own inventory: 0 craft result, 1-4 the 2x2 grid (1 2 / 3 4, row-major),
//     5-8 armor, 9-35 main, 36-44 hotbar, 45 offhand. A crafting table (open_window type 11,
//     'minecraft:crafting') is 0 result, 1-9 the 3x3 grid (row-major), 10-36 main, 37-45 hotbar.
//   - mode 0 = plain click (button 0 left, 1 right), 1 = shift-click (button 0/1), 2 = number key
//     (button = hotbar 0-8), 3 = middle, 4 = drop (Q; button 1 = ctrl-Q), 5 = drag, 6 = double click.
//     slot -999 = outside the window.
//   - The cursor ("carried item") is server state too: vanilla sends it as set_slot windowId -1 slot -1.
//   - `item` is the client's idea of the clicked slot; this server (like flying-squid) ignores it and
//     applies the click to its own copy. Vanilla answers every click with a transaction packet; flying-squid
//     sends none, and neither does this copy (see README: mineflayer's clickWindow promise times out after
//     5 s; the web client's inventory GUI ignores that and draws from the set_slot packets it receives).
//   - close_window {windowId u8}: sent by vanilla clients (and by mineflayer's closeWindow, which the web
//     client uses for server-opened windows such as the crafting table). The web client's own E inventory
//     does NOT send close_window 0 when it closes (src/inventoryWindows.ts: only `type !== undefined`
//     windows call bot.currentWindow.close()), hence MC_IMPLICIT_INV_CLOSE and the close_window command.
//   - minecraft-web-client (mineflayer) only sends modes 0 (left/right) and 1 (shift) for clicks; its GUI
//     moves its own "floating" item locally and takes slot contents from set_slot/window_items.
//
// Vanilla rules implemented (1.14 Container.slotClick / PlayerContainer / WorkbenchContainer):
//   - result slot, mode 0 (either button): empty cursor -> the whole result goes onto the cursor; cursor
//     holding the same item with room for the whole result -> added; otherwise nothing. Each take consumes
//     one item from every non-empty grid slot (container remainders from minecraft-data's outShape stay).
//   - result slot, mode 1: craft repeatedly, each result merged into the inventory (slots 44..9 resp. 45..10,
//     last first, existing stacks before empty slots) while the whole result fits and the recipe is the same.
//   - result slot, mode 2: into an empty hotbar slot; mode 4: the result is dropped as an item entity.
//   - shift-click elsewhere: grid/armor/offhand -> inventory; main -> hotbar; hotbar -> main (window 0 also
//     puts armor into an empty armor slot and a shield into an empty offhand); never into the grid.
//   - slot -999 (outside), mode 0: the cursor stack is thrown (button 1: one item). Q (mode 4) over a slot
//     throws one item of it (button 1, ctrl-Q: the stack). Thrown items are item entities (2 s pickup delay).
//   - everything else (plain clicks on ordinary slots, number keys) goes to flying-squid/prismarine-windows
//     as before; afterwards the result slot is recomputed and the whole window and the cursor are sent to
//     the client (as vanilla does after a click the client predicted wrong).

const ITEM_ENTITY = (mcData.entitiesByName.item || mcData.entitiesByName.Item).id
const keyOf = (it) => (it ? `${it.type}:${it.count}` : '')
const cloneItem = (it) => (it ? new Item(it.type, it.count, it.metadata, it.nbt) : null)
const sameKind = (a, b) => !!a && !!b && a.type === b.type && a.metadata === b.metadata &&
  JSON.stringify(a.nbt ?? null) === JSON.stringify(b.nbt ?? null)
const range = (a, b) => Array.from({ length: b - a }, (_, i) => a + i)
const itemName = (it) => mcData.items[it.type]?.name ?? String(it.type)

// ---- recipes: one matcher for the 2x2 and the 3x3 grid ----
// flying-squid's own matcher (getResultingRecipe in dist/lib/modules/crafting.js) is module-private, so it
// cannot be reused; it also mis-trims shapes with gaps (e.g. shears), ignores mirroring and fits only
// top-left-aligned columns. This one is the vanilla rule: trim the grid to the bounding box of its items,
// compare with each shaped recipe (trimmed the same way) as is and mirrored left-right, or compare the
// multiset of items with a shapeless recipe. minecraft-data expands tags into one variant per item.
function trimCells (rows) {
  const w = Math.max(...rows.map(r => r.length))
  const at = (r, c) => rows[r]?.[c] ?? null
  let r0 = Infinity; let r1 = -1; let c0 = Infinity; let c1 = -1
  for (let r = 0; r < rows.length; r++) {
    for (let c = 0; c < w; c++) if (at(r, c) !== null) { r0 = Math.min(r0, r); r1 = Math.max(r1, r); c0 = Math.min(c0, c); c1 = Math.max(c1, c) }
  }
  if (r1 < 0) return null
  const cells = []
  for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) cells.push(at(r, c))
  return { w: c1 - c0 + 1, h: r1 - r0 + 1, cells, r0, c0 }
}
const RECIPES = []
for (const variants of Object.values(mcData.recipes)) {
  for (const v of variants) {
    const res = v.result
    const result = typeof res === 'number' ? { id: res, count: 1 } : Array.isArray(res) ? { id: res[0], count: res[1] ?? 1 } : { id: res.id, count: res.count ?? 1, metadata: res.metadata }
    if (!mcData.items[result.id]) continue
    if (v.inShape) {
      const t = trimCells(v.inShape)
      if (!t) continue
      let out = null // container remainders (e.g. the cake's buckets), in the trimmed shape's cells
      if (v.outShape) {
        out = []
        for (let r = 0; r < t.h; r++) for (let c = 0; c < t.w; c++) out.push(v.outShape[t.r0 + r]?.[t.c0 + c] ?? null)
      }
      RECIPES.push({ shaped: true, w: t.w, h: t.h, cells: t.cells, out, result })
    } else if (v.ingredients?.length) {
      RECIPES.push({ shaped: false, ids: v.ingredients.map(Number).sort((a, b) => a - b), result })
    }
  }
}
const mirrorCells = (cells, w, h) => {
  const out = []
  for (let r = 0; r < h; r++) for (let c = w - 1; c >= 0; c--) out.push(cells[r * w + c])
  return out
}
const eqCells = (a, b) => a.length === b.length && a.every((v, i) => v === b[i])
// items: n*n grid items (row-major), Item|null. Returns { result: Item, remainders: [Item|null per grid cell] } or null.
function matchRecipe (items, n) {
  const rows = []
  for (let r = 0; r < n; r++) rows.push(items.slice(r * n, r * n + n).map(it => (it ? it.type : null)))
  const t = trimCells(rows)
  if (!t) return null
  const mirrored = mirrorCells(t.cells, t.w, t.h)
  const present = t.cells.filter(c => c !== null).sort((a, b) => a - b)
  for (const rc of RECIPES) {
    let flip = null
    if (rc.shaped) {
      if (rc.w !== t.w || rc.h !== t.h) continue
      if (eqCells(rc.cells, t.cells)) flip = false
      else if (eqCells(rc.cells, mirrored)) flip = true
      else continue
    } else if (!eqCells(rc.ids, present)) continue
    const result = new Item(rc.result.id, rc.result.count, rc.result.metadata)
    const remainders = new Array(n * n).fill(null)
    if (rc.shaped && rc.out) {
      for (let r = 0; r < t.h; r++) {
        for (let c = 0; c < t.w; c++) {
          const id = rc.out[r * t.w + (flip ? t.w - 1 - c : c)]
          if (id !== null && id !== undefined) remainders[(t.r0 + r) * n + t.c0 + c] = new Item(id, 1)
        }
      }
    }
    return { result, remainders }
  }
  return null
}

// ---- views of the windows this file handles (result: the slot that can only be taken from) ----
function inventoryView (player) {
  return { kind: 'inventory', win: player.inventory, id: 0, n: 2, grid: [1, 2, 3, 4], result: 0, inv: [9, 45], main: [9, 36], hotbar: [36, 45] }
}
function tableView (player, t) {
  return { kind: 'crafting_table', win: t.win, id: t.id, n: 3, grid: range(1, 10), result: 0, inv: [10, 46], main: [10, 37], hotbar: [37, 46], table: t, open: t }
}
// a furnace has no grid: 0 input, 1 fuel, 2 result (see the furnace section)
function furnaceView (player, fw) {
  return { kind: 'furnace', win: fw.win, id: fw.id, n: 0, grid: [], result: 2, inv: [3, 39], main: [3, 30], hotbar: [30, 39], fw, open: fw }
}
// the server-opened window (crafting table or furnace) of a player's bookkeeping, or null
const openOf = (x) => x?.table || x?.furnace || null
// the window the next click goes to (flying-squid: player.customWindow || player.inventory)
function clickView (player) {
  const x = extra.get(player)
  if (player.customWindow) {
    if (x.table && player.customWindow === x.table.win) return tableView(player, x.table)
    if (x.furnace && player.customWindow === x.furnace.win) return furnaceView(player, x.furnace)
    return null
  }
  return inventoryView(player)
}

// ---- sending slot changes ----
function flushInventory (player) {
  const x = extra.get(player)
  if (player.customWindow) return // while another window is open the client shows that one (and copies it back on close)
  player.inventory.slots.forEach((it, slot) => {
    const k = keyOf(it)
    if (x.sent0[slot] !== k) {
      x.sent0[slot] = k
      player._client.write('set_slot', { windowId: 0, slot, item: Item.toNotch(it) })
    }
  })
}
// the open crafting table or furnace: every slot that differs from what the client was last sent
function flushContainer (player) {
  const t = openOf(extra.get(player))
  if (!t) return
  t.win.slots.forEach((it, slot) => {
    const k = keyOf(it)
    if (t.sent[slot] !== k) {
      t.sent[slot] = k
      player._client.write('set_slot', { windowId: t.id, slot, item: Item.toNotch(it) })
    }
  })
}
function flushCursor (player) {
  const x = extra.get(player)
  const o = openOf(x)
  const cur = o ? o.win.selectedItem : player.inventory.selectedItem
  const k = keyOf(cur)
  if (x.sentCursor !== k) {
    x.sentCursor = k
    player._client.write('set_slot', { windowId: -1, slot: -1, item: Item.toNotch(cur) })
  }
}
function flushAll (player) {
  flushInventory(player)
  flushContainer(player)
  flushCursor(player)
}
// crafting table / furnace: its inventory part mirrors player.inventory 9..44, window slot = inventory slot +
// t.shift (table 10..45: +1; furnace 3..38: -6). Clones, never shared objects: prismarine-windows keeps
// item.slot per window, and flying-squid's shared objects corrupted it.
function containerToInventory (player, t) {
  const x = extra.get(player)
  x.syncing = true
  try {
    for (let s = 9; s < 45; s++) {
      const it = t.win.slots[s + t.shift]
      if (keyOf(it) !== keyOf(player.inventory.slots[s])) player.inventory.updateSlot(s, cloneItem(it))
    }
  } finally { x.syncing = false }
}

// ---- inventory insertion (vanilla PlayerInventory.addItemStackToInventory / placeItemBackInInventory) ----
// Existing stacks first (held hotbar slot, offhand, hotbar 36-44, main 9-35), then the first empty slot
// (hotbar first, then main). Returns the count that did not fit. Never touches slots 0-8.
function addToInventory (player, item) {
  const inv = player.inventory
  let left = item.count
  const max = item.stackSize || mcData.items[item.type]?.stackSize || 64
  const order = [36 + (player.heldItemSlot || 0), 45, ...range(36, 45), ...range(9, 36)]
  for (const s of order) {
    if (!left) break
    const cur = inv.slots[s]
    if (cur && sameKind(cur, item) && cur.count < max) {
      const n = Math.min(left, max - cur.count)
      inv.updateSlot(s, new Item(cur.type, cur.count + n, cur.metadata, cur.nbt))
      left -= n
    }
  }
  for (const s of [...range(36, 45), ...range(9, 36)]) {
    if (!left) break
    if (!inv.slots[s]) {
      const n = Math.min(left, max)
      inv.updateSlot(s, new Item(item.type, n, item.metadata, item.nbt))
      left -= n
    }
  }
  return left
}
function dropItem (player, item, reason) {
  if (!item || !item.count) return
  const yaw = (extra.get(player)?.yaw ?? 0) * Math.PI / 180
  serv.spawnObject(ITEM_ENTITY, player.world, player.position.offset(0, 1.3, 0), {
    velocity: new Vec3(-Math.sin(yaw) * 3, 2, Math.cos(yaw) * 3), // thrown forward, like vanilla's dropItem
    itemId: item.type,
    itemDamage: item.metadata || 0,
    itemCount: item.count,
    pickupTime: 2000, // vanilla: 40 ticks
    deathTime: 5 * 60 * 1000
  })
  console.log(`[harness] ${player.username}: dropped ${item.count} ${itemName(item)} (${reason})`)
}
function giveOrDrop (player, item, reason) {
  if (!item) return
  const left = addToInventory(player, item)
  if (left) dropItem(player, new Item(item.type, left, item.metadata, item.nbt), reason)
}

// ---- result slot ----
function gridItems (v) { return v.grid.map(s => v.win.slots[s]) }
function updateResult (v) {
  const m = matchRecipe(gridItems(v), v.n)
  const want = m ? m.result : null
  if (keyOf(v.win.slots[0]) !== keyOf(want)) v.win.updateSlot(0, want)
}
// one craft: consume one of each grid item (leaving container remainders), record it, recompute the result
function consumeGrid (player, v) {
  const m = matchRecipe(gridItems(v), v.n)
  if (!m) return null
  v.grid.forEach((s, i) => {
    const it = v.win.slots[s]
    if (!it) return
    const rest = m.remainders[i]
    if (it.count > 1) {
      v.win.updateSlot(s, new Item(it.type, it.count - 1, it.metadata, it.nbt))
      if (rest) giveOrDrop(player, rest, 'craft remainder')
    } else v.win.updateSlot(s, rest)
  })
  const x = extra.get(player)
  x.crafted.push({ name: itemName(m.result), count: m.result.count, via: v.kind, t: Date.now() })
  if (x.crafted.length > 50) x.crafted.splice(0, x.crafted.length - 50)
  updateResult(v)
  return m.result
}
// vanilla Container.mergeItemStack: existing stacks of the same item first, then the first empty slot
function mergeInto (win, item, slots) {
  const max = item.stackSize || 64
  let left = item.count
  for (const s of slots) {
    if (!left) break
    const cur = win.slots[s]
    if (cur && sameKind(cur, item) && cur.count < max) {
      const n = Math.min(left, max - cur.count)
      win.updateSlot(s, new Item(cur.type, cur.count + n, cur.metadata, cur.nbt))
      left -= n
    }
  }
  if (left) {
    const s = slots.find(s => !win.slots[s])
    if (s !== undefined) { win.updateSlot(s, new Item(item.type, left, item.metadata, item.nbt)); left = 0 }
  }
  return left
}
function fitsIn (win, item, slots) {
  const max = item.stackSize || 64
  let room = 0
  for (const s of slots) {
    const cur = win.slots[s]
    if (!cur) room += max
    else if (sameKind(cur, item)) room += max - cur.count
    if (room >= item.count) return true
  }
  return false
}
function resultClick (player, v, click) {
  const res = v.win.slots[0]
  if (!res) return
  const invReverse = range(v.inv[0], v.inv[1]).reverse()
  switch (click.mode) {
    case 0: { // left or right click: the whole result onto the cursor
      const cur = v.win.selectedItem
      if (!cur) {
        v.win.selectedItem = cloneItem(res)
        consumeGrid(player, v)
      } else if (sameKind(cur, res) && cur.count + res.count <= (cur.stackSize || 64)) {
        v.win.selectedItem = new Item(cur.type, cur.count + res.count, cur.metadata, cur.nbt)
        consumeGrid(player, v)
      }
      return
    }
    case 1: { // shift-click: as many crafts as fit, each whole result into the inventory
      const type = res.type
      for (let i = 0; i < 64; i++) {
        const r = v.win.slots[0]
        if (!r || r.type !== type || !fitsIn(v.win, r, invReverse)) break
        mergeInto(v.win, r, invReverse)
        consumeGrid(player, v)
      }
      return
    }
    case 2: { // number key: into that hotbar slot when it is empty
      const hb = v.hotbar[0] + click.mouseButton
      if (click.mouseButton >= 0 && click.mouseButton < 9 && !v.win.slots[hb]) {
        v.win.updateSlot(hb, cloneItem(res))
        consumeGrid(player, v)
      }
      return
    }
    case 4: { // Q over the result: craft once and throw it
      if (v.win.selectedItem) return
      const r = cloneItem(res)
      if (consumeGrid(player, v)) dropItem(player, r, 'Q on the craft result')
    }
  }
}
const ARMOR_SLOT = (name) => (/_helmet$|^carved_pumpkin$|_head$|_skull$/.test(name)
  ? 5
  : /_chestplate$|^elytra$/.test(name) ? 6 : /_leggings$/.test(name) ? 7 : /_boots$/.test(name) ? 8 : null)
function shiftClick (player, v, slot) {
  const it = v.win.slots[slot]
  if (!it) return
  let dest
  const inGrid = v.grid.includes(slot)
  if (v.kind === 'inventory' && slot >= 9 && slot < 45) {
    const armor = ARMOR_SLOT(itemName(it))
    if (armor && !v.win.slots[armor]) dest = [armor]
    else if (itemName(it) === 'shield' && !v.win.slots[45]) dest = [45]
  }
  if (v.kind === 'furnace' && slot >= v.inv[0]) {
    // vanilla FurnaceContainer.transferStackInSlot: a smeltable item goes to the input only (a log too,
    // although it burns; nothing moves when the input holds something else), else a fuel to the fuel slot
    if (smeltResult(it) !== null) dest = [0]
    else if (fuelTicks(it) > 0) dest = [1]
  }
  if (!dest) {
    if (slot >= v.main[0] && slot < v.main[1]) dest = range(v.hotbar[0], v.hotbar[1])
    else if (slot >= v.hotbar[0] && slot < v.hotbar[1]) dest = range(v.main[0], v.main[1])
    else if (inGrid || slot < v.inv[0] || slot >= v.inv[1]) dest = range(v.inv[0], v.inv[1])
    else return
  }
  const moving = cloneItem(it)
  const left = mergeInto(v.win, moving, dest)
  if (left === it.count) return
  v.win.updateSlot(slot, left ? new Item(it.type, left, it.metadata, it.nbt) : null)
}

// ---- closing: the grid (and the cursor) go back into the inventory ----
function returnGrid (player, v, why) {
  const x = extra.get(player)
  const moved = []
  const cur = v.win.selectedItem
  v.win.selectedItem = null
  // a furnace's slots belong to the block and stay in it: only the cursor goes back
  for (const s of v.kind === 'furnace' ? [] : [...v.grid, 0]) {
    const it = v.win.slots[s]
    if (!it) continue
    // window 0's grid is emptied (set_slot to the client); a closed table's window is simply dropped
    if (v.kind === 'inventory') v.win.updateSlot(s, null)
    else v.win.slots[s] = null
    if (s === 0) continue // the craft result is not an item yet
    moved.push(`${it.count} ${itemName(it)}`)
    giveOrDrop(player, it, `${why}: inventory full`)
  }
  if (cur) {
    moved.push(`cursor ${cur.count} ${itemName(cur)}`)
    if (CURSOR_ON_CLOSE === 'drop') dropItem(player, cur, `${why}: cursor`)
    else giveOrDrop(player, cur, `${why}: cursor, inventory full`)
  }
  if (moved.length) console.log(`[harness] ${player.username}: ${why}: returned ${moved.join(', ')}`)
  x.lastClose = { t: Date.now(), window: v.kind, why, returned: moved }
  return moved
}
function closeTable (player, why) {
  const x = extra.get(player)
  const t = x.table
  if (!t) return []
  containerToInventory(player, t)
  x.table = null
  if (player.customWindow === t.win) player.customWindow = undefined
  const moved = returnGrid(player, tableView(player, t), why)
  x.sent0 = [] // the client copied the table's inventory part into its own; resend what differs
  flushAll(player)
  return moved
}
function closeInventory (player, why) {
  const moved = returnGrid(player, inventoryView(player), why)
  flushAll(player)
  return moved
}
const invHasLoose = (player) => !!player.inventory.selectedItem || [1, 2, 3, 4].some(s => player.inventory.slots[s])

// ---- the crafting table, replacing flying-squid's (same packets, this file's matcher and rules) ----
function openCraftingTable ({ player }) {
  const x = extra.get(player)
  if (x.table) closeTable(player, 'table reopened')
  if (x.furnace) closeFurnace(player, 'crafting table opened')
  // vanilla has closed the player's own inventory (and emptied its 2x2 grid) before a table can open
  if (!player.customWindow && invHasLoose(player)) closeInventory(player, 'inventory closed (table opened)')
  const win = windows.createWindow(1, 'minecraft:crafting', 'Crafting')
  for (let s = 10; s < 46; s++) win.slots[s] = cloneItem(player.inventory.slots[s - 1])
  win.slots.forEach((it, s) => { if (it) it.slot = s })
  player.windowId = player.windowId === undefined || player.windowId >= 100 ? 1 : player.windowId + 1
  const t = { win, id: player.windowId, sent: win.slots.map(keyOf), shift: 1 }
  win.id = t.id
  x.table = t
  player.customWindow = win
  player._client.write('open_window', { windowId: t.id, inventoryType: win.type, windowTitle: JSON.stringify('Crafting') })
  player._client.write('window_items', { windowId: t.id, items: win.slots.map(it => Item.toNotch(it)) })
  x.sentCursor = ''
  flushCursor(player)
  return true // cancels the placement of the held block
}
serv.onBlockInteraction('crafting_table', openCraftingTable)

// =====================================================================================================
// Furnaces (vanilla 1.14 AbstractFurnaceTileEntity, FurnaceContainer, FurnaceResultSlot, FurnaceFuelSlot)
// =====================================================================================================
//
// flying-squid 0.0.49 has no furnace (a right click on one did nothing). Here a furnace's contents and fire
// belong to the block, keyed by its position, not to a player: they stay when the window closes and keep
// smelting while nobody looks (vanilla). A player digging the block drops them as item entities, whatever the
// tool (the harvest rule only decides about the furnace block itself). The setblock and excavate commands
// remove them without drops, as vanilla's `setblock ... replace` does.
//   - window: open_window type 13. 1.14's menu registry is generic_9x1..9x6 0-5, generic_3x3 6, anvil 7,
//     beacon 8, blast_furnace 9, brewing_stand 10, crafting 11, enchantment 12, furnace 13 (prismarine-windows
//     2.9.0 lists them in this order; the web client's mineflayer maps 13 back to 'minecraft:furnace', which
//     its inventoryWindows.ts draws as FurnaceWin). Title "Furnace", 39 slots: 0 input, 1 fuel, 2 result,
//     3-29 main inventory (window-0 slot 9+k <-> 3+k), 30-38 hotbar.
//   - properties (craft_progress_bar {windowId, property, value}): 0 fuel ticks left, 1 burn time of the
//     current fuel, 2 cook progress, 3 cook time (200). Sent on open, then every PROPERTY_EVERY ticks when
//     they changed (vanilla sends them every tick they change).
//   - a tick (flying-squid's, 20 per second): a burning furnace loses one fuel tick. When it is not burning
//     and can smelt (a smeltable input, and the result slot empty or the same item with room), one fuel item
//     is used up, so fuel never burns for nothing. While burning and able to smelt, the cook progress rises,
//     and at 200 one input item becomes one result. Burning with nothing to smelt resets the progress;
//     without fire it falls back by 2 per tick. A different item (or none) put into the input resets it at
//     once. Only furnaces with something to do are ticked: with none the tick returns at once.
//   - clicks: input and fuel are ordinary slots, but the fuel slot takes fuels (and an empty bucket) only.
//     The result slot only gives: left click the whole stack, right click half of it (rounded up) onto an
//     empty cursor; either button adds the whole stack to the same item on the cursor when all of it fits;
//     shift-click moves it into the inventory from the last hotbar slot backwards (vanilla's
//     mergeItemStack(3, 39, reverse)); a number key moves it into an empty hotbar slot; Q throws one (ctrl-Q
//     the stack). Every take is recorded in `smelted`. Shift-click from the inventory: a smeltable item goes
//     to the input only (a log too, although it burns; nothing moves when the input holds another item),
//     else a fuel to the fuel slot, else main <-> hotbar. Shift-click on the input or fuel: into the
//     inventory, main first.
//   - the block's `lit` state follows the fire (the client draws the burning front).
// minecraft-data 1.14.4 has no furnace recipes (its recipes.json holds crafting only), hence the tables
// below, from 1.14's smelting recipes and AbstractFurnaceTileEntity.getBurnTimes. No XP is given.
const COOK_TICKS = 200
const PROPERTY_EVERY = 5 // ticks between window-property updates: 4 per second
const WOODS = '(oak|spruce|birch|jungle|acacia|dark_oak)'
const SMELT_NAMES = new Map(Object.entries({
  iron_ore: 'iron_ingot',
  gold_ore: 'gold_ingot',
  diamond_ore: 'diamond',
  emerald_ore: 'emerald',
  lapis_ore: 'lapis_lazuli',
  redstone_ore: 'redstone',
  coal_ore: 'coal',
  nether_quartz_ore: 'quartz',
  cobblestone: 'stone',
  stone: 'smooth_stone',
  sand: 'glass',
  red_sand: 'glass',
  clay_ball: 'brick',
  clay: 'terracotta',
  netherrack: 'nether_brick',
  stone_bricks: 'cracked_stone_bricks',
  sandstone: 'smooth_sandstone',
  red_sandstone: 'smooth_red_sandstone',
  quartz_block: 'smooth_quartz',
  cactus: 'green_dye',
  sea_pickle: 'lime_dye',
  kelp: 'dried_kelp',
  wet_sponge: 'sponge',
  chorus_fruit: 'popped_chorus_fruit',
  beef: 'cooked_beef',
  porkchop: 'cooked_porkchop',
  chicken: 'cooked_chicken',
  mutton: 'cooked_mutton',
  rabbit: 'cooked_rabbit',
  cod: 'cooked_cod',
  salmon: 'cooked_salmon',
  potato: 'baked_potato'
}))
const SMELT_PATTERNS = [
  [/_(log|wood)$/, () => 'charcoal'], // every log and wood block, stripped too (the #logs tag)
  [/^(white|orange|magenta|light_blue|yellow|lime|pink|gray|light_gray|cyan|purple|blue|brown|green|red|black)_terracotta$/, (n) => n.replace(/_terracotta$/, '_glazed_terracotta')],
  [/^(iron|chainmail)_(pickaxe|shovel|axe|hoe|sword|helmet|chestplate|leggings|boots|horse_armor)$/, () => 'iron_nugget'],
  [/^golden_(pickaxe|shovel|axe|hoe|sword|helmet|chestplate|leggings|boots|horse_armor)$/, () => 'gold_nugget']
]
const FUEL_NAMES = new Map(Object.entries({
  lava_bucket: 20000,
  coal_block: 16000,
  dried_kelp_block: 4001,
  blaze_rod: 2400,
  coal: 1600,
  charcoal: 1600,
  scaffolding: 400,
  note_block: 300,
  bookshelf: 300,
  lectern: 300,
  jukebox: 300,
  chest: 300,
  trapped_chest: 300,
  crafting_table: 300,
  daylight_detector: 300,
  bow: 300,
  crossbow: 300,
  fishing_rod: 300,
  ladder: 300,
  loom: 300,
  barrel: 300,
  cartography_table: 300,
  fletching_table: 300,
  smithing_table: 300,
  composter: 300,
  wooden_pickaxe: 200,
  wooden_shovel: 200,
  wooden_axe: 200,
  wooden_hoe: 200,
  wooden_sword: 200,
  stick: 100,
  bowl: 100,
  dead_bush: 100,
  bamboo: 50
}))
const FUEL_PATTERNS = [
  [/_(log|wood)$/, 300],
  [new RegExp(`^${WOODS}_(planks|stairs|trapdoor|pressure_plate|fence|fence_gate)$`), 300],
  [new RegExp(`^${WOODS}_slab$`), 150],
  [new RegExp(`^${WOODS}_(sign|door)$`), 200],
  [new RegExp(`^${WOODS}_boat$`), 1200],
  [new RegExp(`^${WOODS}_(button|sapling)$`), 100],
  [/_banner$/, 300],
  [/_wool$/, 100],
  [/_carpet$/, 67]
]
// item id -> result item id / burn ticks, for the items this version has
const SMELT_BY_ID = new Map()
const FUEL_BY_ID = new Map()
for (const it of mcData.itemsArray) {
  const out = SMELT_NAMES.get(it.name) ?? SMELT_PATTERNS.find(([re]) => re.test(it.name))?.[1](it.name)
  if (out && mcData.itemsByName[out]) SMELT_BY_ID.set(it.id, mcData.itemsByName[out].id)
  const ticks = FUEL_NAMES.get(it.name) ?? FUEL_PATTERNS.find(([re]) => re.test(it.name))?.[1]
  if (ticks) FUEL_BY_ID.set(it.id, ticks)
}
const smeltResult = (it) => (it ? SMELT_BY_ID.get(it.type) ?? null : null) // result item id or null
const fuelTicks = (it) => (it ? FUEL_BY_ID.get(it.type) ?? 0 : 0)

// ---- furnace state, per block ----
// { world, pos, slots: [input, fuel, result], burn (fuel ticks left), burnTotal, cook, viewers: Set(player) }
// Only the overworld is used by the harness, so the position alone is the key.
const furnaces = new Map()
const activeFurnaces = new Set() // the furnaces the tick has work for
const furnaceKey = (pos) => `${pos.x},${pos.y},${pos.z}`
function furnaceAt (world, pos) {
  const k = furnaceKey(pos)
  let f = furnaces.get(k)
  if (!f) {
    f = { world, pos: new Vec3(pos.x, pos.y, pos.z), slots: [null, null, null], burn: 0, burnTotal: 0, cook: 0, viewers: new Set() }
    furnaces.set(k, f)
  }
  return f
}
function furnaceInfo (f) {
  const slots = []
  f.slots.forEach((it, slot) => { if (it) slots.push({ slot, name: itemName(it), count: it.count }) })
  return { pos: { x: f.pos.x, y: f.pos.y, z: f.pos.z }, slots, burn: f.burn, burnTotal: f.burnTotal, cook: f.cook, cookTotal: COOK_TICKS, burning: f.burn > 0 }
}
// the item id one smelt makes now, or null when the furnace cannot smelt (vanilla canSmelt)
function smeltOutput (f) {
  const out = smeltResult(f.slots[0])
  if (out === null) return null
  const res = f.slots[2]
  if (!res) return out
  return res.type === out && res.count < (res.stackSize || 64) ? out : null
}
const fewer = (it, n = 1) => (it.count > n ? new Item(it.type, it.count - n, it.metadata, it.nbt) : null)
// one tick of AbstractFurnaceTileEntity.tick; true when a slot changed
function furnaceTick (f) {
  const wasBurning = f.burn > 0
  let changed = false
  if (f.burn > 0) f.burn--
  if (f.burn > 0 || (f.slots[1] && f.slots[0])) {
    const out = smeltOutput(f)
    if (f.burn === 0 && out !== null && fuelTicks(f.slots[1]) > 0) {
      const fuel = f.slots[1]
      f.burn = f.burnTotal = fuelTicks(fuel)
      // a lava bucket leaves its bucket (vanilla getContainerItem)
      f.slots[1] = fewer(fuel) || (itemName(fuel) === 'lava_bucket' ? new Item(mcData.itemsByName.bucket.id, 1) : null)
      changed = true
    }
    if (f.burn > 0 && out !== null) {
      if (++f.cook >= COOK_TICKS) {
        f.cook = 0
        f.slots[0] = fewer(f.slots[0])
        f.slots[2] = new Item(out, (f.slots[2]?.count || 0) + 1)
        changed = true
      }
    } else f.cook = 0
  } else if (f.cook > 0) f.cook = Math.max(0, f.cook - 2)
  if (wasBurning !== f.burn > 0) setLit(f, f.burn > 0)
  return changed
}
// the block's lit state (the burning front the client draws), its facing kept
async function setLit (f, lit) {
  try {
    const b = await f.world.getBlock(f.pos)
    if (b?.name !== 'furnace' || b.getProperties().lit === lit) return
    await serv.setBlock(f.world, f.pos, Block.fromProperties(b.type, { ...b.getProperties(), lit }, 0).stateId)
  } catch (e) { console.error('[harness] furnace lit state failed', e.message) }
}
let furnaceTickCount = 0
serv.on('tick', () => {
  if (!activeFurnaces.size) return // nothing burns or cooks: no work
  furnaceTickCount++
  for (const f of activeFurnaces) {
    let changed = false
    try { changed = furnaceTick(f) } catch (e) { console.error('[harness] furnace tick failed', e) }
    const idle = f.burn === 0 && f.cook === 0 // the next tick would do nothing until a slot changes
    if (idle) activeFurnaces.delete(f)
    if (changed) showFurnace(f)
    if (changed || idle || furnaceTickCount % PROPERTY_EVERY === 0) for (const p of f.viewers) flushFurnaceProps(p)
  }
})

// ---- furnace windows ----
// the furnace's slots into the windows of the players looking at it (but `except`), and sent
function showFurnace (f, except) {
  for (const p of f.viewers) {
    const fw = extra.get(p)?.furnace
    if (p === except || !fw || fw.f !== f) continue
    for (let s = 0; s < 3; s++) {
      if (keyOf(fw.win.slots[s]) === keyOf(f.slots[s])) continue
      const it = cloneItem(f.slots[s])
      if (it) it.slot = s
      fw.win.slots[s] = it
    }
    flushContainer(p)
  }
}
// after a click: the window's slots 0-2 become the furnace's (another input item resets the progress)
function furnaceFromWindow (player, fw) {
  const f = fw.f
  let changed = false
  for (let s = 0; s < 3; s++) {
    const it = fw.win.slots[s]
    if (keyOf(it) === keyOf(f.slots[s])) continue
    if (s === 0 && !sameKind(it, f.slots[0])) f.cook = 0
    f.slots[s] = cloneItem(it)
    changed = true
  }
  if (changed) {
    activeFurnaces.add(f)
    showFurnace(f, player)
  }
}
function flushFurnaceProps (player, force = false) {
  const fw = extra.get(player)?.furnace
  if (!fw) return
  const f = fw.f
  ;[f.burn, f.burnTotal, f.cook, COOK_TICKS].forEach((value, property) => {
    if (!force && fw.props[property] === value) return
    fw.props[property] = value
    player._client.write('craft_progress_bar', { windowId: fw.id, property, value })
  })
}
// may this click put its item into the fuel slot? (FurnaceFuelSlot.isItemValid: fuels and an empty bucket)
function fuelSlotAccepts (v, click) {
  const incoming = click.mode === 0 ? v.win.selectedItem : click.mode === 2 ? v.win.slots[v.hotbar[0] + click.mouseButton] : null
  return !incoming || fuelTicks(incoming) > 0 || itemName(incoming) === 'bucket'
}
// the result slot only gives (FurnaceResultSlot; Container.slotClick's rules for a slot nothing may go into)
function furnaceResultClick (player, v, click) {
  const win = v.win
  const res = win.slots[2]
  if (!res) return
  const take = (n) => { win.updateSlot(2, fewer(res, n)); return new Item(res.type, n, res.metadata, res.nbt) }
  switch (click.mode) {
    case 0: { // left: the whole stack, right: half (rounded up) onto an empty cursor; all of it onto the same item
      const cur = win.selectedItem
      if (!cur) win.selectedItem = take(click.mouseButton === 1 ? Math.ceil(res.count / 2) : res.count)
      else if (sameKind(cur, res) && cur.count + res.count <= (cur.stackSize || 64)) {
        take(res.count)
        win.selectedItem = new Item(cur.type, cur.count + res.count, cur.metadata, cur.nbt)
      }
      return
    }
    case 1: { // shift-click: into the inventory, last hotbar slot first
      const left = mergeInto(win, cloneItem(res), range(v.inv[0], v.inv[1]).reverse())
      if (left !== res.count) win.updateSlot(2, left ? new Item(res.type, left, res.metadata, res.nbt) : null)
      return
    }
    case 2: { // number key: into that hotbar slot when it is empty
      const hb = v.hotbar[0] + click.mouseButton
      if (click.mouseButton >= 0 && click.mouseButton < 9 && !win.slots[hb]) win.updateSlot(hb, take(res.count))
      return
    }
    case 4: { // Q: one item thrown (ctrl-Q: the stack)
      if (!win.selectedItem) dropItem(player, take(click.mouseButton === 1 ? res.count : 1), 'Q on the furnace result')
    }
  }
}
// what a click took from the result slot, recorded like a craft
function recordSmelted (player, before, after) {
  const n = before.count - (after && sameKind(after, before) ? after.count : 0)
  if (n <= 0) return
  const x = extra.get(player)
  x.smelted.push({ name: itemName(before), count: n, via: 'furnace', t: Date.now() })
  if (x.smelted.length > 50) x.smelted.splice(0, x.smelted.length - 50)
}
function openFurnace ({ player, block }) {
  const x = extra.get(player)
  if (x.table) closeTable(player, 'furnace opened')
  if (x.furnace) closeFurnace(player, 'furnace reopened')
  // vanilla has closed the player's own inventory (and emptied its 2x2 grid) before a furnace can open
  if (!player.customWindow && invHasLoose(player)) closeInventory(player, 'inventory closed (furnace opened)')
  const f = furnaceAt(player.world, block.position)
  const win = windows.createWindow(1, 'minecraft:furnace', 'Furnace')
  for (let s = 0; s < 3; s++) win.slots[s] = cloneItem(f.slots[s])
  for (let s = 3; s < 39; s++) win.slots[s] = cloneItem(player.inventory.slots[s + 6])
  win.slots.forEach((it, s) => { if (it) it.slot = s })
  player.windowId = player.windowId === undefined || player.windowId >= 100 ? 1 : player.windowId + 1
  const fw = { win, id: player.windowId, sent: win.slots.map(keyOf), shift: -6, f, props: [] }
  win.id = fw.id
  x.furnace = fw
  f.viewers.add(player)
  player.customWindow = win
  player._client.write('open_window', { windowId: fw.id, inventoryType: win.type, windowTitle: JSON.stringify('Furnace') })
  player._client.write('window_items', { windowId: fw.id, items: win.slots.map(it => Item.toNotch(it)) })
  x.sentCursor = ''
  flushCursor(player)
  flushFurnaceProps(player, true)
  return true // cancels the placement of the held block
}
serv.onBlockInteraction('furnace', openFurnace)
// the furnace keeps its slots; the cursor goes back to the player (as for the table)
function closeFurnace (player, why) {
  const x = extra.get(player)
  const fw = x.furnace
  if (!fw) return []
  containerToInventory(player, fw)
  x.furnace = null
  fw.f.viewers.delete(player)
  if (player.customWindow === fw.win) player.customWindow = undefined
  const moved = returnGrid(player, furnaceView(player, fw), why)
  x.sent0 = [] // the client copied the window's inventory part into its own; resend what differs
  flushAll(player)
  return moved
}
// The block is gone: its viewers' windows close (vanilla: the container is no longer usable), and the
// contents are dropped at the block (dug) or vanish (replaced by a command, as vanilla's setblock replace).
function removeFurnace (f, why, drop) {
  furnaces.delete(furnaceKey(f.pos))
  activeFurnaces.delete(f)
  for (const p of [...f.viewers]) {
    const fw = extra.get(p)?.furnace
    if (fw?.f === f) {
      p._client.write('close_window', { windowId: fw.id })
      closeFurnace(p, why)
    }
    f.viewers.delete(p)
  }
  const what = f.slots.filter(Boolean).map(it => `${it.count} ${itemName(it)}`)
  if (drop) {
    for (const it of f.slots) {
      if (!it) continue
      serv.spawnObject(ITEM_ENTITY, f.world, f.pos.offset(0.5, 0.5, 0.5), {
        velocity: new Vec3(Math.random() * 2 - 1, 2, Math.random() * 2 - 1),
        itemId: it.type,
        itemDamage: it.metadata || 0,
        itemCount: it.count,
        pickupTime: 500,
        deathTime: 5 * 60 * 1000
      })
    }
  }
  if (what.length) console.log(`[harness] furnace at ${furnaceKey(f.pos)} ${why}: ${drop ? 'dropped' : 'removed'} ${what.join(', ')}`)
}
function forgetFurnace (pos, why) {
  const f = furnaces.get(furnaceKey(pos))
  if (f) removeFurnace(f, why, false)
}
function setupFurnace (player, x) {
  // digging a furnace drops its contents, whatever the tool
  player.on('dug', (data) => {
    if (data.block?.name !== 'furnace' || !data.position) return
    const f = furnaces.get(furnaceKey(data.position))
    if (f) removeFurnace(f, `dug by ${player.username}`, true)
  })
  player._client.on('end', () => {
    if (x.furnace) x.furnace.f.viewers.delete(player)
    x.furnace = null
  })
}

function setupCrafting (player, x) {
  const c = player._client
  // flying-squid's window_click listeners (inventory.js) stay, but only for the clicks this file does not
  // handle itself; they are detached here and called from the dispatcher below.
  const fsClick = c.listeners('window_click')
  fsClick.forEach(l => c.removeListener('window_click', l))
  c.on('window_click', (click) => {
    const v = clickView(player)
    // The web client moves items in its own view before the server answers (prismarine-windows'
    // shift-click put a crafting table nowhere when the hotbar was full). Vanilla answers a click
    // whose outcome differs from the client's with a rejected transaction and the whole window
    // again; this server sends no transactions, so it sends the window again after every click.
    if (process.env.MC_LOG_CLICKS) {
      console.log(`[harness] window_click window ${click.windowId} slot ${click.slot} button ${click.mouseButton} mode ${click.mode}`)
    }
    const x = extra.get(player)
    x.sent0 = []
    x.sentCursor = undefined
    if (openOf(x)) openOf(x).sent = []
    const furnaceResult = v?.kind === 'furnace' ? cloneItem(v.win.slots[2]) : null // to record what is taken
    if (v && click.windowId !== v.id) {
      // a click for a window that is no longer open (vanilla ignores these too)
    } else if (v && click.slot === v.result) {
      try {
        if (v.kind === 'furnace') furnaceResultClick(player, v, click)
        else resultClick(player, v, click)
      } catch (e) { console.error('[harness] result click failed', e) }
    } else if (v?.kind === 'furnace' && click.slot === 1 && !fuelSlotAccepts(v, click)) {
      // the fuel slot takes fuel only (vanilla FurnaceFuelSlot): the click leaves everything as it was
    } else if (v && click.mode === 1 && click.slot >= 0 && click.slot < v.win.slots.length) {
      try { shiftClick(player, v, click.slot) } catch (e) { console.error('[harness] shift-click failed', e) }
    } else if (v && click.slot === -999 && (click.mode === 0 || click.mode === 4)) {
      // outside the window: mode 0 throws the cursor stack (right button: one item); mode 4 there is a no-op.
      // (prismarine-windows just deleted the cursor item)
      const cur = v.win.selectedItem
      if (click.mode === 0 && cur) {
        const n = click.mouseButton === 1 ? 1 : cur.count
        v.win.selectedItem = cur.count > n ? new Item(cur.type, cur.count - n, cur.metadata, cur.nbt) : null
        dropItem(player, new Item(cur.type, n, cur.metadata, cur.nbt), 'clicked outside the window')
      }
    } else if (v && click.mode === 4 && click.slot >= 0 && click.slot < v.win.slots.length) {
      // Q over a slot with an empty cursor throws one item of it (ctrl-Q, button 1: the stack). flying-squid
      // threw the held hotbar item instead, with no count.
      const it = v.win.slots[click.slot]
      if (it && !v.win.selectedItem) {
        const n = click.mouseButton === 1 ? it.count : 1
        v.win.updateSlot(click.slot, it.count > n ? new Item(it.type, it.count - n, it.metadata, it.nbt) : null)
        dropItem(player, new Item(it.type, n, it.metadata, it.nbt), 'Q over a slot')
      }
    } else {
      for (const l of fsClick) l.call(c, click)
    }
    const after = clickView(player)
    if (after) {
      if (after.grid.length) {
        try { updateResult(after) } catch (e) { console.error('[harness] recipe failed', e) }
      }
      if (after.open) containerToInventory(player, after.open)
      if (after.kind === 'furnace') {
        if (furnaceResult && click.slot === 2) recordSmelted(player, furnaceResult, after.win.slots[2])
        furnaceFromWindow(player, after.fw)
      }
    }
    flushAll(player)
  })
  // An attack on an entity id the server does not have (an item picked up a moment before the click: the web
  // client aims at dropped items, vanilla's does not) took the whole server down in a cobblestone dig:
  // flying-squid's pvp.js reads the entity's type before it checks that the entity is there. Vanilla ignores
  // such ids; flying-squid's use_entity listeners are detached and called for the others only.
  const fsUse = c.listeners('use_entity')
  fsUse.forEach(l => c.removeListener('use_entity', l))
  c.on('use_entity', (packet = {}) => {
    if (packet.mouse === 1 && !serv.entities[packet.target]) {
      console.log(`[harness] attack on entity ${packet.target}, which is not there: ignored`)
      return
    }
    for (const l of fsUse) l.call(c, packet)
  })
  // sync barrier: the client answers a transaction it did not ask for at once, after every packet before it
  c.on('transaction', ({ action } = {}) => {
    const done = x.syncWaiters?.get(action)
    if (done) { x.syncWaiters.delete(action); done(true) }
  })
  // The client confirms a teleport once it stands there (under load it can answer the next one first).
  c.on('teleport_confirm', ({ teleportId: id } = {}) => {
    x.teleportConfirmed = Math.max(x.teleportConfirmed || 0, id)
    if (x.groundAfter && id >= x.groundAfter) {
      const mine = x.groundAfter
      setTimeout(() => { if (x.groundAfter === mine) { x.groundAfter = 0; if (player.flying === 2) player.flying = 0 } }, 1000)
    }
  })
  // flying-squid's own close_window listener (runs first) forgets customWindow; this one empties the grid
  // (a furnace keeps its slots; only the cursor goes back).
  c.on('close_window', ({ windowId } = {}) => {
    x.window = null
    if (x.table) closeTable(player, `close_window ${windowId}`)
    else if (x.furnace) closeFurnace(player, `close_window ${windowId}`)
    else closeInventory(player, `close_window ${windowId}`)
  })
  // The web client's E inventory closes without a packet; the first swing/dig/place/use after it proves it
  // closed (none of them can be done with a GUI open), so the 2x2 grid and the cursor go back then.
  if (IMPLICIT_INV_CLOSE) {
    for (const name of ['arm_animation', 'block_dig', 'block_place', 'use_item', 'use_entity']) {
      c.prependListener(name, () => {
        if (!player.customWindow && invHasLoose(player)) closeInventory(player, `inventory closed (implicit: ${name})`)
      })
    }
  }
  // record what flying-squid's own inventory listener sent; mirror server-side changes into an open table
  // or furnace window
  player.inventory.on('updateSlot', (slot, oldItem, newItem) => {
    if (!player.customWindow) x.sent0[slot] = keyOf(newItem)
    const t = openOf(x)
    if (t && !x.syncing && slot >= 9 && slot < 45 && player.customWindow === t.win) {
      const it = cloneItem(newItem)
      if (it) it.slot = slot + t.shift
      t.win.slots[slot + t.shift] = it
      flushContainer(player)
    }
  })
  // picked-up items: whole count, inventory slots only (flying-squid added 1 per entity, grid/armor included)
  player.collect = (entity) => {
    if (!entity.itemId) return
    const count = entity.itemCount || 1
    const left = addToInventory(player, new Item(entity.itemId, count, entity.itemDamage || 0))
    if (left === count) return
    const packet = { collectedEntityId: entity.id, collectorEntityId: player.id, pickupItemCount: count - left }
    const to = entity.getNearbyPlayers?.() || [] // the item's nearby players (the collector included)
    if (!to.includes(player)) to.push(player)
    for (const q of to) q._client.write('collect', packet)
    player.playSoundAtSelf?.('random.pop')
    if (left) {
      entity.itemCount = left
      const meta = entity.metadata?.find(m => m.type === 6)
      if (meta) meta.value = { ...meta.value, itemCount: left }
      entity.sendMetadata?.(entity.metadata)
    } else entity.destroy()
    flushAll(player)
  }
}

const round = (v, n = 3) => Math.round(v * 10 ** n) / 10 ** n
function playerState (p) {
  const x = extra.get(p) || {}
  const slots = []
  ;(p.inventory?.slots || []).forEach((it, slot) => { if (it) slots.push({ slot, name: it.name, count: it.count }) })
  const o = openOf(x)
  const cursor = o ? o.win.selectedItem : p.inventory?.selectedItem
  let window = x.window || null
  if (window && x.table && window.id === x.table.id) {
    const ws = []
    x.table.win.slots.slice(0, 10).forEach((it, slot) => { if (it) ws.push({ slot, name: it.name, count: it.count }) })
    window = { ...window, kind: 'crafting_table', slots: ws } // 0 result, 1-9 grid (window numbering); the rest mirrors `inventory`
  } else if (window && x.furnace && window.id === x.furnace.id) {
    // 0 input, 1 fuel, 2 result (the block's own slots), fuel and cook progress in ticks
    window = { ...window, kind: 'furnace', ...furnaceInfo(x.furnace.f) }
  }
  return {
    name: p.username,
    gameMode: p.gameMode,
    pos: p.position ? { x: round(p.position.x), y: round(p.position.y), z: round(p.position.z) } : null,
    yaw: round(x.yaw ?? 0, 2), // degrees, as sent by the client (0 = +z/south, 90 = -x/west)
    pitch: round(x.pitch ?? 0, 2), // degrees, -90 up .. 90 down
    onGround: p.onGround,
    teleportPending: (x.teleport || 0) > (x.teleportConfirmed || 0), // the client has not confirmed the last tp yet
    health: p.health,
    food: p.food,
    heldHotbar: p.heldItemSlot, // 0..8 ; inventory slot = 36 + heldHotbar
    inventory: slots, // window-0 slot numbers: 0 craft result, 1-4 craft grid, 5-8 armor, 9-35 main, 36-44 hotbar, 45 offhand
    window, // only server-opened windows (crafting table, furnace, chest); the E inventory is client-side
    cursor: cursor ? { name: cursor.name, count: cursor.count } : null, // server-side carried item
    crafted: (x.crafted || []).slice(-20), // recent crafts [{name,count,via:'inventory'|'crafting_table',t}]
    smelted: (x.smelted || []).slice(-20), // furnace results taken [{name,count,via:'furnace',t}]
    lastClose: x.lastClose || null // {t, window, why, returned:[...]} of the last grid emptying
  }
}
function fullState () {
  return { t: Date.now(), version: VERSION, players: (serv.players || []).map(playerState) }
}
setInterval(() => {
  try {
    const tmp = STATE_FILE + '.tmp'
    fs.writeFileSync(tmp, JSON.stringify(fullState(), null, 1))
    fs.renameSync(tmp, STATE_FILE)
  } catch (e) { console.error('[harness] state write failed', e.message) }
}, STATE_INTERVAL_MS)

// Resolves true once the client has handled every packet sent to it before this call (it answers an
// unasked-for window transaction in order, as vanilla does), false after timeoutMs.
let syncId = 30000
function syncClient (p, timeoutMs = 5000) {
  const x = extra.get(p)
  if (!x) return Promise.resolve(false)
  x.syncWaiters ||= new Map()
  const id = syncId = syncId >= 32000 ? 30000 : syncId + 1
  return new Promise(resolve => {
    const timer = setTimeout(() => { x.syncWaiters.delete(id); resolve(false) }, timeoutMs)
    x.syncWaiters.set(id, (ok) => { clearTimeout(timer); resolve(ok) })
    p._client.write('transaction', { windowId: 0, action: id, accepted: false })
  })
}

// ---- commands ----
const findPlayer = (name) => {
  const ps = serv.players || []
  const p = name ? ps.find(p => p.username === name) : ps[0]
  if (!p) throw new Error(`player ${name || '(any)'} not online`)
  return p
}
const blockState = (name) => {
  const b = mcData.blocksByName[String(name).replace(/^minecraft:/, '')]
  if (!b) throw new Error(`unknown block ${name}`)
  return b
}
let teleportId = 100
async function teleport (p, x, y, z, yaw, pitch) {
  const pos = new Vec3(+x, +y, +z)
  const look = extra.get(p) || {}
  let yw = yaw === undefined ? (look.yaw ?? 0) : +yaw
  let pt = pitch === undefined ? (look.pitch ?? 0) : +pitch
  // The client's mineflayer fork treats a yaw/pitch of exactly 0 rad as "no cursor" (blockAtCursor -> null,
  // so nothing can be dug/used). Notchian yaw 180 (north) and pitch 0 map to exactly 0 rad: nudge them.
  if (((yw % 360) + 360) % 360 === 180) yw += 0.01
  if (pt === 0) pt = 0.01
  await p.sendPosition(pos, false, true)
  p._client.write('position', { x: pos.x, y: pos.y, z: pos.z, yaw: yw, pitch: pt, flags: 0, teleportId: ++teleportId })
  if (look) { look.yaw = yw; look.pitch = pt; look.teleport = teleportId }
  // No fall damage for a teleport: flying-squid measures a fall from the highest point an entity had off the
  // ground, and a teleport down a hillside (or the client's old position reported after it) counted as one
  // (labelling frames died of it). Its fall tracking skips a flying player; the flag goes once the client has
  // confirmed the teleport and stood a second.
  p.flying = 2
  look.groundAfter = teleportId
  p.emit('move')
  return { ok: true, pos, yaw: yw, pitch: pt }
}

// ---- face_block: a standable spot in reach of a block, looking at its centre ----
const EYE = 1.62 // standing eye height (1.14)
const stateInfo = new Map() // stateId -> { air, full }
function infoOf (id) {
  let i = stateInfo.get(id)
  if (!i) {
    const b = Block.fromStateId(id, 0)
    const name = b?.name
    const sh = b?.shapes || []
    i = {
      air: name === 'air' || name === 'cave_air' || name === 'void_air',
      full: sh.length === 1 && sh[0].join(',') === '0,0,0,1,1,1' // a full cube to stand on
    }
    stateInfo.set(id, i)
  }
  return i
}
function seededRandom (seed) {
  let a = Number.isFinite(+seed) ? (+seed >>> 0) : [...String(seed)].reduce((h, ch) => Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0, 2166136261)
  return () => { // mulberry32
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
// The block state ids of a box (sx x sx columns from x0, z0; sy levels from y0) read once, column by
// column: a ray march asks for thousands of blocks, which the world's async getters make slow.
// idAt answers -1 outside the box.
async function loadRegion (p, x0, z0, y0, sx, sy) {
  const ids = new Int32Array(sx * sx * sy).fill(-1)
  const local = new Vec3(0, 0, 0)
  for (let cx = Math.floor(x0 / 16); cx <= Math.floor((x0 + sx - 1) / 16); cx++) {
    for (let cz = Math.floor(z0 / 16); cz <= Math.floor((z0 + sx - 1) / 16); cz++) {
      const col = await p.world.getColumn(cx, cz)
      if (!col) continue
      for (let bx = Math.max(x0, cx * 16); bx < Math.min(x0 + sx, cx * 16 + 16); bx++) {
        for (let bz = Math.max(z0, cz * 16); bz < Math.min(z0 + sx, cz * 16 + 16); bz++) {
          for (let by = y0; by < y0 + sy; by++) {
            local.set(bx & 15, by, bz & 15)
            ids[((bx - x0) * sx + (bz - z0)) * sy + (by - y0)] = col.getBlockStateId(local)
          }
        }
      }
    }
  }
  return (bx, by, bz) => {
    const i = bx - x0; const k = bz - z0; const j = by - y0
    if (i < 0 || k < 0 || j < 0 || i >= sx || k >= sx || j >= sy) return -1
    return ids[(i * sx + k) * sy + j]
  }
}

// levels (optional): the heights of the block above the spot's floor it may be seen at, e.g. [0, 1]
// for a log at the feet or at the eyes (a trunk the player can walk up to and chop at its foot).
async function faceBlock ({ player, blocks, seed = 0, min_dist: minD = 2.5, max_dist: maxD = 4.5, radius = 24, reach = 4.5, levels, x, y, z, yaw_jitter: yawJ = 0, pitch_jitter: pitchJ = 0, pitch_offset: pitchOff = 0 }) {
  const p = findPlayer(player)
  minD = +minD; maxD = +maxD; reach = +reach
  let names = blocks
  if (typeof names === 'string') names = names.split(',').map(s => s.trim()).filter(Boolean)
  if (!names || !names.length) names = mcData.blocksArray.filter(b => /_log$/.test(b.name)).map(b => b.name)
  // '*_log': every block whose name ends so
  const targets = names.flatMap(n => String(n).startsWith('*') ? mcData.blocksArray.filter(b => b.name.endsWith(String(n).slice(1))) : [blockState(n)])
  if (!targets.length) throw new Error(`face_block: no block is named like ${names.join(',')}`)
  const isTarget = (id) => targets.some(b => id >= b.minStateId && id <= b.maxStateId)
  const centre = (x !== undefined ? new Vec3(+x, +(y ?? p.position.y), +z) : (p.spawnPoint || p.position)).floored()
  const r = Math.max(1, Math.min(+radius, 48))
  const pad = Math.ceil(maxD) + 2
  const x0 = centre.x - r - pad; const z0 = centre.z - r - pad
  const y0 = Math.max(0, centre.y - 24 - 6); const y1 = Math.min(255, centre.y + 24 + 6)
  const sx = 2 * (r + pad) + 1; const sy = y1 - y0 + 1
  const idAt = await loadRegion(p, x0, z0, y0, sx, sy)
  const air = (bx, by, bz) => { const id = idAt(bx, by, bz); return id >= 0 && infoOf(id).air }
  const full = (bx, by, bz) => { const id = idAt(bx, by, bz); return id >= 0 && infoOf(id).full }
  const candidates = []
  for (let bx = centre.x - r; bx <= centre.x + r; bx++) {
    for (let bz = centre.z - r; bz <= centre.z + r; bz++) {
      for (let by = Math.max(y0, centre.y - 24); by <= Math.min(y1, centre.y + 24); by++) {
        if (isTarget(idAt(bx, by, bz))) candidates.push([bx, by, bz])
      }
    }
  }
  const spotsFor = ([bx, by, bz]) => {
    const out = []
    const cx = bx + 0.5; const cy = by + 0.5; const cz = bz + 0.5
    const R = Math.ceil(maxD)
    for (let fx = bx - R; fx <= bx + R; fx++) {
      for (let fz = bz - R; fz <= bz + R; fz++) {
        const h = Math.hypot(fx + 0.5 - cx, fz + 0.5 - cz)
        if (h < minD || h > maxD) continue
        for (let fy = by - 4; fy <= by + 2; fy++) {
          if (Array.isArray(levels) && !levels.map(Number).includes(by - fy)) continue
          if (!full(fx, fy - 1, fz) || !air(fx, fy, fz) || !air(fx, fy + 1, fz)) continue
          const ex = fx + 0.5; const ey = fy + EYE; const ez = fz + 0.5
          const d = Math.hypot(cx - ex, cy - ey, cz - ez)
          if (d > reach) continue
          // ray march from the eye to the block centre: every cell before the target must be air
          let clear = true
          const steps = Math.ceil(d / 0.05)
          for (let i = 1; i <= steps; i++) {
            const f = i / steps
            const qx = Math.floor(ex + (cx - ex) * f); const qy = Math.floor(ey + (cy - ey) * f); const qz = Math.floor(ez + (cz - ez) * f)
            if (qx === bx && qy === by && qz === bz) break
            if (!air(qx, qy, qz)) { clear = false; break }
          }
          if (clear) out.push({ fx, fy, fz, h, d })
        }
      }
    }
    return out
  }
  const rnd = seededRandom(seed)
  const order = candidates.map((_, i) => i)
  for (let i = order.length - 1; i > 0; i--) { const j = Math.floor(rnd() * (i + 1)); [order[i], order[j]] = [order[j], order[i]] }
  for (const i of order) {
    const b = candidates[i]
    const spots = spotsFor(b)
    if (!spots.length) continue
    const s = spots[Math.floor(rnd() * spots.length)]
    const ex = s.fx + 0.5; const ey = s.fy + EYE; const ez = s.fz + 0.5
    const dx = b[0] + 0.5 - ex; const dy = b[1] + 0.5 - ey; const dz = b[2] + 0.5 - ez
    // jitter (degrees, uniform in +-J) and an offset further down: the labeller's varied views
    const jit = (j) => (+j ? (rnd() * 2 - 1) * +j : 0)
    const yaw = round(((Math.atan2(-dx, dz) * 180 / Math.PI + jit(yawJ)) + 720) % 360, 3) // 0 = +z (south), 90 = -x (west)
    const pitch = round(Math.max(-80, Math.min(80, -Math.atan2(dy, Math.hypot(dx, dz)) * 180 / Math.PI + jit(pitchJ) + +pitchOff)), 3) // + = down
    const tp = await teleport(p, ex, s.fy, ez, yaw, pitch)
    // A scene starts whole: teleports add up fall damage in the client's physics, and a dead player labels nothing.
    if (p.health < 20) p.updateHealth?.(20)
    if (p.food < 20) p.updateFood?.(20)
    const name = mcData.blocksByStateId[idAt(...b)]?.name
    return {
      block: { x: b[0], y: b[1], z: b[2], name },
      player: { x: ex, y: s.fy, z: ez, yaw: tp.yaw, pitch: tp.pitch },
      dist: { horizontal: round(s.h), eye: round(s.d) },
      candidates: candidates.length
    }
  }
  throw new Error(`face_block: none of ${candidates.length} ${names.length > 3 ? names.slice(0, 3).join(',') + ',...' : names.join(',')} ` +
    `blocks within ${r} of (${centre.x},${centre.y},${centre.z}) has a standable spot (full block below, two air above) ` +
    `at horizontal distance ${minD}..${maxD}, eye distance <= ${reach}, with a clear line of sight`)
}

// ---- scan: what of the given blocks the eye sees, for labelling frames ----
// A block that hides what is behind it: a full cube that is not see-through (glass, ice), and leaves,
// which the client draws nearly opaque.
const hidesInfo = new Map()
function hides (id) {
  if (id < 0) return false
  let h = hidesInfo.get(id)
  if (h === undefined) {
    const b = mcData.blocksByStateId[id]
    const name = b?.name || ''
    h = !infoOf(id).air && ((infoOf(id).full && !b?.transparent) || /_leaves$/.test(name))
    hidesInfo.set(id, h)
  }
  return h
}
// A name pattern: exact, or '*' then a suffix ('*_log': every log).
const nameMatches = (pattern, name) => pattern.startsWith('*') ? name.endsWith(pattern.slice(1)) : pattern.replace(/^minecraft:/, '') === name
const FACES = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]] // face 1..6: +x -x +y -y +z -z
// {cmd:'scan', player?, names:{class:[block or '*suffix', ...]}, radius?:20, radii?:{class:r}, grid?:3, max_angle?:70}
// -> {camera:'minecraft', eye, yaw_deg, pitch_deg, grid, nodes:[{class, name, pos (the block's corner), cells}]}:
// every block of the classes within its radius of the eye and max_angle of the look, with the face cells
// (grid x grid per face, [x, y, z, face] at the cell's centre) a straight line from the eye reaches.
async function scanView ({ player, names = {}, radius = 20, radii = {}, grid = 3, max_angle: maxAngle = 70 }) {
  const p = findPlayer(player)
  const look = extra.get(p) || {}
  const yawDeg = look.yaw ?? 0; const pitchDeg = look.pitch ?? 0
  const eye = { x: p.position.x, y: p.position.y + EYE, z: p.position.z }
  const yr = yawDeg * Math.PI / 180; const pr = pitchDeg * Math.PI / 180
  const dir = [-Math.sin(yr) * Math.cos(pr), -Math.sin(pr), Math.cos(yr) * Math.cos(pr)]
  const cosMax = Math.cos((+maxAngle) * Math.PI / 180)
  const g = Math.max(1, Math.min(8, Math.round(+grid)))
  const classes = Object.entries(names).map(([cls, pats]) => [cls, [].concat(pats).map(String), Math.min(48, +(radii?.[cls] ?? radius))])
  const R = Math.ceil(Math.max(1, ...classes.map(c => c[2])))
  const ex = Math.floor(eye.x); const ey = Math.floor(eye.y); const ez = Math.floor(eye.z)
  const y0 = Math.max(0, ey - R - 1); const y1 = Math.min(255, ey + R + 1)
  const idAt = await loadRegion(p, ex - R - 1, ez - R - 1, y0, 2 * (R + 1) + 1, y1 - y0 + 1)
  const classOf = new Map() // state id -> [class, radius] | null
  const classFor = (id) => {
    if (classOf.has(id)) return classOf.get(id)
    const name = mcData.blocksByStateId[id]?.name || ''
    const c = classes.find(([, pats]) => pats.some(q => nameMatches(q, name))) || null
    classOf.set(id, c)
    return c
  }
  // Does the straight line from the eye to (tx, ty, tz), a point just inside block (bx, by, bz), pass no hiding block?
  const reaches = (tx, ty, tz, bx, by, bz) => {
    const dx = tx - eye.x; const dy = ty - eye.y; const dz = tz - eye.z
    const steps = Math.ceil(Math.hypot(dx, dy, dz) / 0.05)
    for (let i = 1; i <= steps; i++) {
      const f = i / steps
      const qx = Math.floor(eye.x + dx * f); const qy = Math.floor(eye.y + dy * f); const qz = Math.floor(eye.z + dz * f)
      if (qx === bx && qy === by && qz === bz) return true
      if (hides(idAt(qx, qy, qz))) return false
    }
    return true
  }
  const nodes = []
  for (let bx = ex - R; bx <= ex + R; bx++) {
    for (let bz = ez - R; bz <= ez + R; bz++) {
      for (let by = y0; by <= y1; by++) {
        const id = idAt(bx, by, bz)
        if (id < 0 || infoOf(id).air) continue
        const c = classFor(id)
        if (!c) continue
        const vx = bx + 0.5 - eye.x; const vy = by + 0.5 - eye.y; const vz = bz + 0.5 - eye.z
        const len = Math.hypot(vx, vy, vz)
        if (len > c[2] || len < 0.01 || (vx * dir[0] + vy * dir[1] + vz * dir[2]) / len < cosMax) continue
        const cells = []
        FACES.forEach(([fx, fy, fz], fi) => {
          const axis = fx ? 0 : fy ? 1 : 2
          const sign = fx + fy + fz
          const lo = [bx, by, bz]
          const plane = lo[axis] + (sign > 0 ? 1 : 0)
          const e = [eye.x, eye.y, eye.z][axis]
          if ((e - plane) * sign <= 0) return // the face looks away from the eye
          if (hides(idAt(bx + fx, by + fy, bz + fz))) return // covered by its neighbour
          const [a, b] = [0, 1, 2].filter(k => k !== axis)
          for (let i = 0; i < g; i++) {
            for (let j = 0; j < g; j++) {
              const pt = [0, 0, 0]
              pt[axis] = plane
              pt[a] = lo[a] + (i + 0.5) / g
              pt[b] = lo[b] + (j + 0.5) / g
              const inside = pt.slice()
              inside[axis] = plane - 0.02 * sign
              if (reaches(inside[0], inside[1], inside[2], bx, by, bz)) cells.push([round(pt[0]), round(pt[1]), round(pt[2]), fi + 1])
            }
          }
        })
        if (cells.length) nodes.push({ class: c[0], name: mcData.blocksByStateId[id]?.name, pos: { x: bx, y: by, z: bz }, cells })
      }
    }
  }
  return { camera: 'minecraft', eye: { x: round(eye.x), y: round(eye.y), z: round(eye.z) }, yaw_deg: yawDeg, pitch_deg: pitchDeg, grid: g, nodes }
}

const commands = {
  state: () => fullState(),
  // {cmd:'tp', player?, x, y, z, yaw?, pitch?}  (yaw/pitch in degrees)
  tp: async ({ player, x, y, z, yaw, pitch }) => teleport(findPlayer(player), x, y, z, yaw, pitch),
  // {cmd:'give', player?, item:'oak_log', count?:1, slot?}  slot = window-0 slot number (36..44 hotbar)
  give: ({ player, item, count = 1, slot }) => {
    const p = findPlayer(player)
    const def = mcData.itemsByName[String(item).replace(/^minecraft:/, '')]
    if (!def) throw new Error(`unknown item ${item}`)
    const s = slot === undefined ? p.inventory.firstEmptyInventorySlot() : +slot
    if (s === null || s === undefined) throw new Error('inventory full')
    p.inventory.updateSlot(s, new Item(def.id, +count))
    const v = clickView(p)
    if (v?.kind === 'inventory' && s >= 1 && s <= 4) updateResult(v) // into the 2x2 grid: show the result
    flushAll(p)
    return { ok: true, slot: s }
  },
  // {cmd:'clear', player?}  empties the inventory, the 2x2 grid, the result, the cursor, an open table's
  // grid, and the crafted and smelted lists (a furnace's own slots stay: they are the block's)
  clear: ({ player }) => {
    const p = findPlayer(player)
    const x = extra.get(p)
    p.inventory.slots.forEach((it, s) => { if (it) p.inventory.updateSlot(s, null) })
    p.inventory.selectedItem = null
    if (x?.table) {
      for (let s = 0; s < 10; s++) x.table.win.slots[s] = null
      x.table.win.selectedItem = null
    }
    if (x?.furnace) x.furnace.win.selectedItem = null
    if (x) { x.crafted = []; x.smelted = []; x.lastClose = null }
    flushAll(p)
    return { ok: true }
  },
  // {cmd:'close_window', player?}  what a client's close_window does: an open crafting table or furnace is
  // closed (the client is told too), else the player's own inventory counts as closed; grid and cursor go
  // back (a furnace keeps its slots)
  close_window: ({ player }) => {
    const p = findPlayer(player)
    const x = extra.get(p)
    if (x.table) {
      const id = x.table.id
      p._client.write('close_window', { windowId: id })
      return { ok: true, window: 'crafting_table', id, returned: closeTable(p, 'close_window command') }
    }
    if (x.furnace) {
      const id = x.furnace.id
      p._client.write('close_window', { windowId: id })
      return { ok: true, window: 'furnace', id, returned: closeFurnace(p, 'close_window command') }
    }
    return { ok: true, window: 'inventory', id: 0, returned: closeInventory(p, 'close_window command') }
  },
  // {cmd:'drop', player?, item, count?:1, x?, y?, z?}  an item entity (at the player's feet by default)
  drop: ({ player, item, count = 1, x, y, z }) => {
    const p = findPlayer(player)
    const def = mcData.itemsByName[String(item).replace(/^minecraft:/, '')]
    if (!def) throw new Error(`unknown item ${item}`)
    const pos = x === undefined ? p.position.clone() : new Vec3(+x, +y, +z)
    const e = serv.spawnObject(ITEM_ENTITY, p.world, pos, { velocity: new Vec3(0, 0, 0), itemId: def.id, itemDamage: 0, itemCount: +count, pickupTime: 500, deathTime: 5 * 60 * 1000 })
    return { ok: true, entityId: e?.id }
  },
  // {cmd:'items', player?, radius?:16}  the item entities on the ground within radius of the player,
  // nearest first: where a broken block's drop went (the closed loop's pickups)
  items: ({ player, radius = 16 }) => {
    const p = findPlayer(player)
    const out = []
    for (const e of Object.values(serv.entities)) {
      if (!e.itemId || e.world !== p.world) continue
      const d = e.position.distanceTo(p.position)
      if (d > +radius) continue
      const { x, y, z } = e.position
      out.push({ name: mcData.items[e.itemId]?.name ?? String(e.itemId), count: e.itemCount || 1, x: round(x), y: round(y), z: round(z), d: round(d, 2) })
    }
    out.sort((a, b) => a.d - b.d)
    return out
  },
  // {cmd:'face_block', player?, blocks?:['oak_log' or '*_log',...] (default every *_log), seed?:0, min_dist?:2.5,
  //  max_dist?:4.5, radius?:24, reach?:4.5, levels?, x?,y?,z? (centre; default the player's spawn point),
  //  yaw_jitter?:0, pitch_jitter?:0 (degrees, uniform +-), pitch_offset?:0 (degrees further down)}
  face_block: (args) => faceBlock(args),
  // {cmd:'set_inventory', player?, slots:{"36":"oak_log 3", ...}}  the inventory exactly so (window-0 slots:
  // 1-4 the 2x2 grid, its result shown; 9-35 main, 36-44 hotbar); everything else emptied as by clear;
  // answers once the client has read it (synced: true) or after 5 s (false)
  set_inventory: async ({ player, slots = {} }) => {
    const p = findPlayer(player)
    const items = Object.entries(slots).filter(([, v]) => v).map(([slot, v]) => {
      const [name, count = '1'] = String(v).trim().split(/\s+/)
      const def = mcData.itemsByName[name.replace(/^minecraft:/, '')]
      const s = +slot
      if (!def) throw new Error(`unknown item ${name} (slot ${slot})`)
      if (!Number.isInteger(s) || s < 1 || s > 44 || (s >= 5 && s <= 8)) throw new Error(`slot ${slot}: not a grid (1-4), main (9-35) or hotbar (36-44) slot`)
      if (!(+count >= 1 && +count <= 64)) throw new Error(`slot ${slot}: count ${count} is not 1..64`)
      return [s, new Item(def.id, +count)]
    })
    commands.clear({ player })
    for (const [s, it] of items) p.inventory.updateSlot(s, it)
    const v = clickView(p)
    if (v?.kind === 'inventory' && items.some(([s]) => s <= 4)) updateResult(v)
    flushAll(p)
    // synced: the client has the new inventory (a client busy drawing took seconds to read it)
    return { ok: true, slots: items.length, synced: await syncClient(p) }
  },
  // {cmd:'sync', player?, timeout_ms?:5000}  answers once the client has handled every packet sent before it
  // ({synced: true}), or after the timeout (false)
  sync: async ({ player, timeout_ms: t = 5000 }) => ({ synced: await syncClient(findPlayer(player), +t) }),
  // {cmd:'scan', ...}  see scanView
  // {cmd:'excavate', min:[x,y,z], max:[x,y,z]}  every block of the box (inclusive, at most 64 a side) becomes
  // air: an open pit whose stone and ore walls are in daylight
  excavate: async ({ min, max }) => {
    const lo = [0, 1, 2].map(k => Math.floor(Math.min(+min[k], +max[k])))
    const hi = [0, 1, 2].map(k => Math.floor(Math.max(+min[k], +max[k])))
    if (lo.some((v, k) => !Number.isFinite(v) || hi[k] - v > 64)) throw new Error('excavate: min and max must be [x, y, z] at most 64 apart')
    lo[1] = Math.max(1, lo[1]); hi[1] = Math.min(255, hi[1]) // bedrock stays
    for (const f of [...furnaces.values()]) {
      if ([f.pos.x, f.pos.y, f.pos.z].every((v, k) => v >= lo[k] && v <= hi[k])) removeFurnace(f, 'excavated', false)
    }
    const air = blockState('air').defaultState
    let cleared = 0
    for (let bx = lo[0]; bx <= hi[0]; bx++) {
      for (let by = lo[1]; by <= hi[1]; by++) {
        for (let bz = lo[2]; bz <= hi[2]; bz++) {
          const pos = new Vec3(bx, by, bz)
          if (infoOf(await serv.overworld.getBlockStateId(pos)).air) continue
          await serv.setBlock(serv.overworld, pos, air)
          cleared++
        }
      }
    }
    return { ok: true, cleared }
  },
  scan: (args) => scanView(args),
  // {cmd:'setblock', x, y, z, block:'crafting_table', facing?}  facing (north/south/west/east) for blocks that
  // have one: a furnace's front. A furnace's contents at that spot go with the old block (no drops, as
  // vanilla's setblock replace)
  setblock: async ({ x, y, z, block, facing }) => {
    const b = blockState(block)
    const pos = new Vec3(+x, +y, +z).floored()
    let state = b.defaultState
    if (facing !== undefined && facing !== '') {
      const st = (b.states || []).find(s => s.name === 'facing')
      if (!st?.values?.includes(String(facing))) throw new Error(`setblock: ${b.name} has no facing ${facing}${st ? ` (one of ${st.values.join(', ')})` : ''}`)
      state = Block.fromProperties(b.id, { ...Block.fromStateId(b.defaultState, 0).getProperties(), facing: String(facing) }, 0).stateId
    }
    forgetFurnace(pos, 'replaced by setblock')
    await serv.setBlock(serv.overworld, pos, state)
    return { ok: true }
  },
  // {cmd:'furnace', x, y, z, slots?:{"0":"iron_ore 3", "1":"coal", "2":null}}  a furnace's contents and fire:
  // {pos, block, slots:[{slot, name, count}] (0 input, 1 fuel, 2 result), burn (fuel ticks left), burnTotal,
  // cook (progress ticks), cookTotal (200), burning, lit (the block state), viewers}. With slots, those are
  // set first ('name count?'; null or '' empties a slot; a new input resets the progress).
  furnace: async ({ x, y, z, slots }) => {
    const pos = new Vec3(+x, +y, +z).floored()
    const block = await serv.overworld.getBlock(pos)
    if (block?.name !== 'furnace') throw new Error(`furnace: the block at ${pos.x},${pos.y},${pos.z} is ${block?.name}, not a furnace`)
    if (typeof slots === 'string') slots = JSON.parse(slots) // the GET form
    if (slots) {
      const items = Object.entries(slots).map(([slot, v]) => {
        if (!['0', '1', '2'].includes(String(slot))) throw new Error(`furnace: slot ${slot} is not 0 (input), 1 (fuel) or 2 (result)`)
        if (!v) return [+slot, null]
        const [name, count = '1'] = String(v).trim().split(/\s+/)
        const def = mcData.itemsByName[name.replace(/^minecraft:/, '')]
        if (!def) throw new Error(`furnace: unknown item ${name} (slot ${slot})`)
        if (!(+count >= 1 && +count <= 64)) throw new Error(`furnace: slot ${slot}: count ${count} is not 1..64`)
        return [+slot, new Item(def.id, +count)]
      })
      const f = furnaceAt(serv.overworld, pos)
      for (const [s, it] of items) {
        if (s === 0 && !sameKind(it, f.slots[0])) f.cook = 0
        f.slots[s] = it
      }
      activeFurnaces.add(f)
      showFurnace(f)
    }
    const f = furnaces.get(furnaceKey(pos)) || { pos, slots: [null, null, null], burn: 0, burnTotal: 0, cook: 0, viewers: new Set() }
    return { ...furnaceInfo(f), block: block.name, lit: !!block.getProperties().lit, viewers: [...f.viewers].map(p => p.username) }
  },
  // {cmd:'getblock', x, y, z}
  getblock: async ({ x, y, z }) => {
    const b = await serv.overworld.getBlock(new Vec3(+x, +y, +z).floored())
    return { name: b?.name, stateId: b?.stateId }
  },
  // {cmd:'find', block:'oak_log', x?, y?, z?, radius?:24, limit?:10}  nearest blocks of that type (loaded or generated columns)
  find: async ({ block, x, y, z, radius = 24, limit = 10, player }) => {
    const b = blockState(block)
    let c
    if (x === undefined) { const p = findPlayer(player); c = p.position.floored() } else c = new Vec3(+x, +y, +z).floored()
    const r = Math.min(+radius, 64)
    const out = []
    for (let dx = -r; dx <= r; dx++) {
      for (let dz = -r; dz <= r; dz++) {
        for (let yy = Math.max(1, c.y - 24); yy <= Math.min(250, c.y + 24); yy++) {
          const pos = new Vec3(c.x + dx, yy, c.z + dz)
          const id = await serv.overworld.getBlockStateId(pos)
          if (id >= b.minStateId && id <= b.maxStateId) out.push({ x: pos.x, y: pos.y, z: pos.z, d: round(pos.distanceTo(c), 2) })
        }
      }
    }
    out.sort((a, b) => a.d - b.d)
    return out.slice(0, +limit)
  },
  // {cmd:'run', command:'time set 1000'}  any flying-squid server command, executed as op
  run: async ({ command }) => ({ result: await serv.handleCommand(String(command).replace(/^\//, ''), {}, true) ?? null })
}
async function execute (obj) {
  const fn = commands[obj.cmd]
  if (!fn) throw new Error(`unknown cmd ${obj.cmd}; known: ${Object.keys(commands).join(', ')}`)
  return fn(obj)
}

// HTTP on 127.0.0.1:CMD_PORT:  POST /  with a JSON body {cmd:..., ...}
//                               GET  /<cmd>?k=v&...   (e.g. /tp?x=1&y=80&z=2 , /state)
http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x')
  let body = ''
  req.on('data', d => { body += d })
  req.on('end', async () => {
    let obj
    try {
      obj = body.trim() ? JSON.parse(body) : {}
      const name = url.pathname.replace(/^\/+/, '')
      if (name) obj.cmd = name
      for (const [k, v] of url.searchParams) obj[k] = v
      if (!obj.cmd) obj.cmd = 'state'
      const result = await execute(obj)
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(result) + '\n')
    } catch (e) {
      res.writeHead(400, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: e.message }) + '\n')
    }
  })
}).listen(CMD_PORT, '127.0.0.1', () => console.log(`[harness] command port http://127.0.0.1:${CMD_PORT}/ ; state -> ${STATE_FILE}`))

// File commands: append JSON lines to CMD_FILE; each is executed once, results go to CMD_FILE + '.out'
setInterval(async () => {
  let text
  try { text = fs.readFileSync(CMD_FILE, 'utf8') } catch { return }
  if (!text.trim()) return
  fs.writeFileSync(CMD_FILE, '')
  for (const line of text.split('\n').filter(l => l.trim())) {
    let out
    try { out = await execute(JSON.parse(line)) } catch (e) { out = { error: e.message } }
    fs.appendFileSync(CMD_FILE + '.out', JSON.stringify({ cmd: line, out }) + '\n')
  }
}, 250)

process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
