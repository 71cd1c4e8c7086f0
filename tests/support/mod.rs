//! Real components for integration tests: an Xvfb display with the jwm window manager, a small
//! real X11 window, and paths to the built binary and fixtures.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    AtomEnum, ConnectionExt, CreateWindowAux, EventMask, PropMode, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The paths in a folder, sorted (a dataset's `labels/`, `images/`).
pub fn sorted_files(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    paths.sort();
    paths
}

pub fn fixture(rel: &str) -> PathBuf {
    repo().join("tests/fixtures").join(rel)
}

/// The `vistawise` binary Cargo built for this test run.
pub fn binary() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vistawise"));
    cmd.current_dir(repo());
    cmd
}

/// The ONNX Runtime library the tests use (scripts/setup.sh installs it).
pub fn ort_lib() -> PathBuf {
    std::env::var_os("VISTAWISE_ORT_LIB")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".ort/onnxruntime/capi/libonnxruntime.so.1.31.1"))
}

/// The all-MiniLM-L6-v2 folder (model.onnx + vocab.txt) that scripts/fetch-minilm.sh builds.
pub fn minilm_dir() -> PathBuf {
    let dir = std::env::var_os("VISTAWISE_EMBEDDING__MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".work/models/minilm"));
    assert!(
        dir.join("model.onnx").is_file() && dir.join("vocab.txt").is_file(),
        "{} lacks model.onnx / vocab.txt: run `bash scripts/fetch-minilm.sh`",
        dir.display()
    );
    dir
}

/// The data folder of the npm package minecraft-assets (Minecraft's textures, one folder per game
/// version) that scripts/fetch-minecraft-assets.sh installs under $VISTAWISE_MC_NPM (default
/// .work/npm). Panics with the fix when it is missing: the textures are never committed.
pub fn minecraft_assets() -> PathBuf {
    let prefix = std::env::var_os("VISTAWISE_MC_NPM")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".work/npm"));
    let data = repo()
        .join(prefix)
        .join("node_modules/minecraft-assets/minecraft-assets/data");
    assert!(
        data.join("1.19.1/font/ascii.png").is_file(),
        "Minecraft's textures are not at {}: run `bash scripts/fetch-minecraft-assets.sh` \
         (scripts/test.sh does; VISTAWISE_MC_NPM picks another npm prefix)",
        data.display()
    );
    data
}

/// Initialises ONNX Runtime for in-process tests; panics with the fix when it is missing.
pub fn init_ort() {
    vistawise::perception::runtime::init(Some(&ort_lib()))
        .unwrap_or_else(|e| panic!("{e}\n(run scripts/setup.sh)"));
}

/// An Xvfb server with jwm on a free display number; both are killed on drop.
pub struct XServer {
    pub display: String,
    xvfb: Child,
    wm: Option<Child>,
    _jwm_home: tempfile::TempDir,
}

impl XServer {
    pub fn start(width: u32, height: u32) -> XServer {
        let (display, xvfb) = spawn_xvfb(width, height);
        // jwm with sloppy focus, so keys go to the window under the pointer.
        let home = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            home.path().join(".jwmrc"),
            "<?xml version=\"1.0\"?><JWM><FocusModel>sloppy</FocusModel></JWM>\n",
        )
        .expect("write jwmrc");
        let wm = Command::new("jwm")
            .env("DISPLAY", &display)
            .env("HOME", home.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("jwm is not installed: run scripts/setup.sh --with-x");
        let server = XServer {
            display,
            xvfb,
            wm: Some(wm),
            _jwm_home: home,
        };
        // The window manager publishes _NET_SUPPORTING_WM_CHECK once it runs.
        wait_until(
            Duration::from_secs(10),
            || server.wm_running(),
            "jwm to manage the display",
        );
        server
    }

    fn wm_running(&self) -> bool {
        let Ok((conn, screen)) = x11rb::connect(Some(&self.display)) else {
            return false;
        };
        let root = conn.setup().roots[screen].root;
        let Ok(cookie) = conn.intern_atom(false, b"_NET_SUPPORTING_WM_CHECK") else {
            return false;
        };
        let Ok(atom) = cookie.reply() else {
            return false;
        };
        conn.get_property(false, root, atom.atom, AtomEnum::WINDOW, 0, 1)
            .ok()
            .and_then(|c| c.reply().ok())
            .is_some_and(|r| r.value_len > 0)
    }
}

impl Drop for XServer {
    fn drop(&mut self) {
        if let Some(mut wm) = self.wm.take() {
            let _ = wm.kill();
            let _ = wm.wait();
        }
        stop_xvfb(&mut self.xvfb);
    }
}

/// Stops Xvfb with SIGTERM, so that it removes its `/tmp/.X<n>-lock` and socket on the way out
/// (SIGKILL leaves both behind, and they pile up across test runs); SIGKILL only if it hangs.
fn stop_xvfb(xvfb: &mut Child) {
    if let Ok(pid) = libc::pid_t::try_from(xvfb.id()) {
        // SAFETY: kill(2) with a pid we spawned and have not reaped yet.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(3) {
            if let Ok(Some(_)) = xvfb.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let _ = xvfb.kill();
    let _ = xvfb.wait();
}

/// Whether display `n` is held by a running X server. A lock file whose process is gone was left
/// by a server that was killed outright: it holds nothing, and Xvfb itself takes such a number
/// over (it checks the lock's pid the same way), so only a live owner or a bare socket counts.
fn display_taken(n: u32) -> bool {
    let lock = format!("/tmp/.X{n}-lock");
    match std::fs::read_to_string(&lock) {
        Ok(text) => match text.trim().parse::<u32>() {
            Ok(pid) => Path::new(&format!("/proc/{pid}")).exists(),
            Err(_) => true, // being written right now, or not ours to judge
        },
        Err(_) => Path::new(&format!("/tmp/.X11-unix/X{n}")).exists(),
    }
}

/// Starts Xvfb on a display number nobody uses: numbers come from a per-process counter (tests
/// in one process run in parallel) offset by the process id (test binaries run in parallel too),
/// and a number another server grabbed first is skipped.
fn spawn_xvfb(width: u32, height: u32) -> (String, Child) {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let base = 200 + (std::process::id() % 100) * 20;
    for _ in 0..50 {
        let n = base + NEXT.fetch_add(1, Ordering::SeqCst) % 2000;
        if display_taken(n) {
            continue;
        }
        let display = format!(":{n}");
        let mut xvfb = Command::new("Xvfb")
            .args([
                &display,
                "-screen",
                "0",
                &format!("{width}x{height}x24"),
                "-nolisten",
                "tcp",
                "-noreset",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb is not installed: run scripts/setup.sh --with-x");
        let socket = PathBuf::from(format!("/tmp/.X11-unix/X{n}"));
        let start = Instant::now();
        loop {
            if let Ok(Some(_)) = xvfb.try_wait() {
                break; // lost the race for this number; try the next
            }
            if socket.exists() && x11rb::connect(Some(&display)).is_ok() {
                return (display, xvfb);
            }
            if start.elapsed() > Duration::from_secs(10) {
                stop_xvfb(&mut xvfb);
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    panic!("could not start Xvfb on any free display number");
}

pub fn wait_until(limit: Duration, mut ok: impl FnMut() -> bool, what: &str) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A real top-level X11 window with a title; destroyed with its connection on drop.
pub struct TestWindow {
    pub conn: RustConnection,
    pub id: u32,
}

impl TestWindow {
    pub fn open(display: &str, title: &str, width: u16, height: u16) -> TestWindow {
        Self::open_with(display, title, width, height, EventMask::NO_EVENT)
    }

    /// A window that records the keyboard and pointer input it receives (see [`Self::input`]).
    pub fn open_recording(display: &str, title: &str, width: u16, height: u16) -> TestWindow {
        let mask = EventMask::KEY_PRESS
            | EventMask::KEY_RELEASE
            | EventMask::BUTTON_PRESS
            | EventMask::BUTTON_RELEASE
            | EventMask::POINTER_MOTION;
        Self::open_with(display, title, width, height, mask)
    }

    fn open_with(
        display: &str,
        title: &str,
        width: u16,
        height: u16,
        input: EventMask,
    ) -> TestWindow {
        let (conn, screen_num) = x11rb::connect(Some(display)).expect("connect to X");
        let screen = conn.setup().roots[screen_num].clone();
        let id = conn.generate_id().expect("window id");
        conn.create_window(
            x11rb::COPY_DEPTH_FROM_PARENT,
            id,
            screen.root,
            0,
            0,
            width,
            height,
            0,
            WindowClass::INPUT_OUTPUT,
            0,
            &CreateWindowAux::new()
                .background_pixel(0x00_40_80_40)
                .event_mask(EventMask::EXPOSURE | EventMask::STRUCTURE_NOTIFY | input),
        )
        .expect("create window");
        let utf8 = intern(&conn, b"UTF8_STRING");
        let net_wm_name = intern(&conn, b"_NET_WM_NAME");
        conn.change_property8(
            PropMode::REPLACE,
            id,
            AtomEnum::WM_NAME,
            AtomEnum::STRING,
            title.as_bytes(),
        )
        .expect("WM_NAME");
        conn.change_property8(PropMode::REPLACE, id, net_wm_name, utf8, title.as_bytes())
            .expect("_NET_WM_NAME");
        conn.change_property8(
            PropMode::REPLACE,
            id,
            AtomEnum::WM_CLASS,
            AtomEnum::STRING,
            b"vistawise-test\0VistawiseTest\0",
        )
        .expect("WM_CLASS");
        conn.map_window(id).expect("map");
        conn.flush().expect("flush");
        let window = TestWindow { conn, id };
        let client_list = intern(&window.conn, b"_NET_CLIENT_LIST_STACKING");
        wait_until(
            Duration::from_secs(10),
            || window.managed(screen.root, client_list),
            "the window manager to list the test window",
        );
        window
    }

    fn managed(&self, root: u32, client_list: u32) -> bool {
        self.conn
            .get_property(false, root, client_list, AtomEnum::WINDOW, 0, 1024)
            .ok()
            .and_then(|c| c.reply().ok())
            .and_then(|r| r.value32().map(|v| v.collect::<Vec<u32>>()))
            .is_some_and(|ids| ids.contains(&self.id))
    }
}

impl TestWindow {
    /// Shows `image` as the window's background (the X server repaints it by itself), e.g. a
    /// game frame for the agent to capture. The window should have the image's size.
    pub fn show_image(&self, image: &image::RgbImage) {
        vistawise::capture::show_as_background(&self.conn, self.id, image)
            .unwrap_or_else(|e| panic!("cannot show the image: {e}"));
    }
}

/// Input a recording window received. Keys are keysyms (e.g. 0x77 'w', 0xffe1 Shift); pointer
/// positions are window-relative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    KeyPress(u32),
    KeyRelease(u32),
    ButtonPress { button: u8, x: i16, y: i16 },
    ButtonRelease { button: u8, x: i16, y: i16 },
    Motion { x: i16, y: i16 },
}

impl TestWindow {
    /// Drains the input events received so far.
    pub fn input(&self) -> Vec<Received> {
        use x11rb::protocol::Event;
        let setup = self.conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let map = self
            .conn
            .get_keyboard_mapping(min, max - min + 1)
            .expect("keyboard mapping")
            .reply()
            .expect("keyboard mapping reply");
        let per = usize::from(map.keysyms_per_keycode.max(1));
        let sym = |code: u8| map.keysyms[usize::from(code - min) * per];
        let mut out = Vec::new();
        while let Some(event) = self.conn.poll_for_event().expect("X connection") {
            out.push(match event {
                Event::KeyPress(e) => Received::KeyPress(sym(e.detail)),
                Event::KeyRelease(e) => Received::KeyRelease(sym(e.detail)),
                Event::ButtonPress(e) => Received::ButtonPress {
                    button: e.detail,
                    x: e.event_x,
                    y: e.event_y,
                },
                Event::ButtonRelease(e) => Received::ButtonRelease {
                    button: e.detail,
                    x: e.event_x,
                    y: e.event_y,
                },
                Event::MotionNotify(e) => Received::Motion {
                    x: e.event_x,
                    y: e.event_y,
                },
                _ => continue,
            });
        }
        out
    }

    /// Asks the window manager to activate (focus and raise) the window, and waits for it.
    pub fn activate(&self, display: &str) {
        let status = Command::new("xdotool")
            .args(["windowactivate", "--sync", &self.id.to_string()])
            .env("DISPLAY", display)
            .status()
            .expect("xdotool is not installed: run scripts/setup.sh --with-x");
        assert!(status.success(), "xdotool windowactivate failed");
    }
}

fn intern(conn: &RustConnection, name: &[u8]) -> u32 {
    conn.intern_atom(false, name)
        .expect("intern")
        .reply()
        .expect("intern reply")
        .atom
}

/// The window the window manager lists on `display` whose class (WM_CLASS) or legacy title
/// (WM_NAME) contains `wanted`, case-insensitive. Asks that display itself: the process's
/// `DISPLAY` is shared by every test of this crate and stays as it is.
pub fn find_window(display: &str, wanted: &str) -> Option<u32> {
    let (conn, screen) = x11rb::connect(Some(display)).ok()?;
    let root = conn.setup().roots[screen].root;
    let client_list = intern(&conn, b"_NET_CLIENT_LIST");
    let ids: Vec<u32> = conn
        .get_property(false, root, client_list, AtomEnum::WINDOW, 0, 1024)
        .ok()?
        .reply()
        .ok()?
        .value32()?
        .collect();
    let text = |id: u32, property: AtomEnum| {
        conn.get_property(false, id, property, AtomEnum::STRING, 0, 1024)
            .ok()
            .and_then(|c| c.reply().ok())
            .map(|r| String::from_utf8_lossy(&r.value).to_lowercase())
            .unwrap_or_default()
    };
    let needle = wanted.to_lowercase();
    ids.into_iter().find(|&id| {
        text(id, AtomEnum::WM_CLASS).contains(&needle)
            || text(id, AtomEnum::WM_NAME).contains(&needle)
    })
}

/// A display number no X server holds now (its lock file and socket are absent).
pub fn free_display() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let base = 100 + (std::process::id() % 50) * 2;
    for _ in 0..100 {
        let n = base + NEXT.fetch_add(1, Ordering::SeqCst) % 100;
        if !Path::new(&format!("/tmp/.X{n}-lock")).exists()
            && !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
        {
            return format!(":{n}");
        }
    }
    panic!("no free X display number");
}

/// One game at a time: a game test holds this for its whole run. The games and the skills' holds
/// and waits are timed for one game on the machine (a dig run beside the chain test broke too
/// little to drop the player and walked away from its hole).
pub fn one_game() -> std::sync::MutexGuard<'static, ()> {
    static ONE_GAME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A game test that failed poisoned the lock; the next one still runs alone.
    ONE_GAME.lock().unwrap_or_else(|e| e.into_inner())
}

/// The real Minetest game (tests/minetest/gameenv.sh) in a seeded world on its own Xvfb display
/// and game folder; stopped on drop. The probe folder holds the game's ground truth.
pub struct MinetestGame {
    pub display: String,
    pub dir: tempfile::TempDir,
    pub probe: PathBuf,
}

impl MinetestGame {
    pub fn start(seed: u64) -> MinetestGame {
        let dir = tempfile::tempdir().expect("temp dir");
        let display = free_display();
        let out = Command::new("bash")
            .arg(repo().join("tests/minetest/gameenv.sh"))
            .args(["start", &seed.to_string()])
            .env("GAME_DIR", dir.path())
            .env("GAME_DISPLAY", &display)
            .output()
            .expect("run tests/minetest/gameenv.sh");
        let game = MinetestGame {
            display,
            probe: dir.path().join("world/agent_probe"),
            dir,
        };
        assert!(
            out.status.success(),
            "tests/minetest/gameenv.sh start failed (install the game with `tests/minetest/gameenv.sh install`):\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        game
    }

    /// The game's own log, for failure messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.path().join("debug.txt")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for MinetestGame {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(repo().join("tests/minetest/gameenv.sh"))
            .arg("stop")
            .env("GAME_DIR", self.dir.path())
            .env("GAME_DISPLAY", &self.display)
            .output();
    }
}

/// The Minecraft client of tests/mcweb (minecraft-web-client in Chromium on its own Xvfb display,
/// playing on the project's flying-squid test server) in a world from `seed`; stopped on drop.
/// The server's command port is the ground truth.
pub struct McwebGame {
    pub display: String,
    pub dir: tempfile::TempDir,
    pub cmd_port: u16,
}

impl McwebGame {
    /// Builds the client once (`tests/mcweb/mcweb.sh build`: from ../shared/mcweb into
    /// .work/mcweb) and starts a fresh world.
    pub fn start(seed: u64) -> McwebGame {
        Self::start_with(seed, &[])
    }

    /// [`Self::start`] with more of the script's settings (`GAME_W`, `GAME_H`, `GAME_SCREEN`,
    /// `MC_SPAWN`: tests/mcweb/mcweb.sh).
    pub fn start_with(seed: u64, env: &[(&str, &str)]) -> McwebGame {
        let script = repo().join("tests/mcweb/mcweb.sh");
        let built = Command::new("bash")
            .arg(&script)
            .arg("build")
            .output()
            .expect("run tests/mcweb/mcweb.sh build");
        assert!(
            built.status.success(),
            "tests/mcweb/mcweb.sh build failed:\n{}{}",
            String::from_utf8_lossy(&built.stdout),
            String::from_utf8_lossy(&built.stderr)
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let display = free_display();
        let out = Command::new("bash")
            .arg(&script)
            .arg("start")
            .env("GAME_DIR", dir.path())
            .env("GAME_DISPLAY", &display)
            .env("MC_SEED", seed.to_string())
            // No look set 1 s after joining: it would undo the test's own scene set-up.
            .env("MC_SPAWN_LOOK", "none")
            .envs(env.iter().copied())
            .output()
            .expect("run tests/mcweb/mcweb.sh start");
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let value = |key: &str| {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{key}=")))
                .map(str::to_string)
        };
        let game = McwebGame {
            display,
            cmd_port: value("CMD_PORT")
                .and_then(|p| p.parse().ok())
                .unwrap_or_default(),
            dir,
        };
        assert!(
            out.status.success() && game.cmd_port != 0,
            "tests/mcweb/mcweb.sh start failed:\n{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        game
    }

    /// The test server's command port, through the library's client (tests/mcweb/server/README.md).
    pub fn server(&self) -> vistawise::testworld::McwebServer {
        vistawise::testworld::McwebServer::connect(&format!("127.0.0.1:{}", self.cmd_port))
            .unwrap_or_else(|e| panic!("{e}\n{}", self.log_tail()))
    }

    /// The end of the server's and the browser's logs, for failure messages.
    pub fn log_tail(&self) -> String {
        ["server.log", "chromium.log"]
            .iter()
            .map(|name| {
                let text = std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                format!(
                    "--- {name}\n{}",
                    lines[lines.len().saturating_sub(15)..].join("\n")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for McwebGame {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(repo().join("tests/mcweb/mcweb.sh"))
            .arg("stop")
            .env("GAME_DIR", self.dir.path())
            .env("GAME_DISPLAY", &self.display)
            .output();
    }
}

/// Makes the cursor over `window` invisible, as a game does when it takes the pointer (a
/// browser page in pointer lock, GLFW's disabled cursor). The cursor lives as long as `conn`.
pub fn hide_pointer(conn: &RustConnection, window: u32) {
    use x11rb::protocol::xproto::ChangeWindowAttributesAux;
    let pixmap = conn.generate_id().expect("id");
    conn.create_pixmap(1, pixmap, window, 1, 1).expect("pixmap");
    let cursor = conn.generate_id().expect("id");
    conn.create_cursor(cursor, pixmap, pixmap, 0, 0, 0, 0, 0, 0, 0, 0)
        .expect("cursor");
    conn.change_window_attributes(window, &ChangeWindowAttributesAux::new().cursor(cursor))
        .expect("window cursor");
    conn.sync().expect("sync");
}

/// A game that takes the pointer when clicked: watches the pointer's buttons over `window` and
/// hides the cursor once the left button is down (within `limit`). The thread's result is its
/// X connection, which keeps the hidden cursor alive, and whether a click came.
pub fn hide_pointer_when_clicked(
    display: &str,
    window: u32,
    limit: Duration,
) -> std::thread::JoinHandle<(RustConnection, bool)> {
    use x11rb::protocol::xproto::KeyButMask;
    let display = display.to_string();
    std::thread::spawn(move || {
        let (conn, _) = x11rb::connect(Some(&display)).expect("connect to X");
        let start = Instant::now();
        while start.elapsed() < limit {
            let state = conn
                .query_pointer(window)
                .expect("query pointer")
                .reply()
                .expect("query pointer reply");
            if state.mask.contains(KeyButMask::BUTTON1) {
                hide_pointer(&conn, window);
                return (conn, true);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        (conn, false)
    })
}
