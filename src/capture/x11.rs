//! Grabbing one X window's pixels every step at the X server's own cost.
//!
//! xcap opens a new X connection, lists every window and converts pixel by pixel on each call
//! (8 ms a 1280x720 frame here). A step only needs the window it already found: this keeps one
//! connection and the window's id, asks for the pixels into a shared-memory buffer (MIT-SHM,
//! the buffer handed over as a memfd, so a crash leaves no System V segment behind) and converts
//! them to RGB once. Where the server offers no MIT-SHM (a remote display) the pixels come in
//! the core GetImage reply instead; the rest is the same.

use std::os::fd::{FromRawFd, OwnedFd};

use image::RgbImage;
use x11rb::connection::Connection;
use x11rb::errors::ReplyError;
use x11rb::protocol::shm::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    AtomEnum, ChangeWindowAttributesAux, ConnectionExt as _, CreateWindowAux, ImageFormat,
    ImageOrder, MapState, PropMode, Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use super::error::CaptureError;
use super::windows::WindowInfo;

/// One window's pixels and pose, frame after frame, over one X connection.
pub struct X11Capture {
    conn: RustConnection,
    window: Window,
    root: Window,
    atoms: Atoms,
    shared: Option<SharedBuffer>,
    /// The window's title and application name, read once (only messages show them).
    title: String,
    app_name: String,
}

struct Atoms {
    active_window: u32,
    wm_state: u32,
    wm_state_hidden: u32,
}

/// The buffer the server writes the pixels into, mapped here and attached there.
struct SharedBuffer {
    seg: shm::Seg,
    ptr: *mut libc::c_void,
    len: usize,
}

// The mapping is owned by this value alone; nothing else aliases it on this side.
unsafe impl Send for SharedBuffer {}

impl X11Capture {
    /// Connects to `display` (`None`: `DISPLAY`) and prepares to grab window `id`, through
    /// shared memory where `shared_memory` asks for it and the server offers it.
    pub fn open_on(
        display: Option<&str>,
        id: u32,
        shared_memory: bool,
    ) -> Result<Self, CaptureError> {
        let fail = |reason: String| CaptureError::Capture {
            title: format!("window {id}"),
            reason,
        };
        let (conn, screen) =
            x11rb::connect(display).map_err(|e| CaptureError::NoConnection(e.to_string()))?;
        let root = conn.setup().roots[screen].root;
        let atom = |name: &str| -> Result<u32, CaptureError> {
            Ok(conn
                .intern_atom(false, name.as_bytes())
                .map_err(|e| fail(e.to_string()))?
                .reply()
                .map_err(|e| fail(e.to_string()))?
                .atom)
        };
        let atoms = Atoms {
            active_window: atom("_NET_ACTIVE_WINDOW")?,
            wm_state: atom("_NET_WM_STATE")?,
            wm_state_hidden: atom("_NET_WM_STATE_HIDDEN")?,
        };
        let title = window_title(&conn, id, atom("_NET_WM_NAME")?, atom("UTF8_STRING")?)
            .map_err(|e| gone_or(id, e, &fail))?;
        let app_name = app_name(&conn, id).map_err(|e| gone_or(id, e, &fail))?;
        let mut capture = X11Capture {
            conn,
            window: id,
            root,
            atoms,
            shared: None,
            title,
            app_name,
        };
        if shared_memory && capture.shm_offered() {
            // A server that lists MIT-SHM but cannot take our buffer (a remote display
            // forwarding the extension) is served by the core request.
            let (w, h) = capture.size().map_err(|e| gone_or(id, e, &fail))?;
            capture.shared = SharedBuffer::attach(&capture.conn, frame_bytes(w, h)).ok();
        }
        Ok(capture)
    }

    /// The window's X id.
    pub fn id(&self) -> u32 {
        self.window
    }

    /// Whether the pixels come through shared memory.
    pub fn shared_memory(&self) -> bool {
        self.shared.is_some()
    }

    /// The window's client area as RGB, and where it is now (it may have moved, been resized,
    /// lost the focus or been minimised since the last frame).
    pub fn grab(&mut self) -> Result<(RgbImage, WindowInfo), CaptureError> {
        let id = self.window;
        let title = self.title.clone();
        let fail = |reason: String| CaptureError::Capture {
            title: title.clone(),
            reason,
        };
        let info = self.info().map_err(|e| gone_or(id, e, &fail))?;
        let (w, h) = (info.width, info.height);
        self.grow_shared(frame_bytes(w, h));
        let image = if let Some(shared) = &self.shared {
            let reply = self
                .conn
                .shm_get_image(
                    id,
                    0,
                    0,
                    w as u16,
                    h as u16,
                    !0,
                    ImageFormat::Z_PIXMAP.into(),
                    shared.seg,
                    0,
                )
                .map_err(|e| fail(e.to_string()))?
                .reply()
                .map_err(|e| gone_or(id, e, &fail))?;
            let len = reply.size as usize;
            if len > shared.len {
                return Err(fail(format!(
                    "the server wrote {len} bytes into a {}-byte buffer",
                    shared.len
                )));
            }
            let format = self.pixel_format(reply.depth, reply.visual).map_err(fail)?;
            to_rgb(shared.bytes(len), w, h, reply.depth, &format).map_err(fail)?
        } else {
            let reply = self
                .conn
                .get_image(ImageFormat::Z_PIXMAP, id, 0, 0, w as u16, h as u16, !0)
                .map_err(|e| fail(e.to_string()))?
                .reply()
                .map_err(|e| gone_or(id, e, &fail))?;
            let format = self.pixel_format(reply.depth, reply.visual).map_err(fail)?;
            to_rgb(&reply.data, w, h, reply.depth, &format).map_err(fail)?
        };
        Ok((image, info))
    }

    /// Regrows the shared buffer when the window has grown past it (if a bigger one cannot be
    /// attached, the pixels come through the core request from then on).
    fn grow_shared(&mut self, bytes: usize) {
        if self.shared.as_ref().is_some_and(|s| s.len < bytes) {
            if let Some(old) = self.shared.take() {
                old.detach(&self.conn);
            }
            self.shared = SharedBuffer::attach(&self.conn, bytes).ok();
        }
    }

    fn shm_offered(&self) -> bool {
        self.conn
            .shm_query_version()
            .ok()
            .and_then(|c| c.reply().ok())
            .is_some_and(|v| (v.major_version, v.minor_version) >= (1, 2))
    }

    fn size(&self) -> Result<(u32, u32), ReplyError> {
        let g = self.conn.get_geometry(self.window)?.reply()?;
        Ok((u32::from(g.width), u32::from(g.height)))
    }

    /// The window's pose and state, the requests sent together and answered in one round trip.
    fn info(&self) -> Result<WindowInfo, ReplyError> {
        let geometry = self.conn.get_geometry(self.window)?;
        let origin = self
            .conn
            .translate_coordinates(self.window, self.root, 0, 0)?;
        let state = self.conn.get_property(
            false,
            self.window,
            self.atoms.wm_state,
            AtomEnum::ATOM,
            0,
            32,
        )?;
        let active = self.conn.get_property(
            false,
            self.root,
            self.atoms.active_window,
            AtomEnum::WINDOW,
            0,
            1,
        )?;
        let geometry = geometry.reply()?;
        let origin = origin.reply()?;
        let minimized = state
            .reply()?
            .value32()
            .is_some_and(|mut v| v.any(|a| a == self.atoms.wm_state_hidden));
        let focused = active
            .reply()?
            .value32()
            .and_then(|mut v| v.next())
            .is_some_and(|w| w == self.window);
        Ok(WindowInfo {
            id: self.window,
            title: self.title.clone(),
            app_name: self.app_name.clone(),
            x: i32::from(origin.dst_x),
            y: i32::from(origin.dst_y),
            width: u32::from(geometry.width),
            height: u32::from(geometry.height),
            minimized,
            focused,
        })
    }

    /// How the server lays out a pixel of `depth` drawn with `visual` (the image reply's own:
    /// a window may have another visual than the screen's, e.g. a 32-bit ARGB one).
    fn pixel_format(&self, depth: u8, visual: u32) -> Result<PixelFormat, String> {
        let setup = self.conn.setup();
        let visual = setup
            .roots
            .iter()
            .flat_map(|s| s.allowed_depths.iter())
            .flat_map(|d| d.visuals.iter())
            .find(|v| v.visual_id == visual)
            .ok_or_else(|| format!("visual {visual:#x} is not in the server's setup"))?;
        let bits = setup
            .pixmap_formats
            .iter()
            .find(|f| f.depth == depth)
            .map(|f| f.bits_per_pixel)
            .ok_or_else(|| format!("no pixmap format for depth {depth}"))?;
        Ok(PixelFormat {
            bits_per_pixel: bits,
            big_endian: setup.image_byte_order == ImageOrder::MSB_FIRST,
            masks: [visual.red_mask, visual.green_mask, visual.blue_mask],
        })
    }
}

impl Drop for X11Capture {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.take() {
            shared.detach(&self.conn);
        }
    }
}

impl SharedBuffer {
    /// A memfd of `len` bytes, mapped here and attached to the server.
    fn attach(conn: &RustConnection, len: usize) -> Result<Self, String> {
        // SAFETY: plain libc calls on values checked right after; the fd is owned at once.
        let fd = unsafe { libc::memfd_create(c"vistawise-capture".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        use std::os::fd::AsRawFd;
        if unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) } != 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error().to_string());
        }
        let unmap = |e: String| {
            unsafe { libc::munmap(ptr, len) };
            e
        };
        let seg = conn.generate_id().map_err(|e| unmap(e.to_string()))?;
        // The fd goes to the server, attached writable (it writes the pixels); the mapping here
        // outlives our copy of the fd.
        conn.shm_attach_fd(seg, fd, false)
            .map_err(|e| unmap(e.to_string()))?
            .check()
            .map_err(|e| unmap(e.to_string()))?;
        Ok(SharedBuffer { seg, ptr, len })
    }

    fn bytes(&self, len: usize) -> &[u8] {
        // SAFETY: `ptr` maps `self.len` readable bytes for as long as `self` lives, and
        // `len <= self.len` is checked by the caller; the server wrote them before its reply.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), len.min(self.len)) }
    }

    fn detach(self, conn: &RustConnection) {
        // A server already gone frees its side by itself.
        let _ = conn.shm_detach(self.seg).map(|c| c.ignore_error());
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// A window of our own showing a picture: what the step benchmark captures when no game runs.
pub struct FrameWindow {
    conn: RustConnection,
    id: Window,
    pixmap: Option<u32>,
}

impl FrameWindow {
    /// Opens a `width` x `height` window titled `title` on `DISPLAY` and waits until it shows.
    pub fn open(title: &str, width: u16, height: u16) -> Result<Self, CaptureError> {
        let fail = |reason: String| CaptureError::Capture {
            title: title.to_string(),
            reason,
        };
        let (conn, screen) = x11rb::connect(None).map_err(|e| fail(e.to_string()))?;
        let root = conn.setup().roots[screen].root;
        let id = conn.generate_id().map_err(|e| fail(e.to_string()))?;
        conn.create_window(
            x11rb::COPY_DEPTH_FROM_PARENT,
            id,
            root,
            0,
            0,
            width,
            height,
            0,
            WindowClass::INPUT_OUTPUT,
            0,
            &CreateWindowAux::new().background_pixel(0),
        )
        .map_err(|e| fail(e.to_string()))?;
        conn.change_property8(
            PropMode::REPLACE,
            id,
            AtomEnum::WM_NAME,
            AtomEnum::STRING,
            title.as_bytes(),
        )
        .map_err(|e| fail(e.to_string()))?;
        conn.map_window(id).map_err(|e| fail(e.to_string()))?;
        let window = FrameWindow {
            conn,
            id,
            pixmap: None,
        };
        // A window manager maps it when it has framed it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let state = window
                .conn
                .get_window_attributes(id)
                .map_err(|e| fail(e.to_string()))?
                .reply()
                .map_err(|e| fail(e.to_string()))?
                .map_state;
            if state == MapState::VIEWABLE {
                // A window manager may shrink a window that with its frame would not fit the
                // screen; every shown frame would then come back cut.
                let g = window
                    .conn
                    .get_geometry(id)
                    .map_err(|e| fail(e.to_string()))?
                    .reply()
                    .map_err(|e| fail(e.to_string()))?;
                if (g.width, g.height) != (width, height) {
                    return Err(fail(format!(
                        "the window manager made the {width}x{height} window {}x{} (with its \
                         frame it does not fit the screen): use a screen larger than the frames",
                        g.width, g.height
                    )));
                }
                return Ok(window);
            }
            if std::time::Instant::now() > deadline {
                return Err(fail("the window was not shown within 10 s".into()));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    pub fn id(&self) -> u32 {
        self.id
    }

    /// Shows `image` (the window's size) and returns once the server has drawn it.
    pub fn show(&mut self, image: &RgbImage) -> Result<(), CaptureError> {
        let old = self.pixmap.take();
        let pixmap = show_as_background(&self.conn, self.id, image).map_err(|reason| {
            CaptureError::Capture {
                title: format!("window {}", self.id),
                reason,
            }
        })?;
        self.pixmap = Some(pixmap);
        if let Some(old) = old {
            let _ = self.conn.free_pixmap(old);
        }
        Ok(())
    }
}

impl Drop for FrameWindow {
    fn drop(&mut self) {
        let _ = self.conn.destroy_window(self.id);
        let _ = self.conn.flush();
    }
}

/// Paints `image` into a new pixmap of `window`'s depth, makes it the window's background (the
/// server repaints it by itself from then on) and waits for the server to have done it; the
/// pixmap, for the caller to free when it shows another. 24-bit TrueColor only (BGRX pixels).
pub fn show_as_background(
    conn: &RustConnection,
    window: Window,
    image: &RgbImage,
) -> Result<u32, String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let depth = conn
        .get_geometry(window)
        .map_err(|x| e(&x))?
        .reply()
        .map_err(|x| e(&x))?
        .depth;
    let (w, h) = (image.width() as u16, image.height() as u16);
    let pixmap = conn.generate_id().map_err(|x| e(&x))?;
    conn.create_pixmap(depth, pixmap, window, w, h)
        .map_err(|x| e(&x))?;
    let gc = conn.generate_id().map_err(|x| e(&x))?;
    conn.create_gc(gc, pixmap, &Default::default())
        .map_err(|x| e(&x))?;
    // Rows go in bands to stay under the request size limit.
    let band = 64u16;
    for top in (0..h).step_by(usize::from(band)) {
        let rows = band.min(h - top);
        let mut data = Vec::with_capacity(usize::from(w) * usize::from(rows) * 4);
        for y in top..top + rows {
            for x in 0..w {
                let p = image.get_pixel(u32::from(x), u32::from(y));
                data.extend_from_slice(&[p[2], p[1], p[0], 0]);
            }
        }
        conn.put_image(
            ImageFormat::Z_PIXMAP,
            pixmap,
            gc,
            w,
            rows,
            0,
            top as i16,
            0,
            depth,
            &data,
        )
        .map_err(|x| e(&x))?;
    }
    conn.free_gc(gc).map_err(|x| e(&x))?;
    conn.change_window_attributes(
        window,
        &ChangeWindowAttributesAux::new().background_pixmap(pixmap),
    )
    .map_err(|x| e(&x))?;
    conn.clear_area(false, window, 0, 0, 0, 0)
        .map_err(|x| e(&x))?;
    conn.sync().map_err(|x| e(&x))?;
    Ok(pixmap)
}

/// The window's title (EWMH's UTF-8 name, else the legacy WM_NAME).
fn window_title(
    conn: &RustConnection,
    window: Window,
    net_wm_name: u32,
    utf8: u32,
) -> Result<String, ReplyError> {
    let name = conn
        .get_property(false, window, net_wm_name, utf8, 0, 1024)?
        .reply()?;
    if !name.value.is_empty() {
        return Ok(String::from_utf8_lossy(&name.value).into_owned());
    }
    let legacy = conn
        .get_property(false, window, AtomEnum::WM_NAME, AtomEnum::STRING, 0, 1024)?
        .reply()?;
    Ok(String::from_utf8_lossy(&legacy.value).into_owned())
}

/// The window's application name: the class half of WM_CLASS ("instance\0class\0").
fn app_name(conn: &RustConnection, window: Window) -> Result<String, ReplyError> {
    let class = conn
        .get_property(false, window, AtomEnum::WM_CLASS, AtomEnum::STRING, 0, 256)?
        .reply()?;
    let mut parts = class.value.split(|&b| b == 0).filter(|p| !p.is_empty());
    let instance = parts.next();
    Ok(String::from_utf8_lossy(parts.next().or(instance).unwrap_or_default()).into_owned())
}

/// A window that no longer exists is `Gone`; any other failure is reported as it came.
fn gone_or(id: u32, e: ReplyError, fail: &impl Fn(String) -> CaptureError) -> CaptureError {
    match &e {
        ReplyError::X11Error(x)
            if matches!(
                x.error_kind,
                x11rb::protocol::ErrorKind::Window | x11rb::protocol::ErrorKind::Drawable
            ) =>
        {
            CaptureError::Gone(id)
        }
        _ => fail(e.to_string()),
    }
}

fn frame_bytes(w: u32, h: u32) -> usize {
    (w as usize * h as usize * 4).max(4)
}

/// A ZPixmap pixel as the server lays it out.
#[derive(Debug, Clone, PartialEq)]
pub struct PixelFormat {
    pub bits_per_pixel: u8,
    pub big_endian: bool,
    /// Red, green and blue masks of the visual.
    pub masks: [u32; 3],
}

/// ZPixmap bytes of a `w` x `h` image to RGB. Only 8-bit channels in 32-bit pixels (24- and
/// 32-bit TrueColor, every desktop and Xvfb) are read; anything else is refused by name.
pub fn to_rgb(
    data: &[u8],
    w: u32,
    h: u32,
    depth: u8,
    format: &PixelFormat,
) -> Result<RgbImage, String> {
    let shifts = format.masks.map(|m| m.trailing_zeros());
    if format.bits_per_pixel != 32 || format.masks.iter().any(|m| m >> m.trailing_zeros() != 0xFF) {
        return Err(format!(
            "unsupported pixel format: depth {depth}, {} bits per pixel, masks {:06x}/{:06x}/{:06x} \
             (only 8-bit channels in 32-bit pixels are read)",
            format.bits_per_pixel, format.masks[0], format.masks[1], format.masks[2]
        ));
    }
    let pixels = w as usize * h as usize;
    if data.len() < pixels * 4 {
        return Err(format!(
            "the server sent {} bytes for a {w}x{h} image ({} expected)",
            data.len(),
            pixels * 4
        ));
    }
    let mut rgb = vec![0u8; pixels * 3];
    // Byte offsets of the channels: one shuffle per pixel instead of a shift per channel.
    let offset = |shift: u32| -> usize {
        let lsb_index = (shift / 8) as usize;
        if format.big_endian {
            3 - lsb_index
        } else {
            lsb_index
        }
    };
    let [r, g, b] = shifts.map(offset);
    for (out, px) in rgb.chunks_exact_mut(3).zip(data.chunks_exact(4)) {
        out[0] = px[r];
        out[1] = px[g];
        out[2] = px[b];
    }
    RgbImage::from_raw(w, h, rgb).ok_or_else(|| "image buffer of the wrong size".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bgrx() -> PixelFormat {
        PixelFormat {
            bits_per_pixel: 32,
            big_endian: false,
            masks: [0xFF0000, 0x00FF00, 0x0000FF],
        }
    }

    #[test]
    fn little_endian_bgrx_pixels_become_rgb() {
        let data = [30, 20, 10, 0, 3, 2, 1, 99];
        let img = to_rgb(&data, 2, 1, 24, &bgrx()).expect("converted");
        assert_eq!(img.as_raw(), &vec![10, 20, 30, 1, 2, 3]);
    }

    #[test]
    fn big_endian_servers_put_red_in_the_second_byte() {
        let mut f = bgrx();
        f.big_endian = true;
        let data = [0, 10, 20, 30];
        let img = to_rgb(&data, 1, 1, 24, &f).expect("converted");
        assert_eq!(img.as_raw(), &vec![10, 20, 30]);
    }

    #[test]
    fn other_formats_and_short_data_are_refused_by_name() {
        let mut f = bgrx();
        f.bits_per_pixel = 16;
        f.masks = [0xF800, 0x07E0, 0x001F];
        let e = to_rgb(&[0; 8], 2, 1, 16, &f).expect_err("16-bit");
        assert!(e.contains("depth 16, 16 bits per pixel"), "{e}");
        let e = to_rgb(&[0; 7], 2, 1, 24, &bgrx()).expect_err("short");
        assert!(e.contains("7 bytes for a 2x1 image (8 expected)"), "{e}");
    }
}
