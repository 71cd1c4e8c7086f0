//! The `vistawise` command line.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so `vistawise eval ... | head` would panic on the closed pipe; a
    // command-line tool should just stop, as other Unix tools do.
    // SAFETY: called first thing in main, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    match cli::run() {
        Ok(code) => code,
        Err(err) => {
            // `{:#}` prints the whole context chain on one line: "what failed: why".
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
