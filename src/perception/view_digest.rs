//! A frame's view digest: its mean luma in a coarse grid, as hex, so that a step can tell
//! whether the last walk moved the player at all (a walk into a wall leaves the view as it
//! was). Small enough to keep in every session line; the HUD rows at the bottom are left out,
//! they are the same whatever the player does.

use image::RgbImage;

/// Cells across and down.
const COLS: u32 = 32;
const ROWS: u32 = 18;
/// The share of the frame's height read from the top: below it the HUD.
const TOP_SHARE: f32 = 0.8;

/// The digest of `frame`: `COLS` x `ROWS` cells of mean luma (0-255), two hex digits each.
pub fn digest(frame: &RgbImage) -> String {
    let (w, h) = (frame.width(), (frame.height() as f32 * TOP_SHARE) as u32);
    if w < COLS || h < ROWS {
        return String::new();
    }
    let mut out = String::with_capacity((COLS * ROWS * 2) as usize);
    for row in 0..ROWS {
        for col in 0..COLS {
            let (x0, x1) = (col * w / COLS, (col + 1) * w / COLS);
            let (y0, y1) = (row * h / ROWS, (row + 1) * h / ROWS);
            // Every other pixel both ways: a mean, not a picture.
            let mut sum = 0u64;
            let mut n = 0u64;
            for y in (y0..y1).step_by(2) {
                for x in (x0..x1).step_by(2) {
                    let [r, g, b] = frame.get_pixel(x, y).0;
                    sum += u64::from(
                        (299 * u32::from(r) + 587 * u32::from(g) + 114 * u32::from(b)) / 1000,
                    );
                    n += 1;
                }
            }
            let mean = sum.checked_div(n).unwrap_or(0);
            out.push_str(&format!("{mean:02x}"));
        }
    }
    out
}

/// The mean absolute difference of two digests' cells (luma 0-255); `None` when either is
/// empty or they are not digests of one size.
pub fn change(a: &str, b: &str) -> Option<f32> {
    change_in(a, b, |_| true)
}

/// [`change`] over the middle half of the view both ways: what the crosshair looks at, without
/// the page's own banners at the top (the browser's "press Esc to show your cursor" after a
/// pointer grab changed a digest by 7 where the world stood still).
pub fn central_change(a: &str, b: &str) -> Option<f32> {
    change_in(a, b, |k| {
        let (row, col) = (k as u32 / COLS, k as u32 % COLS);
        (ROWS / 4..ROWS - ROWS / 4).contains(&row) && (COLS / 4..COLS - COLS / 4).contains(&col)
    })
}

/// The mean absolute difference of the cells `keep` takes (by index, row by row).
fn change_in(a: &str, b: &str, keep: impl Fn(usize) -> bool) -> Option<f32> {
    if a.is_empty() || a.len() != b.len() || !a.len().is_multiple_of(2) {
        return None;
    }
    let cell = |s: &str, i: usize| u8::from_str_radix(s.get(i..i + 2)?, 16).ok();
    let (mut total, mut cells) = (0u32, 0u32);
    for k in (0..a.len() / 2).filter(|&k| keep(k)) {
        let (x, y) = (cell(a, 2 * k)?, cell(b, 2 * k)?);
        total += u32::from(x.abs_diff(y));
        cells += 1;
    }
    (cells > 0).then(|| total as f32 / cells as f32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgb;

    #[test]
    fn the_same_view_does_not_change_and_another_does() {
        let grass = RgbImage::from_fn(1280, 720, |x, y| Rgb([(x % 97) as u8, 140, (y % 53) as u8]));
        let d = digest(&grass);
        assert_eq!(d.len(), 32 * 18 * 2);
        assert_eq!(change(&d, &d), Some(0.0));
        // The view turned: the sky where the ground was in the upper half.
        let turned = RgbImage::from_fn(1280, 720, |x, y| {
            if y < 300 {
                Rgb([173, 217, 230])
            } else {
                Rgb([(x % 97) as u8, 140, (y % 53) as u8])
            }
        });
        let c = change(&d, &digest(&turned)).expect("same size");
        assert!(c > 30.0, "{c}");
        // The HUD rows do not count: a change there alone is none.
        let mut hud = grass.clone();
        for y in 600..720 {
            for x in 0..1280 {
                hud.put_pixel(x, y, Rgb([0, 0, 0]));
            }
        }
        assert_eq!(change(&d, &digest(&hud)), Some(0.0));
        // A banner over the top of the page: the view changed, its middle did not.
        let mut banner = grass.clone();
        for y in 40..100 {
            for x in 370..910 {
                banner.put_pixel(x, y, Rgb([0, 0, 0]));
            }
        }
        let whole = change(&d, &digest(&banner)).expect("same size");
        assert!(whole > 2.0, "{whole}");
        assert_eq!(central_change(&d, &digest(&banner)), Some(0.0));
        assert!(central_change(&d, &digest(&turned)).is_some_and(|c| c > 30.0));
        // Nothing to compare with: no answer rather than a wrong one.
        assert_eq!(change("", &d), None);
        assert_eq!(change(&d, "00"), None);
        assert_eq!(central_change("", &d), None);
        assert_eq!(digest(&RgbImage::new(8, 8)), "");
    }
}
