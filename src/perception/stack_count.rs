//! Stack counts: the number a game draws in the corner of an inventory slot. The detector finds
//! the item; how many there are decides whether a recipe can be made (with 2 cobblestones the
//! stone pickaxe's recipe made a hoe in the closed loop). The digits are white glyphs of one
//! fixed font, so they are read by matching against the game's own glyphs (`[counts]` of the
//! game profile, learnt from the game or its font texture with `vistawise counts learn`).
//! Hand-written because it is a few dozen lines of thresholding and template matching; an OCR
//! crate would be a large dependency for ten glyphs of one font.

use std::collections::BTreeMap;

use image::RgbImage;
use serde::Deserialize;

/// Cells of a glyph template (columns x rows).
pub const GLYPH_W: usize = 6;
pub const GLYPH_H: usize = 9;

/// What the lengths of `[counts]` (`area`, `min_glyph_height`) are measured in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum CountUnit {
    /// Window pixels with the slot's screen drawn at `reference_scale`, scaled with that
    /// screen's scale and read pixel by pixel: the browser client's anti-aliased TrueType digits,
    /// Minetest's HUD (a fixed size) and formspecs (grown with the window's height).
    #[default]
    Screen,
    /// GUI pixels times the scale of the slot's screen, read one sample per GUI pixel: vanilla
    /// Minecraft draws its bitmap font on the GUI pixel grid at any scale.
    Gui,
}

impl TryFrom<String> for CountUnit {
    type Error = String;

    // The message names the field: serde's own would only list the variants.
    fn try_from(s: String) -> Result<Self, String> {
        match s.as_str() {
            "screen" => Ok(CountUnit::Screen),
            "gui" => Ok(CountUnit::Gui),
            _ => Err(format!(
                "unit: \"{s}\" is not a unit (known: \"screen\", \"gui\")"
            )),
        }
    }
}

/// `[counts]` of a game profile: where and how the game draws stack counts.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountStyle {
    /// The unit of `area` and `min_glyph_height` (default `height`).
    #[serde(default)]
    pub unit: CountUnit,
    /// The digits' area relative to a slot's centre, per screen (`hud`, `inventory`: the first
    /// part of a slot's location), `[dx1, dy1, dx2, dy2]` in `unit`s.
    pub area: BTreeMap<String, [f32; 4]>,
    /// With `unit = "screen"`: the scale of the slot's screen the lengths were measured at
    /// (needed); with `unit = "gui"` it must be left out.
    #[serde(default)]
    pub reference_scale: Option<f32>,
    /// A digit pixel: every channel at least this bright (the digits are white).
    pub min_channel: u8,
    /// Glyphs lower than this (`unit`s) are not digits (noise, an icon's highlight).
    pub min_glyph_height: f32,
    /// A glyph is read as the template it differs least from, if it differs in at most this
    /// share of cells; otherwise the count is unreadable.
    pub max_mismatch: f32,
    /// What no digits mean: the count the game leaves undrawn (1 in Minetest and Minecraft).
    pub undrawn: u32,
    /// Digit -> rows of `#` (ink) and `.`, GLYPH_W x GLYPH_H.
    #[serde(default)]
    pub glyphs: BTreeMap<String, Vec<String>>,
}

/// A glyph as ink cells, row-major GLYPH_W x GLYPH_H.
pub type Glyph = [bool; GLYPH_W * GLYPH_H];

/// Why a count could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CountError {
    #[error("a glyph matches no digit template (best {digit}, {mismatch:.2} of cells differ)")]
    Unmatched { digit: char, mismatch: f32 },
    #[error("no digit templates: learn them with `vistawise counts learn`")]
    NoTemplates,
    #[error("no count area for screen \"{0}\" in [counts] area")]
    NoArea(String),
    #[error("glyph \"{0}\": needs {GLYPH_H} rows of {GLYPH_W} '#' or '.'")]
    BadTemplate(String),
    #[error("{0}")]
    Invalid(String),
}

impl CountStyle {
    /// Checks the section as loaded: the templates when there are any (`counts learn` runs
    /// before there are), the area and the thresholds.
    pub fn check(&self) -> Result<(), CountError> {
        if !self.glyphs.is_empty() {
            self.templates()?;
        }
        if self.area.is_empty() {
            return Err(CountError::Invalid("area: no screen given".into()));
        }
        if let Some((s, _)) = self
            .area
            .iter()
            .find(|(_, a)| !(a[0] < a[2] && a[1] < a[3]))
        {
            return Err(CountError::Invalid(format!(
                "area.{s}: needs dx1 < dx2 and dy1 < dy2"
            )));
        }
        match (self.unit, self.reference_scale) {
            (CountUnit::Screen, None) => {
                return Err(CountError::Invalid(
                    "reference_scale: needed with unit = \"screen\"".into(),
                ));
            }
            (CountUnit::Screen, Some(h)) if !(h > 0.0 && h.is_finite()) => {
                return Err(CountError::Invalid("reference_scale must be > 0".into()));
            }
            (CountUnit::Gui, Some(_)) => {
                return Err(CountError::Invalid(
                    "reference_scale: not used with unit = \"gui\" (the GUI scale sizes the area): leave it out".into(),
                ));
            }
            _ => {}
        }
        if !(self.min_glyph_height >= 0.0 && self.min_glyph_height.is_finite()) {
            return Err(CountError::Invalid("min_glyph_height must be >= 0".into()));
        }
        if !(0.0..=1.0).contains(&self.max_mismatch) {
            return Err(CountError::Invalid(
                "max_mismatch must be within 0..1".into(),
            ));
        }
        Ok(())
    }

    /// The templates, checked.
    pub fn templates(&self) -> Result<Vec<(char, Glyph)>, CountError> {
        if self.glyphs.is_empty() {
            return Err(CountError::NoTemplates);
        }
        let mut out = Vec::new();
        for (digit, rows) in &self.glyphs {
            let mut chars = digit.chars();
            let (Some(d), None) = (chars.next(), chars.next()) else {
                return Err(CountError::BadTemplate(digit.clone()));
            };
            let Some(g) = d.is_ascii_digit().then(|| parse_rows(rows)).flatten() else {
                return Err(CountError::BadTemplate(digit.clone()));
            };
            out.push((d, g));
        }
        Ok(out)
    }

    /// Window pixels per `unit` on a screen drawn at `screen_scale` (`GuiLayout::screen_scale`).
    pub fn px_per_unit(&self, screen_scale: f32) -> f32 {
        let scale = if screen_scale > 0.0 && screen_scale.is_finite() {
            screen_scale
        } else {
            1.0
        };
        match self.unit {
            // `check` makes sure the reference is there; without it lengths are taken as pixels.
            CountUnit::Screen => scale / self.reference_scale.unwrap_or(scale),
            CountUnit::Gui => scale,
        }
    }

    /// Pixels between samples: one per GUI pixel with `unit = "gui"`, else every pixel.
    fn sample_step(&self, screen_scale: f32) -> u32 {
        match self.unit {
            CountUnit::Screen => 1,
            CountUnit::Gui => (screen_scale.round() as u32).max(1),
        }
    }

    /// The digits' area around a slot centre of `screen`, clipped to the image: `(x1, y1, x2, y2)`.
    fn area_px(
        &self,
        image: &RgbImage,
        screen: &str,
        (cx, cy): (f32, f32),
        screen_scale: f32,
    ) -> Result<(u32, u32, u32, u32), CountError> {
        let area = self
            .area
            .get(screen)
            .ok_or_else(|| CountError::NoArea(screen.to_string()))?;
        let s = self.px_per_unit(screen_scale);
        let clip = |v: f32, max: u32| v.round().clamp(0.0, max as f32) as u32;
        Ok((
            clip(cx + area[0] * s, image.width()),
            clip(cy + area[1] * s, image.height()),
            clip(cx + area[2] * s, image.width()),
            clip(cy + area[3] * s, image.height()),
        ))
    }

    /// The glyphs drawn in the count area of the slot of `screen` centred at `centre`, left to
    /// right. `screen_scale`: the scale the slot's screen is drawn at
    /// (`GuiLayout::screen_scale`), which sizes the area.
    pub fn glyphs_at(
        &self,
        image: &RgbImage,
        screen: &str,
        centre: (f32, f32),
        screen_scale: f32,
    ) -> Result<Vec<Glyph>, CountError> {
        let (x1, y1, x2, y2) = self.area_px(image, screen, centre, screen_scale)?;
        // With GUI units one sample per GUI pixel (its centre): a glyph is then the same cells at
        // every GUI scale, so one set of templates reads them all. Window-height units sample
        // every pixel.
        let step = self.sample_step(screen_scale);
        let (w, h) = (((x2 - x1) / step) as usize, ((y2 - y1) / step) as usize);
        if w == 0 || h == 0 {
            return Ok(Vec::new());
        }
        let ink: Vec<bool> = (0..h * w)
            .map(|i| {
                let x = x1 + (i % w) as u32 * step + step / 2;
                let y = y1 + (i / w) as u32 * step + step / 2;
                image
                    .get_pixel(x, y)
                    .0
                    .iter()
                    .all(|c| *c >= self.min_channel)
            })
            .collect();
        let column_has_ink = |x: usize| (0..h).any(|y| ink[y * w + x]);
        let min_h = self.min_glyph_height * self.px_per_unit(screen_scale) / step as f32;
        let mut out = Vec::new();
        let mut x = 0;
        while x < w {
            if !column_has_ink(x) {
                x += 1;
                continue;
            }
            let start = x;
            while x < w && column_has_ink(x) {
                x += 1;
            }
            // The glyph's rows: the ink's vertical extent within its columns.
            let rows: Vec<usize> = (0..h)
                .filter(|y| (start..x).any(|c| ink[y * w + c]))
                .collect();
            let (Some(&top), Some(&bottom)) = (rows.first(), rows.last()) else {
                continue;
            };
            if ((bottom - top + 1) as f32) < min_h {
                continue;
            }
            out.push(resample(&ink, w, start, x, top, bottom + 1));
        }
        Ok(out)
    }

    /// The count in the slot of `screen` centred at `centre` of a frame where that screen is
    /// drawn at `screen_scale`: `undrawn` when no digits are drawn there.
    pub fn read(
        &self,
        image: &RgbImage,
        screen: &str,
        centre: (f32, f32),
        screen_scale: f32,
    ) -> Result<u32, CountError> {
        let templates = self.templates()?;
        let glyphs = self.glyphs_at(image, screen, centre, screen_scale)?;
        if glyphs.is_empty() {
            return Ok(self.undrawn);
        }
        let mut value: u32 = 0;
        for g in &glyphs {
            let (digit, mismatch) = best_match(g, &templates);
            if mismatch > self.max_mismatch {
                return Err(CountError::Unmatched { digit, mismatch });
            }
            value = value
                .saturating_mul(10)
                .saturating_add(digit.to_digit(10).unwrap_or(0));
        }
        Ok(value)
    }
}

/// Template rows (`#` ink, `.` none), GLYPH_H rows of GLYPH_W: the glyph, or None when they are
/// not that.
pub(crate) fn parse_rows(rows: &[String]) -> Option<Glyph> {
    if rows.len() != GLYPH_H
        || rows
            .iter()
            .any(|r| r.chars().count() != GLYPH_W || r.chars().any(|c| c != '#' && c != '.'))
    {
        return None;
    }
    let mut g = [false; GLYPH_W * GLYPH_H];
    for (y, row) in rows.iter().enumerate() {
        for (x, c) in row.chars().enumerate() {
            g[y * GLYPH_W + x] = c == '#';
        }
    }
    Some(g)
}

/// The template a glyph differs least from, and the share of cells that differ.
pub(crate) fn best_match(g: &Glyph, templates: &[(char, Glyph)]) -> (char, f32) {
    templates
        .iter()
        .map(|(d, t)| {
            let diff = g.iter().zip(t).filter(|(a, b)| a != b).count();
            (*d, diff as f32 / g.len() as f32)
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or(('?', 1.0))
}

/// The ink of columns `x0..x1`, rows `y0..y1` on the template grid: a cell is ink when at least
/// a third of the pixels it covers are.
pub(crate) fn resample(
    ink: &[bool],
    w: usize,
    x0: usize,
    x1: usize,
    y0: usize,
    y1: usize,
) -> Glyph {
    let mut g = [false; GLYPH_W * GLYPH_H];
    let (gw, gh) = ((x1 - x0) as f32, (y1 - y0) as f32);
    for cy in 0..GLYPH_H {
        for cx in 0..GLYPH_W {
            let px0 = x0 + (cx as f32 * gw / GLYPH_W as f32).floor() as usize;
            let px1 = (x0 + ((cx + 1) as f32 * gw / GLYPH_W as f32).ceil() as usize).min(x1);
            let py0 = y0 + (cy as f32 * gh / GLYPH_H as f32).floor() as usize;
            let py1 = (y0 + ((cy + 1) as f32 * gh / GLYPH_H as f32).ceil() as usize).min(y1);
            let (mut on, mut all) = (0, 0);
            for y in py0..py1.max(py0 + 1) {
                for x in px0..px1.max(px0 + 1) {
                    all += 1;
                    on += usize::from(ink[y * w + x]);
                }
            }
            g[cy * GLYPH_W + cx] = on * 3 >= all && on > 0;
        }
    }
    g
}

/// A glyph as template rows (`#`/`.`), as `[counts.glyphs]` stores them.
pub fn glyph_rows(g: &Glyph) -> Vec<String> {
    (0..GLYPH_H)
        .map(|y| {
            (0..GLYPH_W)
                .map(|x| if g[y * GLYPH_W + x] { '#' } else { '.' })
                .collect()
        })
        .collect()
}

/// Templates from labelled examples: each digit's cells inked in at least half its examples.
pub fn learn(examples: &[(char, Glyph)]) -> BTreeMap<String, Vec<String>> {
    let mut by_digit: BTreeMap<char, Vec<&Glyph>> = BTreeMap::new();
    for (d, g) in examples {
        by_digit.entry(*d).or_default().push(g);
    }
    by_digit
        .into_iter()
        .map(|(d, gs)| {
            let mut t = [false; GLYPH_W * GLYPH_H];
            for (i, cell) in t.iter_mut().enumerate() {
                let on = gs.iter().filter(|g| g[i]).count();
                *cell = on * 2 >= gs.len();
            }
            (d.to_string(), glyph_rows(&t))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgb;

    /// A 5x7 pixel font drawn at 1 px per cell, enough to check the reading itself.
    const FONT: [(char, [&str; 7]); 3] = [
        (
            '1',
            [
                "..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###.",
            ],
        ),
        (
            '2',
            [
                ".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####",
            ],
        ),
        (
            '7',
            [
                "#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#...",
            ],
        ),
    ];

    fn draw(img: &mut RgbImage, text: &str, x0: u32, y0: u32) {
        draw_scaled(img, text, x0, y0, 1);
    }

    /// `text` with every font pixel an `s` x `s` block (a GUI drawn at scale `s`).
    fn draw_scaled(img: &mut RgbImage, text: &str, x0: u32, y0: u32, s: u32) {
        let mut x = x0;
        for ch in text.chars() {
            let (_, rows) = FONT.iter().find(|(c, _)| *c == ch).expect("in the font");
            for (dy, row) in rows.iter().enumerate() {
                for (dx, c) in row.chars().enumerate() {
                    if c == '#' {
                        for (px, py) in (0..s * s).map(|i| (i % s, i / s)) {
                            let (gx, gy) = (x + dx as u32 * s + px, y0 + dy as u32 * s + py);
                            img.put_pixel(gx, gy, Rgb([255, 255, 255]));
                        }
                    }
                }
            }
            x += 6 * s;
        }
    }

    fn style() -> CountStyle {
        CountStyle {
            unit: CountUnit::Screen,
            area: BTreeMap::from([("hud".to_string(), [0.0, 0.0, 20.0, 10.0])]),
            reference_scale: Some(1.0),
            min_channel: 200,
            min_glyph_height: 4.0,
            max_mismatch: 0.15,
            undrawn: 1,
            glyphs: BTreeMap::new(),
        }
    }

    /// Templates learnt from one drawing of each digit.
    fn learnt() -> CountStyle {
        let mut img = RgbImage::from_pixel(100, 100, Rgb([40, 60, 40]));
        draw(&mut img, "127", 2, 2);
        let s = style();
        let glyphs = s.glyphs_at(&img, "hud", (0.0, 0.0), 1.0).expect("area");
        assert_eq!(glyphs.len(), 3, "three glyphs side by side");
        let examples: Vec<(char, Glyph)> = "127".chars().zip(glyphs).collect();
        CountStyle {
            glyphs: learn(&examples),
            ..s
        }
    }

    #[test]
    fn reads_the_digits_it_learnt_in_any_order_and_position() {
        let s = learnt();
        for (text, want) in [("721", 721), ("2", 2), ("17", 17), ("11", 11)] {
            let mut img = RgbImage::from_pixel(100, 100, Rgb([90, 70, 30]));
            draw(&mut img, text, 50, 40);
            assert_eq!(s.read(&img, "hud", (47.0, 38.0), 1.0), Ok(want), "{text}");
        }
    }

    #[test]
    fn no_digits_is_the_undrawn_count_and_a_stranger_glyph_is_an_error() {
        let s = learnt();
        let img = RgbImage::from_pixel(100, 100, Rgb([90, 70, 30]));
        assert_eq!(s.read(&img, "hud", (10.0, 10.0), 1.0), Ok(1));
        assert_eq!(
            s.read(&img, "inventory", (10.0, 10.0), 1.0),
            Err(CountError::NoArea("inventory".into()))
        );
        // A solid white block is no digit.
        let mut img = RgbImage::from_pixel(100, 100, Rgb([90, 70, 30]));
        for y in 12..19 {
            for x in 12..17 {
                img.put_pixel(x, y, Rgb([255, 255, 255]));
            }
        }
        assert!(matches!(
            s.read(&img, "hud", (10.0, 10.0), 1.0),
            Err(CountError::Unmatched { .. })
        ));
        // Grey is not ink.
        let mut img = RgbImage::from_pixel(100, 100, Rgb([90, 70, 30]));
        draw(&mut img, "7", 12, 12);
        for p in img.pixels_mut() {
            if p.0 == [255, 255, 255] {
                *p = Rgb([150, 150, 150]);
            }
        }
        assert_eq!(s.read(&img, "hud", (10.0, 10.0), 1.0), Ok(1));
    }

    #[test]
    fn templates_are_checked() {
        let mut s = style();
        assert_eq!(
            s.read(&RgbImage::new(10, 10), "hud", (0.0, 0.0), 1.0),
            Err(CountError::NoTemplates)
        );
        s.glyphs.insert("x".into(), vec!["......".into(); GLYPH_H]);
        assert!(matches!(s.templates(), Err(CountError::BadTemplate(_))));
        s.glyphs.clear();
        s.glyphs.insert("3".into(), vec!["....".into(); GLYPH_H]);
        assert!(matches!(s.templates(), Err(CountError::BadTemplate(_))));
    }

    #[test]
    fn gui_and_screen_units_follow_the_scale_of_the_slots_screen() {
        // The same templates and area ([0, 0, 20, 10] from the slot centre), the GUI drawn at
        // scales 1-3.
        let screen = CountStyle {
            reference_scale: Some(1.0),
            ..learnt()
        };
        let gui = CountStyle {
            unit: CountUnit::Gui,
            reference_scale: None,
            ..learnt()
        };
        assert_eq!(gui.check(), Ok(()));
        assert_eq!(screen.check(), Ok(()));
        for scale in 1..=3 {
            let mut img = RgbImage::from_pixel(300, 200, Rgb([90, 70, 30]));
            draw_scaled(&mut img, "72", 40 + 2 * scale, 30 + scale, scale);
            let s = scale as f32;
            assert_eq!(
                gui.read(&img, "hud", (40.0, 30.0), s),
                Ok(72),
                "scale {scale}"
            );
            assert_eq!(
                screen.read(&img, "hud", (40.0, 30.0), s),
                Ok(72),
                "scale {scale}"
            );
            // Read as if the screen were drawn at another scale, the area misses the digits
            // (too small, or cut off) or sees them below min_glyph_height.
            let other = if scale == 1 { 3.0 } else { 1.0 };
            let read = screen.read(&img, "hud", (40.0, 30.0), other);
            assert_ne!(read, Ok(72), "scale {scale} read at {other}");
        }
    }

    #[test]
    fn the_unit_and_its_reference_scale_are_checked_naming_the_field() {
        let gui = CountStyle {
            unit: CountUnit::Gui,
            ..style()
        };
        let err = gui.check().expect_err("a reference scale with GUI units");
        assert!(err.to_string().starts_with("reference_scale:"), "{err}");
        let no_scale = CountStyle {
            reference_scale: None,
            ..style()
        };
        let err = no_scale
            .check()
            .expect_err("screen units need the reference scale");
        assert!(err.to_string().starts_with("reference_scale:"), "{err}");
        let negative = CountStyle {
            min_glyph_height: -1.0,
            ..style()
        };
        let err = negative.check().expect_err("a negative height");
        assert!(err.to_string().contains("min_glyph_height"), "{err}");

        let section = |unit: &str| {
            format!(
                "unit = \"{unit}\"\narea = {{ hud = [0.0, 0.0, 8.0, 8.0] }}\nmin_channel = 200\n\
                 min_glyph_height = 5.0\nmax_mismatch = 0.2\nundrawn = 1\n"
            )
        };
        let parsed: CountStyle = toml::from_str(&section("gui")).expect("gui parses");
        assert_eq!((parsed.unit, parsed.check()), (CountUnit::Gui, Ok(())));
        let err = toml::from_str::<CountStyle>(&section("px")).expect_err("no such unit");
        assert!(err.message().contains("unit: \"px\""), "{err}");
    }
}
