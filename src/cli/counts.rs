//! `vistawise counts`: the stack counts drawn in inventory slots (`[counts]` of the game
//! profile). `read` reads every slot of a screenshot; `learn` takes the digit templates from the
//! running game (Minetest with the probe), which knows what it drew, or from counts drawn with the
//! game's font texture (Minecraft, which cannot run here).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use image::{Rgb, RgbImage};
use serde_json::json;
use vistawise::config::GuiScale;
use vistawise::game::GameProfile;
use vistawise::perception::AsciiFont;
use vistawise::perception::CountStyle;
use vistawise::perception::stack_count::{self, Glyph};
use vistawise::skills::GuiLayout;
use vistawise::skills::gui_scale::GuiScaleTracker;
use vistawise::testworld::Probe;
use vistawise::testworld::autolabel::{GameWindow, layout_for};

use super::AppContext;
use super::autolabel::{default_probe_dir, open_desktop_window, screenshot};
use vistawise::capture::DesktopWindow;

#[derive(Subcommand, Debug)]
pub enum CountsCommand {
    /// Read the count of every slot of one screen, in a screenshot of the game window or (no
    /// IMAGE) in the game window itself.
    Read {
        /// A screenshot of the game window (its size is the window's); default: capture the
        /// window titled `game.window_title`.
        image: Option<PathBuf>,
        /// Also save the captured window here (PNG).
        #[arg(long, value_name = "FILE")]
        save: Option<PathBuf>,
        /// The screen whose slots to read (`hud`, `inventory`, ...).
        #[arg(long, default_value = "hud")]
        screen: String,
    },
    /// Learn the digit templates from the running game: fills the inventory with known stacks
    /// through the probe, reads the glyphs it draws, and prints `[counts.glyphs]` for the game
    /// profile (paste it over the old one). Needs `[counts]` area and thresholds in the profile.
    /// With --font, from counts drawn with the game's font texture instead (no game needed).
    Learn {
        /// The probe folder of the running game [default: as `annotate --auto`].
        #[arg(long, value_name = "DIR", conflicts_with_all = ["font", "mcweb"])]
        probe: Option<PathBuf>,
        /// The command port (`HOST:PORT`) of the Minecraft client's test server (tests/mcweb):
        /// the stacks are put in the inventory through it, and the digits learnt from the
        /// client's window.
        #[arg(long, value_name = "HOST:PORT", conflicts_with = "font")]
        mcweb: Option<String>,
        /// Minecraft's font texture (`font/ascii.png` of the npm package minecraft-assets): the
        /// counts are drawn with it as the game draws them, in every screen of `[counts] area`
        /// at GUI scales 1-4, and learnt from those frames.
        #[arg(long, value_name = "PNG")]
        font: Option<PathBuf>,
        /// Wait after changing the inventory before the screenshot.
        #[arg(long, default_value_t = 800)]
        settle_ms: u64,
    },
}

/// Stack sizes that show every digit first and second (and single digits).
const ROUNDS: [[u32; 8]; 3] = [
    [10, 21, 32, 43, 54, 65, 76, 87],
    [98, 9, 19, 50, 61, 72, 83, 94],
    [2, 3, 4, 5, 6, 7, 8, 1],
];
/// Stackable items of minetest_game, so the digits are learnt over different icons.
const ITEMS: [&str; 8] = [
    "default:dirt",
    "default:cobble",
    "default:wood",
    "default:tree",
    "default:stick",
    "default:coal_lump",
    "default:sand",
    "default:gravel",
];

fn profile(ctx: &AppContext) -> Result<(GameProfile, CountStyle)> {
    let game = &ctx.config().game.profile;
    let profile = GameProfile::load(ctx.root(), game)
        .with_context(|| format!("cannot load game profile \"{game}\""))?;
    let Some(style) = profile.counts.clone() else {
        bail!(
            "{}: no [counts] section: this profile does not say how stack counts are drawn",
            profile.file.path.display()
        );
    };
    Ok((profile, style))
}

/// `(location, centre)` of every slot of `screen`.
fn slots_of(layout: &GuiLayout, screen: &str) -> Vec<(String, (f32, f32))> {
    layout
        .slots(Some(screen))
        .into_iter()
        .map(|s| (s.location, s.centre))
        .collect()
}

pub fn run(ctx: &AppContext, cmd: &CountsCommand) -> Result<ExitCode> {
    match cmd {
        CountsCommand::Read {
            image,
            save,
            screen,
        } => {
            let (profile, style) = profile(ctx)?;
            let img = screenshot(ctx, image.as_deref(), save.as_deref())?;
            // At the GUI scale the screenshot shows, as the agent reads it (the profile's rule
            // where it shows none).
            let reading =
                GuiScaleTracker::default().read(&img, &profile.gui, ctx.config().game.gui_scale);
            eprintln!("GUI scale {} ({})", reading.scale, reading.source);
            let layout = profile
                .gui
                .layout_at(img.width(), img.height(), reading.scale);
            let slots = slots_of(&layout, screen);
            if slots.is_empty() {
                bail!("the profile has no slots on screen \"{screen}\"");
            }
            for (location, c) in slots {
                match style.read(&img, screen, c, layout.screen_scale(screen)) {
                    Ok(n) => println!("{location}\t{n}"),
                    Err(e) => println!("{location}\t? ({e})"),
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        CountsCommand::Learn {
            probe,
            mcweb,
            font,
            settle_ms,
        } => {
            let (profile, style) = profile(ctx)?;
            let shots = match (font, mcweb) {
                (Some(path), _) => font_shots(&profile, &style, path)?,
                (None, Some(address)) => mcweb_shots(ctx, profile, address, *settle_ms)?,
                (None, None) => probe_shots(ctx, profile, probe.clone(), *settle_ms)?,
            };
            learn(style, &shots)
        }
    }
}

/// One screenshot's slots with the counts the game holds there.
struct Shot {
    image: RgbImage,
    screen: String,
    /// The scale its screen is drawn at.
    scale: f32,
    truth: Vec<((f32, f32), u32)>,
}

/// The window the font is drawn in: it allows GUI scales 1-4. With `unit = "gui"` a glyph is the
/// same cells at every scale; drawing all of them checks that (the read-back covers each).
const FONT_WINDOW: (u32, u32) = (1920, 1080);
const FONT_SCALES: [u8; 4] = [1, 2, 3, 4];
/// An empty slot's colour in Minecraft's container textures.
const SLOT_GREY: [u8; 3] = [139, 139, 139];

/// Frames of every screen of `[counts] area`, at every scale of FONT_SCALES, with the ROUNDS'
/// counts drawn by `font` in every slot as the game draws them.
fn font_shots(profile: &GameProfile, style: &CountStyle, path: &Path) -> Result<Vec<Shot>> {
    let font = AsciiFont::load(path)?;
    let (w, h) = FONT_WINDOW;
    let half = (profile.gui.slot_size() / 2) as f32;
    let mut shots = Vec::new();
    for fixed in FONT_SCALES {
        let layout = profile.gui.layout(w, h, GuiScale::Fixed(fixed));
        // Vanilla's rule gives whole scales.
        let scale = layout.scale().round() as u32;
        for screen in style.area.keys() {
            let slots = slots_of(&layout, screen);
            for round in ROUNDS {
                let mut image = RgbImage::from_pixel(w, h, Rgb(SLOT_GREY));
                let mut truth = Vec::new();
                for (k, (_, c)) in slots.iter().enumerate() {
                    let n = round[(k + k / 8) % 8];
                    // The item area's top-left in GUI pixels (centres are whole GUI pixels).
                    let s = scale as f32;
                    let slot = ((c.0 / s - half) as i64, (c.1 / s - half) as i64);
                    font.draw_count(&mut image, n, slot, scale);
                    truth.push((*c, n));
                }
                shots.push(Shot {
                    image,
                    screen: screen.clone(),
                    scale: scale as f32,
                    truth,
                });
            }
        }
    }
    if shots.iter().all(|s| s.truth.is_empty()) {
        bail!("no screen of [counts] area has slots in the profile's [gui]");
    }
    Ok(shots)
}

/// Screenshots of the running game with the ROUNDS' stacks, put in the inventory through the
/// probe.
fn probe_shots(
    ctx: &AppContext,
    profile: GameProfile,
    probe: Option<PathBuf>,
    settle_ms: u64,
) -> Result<Vec<Shot>> {
    let gui = profile.gui.clone();
    let mut probe = Probe::open(&probe.unwrap_or_else(default_probe_dir))?;
    let (mut window, rect) = open_desktop_window(ctx, &profile)?;
    let layout = layout_for(&gui, rect.w, rect.h);
    let settle = Duration::from_millis(settle_ms);
    let mut shots = Vec::new();
    for round in ROUNDS {
        // The hotbar row holds the round's counts; the main rows repeat them shifted.
        let main: Vec<String> = (0..32)
            .map(|i| format!("{} {}", ITEMS[(i + i / 8) % 8], round[(i + i / 8) % 8]))
            .collect();
        probe
            .send(json!({"op": "clear_inv"}))
            .context("probe: clear_inv")?;
        probe
            .send(json!({"op": "set_list", "list": "main", "items": main}))
            .context("probe: set_list")?;
        let count_of = |location: &str| -> Option<u32> {
            let index: usize = location.rsplit('.').next()?.parse().ok()?;
            let offset = if location.contains(".main.") { 8 } else { 0 };
            main.get(index + offset)?.split(' ').nth(1)?.parse().ok()
        };
        shots.extend(hud_and_inventory(&mut window, &layout, settle, count_of)?);
    }
    Ok(shots)
}

/// The HUD, then the open inventory, each with the counts `count_of` says each bag slot (hotbar
/// and main rows, by location) holds.
fn hud_and_inventory(
    window: &mut DesktopWindow,
    layout: &GuiLayout,
    settle: Duration,
    count_of: impl Fn(&str) -> Option<u32>,
) -> Result<Vec<Shot>> {
    let mut shots = Vec::new();
    for (screen, open) in [("hud", false), ("inventory", true)] {
        if open {
            window.tap("inventory")?;
        }
        std::thread::sleep(settle);
        let image = window.capture()?;
        if open {
            window.tap("close_screen")?;
            std::thread::sleep(settle);
        }
        let truth = slots_of(layout, screen)
            .into_iter()
            .filter(|(l, _)| l.contains(".hotbar.") || l.contains(".main."))
            .filter_map(|(l, c)| count_of(&l).map(|n| (c, n)))
            .collect();
        shots.push(Shot {
            image,
            screen: screen.to_string(),
            scale: layout.screen_scale(screen),
            truth,
        });
    }
    Ok(shots)
}

/// Stackable items of Minecraft 1.14, so the digits are learnt over different icons.
const MC_ITEMS: [&str; 9] = [
    "dirt",
    "cobblestone",
    "oak_planks",
    "oak_log",
    "stick",
    "coal",
    "sand",
    "gravel",
    "iron_ingot",
];

/// Screenshots of the Minecraft client (tests/mcweb) with the ROUNDS' stacks, put in the
/// inventory through its test server: the hotbar (window slots 36-44) and the main rows (9-35).
fn mcweb_shots(
    ctx: &AppContext,
    profile: GameProfile,
    address: &str,
    settle_ms: u64,
) -> Result<Vec<Shot>> {
    let gui = profile.gui.clone();
    let server = vistawise::testworld::McwebServer::connect(address)?;
    let (mut window, rect) = open_desktop_window(ctx, &profile)?;
    let layout = gui.layout(rect.w, rect.h, ctx.config().game.gui_scale);
    let settle = Duration::from_millis(settle_ms);
    let mut shots = Vec::new();
    for round in ROUNDS {
        server.clear()?;
        // Slot i of the 36 (hotbar 0-8, then main 0-26) holds round[(i + i / 9) % 8].
        let count_at = |i: usize| round[(i + i / 9) % round.len()];
        for i in 0..36 {
            let slot = if i < 9 { 36 + i } else { i };
            server.give(MC_ITEMS[i % MC_ITEMS.len()], count_at(i), slot as u32)?;
        }
        let count_of = |location: &str| -> Option<u32> {
            let index: usize = location.rsplit('.').next()?.parse().ok()?;
            let i = if location.contains(".main.") {
                9 + index
            } else {
                index
            };
            (i < 36).then(|| count_at(i))
        };
        shots.extend(hud_and_inventory(&mut window, &layout, settle, count_of)?);
    }
    server.clear()?;
    Ok(shots)
}

/// Learns the templates from the shots' glyphs and prints them as `[counts.glyphs]`.
fn learn(style: CountStyle, shots: &[Shot]) -> Result<ExitCode> {
    let mut examples: Vec<(char, Glyph)> = Vec::new();
    let mut skipped = 0;
    for shot in shots {
        for (c, n) in &shot.truth {
            let text = if *n == style.undrawn {
                String::new()
            } else {
                n.to_string()
            };
            let glyphs = style.glyphs_at(&shot.image, &shot.screen, *c, shot.scale)?;
            if glyphs.len() != text.len() {
                skipped += 1;
                continue;
            }
            examples.extend(text.chars().zip(glyphs));
        }
    }
    let learnt = CountStyle {
        glyphs: stack_count::learn(&examples),
        ..style
    };
    let missing: Vec<char> = ('0'..='9')
        .filter(|d| !learnt.glyphs.contains_key(&d.to_string()))
        .collect();
    // How well the templates read back what they were learnt from.
    let (mut right, mut total) = (0, 0);
    for shot in shots {
        for (c, n) in &shot.truth {
            total += 1;
            let read = learnt.read(&shot.image, &shot.screen, *c, shot.scale);
            right += usize::from(read.ok() == Some(*n));
        }
    }
    println!("[counts.glyphs]");
    for (digit, rows) in &learnt.glyphs {
        let rows: Vec<String> = rows.iter().map(|r| format!("\"{r}\"")).collect();
        println!("\"{digit}\" = [{}]", rows.join(", "));
    }
    eprintln!(
        "learnt from {} glyphs ({skipped} slots skipped: glyph count did not match); reads {right}/{total} slots back right",
        examples.len()
    );
    if !missing.is_empty() {
        bail!("no examples of the digits {missing:?}: is the [counts] area right?");
    }
    Ok(ExitCode::SUCCESS)
}
