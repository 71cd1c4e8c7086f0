//! Input backends behind one trait: `enigo` (X11 XTest, the real mouse and keyboard) and
//! `dry-run` (records what it would send). Backends get window-relative pointer targets and
//! refuse any outside the window, whatever the caller checked before.

use std::time::{Duration, Instant};

use enigo::{Coordinate, Direction, Enigo, Keyboard, Mouse, Settings};
use x11rb::connection::Connection as _;
use x11rb::protocol::xfixes::ConnectionExt as _;
use x11rb::protocol::xproto::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use super::expand::{Camera, InputEvent};
use super::keys::{Button, Key};

/// The game window on the screen (pixels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct WindowRect {
    pub x: i32,
    pub y: i32,
    pub w: u32,
    pub h: u32,
}

impl WindowRect {
    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= 0 && y >= 0 && (x as i64) < i64::from(self.w) && (y as i64) < i64::from(self.h)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot open the input backend: {0}")]
    Open(String),
    #[error("pointer target ({x}, {y}) is outside the {w}x{h} game window; nothing sent")]
    OutsideWindow { x: i32, y: i32, w: u32, h: u32 },
    #[error("sending {event} failed: {reason}")]
    Send { event: String, reason: String },
}

pub trait InputBackend {
    /// Sends one event (never `Wait`: the executor sleeps itself).
    fn send(&mut self, event: &InputEvent) -> Result<(), InputError>;
    fn name(&self) -> &'static str;
}

/// What [`release_held_input`] let go: X keycodes and pointer buttons.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Released {
    pub keycodes: Vec<u8>,
    pub buttons: Vec<u8>,
}

impl Released {
    pub fn is_empty(&self) -> bool {
        self.keycodes.is_empty() && self.buttons.is_empty()
    }
}

/// Releases every key and pointer button the X server reports held, through XTest (a key a
/// person holds on a real keyboard is not XTest's to release, and stays held). Run by the input
/// guard when the agent is gone (a `kill -9` mid-hold runs no handler of the agent's) and when
/// a real backend opens (whatever an earlier run left held).
pub fn release_held_input(display: Option<&str>) -> Result<Released, String> {
    use x11rb::protocol::xproto::{BUTTON_RELEASE_EVENT, KEY_RELEASE_EVENT, KeyButMask};
    use x11rb::protocol::xtest::ConnectionExt as _;
    use x11rb::wrapper::ConnectionExt as _;
    let (conn, screen) = x11rb::connect(display).map_err(|e| e.to_string())?;
    let failed = |e: &dyn std::fmt::Display| e.to_string();
    let root = conn
        .setup()
        .roots
        .get(screen)
        .ok_or("the X server has no such screen")?
        .root;
    let keys = conn
        .query_keymap()
        .map_err(|e| failed(&e))?
        .reply()
        .map_err(|e| failed(&e))?
        .keys;
    let mask = conn
        .query_pointer(root)
        .map_err(|e| failed(&e))?
        .reply()
        .map_err(|e| failed(&e))?
        .mask;
    let mut released = Released::default();
    for code in 8..=255u8 {
        if keys[usize::from(code / 8)] & (1 << (code % 8)) != 0 {
            conn.xtest_fake_input(KEY_RELEASE_EVENT, code, x11rb::CURRENT_TIME, root, 0, 0, 0)
                .map_err(|e| failed(&e))?;
            released.keycodes.push(code);
        }
    }
    for (button, bit) in [
        (1, KeyButMask::BUTTON1),
        (2, KeyButMask::BUTTON2),
        (3, KeyButMask::BUTTON3),
    ] {
        if mask.contains(bit) {
            conn.xtest_fake_input(
                BUTTON_RELEASE_EVENT,
                button,
                x11rb::CURRENT_TIME,
                root,
                0,
                0,
                0,
            )
            .map_err(|e| failed(&e))?;
            released.buttons.push(button);
        }
    }
    conn.sync().map_err(|e| failed(&e))?;
    Ok(released)
}

/// Records events instead of sending them.
#[derive(Debug)]
pub struct DryRun {
    pub window: WindowRect,
    pub sent: Vec<InputEvent>,
}

impl DryRun {
    pub fn new(window: WindowRect) -> Self {
        DryRun {
            window,
            sent: Vec::new(),
        }
    }
}

fn check_target(window: &WindowRect, event: &InputEvent) -> Result<(), InputError> {
    if let InputEvent::MoveTo { x, y } | InputEvent::GrabPointer { x, y } = *event
        && !window.contains(x, y)
    {
        return Err(InputError::OutsideWindow {
            x,
            y,
            w: window.w,
            h: window.h,
        });
    }
    Ok(())
}

impl InputBackend for DryRun {
    fn send(&mut self, event: &InputEvent) -> Result<(), InputError> {
        check_target(&self.window, event)?;
        self.sent.push(*event);
        Ok(())
    }
    fn name(&self) -> &'static str {
        "dry-run"
    }
}

/// The real mouse and keyboard through enigo (XTest on X11).
pub struct EnigoBackend {
    enigo: Enigo,
    window: WindowRect,
    /// Asks the X server where the pointer is and whether the game hides it (XFixes cursor
    /// image); with the screen number the connection opened.
    x11: Option<(RustConnection, usize)>,
    display: Option<String>,
    /// `Camera::relock_after_escape_ms`, and when the last Escape was let go.
    relock_after_escape: Duration,
    last_escape: Option<Instant>,
}

/// How long a click that should make the game take the pointer is given to work, and how many
/// clicks are tried.
const GRAB_WAIT: Duration = Duration::from_millis(1_500);
const GRAB_CLICKS: usize = 2;
/// How long the browser is given to redraw its cursor after a pointer move.
const CURSOR_SETTLE: Duration = Duration::from_millis(80);
/// How long the game is given, once it hides the pointer, before the next event: the browser
/// client hid it 0.5 s after its first click and lost a turn sent at once; 1.2 s later the
/// turn went through.
const GRAB_SETTLE: Duration = Duration::from_millis(1_200);
/// How long a game that holds the pointer is given to re-centre it between the parts of a
/// move that would otherwise leave the window (a frame or two at any playable rate).
const RECENTRE_WAIT: Duration = Duration::from_millis(500);
/// Pixels kept between a moved pointer and the window's edge.
const EDGE_MARGIN: i32 = 2;

/// The largest part `t` (0..=1) of a move by (dx, dy) from (px, py) that keeps the pointer
/// `EDGE_MARGIN` inside the window; 0 when it is not inside that now.
fn fraction_inside(window: &WindowRect, px: i32, py: i32, dx: i32, dy: i32) -> f64 {
    let axis = |p: i32, d: i32, size: u32| -> f64 {
        let (lo, hi) = (EDGE_MARGIN, size as i32 - 1 - EDGE_MARGIN);
        if p < lo || p > hi {
            return 0.0;
        }
        match d.signum() {
            1 => f64::from(hi - p) / f64::from(d),
            -1 => f64::from(lo - p) / f64::from(d),
            _ => 1.0,
        }
    };
    axis(px, dx, window.w)
        .min(axis(py, dy, window.h))
        .clamp(0.0, 1.0)
}

impl EnigoBackend {
    /// `display`: an X display such as ":99"; `None` uses `$DISPLAY`.
    pub fn new(display: Option<&str>, window: WindowRect) -> Result<Self, InputError> {
        let settings = Settings {
            x11_display: display.map(str::to_string),
            // enigo also releases what it holds when dropped: a second net under ours.
            release_keys_when_dropped: true,
            ..Settings::default()
        };
        let enigo = Enigo::new(&settings).map_err(|e| InputError::Open(e.to_string()))?;
        match release_held_input(display) {
            Ok(r) if !r.is_empty() => tracing::warn!(
                "released what an earlier run left held: keycodes {:?}, buttons {:?}",
                r.keycodes,
                r.buttons
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!("cannot check for input left held: {e}"),
        }
        Ok(EnigoBackend {
            enigo,
            window,
            x11: None,
            display: display.map(str::to_string),
            relock_after_escape: Duration::ZERO,
            last_escape: None,
        })
    }

    /// The backend for a game on `$DISPLAY` turned as `camera` says: a click that must make the
    /// game take the pointer back waits `camera.relock_after_escape_ms` after an Escape.
    pub fn for_camera(window: WindowRect, camera: &Camera) -> Result<Self, InputError> {
        let mut backend = Self::new(None, window)?;
        backend.relock_after_escape = Duration::from_millis(camera.relock_after_escape_ms);
        Ok(backend)
    }

    /// Whether the game has taken the pointer: a game in pointer lock (a browser page, GLFW's
    /// disabled cursor, Minetest) hides it, so the cursor the X server shows (XFixes) is fully
    /// transparent. The X grab is no witness: Chromium kept its grab while the page's own
    /// relock was refused ("Browser Delay Limitation"), and every turn after it was lost.
    fn game_hides_pointer(&mut self) -> Result<bool, String> {
        let (conn, _) = self.x11()?;
        let cursor = conn
            .xfixes_get_cursor_image()
            .map_err(|e| e.to_string())?
            .reply()
            .map_err(|e| e.to_string())?;
        Ok(cursor.cursor_image.iter().all(|argb| argb >> 24 == 0))
    }

    /// The X connection, opened on first use.
    fn x11(&mut self) -> Result<&(RustConnection, usize), String> {
        if self.x11.is_none() {
            let (conn, screen) =
                x11rb::connect(self.display.as_deref()).map_err(|e| e.to_string())?;
            conn.xfixes_query_version(4, 0)
                .map_err(|e| e.to_string())?
                .reply()
                .map_err(|e| format!("the X server has no XFixes extension: {e}"))?;
            self.x11 = Some((conn, screen));
        }
        self.x11
            .as_ref()
            .ok_or_else(|| "no X connection".to_string())
    }

    /// Where the pointer is, relative to the game window.
    fn pointer(&mut self) -> Result<(i32, i32), String> {
        let (conn, screen) = self.x11()?;
        let root = conn
            .setup()
            .roots
            .get(*screen)
            .ok_or("the X server has no such screen")?
            .root;
        let p = conn
            .query_pointer(root)
            .map_err(|e| e.to_string())?
            .reply()
            .map_err(|e| e.to_string())?;
        Ok((
            i32::from(p.root_x) - self.window.x,
            i32::from(p.root_y) - self.window.y,
        ))
    }

    /// A relative move that never takes the pointer out of the game window. Where the whole
    /// move would leave it, it goes in parts, each waiting for the game to bring the pointer
    /// back (a game that holds the pointer re-centres it after every motion). A game that does
    /// not gets the pointer at its window's edge and an error: relative moves that add up past
    /// the window once put it over another application, which the next click then hit.
    fn move_by(&mut self, dx: i32, dy: i32) -> Result<(), String> {
        let (mut left_x, mut left_y) = (dx, dy);
        while (left_x, left_y) != (0, 0) {
            let (px, py) = self.pointer()?;
            let t = fraction_inside(&self.window, px, py, left_x, left_y);
            let part = if t >= 1.0 {
                (left_x, left_y)
            } else {
                (
                    (f64::from(left_x) * t).trunc() as i32,
                    (f64::from(left_y) * t).trunc() as i32,
                )
            };
            if part != (0, 0) {
                self.enigo
                    .move_mouse(part.0, part.1, Coordinate::Rel)
                    .map_err(|e| e.to_string())?;
                left_x -= part.0;
                left_y -= part.1;
                if (left_x, left_y) == (0, 0) {
                    break;
                }
            }
            let at = (px + part.0, py + part.1);
            if !self.wait_for_recentre(at)? {
                return Err(format!(
                    "the pointer would leave the {}x{} game window: {left_x},{left_y} of a move \
                     by {dx},{dy} not sent (the pointer is at {},{} and the game does not \
                     re-centre it)",
                    self.window.w, self.window.h, at.0, at.1
                ));
            }
        }
        Ok(())
    }

    /// Waits up to [`RECENTRE_WAIT`] for the pointer to leave `at` and be inside the window.
    fn wait_for_recentre(&mut self, at: (i32, i32)) -> Result<bool, String> {
        let until = Instant::now() + RECENTRE_WAIT;
        loop {
            let now = self.pointer()?;
            if now != at && fraction_inside(&self.window, now.0, now.1, 0, 0) > 0.0 {
                return Ok(true);
            }
            if Instant::now() >= until {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// A click goes only where the pointer is over the game window.
    fn check_pointer_inside(&mut self) -> Result<(), InputError> {
        let (x, y) = self.pointer().map_err(|reason| InputError::Send {
            event: "button press".into(),
            reason,
        })?;
        if self.window.contains(x, y) {
            Ok(())
        } else {
            Err(InputError::OutsideWindow {
                x,
                y,
                w: self.window.w,
                h: self.window.h,
            })
        }
    }

    /// Clicks (x, y) unless the game already hides the pointer, then waits for it to take it;
    /// a second click when the first was refused.
    fn grab_pointer(&mut self, x: i32, y: i32) -> Result<(), String> {
        // The browser updates the cursor only on pointer motion: after a screen closed it kept
        // the lock's hidden cursor with the page unlocked (every turn of a dig was lost). A
        // one-pixel move shows the real one; in a game that holds the pointer it turns the
        // view 1 px and back.
        self.enigo
            .move_mouse(1, 0, Coordinate::Rel)
            .map_err(|e| e.to_string())?;
        std::thread::sleep(CURSOR_SETTLE);
        let held = self.game_hides_pointer();
        self.enigo
            .move_mouse(-1, 0, Coordinate::Rel)
            .map_err(|e| e.to_string())?;
        if held? {
            return Ok(());
        }
        for _ in 0..GRAB_CLICKS {
            if let Some(left) = self
                .last_escape
                .and_then(|t| self.relock_after_escape.checked_sub(t.elapsed()))
            {
                std::thread::sleep(left);
            }
            let (ax, ay) = (self.window.x + x, self.window.y + y);
            self.enigo
                .move_mouse(ax, ay, Coordinate::Abs)
                .map_err(|e| e.to_string())?;
            std::thread::sleep(Duration::from_millis(50));
            self.enigo
                .button(enigo::Button::Left, Direction::Press)
                .map_err(|e| e.to_string())?;
            std::thread::sleep(Duration::from_millis(60));
            self.enigo
                .button(enigo::Button::Left, Direction::Release)
                .map_err(|e| e.to_string())?;
            let until = Instant::now() + GRAB_WAIT;
            while Instant::now() < until {
                if self.game_hides_pointer()? {
                    // The cursor goes before the page hears of its lock: motion sent at once
                    // after a page's first lock was lost (measured on the browser client).
                    std::thread::sleep(GRAB_SETTLE);
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Err(format!(
            "the game did not take the pointer (its cursor stayed visible) after {GRAB_CLICKS} clicks at ({x}, {y}), {} ms each",
            GRAB_WAIT.as_millis()
        ))
    }

    /// The window moved or was resized.
    pub fn set_window(&mut self, window: WindowRect) {
        self.window = window;
    }
}

fn enigo_key(key: Key) -> enigo::Key {
    use enigo::Key as E;
    match key {
        Key::Char(c) => E::Unicode(c),
        Key::Space => E::Space,
        Key::Shift => E::Shift,
        Key::Control => E::Control,
        Key::Alt => E::Alt,
        Key::Escape => E::Escape,
        Key::Tab => E::Tab,
        Key::Enter => E::Return,
        Key::Backspace => E::Backspace,
        Key::Up => E::UpArrow,
        Key::Down => E::DownArrow,
        Key::Left => E::LeftArrow,
        Key::Right => E::RightArrow,
        Key::F(n) => match n {
            1 => E::F1,
            2 => E::F2,
            3 => E::F3,
            4 => E::F4,
            5 => E::F5,
            6 => E::F6,
            7 => E::F7,
            8 => E::F8,
            9 => E::F9,
            10 => E::F10,
            11 => E::F11,
            _ => E::F12,
        },
    }
}

fn enigo_button(b: Button) -> enigo::Button {
    match b {
        Button::Left => enigo::Button::Left,
        Button::Right => enigo::Button::Right,
        Button::Middle => enigo::Button::Middle,
    }
}

impl InputBackend for EnigoBackend {
    fn send(&mut self, event: &InputEvent) -> Result<(), InputError> {
        check_target(&self.window, event)?;
        let failed = |e: enigo::InputError| InputError::Send {
            event: event.to_string(),
            reason: e.to_string(),
        };
        match *event {
            InputEvent::KeyDown { key } => self.enigo.key(enigo_key(key), Direction::Press),
            InputEvent::KeyUp { key } => {
                if key == Key::Escape {
                    self.last_escape = Some(Instant::now());
                }
                self.enigo.key(enigo_key(key), Direction::Release)
            }
            InputEvent::ButtonDown { button } => {
                self.check_pointer_inside()?;
                self.enigo.button(enigo_button(button), Direction::Press)
            }
            InputEvent::ButtonUp { button } => {
                self.enigo.button(enigo_button(button), Direction::Release)
            }
            InputEvent::MoveTo { x, y } => {
                self.enigo
                    .move_mouse(self.window.x + x, self.window.y + y, Coordinate::Abs)
            }
            InputEvent::MoveBy { dx, dy } => {
                return self.move_by(dx, dy).map_err(|reason| InputError::Send {
                    event: event.to_string(),
                    reason,
                });
            }
            InputEvent::Wait { .. } => Ok(()),
            InputEvent::GrabPointer { x, y } => {
                return self.grab_pointer(x, y).map_err(|reason| InputError::Send {
                    event: event.to_string(),
                    reason,
                });
            }
        }
        .map_err(failed)
    }
    fn name(&self) -> &'static str {
        "enigo"
    }
}
