'use strict'
// Tests of the project's test server (server.js next to this file): crafting in the player's 2x2 grid and
// at a crafting table, grid items returned on close, furnaces, pickups, the face_block scene command, and
// what the labeller uses (set_inventory, scan, excavate).
//
//   node --test tests/mcweb/server/
//
// Every test starts its own server (free ports, state/command files and flying-squid's logs in a temp dir),
// joins one offline player with minecraft-protocol (a raw client: it sees exactly the packets a client
// would), acts through packets and the harness's HTTP commands, and kills the server at the end (also on
// failure, when the server's log is printed). The server's node_modules come from MCWEB_SERVER_MODULES,
// else NODE_PATH, else <repo>/.work/mcweb/server/node_modules (built by tests/mcweb/mcweb.sh build); without
// them the tests are skipped. MCWEB_TEST_VERBOSE=1 prints every server log.
//
// Window-click packets as sent here (1.14.4): window_click {windowId, slot, mouseButton, action, mode, item};
// mode 0 = click (button 0 left, 1 right), mode 1 = shift-click. Window 0 slots: 0 result, 1-4 grid
// (1 2 / 3 4), 9-35 main, 36-44 hotbar. Crafting table (open_window type 11): 0 result, 1-9 grid, 10-36 main,
// 37-45 hotbar (= window-0 slot + 1). Furnace (open_window type 13): 0 input, 1 fuel, 2 result, 3-29 main,
// 30-38 hotbar (= window-0 slot - 6). The server answers with set_slot (windowId 0 / the window's id, and
// -1/-1 for the cursor) and sends no transaction packets (neither does flying-squid), so none are awaited.
const test = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const net = require('node:net')
const Module = require('node:module')

const SERVER = path.join(__dirname, 'server.js')
const MODULES = process.env.MCWEB_SERVER_MODULES ||
  (process.env.NODE_PATH || '').split(path.delimiter).find(d => d && fs.existsSync(path.join(d, 'minecraft-protocol'))) ||
  path.resolve(__dirname, '../../../.work/mcweb/server/node_modules')
const HAVE_MODULES = fs.existsSync(path.join(MODULES, 'minecraft-protocol')) || fs.existsSync(path.join(MODULES, 'node_modules', 'minecraft-protocol'))
const req = Module.createRequire(path.join(path.resolve(MODULES), '__mcweb_test__.js'))
const VERSION = '1.14.4'
const skip = HAVE_MODULES ? false : `no server node_modules at ${MODULES} (set MCWEB_SERVER_MODULES or build with tests/mcweb/mcweb.sh build)`

const sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms))
function freePort () {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)) })
  })
}
const portOpen = (port) => new Promise(resolve => {
  const c = net.connect(port, '127.0.0.1')
  c.on('connect', () => { c.destroy(); resolve(true) })
  c.on('error', () => resolve(false))
})
async function until (fn, what, timeout = 10000) {
  const t0 = Date.now()
  let last
  for (;;) {
    try { last = await fn(); if (last) return last } catch (e) { last = e }
    if (Date.now() - t0 > timeout) throw new Error(`timed out after ${timeout} ms waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`)
    await sleep(50)
  }
}

async function startServer (env = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcweb-server-test-'))
  const mcPort = await freePort()
  let cmdPort = await freePort()
  while (cmdPort === mcPort) cmdPort = await freePort()
  const log = []
  const proc = spawn(process.execPath, [SERVER], {
    cwd: dir, // flying-squid writes logs/ into the cwd
    env: {
      ...process.env,
      MCWEB_SERVER_MODULES: MODULES,
      MC_PORT: String(mcPort),
      CMD_PORT: String(cmdPort),
      STATE_FILE: path.join(dir, 'state.json'),
      CMD_FILE: path.join(dir, 'commands.jsonl'),
      VIEW_DISTANCE: '2',
      STATE_INTERVAL_MS: '250',
      MC_SPAWN_LOOK: 'none', // no look-teleport 1 s after joining (it would undo a face_block done before)
      ...env
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  proc.stdout.on('data', d => log.push(String(d)))
  proc.stderr.on('data', d => log.push(String(d)))
  const exited = new Promise(resolve => proc.on('exit', (code, signal) => { log.push(`[test] server exited code=${code} signal=${signal}\n`); resolve() }))
  const srv = {
    dir, mcPort, cmdPort, proc, log, exited,
    logText: () => log.join('').replace(/\x1b\[[0-9;]*[A-Za-z]/g, ''), // eslint-disable-line no-control-regex
    async stop () {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM')
        const t = setTimeout(() => proc.kill('SIGKILL'), 3000)
        await exited
        clearTimeout(t)
      }
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
  try {
    await until(async () => {
      if (proc.exitCode !== null) throw new Error('server exited during start-up')
      return (await portOpen(mcPort)) && (await portOpen(cmdPort))
    }, 'the server ports', 60000)
  } catch (e) {
    await srv.stop()
    throw new Error(`${e.message}\n--- server log ---\n${srv.logText()}`)
  }
  return srv
}

// HTTP command; rejects with the server's error message on a non-200 answer
async function cmd (srv, obj) {
  const res = await fetch(`http://127.0.0.1:${srv.cmdPort}/`, { method: 'POST', body: JSON.stringify(obj) })
  const body = await res.json()
  if (res.status !== 200) { const e = new Error(body.error || `HTTP ${res.status}`); e.status = res.status; throw e }
  return body
}
async function me (srv) {
  const s = await cmd(srv, { cmd: 'state' })
  return s.players[0]
}
// window-0 inventory from the state as { slot: 'name:count' }
const invMap = (p) => Object.fromEntries(p.inventory.map(i => [i.slot, `${i.name}:${i.count}`]))
const itemStr = (it) => (it ? `${it.name}:${it.count}` : null)

async function joinBot (srv, username = 'tester') {
  const mc = req('minecraft-protocol')
  const Item = req('prismarine-item')(VERSION)
  const client = mc.createClient({ host: '127.0.0.1', port: srv.mcPort, username, version: VERSION, auth: 'offline' })
  const bot = { client, slots: { 0: new Array(46).fill(null) }, cursor: null, windows: [], closed: [], spawned: [], collected: [], props: [], action: 1, pos: null }
  client.on('error', e => srv.log.push(`[test] client error ${e.message}\n`))
  client.on('set_slot', p => {
    const it = Item.fromNotch(p.item)
    if (p.windowId === -1 && p.slot === -1) bot.cursor = it
    else (bot.slots[p.windowId] ||= [])[p.slot] = it
  })
  client.on('window_items', p => { bot.slots[p.windowId] = p.items.map(i => Item.fromNotch(i)) })
  // as vanilla (and the web client): a transaction the client did not ask for is answered at once
  client.on('transaction', p => { if (!p.accepted) client.write('transaction', { windowId: p.windowId, action: p.action, accepted: true }) })
  client.on('open_window', p => bot.windows.push(p))
  client.on('close_window', p => bot.closed.push(p))
  client.on('spawn_entity', p => bot.spawned.push(p))
  client.on('collect', p => bot.collected.push(p))
  client.on('craft_progress_bar', p => bot.props.push(p)) // window properties (furnace: fuel and cook progress)
  let first = true
  client.on('position', p => {
    bot.pos = p
    client.write('teleport_confirm', { teleportId: p.teleportId })
    if (first) { first = false; client.write('flying', { onGround: true }) } // flying-squid waits for one
  })
  // click as mineflayer does: the item is the client's idea of the clicked slot (the server ignores it)
  bot.click = (windowId, slot, mouseButton = 0, mode = 0) => client.write('window_click', {
    windowId, slot, mouseButton, mode, action: bot.action++, item: Item.toNotch(bot.slots[windowId]?.[slot] ?? null)
  })
  bot.slot = (windowId, slot) => itemStr(bot.slots[windowId]?.[slot])
  bot.end = () => client.end()
  await until(async () => bot.pos && (await me(srv))?.pos, 'the player to join', 60000)
  return bot
}

// one server + one bot per test; the server is killed afterwards, its log printed when the test fails
function serverTest (name, fn, env) {
  test(name, { skip, timeout: 90000 }, async () => {
    const srv = await startServer(env)
    let bot
    try {
      bot = await joinBot(srv)
      await fn(srv, bot)
      if (process.env.MCWEB_TEST_VERBOSE) console.error(`--- server log (${name}) ---\n${srv.logText()}`)
    } catch (e) {
      console.error(`--- server log (${name}) ---\n${srv.logText()}\n--- end of server log ---`)
      throw e
    } finally {
      try { bot?.end() } catch { }
      await srv.stop()
    }
  })
}

serverTest('2x2 grid: log -> 4 planks, the client sees the result; taking it consumes the log', async (srv, bot) => {
  await cmd(srv, { cmd: 'give', item: 'oak_log', count: 1, slot: 36 })
  await until(() => bot.slot(0, 36) === 'oak_log:1', 'the log in hotbar slot 0 (client)')
  bot.click(0, 36) // pick the log up
  await until(async () => itemStr((await me(srv)).cursor) === 'oak_log:1', 'the log on the cursor')
  bot.click(0, 1) // into the grid's top-left slot
  await until(() => bot.slot(0, 0) === 'oak_planks:4', 'the client to see 4 oak planks in the result slot')
  let p = await me(srv)
  assert.deepEqual(invMap(p), { 0: 'oak_planks:4', 1: 'oak_log:1' })
  bot.click(0, 0) // take the result
  await until(async () => itemStr((await me(srv)).cursor) === 'oak_planks:4', 'the planks on the cursor')
  await until(() => bot.cursor?.name === 'oak_planks' && bot.slot(0, 0) === null && bot.slot(0, 1) === null, 'the client to see the grid and result emptied')
  bot.click(0, 37) // put them down
  p = await until(async () => { const p = await me(srv); return invMap(p)[37] === 'oak_planks:4' && p }, 'the planks in hotbar slot 1')
  assert.deepEqual(invMap(p), { 37: 'oak_planks:4' }, 'the log is gone, 4 planks remain')
  assert.equal(p.cursor, null)
  assert.deepEqual(p.crafted.map(c => [c.name, c.count, c.via]), [['oak_planks', 4, 'inventory']])
  assert.equal(bot.slot(0, 37), 'oak_planks:4')

  // any log, any grid position: birch in the bottom-right slot gives birch planks
  await cmd(srv, { cmd: 'give', item: 'birch_log', count: 1, slot: 4 })
  await until(() => bot.slot(0, 0) === 'birch_planks:4', 'the client to see 4 birch planks')
  bot.click(0, 0)
  bot.click(0, 38)
  p = await until(async () => { const p = await me(srv); return invMap(p)[38] === 'birch_planks:4' && p }, 'birch planks in slot 38')
  assert.deepEqual(invMap(p), { 37: 'oak_planks:4', 38: 'birch_planks:4' })
})

serverTest('2x2 grid: planks -> sticks (right column), diagonal gives nothing, 4 planks -> crafting table', async (srv, bot) => {
  await cmd(srv, { cmd: 'give', item: 'oak_planks', count: 2, slot: 36 })
  await until(() => bot.slot(0, 36) === 'oak_planks:2', 'planks in the hotbar (client)')
  bot.click(0, 36) // pick up both
  bot.click(0, 2, 1) // right click: one into the top-right slot
  bot.click(0, 4, 1) // one into the bottom-right slot
  await until(() => bot.slot(0, 0) === 'stick:4', 'the client to see 4 sticks in the result slot')
  let p = await me(srv)
  assert.equal(p.cursor, null)
  assert.deepEqual(invMap(p), { 0: 'stick:4', 2: 'oak_planks:1', 4: 'oak_planks:1' })
  bot.click(0, 0)
  bot.click(0, 40)
  p = await until(async () => { const p = await me(srv); return invMap(p)[40] === 'stick:4' && p }, 'sticks in slot 40')
  assert.deepEqual(invMap(p), { 40: 'stick:4' })

  await cmd(srv, { cmd: 'give', item: 'spruce_planks', count: 1, slot: 1 })
  await cmd(srv, { cmd: 'give', item: 'spruce_planks', count: 1, slot: 4 })
  p = await me(srv)
  assert.equal(invMap(p)[0], undefined, 'a diagonal pair of planks is no recipe')
  await cmd(srv, { cmd: 'give', item: 'spruce_planks', count: 1, slot: 2 })
  await cmd(srv, { cmd: 'give', item: 'spruce_planks', count: 1, slot: 3 })
  await until(() => bot.slot(0, 0) === 'crafting_table:1', 'the client to see a crafting table in the result slot')
  bot.click(0, 0)
  bot.click(0, 41)
  p = await until(async () => { const p = await me(srv); return invMap(p)[41] === 'crafting_table:1' && p }, 'the table in slot 41')
  assert.deepEqual(invMap(p), { 40: 'stick:4', 41: 'crafting_table:1' })
  assert.deepEqual(p.crafted.map(c => c.name), ['stick', 'crafting_table'])
})

serverTest('2x2 grid: shift-click crafts as many as fit; shift-click moves main <-> hotbar', async (srv, bot) => {
  await cmd(srv, { cmd: 'give', item: 'oak_log', count: 3, slot: 3 })
  await until(() => bot.slot(0, 0) === 'oak_planks:4', 'the result (client)')
  bot.click(0, 0, 0, 1) // shift-click the result
  let p = await until(async () => { const p = await me(srv); return p.crafted.length === 3 && p }, 'three crafts')
  // vanilla merges a crafted result into slots 44..9, last first: the last hotbar slot
  assert.deepEqual(invMap(p), { 44: 'oak_planks:12' })
  await until(() => bot.slot(0, 44) === 'oak_planks:12' && bot.slot(0, 3) === null && bot.slot(0, 0) === null, 'the client to see 12 planks and an empty grid')

  for (const s of [1, 2, 3, 4]) await cmd(srv, { cmd: 'give', item: 'oak_planks', count: 2, slot: s })
  await until(() => bot.slot(0, 0) === 'crafting_table:1', 'a table in the result (client)')
  bot.click(0, 0, 0, 1)
  p = await until(async () => { const p = await me(srv); return p.crafted.length === 5 && p }, 'two more crafts')
  assert.deepEqual(invMap(p), { 44: 'oak_planks:12', 43: 'crafting_table:2' })

  await cmd(srv, { cmd: 'give', item: 'dirt', count: 5, slot: 9 })
  bot.click(0, 9, 0, 1) // main -> hotbar (first empty, left first)
  p = await until(async () => { const p = await me(srv); return invMap(p)[36] && p }, 'dirt in the hotbar')
  assert.deepEqual(invMap(p), { 36: 'dirt:5', 43: 'crafting_table:2', 44: 'oak_planks:12' })
  bot.click(0, 44, 0, 1) // hotbar -> main
  p = await until(async () => { const p = await me(srv); return invMap(p)[9] && p }, 'planks in the main inventory')
  assert.deepEqual(invMap(p), { 9: 'oak_planks:12', 36: 'dirt:5', 43: 'crafting_table:2' })
  assert.equal(bot.slot(0, 9), 'oak_planks:12')
})

serverTest('2x2 grid: items and the cursor go back on close_window 0, on the first swing, dropped when full', async (srv, bot) => {
  await cmd(srv, { cmd: 'give', item: 'oak_log', count: 5, slot: 36 })
  await cmd(srv, { cmd: 'give', item: 'dirt', count: 3, slot: 37 })
  await cmd(srv, { cmd: 'give', item: 'oak_log', count: 2, slot: 1 })
  await cmd(srv, { cmd: 'give', item: 'stick', count: 1, slot: 3 })
  await until(() => bot.slot(0, 37) === 'dirt:3' && bot.slot(0, 3) === 'stick:1', 'the items (client)')
  bot.click(0, 37) // dirt onto the cursor
  await until(async () => itemStr((await me(srv)).cursor) === 'dirt:3', 'dirt on the cursor')
  bot.client.write('close_window', { windowId: 0 }) // what a vanilla client sends when E closes
  let p = await until(async () => { const p = await me(srv); return !p.cursor && !invMap(p)[1] && p }, 'the grid emptied')
  // logs onto the existing log stack, the stick and then the cursor's dirt into the first empty hotbar slots
  assert.deepEqual(invMap(p), { 36: 'oak_log:7', 37: 'stick:1', 38: 'dirt:3' })
  assert.equal(p.lastClose.window, 'inventory')
  await until(() => bot.slot(0, 36) === 'oak_log:7' && bot.slot(0, 37) === 'stick:1' && bot.slot(0, 38) === 'dirt:3' &&
    bot.slot(0, 1) === null && bot.slot(0, 3) === null && bot.slot(0, 0) === null, 'the client to see the items back')

  // the web client's E inventory sends no close_window: the first swing counts as closed
  await cmd(srv, { cmd: 'give', item: 'oak_log', count: 1, slot: 2 })
  assert.equal(invMap(await me(srv))[0], 'oak_planks:4')
  bot.client.write('arm_animation', { hand: 0 })
  p = await until(async () => { const p = await me(srv); return invMap(p)[36] === 'oak_log:8' && p }, 'the log back after a swing')
  assert.deepEqual(invMap(p), { 36: 'oak_log:8', 37: 'stick:1', 38: 'dirt:3' })

  // the harness command does the same
  await cmd(srv, { cmd: 'give', item: 'stick', count: 1, slot: 4 })
  const r = await cmd(srv, { cmd: 'close_window' })
  assert.deepEqual(r.returned, ['1 stick'])
  assert.deepEqual(invMap(await me(srv)), { 36: 'oak_log:8', 37: 'stick:2', 38: 'dirt:3' })

  // full inventory: the grid item is dropped as an item entity next to the player
  await cmd(srv, { cmd: 'clear' })
  for (let s = 9; s < 45; s++) await cmd(srv, { cmd: 'give', item: 'stone', count: 64, slot: s })
  await cmd(srv, { cmd: 'give', item: 'oak_log', count: 1, slot: 1 })
  const before = bot.spawned.length
  bot.client.write('close_window', { windowId: 0 })
  p = await until(async () => { const p = await me(srv); return !invMap(p)[1] && p }, 'the grid emptied (full inventory)')
  assert.equal(p.inventory.length, 36)
  assert.ok(p.inventory.every(i => i.name === 'stone' && i.count === 64))
  await until(() => bot.spawned.slice(before).some(e => e.type === 34), 'an item entity spawned for the client')
  assert.match(srv.logText(), /dropped 1 oak_log/)
})

serverTest('crafting table: 3x3 recipe, shift-click result, grid returned on close_window', async (srv, bot) => {
  const p0 = await me(srv)
  const tx = Math.floor(p0.pos.x); const ty = Math.floor(p0.pos.y); const tz = Math.floor(p0.pos.z) + 2
  await cmd(srv, { cmd: 'setblock', x: tx, y: ty, z: tz, block: 'crafting_table' })
  await cmd(srv, { cmd: 'give', item: 'oak_planks', count: 3, slot: 36 })
  await cmd(srv, { cmd: 'give', item: 'stick', count: 2, slot: 37 })
  await cmd(srv, { cmd: 'give', item: 'oak_log', count: 2, slot: 40 })
  bot.client.write('block_place', { hand: 0, location: { x: tx, y: ty, z: tz }, direction: 2, cursorX: 0.5, cursorY: 0.5, cursorZ: 0, insideBlock: false })
  const w = await until(() => bot.windows.at(-1), 'open_window')
  assert.equal(w.inventoryType, 11, 'numeric 1.14 menu id of minecraft:crafting')
  const N = w.windowId
  await until(() => bot.slot(N, 37) === 'oak_planks:3' && bot.slot(N, 38) === 'stick:2', 'the table window contents (client)')
  let p = await me(srv)
  assert.equal(p.window.id, N)
  assert.equal(p.window.title, 'Crafting')

  bot.click(N, 37) // planks onto the cursor, one into each top-row slot
  for (const s of [1, 2, 3]) bot.click(N, s, 1)
  bot.click(N, 38) // sticks: centre column
  for (const s of [5, 8]) bot.click(N, s, 1)
  await until(() => bot.slot(N, 0) === 'wooden_pickaxe:1', 'the client to see a wooden pickaxe in the result slot')
  p = await me(srv)
  assert.deepEqual(p.window.slots.map(s => `${s.slot}:${s.name}:${s.count}`),
    ['0:wooden_pickaxe:1', '1:oak_planks:1', '2:oak_planks:1', '3:oak_planks:1', '5:stick:1', '8:stick:1'])
  bot.click(N, 0, 0, 1) // shift-click: into the inventory, last hotbar slot first
  p = await until(async () => { const p = await me(srv); return invMap(p)[44] && p }, 'the pickaxe in the inventory')
  assert.deepEqual(invMap(p), { 40: 'oak_log:2', 44: 'wooden_pickaxe:1' })
  assert.deepEqual(p.window.slots, [])
  assert.deepEqual(p.crafted.map(c => [c.name, c.via]), [['wooden_pickaxe', 'crafting_table']])
  await until(() => bot.slot(N, 45) === 'wooden_pickaxe:1' && bot.slot(N, 1) === null, 'the client to see the pickaxe and an empty grid')

  bot.click(N, 41) // logs (window-0 slot 40) into the grid's centre: shapeless planks anywhere in 3x3
  bot.click(N, 5)
  await until(() => bot.slot(N, 0) === 'oak_planks:4', 'the client to see planks from the centre log')
  await cmd(srv, { cmd: 'give', item: 'dirt', count: 1, slot: 9 })
  await until(() => bot.slot(N, 10) === 'dirt:1', 'a server-side change mirrored into the open table (client)')
  bot.click(N, 10) // dirt stays on the cursor
  await until(async () => itemStr((await me(srv)).cursor) === 'dirt:1', 'dirt on the cursor')
  bot.client.write('close_window', { windowId: N })
  p = await until(async () => { const p = await me(srv); return !p.window && invMap(p)[36] && p }, 'the grid returned')
  assert.deepEqual(invMap(p), { 36: 'oak_log:2', 37: 'dirt:1', 44: 'wooden_pickaxe:1' })
  assert.equal(p.cursor, null)
  assert.equal(p.lastClose.window, 'crafting_table')
  await until(() => bot.slot(0, 36) === 'oak_log:2' && bot.slot(0, 37) === 'dirt:1', 'the client to get the returned items in window 0')
})

serverTest('face_block: a standable spot in reach, looking at a log; deterministic; clear error', async (srv, bot) => {
  const r = await cmd(srv, { cmd: 'face_block', seed: 1 })
  assert.match(r.block.name, /_log$/)
  assert.equal((await cmd(srv, { cmd: 'getblock', ...r.block })).name, r.block.name)
  const h = Math.hypot(r.player.x - (r.block.x + 0.5), r.player.z - (r.block.z + 0.5))
  assert.ok(h >= 2.5 && h <= 4.5, `horizontal distance ${h}`)
  const fx = Math.floor(r.player.x); const fz = Math.floor(r.player.z)
  assert.notEqual((await cmd(srv, { cmd: 'getblock', x: fx, y: r.player.y - 1, z: fz })).name, 'air')
  assert.equal((await cmd(srv, { cmd: 'getblock', x: fx, y: r.player.y, z: fz })).name, 'air')
  assert.equal((await cmd(srv, { cmd: 'getblock', x: fx, y: r.player.y + 1, z: fz })).name, 'air')
  // looking at the centre: the view ray from the eye passes the block centre
  const yaw = r.player.yaw * Math.PI / 180; const pitch = r.player.pitch * Math.PI / 180
  const dir = [-Math.sin(yaw) * Math.cos(pitch), -Math.sin(pitch), Math.cos(yaw) * Math.cos(pitch)]
  const to = [r.block.x + 0.5 - r.player.x, r.block.y + 0.5 - (r.player.y + 1.62), r.block.z + 0.5 - r.player.z]
  const len = Math.hypot(...to)
  assert.ok(dir.reduce((s, d, i) => s + d * to[i] / len, 0) > 0.9999, 'the look direction points at the block centre')
  assert.ok(((r.player.yaw % 360) + 360) % 360 !== 180 && r.player.pitch !== 0)
  // the server's idea of the player matches, and the client was teleported there
  const p = await me(srv)
  assert.deepEqual([p.pos.x, p.pos.y, p.pos.z], [r.player.x, r.player.y, r.player.z])
  assert.equal(p.yaw, Math.round(r.player.yaw * 100) / 100)
  assert.equal(p.pitch, Math.round(r.player.pitch * 100) / 100)
  await until(() => bot.pos && bot.pos.x === r.player.x && bot.pos.z === r.player.z && Math.abs(bot.pos.yaw - r.player.yaw) < 1e-3, 'the client teleported')
  // same seed, same answer (the centre is the spawn point, not the current position)
  const again = await cmd(srv, { cmd: 'face_block', seed: 1 })
  assert.deepEqual(again.block, r.block)
  assert.deepEqual(again.player, r.player)
  // GET form with a block list
  const g = await (await fetch(`http://127.0.0.1:${srv.cmdPort}/face_block?seed=5&blocks=oak_log&min_dist=3&max_dist=4`)).json()
  assert.equal(g.block.name, 'oak_log')
  assert.ok(g.dist.horizontal >= 3 && g.dist.horizontal <= 4)
  await assert.rejects(cmd(srv, { cmd: 'face_block', blocks: ['diamond_block'], radius: 6 }), /face_block: none of 0 diamond_block blocks within 6/)
})

serverTest('labelling: set_inventory exactly, scan sees what the eye sees, excavate, teleport confirmed', async (srv, bot) => {
  // set_inventory: these slots and nothing else; a log in the grid shows its result
  await cmd(srv, { cmd: 'give', item: 'dirt', count: 5, slot: 20 })
  const set = await cmd(srv, { cmd: 'set_inventory', slots: { 36: 'oak_log 3', 44: 'stick', 12: 'coal 7', 2: 'oak_log 1' } })
  assert.deepEqual(set, { ok: true, slots: 4, synced: true }, 'the client answered the sync transaction')
  let p = await me(srv)
  assert.deepEqual(invMap(p), { 0: 'oak_planks:4', 2: 'oak_log:1', 12: 'coal:7', 36: 'oak_log:3', 44: 'stick:1' })
  await until(() => bot.slot(0, 36) === 'oak_log:3' && bot.slot(0, 20) === null && bot.slot(0, 0) === 'oak_planks:4', 'the client to see the new inventory')
  // a bad entry changes nothing and names the slot
  await assert.rejects(cmd(srv, { cmd: 'set_inventory', slots: { 36: 'stick', 7: 'coal' } }), /slot 7: not a grid/)
  await assert.rejects(cmd(srv, { cmd: 'set_inventory', slots: { 40: 'no_such_item 2' } }), /unknown item no_such_item \(slot 40\)/)
  assert.deepEqual(invMap(await me(srv)), invMap(p))

  // A scene in the sky: the player on a stone block at (0, 199, 0) looking south (+z), a log straight ahead
  // behind a stone wall, another log to the side in the open, a third behind the player.
  const put = (x, y, z, block) => cmd(srv, { cmd: 'setblock', x, y, z, block })
  await put(0, 199, 0, 'stone')
  for (let x = -1; x <= 1; x++) for (let y = 200; y <= 203; y++) await put(x, y, 4, 'stone')
  await put(0, 201, 7, 'oak_log') // hidden by the wall
  await put(4, 201, 7, 'birch_log') // in the open, left of the view (east is left when facing south)
  await put(0, 201, -5, 'oak_log') // behind the player
  await cmd(srv, { cmd: 'tp', x: 0.5, y: 200, z: 0.5, yaw: 0, pitch: 0 })
  await until(async () => !(await me(srv)).teleportPending, 'the client to confirm the teleport')
  const scan = await cmd(srv, { cmd: 'scan', names: { trunk: ['*_log'] }, radius: 12, grid: 3 })
  assert.equal(scan.camera, 'minecraft')
  assert.deepEqual(scan.eye, { x: 0.5, y: 201.62, z: 0.5 })
  assert.equal(scan.grid, 3)
  assert.deepEqual(scan.nodes.map(n => [n.name, n.pos.x, n.pos.y, n.pos.z]), [['birch_log', 4, 201, 7]], 'only the log in the open, in front')
  const cells = scan.nodes[0].cells
  // the faces towards the eye: -z (6) and -x (2); 3 x 3 cells each, centres on the face planes
  assert.deepEqual([...new Set(cells.map(c => c[3]))].sort(), [2, 6])
  assert.equal(cells.length, 18)
  assert.ok(cells.filter(c => c[3] === 6).every(c => c[2] === 7 && c[0] > 4 && c[0] < 5 && c[1] > 201 && c[1] < 202))
  assert.ok(cells.filter(c => c[3] === 2).every(c => c[0] === 4))
  // with the wall gone the hidden log is seen; a class radius limits a class
  for (let x = -1; x <= 1; x++) for (let y = 200; y <= 203; y++) await put(x, y, 4, 'air')
  const open = await cmd(srv, { cmd: 'scan', names: { trunk: ['oak_log'] }, radius: 12 })
  assert.deepEqual(open.nodes.map(n => [n.pos.x, n.pos.z]), [[0, 7]])
  const near = await cmd(srv, { cmd: 'scan', names: { trunk: ['*_log'] }, radius: 12, radii: { trunk: 5 } })
  assert.deepEqual(near.nodes, [])

  // excavate: the box becomes air (bedrock and the world outside stay)
  const ex = await cmd(srv, { cmd: 'excavate', min: [10, 60, 10], max: [12, 62, 12] })
  assert.ok(ex.cleared > 0 && ex.cleared <= 27, `cleared ${ex.cleared}`)
  for (const [x, y, z] of [[10, 60, 10], [12, 62, 12], [11, 61, 11]]) assert.equal((await cmd(srv, { cmd: 'getblock', x, y, z })).name, 'air')
  assert.notEqual((await cmd(srv, { cmd: 'getblock', x: 11, y: 59, z: 11 })).name, 'air')
  await assert.rejects(cmd(srv, { cmd: 'excavate', min: [0, 0, 0], max: [100, 1, 1] }), /at most 64 apart/)
})

serverTest('pickup: whole stack into the inventory, never into the crafting grid', async (srv, bot) => {
  await cmd(srv, { cmd: 'give', item: 'oak_log', count: 1, slot: 1 }) // grid: shows planks
  await cmd(srv, { cmd: 'give', item: 'oak_log', count: 10, slot: 38 })
  await cmd(srv, { cmd: 'drop', item: 'oak_log', count: 3 })
  const p = await until(async () => { const p = await me(srv); return invMap(p)[38] === 'oak_log:13' && p }, 'the dropped logs picked up')
  assert.deepEqual(invMap(p), { 0: 'oak_planks:4', 1: 'oak_log:1', 38: 'oak_log:13' })
  await until(() => bot.collected.length === 1 && bot.slot(0, 38) === 'oak_log:13', 'collect packet and slot (client)')
})

serverTest('throwing: click outside with the cursor, Q and ctrl-Q over a slot spawn item entities', async (srv, bot) => {
  await cmd(srv, { cmd: 'give', item: 'dirt', count: 5, slot: 36 })
  await cmd(srv, { cmd: 'give', item: 'stick', count: 3, slot: 37 })
  await until(() => bot.slot(0, 37) === 'stick:3', 'the items (client)')
  const before = bot.spawned.length
  bot.click(0, 36) // dirt onto the cursor
  bot.click(0, -999, 1) // right click outside: throw one
  await until(async () => itemStr((await me(srv)).cursor) === 'dirt:4', 'one dirt thrown from the cursor')
  bot.click(0, -999, 0) // left click outside: throw the rest
  await until(async () => (await me(srv)).cursor === null, 'the cursor emptied')
  bot.click(0, 37, 0, 4) // Q: one stick
  await until(async () => invMap(await me(srv))[37] === 'stick:2', 'one stick thrown')
  bot.click(0, 37, 1, 4) // ctrl-Q: the stack
  await until(async () => !invMap(await me(srv))[37], 'the sticks thrown')
  assert.deepEqual(invMap(await me(srv)), {})
  await until(() => bot.spawned.slice(before).filter(e => e.type === 34).length === 4, 'four item entities (client)')
  const log = srv.logText()
  for (const line of ['dropped 1 dirt (clicked outside', 'dropped 4 dirt (clicked outside', 'dropped 1 stick (Q over', 'dropped 2 stick (Q over']) assert.ok(log.includes(line), line)
})

serverTest('harvest rule: stone dug by hand drops nothing, with a wooden pickaxe cobblestone; a log drops by hand', async (srv, bot) => {
  const base = { x: Math.floor(bot.pos.x) + 2, y: Math.floor(bot.pos.y) + 1, z: Math.floor(bot.pos.z) }
  const dig = async (dx, block) => {
    const at = { x: base.x + dx, y: base.y, z: base.z }
    await cmd(srv, { cmd: 'setblock', ...at, block })
    await until(async () => (await cmd(srv, { cmd: 'getblock', ...at })).name === block, `${block} placed`)
    const before = bot.spawned.filter(e => e.type === 34).length
    bot.client.write('block_dig', { status: 0, location: at, face: 1 })
    await sleep(200)
    bot.client.write('block_dig', { status: 2, location: at, face: 1 })
    await until(async () => (await cmd(srv, { cmd: 'getblock', ...at })).name === 'air', `${block} dug`)
    await sleep(500) // an item entity would have been spawned by now
    return bot.spawned.filter(e => e.type === 34).length - before
  }
  assert.equal(await dig(0, 'stone'), 0, 'stone by hand: no cobblestone')
  assert.ok(srv.logText().includes('stone dug with an empty hand: no drop'))
  assert.equal(await dig(1, 'oak_log'), 1, 'a log by hand drops itself')
  await cmd(srv, { cmd: 'give', item: 'wooden_pickaxe', count: 1, slot: 36 })
  await until(() => bot.slot(0, 36) === 'wooden_pickaxe:1', 'the pickaxe in the held slot (client)')
  assert.equal(await dig(2, 'stone'), 1, 'stone with a wooden pickaxe drops cobblestone')
  await cmd(srv, { cmd: 'give', item: 'dirt', count: 1, slot: 36 })
  assert.equal(await dig(3, 'iron_ore'), 0, 'iron ore with dirt in hand: nothing')
})

serverTest('an attack on an entity that is not there is ignored, the server stays up', async (srv, bot) => {
  // The web client attacks dropped items it aims at; one picked up a moment before took flying-squid down.
  bot.client.write('use_entity', { target: 987654, mouse: 1 })
  await sleep(1500)
  assert.equal(srv.proc.exitCode, null, 'the server is still running')
  assert.ok((await me(srv)).pos, 'and still answers for the player')
  assert.ok(srv.logText().includes('attack on entity 987654, which is not there: ignored'))
})

serverTest('items: the item entities on the ground near the player, nearest first', async (srv, bot) => {
  const p = await me(srv)
  const at = (dx) => ({ x: p.pos.x + dx, y: p.pos.y + 3, z: p.pos.z })
  await cmd(srv, { cmd: 'drop', item: 'oak_log', count: 2, ...at(6) })
  await cmd(srv, { cmd: 'drop', item: 'cobblestone', count: 1, ...at(4) })
  await cmd(srv, { cmd: 'drop', item: 'stick', count: 1, ...at(20) })
  const items = await cmd(srv, { cmd: 'items' })
  assert.deepEqual(items.map(i => `${i.name}:${i.count}`), ['cobblestone:1', 'oak_log:2'])
  assert.ok(items[0].d < items[1].d && Math.abs(items[1].x - (p.pos.x + 6)) < 1, JSON.stringify(items))
  assert.equal((await cmd(srv, { cmd: 'items', radius: 40 })).length, 3)
})

serverTest('a shift-click into a full hotbar moves nothing, and the client that moved it in its own view gets the slot back', async (srv, bot) => {
  const kinds = ['dirt', 'oak_sapling', 'apple', 'wheat_seeds', 'cobblestone', 'stick', 'oak_log', 'oak_planks', 'poppy']
  for (const [i, item] of kinds.entries()) await cmd(srv, { cmd: 'give', item, count: 1, slot: 36 + i })
  await cmd(srv, { cmd: 'give', item: 'crafting_table', count: 1, slot: 20 })
  await until(() => bot.slot(0, 20) === 'crafting_table:1' && bot.slot(0, 44) === 'poppy:1', 'the full hotbar and the table (client)')
  bot.slots[0][20] = null // the web client's own shift-click took it out of its view
  bot.click(0, 20, 0, 1)
  await until(() => bot.slot(0, 20) === 'crafting_table:1', 'the server to send the table\'s slot again')
  let p = await me(srv)
  assert.equal(invMap(p)[20], 'crafting_table:1', 'the table stays in the bag')
  // with a hotbar slot freed (shift-click to the bag), the same click moves it
  bot.click(0, 36, 0, 1)
  p = await until(async () => { const p = await me(srv); return !invMap(p)[36] && p }, 'the dirt off the hotbar')
  bot.click(0, 20, 0, 1)
  p = await until(async () => { const p = await me(srv); return invMap(p)[36] === 'crafting_table:1' && p }, 'the table on the freed slot')
  assert.equal(invMap(p)[20], undefined)
  await until(() => bot.slot(0, 36) === 'crafting_table:1', 'the client to see it there')
})

// ---- furnaces ----
// A furnace two blocks south of the player (the setblock command, front facing the player), opened with a
// block_place on it as the client's right click sends; returns the furnace's position and the window id.
async function placeFurnace (srv, bot) {
  const p0 = await me(srv)
  const at = { x: Math.floor(p0.pos.x), y: Math.floor(p0.pos.y), z: Math.floor(p0.pos.z) + 2 }
  await cmd(srv, { cmd: 'setblock', ...at, block: 'furnace', facing: 'north' })
  assert.equal((await cmd(srv, { cmd: 'getblock', ...at })).name, 'furnace')
  return at
}
async function openFurnace (srv, bot, at) {
  const before = bot.windows.length
  bot.client.write('block_place', { hand: 0, location: at, direction: 2, cursorX: 0.5, cursorY: 0.5, cursorZ: 0, insideBlock: false })
  const w = await until(() => bot.windows.length > before && bot.windows.at(-1), 'open_window for the furnace')
  await until(() => bot.slots[w.windowId]?.length === 39, 'window_items with 39 slots')
  return w
}
const furnaceSlots = (f) => Object.fromEntries(f.slots.map(s => [s.slot, `${s.name}:${s.count}`]))

serverTest('furnace: opens as type 13; iron ore + coal by clicks smelt into an ingot; kept and smelting while closed; taking it is recorded', async (srv, bot) => {
  const at = await placeFurnace(srv, bot)
  await cmd(srv, { cmd: 'set_inventory', slots: { 36: 'iron_ore 1', 37: 'coal 2', 38: 'dirt 1' } })
  const w = await openFurnace(srv, bot, at)
  assert.equal(w.inventoryType, 13, 'numeric 1.14 menu id of minecraft:furnace')
  assert.equal(w.windowTitle, 'Furnace')
  const N = w.windowId
  assert.equal(bot.slot(N, 30), 'iron_ore:1', 'hotbar slot 0 is furnace slot 30')
  assert.equal(bot.slot(N, 31), 'coal:2')
  assert.deepEqual([0, 1, 2].map(s => bot.slot(N, s)), [null, null, null])
  let p = await me(srv)
  assert.deepEqual([p.window.kind, p.window.type, p.window.title, p.window.slots], ['furnace', 'minecraft:furnace', 'Furnace', []])
  assert.deepEqual(p.window.pos, at)

  bot.click(N, 30) // the ore onto the cursor, into the input
  bot.click(N, 0)
  bot.click(N, 31) // both coal into the fuel slot
  bot.click(N, 1)
  // one coal starts burning at once (the input can smelt): 1600 ticks of fire, progress rising towards 200
  await until(() => bot.props.some(q => q.windowId === N && q.property === 0 && q.value > 1500) &&
    bot.props.some(q => q.windowId === N && q.property === 1 && q.value === 1600) &&
    bot.props.some(q => q.windowId === N && q.property === 3 && q.value === 200) &&
    new Set(bot.props.filter(q => q.windowId === N && q.property === 2 && q.value > 0).map(q => q.value)).size >= 2,
  'progress packets: fuel 1600, cook progress rising')
  p = await me(srv)
  assert.deepEqual(furnaceSlots(p.window), { 0: 'iron_ore:1', 1: 'coal:1' }, 'one coal used up')
  assert.ok(p.window.burning && p.window.burnTotal === 1600 && p.window.cook > 0 && p.window.cookTotal === 200, JSON.stringify(p.window))
  assert.equal(invMap(p)[36], undefined)
  assert.equal(invMap(p)[37], undefined)
  await until(() => bot.slot(N, 1) === 'coal:1', 'the client to see one coal left')
  await until(async () => (await cmd(srv, { cmd: 'furnace', ...at })).lit, 'the block lit')

  // close: the furnace keeps its slots and goes on smelting
  bot.client.write('close_window', { windowId: N })
  p = await until(async () => { const p = await me(srv); return !p.window && p }, 'the window closed')
  assert.equal(p.cursor, null)
  const closed = await cmd(srv, { cmd: 'furnace', ...at })
  assert.deepEqual(furnaceSlots(closed), { 0: 'iron_ore:1', 1: 'coal:1' })
  assert.deepEqual(closed.viewers, [])
  const done = await until(async () => { const f = await cmd(srv, { cmd: 'furnace', ...at }); return furnaceSlots(f)[2] && f }, 'the ingot (200 ticks = 10 s)', 15000)
  assert.deepEqual(furnaceSlots(done), { 1: 'coal:1', 2: 'iron_ingot:1' })
  assert.ok(done.burning && done.cook === 0, JSON.stringify(done))
  assert.deepEqual((await me(srv)).smelted, [], 'nothing taken yet')

  // reopen: the same contents; take the ingot with a click and put it into hotbar slot 2
  const w2 = await openFurnace(srv, bot, at)
  const M = w2.windowId
  assert.notEqual(M, N)
  assert.deepEqual([0, 1, 2].map(s => bot.slot(M, s)), [null, 'coal:1', 'iron_ingot:1'])
  bot.click(M, 2)
  await until(async () => itemStr((await me(srv)).cursor) === 'iron_ingot:1', 'the ingot on the cursor')
  bot.click(M, 33)
  p = await until(async () => { const p = await me(srv); return invMap(p)[39] && p }, 'the ingot in hotbar slot 3')
  assert.deepEqual(invMap(p), { 38: 'dirt:1', 39: 'iron_ingot:1' })
  assert.equal(p.cursor, null)
  assert.deepEqual(p.smelted.map(s => [s.name, s.count, s.via]), [['iron_ingot', 1, 'furnace']])
  assert.deepEqual(furnaceSlots(p.window), { 1: 'coal:1' }, 'still one coal: only one burnt')
  await until(() => bot.slot(M, 2) === null && bot.slot(M, 33) === 'iron_ingot:1', 'the client to see the result taken')
  // the result slot takes nothing back
  bot.click(M, 33)
  bot.click(M, 2)
  await cmd(srv, { cmd: 'sync' }) // the client's answer comes after its clicks: both are handled now
  assert.equal(itemStr((await me(srv)).cursor), 'iron_ingot:1', 'the ingot stays on the cursor')
  assert.deepEqual(furnaceSlots(await cmd(srv, { cmd: 'furnace', ...at })), { 1: 'coal:1' })
  const r = await cmd(srv, { cmd: 'close_window' })
  assert.deepEqual([r.window, r.returned], ['furnace', ['cursor 1 iron_ingot']])
  await until(() => bot.closed.some(c => c.windowId === M), 'the client told to close')
})

serverTest('furnace: shift-click sends ore to the input, coal to the fuel, the result into the inventory; the fuel slot refuses dirt', async (srv, bot) => {
  const at = await placeFurnace(srv, bot)
  await cmd(srv, { cmd: 'set_inventory', slots: { 9: 'iron_ore 3', 10: 'coal 2', 11: 'oak_log 2', 36: 'dirt 4' } })
  await cmd(srv, { cmd: 'furnace', ...at, slots: { 2: 'iron_ingot 3' } }) // an earlier smelt's result
  const N = (await openFurnace(srv, bot, at)).windowId
  assert.equal(bot.slot(N, 2), 'iron_ingot:3')
  bot.click(N, 3, 0, 1) // ore (window-0 slot 9) -> input
  bot.click(N, 4, 0, 1) // coal -> fuel
  let f = await until(async () => { const f = await cmd(srv, { cmd: 'furnace', ...at }); return f.burning && f }, 'the furnace burning')
  assert.deepEqual(furnaceSlots(f), { 0: 'iron_ore:3', 1: 'coal:1', 2: 'iron_ingot:3' }, 'one coal burning: the ore can smelt onto the ingots')
  await until(() => bot.slot(N, 0) === 'iron_ore:3' && bot.slot(N, 1) === 'coal:1', 'the client to see input and fuel')
  bot.click(N, 5, 0, 1) // a log smelts (to charcoal) but the input holds ore: vanilla moves nothing, not even to the fuel
  bot.click(N, 30, 0, 1) // dirt: neither smeltable nor fuel -> hotbar to main, first empty slot (the ore's)
  let p = await until(async () => { const p = await me(srv); return invMap(p)[9] && p }, 'dirt in the main inventory')
  assert.deepEqual(invMap(p), { 9: 'dirt:4', 11: 'oak_log:2' })
  bot.click(N, 3) // dirt onto the cursor; the fuel slot does not take it
  bot.click(N, 1)
  await cmd(srv, { cmd: 'sync' }) // the client's answer comes after its clicks: both are handled now
  p = await me(srv)
  assert.equal(itemStr(p.cursor), 'dirt:4')
  assert.deepEqual(furnaceSlots(p.window), { 0: 'iron_ore:3', 1: 'coal:1', 2: 'iron_ingot:3' })
  bot.click(N, 3) // put it back
  bot.click(N, 2, 0, 1) // the result -> inventory, last hotbar slot first
  p = await until(async () => { const p = await me(srv); return invMap(p)[44] && p }, 'the ingots in the inventory')
  assert.deepEqual(invMap(p), { 9: 'dirt:4', 11: 'oak_log:2', 44: 'iron_ingot:3' })
  assert.deepEqual(p.smelted.map(s => [s.name, s.count, s.via]), [['iron_ingot', 3, 'furnace']])
  bot.click(N, 0, 0, 1) // the input -> inventory, main first: the first empty main slot
  p = await until(async () => { const p = await me(srv); return invMap(p)[10] && p }, 'the ore back in the inventory')
  assert.deepEqual(invMap(p), { 9: 'dirt:4', 10: 'iron_ore:3', 11: 'oak_log:2', 44: 'iron_ingot:3' })
  f = await cmd(srv, { cmd: 'furnace', ...at })
  assert.deepEqual(furnaceSlots(f), { 1: 'coal:1' })
  assert.equal(f.cook, 0, 'no input: no progress')
  await until(() => bot.slot(N, 0) === null && bot.slot(N, 2) === null && bot.slot(N, 38) === 'iron_ingot:3', 'the client to see it')
  bot.click(N, 1, 0, 1) // the unburnt fuel -> inventory (the client's smelt_iron_ore takes it back so)
  p = await until(async () => { const p = await me(srv); return invMap(p)[12] && p }, 'the coal back in the inventory')
  assert.deepEqual(invMap(p), { 9: 'dirt:4', 10: 'iron_ore:3', 11: 'oak_log:2', 12: 'coal:1', 44: 'iron_ingot:3' })
  assert.deepEqual(furnaceSlots(await cmd(srv, { cmd: 'furnace', ...at })), {})
})

serverTest('furnace: dirt with fuel burns nothing, a new input resets the progress, digging the furnace drops its contents', async (srv, bot) => {
  const at = await placeFurnace(srv, bot)
  await assert.rejects(cmd(srv, { cmd: 'furnace', ...at, y: at.y - 1 }), /not a furnace/)
  await assert.rejects(cmd(srv, { cmd: 'furnace', ...at, slots: { 3: 'coal' } }), /slot 3 is not 0/)
  let f = await cmd(srv, { cmd: 'furnace', ...at, slots: { 0: 'dirt 1', 1: 'coal 3' } })
  await sleep(1000)
  f = await cmd(srv, { cmd: 'furnace', ...at })
  assert.deepEqual(furnaceSlots(f), { 0: 'dirt:1', 1: 'coal:3' }, 'no coal burnt for dirt')
  assert.deepEqual([f.burn, f.cook, f.burning, f.lit], [0, 0, false, false])
  f = await cmd(srv, { cmd: 'furnace', ...at, slots: { 0: 'sand 2' } })
  f = await until(async () => { const f = await cmd(srv, { cmd: 'furnace', ...at }); return f.cook > 5 && f }, 'sand cooking')
  assert.deepEqual(furnaceSlots(f), { 0: 'sand:2', 1: 'coal:2' })
  f = await cmd(srv, { cmd: 'furnace', ...at, slots: { 0: 'cobblestone 1' } })
  assert.equal(f.cook, 0, 'another input starts from 0')
  await cmd(srv, { cmd: 'furnace', ...at, slots: { 0: null } })
  await sleep(300)
  f = await cmd(srv, { cmd: 'furnace', ...at })
  assert.ok(f.burning && f.cook === 0, `still burning, no progress without input: ${JSON.stringify(f)}`)

  // dug by hand: the furnace block needs a pickaxe, its contents drop anyway
  await cmd(srv, { cmd: 'furnace', ...at, slots: { 0: 'iron_ore 2', 2: 'iron_ingot 1' } })
  const before = bot.spawned.filter(e => e.type === 34).length
  bot.client.write('block_dig', { status: 0, location: at, face: 2 })
  await sleep(200)
  bot.client.write('block_dig', { status: 2, location: at, face: 2 })
  await until(async () => (await cmd(srv, { cmd: 'getblock', ...at })).name === 'air', 'the furnace dug')
  await until(() => bot.spawned.filter(e => e.type === 34).length - before === 3, 'three item entities: ore, coal, ingot')
  assert.match(srv.logText(), new RegExp(`furnace at ${at.x},${at.y},${at.z} dug by tester: dropped 2 iron_ore, 2 coal, 1 iron_ingot`))
  assert.match(srv.logText(), /furnace dug with an empty hand: no drop/)
  // a new furnace there starts empty
  await cmd(srv, { cmd: 'setblock', ...at, block: 'furnace' })
  assert.deepEqual((await cmd(srv, { cmd: 'furnace', ...at })).slots, [])
})
