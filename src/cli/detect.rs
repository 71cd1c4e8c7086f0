//! `vistawise detect IMAGE|DIR`: run the detector and print or draw what it finds.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::ProgressBar;
use serde::Serialize;
use vistawise::game::GameProfile;
use vistawise::perception::{Detection, Perception, SplitContext, StageTimes, detections, overlay};
use vistawise::skills::gui_scale::GuiScaleTracker;

use super::AppContext;
use super::detector_flags::DetectorFlags;

#[derive(Args)]
pub struct DetectArgs {
    /// An image file, or a folder of .png/.jpg images.
    pub input: PathBuf,
    /// Print one JSON object per image instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write the image with labelled boxes here (a folder when INPUT is a folder).
    #[arg(long, value_name = "OUT")]
    pub overlay: Option<PathBuf>,
    #[command(flatten)]
    pub detector: DetectorFlags,
}

#[derive(Serialize)]
struct ImageReport<'a> {
    image: &'a Path,
    width: u32,
    height: u32,
    /// The model input this frame was letterboxed into, `[w, h]` (it varies with the frame's
    /// shape for a dynamic-size model).
    input: [u32; 2],
    detections: &'a [Detection],
    perception: &'a Perception,
    times_ms: TimesMs,
}

#[derive(Serialize)]
struct TimesMs {
    preprocess: f64,
    inference: f64,
    postprocess: f64,
}

impl From<StageTimes> for TimesMs {
    fn from(t: StageTimes) -> Self {
        let ms = |d: std::time::Duration| (d.as_secs_f64() * 1e5).round() / 100.0;
        TimesMs {
            preprocess: ms(t.preprocess),
            inference: ms(t.inference),
            postprocess: ms(t.postprocess),
        }
    }
}

pub fn run(ctx: &AppContext, args: &DetectArgs) -> Result<ExitCode> {
    let cfg = &ctx.config().detector;
    let images = collect_images(&args.input)?;
    let is_dir = args.input.is_dir();
    if let (Some(out), true) = (&args.overlay, is_dir) {
        std::fs::create_dir_all(out)
            .with_context(|| format!("cannot create overlay folder {}", out.display()))?;
    }

    let mut detector = ctx.setup().detector()?;
    let opts = cfg.detect_options();
    // With detector.gui_input_px the input depends on the GUI scale each image is drawn at, as
    // in play: the profile says how to read it.
    let gui = if cfg.gui_input_px > 0.0 {
        let game = &ctx.config().game;
        let profile = GameProfile::load(ctx.root(), &game.profile)
            .with_context(|| format!("cannot load game profile \"{}\"", game.profile))?;
        Some((profile.gui, game.gui_scale))
    } else {
        None
    };

    let progress = if is_dir {
        super::progress_bar(
            images.len() as u64,
            "{bar:40} {pos}/{len} images  {elapsed} (eta {eta})",
        )
    } else {
        ProgressBar::hidden()
    };

    for path in &images {
        let frame = image::open(path)
            .with_context(|| format!("cannot read image {}", path.display()))?
            .to_rgb8();
        let cap = gui.as_ref().and_then(|(geometry, option)| {
            let scale = GuiScaleTracker::default().read(&frame, geometry, *option);
            cfg.input_cap(frame.width(), frame.height(), scale.scale)
        });
        let (found, times) = detector
            .detect_within(&frame, &opts, cap)
            .with_context(|| format!("detection failed on {}", path.display()))?;
        let perception = detections::split(
            &found,
            &detector.info().class_names,
            &SplitContext {
                frame_w: frame.width(),
                frame_h: frame.height(),
                k_w: cfg.k_w,
                k_h: cfg.k_h,
                gui_panel: None,
            },
        );
        if args.json {
            let input = detector.letterbox_within(frame.width(), frame.height(), cap);
            let report = ImageReport {
                image: path,
                width: frame.width(),
                height: frame.height(),
                input: [input.dst_w, input.dst_h],
                detections: &found,
                perception: &perception,
                times_ms: times.into(),
            };
            progress.suspend(|| println!("{}", serde_json::to_string(&report).unwrap_or_default()));
        } else {
            progress.suspend(|| print_text(path, &frame, &found, &perception, times));
        }
        if let Some(out) = &args.overlay {
            let target = if is_dir {
                out.join(overlay_name(path))
            } else {
                out.clone()
            };
            let mut drawn = frame;
            overlay::draw_detections(&mut drawn, &found);
            write_png_atomically(&drawn, &target)?;
            if !args.json {
                progress.suspend(|| println!("  overlay written to {}", target.display()));
            }
        }
        progress.inc(1);
    }
    progress.finish_and_clear();
    Ok(ExitCode::SUCCESS)
}

fn print_text(
    path: &Path,
    frame: &image::RgbImage,
    found: &[Detection],
    perception: &Perception,
    t: StageTimes,
) {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{} ({}x{}): {} detections in {:.1} ms (pre-process {:.1}, inference {:.1}, post-process {:.1})",
        path.display(),
        frame.width(),
        frame.height(),
        found.len(),
        ms(t.preprocess + t.inference + t.postprocess),
        ms(t.preprocess),
        ms(t.inference),
        ms(t.postprocess)
    );
    for e in &perception.entities {
        println!(
            "  {:<22} {:.2}  centre ({:.0}, {:.0})  size {:.0}x{:.0}{}",
            e.class,
            e.conf,
            e.x,
            e.y,
            e.w,
            e.h,
            if e.in_reach { "  in reach" } else { "" }
        );
    }
    for i in &perception.icons {
        println!(
            "  {:<22} {:.2}  icon at ({:.0}, {:.0})",
            i.class, i.conf, i.x, i.y
        );
    }
}

/// The image, or every .png/.jpg/.jpeg in the folder (sorted, not recursive).
fn collect_images(input: &Path) -> Result<Vec<PathBuf>> {
    if input.is_file() {
        return Ok(vec![input.to_path_buf()]);
    }
    if !input.is_dir() {
        bail!("{} is neither an image file nor a folder", input.display());
    }
    let images = vistawise::capture::image_files(input)
        .with_context(|| format!("cannot list {}", input.display()))?;
    if images.is_empty() {
        bail!("{} contains no .png or .jpg images", input.display());
    }
    Ok(images)
}

fn overlay_name(image: &Path) -> String {
    let stem = image
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "frame".into());
    format!("{stem}.png")
}

/// Encodes in memory, then writes through a temporary file and a rename: a crash leaves no
/// half image.
fn write_png_atomically(img: &image::RgbImage, target: &Path) -> Result<()> {
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create folder {}", dir.display()))?;
    }
    let mut png = std::io::Cursor::new(Vec::new());
    img.write_to(&mut png, image::ImageFormat::Png)
        .with_context(|| format!("cannot encode {}", target.display()))?;
    vistawise::atomic_file::write(target, png.get_ref())
        .with_context(|| format!("cannot write {}", target.display()))?;
    Ok(())
}
