//! `vistawise annotate --auto GAME -o DATASET`: frames labelled by the running game itself (see
//! `vistawise::testworld::autolabel`). The game must be running with its ground truth: Minetest
//! with the probe mod (`tests/minetest/gameenv.sh start`), or the Minecraft client with its test
//! server (`tests/mcweb/mcweb.sh start`, `--auto minecraft-web`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use vistawise::capture::DesktopWindow;
use vistawise::capture::windows;
use vistawise::dataset::writer::{ImageData, YoloWriter, write_atomic};
use vistawise::game::GameProfile;
use vistawise::skills::WindowRect;
use vistawise::testworld::McwebServer;
use vistawise::testworld::Probe;
use vistawise::testworld::autolabel::{
    self, AutoLabelConfig, AutoLabelError, LabelGame, LabeledFrame, PitConfig, label_boxes,
    label_frame,
};

use super::AppContext;

#[derive(Args, Debug, Clone)]
pub struct AutoArgs {
    /// How many labelled frames to write (frames already in the dataset count).
    #[arg(long, default_value_t = 200)]
    pub frames: u64,
    /// Seed of every random choice (views, inventories); the same seed on the same world gives
    /// the same views.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The probe folder of the running game [default: $GAME_DIR/world/agent_probe, GAME_DIR
    /// defaulting to /tmp/vistawise-minetest as in tests/minetest/gameenv.sh].
    #[arg(long, value_name = "DIR", conflicts_with = "mcweb")]
    pub probe: Option<PathBuf>,
    /// The command port (`HOST:PORT`) of the Minecraft client's test server: label the client's
    /// frames [default for `--auto minecraft-web`: 127.0.0.1 and the port in
    /// $GAME_DIR/cmd.port, GAME_DIR defaulting to /tmp/vistawise-mcweb as in tests/mcweb/mcweb.sh].
    #[arg(long, value_name = "HOST:PORT")]
    pub mcweb: Option<String>,
    /// Label in the classes of this `[autolabel.label_sets]` entry of the game profile instead
    /// of its own (`minecraft`: the Minecraft detector's classes, for frames drawn with the
    /// Minecraft texture pack, tools/detector/minetest_texture_pack.py).
    #[arg(long, value_name = "NAME")]
    pub label_set: Option<String>,
}

/// The game's `[autolabel]` rules (in `--label-set`'s classes when given) and its profile.
fn load_rules(root: &Path, game: &str, args: &AutoArgs) -> Result<(AutoLabelConfig, GameProfile)> {
    let profile = GameProfile::load(root, game)
        .with_context(|| format!("cannot load game profile \"{game}\""))?;
    let config = AutoLabelConfig::from_profile(&profile.file, args.label_set.as_deref())
        .with_context(|| format!("cannot auto-label game \"{game}\""))?;
    Ok((config, profile))
}

/// Where a frame's record (`FrameRecord`) is kept.
fn record_path(out: &Path, name: &str) -> PathBuf {
    out.join("records").join(format!("{name}.json"))
}

/// `--auto GAME --relabel` (no game needed): every frame with a record (`records/`, what the game
/// said when it was taken) gets its label file written again under the profile's current
/// `[autolabel]` rules (and `--label-set`); frames labelled before records were kept are left
/// as they are, and counted.
fn relabel(root: &Path, out: &Path, game: &str, args: &AutoArgs) -> Result<ExitCode> {
    let (config, profile) = load_rules(root, game, args)?;
    let images = out.join("images");
    let mut names: Vec<String> = std::fs::read_dir(&images)
        .with_context(|| format!("cannot read {}", images.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let p = e.path();
            (p.extension().is_some_and(|x| x == "jpg"))
                .then(|| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .flatten()
        })
        .collect();
    names.sort();
    let writer = YoloWriter::create_with_header(
        out,
        &config.classes,
        "Written by vistawise annotate --auto: labelled by the game itself.",
    )?;
    let bar = super::progress_bar(
        names.len() as u64,
        "{bar:30} {pos}/{len} frames  {elapsed} (eta {eta})",
    );
    let (mut relabelled, mut without, mut boxes) = (0u64, 0u64, 0usize);
    for name in &names {
        bar.inc(1);
        let path = record_path(out, name);
        if !path.is_file() {
            without += 1;
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let record: autolabel::FrameRecord = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a frame record", path.display()))?;
        let image_path = images.join(format!("{name}.jpg"));
        let image = image::open(&image_path)
            .with_context(|| format!("cannot read {}", image_path.display()))?
            .to_rgb8();
        let (w, h) = image.dimensions();
        let layout = autolabel::layout_for(&profile.gui, w, h);
        let frame_boxes = autolabel::record_boxes(&config, &layout, &record, &image)
            .with_context(|| format!("{}", path.display()))?;
        writer.write_labels(name, &label_boxes(&config, &frame_boxes, w, h))?;
        boxes += frame_boxes.len();
        relabelled += 1;
    }
    bar.finish();
    eprintln!(
        "{relabelled} frames relabelled ({boxes} boxes) -> {}{}",
        out.display(),
        if without > 0 {
            format!(
                "; {without} frames have no record (labelled before records were kept) and were left as they are"
            )
        } else {
            String::new()
        }
    );
    if relabelled == 0 {
        bail!("no frame of {} has a record to relabel from", out.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The probe folder gameenv.sh makes.
pub fn default_probe_dir() -> PathBuf {
    let game_dir = std::env::var_os("GAME_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/vistawise-minetest"));
    game_dir.join("world/agent_probe")
}

/// A screenshot of the game window: read from `image`, or (none) captured from the window
/// titled `game.window_title`; also written to `save` when given.
pub(super) fn screenshot(
    ctx: &AppContext,
    image: Option<&std::path::Path>,
    save: Option<&std::path::Path>,
) -> Result<image::RgbImage> {
    let img = match image {
        Some(path) => image::open(path)
            .with_context(|| format!("cannot read image {}", path.display()))?
            .to_rgb8(),
        None => {
            let found = find_game_window(ctx)?;
            vistawise::capture::frame::capture(found.id)
                .context("cannot capture the game window")?
                .0
        }
    };
    if let Some(path) = save {
        img.save(path)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(img)
}

/// The running game's window, found by `game.window_title`.
pub(super) fn find_game_window(ctx: &AppContext) -> Result<windows::WindowInfo> {
    let all =
        windows::list().context("cannot list windows (is DISPLAY set to the game's display?)")?;
    windows::find_by_title(&all, &ctx.config().game.window_title)
        .context("the game window (set game.window_title, or use --game)")
}

/// The running game's window (found by `game.window_title`) and its rectangle.
pub(super) fn open_desktop_window(
    ctx: &AppContext,
    profile: &GameProfile,
) -> Result<(DesktopWindow, WindowRect)> {
    let found = find_game_window(ctx)?;
    DesktopWindow::open(
        &found,
        ctx.config().game.capture,
        profile.keys.clone(),
        &profile.camera,
    )
    .context("cannot open the game window")
}

/// The command port of the Minecraft client's test server that tests/mcweb/mcweb.sh started.
fn default_mcweb_address() -> Result<String> {
    let game_dir = std::env::var_os("GAME_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/vistawise-mcweb"));
    let path = game_dir.join("cmd.port");
    let port = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "cannot read {} (start the client with tests/mcweb/mcweb.sh start, or give --mcweb HOST:PORT)",
            path.display()
        )
    })?;
    Ok(format!("127.0.0.1:{}", port.trim()))
}

/// The running game's ground truth: the Minecraft client's test server for `minecraft-web` (or
/// with `--mcweb`), else Minetest's probe mod.
fn open_game(game: &str, args: &AutoArgs) -> Result<Box<dyn LabelGame>> {
    if args.mcweb.is_some() || game == "minecraft-web" {
        let address = match &args.mcweb {
            Some(a) => a.clone(),
            None => default_mcweb_address()?,
        };
        let server = McwebServer::connect(&address).with_context(|| {
            format!("cannot reach the Minecraft client's test server at {address}")
        })?;
        return Ok(Box::new(server));
    }
    let probe_dir = args.probe.clone().unwrap_or_else(default_probe_dir);
    Ok(Box::new(Probe::open(&probe_dir)?))
}

/// The place views are taken around: where the player stood when the dataset was started,
/// kept in DATASET/autolabel.json so a resumed run takes the same views.
fn labelling_center(out: &Path, game: &mut dyn LabelGame) -> Result<[f64; 3]> {
    let path = out.join("autolabel.json");
    if path.is_file() {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let v: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
        let c = v
            .get("center")
            .and_then(|c| serde_json::from_value::<[f64; 3]>(c.clone()).ok())
            .with_context(|| format!("{}: no \"center\": [x, y, z]", path.display()))?;
        return Ok(c);
    }
    let c = game.state()?.pose.feet;
    let text = serde_json::to_string_pretty(&serde_json::json!({ "center": c }))?;
    write_atomic(&path, text.as_bytes())?;
    Ok(c)
}

pub fn run(
    ctx: &AppContext,
    game: &str,
    out: &Path,
    args: &AutoArgs,
    relabel_only: bool,
) -> Result<ExitCode> {
    if relabel_only {
        return relabel(ctx.root(), out, game, args);
    }
    let (config, profile) = load_rules(ctx.root(), game, args)?;
    let mut game_truth = open_game(game, args)?;
    let gui = profile.gui.clone();
    let (mut window, rect) = open_desktop_window(ctx, &profile)?;
    let layout = autolabel::layout_for(&gui, rect.w, rect.h);
    let writer = YoloWriter::create_with_header(
        out,
        &config.classes,
        "Written by vistawise annotate --auto: labelled by the game itself.",
    )?;
    let center = labelling_center(out, game_truth.as_mut())?;
    if let Some(pits) = &config.pits {
        dig_pits(pits, game_truth.as_mut(), center)?;
    }
    let (mut written, mut skipped, mut boxes, mut already) = (0u64, 0u64, 0usize, 0u64);

    let done = |i: u64| {
        out.join("labels")
            .join(format!("{game}_{:06}.txt", i))
            .is_file()
    };
    let bar = super::progress_bar(
        args.frames,
        "{bar:30} {pos}/{len} frames  {elapsed} (eta {eta})  {msg}",
    );
    let start = Instant::now();
    let mut negatives = 0u64;
    for i in 0..args.frames {
        // Resumable: a frame whose label file exists was finished (labels are written last).
        if done(i) {
            already += 1;
            bar.inc(1);
            continue;
        }
        let taken = label_frame(
            &config,
            &layout,
            game_truth.as_mut(),
            &mut window,
            center,
            args.seed,
            i,
        );
        let Some(frame) = kept(taken, i)? else {
            skipped += 1;
            bar.inc(1);
            continue;
        };
        write_frame(out, &writer, &config, &format!("{game}_{i:06}"), &frame)?;
        written += 1;
        negatives += u64::from(frame.record.hud_negative);
        boxes += frame.boxes.len();
        bar.set_message(format!("{boxes} boxes, {skipped} dropped"));
        bar.inc(1);
    }
    bar.finish();
    eprintln!(
        "{written} frames labelled ({boxes} boxes, {skipped} dropped, {negatives} HUD negatives) in {:.0} s -> {}",
        start.elapsed().as_secs_f64(),
        out.display()
    );
    if written == 0 && already == 0 && skipped > 0 {
        bail!("every frame was dropped: is the player stuck, or the world empty of {game} views?");
    }
    Ok(ExitCode::SUCCESS)
}

/// Digs the profile's open pits around `center`. Digging again on a resumed run changes
/// nothing: the boxes depend on the centre only.
fn dig_pits(pits: &PitConfig, game: &mut dyn LabelGame, center: [f64; 3]) -> Result<()> {
    let mut cleared = 0u64;
    for [lo, hi] in pits.boxes(center) {
        cleared += game
            .excavate(lo, hi)
            .with_context(|| format!("cannot dig the pit {lo:?}..{hi:?}"))?;
    }
    tracing::info!("dug {} pits ({cleared} nodes cleared)", pits.count);
    Ok(())
}

/// Frame `i` as taken, or `None` where it is dropped (the player moved while it was taken, or
/// no view was found this time: the next frame draws another); any other failure ends the run.
fn kept(taken: Result<LabeledFrame, AutoLabelError>, i: u64) -> Result<Option<LabeledFrame>> {
    match taken {
        Ok(f) => Ok(Some(f)),
        Err(AutoLabelError::Moved(d)) => {
            tracing::info!("frame {i}: the player moved {d:.2} nodes while it was taken; dropped");
            Ok(None)
        }
        Err(e @ AutoLabelError::NoView(_)) => {
            tracing::warn!("frame {i}: {e}");
            Ok(None)
        }
        Err(e) => Err(e).with_context(|| format!("frame {i}")),
    }
}

/// One labelled frame into the dataset: the record and the image first, the label last (a
/// label file marks a finished frame).
fn write_frame(
    out: &Path,
    writer: &YoloWriter,
    config: &AutoLabelConfig,
    name: &str,
    frame: &LabeledFrame,
) -> Result<()> {
    let record = serde_json::to_vec(&frame.record)?;
    write_atomic(&record_path(out, name), &record)?;
    writer.add(
        name,
        &ImageData::Encoded {
            bytes: &frame.jpeg,
            ext: "jpg",
        },
        &label_boxes(config, &frame.boxes, frame.width, frame.height),
    )?;
    Ok(())
}
