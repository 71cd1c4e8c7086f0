//! The skill library and real input: `vistawise skills` against a real X server (Xvfb + jwm)
//! and a real window that records what it receives.

use crate::support;

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Received, TestWindow, XServer, binary};

const TITLE: &str = "Minecraft test window";
const KEY_W: u32 = 0x77;
const KEY_SHIFT: u32 = 0xffe1;

fn vistawise(display: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = binary();
    cmd.args(args)
        .env("VISTAWISE_GAME__WINDOW_TITLE", TITLE)
        .env("VISTAWISE_GAME__GUI_SCALE", "2");
    match display {
        Some(d) => cmd.env("DISPLAY", d),
        None => cmd.env_remove("DISPLAY"),
    };
    cmd
}

fn output(cmd: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("run vistawise");
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

#[test]
fn the_library_offers_every_skill_of_the_papers_table_8() {
    let (code, out, err) = output(&mut vistawise(None, &["skills", "list", "--json"]));
    assert_eq!(code, 0, "{err}");
    let skills: serde_json::Value = serde_json::from_str(&out).expect("json");
    let names: Vec<&str> = skills
        .as_array()
        .expect("array")
        .iter()
        .map(|s| s["name"].as_str().expect("name"))
        .collect();
    for table8 in [
        "craft_plank",
        "craft_stick",
        "craft_wood_pickaxe",
        "craft_stone_pickaxe",
        "craft_furnace",
        "craft_iron_pickaxe",
        "smelt_iron_ore",
        "mine_log",
        "mine_iron_ore",
        "mine_diamond_ore",
        "dig_horizontal_mine_tunnels",
        "dig_vertical_mine_tunnels",
        "place_blocks_underfoot",
        "put_functional_block",
        "move_item_to_hotbar",
        "move_forward",
        "turn",
        "turn_and_move_forward",
        "open_inventory",
        "close_screen",
        "select_hotbar_slot",
        "craft_crafting_table",
    ] {
        assert!(names.contains(&table8), "{table8} missing from {names:?}");
    }
}

#[test]
fn a_broken_skill_file_is_reported_with_file_and_line() {
    let root = tempfile::tempdir().expect("temp");
    let games = root.path().join("config/games");
    let skills = root.path().join("skills/minecraft");
    std::fs::create_dir_all(&games).expect("mkdir");
    std::fs::create_dir_all(&skills).expect("mkdir");
    std::fs::copy(
        support::repo().join("config/games/minecraft.toml"),
        games.join("minecraft.toml"),
    )
    .expect("copy");
    std::fs::write(
        skills.join("bad.toml"),
        "# comment\n\n[[skill]]\nname = \"fly\"\ndescription = \"Fly.\"\n\
         steps = [{ op = \"key\", key = \"jetpack\" }]\n",
    )
    .expect("write");
    let root_arg = root.path().to_str().expect("utf8");
    let (code, _, err) = output(&mut vistawise(
        None,
        &["skills", "list", "--root", root_arg],
    ));
    assert_ne!(code, 0);
    assert!(err.contains("bad.toml:3: skill fly: step 1:"), "{err}");
    assert!(err.contains("\"jetpack\" is neither an action"), "{err}");
}

#[test]
fn invalid_calls_are_refused_before_anything_moves() {
    let x = XServer::start(1280, 800);
    let window = TestWindow::open_recording(&x.display, TITLE, 854, 480);
    window.activate(&x.display);
    for (args, expected) in [
        (
            vec!["craft_stick", "900", "10"],
            "p_x = 900 is outside 0-853",
        ),
        (vec!["craft_stick", "10"], "takes 2 arguments, got 1"),
        (
            vec!["mine_iron_ore", "k=1.5", "d=1"],
            "k must be a whole number",
        ),
        (vec!["fly_away"], "unknown skill \"fly_away\""),
    ] {
        let mut full = vec!["skills", "run"];
        full.extend(&args);
        let (code, _, err) = output(&mut vistawise(Some(&x.display), &full));
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    std::thread::sleep(Duration::from_millis(200));
    let got = window.input();
    assert!(
        !got.iter().any(|e| !matches!(e, Received::Motion { .. })),
        "no key or button may reach the window: {got:?}"
    );
}

#[test]
fn a_skill_sends_exactly_its_planned_events_inside_the_window() {
    let x = XServer::start(1280, 800);
    let window = TestWindow::open_recording(&x.display, TITLE, 854, 480);
    window.activate(&x.display);
    let args = ["skills", "run", "craft_stick", "120", "400"];
    let (code, planned, err) = output(&mut vistawise(
        None,
        &[&args[..], &["--dry-run", "--window-size", "854x480"]].concat(),
    ));
    assert_eq!(code, 0, "{err}");
    let (code, sent, err) = output(&mut vistawise(Some(&x.display), &args));
    assert_eq!(code, 0, "{err}");
    assert_eq!(sent, planned, "the real run sends what the dry run plans");

    std::thread::sleep(Duration::from_millis(300));
    let got = window.input();
    let presses: Vec<Received> = got
        .iter()
        .copied()
        .filter(|e| !matches!(e, Received::Motion { .. }))
        .collect();
    // Every button lands where the plan put the pointer (window pixels), in order: pick up the
    // planks, one into craft slots 0 and 2 (854x480 at GUI scale 2: (462, 126) and (462, 162)),
    // put the rest back, shift-click the result (574, 146).
    let click = |button: u8, x: i16, y: i16| {
        [
            Received::ButtonPress { button, x, y },
            Received::ButtonRelease { button, x, y },
        ]
    };
    let mut expected = Vec::new();
    expected.extend(click(1, 120, 400));
    expected.extend(click(3, 462, 126));
    expected.extend(click(3, 462, 162));
    expected.extend(click(1, 120, 400));
    expected.push(Received::KeyPress(KEY_SHIFT));
    expected.extend(click(1, 574, 146));
    expected.push(Received::KeyRelease(KEY_SHIFT));
    assert_eq!(presses, expected, "all received: {got:?}");
    for e in &got {
        if let Received::Motion { x, y } = *e {
            assert!((0..854).contains(&x) && (0..480).contains(&y), "{e:?}");
        }
    }
}

#[test]
fn camera_turns_are_relative_moves_in_bounded_steps() {
    let x = XServer::start(1280, 800);
    let window = TestWindow::open_recording(&x.display, TITLE, 854, 480);
    window.activate(&x.display);
    // Start in the middle so the relative moves stay inside the window.
    let status = Command::new("xdotool")
        .args([
            "mousemove",
            "--window",
            &window.id.to_string(),
            "300",
            "240",
        ])
        .env("DISPLAY", &x.display)
        .status()
        .expect("xdotool");
    assert!(status.success());
    std::thread::sleep(Duration::from_millis(200));
    window.input();
    // 100 px right of the crosshair at 854x480, FOV 70: atan(100 / 342.7) = 16.27 deg
    // = 108 counts at 0.15 deg/count, sent as 40 + 40 + 28.
    let (code, out, err) = output(&mut vistawise(
        Some(&x.display),
        &["skills", "run", "turn", "100", "0"],
    ));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("move_by"))
            .collect::<Vec<_>>(),
        ["move_by 40,0", "move_by 40,0", "move_by 28,0"]
    );
    std::thread::sleep(Duration::from_millis(300));
    let motions: Vec<(i16, i16)> = window
        .input()
        .iter()
        .filter_map(|e| match *e {
            Received::Motion { x, y } => Some((x, y)),
            _ => None,
        })
        .collect();
    assert_eq!(motions, [(340, 240), (380, 240), (408, 240)]);
}

/// Starts `move_forward 8` (holds W for 8 s) and waits until the window sees W pressed.
fn start_holding_w(x: &XServer, window: &TestWindow) -> (Child, Vec<Received>) {
    start_holding_w_with(x, window, &[])
}

fn start_holding_w_with(
    x: &XServer,
    window: &TestWindow,
    env: &[(&str, &str)],
) -> (Child, Vec<Received>) {
    let child = vistawise(Some(&x.display), &["skills", "run", "move_forward", "8"])
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut seen = Vec::new();
    support::wait_until(
        Duration::from_secs(10),
        || {
            seen.extend(window.input());
            seen.contains(&Received::KeyPress(KEY_W))
        },
        "W to be pressed",
    );
    (child, seen)
}

fn finish(child: Child, started: Instant) -> (i32, String, Duration) {
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        started.elapsed(),
    )
}

#[test]
fn the_emergency_key_stops_a_skill_and_releases_what_it_held() {
    let x = XServer::start(1280, 800);
    let window = TestWindow::open_recording(&x.display, TITLE, 854, 480);
    window.activate(&x.display);
    let (child, mut seen) = start_holding_w(&x, &window);
    let started = Instant::now();
    let status = Command::new("xdotool")
        .args(["key", "F12"])
        .env("DISPLAY", &x.display)
        .status()
        .expect("xdotool");
    assert!(status.success());
    let (code, err, took) = finish(child, started);
    assert_ne!(code, 0);
    assert!(err.contains("emergency stop key pressed"), "{err}");
    assert!(took < Duration::from_secs(2), "stopping took {took:?}");
    std::thread::sleep(Duration::from_millis(200));
    seen.extend(window.input());
    assert_eq!(
        seen.iter()
            .filter(|e| **e == Received::KeyRelease(KEY_W))
            .count(),
        1,
        "W released exactly once: {seen:?}"
    );
    // The grabbed F12 never reached the game window.
    assert!(!seen.contains(&Received::KeyPress(0xffc9)), "{seen:?}");
}

#[test]
fn sigint_and_sigterm_release_held_keys() {
    let x = XServer::start(1280, 800);
    let window = TestWindow::open_recording(&x.display, TITLE, 854, 480);
    window.activate(&x.display);
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let (child, mut seen) = start_holding_w(&x, &window);
        let started = Instant::now();
        // SAFETY: signalling our own child process by its pid.
        let rc = unsafe { libc::kill(child.id() as i32, signal) };
        assert_eq!(rc, 0);
        let (code, err, took) = finish(child, started);
        assert_ne!(code, 0);
        assert!(err.contains("interrupted"), "{err}");
        assert!(took < Duration::from_secs(2), "stopping took {took:?}");
        std::thread::sleep(Duration::from_millis(200));
        seen.extend(window.input());
        assert!(seen.contains(&Received::KeyRelease(KEY_W)), "{seen:?}");
    }
}

#[test]
fn losing_the_focus_stops_the_skill_and_an_unfocused_window_gets_nothing() {
    let x = XServer::start(1280, 800);
    let window = TestWindow::open_recording(&x.display, TITLE, 600, 400);
    let other = TestWindow::open(&x.display, "another program", 300, 200);
    other.activate(&x.display);
    let (code, _, err) = output(&mut vistawise(
        Some(&x.display),
        &["skills", "run", "move_forward", "1"],
    ));
    assert_ne!(code, 0);
    assert!(err.contains("does not have the focus"), "{err}");
    assert!(
        window
            .input()
            .iter()
            .all(|e| matches!(e, Received::Motion { .. }))
    );

    window.activate(&x.display);
    let (child, mut seen) = start_holding_w(&x, &window);
    let started = Instant::now();
    other.activate(&x.display);
    let (code, err, took) = finish(child, started);
    assert_ne!(code, 0);
    assert!(err.contains("lost focus"), "{err}");
    assert!(took < Duration::from_secs(2), "stopping took {took:?}");
    std::thread::sleep(Duration::from_millis(200));
    seen.extend(window.input());
    // The release goes to whichever window has the focus now; what matters is that the X server
    // no longer holds W down.
    let w_code = xmodmap_keycode(&x.display, "w");
    let held = query_keymap(&x.display, w_code);
    assert!(!held, "W still held after the focus was lost");
}

fn xmodmap_keycode(display: &str, sym: &str) -> u8 {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::ConnectionExt;
    let (conn, _) = x11rb::connect(Some(display)).expect("connect");
    let setup = conn.setup();
    let (min, max) = (setup.min_keycode, setup.max_keycode);
    let map = conn
        .get_keyboard_mapping(min, max - min + 1)
        .expect("map")
        .reply()
        .expect("reply");
    let per = usize::from(map.keysyms_per_keycode);
    let want = u32::from(sym.as_bytes()[0]);
    map.keysyms
        .chunks(per)
        .position(|s| s.first() == Some(&want))
        .map(|i| min + i as u8)
        .expect("keycode")
}

fn query_keymap(display: &str, code: u8) -> bool {
    use x11rb::protocol::xproto::ConnectionExt;
    let (conn, _) = x11rb::connect(Some(display)).expect("connect");
    let keys = conn
        .query_keymap()
        .expect("keymap")
        .reply()
        .expect("reply")
        .keys;
    keys[usize::from(code / 8)] & (1 << (code % 8)) != 0
}

#[test]
fn holding_the_pointer_in_a_screen_corner_stops_the_skill() {
    let x = XServer::start(1280, 800);
    let window = TestWindow::open_recording(&x.display, TITLE, 854, 480);
    window.activate(&x.display);
    let (child, _) = start_holding_w_with(
        &x,
        &window,
        &[("VISTAWISE_SAFETY__CORNER_STOP_SECS", "0.3")],
    );
    let started = Instant::now();
    let status = Command::new("xdotool")
        .args(["mousemove", "1279", "0"])
        .env("DISPLAY", &x.display)
        .status()
        .expect("xdotool");
    assert!(status.success());
    let (code, err, took) = finish(child, started);
    assert_ne!(code, 0);
    assert!(err.contains("pointer held in a screen corner"), "{err}");
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(2),
        "stopped after {took:?}"
    );
    let w_code = xmodmap_keycode(&x.display, "w");
    assert!(!query_keymap(&x.display, w_code), "W still held");
}

/// `skills run turn 100 0` with the browser client's profile (`grab_pointer = true`) on `x`:
/// exit code, stdout, stderr.
fn web_client_turn(x: &XServer) -> (i32, String, String) {
    output(&mut vistawise(
        Some(&x.display),
        &[
            "--game",
            "minecraft-web",
            "skills",
            "run",
            "turn",
            "100",
            "0",
        ],
    ))
}

/// A game that takes the pointer (the browser client's pointer lock): a call that turns the
/// view clicks the window centre while the cursor shows, waits until the game hides it, and
/// only then turns (turns sent before the page held its lock were lost).
#[test]
fn a_turn_clicks_the_centre_until_the_game_hides_the_pointer() {
    let x = XServer::start(1280, 800);
    let window = TestWindow::open_recording(&x.display, TITLE, 854, 480);
    window.activate(&x.display);
    let game = support::hide_pointer_when_clicked(&x.display, window.id, Duration::from_secs(20));
    window.input();
    let (code, out, err) = web_client_turn(&x);
    assert_eq!(code, 0, "{err}");
    let (_cursor, clicked) = game.join().expect("game thread");
    assert!(clicked, "no click reached the game");
    assert!(out.lines().any(|l| l == "grab_pointer 427,240"), "{out}");
    std::thread::sleep(Duration::from_millis(300));
    let got = window.input();
    // The one-pixel cursor probe, the click at the centre, then the turn.
    let click = got.iter().position(|e| {
        matches!(
            e,
            Received::ButtonPress {
                button: 1,
                x: 427,
                y: 240
            }
        )
    });
    let Some(c) = click else {
        panic!("a click at the centre: {got:?}");
    };
    assert!(
        got[c..]
            .iter()
            .any(|e| matches!(e, Received::Motion { x, .. } if *x > 427)),
        "the turn after the click: {got:?}"
    );
}

/// A game that already hides the pointer holds it: the turn goes without a click (a click
/// in a game would punch whatever the crosshair is on).
#[test]
fn a_game_that_hides_the_pointer_is_turned_without_a_click() {
    let x = XServer::start(1280, 800);
    let window = TestWindow::open_recording(&x.display, TITLE, 854, 480);
    window.activate(&x.display);
    support::hide_pointer(&window.conn, window.id);
    let status = Command::new("xdotool")
        .args(["mousemove", "400", "200"])
        .env("DISPLAY", &x.display)
        .status()
        .expect("xdotool");
    assert!(status.success());
    window.input();
    let (code, out, err) = web_client_turn(&x);
    assert_eq!(code, 0, "{err}");
    std::thread::sleep(Duration::from_millis(300));
    let got = window.input();
    assert!(
        !got.iter()
            .any(|e| matches!(e, Received::ButtonPress { .. })),
        "a click on a game that held the pointer: {got:?}\n{out}"
    );
    // A one-pixel probe of the cursor and back, then the turn itself.
    let start = got.iter().find_map(|e| match e {
        Received::Motion { x, .. } => Some(*x - 1),
        _ => None,
    });
    assert!(
        start.is_some_and(|x0| got
            .iter()
            .any(|e| matches!(e, Received::Motion { x, .. } if *x > x0 + 20))),
        "the turn: {got:?}"
    );
}

/// A game that never takes the pointer: the call fails after two clicks, naming why, and
/// sends no turn into a window that would only move the cursor.
#[test]
fn a_game_that_never_takes_the_pointer_fails_the_turn() {
    let x = XServer::start(1280, 800);
    let window = TestWindow::open_recording(&x.display, TITLE, 854, 480);
    window.activate(&x.display);
    window.input();
    let (code, _, err) = web_client_turn(&x);
    assert_ne!(code, 0);
    assert!(err.contains("did not take the pointer"), "{err}");
    let got = window.input();
    let clicks = got
        .iter()
        .filter(|e| matches!(e, Received::ButtonPress { button: 1, .. }))
        .count();
    assert_eq!(clicks, 2, "{got:?}");
    // Nothing moves after the last click (before the clicks: the one-pixel cursor probe).
    let last_click = got
        .iter()
        .rposition(|e| matches!(e, Received::ButtonPress { .. }))
        .unwrap_or(0);
    assert!(
        !got[last_click..]
            .iter()
            .any(|e| matches!(e, Received::Motion { x, .. } if *x != 427)),
        "a turn after a refused grab: {got:?}"
    );
}

/// The pointer relative to `window`, and the buttons held (X button numbers).
fn pointer_in(display: &str, window: u32) -> ((i32, i32), Vec<u8>) {
    use x11rb::protocol::xproto::{ConnectionExt, KeyButMask};
    let (conn, _) = x11rb::connect(Some(display)).expect("connect");
    let p = conn
        .query_pointer(window)
        .expect("query")
        .reply()
        .expect("reply");
    let held = [
        (1, KeyButMask::BUTTON1),
        (2, KeyButMask::BUTTON2),
        (3, KeyButMask::BUTTON3),
    ]
    .into_iter()
    .filter(|(_, bit)| p.mask.contains(*bit))
    .map(|(b, _)| b)
    .collect();
    ((i32::from(p.win_x), i32::from(p.win_y)), held)
}

fn xdotool(display: &str, args: &[&str]) {
    let status = Command::new("xdotool")
        .args(args)
        .env("DISPLAY", display)
        .status()
        .expect("xdotool");
    assert!(status.success(), "xdotool {args:?}");
}

/// A game that does not re-centre the pointer (this window, or a game showing a screen):
/// relative moves that add up past the window stop at its edge with an error, and a click with
/// the pointer off the window is not sent.
#[test]
fn relative_moves_never_take_the_pointer_out_of_the_window() {
    let x = XServer::start(1280, 800);
    let window = TestWindow::open_recording(&x.display, TITLE, 854, 480);
    window.activate(&x.display);
    let id = window.id.to_string();
    for (from, turn) in [
        (("10", "10"), ["-1920", "-1080"]),
        (("840", "470"), ["1920", "1080"]),
    ] {
        xdotool(&x.display, &["mousemove", "--window", &id, from.0, from.1]);
        std::thread::sleep(Duration::from_millis(200));
        let (code, _, err) = output(&mut vistawise(
            Some(&x.display),
            &["skills", "run", "turn", turn[0], turn[1]],
        ));
        assert_ne!(code, 0, "turn {turn:?}");
        assert!(err.contains("would leave the 854x480 game window"), "{err}");
        let ((px, py), _) = pointer_in(&x.display, window.id);
        assert!(
            (0..854).contains(&px) && (0..480).contains(&py),
            "turn {turn:?} from {from:?} left the pointer at {px},{py}"
        );
    }
    // The pointer off the window (beside it, not in a screen corner): no click is sent.
    xdotool(&x.display, &["mousemove", "--window", &id, "900", "100"]);
    std::thread::sleep(Duration::from_millis(200));
    window.input();
    let (code, _, err) = output(&mut vistawise(
        Some(&x.display),
        &["skills", "run", "mine_log", "0.2"],
    ));
    assert_ne!(code, 0);
    assert!(err.contains("outside the 854x480 game window"), "{err}");
    std::thread::sleep(Duration::from_millis(200));
    let got = window.input();
    assert!(
        !got.iter()
            .any(|e| matches!(e, Received::ButtonPress { .. })),
        "{got:?}"
    );
    assert!(pointer_in(&x.display, window.id).1.is_empty());
}

#[test]
fn a_kill_9_mid_hold_leaves_nothing_held() {
    let x = XServer::start(1280, 800);
    let window = TestWindow::open_recording(&x.display, TITLE, 854, 480);
    window.activate(&x.display);
    let w_code = xmodmap_keycode(&x.display, "w");
    let (mut child, _) = start_holding_w(&x, &window);
    assert!(query_keymap(&x.display, w_code), "W held before the kill");
    child.kill().expect("kill -9");
    child.wait().expect("wait");
    // The input guard sees the agent's pipe close and releases W.
    support::wait_until(
        Duration::from_secs(5),
        || !query_keymap(&x.display, w_code),
        "W to be released after kill -9",
    );
}

#[test]
fn the_next_start_releases_what_an_earlier_run_left_held() {
    let x = XServer::start(1280, 800);
    let window = TestWindow::open_recording(&x.display, TITLE, 854, 480);
    window.activate(&x.display);
    let id = window.id.to_string();
    xdotool(&x.display, &["mousemove", "--window", &id, "427", "240"]);
    // What a process killed before the guard existed left behind.
    xdotool(&x.display, &["keydown", "w"]);
    xdotool(&x.display, &["mousedown", "1"]);
    let w_code = xmodmap_keycode(&x.display, "w");
    assert!(query_keymap(&x.display, w_code));
    assert_eq!(pointer_in(&x.display, window.id).1, [1]);
    let (code, _, err) = output(&mut vistawise(
        Some(&x.display),
        &["skills", "run", "turn", "10", "0"],
    ));
    assert_eq!(code, 0, "{err}");
    assert!(!query_keymap(&x.display, w_code), "W still held");
    assert!(
        pointer_in(&x.display, window.id).1.is_empty(),
        "button 1 still held"
    );
}

#[test]
fn a_bad_key_binding_is_reported_at_its_line_in_the_profile() {
    let root = tempfile::tempdir().expect("temp");
    let games = root.path().join("config/games");
    std::fs::create_dir_all(&games).expect("mkdir");
    let profile = std::fs::read_to_string(support::repo().join("config/games/minecraft.toml"))
        .expect("profile");
    let line = profile
        .lines()
        .position(|l| l.trim() == "inventory = \"e\"")
        .expect("the inventory binding")
        + 1;
    std::fs::write(
        games.join("minecraft.toml"),
        profile.replace("inventory = \"e\"", "inventory = \"ee\""),
    )
    .expect("write");
    let status = Command::new("cp")
        .arg("-r")
        .arg(support::repo().join("skills"))
        .arg(root.path())
        .status()
        .expect("cp");
    assert!(status.success());
    let root_arg = root.path().to_str().expect("utf8");
    let (code, _, err) = output(&mut vistawise(
        None,
        &["skills", "list", "--root", root_arg],
    ));
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!("minecraft.toml:{line}: [keys] inventory = \"ee\"")),
        "{err}"
    );
    assert!(!err.contains("skills/minecraft/"), "{err}");
}
