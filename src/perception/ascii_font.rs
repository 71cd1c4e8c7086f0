//! Minecraft's bitmap font, `font/ascii.png`, drawn the way the game draws an item stack's count.
//! Minecraft cannot run here, so its digit templates (`[counts.glyphs]` of the Minecraft profile)
//! are learnt from counts drawn with its own font texture (`vistawise counts learn --font`), and
//! the tests read counts drawn this way. The texture is the game's and is never shipped: it comes
//! from the npm package minecraft-assets (scripts/fetch-minecraft-assets.sh).

use std::path::{Path, PathBuf};

use image::{Rgb, RgbImage, RgbaImage};

/// Side of a glyph cell of the vanilla texture (16 x 16 cells, 128 x 128 pixels, in every
/// version from 1.8 to 1.21).
const CELL: u32 = 8;
/// The count's colour (white) and its shadow's, `(0xFFFFFF & 0xFCFCFC) >> 2` as the game
/// computes it.
const WHITE: Rgb<u8> = Rgb([255, 255, 255]);
const SHADOW: Rgb<u8> = Rgb([0x3F, 0x3F, 0x3F]);

#[derive(Debug, thiserror::Error)]
pub enum FontError {
    #[error("cannot read the font texture {path}: {source}")]
    Read {
        path: PathBuf,
        source: image::ImageError,
    },
    #[error("the font texture is {0}x{1}: expected 128x128 (16 x 16 cells of 8 pixels)")]
    Size(u32, u32),
}

/// The glyphs of `font/ascii.png`: a pixel is ink where it is not transparent.
pub struct AsciiFont {
    sheet: RgbaImage,
}

impl AsciiFont {
    pub fn load(path: &Path) -> Result<Self, FontError> {
        let sheet = image::open(path)
            .map_err(|source| FontError::Read {
                path: path.to_path_buf(),
                source,
            })?
            .to_rgba8();
        Self::from_sheet(sheet)
    }

    pub fn from_sheet(sheet: RgbaImage) -> Result<Self, FontError> {
        if sheet.dimensions() != (16 * CELL, 16 * CELL) {
            return Err(FontError::Size(sheet.width(), sheet.height()));
        }
        Ok(AsciiFont { sheet })
    }

    /// Whether pixel (x, y) of the cell of `ch` is ink; characters past the sheet have none.
    fn ink(&self, ch: char, x: u32, y: u32) -> bool {
        let code = ch as u32;
        code < 256
            && self
                .sheet
                .get_pixel((code % 16) * CELL + x, (code / 16) * CELL + y)
                .0[3]
                > 0
    }

    /// A glyph's width in GUI pixels: up to its rightmost ink column (the game's
    /// `FontRenderer.readFontTexture`).
    fn glyph_width(&self, ch: char) -> u32 {
        (0..CELL)
            .rev()
            .find(|&x| (0..CELL).any(|y| self.ink(ch, x, y)))
            .map_or(0, |x| x + 1)
    }

    /// The width of `text` in GUI pixels (`getStringWidth`): each glyph advances its width
    /// plus one.
    pub fn width(&self, text: &str) -> u32 {
        text.chars().map(|ch| self.glyph_width(ch) + 1).sum()
    }

    /// Draws `text` as `drawStringWithShadow` does: the shadow one GUI pixel down and right
    /// first, then the white glyphs, the top-left at GUI pixel `(gx, gy)` of a GUI drawn at
    /// `scale` (one GUI pixel is `scale` x `scale` window pixels). Pixels off the image are left
    /// out.
    pub fn draw_text(&self, img: &mut RgbImage, text: &str, (gx, gy): (i64, i64), scale: u32) {
        for (offset, colour) in [(1, SHADOW), (0, WHITE)] {
            let mut x = gx + offset;
            for ch in text.chars() {
                for (cx, cy) in (0..CELL * CELL).map(|i| (i % CELL, i / CELL)) {
                    if self.ink(ch, cx, cy) {
                        let at = (x + i64::from(cx), gy + offset + i64::from(cy));
                        fill_gui_pixel(img, at, scale, colour);
                    }
                }
                x += i64::from(self.glyph_width(ch) + 1);
            }
        }
    }

    /// Draws a stack's count as the game's `renderGuiItemDecorations` does for the slot whose
    /// 16 x 16 item area starts at GUI pixel `slot`: nothing for 1, otherwise the number
    /// right-aligned at `(slot_x + 17 - width, slot_y + 9)`.
    pub fn draw_count(&self, img: &mut RgbImage, count: u32, slot: (i64, i64), scale: u32) {
        if count == 1 {
            return;
        }
        let text = count.to_string();
        let x = slot.0 + 17 - i64::from(self.width(&text));
        self.draw_text(img, &text, (x, slot.1 + 9), scale);
    }
}

/// One GUI pixel: a `scale` x `scale` block of window pixels, clipped to the image.
fn fill_gui_pixel(img: &mut RgbImage, (gx, gy): (i64, i64), scale: u32, colour: Rgb<u8>) {
    let s = i64::from(scale);
    for (dx, dy) in (0..s * s).map(|i| (i % s, i / s)) {
        let (x, y) = (gx * s + dx, gy * s + dy);
        if let (Ok(x), Ok(y)) = (u32::try_from(x), u32::try_from(y))
            && x < img.width()
            && y < img.height()
        {
            img.put_pixel(x, y, colour);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgba;

    /// A sheet with one glyph: '7' as a 3 x 2 block of ink in its cell.
    fn sheet() -> AsciiFont {
        let mut sheet = RgbaImage::new(128, 128);
        let (cx, cy) = ((u32::from(b'7') % 16) * CELL, (u32::from(b'7') / 16) * CELL);
        for (x, y) in [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)] {
            sheet.put_pixel(cx + x, cy + y, Rgba([255, 255, 255, 255]));
        }
        AsciiFont::from_sheet(sheet).expect("128x128")
    }

    #[test]
    fn a_count_is_right_aligned_with_its_shadow_down_right_at_the_gui_scale() {
        let font = sheet();
        assert_eq!(font.width("77"), 8);
        let mut img = RgbImage::new(80, 80);
        // Slot at GUI (2, 3), scale 2: "77" starts at x = 2 + 17 - 8 = 11, y = 3 + 9 = 12.
        font.draw_count(&mut img, 77, (2, 3), 2);
        assert_eq!(*img.get_pixel(22, 24), WHITE);
        assert_eq!(*img.get_pixel(27, 27), WHITE);
        assert_eq!(
            *img.get_pixel(28, 26),
            SHADOW,
            "the shadow right of the first glyph"
        );
        assert_eq!(*img.get_pixel(24, 28), SHADOW, "the shadow under it");
        assert_eq!(
            *img.get_pixel(30, 24),
            WHITE,
            "the second glyph 4 GUI px on"
        );
        let mut one = RgbImage::new(80, 80);
        font.draw_count(&mut one, 1, (2, 3), 2);
        assert!(one.pixels().all(|p| p.0 == [0, 0, 0]), "1 is not drawn");
        // Off the image: clipped, no panic.
        font.draw_count(&mut img, 77, (36, 36), 2);
        assert!(matches!(
            AsciiFont::from_sheet(RgbaImage::new(64, 64)),
            Err(FontError::Size(64, 64))
        ));
    }
}
