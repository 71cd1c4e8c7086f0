//! Stack counts in the Minecraft profile. Minecraft cannot run here, so its frames are drawn from
//! its own textures (the npm package minecraft-assets, installed by
//! scripts/fetch-minecraft-assets.sh, never committed): the HUD hotbar or the inventory panel,
//! an item in every slot and its count in the game's font, the way the game draws them, at GUI
//! scales 2-4. The shipped `[counts]` of config/games/minecraft.toml must read every count back.

use crate::support;

use image::{Rgb, RgbImage, RgbaImage};
use vistawise::config::GuiScale;
use vistawise::game::GameProfile;
use vistawise::perception::AsciiFont;
use vistawise::perception::CountStyle;
use vistawise::skills::GuiLayout;

/// Both texture eras: the digits are the same, the icons and panels under them are not.
const VERSIONS: [&str; 2] = ["1.12", "1.19.1"];
/// (window, GUI scale): the auto scale of three common windows, and a smaller fixed one.
const FRAMES: [((u32, u32), u8); 4] = [
    ((854, 480), 2),
    ((1280, 720), 3),
    ((1920, 1080), 4),
    ((1920, 1080), 2),
];
/// Flat items under the counts, bright ones among them (the digits are white).
const ITEMS: [&str; 7] = [
    "stick",
    "coal",
    "iron_ingot",
    "diamond",
    "paper",
    "snowball",
    "sugar",
];

struct Textures {
    font: AsciiFont,
    widgets: RgbaImage,
    inventory: RgbaImage,
    items: Vec<RgbaImage>,
}

fn rgba(data: &std::path::Path, rel: &str) -> RgbaImage {
    let path = data.join(rel);
    image::open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_rgba8()
}

fn textures(version: &str) -> Textures {
    let data = support::minecraft_assets().join(version);
    Textures {
        font: AsciiFont::load(&data.join("font/ascii.png")).unwrap_or_else(|e| panic!("{e}")),
        widgets: rgba(&data, "gui/widgets.png"),
        inventory: rgba(&data, "gui/container/inventory.png"),
        items: ITEMS
            .iter()
            .map(|n| rgba(&data, &format!("items/{n}.png")))
            .collect(),
    }
}

/// Draws the `w` x `h` GUI pixels at `(sx, sy)` of `tex` with their top-left at GUI pixel `at`,
/// alpha-blended, at GUI scale `s`.
fn blit(
    img: &mut RgbImage,
    tex: &RgbaImage,
    (sx, sy, w, h): (u32, u32, u32, u32),
    at: (i64, i64),
    s: u32,
) {
    for (x, y) in (0..w * s).flat_map(|x| (0..h * s).map(move |y| (x, y))) {
        let p = tex.get_pixel(sx + x / s, sy + y / s).0;
        let (wx, wy) = (
            at.0 * i64::from(s) + i64::from(x),
            at.1 * i64::from(s) + i64::from(y),
        );
        let (Ok(wx), Ok(wy)) = (u32::try_from(wx), u32::try_from(wy)) else {
            continue;
        };
        if wx >= img.width() || wy >= img.height() {
            continue;
        }
        let a = f32::from(p[3]) / 255.0;
        let q = img.get_pixel_mut(wx, wy);
        for (dst, src) in q.0.iter_mut().zip(p) {
            *dst = (f32::from(src) * a + f32::from(*dst) * (1.0 - a)).round() as u8;
        }
    }
}

/// The GUI-pixel top-left of a slot's item area.
fn slot_origin(layout: &GuiLayout, location: &str) -> (i64, i64) {
    let (cx, cy) = layout.slot_center(location).expect("a slot of the profile");
    let s = layout.scale();
    ((cx / s) as i64 - 8, (cy / s) as i64 - 8)
}

/// `(location, centre, count)` of every slot of a frame.
type Slots = Vec<(String, (f32, f32), u32)>;

/// A frame of `screen` ("hud" or "inventory") with the next counts of `counts` in its slots.
fn frame(
    tex: &Textures,
    layout: &GuiLayout,
    (w, h): (u32, u32),
    screen: &str,
    counts: &mut impl Iterator<Item = u32>,
) -> (RgbImage, Slots) {
    // Vanilla draws at whole scales.
    let s = layout.scale().round() as u32;
    // A busy world behind the GUI: every colour, bright ones included.
    let mut img = RgbImage::from_fn(w, h, |x, y| {
        let v = (x.wrapping_mul(2_654_435_761) ^ y.wrapping_mul(40_503)).wrapping_mul(97);
        Rgb([(v >> 8) as u8, (v >> 16) as u8, (v >> 24) as u8])
    });
    if screen == "hud" {
        // The 182 x 22 bar (partly transparent) starts 3 GUI px before its first slot.
        let (x, y) = slot_origin(layout, "hud.hotbar.0");
        blit(&mut img, &tex.widgets, (0, 0, 182, 22), (x - 3, y - 3), s);
    } else {
        // The world darkened behind a screen (renderBackground), then the 176 x 166 panel,
        // whose first main-row slot is at (8, 84).
        for p in img.pixels_mut() {
            p.0 = p.0.map(|c| (f32::from(c) * 0.22 + 12.0) as u8);
        }
        let (x, y) = slot_origin(layout, "inventory.main.0");
        blit(
            &mut img,
            &tex.inventory,
            (0, 0, 176, 166),
            (x - 8, y - 84),
            s,
        );
    }
    let prefix = format!("{screen}.");
    let mut slots = Vec::new();
    for (k, location) in layout
        .locations()
        .into_iter()
        .filter(|l| l.starts_with(&prefix))
        .enumerate()
    {
        let origin = slot_origin(layout, &location);
        blit(
            &mut img,
            &tex.items[k % tex.items.len()],
            (0, 0, 16, 16),
            origin,
            s,
        );
        let n = counts.next().expect("endless");
        tex.font.draw_count(&mut img, n, origin, s);
        let centre = layout.slot_center(&location).expect("slot");
        slots.push((location, centre, n));
    }
    (img, slots)
}

fn minecraft_counts() -> (GameProfile, CountStyle) {
    let profile = GameProfile::load(&support::repo(), "minecraft").expect("the Minecraft profile");
    let style = profile
        .counts
        .clone()
        .expect("[counts] in config/games/minecraft.toml");
    assert_eq!(style.glyphs.len(), 10, "the ten digits are shipped");
    (profile, style)
}

#[test]
fn counts_drawn_as_minecraft_draws_them_are_read_at_gui_scales_2_to_4() {
    let (profile, style) = minecraft_counts();
    let mut wrong = Vec::new();
    let mut read = 0;
    for version in VERSIONS {
        let tex = textures(version);
        for (window, scale) in FRAMES {
            let layout = profile
                .gui
                .layout(window.0, window.1, GuiScale::Fixed(scale));
            assert_eq!(
                layout.scale(),
                f32::from(scale),
                "{window:?} allows scale {scale}"
            );
            // 1-64 in turn: 100 slots per frame size, so every count at least once.
            let mut counts = (1..=64).cycle();
            for screen in ["hud", "inventory", "hud", "inventory"] {
                let (img, slots) = frame(&tex, &layout, window, screen, &mut counts);
                for (location, centre, n) in slots {
                    read += 1;
                    let got = style.read(&img, screen, centre, layout.scale());
                    if got != Ok(n) {
                        wrong.push(format!(
                            "{version} {window:?} scale {scale} {location}: {n} read as {got:?}"
                        ));
                    }
                }
            }
        }
    }
    assert_eq!(read, 2 * 4 * 100);
    assert!(
        wrong.is_empty(),
        "{} of {read} misread:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_gui_scale_is_read_off_the_hotbar_drawn_with_the_games_textures() {
    // The HUD as vanilla draws it (widgets.png's bar, items and counts over a busy world), at
    // every scale each window allows: the measured scale is the drawn one, whatever the rule
    // would say for the window.
    let (profile, _) = minecraft_counts();
    for version in VERSIONS {
        let tex = textures(version);
        for (window, scale) in FRAMES {
            let layout = profile
                .gui
                .layout(window.0, window.1, GuiScale::Fixed(scale));
            let mut counts = (1..=64).cycle();
            let (img, _) = frame(&tex, &layout, window, "hud", &mut counts);
            let m = vistawise::skills::gui_scale::measure(&img, &profile.gui);
            assert_eq!(
                m.map(|m| m.scale),
                Some(f32::from(scale)),
                "{version} {window:?} drawn at {scale}: {m:?}"
            );
            // A screen over the HUD (vanilla hides the HUD then): nothing to measure.
            let (img, _) = frame(&tex, &layout, window, "inventory", &mut counts);
            let m = vistawise::skills::gui_scale::measure(&img, &profile.gui);
            assert_eq!(m, None, "{version} {window:?} inventory at {scale}");
        }
    }
}

#[test]
fn counts_read_uses_the_configured_gui_scale() {
    // 1920x1080 at scale 2 (auto would be 4): `counts read` must take the scale from the config.
    let (profile, _) = minecraft_counts();
    let tex = textures("1.19.1");
    let layout = profile.gui.layout(1920, 1080, GuiScale::Fixed(2));
    let mut counts = [64, 1, 2, 9, 10, 17, 33, 58].into_iter().cycle();
    let (img, slots) = frame(&tex, &layout, (1920, 1080), "inventory", &mut counts);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("inventory.png");
    img.save(&path).expect("write the frame");
    let run = |scale: &str| {
        let o = support::binary()
            .args([
                "--game",
                "minecraft",
                "--set",
                &format!("game.gui_scale={scale}"),
            ])
            .args(["counts", "read", "--screen", "inventory"])
            .arg(&path)
            .output()
            .expect("run vistawise");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let out = run("2");
    for (location, _, n) in &slots {
        assert!(
            out.lines().any(|l| l == format!("{location}\t{n}")),
            "{location} {n}:\n{out}"
        );
    }
    // At the auto scale the slots are elsewhere: the same frame does not read right.
    let auto = run("auto");
    let right = slots
        .iter()
        .filter(|(l, _, n)| auto.lines().any(|x| x == format!("{l}\t{n}")))
        .count();
    assert!(
        right < slots.len() / 2,
        "{right} of {} right at the wrong scale:\n{auto}",
        slots.len()
    );
}

#[test]
fn the_shipped_templates_are_what_learning_from_the_font_of_either_era_prints() {
    let (_, style) = minecraft_counts();
    let shipped: Vec<String> = style
        .glyphs
        .iter()
        .map(|(d, rows)| {
            let rows: Vec<String> = rows.iter().map(|r| format!("\"{r}\"")).collect();
            format!("\"{d}\" = [{}]", rows.join(", "))
        })
        .collect();
    for version in VERSIONS {
        let font = support::minecraft_assets()
            .join(version)
            .join("font/ascii.png");
        let o = support::binary()
            .args(["--game", "minecraft", "counts", "learn", "--font"])
            .arg(&font)
            .output()
            .expect("run vistawise");
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert!(o.status.success(), "{version}: {err}");
        let printed: Vec<&str> = out.lines().skip(1).collect();
        assert_eq!(printed, shipped, "{version}: learn --font prints\n{out}");
        assert!(
            err.contains("reads 1620/1620 slots back right"),
            "{version}: {err}"
        );
    }
}

#[test]
fn a_wrong_unit_or_a_reference_scale_with_gui_units_is_refused_naming_the_field() {
    let repo = support::repo();
    let text = std::fs::read_to_string(repo.join("config/games/minecraft.toml")).expect("read");
    let dir = tempfile::tempdir().expect("temp dir");
    let load = |edited: &str| {
        let file = dir.path().join("minecraft.toml");
        std::fs::write(&file, edited).expect("write");
        GameProfile::load_from(&file, &repo.join("skills/minecraft"), "minecraft")
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let line_of = |edited: &str, start: &str| {
        edited
            .lines()
            .position(|l| l.starts_with(start))
            .map(|i| i + 1)
            .expect("line")
    };
    // At a line's start: the comments mention `unit = "gui"` too.
    let bad = text.replace("\nunit = \"gui\"", "\nunit = \"pixels\"");
    assert_ne!(
        bad, text,
        "the profile no longer says unit = \"gui\": update this test"
    );
    let err = load(&bad).expect_err("no such unit");
    let at = format!("minecraft.toml:{}", line_of(&bad, "unit ="));
    assert!(
        err.contains(&at) && err.contains("unit: \"pixels\""),
        "{err}"
    );

    let bad = text.replace(
        "\nunit = \"gui\"",
        "\nunit = \"gui\"\nreference_scale = 3.0",
    );
    let err = load(&bad).expect_err("a reference scale with GUI units");
    let at = format!("minecraft.toml:{}", line_of(&bad, "[counts]"));
    assert!(
        err.contains(&at) && err.contains("reference_scale"),
        "{err}"
    );
}
