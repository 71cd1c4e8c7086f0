//! `vistawise config show`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use vistawise::config::describe_secret;

use super::AppContext;

#[derive(Subcommand)]
pub enum ConfigCommand {
    /// Print the effective configuration (secrets masked).
    Show {
        /// Also say where each key's value came from (default, file:line, env var, flag).
        #[arg(long)]
        origins: bool,
    },
}

pub fn run(ctx: &AppContext, cmd: &ConfigCommand) -> Result<ExitCode> {
    let ConfigCommand::Show { origins } = cmd;
    let config = ctx.config();
    let key_state = describe_secret(std::env::var(&config.llm.api_key_env).ok().as_deref());
    println!("# effective vistawise configuration");
    println!(
        "# llm API key (from ${}): {key_state}",
        config.llm.api_key_env
    );
    println!("{}", config.to_masked_toml().trim_end());
    if *origins {
        println!("\n# where each value came from");
        for (key, origin) in &ctx.loaded.origins {
            println!("# {key:<28} {origin}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
