//! Input backends behind one trait: `enigo` (X11 XTest, the real mouse and keyboard) and
//! `dry-run` (records what it would send). Backends get window-relative pointer targets and
//! refuse any outside the window, whatever the caller checked before.

use std::time::{Duration, Instant};

use enigo::{Coordinate, Direction, Enigo, Keyboard, Mouse, Settings};
use x11rb::protocol::xfixes::ConnectionExt as _;
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
    /// Asks the X server whether the game hides the pointer (XFixes cursor image).
    x11: Option<RustConnection>,
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
        if self.x11.is_none() {
            let (conn, _) = x11rb::connect(self.display.as_deref()).map_err(|e| e.to_string())?;
            conn.xfixes_query_version(4, 0)
                .map_err(|e| e.to_string())?
                .reply()
                .map_err(|e| format!("the X server has no XFixes extension: {e}"))?;
            self.x11 = Some(conn);
        }
        let Some(conn) = self.x11.as_ref() else {
            return Err("no X connection".into());
        };
        let cursor = conn
            .xfixes_get_cursor_image()
            .map_err(|e| e.to_string())?
            .reply()
            .map_err(|e| e.to_string())?;
        Ok(cursor.cursor_image.iter().all(|argb| argb >> 24 == 0))
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
                self.enigo.button(enigo_button(button), Direction::Press)
            }
            InputEvent::ButtonUp { button } => {
                self.enigo.button(enigo_button(button), Direction::Release)
            }
            InputEvent::MoveTo { x, y } => {
                self.enigo
                    .move_mouse(self.window.x + x, self.window.y + y, Coordinate::Abs)
            }
            InputEvent::MoveBy { dx, dy } => self.enigo.move_mouse(dx, dy, Coordinate::Rel),
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
