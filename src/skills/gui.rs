//! GUI geometry (`config/games/<game>.toml` `[gui]`): where a named slot is, in window pixels,
//! for a window size and GUI scale.
//!
//! Skills say `inventory.craft.0` or `hud.hotbar.4`, never pixels, so one profile file covers
//! every window size and scale, and a wrong number is fixed in data, once. Positions follow the
//! game's own integer arithmetic (Minecraft's `ScaledResolution` / `Window.setGuiScale` and
//! `GuiContainer.initGui` / `AbstractContainerScreen.init`), so a centre is exact, not estimated.
//! Window coordinates are pixels from the window's top-left corner.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::expand::SlotGeometry;
use super::library::SlotNames;
use crate::config::GuiScale;
use crate::profile_file::ProfileFile;
use crate::toml_lines::{self, DataFileError};

/// Minecraft's "auto" GUI scale keeps the scaled window at least this wide...
pub const MIN_SCALED_WIDTH: u32 = 320;
/// ...and this tall.
pub const MIN_SCALED_HEIGHT: u32 = 240;

/// The GUI scale Minecraft uses for a window: the largest `s` (at most the fixed scale, unbounded
/// for `Auto` or `Fixed(0)`, which is what the game stores for "auto") with
/// `window_w / s >= 320` and `window_h / s >= 240`, and at least 1.
///
/// A fixed scale that does not fit is clamped, as the game does: 1280x720 at scale 4 draws at 3.
/// The "force Unicode font" even-scale rule is not modelled (the option must be off).
pub fn effective_scale(window_w: u32, window_h: u32, scale: GuiScale) -> u32 {
    let limit = match scale {
        GuiScale::Fixed(n) if n > 0 => u32::from(n),
        _ => u32::MAX,
    };
    let mut s = 1;
    while s < limit
        && window_w / (s + 1) >= MIN_SCALED_WIDTH
        && window_h / (s + 1) >= MIN_SCALED_HEIGHT
    {
        s += 1;
    }
    s
}

/// `[gui.scale] rule`: the game's own rule for its GUI scale at a window size, used where the
/// frame does not show the scale (`[gui.scale] measure`).
#[derive(Debug, Clone, PartialEq)]
pub enum ScaleRule {
    /// Vanilla Minecraft: [`effective_scale`] with the player's `game.gui_scale`.
    Minecraft,
    /// The game's scale option (`default`, or `game.gui_scale` when fixed) unless a breakpoint
    /// matches the window; of those that match, the last wins (minecraft-web-client's
    /// `scaleInterface.ts`).
    Breakpoints {
        default: f32,
        breakpoints: Vec<Breakpoint>,
    },
}

/// One breakpoint of [`ScaleRule::Breakpoints`]: the scale when the window is at most
/// `max_width` wide, at most `max_height` and at least `min_height` high (absent: any).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Breakpoint {
    #[serde(default)]
    pub max_width: Option<u32>,
    #[serde(default)]
    pub max_height: Option<u32>,
    #[serde(default)]
    pub min_height: Option<u32>,
    pub scale: f32,
}

impl ScaleRule {
    /// The GUI scale the rule gives a `window_w` x `window_h` window with the player's option.
    pub fn scale(&self, window_w: u32, window_h: u32, option: GuiScale) -> f32 {
        match self {
            ScaleRule::Minecraft => effective_scale(window_w, window_h, option) as f32,
            ScaleRule::Breakpoints {
                default,
                breakpoints,
            } => {
                let base = match option {
                    GuiScale::Fixed(n) if n > 0 => f32::from(n),
                    _ => *default,
                };
                breakpoints
                    .iter()
                    .rfind(|b| {
                        b.max_width.is_none_or(|m| window_w <= m)
                            && b.max_height.is_none_or(|m| window_h <= m)
                            && b.min_height.is_none_or(|m| window_h >= m)
                    })
                    .map_or(base, |b| b.scale)
            }
        }
    }
}

/// `[gui.scale] measure`: the outline the GUI scale is measured from in a frame, a rectangle in
/// GUI pixels relative to the top-left of the first slot's item area of `region` (a
/// `<screen>.<region>` of the HUD), whose one-GUI-pixel border has a luma in `luma` (Minecraft's
/// hotbar: a 182 x 22 bar with an opaque black outline, the first item 3 GUI px in).
#[derive(Debug, Clone, PartialEq)]
pub struct OutlineSpec {
    pub screen: String,
    pub region: String,
    pub rect: [i32; 4],
    pub luma: (u8, u8),
}

/// A location that names no slot; the message lists what exists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuiError {
    #[error("\"{0}\" is not a GUI location: expected <screen>.<region>[.<index>]")]
    Malformed(String),
    #[error("{location}: no GUI screen \"{screen}\" (known: {})", .known.join(", "))]
    UnknownScreen {
        location: String,
        screen: String,
        known: Vec<String>,
    },
    #[error("{location}: screen {screen} has no slot region \"{region}\" (known: {})", .known.join(", "))]
    UnknownRegion {
        location: String,
        screen: String,
        region: String,
        known: Vec<String>,
    },
    #[error("{location}: {region} has {count} slots, so it needs an index 0-{}", .count - 1)]
    BadIndex {
        location: String,
        region: String,
        count: u32,
    },
    #[error("{location}: {region} is a single slot and takes no index")]
    UnexpectedIndex { location: String, region: String },
}

/// Where a screen's panel sits in the scaled window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Anchor {
    /// Centred: left = (scaled_w - w) / 2, top = (scaled_h - h) / 2 (container screens).
    #[default]
    Center,
    /// Centred horizontally on the bottom edge: left as for `Center`, top = scaled_h - h (the HUD
    /// hotbar; the game's `scaled_w / 2 - 91` is the same left for its even width 182).
    BottomCenter,
}

#[derive(Debug, Clone, PartialEq)]
struct Screen {
    size: (u32, u32),
    anchor: Anchor,
    scale: ScreenScale,
    regions: BTreeMap<String, Region>,
    marker: Option<Marker>,
    /// The panel's own background somewhere (`panel`): with it, the marker counts only where
    /// the panel shows too. A frame dark all over (a shaft's floor looked straight down at)
    /// shows the inventory's black preview box and no panel around it.
    panel: Option<Marker>,
    /// Areas `[x, y, w, h]` (GUI px from the panel's top-left, reaching past it as far as they
    /// like) hidden from the detector while the screen's marker shows.
    masks: Vec<[i32; 4]>,
}

/// How many window pixels one of a screen's GUI pixels covers (`[gui.screens.<name>] scale`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum ScreenScale {
    /// The game's GUI scale (measured from the frame, else `[gui.scale] rule`).
    Gui,
    /// The same at every window size (Minetest's HUD hotbar: window pixels).
    Fixed(f32),
    /// The window's height over this many pixels (Minetest's formspecs fit the window's height).
    PerHeight(f32),
}

/// `scale = 1` or `scale = { per_height = 480 }` as written; absent: the GUI scale.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
enum RawScreenScale {
    Fixed(f32),
    PerHeight { per_height: f32 },
}

/// What a screen draws that no other screen draws where it is (`[gui.screens.<name>] marker`):
/// an area of the panel, in GUI pixels from its top-left, whose pixels are mostly within a
/// luma range while the screen is open. Screens that draw the player's bag alike (the
/// inventory, a crafting table whose grid is empty, a furnace) cannot be told apart by their
/// items: the web client's inventory draws its player preview as a black box where the
/// crafting table draws its grey grid and the furnace its light background.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Marker {
    area: (u32, u32, u32, u32),
    pixel: MarkerPixel,
    /// The screen is a colour laid over the world (`tint`): a pixel must also be one that
    /// colour could give over some world colour.
    tint: Option<Tint>,
    min_fraction: f32,
}

/// A colour laid over the whole window at an opacity (the web client's death screen:
/// `rgba(255, 0, 0, 0.5)`). Every channel of a pixel under it lies between the tint over black
/// and the tint over white: red at least 127 and green and blue at most 128 under that one. A
/// close dirt wall (red 52 over green) passed the `red` rule alone and ended a run from nothing
/// as a death (world 3107); its light pixels are too green for the tint, its dark ones too dark.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tint {
    rgb: [f32; 3],
    alpha: f32,
}

impl Tint {
    /// Slack in each channel's bounds: recorded frames are JPEG (replays read them).
    const SLACK: f32 = 8.0;

    fn could_cover(self, pixel: [u8; 3]) -> bool {
        pixel.iter().zip(self.rgb).all(|(&p, t)| {
            let over_black = self.alpha * t;
            let over_white = over_black + (1.0 - self.alpha) * 255.0;
            (over_black - Self::SLACK..=over_white + Self::SLACK).contains(&f32::from(p))
        })
    }
}

impl Marker {
    fn holds(&self, pixel: [u8; 3]) -> bool {
        self.pixel.holds(pixel) && self.tint.is_none_or(|t| t.could_cover(pixel))
    }
}

/// What a pixel of a marker's area must be.
#[derive(Debug, Clone, Copy, PartialEq)]
enum MarkerPixel {
    /// A Rec. 601 luma in the range.
    Luma(u8, u8),
    /// Red by at least this much over the greater of green and blue (0-255): a window tinted
    /// red, as the web client's death screen tints it, whatever is under the tint.
    Red(u8),
}

impl MarkerPixel {
    fn holds(self, [r, g, b]: [u8; 3]) -> bool {
        match self {
            MarkerPixel::Luma(lo, hi) => {
                // Rec. 601 luma, in integers.
                let luma = (299 * u32::from(r) + 587 * u32::from(g) + 114 * u32::from(b)) / 1000;
                (u32::from(lo)..=u32::from(hi)).contains(&luma)
            }
            MarkerPixel::Red(min) => i32::from(r) - i32::from(g.max(b)) >= i32::from(min),
        }
    }
}

/// A grid of slots, row-major, `pitch` GUI pixels apart (x, y).
#[derive(Debug, Clone, PartialEq)]
struct Region {
    origin: (u32, u32),
    columns: u32,
    rows: u32,
    pitch: (u32, u32),
}

/// `pitch = 18` (both axes) or `pitch = [35, 32]` (x, y): Minetest's formspec grids are not
/// square.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
enum RawPitch {
    Both(u32),
    Axes([u32; 2]),
}

impl RawPitch {
    fn axes(self) -> (u32, u32) {
        match self {
            RawPitch::Both(p) => (p, p),
            RawPitch::Axes([x, y]) => (x, y),
        }
    }
}

impl Region {
    fn count(&self) -> u32 {
        self.columns.saturating_mul(self.rows)
    }
}

/// The `[gui]` part of a game profile: every screen's panel and slot regions, in GUI pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct GuiGeometry {
    slot_size: u32,
    /// The game's rule for its GUI scale, used where the frame does not show it.
    rule: ScaleRule,
    /// What the GUI scale is measured from in a frame, if the game draws it.
    outline: Option<OutlineSpec>,
    screens: BTreeMap<String, Screen>,
    /// Region names (in any screen) whose slots hold what the player owns (`hotbar`, `main`);
    /// empty: every slot. A craft grid or result slot is not owned: an item left there is not
    /// in the bag, and a task is not done because its item shows there.
    bag_regions: Vec<String>,
    /// The screen the game keeps drawing while another screen is open (the web client's HUD
    /// under its inventory), if any: its hotbar row then shows the same items as the open
    /// screen's, and settles what a contested slot of that row holds.
    drawn_under_screens: Option<String>,
}

// A text with a `[gui]` table and anything else ([`GuiGeometry::parse`]); a whole profile file is
// read strictly by `profile_file::ProfileFile`.
#[derive(Deserialize)]
struct RawProfile {
    gui: Spanned<RawGui>,
}

/// `[gui]` as written, with the spans its errors point at; [`GuiGeometry`] is it checked.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGui {
    slot_size: Spanned<u32>,
    pitch: Spanned<RawPitch>,
    #[serde(default)]
    scale: Option<Spanned<RawScaleSpec>>,
    #[serde(default)]
    bag_regions: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    drawn_under_screens: Option<Spanned<String>>,
    screens: BTreeMap<String, Spanned<RawScreen>>,
}

/// `[gui.scale]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScaleSpec {
    #[serde(default)]
    rule: Option<String>,
    #[serde(default)]
    default: Option<f32>,
    #[serde(default)]
    breakpoints: Vec<Breakpoint>,
    #[serde(default)]
    measure: Option<RawOutline>,
}

/// `measure = { region = "hud.hotbar", rect = [-3, -3, 182, 22], luma = [0, 40] }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutline {
    region: String,
    rect: [i32; 4],
    luma: [u8; 2],
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScreen {
    size: Spanned<[u32; 2]>,
    #[serde(default)]
    anchor: Anchor,
    #[serde(default)]
    scale: Option<Spanned<RawScreenScale>>,
    #[serde(default)]
    regions: BTreeMap<String, Spanned<RawRegion>>,
    #[serde(default)]
    marker: Option<Spanned<RawMarker>>,
    #[serde(default)]
    panel: Option<Spanned<RawMarker>>,
    #[serde(default)]
    masks: Option<Spanned<Vec<[i32; 4]>>>,
}

/// `marker = { area = [x, y, w, h], luma = [0, 40], min_fraction = 0.8 }`: at least
/// `min_fraction` of the area's pixels have a luma in the range while the screen is open; or,
/// instead of `luma`, `red = 40`: red by at least 40 over green and blue. With
/// `tint = [r, g, b, alpha]` a pixel must also be one that colour at that opacity could give
/// over some world colour.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMarker {
    area: [u32; 4],
    #[serde(default)]
    luma: Option<[u8; 2]>,
    #[serde(default)]
    red: Option<u8>,
    #[serde(default)]
    tint: Option<[f32; 4]>,
    min_fraction: f32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRegion {
    origin: [u32; 2],
    #[serde(default = "one")]
    columns: u32,
    #[serde(default = "one")]
    rows: u32,
    pitch: Option<RawPitch>,
}

fn one() -> u32 {
    1
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Turns a checked value's span into `file:line: message`.
struct Lines<'a> {
    text: &'a str,
    path: &'a Path,
}

impl Lines<'_> {
    fn error<T>(&self, at: &Spanned<T>, message: impl Into<String>) -> DataFileError {
        DataFileError::at(
            self.path,
            toml_lines::line_at(self.text, at.span().start),
            message,
        )
    }

    fn screen(
        &self,
        name: &str,
        raw: Spanned<RawScreen>,
        slot_size: u32,
        pitch: (u32, u32),
    ) -> Result<Screen, DataFileError> {
        let key = format!("gui.screens.{name}");
        if !valid_name(name) {
            return Err(self.error(&raw, format!("{key}: {NAME_RULE}")));
        }
        // A screen with no slots is only there to be told by its marker (a pause menu).
        if raw.get_ref().regions.is_empty() && raw.get_ref().marker.is_none() {
            return Err(self.error(
                &raw,
                format!("{key}: no slot regions defined (and no marker)"),
            ));
        }
        let raw = raw.into_inner();
        let [w, h] = *raw.size.get_ref();
        if w == 0 || h == 0 {
            return Err(self.error(&raw.size, format!("{key}.size must be at least 1 x 1")));
        }
        let mut regions = BTreeMap::new();
        for (rname, r) in raw.regions {
            let key = format!("{key}.regions.{rname}");
            if !valid_name(&rname) {
                return Err(self.error(&r, format!("{key}: {NAME_RULE}")));
            }
            let region = region(r.get_ref(), (w, h), slot_size, pitch)
                .map_err(|m| self.error(&r, format!("{key}: {m}")))?;
            regions.insert(rname, region);
        }
        let marker = match &raw.marker {
            Some(m) => Some(self.marker(m, &format!("{key}.marker"), (w, h))?),
            None => None,
        };
        let panel = match &raw.panel {
            Some(m) => Some(self.marker(m, &format!("{key}.panel"), (w, h))?),
            None => None,
        };
        let masks = match raw.masks {
            None => Vec::new(),
            Some(m) => {
                if m.get_ref().iter().any(|[_, _, w, h]| *w <= 0 || *h <= 0) {
                    return Err(self.error(
                        &m,
                        format!("{key}.masks: every [x, y, w, h] needs w and h above 0"),
                    ));
                }
                m.into_inner()
            }
        };
        let scale = match raw.scale {
            None => ScreenScale::Gui,
            Some(sc) => match *sc.get_ref() {
                RawScreenScale::Fixed(f) if f > 0.0 && f.is_finite() => ScreenScale::Fixed(f),
                RawScreenScale::PerHeight { per_height } if per_height >= 1.0 => {
                    ScreenScale::PerHeight(per_height)
                }
                _ => {
                    return Err(self.error(
                        &sc,
                        format!("{key}.scale must be a number above 0 or {{ per_height = <pixels, at least 1> }}"),
                    ));
                }
            },
        };
        Ok(Screen {
            size: (w, h),
            anchor: raw.anchor,
            scale,
            regions,
            marker,
            panel,
            masks,
        })
    }
}

impl Lines<'_> {
    /// A marker (`marker`, `panel`) of a screen of `w` x `h` GUI px, checked; `what` names it
    /// in errors (`gui.screens.inventory.marker`).
    fn marker(
        &self,
        m: &Spanned<RawMarker>,
        what: &str,
        (w, h): (u32, u32),
    ) -> Result<Marker, DataFileError> {
        let r = m.get_ref();
        let [x, y, mw, mh] = r.area;
        if mw == 0 || mh == 0 || x + mw > w || y + mh > h {
            return Err(self.error(
                m,
                format!("{what}.area [{x}, {y}, {mw}, {mh}] must be a non-empty area inside the {w} x {h} panel"),
            ));
        }
        if !(r.min_fraction > 0.0 && r.min_fraction <= 1.0) {
            return Err(self.error(
                m,
                format!("{what}.min_fraction {} must be in (0, 1]", r.min_fraction),
            ));
        }
        let pixel = match (r.luma, r.red) {
            (Some([lo, hi]), None) if lo <= hi => MarkerPixel::Luma(lo, hi),
            (Some([lo, hi]), None) => {
                return Err(self.error(m, format!("{what}.luma [{lo}, {hi}] must be [low, high]")));
            }
            (None, Some(min)) => MarkerPixel::Red(min),
            _ => {
                return Err(self.error(
                    m,
                    format!("{what} needs one of luma = [low, high] and red = min"),
                ));
            }
        };
        let tint = match r.tint {
            None => None,
            Some([tr, tg, tb, alpha])
                if [tr, tg, tb].iter().all(|c| (0.0..=255.0).contains(c))
                    && alpha > 0.0
                    && alpha < 1.0 =>
            {
                Some(Tint {
                    rgb: [tr, tg, tb],
                    alpha,
                })
            }
            Some(t) => {
                return Err(self.error(
                    m,
                    format!(
                        "{what}.tint {t:?} must be [r, g, b, alpha] with r, g, b in 0-255 and alpha in (0, 1)"
                    ),
                ));
            }
        };
        Ok(Marker {
            area: (x, y, mw, mh),
            pixel,
            tint,
            min_fraction: r.min_fraction,
        })
    }
}

impl Lines<'_> {
    /// Checks `[gui.scale]` against the screens it names.
    fn scale_spec(
        &self,
        spec: Spanned<RawScaleSpec>,
        screens: &BTreeMap<String, Screen>,
    ) -> Result<(ScaleRule, Option<OutlineSpec>), DataFileError> {
        let raw = spec.get_ref();
        let rule = match (raw.rule.as_deref(), raw.default) {
            (None | Some("minecraft"), None) if raw.breakpoints.is_empty() => ScaleRule::Minecraft,
            (Some("breakpoints"), Some(default)) if default > 0.0 => {
                if let Some(b) = raw
                    .breakpoints
                    .iter()
                    .find(|b| b.scale.is_nan() || b.scale <= 0.0)
                {
                    return Err(self.error(
                        &spec,
                        format!("gui.scale.breakpoints: scale {} must be above 0", b.scale),
                    ));
                }
                ScaleRule::Breakpoints {
                    default,
                    breakpoints: raw.breakpoints.clone(),
                }
            }
            (Some("breakpoints"), _) => {
                return Err(self.error(
                    &spec,
                    "gui.scale: rule \"breakpoints\" needs `default` (the game's scale option, above 0)",
                ));
            }
            (Some(other), _) if other != "minecraft" => {
                return Err(self.error(
                    &spec,
                    format!("gui.scale.rule: \"{other}\" is not a rule (known: \"minecraft\", \"breakpoints\")"),
                ));
            }
            _ => {
                return Err(self.error(
                    &spec,
                    "gui.scale: `default` and `breakpoints` belong to rule = \"breakpoints\"",
                ));
            }
        };
        let outline = match &raw.measure {
            None => None,
            Some(m) => {
                let found = m.region.split_once('.').filter(|(sname, rname)| {
                    screens.get(*sname).is_some_and(|s| {
                        s.scale == ScreenScale::Gui && s.regions.contains_key(*rname)
                    })
                });
                let Some((sname, rname)) = found else {
                    return Err(self.error(
                        &spec,
                        format!("gui.scale.measure.region: \"{}\" is not a <screen>.<region> of a screen drawn at the GUI scale", m.region),
                    ));
                };
                let [lo, hi] = m.luma;
                if m.rect[2] < 4 || m.rect[3] < 4 || lo > hi {
                    return Err(self.error(
                        &spec,
                        "gui.scale.measure: rect must be at least 4 x 4 GUI px and luma [low, high]",
                    ));
                }
                Some(OutlineSpec {
                    screen: sname.to_string(),
                    region: rname.to_string(),
                    rect: m.rect,
                    luma: (lo, hi),
                })
            }
        };
        Ok((rule, outline))
    }
}

const NAME_RULE: &str = "a name is lower-case letters, digits and '_'";

/// Checks one region against its panel: `default_pitch` is `[gui] pitch`.
fn region(
    raw: &RawRegion,
    (w, h): (u32, u32),
    slot_size: u32,
    default_pitch: (u32, u32),
) -> Result<Region, String> {
    if raw.columns == 0 || raw.rows == 0 {
        return Err("columns and rows must be at least 1".into());
    }
    let pitch = raw.pitch.map_or(default_pitch, RawPitch::axes);
    let overlap = |p: u32, n: u32| p < slot_size && n > 1;
    if overlap(pitch.0, raw.columns) || overlap(pitch.1, raw.rows) {
        return Err(format!(
            "pitch {pitch:?} is less than slot_size {slot_size}: slots would overlap"
        ));
    }
    // The last slot must end inside the panel: catches a mistyped origin or count.
    let end = |origin: u32, n: u32, p: u32| {
        u64::from(origin) + u64::from(n - 1) * u64::from(p) + u64::from(slot_size)
    };
    let [x, y] = raw.origin;
    let (x_end, y_end) = (end(x, raw.columns, pitch.0), end(y, raw.rows, pitch.1));
    if x_end > u64::from(w) || y_end > u64::from(h) {
        return Err(format!(
            "the last slot ends at ({x_end}, {y_end}), outside the {w} x {h} panel"
        ));
    }
    Ok(Region {
        origin: (x, y),
        columns: raw.columns,
        rows: raw.rows,
        pitch,
    })
}

impl GuiGeometry {
    /// Reads the `[gui]` part of a game profile file.
    pub fn load(path: &Path) -> Result<Self, DataFileError> {
        Self::from_profile(&ProfileFile::read(path)?)
    }

    /// The checked `[gui]` of a profile file.
    pub fn from_profile(file: &ProfileFile) -> Result<Self, DataFileError> {
        Self::from_section(file.required("gui")?, &file.text, &file.path)
    }

    /// Parses the `[gui]` table of a TOML text; `path` only names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, DataFileError> {
        let raw: RawProfile =
            toml_lines::from_str(text).map_err(|(line, m)| DataFileError::at(path, line, m))?;
        Self::from_section(raw.gui, text, path)
    }

    /// Checks `[gui]` as read from `text`.
    fn from_section(raw: Spanned<RawGui>, text: &str, path: &Path) -> Result<Self, DataFileError> {
        let at = Lines { text, path };
        if raw.get_ref().screens.is_empty() {
            return Err(at.error(&raw, "gui.screens: no screens defined"));
        }
        let gui = raw.into_inner();
        let slot_size = *gui.slot_size.get_ref();
        if slot_size == 0 {
            return Err(at.error(&gui.slot_size, "gui.slot_size must be at least 1"));
        }
        let pitch = gui.pitch.get_ref().axes();
        if pitch.0 < slot_size || pitch.1 < slot_size {
            return Err(at.error(
                &gui.pitch,
                format!(
                    "gui.pitch {pitch:?} is less than slot_size {slot_size}: slots would overlap"
                ),
            ));
        }
        let screens = gui
            .screens
            .into_iter()
            .map(|(name, raw)| {
                let screen = at.screen(&name, raw, slot_size, pitch)?;
                Ok((name, screen))
            })
            .collect::<Result<BTreeMap<String, Screen>, DataFileError>>()?;
        let bag_regions = match gui.bag_regions {
            Some(list) => {
                for name in list.get_ref() {
                    if !screens.values().any(|s| s.regions.contains_key(name)) {
                        return Err(at.error(
                            &list,
                            format!("gui.bag_regions: no screen has a region \"{name}\""),
                        ));
                    }
                }
                list.into_inner()
            }
            None => Vec::new(),
        };
        let drawn_under_screens = match gui.drawn_under_screens {
            Some(name) if !screens.contains_key(name.get_ref()) => {
                return Err(at.error(
                    &name,
                    format!(
                        "gui.drawn_under_screens: no screen \"{}\" in [gui.screens]",
                        name.get_ref()
                    ),
                ));
            }
            name => name.map(Spanned::into_inner),
        };
        let (rule, outline) = match gui.scale {
            Some(spec) => at.scale_spec(spec, &screens)?,
            None => (ScaleRule::Minecraft, None),
        };
        Ok(GuiGeometry {
            slot_size,
            rule,
            outline,
            screens,
            bag_regions,
            drawn_under_screens,
        })
    }

    /// Side of a slot's item area, GUI pixels.
    /// Whether the profile has a screen of this name.
    pub fn has_screen(&self, name: &str) -> bool {
        self.screens.contains_key(name)
    }

    /// Whether `[gui] bag_regions` names the slots the player owns (else every slot counts).
    pub fn has_bag_regions(&self) -> bool {
        !self.bag_regions.is_empty()
    }

    pub fn slot_size(&self) -> u32 {
        self.slot_size
    }

    /// Whether `screen` is a screen of this profile with a marker.
    pub fn has_marker(&self, screen: &str) -> bool {
        self.screens.get(screen).is_some_and(|s| s.marker.is_some())
    }

    /// Every valid location, sorted by screen and region, then by index: `hud.hotbar.0`, ...
    /// A one-slot region is named without an index (`furnace.fuel`).
    pub fn locations(&self) -> Vec<String> {
        self.each_slot().map(|slot| slot.location()).collect()
    }

    /// Every slot in [`Self::locations`] order, with the screen and region it belongs to.
    fn each_slot(&self) -> impl Iterator<Item = SlotRef<'_>> {
        self.screens.iter().flat_map(|(sname, screen)| {
            screen.regions.iter().flat_map(move |(rname, region)| {
                (0..region.count()).map(move |index| SlotRef {
                    sname,
                    screen,
                    rname,
                    region,
                    index,
                })
            })
        })
    }

    /// Whether `location` names a slot, without a window (for the skill loader's checks).
    pub fn check(&self, location: &str) -> Result<(), GuiError> {
        self.resolve(location).map(|_| ())
    }

    /// The GUI scale the profile's rule (`[gui.scale] rule`) gives this window with the player's
    /// `game.gui_scale`: what a frame that does not show its scale is taken to be drawn at.
    pub fn rule_scale(&self, window_w: u32, window_h: u32, option: GuiScale) -> f32 {
        self.rule.scale(window_w, window_h, option)
    }

    /// What the GUI scale is measured from in a frame (`[gui.scale] measure`), if anything.
    pub fn outline(&self) -> Option<&OutlineSpec> {
        self.outline.as_ref()
    }

    /// Positions for one window size at the scale the profile's rule gives it (see
    /// [`Self::layout_at`] for a scale measured from the frame).
    pub fn layout(&self, window_w: u32, window_h: u32, option: GuiScale) -> GuiLayout<'_> {
        self.layout_at(
            window_w,
            window_h,
            self.rule_scale(window_w, window_h, option),
        )
    }

    /// Positions for one window size with the GUI drawn at `gui_scale` (recompute when either
    /// changes). Screens with a scale of their own (`[gui.screens.<name>] scale`) keep it.
    pub fn layout_at(&self, window_w: u32, window_h: u32, gui_scale: f32) -> GuiLayout<'_> {
        GuiLayout {
            geometry: self,
            window: (window_w, window_h),
            gui_scale: if gui_scale > 0.0 && gui_scale.is_finite() {
                gui_scale
            } else {
                1.0
            },
        }
    }

    /// The screen, region and slot index a location names; only canonical names pass
    /// (`main.7`, not `main.07`), so the skill loader and `locations` agree.
    fn resolve(&self, location: &str) -> Result<(&Screen, &Region, u32), GuiError> {
        let parts: Vec<&str> = location.split('.').collect();
        let (sname, rname, index) = match parts[..] {
            [s, r] => (s, r, None),
            [s, r, i] => (s, r, Some(i)),
            _ => return Err(GuiError::Malformed(location.to_string())),
        };
        if sname.is_empty() || rname.is_empty() {
            return Err(GuiError::Malformed(location.to_string()));
        }
        let screen = self
            .screens
            .get(sname)
            .ok_or_else(|| GuiError::UnknownScreen {
                location: location.to_string(),
                screen: sname.to_string(),
                known: self.screens.keys().cloned().collect(),
            })?;
        let region = screen
            .regions
            .get(rname)
            .ok_or_else(|| GuiError::UnknownRegion {
                location: location.to_string(),
                screen: sname.to_string(),
                region: rname.to_string(),
                known: screen.regions.keys().cloned().collect(),
            })?;
        let count = region.count();
        let index = match (count, index) {
            (1, None) => 0,
            (1, Some(_)) => {
                return Err(GuiError::UnexpectedIndex {
                    location: location.to_string(),
                    region: format!("{sname}.{rname}"),
                });
            }
            (_, index) => index
                .and_then(|i| {
                    i.parse::<u32>()
                        .ok()
                        .filter(|n| *n < count && n.to_string() == i)
                })
                .ok_or_else(|| GuiError::BadIndex {
                    location: location.to_string(),
                    region: format!("{sname}.{rname}"),
                    count,
                })?,
        };
        Ok((screen, region, index))
    }
}

/// One slot of the geometry while listing them (see [`GuiGeometry::each_slot`]).
struct SlotRef<'a> {
    sname: &'a str,
    screen: &'a Screen,
    rname: &'a str,
    region: &'a Region,
    index: u32,
}

impl SlotRef<'_> {
    /// Its location name: a one-slot region is named without an index (`furnace.fuel`).
    fn location(&self) -> String {
        match self.region.count() {
            1 => format!("{}.{}", self.sname, self.rname),
            _ => format!("{}.{}.{}", self.sname, self.rname, self.index),
        }
    }
}

/// One slot of a laid-out GUI (see [`GuiLayout::slots`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    /// The screen it is on (`hud`, `inventory`): the first part of its location.
    pub screen: String,
    /// Its location name (`inventory.craft.0`).
    pub location: String,
    /// The centre of its item area, window pixels.
    pub centre: (f32, f32),
}

/// [`GuiGeometry`] placed in one window: answers window-pixel slot centres.
#[derive(Debug, Clone, Copy)]
pub struct GuiLayout<'a> {
    geometry: &'a GuiGeometry,
    window: (u32, u32),
    gui_scale: f32,
}

/// Whether a scale is a whole number: the game then places panels with integer arithmetic.
fn whole(scale: f32) -> Option<i64> {
    let r = scale.round();
    ((scale - r).abs() < 1e-4 && r >= 1.0).then_some(r as i64)
}

impl<'a> GuiLayout<'a> {
    /// The GUI scale in effect (measured from the frame or the profile's rule).
    pub fn scale(&self) -> f32 {
        self.gui_scale
    }

    /// Window pixels per GUI pixel of a screen (`hud`, `inventory`): the GUI scale, or the
    /// screen's own (`[gui.screens.<name>] scale`). An unknown screen has the GUI scale.
    pub fn screen_scale(&self, screen: &str) -> f32 {
        self.geometry
            .screens
            .get(screen)
            .map_or(self.gui_scale, |s| self.scale_of(s))
    }

    fn scale_of(&self, screen: &Screen) -> f32 {
        match screen.scale {
            ScreenScale::Gui => self.gui_scale,
            ScreenScale::Fixed(f) => f,
            ScreenScale::PerHeight(h) => self.window.1 as f32 / h,
        }
    }

    /// The centre of a slot's item area, in window pixels from the window's top-left.
    ///
    /// At a whole scale the panel is placed as the game computes it (Java `/` truncates like
    /// Rust's): `scaled_w = ceil(window_w / scale)`, `left = (scaled_w - w) / 2`,
    /// `top = (scaled_h - h) / 2` (or `scaled_h - h` on the bottom edge); the centre is
    /// `(left + x + slot_size / 2) * scale`, likewise for y. At a fractional scale (a browser's
    /// CSS, Minetest's formspecs) the same without rounding. A panel larger than the scaled
    /// window starts off-window (negative coordinates), as it does in the game.
    pub fn slot_center(&self, location: &str) -> Result<(f32, f32), GuiError> {
        let (screen, region, index) = self.geometry.resolve(location)?;
        Ok(self.centre_of(screen, region, index))
    }

    /// The top-left corner of `screen`'s panel, GUI pixels of that screen, and the screen's
    /// scale (see [`Self::slot_center`]).
    fn panel_origin(&self, screen: &Screen) -> ((f64, f64), f64) {
        let scale = self.scale_of(screen);
        let (w, h) = (i64::from(screen.size.0), i64::from(screen.size.1));
        let (ww, wh) = self.window;
        let origin = match whole(scale) {
            Some(s) => {
                // The game rounds the scaled size up (`ceil(window / scale)`), not down.
                let (sw, sh) = (
                    i64::from(ww).div_euclid(s) + i64::from(i64::from(ww) % s != 0),
                    i64::from(wh).div_euclid(s) + i64::from(i64::from(wh) % s != 0),
                );
                let left = (sw - w) / 2;
                let top = match screen.anchor {
                    Anchor::Center => (sh - h) / 2,
                    Anchor::BottomCenter => sh - h,
                };
                (left as f64, top as f64)
            }
            None => {
                let s = f64::from(scale);
                let (sw, sh) = (f64::from(ww) / s, f64::from(wh) / s);
                let left = (sw - w as f64) / 2.0;
                let top = match screen.anchor {
                    Anchor::Center => (sh - h as f64) / 2.0,
                    Anchor::BottomCenter => sh - h as f64,
                };
                (left, top)
            }
        };
        (origin, f64::from(scale))
    }

    /// The window rectangle `(x0, y0, x1, y1)` of `rect` (GUI px: x, y, w, h) placed relative
    /// to the top-left of the item area of `region`'s first slot on `screen`: the outline the
    /// GUI scale is measured from (`[gui.scale] measure`).
    pub fn outline_rect(&self, spec: &OutlineSpec) -> Option<(f64, f64, f64, f64)> {
        let screen = self.geometry.screens.get(&spec.screen)?;
        let region = screen.regions.get(&spec.region)?;
        let ((left, top), s) = self.panel_origin(screen);
        let [x, y, w, h] = spec.rect;
        let x0 = (left + f64::from(region.origin.0) + f64::from(x)) * s;
        let y0 = (top + f64::from(region.origin.1) + f64::from(y)) * s;
        Some((x0, y0, x0 + f64::from(w) * s, y0 + f64::from(h) * s))
    }

    /// Screens whose marker (`[gui.screens.<name>] marker`) `frame` shows: of the screens whose
    /// slots show as many items, these are the one in view. Screens without a marker are never
    /// listed.
    pub fn marked_screens(&self, frame: &image::RgbImage) -> Vec<String> {
        self.geometry
            .screens
            .iter()
            .filter_map(|(name, screen)| {
                let m = screen.marker?;
                let shown = self.shows(frame, screen, &m)
                    && screen.panel.is_none_or(|p| self.shows(frame, screen, &p));
                shown.then(|| name.clone())
            })
            .collect()
    }

    /// Whether `frame` shows marker `m` of `screen`: at least its `min_fraction` of the pixels
    /// of its area hold.
    fn shows(&self, frame: &image::RgbImage, screen: &Screen, m: &Marker) -> bool {
        let ((left, top), scale) = self.panel_origin(screen);
        let (x, y, w, h) = m.area;
        let px = |gui: f64, max: u32, min: i64| {
            ((gui * scale).round() as i64).clamp(min, i64::from(max))
        };
        let x0 = px(left + f64::from(x), frame.width(), 0);
        let y0 = px(top + f64::from(y), frame.height(), 0);
        let x1 = px(left + f64::from(x + w), frame.width(), x0);
        let y1 = px(top + f64::from(y + h), frame.height(), y0);
        let mut within = 0u64;
        let mut all = 0u64;
        for py in y0..y1 {
            for px in x0..x1 {
                all += 1;
                within += u64::from(m.holds(frame.get_pixel(px as u32, py as u32).0));
            }
        }
        all > 0 && within as f64 >= f64::from(m.min_fraction) * all as f64
    }

    /// The window areas `[x1, y1, x2, y2]` hidden from the detector while `screen` is open
    /// (`[gui.screens.<name>] masks`), clipped to the window.
    pub fn masks(&self, screen: &str) -> Vec<[f64; 4]> {
        let Some(s) = self.geometry.screens.get(screen) else {
            return Vec::new();
        };
        let ((left, top), scale) = self.panel_origin(s);
        let (ww, wh) = (f64::from(self.window.0), f64::from(self.window.1));
        s.masks
            .iter()
            .map(|&[x, y, w, h]| {
                let x1 = (left + f64::from(x)) * scale;
                let y1 = (top + f64::from(y)) * scale;
                let (x2, y2) = (x1 + f64::from(w) * scale, y1 + f64::from(h) * scale);
                [
                    x1.clamp(0.0, ww),
                    y1.clamp(0.0, wh),
                    x2.clamp(0.0, ww),
                    y2.clamp(0.0, wh),
                ]
            })
            .filter(|[x1, y1, x2, y2]| x2 > x1 && y2 > y1)
            .collect()
    }

    /// The centre of slot `index` of `region` on `screen` (see [`Self::slot_center`]).
    fn centre_of(&self, screen: &Screen, region: &Region, index: u32) -> (f32, f32) {
        let ((left, top), scale) = self.panel_origin(screen);
        let (px, py) = (f64::from(region.pitch.0), f64::from(region.pitch.1));
        let x = left + f64::from(region.origin.0) + f64::from(index % region.columns) * px;
        let y = top + f64::from(region.origin.1) + f64::from(index / region.columns) * py;
        let half = f64::from(self.geometry.slot_size) / 2.0;
        (((x + half) * scale) as f32, ((y + half) * scale) as f32)
    }

    /// Every valid location (the same list as [`GuiGeometry::locations`]).
    pub fn locations(&self) -> Vec<String> {
        self.geometry.locations()
    }

    /// Every slot with its screen, location name and centre, in [`Self::locations`] order;
    /// `screen` keeps one screen's slots only.
    pub fn slots(&self, screen: Option<&str>) -> Vec<Slot> {
        self.geometry
            .each_slot()
            .filter(|slot| screen.is_none_or(|only| only == slot.sname))
            .map(|slot| Slot {
                screen: slot.sname.to_string(),
                location: slot.location(),
                centre: self.centre_of(slot.screen, slot.region, slot.index),
            })
            .collect()
    }

    /// The hotbar row of `screen` (`hud`, `inventory`: its `hotbar` region): each slot's hotbar
    /// key (1-9) and centre, in key order; empty where the screen has no hotbar row. With
    /// [`Self::hotbar_key`], the one place that knows a hotbar slot's location name
    /// (`{screen}.hotbar.{key - 1}`).
    pub fn hotbar_row(&self, screen: &str) -> Vec<(u8, (f32, f32))> {
        (0..9u8)
            .filter_map(|i| {
                let centre = self.slot_center(&format!("{screen}.hotbar.{i}")).ok()?;
                Some((i + 1, centre))
            })
            .collect()
    }

    /// The hotbar key (1-9) of the slot at `location` when it is on `screen`'s hotbar row.
    pub fn hotbar_key(&self, screen: &str, location: &str) -> Option<u8> {
        let index: u8 = location
            .strip_prefix(&format!("{screen}.hotbar."))?
            .parse()
            .ok()?;
        (index < 9).then_some(index + 1)
    }

    /// The slot of `screen`'s hotbar row with the same hotbar key as `slot`, a slot of another
    /// screen's hotbar row (`hud.hotbar.6` for `inventory.hotbar.6` and `hud`): the two show the
    /// same item. `None` where `slot` is on `screen` or on no hotbar row.
    pub fn hotbar_twin(&self, slot: &Slot, screen: &str) -> Option<Slot> {
        if slot.screen == screen {
            return None;
        }
        let key = self.hotbar_key(&slot.screen, &slot.location)?;
        let location = format!("{screen}.hotbar.{}", key - 1);
        let centre = self.slot_center(&location).ok()?;
        Some(Slot {
            screen: screen.to_string(),
            location,
            centre,
        })
    }

    /// [`Self::hotbar_twin`] of `slot` on the screen the game keeps drawing under the others
    /// (`[gui] drawn_under_screens`); `None` where the game draws none.
    pub fn drawn_under(&self, slot: &Slot) -> Option<Slot> {
        self.hotbar_twin(slot, self.geometry.drawn_under_screens.as_deref()?)
    }

    /// Whether an icon centred at (x, y) sits in a slot the player owns (`[gui] bag_regions`,
    /// in any screen): within 10 GUI pixels of the slot's centre. Without `bag_regions` every
    /// place counts.
    pub fn in_bag(&self, x: f32, y: f32) -> bool {
        self.geometry.bag_regions.is_empty() || self.bag_screen(x, y).is_some()
    }

    /// The screen (`hud`, `inventory`) of the bag slot (`[gui] bag_regions`) that a detected
    /// icon centred at (x, y) sits on, if any (of screens whose bag rows coincide, the first by
    /// name). Tells a sighting on the HUD hotbar, which is drawn over the world, from one in an
    /// open screen's bag.
    pub fn bag_screen(&self, x: f32, y: f32) -> Option<&'a str> {
        let bag = &self.geometry.bag_regions;
        self.geometry
            .each_slot()
            .filter(|slot| bag.iter().any(|b| b == slot.rname))
            .find(|slot| self.on_slot(x, y, self.centre_of(slot.screen, slot.region, slot.index)))
            .map(|slot| slot.sname)
    }

    /// Of `slots`, the one a detected icon centred at (x, y) sits on ([`Self::on_slot`]), the
    /// nearest where slots of several screens qualify.
    pub fn slot_under<'s>(&self, slots: &'s [Slot], x: f32, y: f32) -> Option<&'s Slot> {
        let d = |s: &Slot| (s.centre.0 - x).powi(2) + (s.centre.1 - y).powi(2);
        slots
            .iter()
            .filter(|s| self.on_slot(x, y, s.centre))
            .min_by(|a, b| d(a).total_cmp(&d(b)))
    }

    /// Whether a detected icon centred at (x, y) is the item in the slot centred at `centre`:
    /// within 10 GUI pixels on both axes (icons are drawn centred in their slot), at the
    /// smallest scale any screen is drawn at.
    pub fn on_slot(&self, x: f32, y: f32, (sx, sy): (f32, f32)) -> bool {
        let smallest = self
            .geometry
            .screens
            .values()
            .map(|s| self.scale_of(s))
            .fold(f32::INFINITY, f32::min);
        let unit = if smallest.is_finite() {
            smallest
        } else {
            self.gui_scale
        };
        let tolerance = 10.0 * unit;
        (x - sx).abs() <= tolerance && (y - sy).abs() <= tolerance
    }
}

impl SlotNames for GuiGeometry {
    fn has_slot(&self, location: &str) -> bool {
        self.check(location).is_ok()
    }
}

impl SlotNames for GuiLayout<'_> {
    fn has_slot(&self, location: &str) -> bool {
        self.slot_center(location).is_ok()
    }
}

impl SlotGeometry for GuiLayout<'_> {
    fn slot_center(&self, location: &str) -> Result<(f32, f32), String> {
        GuiLayout::slot_center(self, location).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests;
