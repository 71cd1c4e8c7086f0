//! `vistawise skills list|run`: the skill library, and one skill run by hand (dry-run shows the
//! events; without it they go to the game window through the real mouse and keyboard).

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use vistawise::capture::windows;
use vistawise::game::GameProfile;
use vistawise::skills::{self, CallArg, EnigoBackend, SkillCall, StopFlag, Watcher, WindowRect};

use super::AppContext;

#[derive(Subcommand)]
pub enum SkillsCommand {
    /// Print the skill library of the game profile (what the LLM is offered).
    List(ProfileArgs),
    /// Run one skill: `vistawise skills run craft_plank 412 300` or `... l_x=412 l_y=300`.
    Run(RunArgs),
}

#[derive(Args)]
pub struct ProfileArgs {
    /// Print the library as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// Skill name.
    pub skill: String,
    /// Arguments, positional (`412`) or named (`l_x=412`).
    #[arg(allow_negative_numbers = true)]
    pub args: Vec<String>,
    /// Print the events instead of sending them.
    #[arg(long)]
    pub dry_run: bool,
    /// Window size for a dry run without a game window, e.g. 1280x720.
    #[arg(long, value_name = "WxH")]
    pub window_size: Option<String>,
}

pub fn run(ctx: &AppContext, cmd: &SkillsCommand) -> Result<ExitCode> {
    match cmd {
        SkillsCommand::List(args) => list(ctx, args),
        SkillsCommand::Run(args) => run_skill(ctx, args),
    }
}

fn load_profile(ctx: &AppContext) -> Result<GameProfile> {
    let name = &ctx.config().game.profile;
    GameProfile::load(ctx.root(), name)
        .with_context(|| format!("cannot load the skills of game profile \"{name}\""))
}

fn list(ctx: &AppContext, args: &ProfileArgs) -> Result<ExitCode> {
    let profile = load_profile(ctx)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&profile.skills.skills)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} skills of profile {} ({})",
        profile.skills.skills.len(),
        profile.name,
        profile.skills.dir.display()
    );
    for s in &profile.skills.skills {
        println!("\n{}\n    {}", s.signature(), s.description);
    }
    Ok(ExitCode::SUCCESS)
}

/// `412` or `l_x=412`.
pub fn parse_cli_args(args: &[String]) -> Result<Vec<CallArg>> {
    args.iter()
        .map(|a| {
            let (name, value) = match a.split_once('=') {
                Some((n, v)) => (Some(n.trim().to_string()), v),
                None => (None, a.as_str()),
            };
            let value: f64 = value
                .trim()
                .parse()
                .with_context(|| format!("argument \"{a}\" is not a number"))?;
            Ok(CallArg { name, value })
        })
        .collect()
}

pub(super) fn parse_size(text: &str) -> Result<(u32, u32)> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .with_context(|| format!("--window-size {text}: expected WxH, e.g. 1280x720"))?;
    let w: u32 = w.trim().parse().context("--window-size: bad width")?;
    let h: u32 = h.trim().parse().context("--window-size: bad height")?;
    if w == 0 || h == 0 {
        bail!("--window-size {text}: must not be zero");
    }
    Ok((w, h))
}

fn run_skill(ctx: &AppContext, args: &RunArgs) -> Result<ExitCode> {
    let profile = load_profile(ctx)?;
    let config = ctx.config();
    let call = SkillCall {
        skill: args.skill.clone(),
        args: parse_cli_args(&args.args)?,
    };
    // The game window, unless a dry run was given a size to pretend with.
    let window = match (&args.window_size, args.dry_run) {
        (Some(size), true) => {
            let (w, h) = parse_size(size)?;
            (WindowRect { x: 0, y: 0, w, h }, None)
        }
        (Some(_), false) => bail!("--window-size only applies with --dry-run"),
        (None, _) => {
            let all = windows::list().context("cannot list windows (is DISPLAY set?)")?;
            let found = windows::find_by_title(&all, &config.game.window_title)?;
            let rect = WindowRect {
                x: found.x,
                y: found.y,
                w: found.width,
                h: found.height,
            };
            (rect, Some(found))
        }
    };
    let (window, found) = window;
    let layout = profile
        .gui
        .layout(window.w, window.h, config.game.gui_scale);
    let expand_ctx = profile.expand_context(&layout, window.w, window.h);
    // Validated and expanded whole before anything is sent.
    let events = skills::plan(&profile.skills, &call, &expand_ctx)?;
    if args.dry_run {
        for e in &events {
            println!("{e}");
        }
        eprintln!("{call}: {} events (dry run: nothing sent)", events.len());
        return Ok(ExitCode::SUCCESS);
    }
    let Some(found) = found else {
        bail!("no game window");
    };
    if !found.focused {
        bail!(
            "the game window \"{}\" does not have the focus; click into it first (input is only \
             sent to a focused game window)",
            found.title
        );
    }
    let stop = StopFlag::default();
    stop.on_signals()
        .context("cannot install the SIGINT/SIGTERM handlers")?;
    // Before the backend: whatever it holds, the guard releases if this process is killed.
    let _guard = super::InputGuard::start()?;
    let mut backend = EnigoBackend::for_camera(window, &profile.camera)?;
    let _watcher = Watcher::start(&config.safety, Some(found.id), stop.clone())
        .context("cannot start the emergency stop")?;
    let mut done = skills::Executed::default();
    let result = skills::execute(&mut backend, &events, &stop, &mut done);
    for e in &done.events {
        println!("{e}");
    }
    for e in &done.released {
        println!("{e} (released)");
    }
    eprintln!("{call}: {} events sent", done.events.len());
    result?;
    Ok(ExitCode::SUCCESS)
}
