//! Drawing labelled boxes onto a frame, for `detect --overlay` and session reports.
//!
//! Text uses the public-domain `font8x8` bitmap font so no font file has to be found at run time.

use font8x8::UnicodeFonts;
use image::{Rgb, RgbImage};

use super::detections::Detection;

/// A distinct colour per class id (the Ultralytics palette order).
const PALETTE: [[u8; 3]; 20] = [
    [255, 56, 56],
    [255, 157, 151],
    [255, 112, 31],
    [255, 178, 29],
    [207, 210, 49],
    [72, 249, 10],
    [146, 204, 23],
    [61, 219, 134],
    [26, 147, 52],
    [0, 212, 187],
    [44, 153, 168],
    [0, 194, 255],
    [52, 69, 147],
    [100, 115, 255],
    [0, 24, 236],
    [132, 56, 255],
    [82, 0, 133],
    [203, 56, 255],
    [255, 149, 200],
    [255, 55, 199],
];

pub fn class_colour(class_id: usize) -> Rgb<u8> {
    Rgb(PALETTE[class_id % PALETTE.len()])
}

/// Draws every detection as a box with a `class conf` label above it (inside when at the top).
pub fn draw_detections(img: &mut RgbImage, detections: &[Detection]) {
    // Scale line width and text with the frame so labels stay legible on large frames.
    let scale = (img.height() / 400).clamp(1, 4);
    for d in detections {
        let colour = class_colour(d.class_id);
        let [x1, y1, x2, y2] = d.xyxy.map(|v| v.round().max(0.0) as u32);
        draw_rect(img, x1, y1, x2, y2, scale, colour);
        let label = format!("{} {:.2}", d.class, d.conf);
        let text_h = 8 * scale + 2;
        let text_w = label.chars().count() as u32 * 8 * scale + 2;
        let ty = if y1 >= text_h { y1 - text_h } else { y1 };
        // Keep the label inside the frame when the box touches the right edge.
        let tx = x1.min(img.width().saturating_sub(text_w));
        draw_label(img, tx, ty, &label, scale, colour);
    }
}

/// A box outline `width` px thick; parts outside the image are skipped.
pub fn draw_rect(img: &mut RgbImage, x1: u32, y1: u32, x2: u32, y2: u32, width: u32, c: Rgb<u8>) {
    for t in 0..width {
        for x in x1..=x2 {
            put(img, x, y1 + t, c);
            put(img, x, y2.saturating_sub(t), c);
        }
        for y in y1..=y2 {
            put(img, x1 + t, y, c);
            put(img, x2.saturating_sub(t), y, c);
        }
    }
}

/// White text on a filled background of the class colour.
pub fn draw_label(img: &mut RgbImage, x: u32, y: u32, text: &str, scale: u32, bg: Rgb<u8>) {
    let w = text.chars().count() as u32 * 8 * scale + 2;
    let h = 8 * scale + 2;
    for yy in y..y + h {
        for xx in x..x + w {
            put(img, xx, yy, bg);
        }
    }
    for (i, ch) in text.chars().enumerate() {
        let glyph = font8x8::BASIC_FONTS
            .get(ch)
            .or_else(|| font8x8::BASIC_FONTS.get('?'))
            .unwrap_or([0; 8]);
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..8u32 {
                if bits & (1 << col) != 0 {
                    for dy in 0..scale {
                        for dx in 0..scale {
                            put(
                                img,
                                x + 1 + (i as u32 * 8 + col) * scale + dx,
                                y + 1 + row as u32 * scale + dy,
                                Rgb([255, 255, 255]),
                            );
                        }
                    }
                }
            }
        }
    }
}

fn put(img: &mut RgbImage, x: u32, y: u32, c: Rgb<u8>) {
    if x < img.width() && y < img.height() {
        img.put_pixel(x, y, c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_outline_is_drawn_in_class_colour_and_inside_stays() {
        let mut img = RgbImage::new(100, 100);
        let d = Detection {
            class_id: 0,
            class: "trunk".into(),
            conf: 0.9,
            xyxy: [20.0, 30.0, 60.0, 80.0],
        };
        draw_detections(&mut img, &[d]);
        assert_eq!(*img.get_pixel(40, 80), class_colour(0));
        assert_eq!(*img.get_pixel(20, 50), class_colour(0));
        assert_eq!(*img.get_pixel(40, 50), Rgb([0, 0, 0]));
        // The label sits above the box and contains white text pixels.
        let label_has_white = (20..100)
            .flat_map(|x| (20..30).map(move |y| (x, y)))
            .any(|(x, y)| *img.get_pixel(x, y) == Rgb([255, 255, 255]));
        assert!(label_has_white);
    }

    #[test]
    fn boxes_past_the_edge_do_not_panic() {
        let mut img = RgbImage::new(100, 100);
        let d = Detection {
            class_id: 30,
            class: "x".into(),
            conf: 0.5,
            xyxy: [70.0, 0.0, 500.0, 500.0],
        };
        draw_detections(&mut img, &[d]);
        // The left edge is drawn below the label...
        assert_eq!(*img.get_pixel(70, 60), class_colour(30));
        // ...and the label ("x 0.50", 50 px wide) is pulled left to stay inside the frame.
        assert_eq!(*img.get_pixel(51, 1), class_colour(30));
        assert_eq!(*img.get_pixel(49, 1), Rgb([0, 0, 0]));
    }
}
