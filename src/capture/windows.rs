//! Listing the desktop's windows and finding the game window by title.

use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    #[error("no display: DISPLAY is not set (start the game's X session, or export DISPLAY=:0)")]
    NoDisplay,
    #[error("cannot list windows on display {display}: {reason}")]
    List { display: String, reason: String },
    #[error("no visible window title contains \"{wanted}\". Visible windows:\n{}", list_titles(.visible))]
    NotFound {
        wanted: String,
        visible: Vec<WindowInfo>,
    },
}

fn list_titles(visible: &[WindowInfo]) -> String {
    if visible.is_empty() {
        return "  (none)".into();
    }
    visible
        .iter()
        .map(|w| {
            format!(
                "  - \"{}\" ({}, {}x{})",
                w.title, w.app_name, w.width, w.height
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A top-level window as the window manager reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowInfo {
    pub id: u32,
    pub title: String,
    pub app_name: String,
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    pub minimized: bool,
    /// Has the keyboard focus (the window manager's active window).
    pub focused: bool,
}

/// Every top-level window on the current display.
pub fn list() -> Result<Vec<WindowInfo>, WindowError> {
    let display = std::env::var("DISPLAY").unwrap_or_default();
    if display.is_empty() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        return Err(WindowError::NoDisplay);
    }
    let windows = xcap::Window::all().map_err(|e| WindowError::List {
        display: display.clone(),
        reason: e.to_string(),
    })?;
    Ok(windows.iter().map(info).collect())
}

/// What the window manager says about one window.
pub fn info(w: &xcap::Window) -> WindowInfo {
    WindowInfo {
        id: w.id().unwrap_or(0),
        title: w.title().unwrap_or_default(),
        app_name: w.app_name().unwrap_or_default(),
        x: w.x().unwrap_or(0),
        y: w.y().unwrap_or(0),
        width: w.width().unwrap_or(0),
        height: w.height().unwrap_or(0),
        minimized: w.is_minimized().unwrap_or(false),
        focused: w.is_focused().unwrap_or(false),
    }
}

/// The first visible window whose title contains `wanted` (case-insensitive); a window without a
/// title (Minetest's Irrlicht window sets only the legacy WM_NAME, which xcap does not read)
/// matches by its application name (WM_CLASS).
pub fn find_by_title(windows: &[WindowInfo], wanted: &str) -> Result<WindowInfo, WindowError> {
    let needle = wanted.to_lowercase();
    let visible: Vec<WindowInfo> = windows
        .iter()
        .filter(|w| !w.minimized && w.width > 0 && w.height > 0)
        .cloned()
        .collect();
    visible
        .iter()
        .find(|w| {
            let name = if w.title.is_empty() {
                &w.app_name
            } else {
                &w.title
            };
            name.to_lowercase().contains(&needle)
        })
        .cloned()
        .ok_or(WindowError::NotFound {
            wanted: wanted.to_string(),
            visible,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(title: &str, minimized: bool) -> WindowInfo {
        WindowInfo {
            id: 1,
            title: title.into(),
            app_name: "app".into(),
            x: 0,
            y: 0,
            width: 854,
            height: 480,
            minimized,
            focused: false,
        }
    }

    #[test]
    fn finds_case_insensitively_and_skips_minimised() {
        let ws = vec![
            win("Minecraft 1.20.1", true),
            win("minecraft* 1.20 - Singleplayer", false),
        ];
        let found = find_by_title(&ws, "Minecraft").expect("found");
        assert_eq!(found.title, "minecraft* 1.20 - Singleplayer");
    }

    #[test]
    fn an_untitled_window_matches_by_its_application_name() {
        let mut untitled = win("", false);
        untitled.app_name = "Minetest".into();
        let ws = vec![win("xterm", false), untitled];
        let found = find_by_title(&ws, "minetest").expect("found");
        assert_eq!(found.app_name, "Minetest");
        assert!(
            find_by_title(&ws, "app").is_err(),
            "titled windows match by title only"
        );
    }

    #[test]
    fn not_found_lists_visible_windows() {
        let ws = vec![win("xterm", false), win("Hidden", true)];
        let err = find_by_title(&ws, "Minecraft").expect_err("missing");
        let text = err.to_string();
        assert!(text.contains("\"xterm\""), "{text}");
        assert!(!text.contains("Hidden"), "{text}");
    }
}
