//! Input backends behind one trait: `enigo` (X11 XTest, the real mouse and keyboard) and
//! `dry-run` (records what it would send). Backends get window-relative pointer targets and
//! refuse any outside the window, whatever the caller checked before.

use std::time::{Duration, Instant};

use enigo::{Coordinate, Direction, Enigo, Keyboard, Mouse, Settings};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConnectionExt, EventMask, GrabMode, GrabStatus};
use x11rb::rust_connection::RustConnection;

use super::expand::InputEvent;
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
    /// Asks the X server whether a client holds the pointer (`GrabPointer`).
    x11: Option<RustConnection>,
    display: Option<String>,
    /// `Camera::relock_after_escape_ms`, and when the last Escape was let go.
    relock_after_escape: Duration,
    last_escape: Option<Instant>,
    /// When a click of ours last made the game take the pointer.
    last_grab: Option<Instant>,
}

/// How long a click that should make the game take the pointer is given to work.
const GRAB_WAIT: Duration = Duration::from_millis(1_500);
/// How long the game is given, once it holds the pointer, before the next event: the X grab
/// comes first and the page hears of its lock a few frames later (at 7-9 frames a second a
/// turn sent 0.4 s after the grab was lost; 1.2 s turned the view).
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
            last_grab: None,
        })
    }

    /// How long after an Escape a click that must make the game take the pointer waits
    /// (`Camera::relock_after_escape_ms`).
    pub fn set_relock_after_escape(&mut self, wait: Duration) {
        self.relock_after_escape = wait;
    }

    /// Whether another client holds the pointer grab (a game in pointer lock does): our own
    /// grab attempt on the root window fails with `AlreadyGrabbed` then, and is released at
    /// once when it succeeds.
    fn pointer_held_by_game(&mut self) -> Result<bool, String> {
        if self.x11.is_none() {
            let (conn, _) = x11rb::connect(self.display.as_deref()).map_err(|e| e.to_string())?;
            self.x11 = Some(conn);
        }
        let Some(conn) = self.x11.as_ref() else {
            return Err("no X connection".into());
        };
        let root = conn.setup().roots[0].root;
        let reply = conn
            .grab_pointer(
                false,
                root,
                EventMask::NO_EVENT,
                GrabMode::ASYNC,
                GrabMode::ASYNC,
                x11rb::NONE,
                x11rb::NONE,
                x11rb::CURRENT_TIME,
            )
            .map_err(|e| e.to_string())?
            .reply()
            .map_err(|e| e.to_string())?;
        if reply.status == GrabStatus::SUCCESS {
            conn.ungrab_pointer(x11rb::CURRENT_TIME)
                .map_err(|e| e.to_string())?;
            conn.flush().map_err(|e| e.to_string())?;
        }
        Ok(reply.status == GrabStatus::ALREADY_GRABBED)
    }

    /// Clicks (x, y) unless the game already holds the pointer, then waits for it to take it.
    /// The X grab is trusted only after a grab of ours with no Escape since: a browser whose
    /// page asked for the lock on its own as a screen closed and was refused (Chromium's
    /// "Browser Delay Limitation") kept the X grab with the page unlocked, and every turn after
    /// it was lost (the client's cobblestone task dug 20 times at the same spot).
    fn grab_pointer(&mut self, x: i32, y: i32) -> Result<(), String> {
        let escape_since_grab = self
            .last_escape
            .is_some_and(|e| self.last_grab.is_none_or(|g| g < e));
        if self.last_grab.is_some() && !escape_since_grab && self.pointer_held_by_game()? {
            return Ok(());
        }
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
            if self.pointer_held_by_game()? {
                // The X grab comes before the page hears of its lock: motion sent at once is
                // lost (measured: a turn right after the click did not turn the view).
                std::thread::sleep(GRAB_SETTLE);
                self.last_grab = Some(Instant::now());
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!(
            "the game did not take the pointer within {} ms of a click at ({x}, {y})",
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
