//! Input backends behind one trait: `enigo` (X11 XTest, the real mouse and keyboard) and
//! `dry-run` (records what it would send). Backends get window-relative pointer targets and
//! refuse any outside the window, whatever the caller checked before.

use enigo::{Coordinate, Direction, Enigo, Keyboard, Mouse, Settings};

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
    if let InputEvent::MoveTo { x, y } = *event
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
        Ok(EnigoBackend { enigo, window })
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
            InputEvent::KeyUp { key } => self.enigo.key(enigo_key(key), Direction::Release),
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
        }
        .map_err(failed)
    }
    fn name(&self) -> &'static str {
        "enigo"
    }
}
