//! `vistawise doctor`: one line per prerequisite, with a fix for each failure.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use vistawise::capture::frame;
use vistawise::capture::windows::{self, WindowError, WindowInfo};
use vistawise::config::{Config, GuiScale, Origin, Override};
use vistawise::game::GameProfile;
use vistawise::llm::{LlmClient, LlmError};
use vistawise::perception::{Detector, DetectorError, runtime};
use vistawise::skills::gui_scale;

use super::AppContext;

#[derive(Args)]
pub struct DoctorArgs {
    /// Do not look for the game window.
    #[arg(long)]
    pub skip_window: bool,
    /// Do not contact the LLM endpoint.
    #[arg(long)]
    pub skip_llm: bool,
    /// Detector ONNX file to check [config: detector.model].
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
}

impl DoctorArgs {
    pub fn overrides(&self) -> Vec<Override> {
        self.model
            .iter()
            .map(|m| Override {
                key: "detector.model".into(),
                value: m.display().to_string(),
                origin: Origin::Flag("--model".into()),
            })
            .collect()
    }
}

enum Outcome {
    Ok(String),
    Fail { what: String, fix: String },
    Skip(String),
}

struct Report {
    failures: usize,
}

impl Report {
    fn line(&mut self, item: &str, outcome: Outcome) {
        match outcome {
            Outcome::Ok(detail) => println!("[ ok ] {item:<12} {detail}"),
            Outcome::Skip(why) => println!("[skip] {item:<12} {why}"),
            Outcome::Fail { what, fix } => {
                self.failures += 1;
                println!("[FAIL] {item:<12} {what}");
                for (i, l) in fix.lines().enumerate() {
                    let lead = if i == 0 { "fix:" } else { "    " };
                    println!("       {lead} {l}");
                }
            }
        }
    }
}

pub fn run(ctx: &AppContext, args: &DoctorArgs) -> Result<ExitCode> {
    let cfg = ctx.config();
    let mut report = Report { failures: 0 };

    let ort = check_onnxruntime(ctx);
    let ort_ok = matches!(ort, Outcome::Ok(_));
    report.line("onnxruntime", ort);
    let detector = if ort_ok {
        check_detector(cfg)
    } else {
        Outcome::Skip("needs ONNX Runtime".into())
    };
    report.line("detector", detector);
    let listed = windows::list();
    report.line("display", check_display(&listed));
    let found = match &listed {
        Ok(ws) if !args.skip_window => Some(windows::find_by_title(ws, &cfg.game.window_title)),
        _ => None,
    };
    let window = match (&listed, &found) {
        _ if args.skip_window => Outcome::Skip("--skip-window".into()),
        (Ok(ws), Some(found)) => check_window(cfg, ws, found),
        _ => Outcome::Skip("needs a display".into()),
    };
    report.line("game window", window);
    let gui = match &found {
        Some(Ok(w)) => check_gui_scale(ctx, w),
        _ => Outcome::Skip("needs the game window".into()),
    };
    report.line("gui scale", gui);
    let llm = if args.skip_llm {
        Outcome::Skip("--skip-llm".into())
    } else {
        check_llm(ctx)
    };
    report.line("llm", llm);

    if report.failures == 0 {
        println!("all checks passed");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("{} check(s) failed", report.failures);
        Ok(ExitCode::from(1))
    }
}

fn check_onnxruntime(ctx: &AppContext) -> Outcome {
    match runtime::init(ctx.ort_lib().as_deref()) {
        Ok(info) => Outcome::Ok(format!("{} ({})", info.library.display(), info.version)),
        Err(e) => Outcome::Fail {
            what: first_line(&e.to_string()),
            fix: runtime::install_hint(),
        },
    }
}

fn check_detector(cfg: &Config) -> Outcome {
    match Detector::load(&cfg.detector.model, cfg.detector.threads)
        .and_then(|d| d.with_input_size(cfg.detector.input_size))
    {
        Ok(d) => {
            let i = d.info();
            Outcome::Ok(format!(
                "{}: {} classes, input {}{}x{}, {}",
                i.path.display(),
                i.class_names.len(),
                if i.dynamic_input { "up to " } else { "" },
                i.input_w,
                i.input_h,
                i.output_form
            ))
        }
        Err(e @ (DetectorError::FixedInput { .. } | DetectorError::InputSizeNotStride { .. })) => {
            Outcome::Fail {
                what: e.to_string(),
                fix: "set detector.input_size = 0 (the model's own size), or a multiple of 32 \
                      with a model exported with export.py --dynamic"
                    .to_string(),
            }
        }
        Err(e) => Outcome::Fail {
            what: e.to_string(),
            fix: format!(
                "set detector.model (now {}) to a YOLO ONNX exported by Ultralytics, e.g. \
                 --set detector.model=models/minecraft-detector.onnx",
                cfg.detector.model.display()
            ),
        },
    }
}

fn check_display(listed: &Result<Vec<WindowInfo>, WindowError>) -> Outcome {
    match listed {
        Ok(ws) => Outcome::Ok(format!(
            "DISPLAY={} with {} top-level windows",
            std::env::var("DISPLAY").unwrap_or_default(),
            ws.len()
        )),
        Err(e) => Outcome::Fail {
            what: e.to_string(),
            fix: "run vistawise inside the desktop session that shows the game \
                  (DISPLAY must be set and a window manager running)"
                .into(),
        },
    }
}

fn check_window(
    cfg: &Config,
    ws: &[WindowInfo],
    found: &Result<WindowInfo, WindowError>,
) -> Outcome {
    match found {
        Ok(w) => Outcome::Ok(format!(
            "\"{}\" at {},{} {}x{}",
            w.title, w.x, w.y, w.width, w.height
        )),
        Err(e) => Outcome::Fail {
            what: first_line(&e.to_string()),
            fix: format!(
                "start the game, or set game.window_title (now \"{}\") to part of its title.{}\n{}",
                cfg.game.window_title,
                other_profiles_window(ws),
                e.to_string().lines().skip(1).collect::<Vec<_>>().join("\n")
            ),
        },
    }
}

/// The window's size and the GUI scale read off one frame of it (the HUD hotbar's outline), with
/// what the profile's rule and `game.gui_scale` would say: a disagreement is reported, not a
/// failure, since the agent plays at the measured scale.
fn check_gui_scale(ctx: &AppContext, w: &WindowInfo) -> Outcome {
    let cfg = ctx.config();
    let profile = match GameProfile::load(ctx.root(), &cfg.game.profile) {
        Ok(p) => p,
        Err(e) => {
            return Outcome::Fail {
                what: format!("cannot load game profile \"{}\": {e}", cfg.game.profile),
                fix: "fix the profile file it names".into(),
            };
        }
    };
    let frame = match frame::capture(w.id) {
        Ok((img, _)) => img,
        Err(e) => {
            return Outcome::Fail {
                what: format!(
                    "cannot capture the game window: {}",
                    first_line(&e.to_string())
                ),
                fix: "see the capture section of docs/setup.md".into(),
            };
        }
    };
    let (fw, fh) = (frame.width(), frame.height());
    let rule = profile.gui.rule_scale(fw, fh, cfg.game.gui_scale);
    let configured = match cfg.game.gui_scale {
        GuiScale::Auto => format!("game.gui_scale = auto gives {rule}"),
        GuiScale::Fixed(n) => format!("game.gui_scale = {n} gives {rule}"),
    };
    if profile.gui.outline().is_none() {
        return Outcome::Ok(format!(
            "{fw}x{fh}: this profile does not measure the scale; {configured}"
        ));
    }
    match gui_scale::measure(&frame, &profile.gui) {
        Some(m) if (m.scale - rule).abs() < 0.05 => Outcome::Ok(format!(
            "{fw}x{fh}: {} measured on the hotbar (agrees: {configured})",
            m.scale
        )),
        Some(m) => Outcome::Ok(format!(
            "{fw}x{fh}: {} measured on the hotbar; it differs from the configuration \
             ({configured}): the agent plays at the measured scale",
            m.scale
        )),
        None => Outcome::Ok(format!(
            "{fw}x{fh}: not measured (the frame shows no hotbar: close any screen, or it is \
             dark); until a frame shows it the agent assumes {rule} ({configured})"
        )),
    }
}

fn check_llm(ctx: &AppContext) -> Outcome {
    let cfg = &ctx.config().llm;
    let client = match LlmClient::new(cfg) {
        Ok(c) => c,
        Err(e) => {
            return Outcome::Fail {
                what: e.to_string(),
                fix: "check the [llm] section of the config".into(),
            };
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            return Outcome::Fail {
                what: format!("cannot start the async runtime: {e}"),
                fix: "this is a bug; please report it".into(),
            };
        }
    };
    let key_note = if client.has_api_key() {
        String::new()
    } else {
        format!(" (no API key: ${} is not set)", cfg.api_key_env)
    };
    match runtime.block_on(client.ping()) {
        Ok(resp) => Outcome::Ok(format!(
            "{} answered as model \"{}\"{}{key_note}",
            vistawise::config::mask_url_credentials(&cfg.base_url),
            resp.model.as_deref().unwrap_or(&cfg.model),
            resp.usage()
                .map(|u| format!(
                    ", {} prompt + {} completion tokens",
                    u.prompt_tokens, u.completion_tokens
                ))
                .unwrap_or_default(),
        )),
        Err(e) => {
            let fix = match &e {
                LlmError::Status {
                    status: 401 | 403, ..
                } => format!(
                    "the endpoint refused the key: export {}=<your key>",
                    cfg.api_key_env
                ),
                LlmError::Status { status: 404, .. } => format!(
                    "check llm.base_url (now {}; it usually ends in /v1) and llm.model (now \"{}\")",
                    cfg.base_url, cfg.model
                ),
                LlmError::Unreachable { .. } => format!(
                    "start the LLM server or fix llm.base_url (now {}); skip this check with --skip-llm",
                    cfg.base_url
                ),
                _ => "check llm.base_url and llm.model; skip this check with --skip-llm".into(),
            };
            Outcome::Fail {
                what: format!("{e}{key_note}"),
                fix,
            }
        }
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// A hint when the open window belongs to another game profile (its `[settings]`
/// `game.window_title`), e.g. the Minecraft browser client while the profile is `minecraft`.
fn other_profiles_window(ws: &[windows::WindowInfo]) -> String {
    let Ok(entries) = std::fs::read_dir("config/games") else {
        return String::new();
    };
    let mut files: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    for path in files {
        let Some(game) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let Ok(settings) = vistawise::config::game_settings(&path, game) else {
            continue;
        };
        let title = settings.iter().find(|o| o.key == "game.window_title");
        if let Some(t) = title
            && let Ok(w) = windows::find_by_title(ws, &t.value)
        {
            return format!(
                " The window \"{}\" is open: it is played with --game {game}.",
                w.title
            );
        }
    }
    String::new()
}
