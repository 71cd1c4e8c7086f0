//! Perceptual hashes for near-duplicate frames: a 64-bit difference hash (dHash).
//!
//! The frame is reduced to 9x8 grey pixels; bit `8*row + col` is set when a pixel is brighter
//! than its right neighbour. Frames that look alike differ in few bits (Hamming distance); a
//! consecutive frame of a still scene differs in 0-2, unrelated frames in about 32.

use image::RgbImage;
use image::imageops::FilterType;

/// A 64-bit dHash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DHash(pub u64);

impl DHash {
    pub fn of(image: &RgbImage) -> DHash {
        let grey = image::imageops::grayscale(image);
        let small = image::imageops::resize(&grey, 9, 8, FilterType::Triangle);
        let mut bits = 0u64;
        for row in 0..8u32 {
            for col in 0..8u32 {
                let left = small.get_pixel(col, row)[0];
                let right = small.get_pixel(col + 1, row)[0];
                if left > right {
                    bits |= 1 << (row * 8 + col);
                }
            }
        }
        DHash(bits)
    }

    /// Number of differing bits (0-64).
    pub fn distance(self, other: DHash) -> u32 {
        (self.0 ^ other.0).count_ones()
    }

    pub fn to_hex(self) -> String {
        format!("{:016x}", self.0)
    }

    pub fn from_hex(text: &str) -> Option<DHash> {
        (text.len() == 16)
            .then(|| u64::from_str_radix(text, 16).ok().map(DHash))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smooth pattern; `shift` brightens every channel (saturating).
    fn gradient(w: u32, h: u32, shift: u8) -> RgbImage {
        RgbImage::from_fn(w, h, |x, y| {
            let v = 128.0 + 90.0 * (x as f32 / 37.0).sin() * (y as f32 / 23.0).cos();
            let v = (v as u8).saturating_add(shift);
            image::Rgb([v, v / 2 + 40, 200 - v / 2])
        })
    }

    #[test]
    fn similar_frames_are_close_and_different_ones_far() {
        let a = DHash::of(&gradient(320, 180, 0));
        let brighter = DHash::of(&gradient(320, 180, 3));
        let other = DHash::of(&RgbImage::from_fn(320, 180, |x, _| {
            image::Rgb([if (x / 20) % 2 == 0 { 250 } else { 5 }; 3])
        }));
        assert!(a.distance(brighter) <= 4, "{}", a.distance(brighter));
        assert!(a.distance(other) > 10, "{}", a.distance(other));
        assert_eq!(DHash::from_hex(&a.to_hex()), Some(a));
        assert_eq!(DHash::from_hex("xyz"), None);
    }
}
