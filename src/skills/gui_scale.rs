//! The GUI scale read off the frame. A game draws its GUI at a scale the agent cannot assume: the
//! browser client draws at 3 where vanilla's rule gives 2 (a 1279 x 719 window) or 4 (1920 x
//! 1080), and players change the option. The HUD hotbar is drawn at the GUI scale in every frame
//! without a screen open, with a one-GUI-pixel outline of a fixed colour (Minecraft's: opaque
//! black around the 182 x 22 bar), so its size in window pixels is the scale: the profile says
//! where the outline is (`[gui.scale] measure`) and every candidate scale is scored by how well
//! the frame shows the outline there and not just inside it.
//!
//! Hand-written: a few prefix sums and a search over candidate scales; an image-processing crate
//! would bring much more than this needs.

use image::RgbImage;

use super::gui::{GuiGeometry, OutlineSpec};
use crate::config::GuiScale;
use crate::perception::{GuiScaleReading, ScaleSource};

/// Scales tried, in steps of this much (the browser client's scales include 1.4 and 1.5).
const SCALE_STEP: f32 = 0.1;
/// The outline may sit this many window pixels off the place the scale puts it (a browser
/// rounds CSS pixels its own way).
const SLACK_PX: i64 = 3;
/// A measurement needs at least this score (outline dark, the ring inside it not): a dark cave
/// fits every outline and its ring alike, and then the frame does not show its scale.
const MIN_SCORE: f32 = 0.6;
/// Scales within this much of each other are one reading (the outline's line is a scale thick).
const NEIGHBOURHOOD: f32 = 0.25;
/// Scales that score within this much of the best fit about as well.
const NEAR_BEST: f32 = 0.15;

/// A scale read off one frame, with how clearly the frame showed it (0-1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measurement {
    pub scale: f32,
    pub score: f32,
}

/// Which pixels of the frame's lower half have the outline's luma, as prefix sums along rows and
/// columns, so that the share of such pixels on any line is two lookups.
struct DarkMap {
    w: usize,
    top: usize,
    /// `rows[(y - top) * (w + 1) + x]`: outline pixels in row y left of x.
    rows: Vec<u32>,
    /// `cols[x * (h + 1) + (y - top)]`: outline pixels in column x above y.
    cols: Vec<u32>,
    h: usize,
}

impl DarkMap {
    fn new(frame: &RgbImage, top: usize, (lo, hi): (u8, u8)) -> Self {
        let (w, full_h) = (frame.width() as usize, frame.height() as usize);
        let h = full_h.saturating_sub(top);
        let mut rows = vec![0u32; h * (w + 1)];
        let mut cols = vec![0u32; w * (h + 1)];
        for yy in 0..h {
            for x in 0..w {
                let [r, g, b] = frame.get_pixel(x as u32, (top + yy) as u32).0;
                // Rec. 601 luma, in integers (as the screen markers read it).
                let luma = (299 * u32::from(r) + 587 * u32::from(g) + 114 * u32::from(b)) / 1000;
                let dark = u32::from((u32::from(lo)..=u32::from(hi)).contains(&luma));
                rows[yy * (w + 1) + x + 1] = rows[yy * (w + 1) + x] + dark;
                cols[x * (h + 1) + yy + 1] = cols[x * (h + 1) + yy] + dark;
            }
        }
        DarkMap {
            w,
            top,
            rows,
            cols,
            h,
        }
    }

    /// The share of outline pixels on row `y` from `x0` to `x1` (exclusive); 0 off the map.
    fn row(&self, y: i64, x0: i64, x1: i64) -> f32 {
        let yy = y - self.top as i64;
        if yy < 0 || yy >= self.h as i64 || x0 < 0 || x1 > self.w as i64 || x1 <= x0 {
            return 0.0;
        }
        let base = yy as usize * (self.w + 1);
        (self.rows[base + x1 as usize] - self.rows[base + x0 as usize]) as f32 / (x1 - x0) as f32
    }

    /// The share of outline pixels in column `x` from `y0` to `y1` (exclusive); 0 off the map.
    fn col(&self, x: i64, y0: i64, y1: i64) -> f32 {
        let (a, b) = (y0 - self.top as i64, y1 - self.top as i64);
        if x < 0 || x >= self.w as i64 || a < 0 || b > self.h as i64 || b <= a {
            return 0.0;
        }
        let base = x as usize * (self.h + 1);
        (self.cols[base + b as usize] - self.cols[base + a as usize]) as f32 / (b - a) as f32
    }
}

/// How well the frame shows the outline at window rectangle (x0, y0)-(x1, y1), one line `t`
/// pixels thick: the outline's top, bottom and better side dark, and every side of the ring
/// `1.5 t` inside it light (the bar's opaque bevel): the outline's mean share of dark pixels
/// less that of the darkest inner side (a rectangle inside the bar crosses its translucent
/// slots, dark over a dark world, on some side).
fn score(map: &DarkMap, (x0, y0, x1, y1): (f64, f64, f64, f64), t: f64) -> f32 {
    let at = |v: f64| v.floor() as i64;
    let (l, r) = (at(x0 + t), at(x1 - t));
    let (tp, bt) = (at(y0 + t), at(y1 - t));
    let top = map.row(at(y0 + t / 2.0), l, r);
    let bottom = map.row(at(y1 - t / 2.0), l, r);
    // A selected first or last slot draws its light frame over that end of the outline.
    let side = map
        .col(at(x0 + t / 2.0), tp, bt)
        .max(map.col(at(x1 - t / 2.0), tp, bt));
    let inner = [
        map.row(at(y0 + 1.5 * t), l, r),
        map.row(at(y1 - 1.5 * t), l, r),
        map.col(at(x0 + 1.5 * t), tp, bt),
        map.col(at(x1 - 1.5 * t), tp, bt),
    ];
    let darkest_inner = inner.iter().copied().fold(0.0, f32::max);
    (top + bottom + side) / 3.0 - darkest_inner
}

/// The GUI scale `frame` is drawn at, read off the outline the profile names
/// (`[gui.scale] measure`); `None` when the profile names none or the frame does not show it
/// clearly (a screen over the HUD, a dark cave, the HUD hidden).
pub fn measure(frame: &RgbImage, geometry: &GuiGeometry) -> Option<Measurement> {
    let spec = geometry.outline()?;
    let (w, h) = (frame.width(), frame.height());
    if w < 16 || h < 16 {
        return None;
    }
    // The HUD is in the lower half of the window: only that half is read.
    let map = DarkMap::new(frame, (h / 2) as usize, spec.luma);
    let candidates = candidate_scales(spec, w, h);
    let scored: Vec<Measurement> = candidates
        .into_iter()
        .filter_map(|s| best_placement(&map, geometry, spec, (w, h), s))
        .collect();
    let best = scored
        .iter()
        .map(|m| m.score)
        .fold(f32::NEG_INFINITY, f32::max);
    // The bar's own inner lines (each slot's dark top row and side) draw smaller rectangles
    // inside it that fit a smaller scale almost as well (the client's 1024 x 600 frame: 0.92 at
    // 3, 0.82 at 2.5); nothing draws a larger one around it. So of the scales that fit about as
    // well as the best, each the best of its neighbourhood, the largest is the one drawn.
    let local_best = |m: &Measurement| {
        scored
            .iter()
            .filter(|o| (o.scale - m.scale).abs() <= NEIGHBOURHOOD)
            .all(|o| o.score <= m.score)
    };
    scored
        .iter()
        .filter(|m| m.score >= MIN_SCORE && m.score >= best - NEAR_BEST && local_best(m))
        .max_by(|a, b| a.scale.total_cmp(&b.scale))
        .copied()
}

/// Every scale from 1 up to the largest at which the outline fits the window, `SCALE_STEP`
/// apart.
fn candidate_scales(spec: &OutlineSpec, w: u32, h: u32) -> Vec<f32> {
    let [_, _, rw, rh] = spec.rect;
    let fit = (w as f32 / rw as f32).min(h as f32 / 2.0 / rh as f32);
    let steps = ((fit - 1.0) / SCALE_STEP).floor().max(-1.0) as i32;
    (0..=steps).map(|i| 1.0 + i as f32 * SCALE_STEP).collect()
}

/// The best score of scale `s` over the outline's placements within `SLACK_PX`.
fn best_placement(
    map: &DarkMap,
    geometry: &GuiGeometry,
    spec: &OutlineSpec,
    (w, h): (u32, u32),
    s: f32,
) -> Option<Measurement> {
    let (x0, y0, x1, y1) = geometry.layout_at(w, h, s).outline_rect(spec)?;
    let mut best = f32::NEG_INFINITY;
    for dy in -SLACK_PX..=SLACK_PX {
        for dx in -SLACK_PX..=SLACK_PX {
            let (dx, dy) = (dx as f64, dy as f64);
            let rect = (x0 + dx, y0 + dy, x1 + dx, y1 + dy);
            best = best.max(score(map, rect, f64::from(s)));
        }
    }
    Some(Measurement {
        scale: s,
        score: best,
    })
}

/// The GUI scale of each frame of a session: measured where the frame shows it, else the last
/// one measured at the same window size, else the profile's rule for the size. A window resized
/// during play is measured anew at its first frame that shows the HUD.
#[derive(Debug, Default, Clone)]
pub struct GuiScaleTracker {
    last: Option<((u32, u32), f32)>,
}

impl GuiScaleTracker {
    /// The scale `frame` is drawn at (see the type).
    pub fn read(
        &mut self,
        frame: &RgbImage,
        geometry: &GuiGeometry,
        option: GuiScale,
    ) -> GuiScaleReading {
        let size = (frame.width(), frame.height());
        if let Some(m) = measure(frame, geometry) {
            self.last = Some((size, m.scale));
            return GuiScaleReading {
                scale: m.scale,
                source: ScaleSource::Measured,
            };
        }
        match self.last {
            Some((at, scale)) if at == size => GuiScaleReading {
                scale,
                source: ScaleSource::Kept,
            },
            _ => GuiScaleReading {
                scale: geometry.rule_scale(size.0, size.1, option),
                source: ScaleSource::Rule,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn profile(name: &str) -> GuiGeometry {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("config/games/{name}.toml"));
        GuiGeometry::load(&path).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A grassy frame with the vanilla hotbar drawn at `scale`, bottom centre: the black outline,
    /// a light bevel inside it, translucent slots (dark green), and slot `selected`'s white
    /// frame over the outline.
    fn frame_with_hotbar(w: u32, h: u32, scale: u32, selected: u32) -> RgbImage {
        let mut img = RgbImage::from_pixel(w, h, image::Rgb([96, 140, 60]));
        let s = scale;
        let sw = w.div_ceil(s);
        let sh = h.div_ceil(s);
        let (left, top) = ((sw - 182) / 2, sh - 22);
        let mut fill = |gx: u32, gy: u32, c: [u8; 3]| {
            for y in 0..s {
                for x in 0..s {
                    let (px, py) = ((left + gx) * s + x, (top + gy) * s + y);
                    if px < w && py < h {
                        img.put_pixel(px, py, image::Rgb(c));
                    }
                }
            }
        };
        for gy in 0..22 {
            for gx in 0..182 {
                let edge = gx == 0 || gy == 0 || gx == 181 || gy == 21;
                let bevel = gx == 1 || gy == 1 || gx == 180 || gy == 20 || gx % 20 == 1;
                let c = if edge {
                    [0, 0, 0]
                } else if bevel {
                    [150, 150, 150]
                } else {
                    [30, 45, 20]
                };
                fill(gx, gy, c);
            }
        }
        // The selected slot's 24 x 24 frame, one GUI px outside the bar.
        let sx = selected * 20;
        for gy in 0..22 {
            for gx in sx..(sx + 23).min(182) {
                if gx == sx || gx == sx + 22 || gy == 0 || gy == 21 {
                    fill(gx, gy, [230, 230, 230]);
                }
            }
        }
        img
    }

    #[test]
    fn the_hotbar_outline_gives_the_scale_at_any_window_size() {
        let geo = profile("minecraft");
        for (w, h, s) in [
            (1280, 720, 3),
            (1279, 719, 3),
            (1024, 600, 2),
            (1024, 600, 3),
            (1920, 1080, 4),
            (1920, 1080, 3),
            (854, 480, 2),
            (2560, 1440, 6),
            (640, 360, 1),
        ] {
            for selected in [0, 4, 8] {
                let frame = frame_with_hotbar(w, h, s, selected);
                let m = measure(&frame, &geo)
                    .unwrap_or_else(|| panic!("{w}x{h} at {s}, slot {selected}: not measured"));
                assert!(
                    (m.scale - s as f32).abs() < 0.01,
                    "{w}x{h} at {s}, slot {selected}: read {m:?}"
                );
            }
        }
    }

    #[test]
    fn a_frame_without_the_hud_is_not_measured_and_the_last_scale_is_kept() {
        let geo = profile("minecraft");
        let grass = RgbImage::from_pixel(1280, 720, image::Rgb([96, 140, 60]));
        assert_eq!(measure(&grass, &geo), None);
        // Night, or a cave: every outline fits, so none is taken.
        let dark = RgbImage::from_pixel(1280, 720, image::Rgb([5, 5, 5]));
        assert_eq!(measure(&dark, &geo), None);

        let mut tracker = GuiScaleTracker::default();
        // Nothing measured yet: the rule (1280 x 720 -> 3).
        let r = tracker.read(&grass, &geo, GuiScale::Auto);
        assert_eq!((r.scale, r.source), (3.0, ScaleSource::Rule));
        // The client draws at 3 where vanilla's rule says 2.
        let r = tracker.read(&frame_with_hotbar(1024, 600, 3, 0), &geo, GuiScale::Auto);
        assert_eq!((r.scale, r.source), (3.0, ScaleSource::Measured));
        let hidden = RgbImage::from_pixel(1024, 600, image::Rgb([96, 140, 60]));
        let r = tracker.read(&hidden, &geo, GuiScale::Auto);
        assert_eq!((r.scale, r.source), (3.0, ScaleSource::Kept));
        // Resized: what was measured at the old size is not kept, the new size is measured.
        let r = tracker.read(&grass, &geo, GuiScale::Auto);
        assert_eq!((r.scale, r.source), (3.0, ScaleSource::Rule));
        let r = tracker.read(&frame_with_hotbar(1920, 1080, 2, 3), &geo, GuiScale::Auto);
        assert_eq!((r.scale, r.source), (2.0, ScaleSource::Measured));
    }

    #[test]
    fn a_profile_without_an_outline_keeps_its_rule() {
        let geo = profile("minetest");
        let frame = frame_with_hotbar(854, 480, 2, 0);
        assert_eq!(measure(&frame, &geo), None);
        let r = GuiScaleTracker::default().read(&frame, &geo, GuiScale::Auto);
        assert_eq!(r.source, ScaleSource::Rule);
    }
}
