//! The game window through the real desktop: X screenshots and key taps (enigo). What the tools
//! that drive the game by its ground truth need of the window (the auto-labeller, learning the
//! stack-count digits): no skills, no policy.

use std::time::Duration;

use image::RgbImage;

use super::error::CaptureError;
use super::window::{Transport, WindowCapture};
use super::windows::WindowInfo;
use crate::skills::InputBackend;
use crate::skills::expand::InputEvent;
use crate::skills::{Camera, EnigoBackend, InputError, KeyMap, WindowRect};
use crate::testworld::autolabel::{AutoLabelError, GameWindow};

#[derive(Debug, thiserror::Error)]
pub enum DesktopError {
    #[error("cannot capture the game window: {0}")]
    Capture(#[from] CaptureError),
    #[error("cannot send input to the game window: {0}")]
    Input(#[from] InputError),
}

/// A key is held this long, and the next one waits as long: the game reads every tap.
const TAP_MS: u64 = 60;

/// The game window, captured and given key taps.
pub struct DesktopWindow {
    capture: WindowCapture,
    input: EnigoBackend,
    keys: KeyMap,
}

impl DesktopWindow {
    /// Opens `window` (found by its title) for capture through `transport` and for input with
    /// the game's `keys` and `camera`; answers its rectangle too.
    pub fn open(
        window: &WindowInfo,
        transport: Transport,
        keys: KeyMap,
        camera: &Camera,
    ) -> Result<(Self, WindowRect), DesktopError> {
        let rect = WindowRect {
            x: window.x,
            y: window.y,
            w: window.width,
            h: window.height,
        };
        let input = EnigoBackend::for_camera(rect, camera)?;
        let capture = WindowCapture::open(window.id, transport)?;
        Ok((
            DesktopWindow {
                capture,
                input,
                keys,
            },
            rect,
        ))
    }
}

impl GameWindow for DesktopWindow {
    fn capture(&mut self) -> Result<RgbImage, AutoLabelError> {
        self.capture
            .grab()
            .map(|(img, _)| img)
            .map_err(|e| AutoLabelError::Capture(e.to_string()))
    }

    fn tap(&mut self, action: &str) -> Result<(), AutoLabelError> {
        let key = self.keys.resolve(action).map_err(AutoLabelError::Input)?;
        for e in [InputEvent::KeyDown { key }, InputEvent::KeyUp { key }] {
            self.input
                .send(&e)
                .map_err(|e| AutoLabelError::Input(e.to_string()))?;
            std::thread::sleep(Duration::from_millis(TAP_MS));
        }
        Ok(())
    }
}
