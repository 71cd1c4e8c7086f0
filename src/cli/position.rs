//! `vistawise position`: the player's position as the game's debug screen prints it
//! (`[position]` of the game profile). `read` reads it from a screenshot or the live window;
//! `learn` takes the glyph templates from the Minecraft client, whose test server says where the
//! player stands.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use image::RgbImage;
use serde_json::json;
use vistawise::game::GameProfile;
use vistawise::perception::PositionStyle;
use vistawise::perception::debug_position;
use vistawise::perception::stack_count::Glyph;
use vistawise::skills::gui_scale::GuiScaleTracker;
use vistawise::testworld::autolabel::GameWindow;

use super::AppContext;
use super::autolabel::{open_desktop_window, screenshot};

#[derive(Subcommand, Debug)]
pub enum PositionCommand {
    /// Read the position the debug screen prints, in a screenshot of the game window or (no
    /// IMAGE) in the game window itself (the debug screen must be shown: F3).
    Read {
        /// A screenshot of the game window; default: capture the window titled
        /// `game.window_title`.
        image: Option<PathBuf>,
        /// Also save the captured window here (PNG).
        #[arg(long, value_name = "FILE")]
        save: Option<PathBuf>,
    },
    /// Learn the glyph templates from the running Minecraft client: stands the player at known
    /// places through its test server, shows the debug screen (the profile's `debug_screen`
    /// key), reads the glyphs of the position's line and prints `[position.glyphs]` for the
    /// game profile (paste it over the old one). Needs `[position]` line and thresholds.
    Learn {
        /// The command port (`HOST:PORT`) of the Minecraft client's test server (tests/mcweb).
        #[arg(long, value_name = "HOST:PORT")]
        mcweb: String,
        /// Wait after a teleport (the player falls to the ground) before reading the place.
        #[arg(long, default_value_t = 3000)]
        settle_ms: u64,
        /// Also save each screenshot into this folder (PNG), to see what was learnt from.
        #[arg(long, value_name = "DIR")]
        save: Option<PathBuf>,
    },
}

/// Places (x, z) off the spawn whose printed coordinates hold every digit; y is wherever the
/// ground is there.
const PLACES: [(f64, f64); 5] = [
    (12.345, 67.891),
    (-45.678, 90.123),
    (3.456, -78.912),
    (-60.789, -14.567),
    (29.012, 8.346),
];

fn profile(ctx: &AppContext) -> Result<(GameProfile, PositionStyle)> {
    let game = &ctx.config().game.profile;
    let profile = GameProfile::load(ctx.root(), game)
        .with_context(|| format!("cannot load game profile \"{game}\""))?;
    let Some(style) = profile.position.clone() else {
        bail!(
            "{}: no [position] section: this profile does not say where the debug screen prints the position",
            profile.file.path.display()
        );
    };
    Ok((profile, style))
}

/// The HUD scale a frame is drawn at, as the agent reads it.
fn hud_scale(ctx: &AppContext, profile: &GameProfile, img: &RgbImage) -> f32 {
    GuiScaleTracker::default()
        .read(img, &profile.gui, ctx.config().game.gui_scale)
        .scale
}

pub fn run(ctx: &AppContext, cmd: &PositionCommand) -> Result<ExitCode> {
    match cmd {
        PositionCommand::Read { image, save } => {
            let (profile, style) = profile(ctx)?;
            let img = screenshot(ctx, image.as_deref(), save.as_deref())?;
            let scale = hud_scale(ctx, &profile, &img);
            match style.read(&img, scale) {
                Ok([x, y, z]) => {
                    println!("{x:.3} {y:.3} {z:.3}");
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    eprintln!("no position read: {e}");
                    Ok(ExitCode::FAILURE)
                }
            }
        }
        PositionCommand::Learn {
            mcweb,
            settle_ms,
            save,
        } => learn(ctx, mcweb, *settle_ms, save.as_ref()),
    }
}

/// One screenshot with the debug screen shown and the text its position line prints.
struct Shot {
    image: RgbImage,
    scale: f32,
    text: String,
}

/// Blocks a player does not stand on.
const PASSABLE: [&str; 10] = [
    "air",
    "cave_air",
    "grass",
    "tall_grass",
    "fern",
    "large_fern",
    "dandelion",
    "poppy",
    "dead_bush",
    "water",
];

/// The y a player stands at on the highest block under `from` at (x, z).
fn ground(server: &vistawise::testworld::McwebServer, x: f64, z: f64, from: f64) -> Result<f64> {
    let mut y = from.floor();
    while y > 0.0 {
        let block = server.command(json!({"cmd": "getblock", "x": x, "y": y, "z": z}))?;
        let name = block["name"].as_str().unwrap_or("air");
        if !PASSABLE.contains(&name) {
            return Ok(y + 1.0);
        }
        y -= 1.0;
    }
    bail!("no ground under ({x}, {z})")
}

/// The player's place once two reads of the server 250 ms apart agree (a player still falling
/// after a teleport prints another place than the server last had), at most 10 s.
fn still_position(server: &vistawise::testworld::McwebServer) -> Result<[f64; 3]> {
    let read = || -> Result<[f64; 3]> {
        let p = server
            .player()?
            .pos
            .context("the test server gives no position for the player")?;
        Ok([p.x, p.y, p.z])
    };
    let mut last = read()?;
    for _ in 0..40 {
        std::thread::sleep(Duration::from_millis(250));
        let now = read()?;
        if now == last {
            return Ok(now);
        }
        last = now;
    }
    bail!("the player did not stand still for 10 s after a teleport")
}

fn learn(
    ctx: &AppContext,
    address: &str,
    settle_ms: u64,
    save: Option<&PathBuf>,
) -> Result<ExitCode> {
    let (profile, style) = profile(ctx)?;
    if profile.keys.resolve("debug_screen").is_err() {
        bail!(
            "{}: [keys] has no debug_screen (the key that shows the debug screen, F3)",
            profile.file.path.display()
        );
    }
    let server = vistawise::testworld::McwebServer::connect(address)?;
    let (mut window, _) = open_desktop_window(ctx, &profile)?;
    let start = server
        .player()?
        .pos
        .context("the test server gives no position for the player")?;
    if let Some(dir) = save {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let settle = Duration::from_millis(settle_ms);
    let mut shots = Vec::new();
    for (i, (dx, dz)) in PLACES.iter().enumerate() {
        // Onto the ground there: a player put in the air falls for a while (its client keeps
        // printing the place it was put at until the ground under it is loaded).
        let (x, z) = (start.x.trunc() + dx, start.z.trunc() + dz);
        let y = ground(&server, x, z, start.y + 40.0)?;
        server.command(json!({"cmd": "tp", "x": x, "y": y, "z": z}))?;
        std::thread::sleep(settle);
        let pos = still_position(&server)?;
        window.tap("debug_screen")?;
        std::thread::sleep(Duration::from_millis(500));
        let image = window.capture()?;
        window.tap("debug_screen")?;
        // The line printed what the player's place was while the frame was taken only if the
        // player stood still through it.
        if still_position(&server)? != pos {
            eprintln!("skipped place {i}: the player moved while the frame was taken");
            continue;
        }
        if let Some(dir) = save {
            let path = dir.join(format!("position-{i}.png"));
            image
                .save(&path)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        let scale = hud_scale(ctx, &profile, &image);
        shots.push(Shot {
            image,
            scale,
            text: debug_position::line_text(pos),
        });
    }
    server.command(json!({"cmd": "tp", "x": start.x, "y": start.y, "z": start.z}))?;
    let mut examples: Vec<(char, Glyph)> = Vec::new();
    let mut skipped = 0;
    for shot in &shots {
        let read = style.template_glyphs(&shot.image, shot.scale);
        let chars: Vec<char> = debug_position::template_chars(&shot.text).collect();
        if read.len() != chars.len() {
            eprintln!(
                "skipped \"{}\": {} glyphs read by template, {} expected",
                shot.text,
                read.len(),
                chars.len()
            );
            skipped += 1;
            continue;
        }
        examples.extend(chars.into_iter().zip(read));
    }
    let learnt = PositionStyle {
        glyphs: debug_position::learn(&examples),
        ..style
    };
    let right = shots
        .iter()
        .filter(|s| learnt.read(&s.image, s.scale).ok() == debug_position::parse_line(&s.text).ok())
        .count();
    println!("[position.glyphs]");
    for (c, rows) in &learnt.glyphs {
        let rows: Vec<String> = rows.iter().map(|r| format!("\"{r}\"")).collect();
        println!("\"{c}\" = [{}]", rows.join(", "));
    }
    eprintln!(
        "learnt from {} glyphs of {} lines ({skipped} skipped); reads {right}/{} lines back right",
        examples.len(),
        shots.len(),
        shots.len()
    );
    let missing: Vec<char> = "0123456789/XYZ:"
        .chars()
        .filter(|c| !learnt.glyphs.contains_key(&c.to_string()))
        .collect();
    if !missing.is_empty() {
        bail!(
            "no examples of {missing:?}: is the [position] line right (--save shows the frames)?"
        );
    }
    Ok(ExitCode::SUCCESS)
}
