//! The emergency stop and the window watch, on their own thread while the agent sends input:
//! - the configured key (default F12) is grabbed on the X root window, so it reaches us whichever
//!   window has the focus;
//! - the pointer held in a screen corner for `safety.corner_stop_secs` also stops;
//! - the game window losing the focus or disappearing stops the current call (the agent loop
//!   then waits instead of clicking into another window).
//!
//! Each sets the shared [`StopFlag`]; the executor checks it between events and every 10 ms of a
//! wait, so a stop takes effect within [`POLL`] + 10 ms.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt, GrabMode, ModMask, Window};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use super::execute::{StopFlag, StopReason};
use super::keys::Key;
use crate::config::SafetyConfig;

/// How often the watcher looks at the pointer and the window.
pub const POLL: Duration = Duration::from_millis(20);
/// A corner is this close to the screen edge on both axes (pixels).
const CORNER_PX: i16 = 2;

#[derive(Debug, thiserror::Error)]
pub enum EmergencyError {
    #[error(
        "safety.emergency_stop_key \"{0}\" is not a key name (e.g. F12, Pause is not supported)"
    )]
    BadKey(String),
    #[error("cannot connect to the X display for the emergency stop: {0}")]
    Connect(String),
    #[error("the emergency stop key {key} has no keycode on this keyboard")]
    NoKeycode { key: String },
    #[error("cannot grab the emergency stop key {key} (another program holds it?): {reason}")]
    Grab { key: String, reason: String },
}

/// Runs until dropped.
pub struct Watcher {
    quit: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

fn keysym(key: Key) -> u32 {
    match key {
        Key::Char(c) => c as u32,
        Key::F(n) => 0xFFBE + u32::from(n) - 1,
        Key::Space => 0x20,
        Key::Escape => 0xFF1B,
        Key::Tab => 0xFF09,
        Key::Enter => 0xFF0D,
        Key::Backspace => 0xFF08,
        Key::Shift => 0xFFE1,
        Key::Control => 0xFFE3,
        Key::Alt => 0xFFE9,
        Key::Left => 0xFF51,
        Key::Up => 0xFF52,
        Key::Right => 0xFF53,
        Key::Down => 0xFF54,
    }
}

/// The keycodes that produce `sym` on the current keyboard mapping.
fn keycodes(conn: &RustConnection, sym: u32) -> Result<Vec<u8>, String> {
    let setup = conn.setup();
    let (min, max) = (setup.min_keycode, setup.max_keycode);
    let map = conn
        .get_keyboard_mapping(min, max - min + 1)
        .map_err(|e| e.to_string())?
        .reply()
        .map_err(|e| e.to_string())?;
    let per = usize::from(map.keysyms_per_keycode.max(1));
    Ok(map
        .keysyms
        .chunks(per)
        .enumerate()
        .filter(|(_, syms)| syms.contains(&sym))
        .map(|(i, _)| min + i as u8)
        .collect())
}

impl Watcher {
    /// Grabs the key and starts watching. `window`: the game window's X id, if the focus and
    /// presence of a window should be watched too.
    pub fn start(
        safety: &SafetyConfig,
        window: Option<u32>,
        stop: StopFlag,
    ) -> Result<Self, EmergencyError> {
        let key = Key::parse(&safety.emergency_stop_key)
            .ok_or_else(|| EmergencyError::BadKey(safety.emergency_stop_key.clone()))?;
        let (conn, screen) =
            RustConnection::connect(None).map_err(|e| EmergencyError::Connect(e.to_string()))?;
        let root = conn.setup().roots[screen].root;
        // The corner check polls often: the screen size is read once, not asked of the server.
        let screen_size = (
            conn.setup().roots[screen].width_in_pixels as i16,
            conn.setup().roots[screen].height_in_pixels as i16,
        );
        let codes = keycodes(&conn, keysym(key)).map_err(EmergencyError::Connect)?;
        if codes.is_empty() {
            return Err(EmergencyError::NoKeycode {
                key: key.to_string(),
            });
        }
        for &code in &codes {
            let grab_err = |reason: String| EmergencyError::Grab {
                key: key.to_string(),
                reason,
            };
            conn.grab_key(
                false,
                root,
                ModMask::ANY,
                code,
                GrabMode::ASYNC,
                GrabMode::ASYNC,
            )
            .map_err(|e| grab_err(e.to_string()))?
            .check()
            .map_err(|e| grab_err(e.to_string()))?;
        }
        let quit = Arc::new(AtomicBool::new(false));
        let corner_hold = Duration::from_secs_f64(safety.corner_stop_secs.max(0.05));
        let watch = WatchLoop {
            conn,
            root,
            screen_size,
            codes,
            window,
            corner_hold,
            stop,
            quit: Arc::clone(&quit),
        };
        let thread = std::thread::Builder::new()
            .name("emergency-stop".into())
            .spawn(move || watch.run())
            .map_err(|e| EmergencyError::Connect(e.to_string()))?;
        Ok(Watcher {
            quit,
            thread: Some(thread),
        })
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.quit.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct WatchLoop {
    conn: RustConnection,
    root: Window,
    /// Width and height of the root window.
    screen_size: (i16, i16),
    codes: Vec<u8>,
    window: Option<u32>,
    corner_hold: Duration,
    stop: StopFlag,
    quit: Arc<AtomicBool>,
}

impl WatchLoop {
    fn run(self) {
        let mut in_corner_since: Option<Instant> = None;
        let active_atom = self
            .conn
            .intern_atom(false, b"_NET_ACTIVE_WINDOW")
            .ok()
            .and_then(|c| c.reply().ok())
            .map(|r| r.atom);
        while !self.quit.load(Ordering::SeqCst) {
            // Key presses of the grabbed key.
            while let Ok(Some(event)) = self.conn.poll_for_event() {
                if let Event::KeyPress(k) = event
                    && self.codes.contains(&k.detail)
                {
                    // The press activated our passive grab: until the key is released every key
                    // event would come to us, so the releases the executor sends next would never
                    // reach the game. End the grab before asking for the stop.
                    let _ = self.conn.ungrab_keyboard(x11rb::CURRENT_TIME);
                    let _ = self.conn.sync();
                    self.stop.request(StopReason::EmergencyKey);
                }
            }
            if self.corner(&mut in_corner_since) {
                self.stop.request(StopReason::PointerInCorner);
            }
            if let (Some(window), Some(atom)) = (self.window, active_atom)
                && !self.window_ok(window, atom)
            {
                self.stop.request(StopReason::WindowLost);
            }
            std::thread::sleep(POLL);
        }
        for &code in &self.codes {
            let _ = self.conn.ungrab_key(code, self.root, ModMask::ANY);
        }
        let _ = self.conn.flush();
    }

    /// Whether the pointer has been in a screen corner for `corner_hold`.
    fn corner(&self, since: &mut Option<Instant>) -> bool {
        let Some(p) = self
            .conn
            .query_pointer(self.root)
            .ok()
            .and_then(|c| c.reply().ok())
        else {
            return false;
        };
        let (w, h) = self.screen_size;
        let near = |v: i16, max: i16| v < CORNER_PX || v >= max - CORNER_PX;
        if near(p.root_x, w) && near(p.root_y, h) {
            let start = *since.get_or_insert_with(Instant::now);
            start.elapsed() >= self.corner_hold
        } else {
            *since = None;
            false
        }
    }

    /// The game window still exists and is the active window.
    fn window_ok(&self, window: u32, active_atom: u32) -> bool {
        let exists = self
            .conn
            .get_window_attributes(window)
            .ok()
            .and_then(|c| c.reply().ok())
            .is_some();
        let active = self
            .conn
            .get_property(false, self.root, active_atom, AtomEnum::WINDOW, 0, 1)
            .ok()
            .and_then(|c| c.reply().ok())
            .and_then(|r| r.value32().and_then(|mut v| v.next()));
        exists && active == Some(window)
    }
}
