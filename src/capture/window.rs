//! One game window's pixels, frame after frame, by the fastest way the desktop offers.
//!
//! On X11 the pixels come over one kept connection ([`X11Capture`]: MIT-SHM, or the core
//! GetImage request). Where no X connection opens (a Wayland session without XWayland, or a
//! platform xcap serves and x11rb does not) xcap captures the window instead: slower (a new
//! connection and a pixel-by-pixel conversion each frame) but it plays.

use image::RgbImage;
use serde::{Deserialize, Serialize};

use super::error::CaptureError;
use super::windows::{self, WindowInfo};
use super::x11::X11Capture;

/// How the pixels are asked for (`game.capture` in the config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// X11 with MIT-SHM when the server offers it, else the core request; xcap where no X
    /// connection opens.
    Auto,
    /// The X11 core GetImage request (the pixels in the reply), whatever the server offers.
    Core,
    /// xcap, whatever the desktop is.
    Xcap,
}

/// The way the pixels of a capture come, once it is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PixelPath {
    /// MIT-SHM: the X server writes into a buffer shared with this process.
    SharedMemory,
    /// The core GetImage request: the pixels in the reply.
    CoreRequest,
    /// xcap.
    Xcap,
}

impl PixelPath {
    /// How a report names it.
    pub fn describe(self) -> &'static str {
        match self {
            PixelPath::SharedMemory => "MIT-SHM",
            PixelPath::CoreRequest => "the core GetImage request",
            PixelPath::Xcap => "xcap",
        }
    }
}

/// One window's pixels and pose, frame after frame.
pub struct WindowCapture {
    backend: Backend,
}

enum Backend {
    X11(Box<X11Capture>),
    Xcap(XcapCapture),
}

impl WindowCapture {
    /// Prepares to grab window `id` on `DISPLAY`.
    pub fn open(id: u32, transport: Transport) -> Result<Self, CaptureError> {
        Self::open_on(None, id, transport)
    }

    /// The same on display `display` (`None`: `DISPLAY`; xcap always reads `DISPLAY`).
    pub fn open_on(
        display: Option<&str>,
        id: u32,
        transport: Transport,
    ) -> Result<Self, CaptureError> {
        let backend = match transport {
            Transport::Xcap => Backend::Xcap(XcapCapture::open(id)?),
            Transport::Core => Backend::X11(Box::new(X11Capture::open_on(display, id, false)?)),
            Transport::Auto => match X11Capture::open_on(display, id, true) {
                Ok(x11) => Backend::X11(Box::new(x11)),
                Err(CaptureError::NoConnection(reason)) => {
                    tracing::warn!(
                        "no X connection ({reason}): the window is captured through xcap, \
                         slower than over X11"
                    );
                    Backend::Xcap(XcapCapture::open(id)?)
                }
                Err(e) => return Err(e),
            },
        };
        Ok(Self { backend })
    }

    /// The window's id.
    pub fn id(&self) -> u32 {
        match &self.backend {
            Backend::X11(c) => c.id(),
            Backend::Xcap(c) => c.id,
        }
    }

    /// How the pixels come.
    pub fn pixel_path(&self) -> PixelPath {
        match &self.backend {
            Backend::X11(c) if c.shared_memory() => PixelPath::SharedMemory,
            Backend::X11(_) => PixelPath::CoreRequest,
            Backend::Xcap(_) => PixelPath::Xcap,
        }
    }

    /// The window's client area as RGB, and where it is now (it may have moved, been resized,
    /// lost the focus or been minimised since the last frame).
    pub fn grab(&mut self) -> Result<(RgbImage, WindowInfo), CaptureError> {
        match &mut self.backend {
            Backend::X11(c) => c.grab(),
            Backend::Xcap(c) => c.grab(),
        }
    }
}

/// The window as xcap found it once; each grab asks xcap anew.
struct XcapCapture {
    id: u32,
    window: xcap::Window,
}

impl XcapCapture {
    fn open(id: u32) -> Result<Self, CaptureError> {
        let window = Self::find(id)?.ok_or(CaptureError::Gone(id))?;
        Ok(Self { id, window })
    }

    /// Window `id` among those xcap lists (`None`: not there).
    fn find(id: u32) -> Result<Option<xcap::Window>, CaptureError> {
        let all = xcap::Window::all().map_err(|e| CaptureError::Capture {
            title: format!("window {id}"),
            reason: format!(
                "xcap cannot list the windows (it reads the window manager's list): {e}"
            ),
        })?;
        Ok(all.into_iter().find(|w| w.id().ok() == Some(id)))
    }

    fn grab(&mut self) -> Result<(RgbImage, WindowInfo), CaptureError> {
        let pixels = self.window.capture_image().map_err(|e| {
            // A window that went away fails in many ways; say which happened.
            match Self::find(self.id) {
                Ok(None) => CaptureError::Gone(self.id),
                _ => CaptureError::Capture {
                    title: self.window.title().unwrap_or_default(),
                    reason: format!("xcap: {e}"),
                },
            }
        })?;
        let info = windows::info(&self.window);
        let image = image::DynamicImage::ImageRgba8(pixels).into_rgb8();
        Ok((image, info))
    }
}
