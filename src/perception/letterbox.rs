//! Letterboxing a frame into the detector's input, and mapping boxes back.
//!
//! This reproduces Ultralytics' `LetterBox` (aspect kept, centred, grey 114 padding, OpenCV
//! `INTER_LINEAR` resize) and `scale_boxes`, including Python's round-half-even and the ±0.1
//! padding split, so boxes match Ultralytics' own predictions. The resize is written here
//! because the `image` crate's filters antialias when shrinking and OpenCV's bilinear does not:
//! using them would shift confidences away from the reference.

use image::RgbImage;

/// Grey used for padding, as in Ultralytics.
pub const PAD_VALUE: u8 = 114;

/// Paints `areas` (`[x1, y1, x2, y2]` in pixels) of `image` flat in the padding's grey: what a
/// mask hides (an open screen's item list) looks to the detector like the letterbox's padding,
/// in the frames it was trained on and in the frames it sees while playing alike.
pub fn mask_areas(image: &mut RgbImage, areas: &[[f64; 4]]) {
    let (w, h) = image.dimensions();
    for a in areas {
        let x1 = (a[0].max(0.0) as u32).min(w);
        let y1 = (a[1].max(0.0) as u32).min(h);
        let x2 = (a[2].max(0.0).ceil() as u32).min(w);
        let y2 = (a[3].max(0.0).ceil() as u32).min(h);
        for y in y1..y2 {
            for x in x1..x2 {
                image.put_pixel(x, y, image::Rgb([PAD_VALUE; 3]));
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Letterbox {
    pub src_w: u32,
    pub src_h: u32,
    pub dst_w: u32,
    pub dst_h: u32,
    /// Size of the resized image inside the padded input.
    pub new_w: u32,
    pub new_h: u32,
    /// Padding on the left and top of the input.
    pub left: u32,
    pub top: u32,
    /// min(dst_h / src_h, dst_w / src_w).
    pub gain: f64,
}

impl Letterbox {
    pub fn new(src_w: u32, src_h: u32, dst_w: u32, dst_h: u32) -> Self {
        let gain = (dst_h as f64 / src_h as f64).min(dst_w as f64 / src_w as f64);
        Self::with_gain(src_w, src_h, dst_w, dst_h, gain)
    }

    /// The smallest input that holds the frame scaled to fit `max_w` x `max_h`, padded only up
    /// to a multiple of `stride` (Ultralytics' `LetterBox(auto=True)`, what its `predict` uses
    /// for a dynamic-size model). A 16:9 frame into 640x640 gets a 640x384 input; a square one
    /// gets 640x640 instead of being shrunk into a fixed 16:9 canvas.
    pub fn min_rect(src_w: u32, src_h: u32, max_w: u32, max_h: u32, stride: u32) -> Self {
        let gain = (max_h as f64 / src_h as f64).min(max_w as f64 / src_w as f64);
        let fit = |v: u32| ((v as f64 * gain).round_ties_even() as u32).max(1);
        let (new_w, new_h) = (fit(src_w), fit(src_h));
        let stride = stride.max(1);
        // Ultralytics pads by (max - new) mod stride, which can only grow the side.
        let pad = |max: u32, new: u32| max.saturating_sub(new) % stride;
        let dst_w = new_w + pad(max_w, new_w);
        let dst_h = new_h + pad(max_h, new_h);
        Self::with_gain(src_w, src_h, dst_w, dst_h, gain)
    }

    fn with_gain(src_w: u32, src_h: u32, dst_w: u32, dst_h: u32, gain: f64) -> Self {
        let new_w = ((src_w as f64 * gain).round_ties_even() as u32).clamp(1, dst_w);
        let new_h = ((src_h as f64 * gain).round_ties_even() as u32).clamp(1, dst_h);
        let dw = (dst_w - new_w) as f64 / 2.0;
        let dh = (dst_h - new_h) as f64 / 2.0;
        Letterbox {
            src_w,
            src_h,
            dst_w,
            dst_h,
            new_w,
            new_h,
            left: (dw - 0.1).round_ties_even().max(0.0) as u32,
            top: (dh - 0.1).round_ties_even().max(0.0) as u32,
            gain,
        }
    }

    /// Maps an `[x1, y1, x2, y2]` box from input pixels to source pixels, clipped to the frame
    /// (Ultralytics 8.4 `scale_boxes`: per-axis gains from the rounded resized size, padding
    /// `round((dst - new) / 2 - 0.1)`).
    pub fn to_source(self, b: [f32; 4]) -> [f32; 4] {
        let [x1, y1, x2, y2] = self.to_source_unclipped(b);
        let (w, h) = (self.src_w as f32, self.src_h as f32);
        [
            x1.clamp(0.0, w),
            y1.clamp(0.0, h),
            x2.clamp(0.0, w),
            y2.clamp(0.0, h),
        ]
    }

    /// The same mapping without clipping (Ultralytics' `val` matches unclipped boxes).
    pub fn to_source_unclipped(self, b: [f32; 4]) -> [f32; 4] {
        let pad_x = ((self.dst_w - self.new_w) as f64 / 2.0 - 0.1).round_ties_even();
        let pad_y = ((self.dst_h - self.new_h) as f64 / 2.0 - 0.1).round_ties_even();
        let gain_x = self.new_w as f64 / self.src_w as f64;
        let gain_y = self.new_h as f64 / self.src_h as f64;
        let map = |v: f32, pad: f64, gain: f64| ((v as f64 - pad) / gain) as f32;
        [
            map(b[0], pad_x, gain_x),
            map(b[1], pad_y, gain_y),
            map(b[2], pad_x, gain_x),
            map(b[3], pad_y, gain_y),
        ]
    }

    /// Writes the letterboxed frame as planar RGB floats in [0, 1] into `out` (3 x dst_h x dst_w).
    pub fn fill_chw(&self, img: &RgbImage, out: &mut [f32]) {
        let (dw, dh) = (self.dst_w as usize, self.dst_h as usize);
        let plane = dw * dh;
        debug_assert_eq!(out.len(), 3 * plane);
        self.fill_padding(out);
        let (red, rest) = out.split_at_mut(plane);
        let (green, blue) = rest.split_at_mut(plane);
        let halving = img.width() == 2 * self.new_w && img.height() == 2 * self.new_h;
        if halving {
            self.fill_halved(img, [red, green, blue]);
        } else {
            self.fill_bilinear(img, [red, green, blue]);
        }
    }

    /// Grey where the picture does not go (rows above and below it, columns beside it): the
    /// picture's own pixels are written once, by the resize.
    fn fill_padding(&self, out: &mut [f32]) {
        let grey = UNIT[PAD_VALUE as usize];
        let (dw, dh) = (self.dst_w as usize, self.dst_h as usize);
        let (left, top) = (self.left as usize, self.top as usize);
        let (new_w, new_h) = (self.new_w as usize, self.new_h as usize);
        for plane in out.chunks_exact_mut(dw * dh) {
            plane[..top * dw].fill(grey);
            plane[(top + new_h) * dw..].fill(grey);
            if new_w < dw {
                for row in plane[top * dw..(top + new_h) * dw].chunks_exact_mut(dw) {
                    row[..left].fill(grey);
                    row[left + new_w..].fill(grey);
                }
            }
        }
    }

    /// An exact halving (1280x720 into 640x360, the common game frame): every bilinear tap sits
    /// half-way, so each value is the 2x2 block's mean rounded half up, `(a + b + c + d + 2) / 4`
    /// in integers, the same value the float path computes exactly, at a fraction of its cost.
    fn fill_halved(&self, img: &RgbImage, planes: [&mut [f32]; 3]) {
        let (dw, new_w) = (self.dst_w as usize, self.new_w as usize);
        let stride = img.width() as usize * 3;
        let src = img.as_raw();
        let [red, green, blue] = planes;
        for (oy, rows) in src.chunks_exact(2 * stride).enumerate() {
            let (row0, row1) = rows.split_at(stride);
            let base = (oy + self.top as usize) * dw + self.left as usize;
            let span = base..base + new_w;
            let outs = red[span.clone()]
                .iter_mut()
                .zip(green[span.clone()].iter_mut())
                .zip(blue[span].iter_mut());
            for (((r, g), b), (p0, p1)) in outs.zip(row0.chunks_exact(6).zip(row1.chunks_exact(6)))
            {
                let mean = |c: usize| {
                    let sum = p0[c] as u16 + p0[c + 3] as u16 + p1[c] as u16 + p1[c + 3] as u16;
                    UNIT[((sum + 2) >> 2) as usize]
                };
                (*r, *g, *b) = (mean(0), mean(1), mean(2));
            }
        }
    }

    /// OpenCV `INTER_LINEAR` at any scale.
    fn fill_bilinear(&self, img: &RgbImage, planes: [&mut [f32]; 3]) {
        let dw = self.dst_w as usize;
        let xs = axis_taps(img.width(), self.new_w);
        let ys = axis_taps(img.height(), self.new_h);
        let src = img.as_raw();
        let stride = img.width() as usize * 3;
        let [red, green, blue] = planes;
        for (oy, &(y0, y1, wy)) in ys.iter().enumerate() {
            let row0 = &src[y0 * stride..(y0 + 1) * stride];
            let row1 = &src[y1 * stride..(y1 + 1) * stride];
            let base = (oy + self.top as usize) * dw + self.left as usize;
            let span = base..base + xs.len();
            let planes = [
                &mut red[span.clone()],
                &mut green[span.clone()],
                &mut blue[span],
            ];
            for (c, plane_row) in planes.into_iter().enumerate() {
                for (dst, &(x0, x1, wx)) in plane_row.iter_mut().zip(&xs) {
                    let (i0, i1) = (x0 * 3 + c, x1 * 3 + c);
                    let top = row0[i0] as f32 * (1.0 - wx) + row0[i1] as f32 * wx;
                    let bottom = row1[i0] as f32 * (1.0 - wx) + row1[i1] as f32 * wx;
                    // OpenCV resizes 8-bit images to 8-bit (rounding half up): round before
                    // normalising. `+ 0.5` and a saturating cast instead of `f32::round`, which is
                    // a libm call per value on baseline x86-64 and was most of the pre-process time.
                    let v = top * (1.0 - wy) + bottom * wy;
                    *dst = UNIT[(v + 0.5) as u8 as usize];
                }
            }
        }
    }
}

/// `i / 255` for every 8-bit value: the normalised input the model was trained on.
const UNIT: [f32; 256] = {
    let mut t = [0.0f32; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i as f32 / 255.0;
        i += 1;
    }
    t
};

/// For each destination index: the two source indices and the weight of the second
/// (OpenCV `INTER_LINEAR`: half-pixel centres, edges clamped, no antialiasing).
fn axis_taps(src: u32, dst: u32) -> Vec<(usize, usize, f32)> {
    let scale = src as f64 / dst as f64;
    let last = src.saturating_sub(1) as i64;
    (0..dst)
        .map(|d| {
            if src == dst {
                return (d as usize, d as usize, 0.0);
            }
            let f = (d as f64 + 0.5) * scale - 0.5;
            let mut i = f.floor() as i64;
            let mut w = f - i as f64;
            if i < 0 {
                i = 0;
                w = 0.0;
            }
            if i >= last {
                i = last;
                w = 0.0;
            }
            let j = (i + 1).min(last);
            (i as usize, j as usize, w as f32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_frame_pads_top_and_bottom() {
        // 1280x720 into 640x640: gain 0.5, 640x360 image, 140 px bands above and below.
        let lb = Letterbox::new(1280, 720, 640, 640);
        assert_eq!((lb.new_w, lb.new_h, lb.left, lb.top), (640, 360, 0, 140));
        assert_eq!(
            lb.to_source([0.0, 140.0, 640.0, 500.0]),
            [0.0, 0.0, 1280.0, 720.0]
        );
    }

    #[test]
    fn classic_frame_into_wide_input_pads_left_and_right() {
        // 640x480 into 320x192 (h=192): gain 0.4, 256x192, 32 px on each side.
        let lb = Letterbox::new(640, 480, 320, 192);
        assert_eq!((lb.new_w, lb.new_h, lb.left, lb.top), (256, 192, 32, 0));
        assert_eq!(
            lb.to_source([32.0, 0.0, 288.0, 192.0]),
            [0.0, 0.0, 640.0, 480.0]
        );
    }

    #[test]
    fn portrait_frame_and_odd_padding_split() {
        // 360x640 into 320x320: gain 0.5, 180x320; 70 px each side.
        let lb = Letterbox::new(360, 640, 320, 320);
        assert_eq!((lb.new_w, lb.new_h, lb.left, lb.top), (180, 320, 70, 0));
        // Odd total padding (3 px): Ultralytics puts 1 before and 2 after (round(1.4), round(1.6)).
        let lb = Letterbox::new(100, 97, 100, 100);
        assert_eq!((lb.new_h, lb.top), (97, 1));
    }

    #[test]
    fn min_rect_pads_only_to_the_stride() {
        // 16:9: the same 640x384 input a fixed 384x640 export gets (gain 0.5, 12 px bands).
        let lb = Letterbox::min_rect(1280, 720, 640, 640, 32);
        assert_eq!((lb.dst_w, lb.dst_h), (640, 384));
        assert_eq!((lb.new_w, lb.new_h, lb.left, lb.top), (640, 360, 0, 12));
        assert_eq!(lb, Letterbox::new(1280, 720, 640, 384));
        // Square: the full 640x640, not a 384x384 image inside a 16:9 canvas.
        let lb = Letterbox::min_rect(640, 640, 640, 640, 32);
        assert_eq!(
            (lb.dst_w, lb.dst_h, lb.new_w, lb.left, lb.top),
            (640, 640, 640, 0, 0)
        );
        // Small frames are scaled up, as Ultralytics' predict does: 320x180 -> 640x360 -> 640x384.
        assert_eq!(
            Letterbox::min_rect(320, 180, 640, 640, 32),
            Letterbox::new(320, 180, 640, 384)
        );
        // Portrait 4:3 (480x640): 480 is already a multiple of 32.
        let lb = Letterbox::min_rect(600, 800, 640, 640, 32);
        assert_eq!(
            (lb.dst_w, lb.dst_h, lb.new_w, lb.new_h),
            (480, 640, 480, 640)
        );
        // Odd sizes: 1000x333 -> gain 0.64, 640x213 -> 640x224 (11 px: 5 above, 6 below).
        let lb = Letterbox::min_rect(1000, 333, 640, 640, 32);
        assert_eq!((lb.dst_w, lb.dst_h, lb.new_h, lb.top), (640, 224, 213, 5));
        // The gain is the one fitting the maximum, even when the rounded-down side is what
        // bounds the input (as in Ultralytics, which computes it before padding).
        assert_eq!(lb.gain, 0.64);
    }

    #[test]
    fn boxes_are_clipped_to_the_frame_unless_asked_not_to() {
        let lb = Letterbox::new(1280, 720, 640, 640);
        assert_eq!(
            lb.to_source([-10.0, 100.0, 700.0, 600.0]),
            [0.0, 0.0, 1280.0, 720.0]
        );
        assert_eq!(
            lb.to_source_unclipped([-10.0, 100.0, 700.0, 600.0]),
            [-20.0, -80.0, 1400.0, 920.0]
        );
    }

    #[test]
    fn fill_pads_grey_and_keeps_content() {
        let mut img = RgbImage::new(4, 2);
        for p in img.pixels_mut() {
            *p = image::Rgb([255, 0, 10]);
        }
        let lb = Letterbox::new(4, 2, 4, 4);
        let mut out = vec![0.0; 3 * 16];
        lb.fill_chw(&img, &mut out);
        let grey = 114.0 / 255.0;
        // Row 0 and row 3 are padding; rows 1-2 are the image.
        assert_eq!(out[0], grey);
        assert_eq!(out[3 * 4 + 3], grey);
        assert_eq!(out[4], 1.0); // red plane, row 1
        assert_eq!(out[16 + 4], 0.0); // green plane
        assert_eq!(out[32 + 4], 10.0 / 255.0); // blue plane
    }

    #[test]
    fn fill_equals_per_value_bilinear_with_rounding_on_a_textured_frame() {
        // The straightforward form (f32 bilinear, f32::round, divide by 255) on frames with
        // every byte value present, letterboxed to 640x384: the fast paths must not change one
        // input value.
        // 1280x720 takes the exact-halving path, 960x540 (scale 2/3) the general one.
        for (w, h) in [(1280, 720), (960, 540)] {
            textured_frame_matches_reference(w, h);
        }
    }

    fn textured_frame_matches_reference(w: u32, h: u32) {
        let img = RgbImage::from_fn(w, h, |x, y| {
            let v = |k: u32| ((x * 7 + y * 13 + k * 101 + (x * y) % 251) % 256) as u8;
            image::Rgb([v(0), v(1), v(2)])
        });
        let lb = Letterbox::new(w, h, 640, 384);
        let mut out = vec![0.0; 3 * 640 * 384];
        lb.fill_chw(&img, &mut out);
        let (xs, ys) = (axis_taps(w, lb.new_w), axis_taps(h, lb.new_h));
        let plane = 640 * 384;
        for (oy, &(y0, y1, wy)) in ys.iter().enumerate() {
            for (ox, &(x0, x1, wx)) in xs.iter().enumerate() {
                for c in 0..3 {
                    let p = |x: usize, y: usize| img.get_pixel(x as u32, y as u32)[c] as f32;
                    let top = p(x0, y0) * (1.0 - wx) + p(x1, y0) * wx;
                    let bottom = p(x0, y1) * (1.0 - wx) + p(x1, y1) * wx;
                    let want = (top * (1.0 - wy) + bottom * wy).round().clamp(0.0, 255.0) / 255.0;
                    let at = c * plane + (oy + lb.top as usize) * 640 + lb.left as usize + ox;
                    assert_eq!(out[at], want, "{w}x{h}: channel {c} at ({ox}, {oy})");
                }
            }
        }
        assert_eq!(out[0], 114.0 / 255.0, "padding row above the frame");
    }

    #[test]
    fn downscale_is_plain_bilinear_without_antialiasing() {
        // A 4-px row 0,100,200,255 halved: OpenCV samples at 0.5 and 2.5 -> 50 and 227.5 -> 228.
        let img = RgbImage::from_fn(4, 1, |x, _| {
            let v = [0u8, 100, 200, 255][x as usize];
            image::Rgb([v, v, v])
        });
        let lb = Letterbox::new(4, 1, 2, 1);
        let mut out = vec![0.0; 3 * 2];
        lb.fill_chw(&img, &mut out);
        assert_eq!(out[0] * 255.0, 50.0);
        assert!((out[1] * 255.0 - 228.0).abs() < 1e-3);
    }
}
