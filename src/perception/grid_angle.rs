//! How far the view's heading is turned off the block grid, read from a frame that looks straight
//! down. Seen from straight above, the floor is a map: its block edges and the texels of its
//! textures (drawn pixel-sharp) run along the world's axes, so their direction on screen is the
//! heading's angle to the grid, a quarter turn either way. A staircase dug on a heading off the
//! grid cuts the corner of every step and goes down half as fast (a run 31 degrees off went down
//! 28 blocks in 66 steps); the planner squares the heading with this before it digs.
//!
//! The angle is the mean direction of the frame's edges with four times their angle (edges a
//! quarter turn apart then point the same way), weighted by their strength, in the middle of the
//! frame (the floor under the player; the walls of a shaft, seen edge on, are at the sides). The
//! frame is smoothed first at a scale of its height: the screen's own pixel steps along a turned
//! edge would otherwise pull every reading toward 0.

use image::RgbImage;
use serde::{Deserialize, Serialize};

/// The share of the frame's height read, as a square about the centre.
const REGION_SHARE: f32 = 0.4;
/// The box around the crosshair left out (its lines are the screen's, not the world's), as a
/// share of the frame's height.
const CROSSHAIR_SHARE: f32 = 0.04;
/// Smoothing radius in pixels per 360 pixels of frame height.
const SMOOTH_PER_360: f32 = 1.0;

/// The grid's direction on screen in a frame.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GridAngle {
    /// The angle, in degrees, by which the edges in view are turned clockwise on screen from
    /// the screen's axes, in (-45, 45]. Looking straight down, turning right by this many
    /// degrees squares the heading to the grid.
    pub degrees: f32,
    /// How much the edges agree, 0 (every direction alike: no grid) to 1 (all on one grid).
    pub strength: f32,
}

/// The grid angle of the middle of `frame`; `None` for a frame too small or with no edges.
pub fn grid_angle(frame: &RgbImage) -> Option<GridAngle> {
    let (w, h) = frame.dimensions();
    let side = (h as f32 * REGION_SHARE) as u32;
    if side < 16 || w < side {
        return None;
    }
    let radius = ((h as f32 / 360.0 * SMOOTH_PER_360).round() as u32).max(1);
    let (x0, y0) = ((w - side) / 2, (h - side) / 2);
    let luma = smoothed_luma(frame, x0, y0, side, radius);
    let hole = (h as f32 * CROSSHAIR_SHARE / 2.0) as i64;
    let centre = i64::from(side / 2);
    let at = |x: u32, y: u32| luma[(y * side + x) as usize];
    let (mut c, mut s, mut total) = (0f64, 0f64, 0f64);
    let r = radius;
    for y in r..side - r {
        for x in r..side - r {
            if (i64::from(x) - centre).abs() <= hole && (i64::from(y) - centre).abs() <= hole {
                continue;
            }
            let gx = at(x + r, y) - at(x - r, y);
            let gy = at(x, y + r) - at(x, y - r);
            let m = gx.hypot(gy);
            if m < 1e-3 {
                continue;
            }
            // cos(4t) and sin(4t) from cos(t) = gx/m and sin(t) = gy/m.
            let (ct, st) = (gx / m, gy / m);
            let (c2, s2) = (ct * ct - st * st, 2.0 * ct * st);
            c += f64::from(m * (c2 * c2 - s2 * s2));
            s += f64::from(m * (2.0 * c2 * s2));
            total += f64::from(m);
        }
    }
    if total <= 0.0 {
        return None;
    }
    let mut degrees = (s.atan2(c) / 4.0).to_degrees() as f32;
    if degrees <= -45.0 {
        degrees += 90.0;
    }
    Some(GridAngle {
        degrees,
        strength: (c.hypot(s) / total) as f32,
    })
}

/// The luma of the `side` x `side` square at (`x0`, `y0`), blurred twice with a box of
/// `radius` (near enough a Gaussian).
fn smoothed_luma(frame: &RgbImage, x0: u32, y0: u32, side: u32, radius: u32) -> Vec<f32> {
    let n = side as usize;
    let mut luma: Vec<f32> = (0..side)
        .flat_map(|y| (0..side).map(move |x| (x, y)))
        .map(|(x, y)| {
            let [r, g, b] = frame.get_pixel(x0 + x, y0 + y).0;
            0.299 * f32::from(r) + 0.587 * f32::from(g) + 0.114 * f32::from(b)
        })
        .collect();
    for _ in 0..2 {
        luma = box_pass(&luma, n, radius as usize, true);
        luma = box_pass(&luma, n, radius as usize, false);
    }
    luma
}

/// One pass of a box blur of `radius` along rows (`along_rows`) or columns of an `n` x `n`
/// image, the edges clamped.
fn box_pass(src: &[f32], n: usize, radius: usize, along_rows: bool) -> Vec<f32> {
    let index = |line: usize, k: usize| {
        if along_rows {
            line * n + k
        } else {
            k * n + line
        }
    };
    let mut out = vec![0f32; src.len()];
    let width = (2 * radius + 1) as f32;
    for line in 0..n {
        for k in 0..n {
            let sum: f32 = (k as i64 - radius as i64..=(k + radius) as i64)
                .map(|j| src[index(line, j.clamp(0, n as i64 - 1) as usize)])
                .sum();
            out[index(line, k)] = sum / width;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgb;

    /// A floor of 16-texel blocks seen from above, each texel `texel` pixels, its grid turned
    /// `degrees` clockwise on screen, drawn pixel-sharp (nearest texel, as the game draws).
    fn floor(w: u32, h: u32, texel: f32, degrees: f32) -> RgbImage {
        let (sin, cos) = degrees.to_radians().sin_cos();
        RgbImage::from_fn(w, h, |x, y| {
            let (dx, dy) = (
                x as f32 - w as f32 / 2.0 + 7.3,
                y as f32 - h as f32 / 2.0 + 3.1,
            );
            let u = (cos * dx + sin * dy) / texel;
            let v = (-sin * dx + cos * dy) / texel;
            let (tu, tv) = (u.floor() as i64, v.floor() as i64);
            // Stone-like: a grey per texel, darker along the block's edge.
            let hash = (tu.wrapping_mul(73_856_093) ^ tv.wrapping_mul(19_349_663)) & 0xff;
            let edge = tu.rem_euclid(16) == 0 || tv.rem_euclid(16) == 0;
            let g = 90 + (hash % 60) as u8 - if edge { 40 } else { 0 };
            Rgb([g, g, g])
        })
    }

    #[test]
    fn the_grid_angle_of_a_turned_floor_is_read_both_ways_and_at_any_size() {
        for (w, h, texel) in [(1280, 720, 20.0), (854, 480, 13.0), (640, 360, 10.0)] {
            for degrees in [0.0f32, 3.0, 10.0, 22.5, 31.0, 40.0, -7.0, -25.0, -38.0] {
                let read = grid_angle(&floor(w, h, texel, degrees)).expect("a floor in view");
                assert!(
                    (read.degrees - degrees).abs() < 1.5,
                    "{w}x{h} turned {degrees}: read {read:?}"
                );
                assert!(read.strength > 0.3, "{w}x{h} turned {degrees}: {read:?}");
            }
        }
    }

    #[test]
    fn no_grid_reads_weak_and_nothing_reads_none() {
        // Edges every way (rings about a point off the centre): no direction stands out.
        let rings = RgbImage::from_fn(1280, 720, |x, y| {
            let r = (x as f32 - 600.0).hypot(y as f32 - 330.0);
            let g = if ((r / 9.0) as u32).is_multiple_of(2) {
                60
            } else {
                160
            };
            Rgb([g, g, g])
        });
        let read = grid_angle(&rings).expect("edges in view");
        assert!(read.strength < 0.15, "{read:?}");
        assert_eq!(
            grid_angle(&RgbImage::from_pixel(1280, 720, Rgb([9, 9, 9]))),
            None
        );
        assert_eq!(grid_angle(&RgbImage::new(20, 20)), None);
    }

    #[test]
    fn the_crosshair_does_not_pull_the_reading_to_the_screen_axes() {
        let mut frame = floor(1280, 720, 20.0, 17.0);
        for k in 0..24 {
            for t in 0..2 {
                frame.put_pixel(628 + k, 359 + t, Rgb([255, 255, 255]));
                frame.put_pixel(639 + t, 348 + k, Rgb([255, 255, 255]));
            }
        }
        let read = grid_angle(&frame).expect("a floor in view");
        assert!((read.degrees - 17.0).abs() < 1.5, "{read:?}");
    }
}
