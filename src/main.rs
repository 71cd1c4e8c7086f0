//! The `vistawise` command line.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    match cli::run() {
        Ok(code) => code,
        Err(err) => {
            // `{:#}` prints the whole context chain on one line: "what failed: why".
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
