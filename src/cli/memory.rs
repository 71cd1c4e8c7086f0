//! `vistawise memory list|show|clear|howto|explore|tokens`: the long-term memory database of
//! the game profile (docs/memory.md).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use vistawise::agent::pipeline;
use vistawise::agent::play::LongTerm;
use vistawise::config::MemoryConfig;
use vistawise::llm::{ChatOptions, LlmClient};
use vistawise::longterm::{
    self, BagOfWords, Db, Embedder, Entry, LongTermMemory, Module, exemplars, howto, scripted,
};
use vistawise::perception::{Perception, runtime};

use super::AppContext;
use super::kg::{GraphArgs, read_perception};

#[derive(Subcommand)]
pub enum MemoryCommand {
    /// List the entries (id, module, key, last update, summary).
    List(ModuleArg),
    /// Show one entry in full.
    Show {
        id: i64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete the entries of one module, or all.
    Clear(ModuleArg),
    /// The how-to memory's entry for an item; with --ask, ask the teacher (the LLM) when there
    /// is no relevant one, and store the answer.
    Howto {
        item: String,
        #[arg(long)]
        ask: bool,
        #[command(flatten)]
        graph: GraphArgs,
    },
    /// Exploration mode (ICAL): print the analogy prompt for the current state with the
    /// retrieved exemplars; with --ask, send it to the LLM and print the proposed next task.
    Explore(ExploreArgs),
    /// Prompt tokens per step of the scripted episodes with each module on and off (each
    /// setting starts from an empty database in a temporary folder).
    Tokens {
        /// Use the hashed bag-of-words embedder instead of MiniLM (no model needed; the
        /// numbers then differ from MiniLM's).
        #[arg(long)]
        bag_of_words: bool,
        #[command(flatten)]
        graph: GraphArgs,
        /// Also print each prompt of the run with all modules.
        #[arg(long)]
        show_prompts: bool,
    },
}

#[derive(Args)]
pub struct ModuleArg {
    /// experiences, howto, plans or exemplars [default: all].
    #[arg(long, value_name = "M", value_parser = parse_module)]
    pub module: Option<Module>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct ExploreArgs {
    /// Task id (its description is the exemplars' query goal).
    #[arg(long)]
    pub task: String,
    /// Detections of the current frame (a line of `vistawise detect --json`) [default: an
    /// empty frame].
    #[arg(long, value_name = "FILE.json")]
    pub detections: Option<PathBuf>,
    /// Send the prompt to the LLM and print its proposal.
    #[arg(long)]
    pub ask: bool,
    #[command(flatten)]
    pub graph: GraphArgs,
}

fn parse_module(s: &str) -> Result<Module, String> {
    Module::parse(s).ok_or_else(|| {
        format!(
            "unknown module \"{s}\"; known: {}",
            Module::ALL.map(|m| m.as_str()).join(", ")
        )
    })
}

fn open_db(ctx: &AppContext) -> Result<Db> {
    let c = ctx.config();
    let path = longterm::db::db_path(&c.memory.db_dir, &c.game.profile)?;
    let db = Db::open(&path)
        .with_context(|| format!("cannot open the memory database {}", path.display()))?;
    eprintln!("memory database: {}", path.display());
    Ok(db)
}

pub fn run(ctx: &AppContext, cmd: &MemoryCommand) -> Result<ExitCode> {
    match cmd {
        MemoryCommand::List(args) => list(ctx, args),
        MemoryCommand::Show { id, json } => show(ctx, *id, *json),
        MemoryCommand::Clear(args) => {
            let db = open_db(ctx)?;
            let n = db.clear(args.module.map(Module::as_str))?;
            println!(
                "deleted {n} entries ({})",
                args.module.map_or("all modules", Module::as_str)
            );
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Howto { item, ask, graph } => howto_cmd(ctx, item, *ask, graph),
        MemoryCommand::Explore(args) => explore(ctx, args),
        MemoryCommand::Tokens {
            bag_of_words,
            graph,
            show_prompts,
        } => tokens(ctx, *bag_of_words, graph, *show_prompts),
    }
}

/// A one-line summary of an entry.
fn summary(e: &Entry) -> String {
    let s = |k: &str| e.data[k].as_str().unwrap_or("").to_string();
    let n = |k: &str| e.data[k].as_array().map_or(0, Vec::len);
    match e.module.as_str() {
        "experiences" => format!(
            "[{}] {} -> {}",
            if e.data["success"].as_bool() == Some(true) {
                "ok"
            } else {
                "failed"
            },
            s("plan"),
            s("reason")
        ),
        "howto" => format!(
            "how to get {}: {} procedure steps",
            s("item"),
            n("procedure")
        ),
        "plans" => format!(
            "plan for {}: {} steps, merged {} times",
            s("subgoal"),
            n("steps"),
            e.data["merged"].as_u64().unwrap_or(0)
        ),
        "exemplars" => format!("episode \"{}\": {} actions", s("goal"), n("actions")),
        _ => String::new(),
    }
}

fn list(ctx: &AppContext, args: &ModuleArg) -> Result<ExitCode> {
    let db = open_db(ctx)?;
    let entries = db.list(args.module.map(Module::as_str))?;
    if args.json {
        for e in &entries {
            println!("{}", serde_json::to_string(e)?);
        }
    } else {
        for e in &entries {
            println!(
                "{:>5}  {:<11}  {}  {}",
                e.id,
                e.module,
                httpdate::fmt_http_date(
                    std::time::UNIX_EPOCH
                        + std::time::Duration::from_millis(e.updated.max(0) as u64)
                ),
                summary(e)
            );
        }
        eprintln!("{} entries", entries.len());
    }
    Ok(ExitCode::SUCCESS)
}

fn show(ctx: &AppContext, id: i64, json: bool) -> Result<ExitCode> {
    let db = open_db(ctx)?;
    let Some(e) = db.get(id)? else {
        eprintln!("no entry {id}");
        return Ok(ExitCode::from(1));
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&e)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("entry {} ({}, key \"{}\")", e.id, e.module, e.key);
    println!(
        "embedding: {}",
        e.embedding
            .as_ref()
            .map_or("none".into(), |v| format!("{} values", v.len()))
    );
    match e.module.as_str() {
        "howto" => match serde_json::from_value::<howto::HowTo>(e.data.clone()) {
            Ok(h) => println!("{}\ntags: {}", howto::render(&h), h.tags.join(", ")),
            Err(_) => println!("{}", serde_json::to_string_pretty(&e.data)?),
        },
        "exemplars" => match serde_json::from_value::<exemplars::Exemplar>(e.data.clone()) {
            Ok(x) => println!("{}", exemplars::example_block(1, &x)),
            Err(_) => println!("{}", serde_json::to_string_pretty(&e.data)?),
        },
        _ => println!("{}", serde_json::to_string_pretty(&e.data)?),
    }
    Ok(ExitCode::SUCCESS)
}

fn block_on<F: std::future::Future>(ctx: &AppContext, f: F) -> Result<F::Output> {
    Ok(ctx.setup().async_runtime()?.block_on(f))
}

fn howto_cmd(ctx: &AppContext, item: &str, ask: bool, graph: &GraphArgs) -> Result<ExitCode> {
    let (kg, _) = super::kg::load(ctx, graph)?;
    let Some(node) = kg.node(item) else {
        bail!("\"{item}\" is not a node of {}", kg.source.display());
    };
    let item = kg.name(node).to_string();
    let db = open_db(ctx)?;
    if let Some((id, h)) = howto::lookup(&db, &item, &kg)? {
        println!("entry {id}:\n{}", howto::render(&h));
        return Ok(ExitCode::SUCCESS);
    }
    if !ask {
        println!("no relevant how-to for {item} (add --ask to ask the teacher)");
        return Ok(ExitCode::from(1));
    }
    let config = ctx.config();
    let client = LlmClient::new(&config.llm)?;
    let answer = block_on(ctx, howto::ask(&client, &config.llm, &kg, &item))??
        .response
        .text();
    match howto::parse_answer(&answer, &item) {
        Ok(h) => {
            let id = howto::store(&db, &h)?;
            println!("stored as entry {id}:\n{}", howto::render(&h));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("the teacher's answer was refused, nothing stored: {e}\n---\n{answer}");
            Ok(ExitCode::from(3))
        }
    }
}

fn explore(ctx: &AppContext, args: &ExploreArgs) -> Result<ExitCode> {
    let parts = super::setup::load_parts(ctx, &args.graph, &args.task)?;
    let perception = match &args.detections {
        Some(p) => read_perception(p)?,
        None => Perception {
            frame_w: scripted::WINDOW.0,
            frame_h: scripted::WINDOW.1,
            ..Perception::default()
        },
    };
    let graph = pipeline::graph_view(&parts, &perception);
    let query = pipeline::memory_query(&parts, &perception, &graph);
    let current = exemplars::current(&query, &parts.kg);
    let db = open_db(ctx)?;
    let mut emb = super::setup::encoder(ctx)?;
    let found = exemplars::retrieve(
        &db,
        emb.as_mut(),
        &query.task,
        &current,
        parts.config.memory.exemplar_k,
    )?;
    let examples: Vec<exemplars::Exemplar> = found.into_iter().map(|(_, e, _)| e).collect();
    let prompt = exemplars::explore_prompt(&examples, &current);
    if !args.ask {
        println!("{prompt}");
        eprintln!(
            "{} exemplars; {} tokens (o200k_base)",
            examples.len(),
            parts.counter.count(&prompt)
        );
        return Ok(ExitCode::SUCCESS);
    }
    let config = &parts.config;
    let client = LlmClient::new(&config.llm)?;
    let options = ChatOptions {
        max_tokens: config.llm.max_tokens,
        temperature: config.llm.temperature,
        ..ChatOptions::default()
    };
    let messages = [vistawise::llm::ChatMessage::user(prompt)];
    let answer = block_on(ctx, client.chat(&messages, &options))??
        .response
        .text();
    match exemplars::parse_proposal(&answer) {
        Ok(p) => {
            println!("{}", serde_json::to_string_pretty(&p)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("the proposal was refused: {e}\n---\n{answer}");
            Ok(ExitCode::from(3))
        }
    }
}

fn tokens(
    ctx: &AppContext,
    bag_of_words: bool,
    graph: &GraphArgs,
    show_prompts: bool,
) -> Result<ExitCode> {
    let settings: Vec<(&str, Vec<Module>)> = vec![
        ("off", vec![]),
        ("experiences", vec![Module::Experiences]),
        ("howto", vec![Module::Howto]),
        ("plans", vec![Module::Plans]),
        ("exemplars", vec![Module::Exemplars]),
        ("all", Module::ALL.to_vec()),
    ];
    let episodes = scripted::episodes();
    let mut parts_by_task = Vec::new();
    for ep in &episodes {
        parts_by_task.push(super::setup::load_parts(ctx, graph, ep.task_id)?);
    }
    if !bag_of_words {
        runtime::init(ctx.ort_lib().as_deref())?;
    }
    let rt = ctx.setup().async_runtime()?;
    // columns[setting][row]
    let mut columns: Vec<Vec<usize>> = Vec::new();
    let mut rows: Vec<String> = Vec::new();
    for (name, modules) in &settings {
        let dir = tempfile_dir()?;
        let config = MemoryConfig {
            modules: modules.clone(),
            db_dir: dir.clone(),
            ..ctx.config().memory.clone()
        };
        let embedder: Option<Box<dyn Embedder>> = match (modules.is_empty(), bag_of_words) {
            (true, _) => None,
            (false, true) => Some(Box::new(BagOfWords)),
            (false, false) => Some(super::setup::encoder(ctx)?),
        };
        let memory = LongTermMemory::open(&config, &ctx.config().game.profile, embedder)?;
        if memory.is_enabled(Module::Howto) {
            // The teacher's answer, as if asked in an earlier session.
            let _ = memory.store_howto("Stone Pickaxe", scripted::STONE_PICKAXE_HOWTO)?;
        }
        let mut col = Vec::new();
        rows.clear();
        let mut long_term = LongTerm::new(memory, None, "");
        for (ep_no, (ep, parts)) in episodes.iter().zip(&parts_by_task).enumerate() {
            long_term = LongTerm::new(
                std::mem::replace(&mut long_term.memory, LongTermMemory::disabled(&config)),
                None,
                &parts.task.description,
            );
            for s in vistawise::agent::scripted_run::run_episode(parts, &mut long_term, ep, &rt) {
                rows.push(format!("{} {} step {}", ep_no + 1, ep.task_id, s.step));
                col.push(s.prompt_tokens);
                if show_prompts && *name == "all" {
                    println!(
                        "===== episode {} ({}) step {} =====\n{}",
                        ep_no + 1,
                        ep.task_id,
                        s.step,
                        s.prompt
                    );
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        columns.push(col);
    }
    let names: Vec<&str> = settings.iter().map(|(n, _)| *n).collect();
    print_token_table(&names, &rows, &columns);
    Ok(ExitCode::SUCCESS)
}

/// The prompt tokens of every scripted step under each setting (`columns[setting][row]`), the
/// first setting's as they are and the others' with their difference to it, and the means.
fn print_token_table(names: &[&str], rows: &[String], columns: &[Vec<usize>]) {
    println!("| episode, step | {} |", names.join(" | "));
    println!("|---|{}", "---:|".repeat(names.len()));
    for (i, row) in rows.iter().enumerate() {
        let base = columns[0][i] as i64;
        let cells: Vec<String> = columns
            .iter()
            .enumerate()
            .map(|(c, col)| {
                if c == 0 {
                    col[i].to_string()
                } else {
                    format!("{} (+{})", col[i], col[i] as i64 - base)
                }
            })
            .collect();
        println!("| {row} | {} |", cells.join(" | "));
    }
    let means: Vec<String> = columns
        .iter()
        .map(|c| {
            format!(
                "{:.0}",
                c.iter().sum::<usize>() as f64 / c.len().max(1) as f64
            )
        })
        .collect();
    println!("| mean | {} |", means.join(" | "));
}

/// A fresh empty folder under the system's temporary folder.
fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!(
        "vistawise-memory-tokens-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}
