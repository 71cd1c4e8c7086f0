//! Stack counts: the number a game draws in the corner of an inventory slot. The detector finds
//! the item; how many there are decides whether a recipe can be made (with 2 cobblestones the
//! stone pickaxe's recipe made a hoe in the closed loop). The digits are white glyphs of one
//! fixed font, so they are read by matching against the game's own glyphs (`[counts]` of the
//! game profile, learnt from the game with `vistawise counts learn`). Hand-written because it is
//! a few dozen lines of thresholding and template matching; an OCR crate would be a large
//! dependency for ten glyphs of one font.

use std::collections::BTreeMap;

use image::RgbImage;
use serde::Deserialize;

/// Cells of a glyph template (columns x rows).
pub const GLYPH_W: usize = 6;
pub const GLYPH_H: usize = 9;

/// `[counts]` of a game profile: where and how the game draws stack counts.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountStyle {
    /// The digits' area relative to a slot's centre, per screen (`hud`, `inventory`: the first
    /// part of a slot's location), `[dx1, dy1, dx2, dy2]` in window pixels at
    /// `reference_height` (scaled with the window's height).
    pub area: BTreeMap<String, [f32; 4]>,
    pub reference_height: f32,
    /// A digit pixel: every channel at least this bright (the digits are white).
    pub min_channel: u8,
    /// Glyphs lower than this (reference pixels) are not digits (noise, an icon's highlight).
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
        if self.reference_height.is_nan() || self.reference_height <= 0.0 {
            return Err(CountError::Invalid("reference_height must be > 0".into()));
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
            if !d.is_ascii_digit()
                || rows.len() != GLYPH_H
                || rows.iter().any(|r| {
                    r.chars().count() != GLYPH_W || r.chars().any(|c| c != '#' && c != '.')
                })
            {
                return Err(CountError::BadTemplate(digit.clone()));
            }
            let mut g = [false; GLYPH_W * GLYPH_H];
            for (y, row) in rows.iter().enumerate() {
                for (x, c) in row.chars().enumerate() {
                    g[y * GLYPH_W + x] = c == '#';
                }
            }
            out.push((d, g));
        }
        Ok(out)
    }

    /// The digits' area around a slot centre of `screen`, clipped to the image: `(x1, y1, x2, y2)`.
    fn area_px(
        &self,
        image: &RgbImage,
        screen: &str,
        (cx, cy): (f32, f32),
    ) -> Result<(u32, u32, u32, u32), CountError> {
        let area = self
            .area
            .get(screen)
            .ok_or_else(|| CountError::NoArea(screen.to_string()))?;
        let s = image.height() as f32 / self.reference_height;
        let clip = |v: f32, max: u32| v.round().clamp(0.0, max as f32) as u32;
        Ok((
            clip(cx + area[0] * s, image.width()),
            clip(cy + area[1] * s, image.height()),
            clip(cx + area[2] * s, image.width()),
            clip(cy + area[3] * s, image.height()),
        ))
    }

    /// The glyphs drawn in the count area of the slot of `screen` centred at `centre`, left to
    /// right.
    pub fn glyphs_at(
        &self,
        image: &RgbImage,
        screen: &str,
        centre: (f32, f32),
    ) -> Result<Vec<Glyph>, CountError> {
        let (x1, y1, x2, y2) = self.area_px(image, screen, centre)?;
        if x2 <= x1 || y2 <= y1 {
            return Ok(Vec::new());
        }
        let (w, h) = ((x2 - x1) as usize, (y2 - y1) as usize);
        let ink: Vec<bool> = (0..h * w)
            .map(|i| {
                let p = image.get_pixel(x1 + (i % w) as u32, y1 + (i / w) as u32).0;
                p.iter().all(|c| *c >= self.min_channel)
            })
            .collect();
        let column_has_ink = |x: usize| (0..h).any(|y| ink[y * w + x]);
        let min_h = self.min_glyph_height * image.height() as f32 / self.reference_height;
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

    /// The count in the slot of `screen` centred at `centre`: `undrawn` when no digits are
    /// drawn there.
    pub fn read(
        &self,
        image: &RgbImage,
        screen: &str,
        centre: (f32, f32),
    ) -> Result<u32, CountError> {
        let templates = self.templates()?;
        let glyphs = self.glyphs_at(image, screen, centre)?;
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

/// The template a glyph differs least from, and the share of cells that differ.
fn best_match(g: &Glyph, templates: &[(char, Glyph)]) -> (char, f32) {
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
fn resample(ink: &[bool], w: usize, x0: usize, x1: usize, y0: usize, y1: usize) -> Glyph {
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
        let mut x = x0;
        for ch in text.chars() {
            let (_, rows) = FONT.iter().find(|(c, _)| *c == ch).expect("in the font");
            for (dy, row) in rows.iter().enumerate() {
                for (dx, c) in row.chars().enumerate() {
                    if c == '#' {
                        img.put_pixel(x + dx as u32, y0 + dy as u32, Rgb([255, 255, 255]));
                    }
                }
            }
            x += 6;
        }
    }

    fn style() -> CountStyle {
        CountStyle {
            area: BTreeMap::from([("hud".to_string(), [0.0, 0.0, 20.0, 10.0])]),
            reference_height: 100.0,
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
        let glyphs = s.glyphs_at(&img, "hud", (0.0, 0.0)).expect("area");
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
            assert_eq!(s.read(&img, "hud", (47.0, 38.0)), Ok(want), "{text}");
        }
    }

    #[test]
    fn no_digits_is_the_undrawn_count_and_a_stranger_glyph_is_an_error() {
        let s = learnt();
        let img = RgbImage::from_pixel(100, 100, Rgb([90, 70, 30]));
        assert_eq!(s.read(&img, "hud", (10.0, 10.0)), Ok(1));
        assert_eq!(
            s.read(&img, "inventory", (10.0, 10.0)),
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
            s.read(&img, "hud", (10.0, 10.0)),
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
        assert_eq!(s.read(&img, "hud", (10.0, 10.0)), Ok(1));
    }

    #[test]
    fn templates_are_checked() {
        let mut s = style();
        assert_eq!(
            s.read(&RgbImage::new(10, 10), "hud", (0.0, 0.0)),
            Err(CountError::NoTemplates)
        );
        s.glyphs.insert("x".into(), vec!["......".into(); GLYPH_H]);
        assert!(matches!(s.templates(), Err(CountError::BadTemplate(_))));
        s.glyphs.clear();
        s.glyphs.insert("3".into(), vec!["....".into(); GLYPH_H]);
        assert!(matches!(s.templates(), Err(CountError::BadTemplate(_))));
    }
}
