//! `vistawise report SESSION -o report.html`: one self-contained HTML page for a session.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use vistawise::agent::Session;
use vistawise::agent::session_report;

#[derive(Args)]
pub struct ReportArgs {
    /// Session folder (sessions/<id>).
    pub session: PathBuf,
    /// Output HTML file.
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    pub output: PathBuf,
}

pub fn run(args: &ReportArgs) -> Result<ExitCode> {
    let session = Session::load(&args.session)
        .with_context(|| format!("cannot read session {}", args.session.display()))?;
    let html = session_report::render(&session)?;
    vistawise::atomic_file::write(&args.output, html.as_bytes())
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    println!("{} steps -> {}", session.steps.len(), args.output.display());
    Ok(ExitCode::SUCCESS)
}
