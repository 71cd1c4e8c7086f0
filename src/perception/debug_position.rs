//! The player's position as the game's debug screen prints it. The web client's F3 overlay
//! writes `XYZ: 12.500 / 64.000 / -3.500` in the window's top-left corner, in the game's font,
//! white on a translucent grey: a player reads their depth there, and so does the planner (how
//! deep a staircase has gone). The glyphs are matched against templates learnt from the game
//! (`vistawise position learn`), with the cells and matching of the stack counts
//! (`stack_count`): hand-written for the same reason, a dozen glyphs of one font.

use std::collections::BTreeMap;

use image::RgbImage;
use serde::Deserialize;

use super::stack_count::{GLYPH_H, GLYPH_W, Glyph, best_match, parse_rows};

/// What the line starts with, before the three numbers.
const LABEL: &str = "XYZ:";

/// Glyphs in the line's band that mean the debug screen is shown, read or not: the shortest
/// position line (`XYZ: 0.000 / 0.000 / 0.000`) has 21; a cloud in the band a few.
const SHOWN_GLYPHS: usize = 12;

/// `[position]` of a game profile: where and how the debug screen prints the position.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PositionStyle {
    /// The line's band, `[x1, y1, x2, y2]` window pixels from the top-left with the HUD drawn at
    /// `reference_scale`; scaled with the HUD's scale.
    pub line: [f32; 4],
    /// The HUD scale `line` was measured at.
    pub reference_scale: f32,
    /// Window pixels a pixel of the font covers at `reference_scale`: each glyph is read one
    /// sample per font pixel from its top-left, so it is the same cells at every HUD scale.
    pub font_px: f32,
    /// A glyph pixel: every channel at least this bright (the text is white).
    pub min_channel: u8,
    /// A glyph no taller than this share of the line's tallest is a `.` where it sits on the
    /// line's foot, else a `-`: both fill their box, so only their size and place tell them.
    #[serde(default = "small_glyph")]
    pub small_glyph: f32,
    /// A glyph is read as the template it differs least from, if it differs in at most this
    /// share of cells; otherwise the line is unreadable.
    pub max_mismatch: f32,
    /// Character -> rows of `#` (ink) and `.`, GLYPH_W x GLYPH_H: the digits, `/` and the
    /// label's `X`, `Y`, `Z` and `:`.
    #[serde(default)]
    pub glyphs: BTreeMap<String, Vec<String>>,
}

fn small_glyph() -> f32 {
    0.4
}

/// Why no position could be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PositionError {
    #[error("no text in the position's line (the debug screen is not shown)")]
    NoText,
    #[error(
        "glyph {index} of the line matches no template (best {best:?}, {mismatch:.2} of cells differ)"
    )]
    Unmatched {
        index: usize,
        best: char,
        mismatch: f32,
    },
    #[error("the line reads \"{0}\", not \"{LABEL} x / y / z\"")]
    Format(String),
    #[error("no glyph templates: learn them with `vistawise position learn`")]
    NoTemplates,
    #[error("glyph \"{0}\": needs one character other than '.' and '-', and rows of '#' or '.'")]
    BadTemplate(String),
    #[error("{0}")]
    Invalid(String),
}

/// One glyph of the line: its cells and its box in window pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct LineGlyph {
    pub cells: Glyph,
    pub top: u32,
    pub bottom: u32,
}

/// What a frame shows of the position's line (`PositionStyle::look`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LineRead {
    pub position: Option<[f32; 3]>,
    /// The debug screen's text is in the band, read or not.
    pub shown: bool,
}

/// What a glyph of the line is by its size and place alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GlyphKind {
    Period,
    Hyphen,
    /// Read by its template.
    Template,
}

impl PositionStyle {
    /// Checks the section as loaded: the band, thresholds and templates (when there are any:
    /// `position learn` runs before there are).
    pub fn check(&self) -> Result<(), PositionError> {
        let [x1, y1, x2, y2] = self.line;
        if !(x1 >= 0.0 && y1 >= 0.0 && x1 < x2 && y1 < y2 && x2.is_finite() && y2.is_finite()) {
            return Err(PositionError::Invalid(format!(
                "line {:?}: needs 0 <= x1 < x2 and 0 <= y1 < y2",
                self.line
            )));
        }
        if !(self.font_px >= 1.0 && self.font_px.is_finite()) {
            return Err(PositionError::Invalid("font_px must be >= 1".into()));
        }
        if !(self.reference_scale > 0.0 && self.reference_scale.is_finite()) {
            return Err(PositionError::Invalid("reference_scale must be > 0".into()));
        }
        if !(self.small_glyph > 0.0 && self.small_glyph < 1.0) {
            return Err(PositionError::Invalid(
                "small_glyph must be within 0..1".into(),
            ));
        }
        if !(0.0..=1.0).contains(&self.max_mismatch) {
            return Err(PositionError::Invalid(
                "max_mismatch must be within 0..1".into(),
            ));
        }
        if !self.glyphs.is_empty() {
            self.templates()?;
        }
        Ok(())
    }

    /// The templates, checked.
    pub fn templates(&self) -> Result<Vec<(char, Glyph)>, PositionError> {
        if self.glyphs.is_empty() {
            return Err(PositionError::NoTemplates);
        }
        self.glyphs
            .iter()
            .map(|(key, rows)| {
                let mut chars = key.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if c != '.' && c != '-' => parse_rows(rows)
                        .map(|g| (c, g))
                        .ok_or_else(|| PositionError::BadTemplate(key.clone())),
                    _ => Err(PositionError::BadTemplate(key.clone())),
                }
            })
            .collect()
    }

    /// Window pixels per `reference_scale` pixel in a window whose HUD is drawn at `hud_scale`.
    fn zoom(&self, hud_scale: f32) -> f32 {
        if hud_scale > 0.0 && hud_scale.is_finite() {
            hud_scale / self.reference_scale
        } else {
            1.0
        }
    }

    /// The line's band in a window whose HUD is drawn at `hud_scale`, clipped to the image.
    fn band(&self, image: &RgbImage, hud_scale: f32) -> (u32, u32, u32, u32) {
        let s = self.zoom(hud_scale);
        let clip = |v: f32, max: u32| (v * s).round().clamp(0.0, max as f32) as u32;
        let [x1, y1, x2, y2] = self.line;
        (
            clip(x1, image.width()),
            clip(y1, image.height()),
            clip(x2, image.width()),
            clip(y2, image.height()),
        )
    }

    /// The glyphs of the line, left to right: runs of columns with text pixels in the band.
    pub fn glyphs_at(&self, image: &RgbImage, hud_scale: f32) -> Vec<LineGlyph> {
        let (x1, y1, x2, y2) = self.band(image, hud_scale);
        let (w, h) = ((x2 - x1) as usize, (y2 - y1) as usize);
        if w == 0 || h == 0 {
            return Vec::new();
        }
        let ink: Vec<bool> = (0..h * w)
            .map(|i| {
                let p = image.get_pixel(x1 + (i % w) as u32, y1 + (i / w) as u32);
                p.0.iter().all(|c| *c >= self.min_channel)
            })
            .collect();
        let column_has_ink = |x: usize| (0..h).any(|y| ink[y * w + x]);
        let font_px = self.font_px * self.zoom(hud_scale);
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
            let rows: Vec<usize> = (0..h)
                .filter(|y| (start..x).any(|c| ink[y * w + c]))
                .collect();
            if let (Some(&top), Some(&bottom)) = (rows.first(), rows.last()) {
                out.push(LineGlyph {
                    cells: font_cells(&ink, w, (start, x), (top, bottom + 1), font_px),
                    top: y1 + top as u32,
                    bottom: y1 + bottom as u32 + 1,
                });
            }
        }
        out
    }

    /// What each glyph is by its size and place: small ones on the line's foot are periods,
    /// small ones above it hyphens, the rest are read by template.
    pub fn kinds(&self, glyphs: &[LineGlyph]) -> Vec<GlyphKind> {
        let tallest = glyphs.iter().map(|g| g.bottom - g.top).max().unwrap_or(0) as f32;
        let foot = glyphs.iter().map(|g| g.bottom).max().unwrap_or(0) as f32;
        glyphs
            .iter()
            .map(|g| {
                if ((g.bottom - g.top) as f32) > self.small_glyph * tallest {
                    GlyphKind::Template
                } else if foot - g.bottom as f32 <= 0.2 * tallest {
                    GlyphKind::Period
                } else {
                    GlyphKind::Hyphen
                }
            })
            .collect()
    }

    /// What a frame shows of the line, from one pass over its band: the position where it
    /// reads, and whether the debug screen's text is there, readable or not. Run on every
    /// frame: one with nothing in the band costs no template parsing.
    pub fn look(&self, image: &RgbImage, hud_scale: f32) -> LineRead {
        let glyphs = self.glyphs_at(image, hud_scale);
        if glyphs.is_empty() {
            return LineRead::default();
        }
        let position = self.text_of(&glyphs).and_then(|t| parse_line(&t)).ok();
        LineRead {
            position,
            shown: position.is_some() || glyphs.len() >= SHOWN_GLYPHS,
        }
    }

    /// The glyphs of the line read by template (all but `.` and `-`), left to right: what
    /// `position learn` pairs with the characters of the printed text.
    pub fn template_glyphs(&self, image: &RgbImage, hud_scale: f32) -> Vec<Glyph> {
        let glyphs = self.glyphs_at(image, hud_scale);
        let kinds = self.kinds(&glyphs);
        glyphs
            .into_iter()
            .zip(kinds)
            .filter(|(_, k)| *k == GlyphKind::Template)
            .map(|(g, _)| g.cells)
            .collect()
    }

    /// The line's text as read (no spaces: they are not drawn).
    pub fn text(&self, image: &RgbImage, hud_scale: f32) -> Result<String, PositionError> {
        self.text_of(&self.glyphs_at(image, hud_scale))
    }

    /// The text of the line's `glyphs`.
    fn text_of(&self, glyphs: &[LineGlyph]) -> Result<String, PositionError> {
        let templates = self.templates()?;
        if glyphs.is_empty() {
            return Err(PositionError::NoText);
        }
        let kinds = self.kinds(glyphs);
        let mut text = String::new();
        for (index, (g, kind)) in glyphs.iter().zip(kinds).enumerate() {
            match kind {
                GlyphKind::Period => text.push('.'),
                GlyphKind::Hyphen => text.push('-'),
                GlyphKind::Template => {
                    let (best, mismatch) = best_match(&g.cells, &templates);
                    if mismatch > self.max_mismatch {
                        return Err(PositionError::Unmatched {
                            index,
                            best,
                            mismatch,
                        });
                    }
                    text.push(best);
                }
            }
        }
        Ok(text)
    }

    /// The position the line prints, `[x, y, z]`.
    pub fn read(&self, image: &RgbImage, hud_scale: f32) -> Result<[f32; 3], PositionError> {
        parse_line(&self.text(image, hud_scale)?)
    }
}

/// A glyph's cells, one sample a font pixel (`font_px` window pixels) from the top-left of its
/// ink (columns `x0..x1`, rows `y0..y1` of the band), at the top-left of the template grid. A
/// glyph is a few font pixels: resampled to the grid's size, the same glyph came out differently
/// at GUI scales 3 and 4.
fn font_cells(
    ink: &[bool],
    w: usize,
    (x0, x1): (usize, usize),
    (y0, y1): (usize, usize),
    font_px: f32,
) -> Glyph {
    let mut g = [false; GLYPH_W * GLYPH_H];
    let cells = |from: usize, to: usize| ((to - from) as f32 / font_px).round().max(1.0) as usize;
    let (cw, ch) = (cells(x0, x1).min(GLYPH_W), cells(y0, y1).min(GLYPH_H));
    for cy in 0..ch {
        for cx in 0..cw {
            let x = (x0 + ((cx as f32 + 0.5) * font_px) as usize).min(x1 - 1);
            let y = (y0 + ((cy as f32 + 0.5) * font_px) as usize).min(y1 - 1);
            g[cy * GLYPH_W + cx] = ink[y * w + x];
        }
    }
    g
}

/// `XYZ:12.500/64.000/-3.500` (the line without its spaces) as `[x, y, z]`.
pub fn parse_line(text: &str) -> Result<[f32; 3], PositionError> {
    let bad = || PositionError::Format(text.to_string());
    let numbers = text.strip_prefix(LABEL).ok_or_else(bad)?;
    let parts: Vec<f32> = numbers
        .split('/')
        .map(|n| n.parse::<f32>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    match parts[..] {
        [x, y, z] if parts.iter().all(|v| v.is_finite()) => Ok([x, y, z]),
        _ => Err(bad()),
    }
}

/// The line's text without its spaces, as `glyphs_at` sees it, for the client's `toFixed(3)`.
pub fn line_text([x, y, z]: [f64; 3]) -> String {
    format!("{LABEL}{x:.3}/{y:.3}/{z:.3}")
}

/// The characters of `text` read by template (those that are not `.` or `-`), in order.
pub fn template_chars(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars().filter(|c| *c != '.' && *c != '-')
}

/// Template rows from labelled examples, as `[position.glyphs]` stores them.
pub fn learn(examples: &[(char, Glyph)]) -> BTreeMap<String, Vec<String>> {
    super::stack_count::learn(examples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgb;

    /// A 5x7 font at 1 px a cell for the line's characters; `.` and `-` as the game draws them
    /// (one cell; five cells in the middle row).
    const FONT: [(char, [&str; 7]); 16] = [
        (
            '0',
            [
                ".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###.",
            ],
        ),
        (
            '1',
            [
                "..#..", ".##..", "..#..", "..#..", "..#..", "..#..", "#####",
            ],
        ),
        (
            '2',
            [
                ".###.", "#...#", "....#", "..##.", ".#...", "#...#", "#####",
            ],
        ),
        (
            '3',
            [
                ".###.", "#...#", "....#", "..##.", "....#", "#...#", ".###.",
            ],
        ),
        (
            '4',
            [
                "...##", "..#.#", ".#..#", "#...#", "#####", "....#", "....#",
            ],
        ),
        (
            '5',
            [
                "#####", "#....", "####.", "....#", "....#", "#...#", ".###.",
            ],
        ),
        (
            '6',
            [
                "..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###.",
            ],
        ),
        (
            '7',
            [
                "#####", "#...#", "....#", "...#.", "..#..", "..#..", "..#..",
            ],
        ),
        (
            '8',
            [
                ".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###.",
            ],
        ),
        (
            '9',
            [
                ".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##..",
            ],
        ),
        (
            '/',
            [
                "....#", "...#.", "...#.", "..#..", ".#...", ".#...", "#....",
            ],
        ),
        (
            'X',
            [
                "#...#", ".#.#.", "..#..", "..#..", "..#..", ".#.#.", "#...#",
            ],
        ),
        (
            'Y',
            [
                "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#..", "..#..",
            ],
        ),
        (
            'Z',
            [
                "#####", "....#", "...#.", "..#..", ".#...", "#....", "#####",
            ],
        ),
        (
            ':',
            [
                ".....", "..#..", "..#..", ".....", "..#..", "..#..", ".....",
            ],
        ),
        (
            '.',
            [
                ".....", ".....", ".....", ".....", ".....", ".....", "..#..",
            ],
        ),
    ];

    /// `text` with every font pixel an `s` x `s` white block on a grey band, one blank column
    /// between glyphs and three for a space; `-` is the middle row of five cells.
    fn draw(img: &mut RgbImage, text: &str, x0: u32, y0: u32, s: u32) {
        let mut x = x0;
        let dot = |img: &mut RgbImage, cx: u32, cy: u32| {
            for (px, py) in (0..s * s).map(|i| (i % s, i / s)) {
                img.put_pixel(cx + px, cy + py, Rgb([255, 255, 255]));
            }
        };
        for ch in text.chars() {
            match ch {
                ' ' => x += 3 * s,
                '-' => {
                    for dx in 0..5 {
                        dot(img, x + dx * s, y0 + 3 * s);
                    }
                    x += 6 * s;
                }
                '.' => {
                    dot(img, x, y0 + 6 * s);
                    x += 2 * s;
                }
                _ => {
                    let (_, rows) = FONT.iter().find(|(c, _)| *c == ch).expect("in the font");
                    for (dy, row) in rows.iter().enumerate() {
                        for (dx, c) in row.chars().enumerate() {
                            if c == '#' {
                                dot(img, x + dx as u32 * s, y0 + dy as u32 * s);
                            }
                        }
                    }
                    x += 6 * s;
                }
            }
        }
    }

    fn frame(text: &str, s: u32) -> RgbImage {
        // The overlay's grey over a light sky: bright, but not white.
        let mut img = RgbImage::from_pixel(400 * s, 60 * s, Rgb([180, 190, 200]));
        draw(&mut img, text, 2 * s, 10 * s, s);
        img
    }

    fn style() -> PositionStyle {
        PositionStyle {
            line: [0.0, 24.0, 1200.0, 57.0],
            reference_scale: 3.0,
            font_px: 3.0,
            min_channel: 230,
            small_glyph: 0.4,
            max_mismatch: 0.15,
            glyphs: BTreeMap::new(),
        }
    }

    /// Templates learnt as `position learn` does: the line's template glyphs paired with the
    /// printed text's characters other than `.` and `-`.
    fn learnt() -> PositionStyle {
        let s = style();
        let mut examples = Vec::new();
        for pos in [[1234.5, 67.0, -890.25], [-5.75, 12.125, 34.0]] {
            let img = frame(&format_line(pos), 3);
            let template = s.template_glyphs(&img, 3.0);
            let text = line_text(pos);
            let chars: Vec<char> = template_chars(&text).collect();
            assert_eq!(chars.len(), template.len(), "{text}");
            examples.extend(chars.into_iter().zip(template));
        }
        PositionStyle {
            glyphs: learn(&examples),
            ..s
        }
    }

    fn format_line([x, y, z]: [f64; 3]) -> String {
        format!("XYZ: {x:.3} / {y:.3} / {z:.3}")
    }

    #[test]
    fn reads_the_position_the_line_prints_at_the_hud_scale_it_is_drawn_at() {
        let s = learnt();
        assert!(s.check().is_ok());
        for (pos, scale) in [
            ([12.5, 64.0, -3.5], 3),
            ([-1093.75, 5.0, 987.625], 3),
            ([0.0, 110.5, -0.125], 2),
            ([48.0, 17.0, -602.0], 4),
        ] {
            let img = frame(&format_line(pos), scale);
            let read = s.read(&img, scale as f32);
            let want = pos.map(|v| v as f32);
            assert_eq!(read, Ok(want), "{pos:?} at scale {scale}");
        }
    }

    #[test]
    fn no_text_a_stranger_glyph_and_another_line_are_errors() {
        let s = learnt();
        let blank = RgbImage::from_pixel(1200, 180, Rgb([180, 190, 200]));
        assert_eq!(s.read(&blank, 3.0), Err(PositionError::NoText));
        // A solid white block is no character of the line.
        let mut img = frame(&format_line([1.0, 2.0, 3.0]), 3);
        for y in 30..51 {
            for x in 700..715 {
                img.put_pixel(x, y, Rgb([255, 255, 255]));
            }
        }
        assert!(matches!(
            s.read(&img, 3.0),
            Err(PositionError::Unmatched { .. })
        ));
        // Known glyphs in another order are not the position.
        let other = frame("123 / 45", 3);
        assert!(matches!(s.read(&other, 3.0), Err(PositionError::Format(_))));
        assert_eq!(
            PositionStyle {
                glyphs: BTreeMap::new(),
                ..s.clone()
            }
            .read(&other, 3.0),
            Err(PositionError::NoTemplates)
        );
    }

    #[test]
    fn the_line_parses_as_three_numbers_after_its_label() {
        assert_eq!(
            parse_line("XYZ:12.500/64.000/-3.500"),
            Ok([12.5, 64.0, -3.5])
        );
        for bad in [
            "12.5/64/3",
            "XYZ:1/2",
            "XYZ:1/2/3/4",
            "XYZ:1/x/3",
            "XYZ:1//3",
        ] {
            assert!(parse_line(bad).is_err(), "{bad}");
        }
        assert_eq!(line_text([1.0, -2.5, 3.25]), "XYZ:1.000/-2.500/3.250");
    }

    #[test]
    fn a_bad_section_is_refused_naming_the_field() {
        let mut s = style();
        s.line = [10.0, 5.0, 5.0, 50.0];
        assert!(s.check().unwrap_err().to_string().contains("line"));
        let mut s = style();
        s.small_glyph = 1.5;
        assert!(s.check().unwrap_err().to_string().contains("small_glyph"));
        let mut s = style();
        s.glyphs.insert(".".into(), vec!["......".into(); 9]);
        assert_eq!(s.check(), Err(PositionError::BadTemplate(".".into())));
        let mut s = style();
        s.glyphs.insert("7".into(), vec!["###".into(); 9]);
        assert_eq!(s.check(), Err(PositionError::BadTemplate("7".into())));
    }
}
