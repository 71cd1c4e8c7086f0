//! Long-term memory modules (docs/memory.md) on scripted episodes through the real pipeline:
//! MiniLM through ONNX Runtime for the embeddings, SQLite files in a temporary folder, and for
//! the how-to memory's teacher and the exploration mode a real local HTTP server speaking the
//! OpenAI chat API (wiremock) that counts the requests.

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use vistawise::agent::pipeline::{self, Parts};
use vistawise::agent::play::LongTerm;
use vistawise::agent::scripted_run::run_episode;
use vistawise::config::{Config, MemoryConfig};
use vistawise::embedding::SentenceEncoder;
use vistawise::knowledge::KnowledgeGraph;
use vistawise::llm::LlmClient;
use vistawise::longterm::{Db, LongTermMemory, MemoryError, Module, db, scripted};
use vistawise::tasks::TaskList;
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn parts(task: &str) -> Parts {
    let repo = support::repo();
    let mut config = Config::builtin();
    assert_eq!(config.game.profile, "minecraft");
    config.llm.prompt_template = repo.join(&config.llm.prompt_template);
    let kg = KnowledgeGraph::load(&repo.join("kg/minecraft.toml")).expect("kg");
    let tasks = TaskList::load(&repo.join("config/tasks.toml")).expect("tasks");
    Parts::assemble(config, kg, &tasks, &repo, task).expect("parts")
}

fn memory_config(dir: &Path, modules: &[Module]) -> MemoryConfig {
    MemoryConfig {
        modules: modules.to_vec(),
        db_dir: dir.to_path_buf(),
        ..Config::builtin().memory
    }
}

fn minilm() -> Box<SentenceEncoder> {
    support::init_ort();
    Box::new(SentenceEncoder::load(&support::minilm_dir(), 1).expect("MiniLM"))
}

fn open(dir: &Path, modules: &[Module], teacher: Option<LlmClient>, goal: &str) -> LongTerm {
    let embedder: Option<Box<dyn vistawise::longterm::Embedder>> =
        if modules.iter().any(|m| m.embeds()) {
            Some(minilm())
        } else {
            None
        };
    let memory =
        LongTermMemory::open(&memory_config(dir, modules), "minecraft", embedder).expect("open");
    LongTerm::new(memory, teacher, goal)
}

fn db_of(dir: &Path) -> Db {
    Db::open(&db::db_path(dir, "minecraft").expect("path")).expect("db")
}

/// An OpenAI chat completion whose answer is `content`.
fn chat(content: &str) -> Value {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "smollm2-135m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 80, "total_tokens": 200}
    })
}

fn teacher(server: &MockServer) -> LlmClient {
    let mut c = Config::builtin().llm;
    c.base_url = format!("{}/v1", server.uri());
    c.model = "smollm2-135m".into();
    c.api_key_env = "VW_TEST_NO_KEY".into();
    c.max_retries = 0;
    c.timeout_secs = 5;
    LlmClient::new(&c).expect("client")
}

#[test]
fn with_no_module_the_prompt_is_unchanged() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = parts("iron_ore");
    let rt = runtime();
    let mut lt = LongTerm::disabled(&memory_config(dir.path(), &[]));
    let ep = &scripted::episodes()[0];
    let steps = run_episode(&p, &mut lt, ep, &rt);
    for (s, step) in steps.iter().zip(&ep.steps) {
        let perception = scripted::perception(step);
        let graph = pipeline::graph_view(&p, &perception);
        let (plain, _) = pipeline::build_prompt(&p, &perception, &graph, &Default::default());
        assert_eq!(s.prompt, plain);
        assert_eq!(s.memory_tokens, 0);
    }
    // Nothing was written anywhere.
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
}

#[test]
fn a_failed_iron_attempt_with_a_wooden_pickaxe_changes_the_next_plan() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = parts("iron_ore");
    let rt = runtime();
    let episodes = scripted::episodes();
    let first = &episodes[0];
    let state0 = {
        let perception = scripted::perception(&first.steps[0]);
        let graph = pipeline::graph_view(&p, &perception);
        pipeline::memory_query(&p, &perception, &graph)
    };
    assert_eq!(state0.subgoal.as_deref(), Some("Cobblestone"));
    let proposer = |fb: Option<&str>| -> Result<Option<String>, MemoryError> {
        // A stand-in for the LLM planner: it takes the prediction's advice when given one.
        Ok(Some(match fb {
            Some(f) if f.contains("Stone Pickaxe") => {
                "craft_stone_pickaxe(560, 300, 600, 340)".to_string()
            }
            _ => "mine_iron_ore(1, 2.0)".to_string(),
        }))
    };

    // Before any experience, the plan stands.
    let mut lt = open(
        dir.path(),
        &[Module::Experiences],
        None,
        &p.task.description,
    );
    let r = lt
        .memory
        .revise(&state0, proposer)
        .expect("ok")
        .expect("plan");
    assert_eq!(r.plan, "mine_iron_ore(1, 2.0)");
    assert!(r.rejected.is_empty());

    // Episode 1: two mining attempts with a wooden pickaxe, nothing gained.
    let steps = run_episode(&p, &mut lt, first, &rt);
    assert_eq!(steps[0].memory_tokens, 0, "nothing stored yet");
    let stored = db_of(dir.path()).list(Some("experiences")).expect("list");
    assert_eq!(stored.len(), 2, "every attempted sub-task is written");
    for e in &stored {
        assert_eq!(e.data["success"], json!(false));
        let reason = e.data["reason"].as_str().expect("reason");
        assert!(reason.contains("needs Stone Pickaxe"), "{reason}");
    }
    drop(lt);

    // A later episode (the memory reopened from disk): the section shows the failure and its
    // insight, the outcome prediction says the same plan fails, and the plan is revised.
    let mut lt = open(
        dir.path(),
        &[Module::Experiences],
        None,
        &p.task.description,
    );
    let section = lt.memory.section(&state0, &p.kg).expect("section");
    assert!(
        section.starts_with("Long-term memory - past experiences"),
        "{section}"
    );
    assert!(section.contains("Avoid `mine_iron_ore("), "{section}");
    assert!(section.contains("needs Stone Pickaxe"), "{section}");
    let prediction = lt
        .memory
        .predict(&state0, "mine_iron_ore(1, 2.0)")
        .expect("predict")
        .expect("on");
    assert!(!prediction.success, "{prediction:?}");
    let r = lt
        .memory
        .revise(&state0, proposer)
        .expect("ok")
        .expect("plan");
    assert_eq!(r.plan, "craft_stone_pickaxe(560, 300, 600, 340)");
    assert_eq!(r.rejected.len(), 1);
    // The prompt of that step carries the section, delimited, where the default template puts
    // it: after the knowledge, before the previous decisions (the step's state, last).
    let steps = run_episode(&p, &mut lt, &episodes[2], &rt);
    assert!(steps[0].memory_tokens > 0);
    let prompt = &steps[0].prompt;
    let at = prompt
        .find("Long-term memory - past experiences")
        .expect("section");
    assert!(at > prompt.find("Here is some knowledge").expect("knowledge"));
    assert!(at < prompt.find("Previous decisions").expect("decisions"));
    // Episode 3 succeeded: a success is stored too.
    let stored = db_of(dir.path()).list(Some("experiences")).expect("list");
    assert!(stored.iter().any(|e| e.data["success"] == json!(true)));
}

#[test]
fn a_second_how_to_question_makes_no_teacher_call() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = parts("stone_pickaxe");
    let rt = runtime();
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .and(body_string_contains("how do I get Stone Pickaxe?"))
            .respond_with(ResponseTemplate::new(200).set_body_json(chat(&format!(
                "Here is how:\n```json\n{}\n```",
                scripted::STONE_PICKAXE_HOWTO
            ))))
            .mount(&server),
    );
    // The answer about cobblestone is bound to the screen: refused, never stored.
    rt.block_on(
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .and(body_string_contains("how do I get Cobblestone?"))
            .respond_with(ResponseTemplate::new(200).set_body_json(chat(
                r#"{"item": "Cobblestone", "procedure": ["Click slot 3", "Move the mouse to (640, 360) and hold the left button"]}"#,
            )))
            .mount(&server),
    );
    let asked = |what: &str| {
        rt.block_on(server.received_requests())
            .expect("recording")
            .iter()
            .filter(|r| String::from_utf8_lossy(&r.body).contains(what))
            .count()
    };
    let episode = &scripted::episodes()[1];

    let mut lt = open(dir.path(), &[Module::Howto], Some(teacher(&server)), "");
    let steps = run_episode(&p, &mut lt, episode, &rt);
    assert_eq!(asked("how do I get Stone Pickaxe?"), 1);
    assert_eq!(asked("how do I get Cobblestone?"), 1);
    // Step 2 (sub-goal Stone Pickaxe) shows the abstract how-to; no coordinates anywhere.
    assert!(
        steps[1]
            .prompt
            .contains("Long-term memory - how-to knowledge from the teacher"),
        "{}",
        steps[1].prompt
    );
    assert!(steps[1].prompt.contains("Recipe: 3 Cobblestone, 2 Stick"));
    let entries = db_of(dir.path()).list(Some("howto")).expect("list");
    assert_eq!(entries.len(), 1, "only the well-formed answer is stored");
    assert!(!entries[0].data.to_string().contains("640"));
    assert!(
        entries[0].data["tags"]
            .as_array()
            .expect("tags")
            .contains(&json!("pickaxe"))
    );

    // Next episode: the stored how-to is relevant, so no second question about it; the
    // refused one is asked again.
    let mut lt = open(dir.path(), &[Module::Howto], Some(teacher(&server)), "");
    let steps = run_episode(&p, &mut lt, episode, &rt);
    assert_eq!(
        asked("how do I get Stone Pickaxe?"),
        1,
        "no new teacher call"
    );
    assert_eq!(asked("how do I get Cobblestone?"), 2);
    assert!(steps[1].prompt.contains("How to get Stone Pickaxe:"));
    // The how-to of another item is offered under a shared tag (cobblestone).
    assert!(
        steps[0]
            .prompt
            .contains("Also known how to get: Stone Pickaxe"),
        "{}",
        steps[0].prompt
    );
}

#[test]
fn successful_sub_goal_plans_are_reused_and_duplicates_merge() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = parts("stone_pickaxe");
    let rt = runtime();
    let episode = &scripted::episodes()[1];
    let mut lt = open(dir.path(), &[Module::Plans], None, "");
    let steps = run_episode(&p, &mut lt, episode, &rt);
    assert_eq!(steps[0].memory_tokens, 0);
    let plans = db_of(dir.path()).list(Some("plans")).expect("list");
    let subgoals: Vec<&str> = plans
        .iter()
        .map(|e| e.data["subgoal"].as_str().expect("subgoal"))
        .collect();
    assert_eq!(subgoals, ["Cobblestone", "Stone Pickaxe"]);

    // The same episode again: the plans are found (newest match) and merge, not pile up.
    let mut lt = open(dir.path(), &[Module::Plans], None, "");
    let steps = run_episode(&p, &mut lt, episode, &rt);
    assert!(
        steps[0]
            .prompt
            .contains("A plan that reached \"Cobblestone\" before"),
        "{}",
        steps[0].prompt
    );
    assert!(
        steps[0]
            .prompt
            .contains("1. dig_horizontal_mine_tunnels(1)")
    );
    let plans = db_of(dir.path()).list(Some("plans")).expect("list");
    assert_eq!(plans.len(), 2, "duplicates merged");
    assert!(plans.iter().all(|e| e.data["merged"] == json!(1)));
}

#[test]
fn successful_episodes_become_exemplars_for_exploration() {
    let dir = tempfile::tempdir().expect("tmp");
    let rt = runtime();
    let episodes = scripted::episodes();
    let p = parts("stone_pickaxe");
    let mut lt = open(dir.path(), &[Module::Exemplars], None, &p.task.description);
    run_episode(&p, &mut lt, &episodes[0], &rt); // failed: no exemplar
    assert!(
        db_of(dir.path())
            .list(Some("exemplars"))
            .expect("l")
            .is_empty()
    );
    run_episode(&p, &mut lt, &episodes[1], &rt);
    let ex = db_of(dir.path()).list(Some("exemplars")).expect("l");
    assert_eq!(ex.len(), 1);
    let csd = &ex[0].data["csd"];
    for dim in [
        "structural",
        "attribute",
        "procedural",
        "functional",
        "interaction",
    ] {
        assert!(!csd[dim].as_str().expect(dim).is_empty(), "{dim}");
    }
    assert!(
        csd["procedural"]
            .as_str()
            .expect("proc")
            .contains("+Cobblestone")
    );
    assert!(
        csd["functional"]
            .as_str()
            .expect("func")
            .contains("Cobblestone is used to craft Stone Pickaxe")
    );

    // The CLI: the exploration prompt (appendix format) and, asked, the proposal.
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .and(body_string_contains("[CURRENT STATE CSD]"))
            .respond_with(ResponseTemplate::new(200).set_body_json(chat(
                r#"{"task_description": "Craft a stone axe", "action_sequence": ["step 1: open the crafting table", "step 2: craft the stone axe"], "self_checks": ["check 1: 3 cobblestone and 2 sticks in the inventory"]}"#,
            )))
            .mount(&server),
    );
    let cli = |extra: &[&str]| {
        let mut cmd = support::binary();
        cmd.arg("--ort-lib")
            .arg(support::ort_lib())
            .args(["--set", &format!("memory.db_dir={}", dir.path().display())])
            .args([
                "--set",
                &format!("embedding.model_dir={}", support::minilm_dir().display()),
            ])
            .args(["--set", &format!("llm.base_url={}/v1", server.uri())])
            .args(["--set", "llm.model=smollm2-135m"])
            .args(["memory", "explore", "--task", "iron_ore"])
            .args(extra);
        let out = cmd.output().expect("run");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, out, err) = cli(&[]);
    assert_eq!(code, Some(0), "{err}");
    for part in [
        "[SYSTEM]",
        "[EXAMPLE 1]",
        "[GOAL]\nObtain a stone pickaxe",
        "[SUCCESSFUL ACTION SEQUENCE]\n1. dig_horizontal_mine_tunnels(1)",
        "[CURRENT STATE CSD]",
        "Only output the JSON object.",
    ] {
        assert!(out.contains(part), "{part} in\n{out}");
    }
    let (code, out, err) = cli(&["--ask"]);
    assert_eq!(code, Some(0), "{err}");
    let proposal: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(proposal["task_description"], json!("Craft a stone axe"));
}

#[test]
fn an_old_database_is_migrated_and_the_cli_lists_shows_and_clears() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = db::db_path(dir.path(), "minecraft").expect("path");
    make_v1(&file);
    let cli = |args: &[&str]| {
        let out = support::binary()
            .args(["--set", &format!("memory.db_dir={}", dir.path().display())])
            .args(args)
            .output()
            .expect("run");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, out, err) = cli(&["memory", "list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("experiences"), "{out}");
    assert!(out.contains("[failed] mine_iron_ore(1, 2.0)"), "{out}");
    assert!(out.contains("plan for Oak Planks"), "{out}");
    assert_eq!(
        db_of(dir.path()).user_version().expect("v"),
        db::SCHEMA_VERSION
    );
    let (code, out, _) = cli(&["memory", "show", "1"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("\"plan\": \"mine_iron_ore(1, 2.0)\""), "{out}");
    let (code, _, _) = cli(&["memory", "show", "99"]);
    assert_eq!(code, Some(1));
    let (code, out, _) = cli(&["memory", "clear", "--module", "plans"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("deleted 1 entries"), "{out}");
    let (_, out, _) = cli(&["memory", "list", "--module", "plans"]);
    assert!(out.trim().is_empty(), "{out}");
    let (code, _, err) = cli(&["memory", "list", "--module", "dreams"]);
    assert_ne!(code, Some(0));
    assert!(err.contains("unknown module"), "{err}");
    let (_, out, _) = cli(&["memory", "clear"]);
    assert!(out.contains("deleted 1 entries (all modules)"), "{out}");

    // The migrated experience (no embedding in version 1) is embedded when first retrieved.
    make_v1(&dir.path().join("old/minecraft.sqlite"));
    let old = dir.path().join("old");
    let mut memory = LongTermMemory::open(
        &memory_config(&old, &[Module::Experiences]),
        "minecraft",
        Some(minilm()),
    )
    .expect("open");
    let q = vistawise::longterm::Query {
        task: "Obtain iron ore.".into(),
        state: "Inventory: Wooden Pickaxe.".into(),
        ..Default::default()
    };
    let section = memory.section(&q, &parts("iron_ore").kg).expect("section");
    assert!(section.contains("mine_iron_ore(1, 2.0)"), "{section}");
    let e = db_of(&old).get(1).expect("get").expect("entry");
    assert_eq!(e.embedding.map(|v| v.len()), Some(3 * 384));
}

/// A version-1 database (no `updated`, no `embedding`) with an experience and a plan.
fn make_v1(file: &Path) {
    std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
    let conn = rusqlite::Connection::open(file).expect("sqlite");
    conn.execute_batch(db::SCHEMA_V1).expect("v1");
    conn.execute_batch(
        r#"INSERT INTO entries (module, key, created, data) VALUES
           ('experiences', 'Obtain iron ore.', 1000, '{"state": "Inventory: Wooden Pickaxe.", "task": "Obtain iron ore.", "plan": "mine_iron_ore(1, 2.0)", "success": false, "reason": "Iron Ore needs Stone Pickaxe (or better), which is not in the inventory"}'),
           ('plans', 'oak planks', 2000, '{"context": "Obtain planks.", "subgoal": "Oak Planks", "steps": ["craft_plank()"]}');
           PRAGMA user_version = 1;"#,
    )
    .expect("rows");
}

#[test]
fn the_play_loop_writes_and_reads_the_memory() {
    // Two dry-run episodes of the planner on recorded frames (no display), memory on.
    let dir = tempfile::tempdir().expect("tmp");
    let sessions = tempfile::tempdir().expect("tmp");
    let play = |id: &str| {
        let out = support::binary()
            .args([
                "--set",
                "memory.modules=experiences,plans,exemplars",
                "--set",
                &format!("memory.db_dir={}", dir.path().display()),
                "--set",
                &format!("embedding.model_dir={}", support::minilm_dir().display()),
                "play",
                "--task",
                "planks",
                "--policy",
                "planner",
                "--dry-run",
                "--session-id",
                id,
            ])
            .arg("--frames")
            .arg(support::fixture("detector/images"))
            .env_remove("DISPLAY")
            .env("VISTAWISE_ORT_LIB", support::ort_lib())
            .env(
                "VISTAWISE_DETECTOR__MODEL",
                "tests/fixtures/detector/tiny-raw.onnx",
            )
            .env("VISTAWISE_SESSION__DIR", sessions.path())
            .output()
            .expect("run");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains("no more recorded frames after 4 steps"),
            "{text}"
        );
        assert!(
            text.contains("long-term memory: experiences, plans, exemplars"),
            "{text}"
        );
        std::fs::read_to_string(sessions.path().join(id).join("session.jsonl")).expect("session")
    };
    let first = play("a");
    let written = db_of(dir.path()).list(Some("experiences")).expect("list");
    assert_eq!(written.len(), 4, "one experience per attempted step");
    let first_prompt = |session: &str| -> String {
        session
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v["prompt"].as_str().map(str::to_string))
            .expect("a step with a prompt")
    };
    // The first step of the first episode has nothing to recall; the first step of the next
    // episode recalls the first one's attempts.
    assert!(!first_prompt(&first).contains("Long-term memory - past experiences"));
    let second = play("b");
    assert!(first_prompt(&second).contains("Long-term memory - past experiences"));
    assert_eq!(
        db_of(dir.path())
            .list(Some("experiences"))
            .expect("list")
            .len(),
        8
    );
}

#[test]
fn the_llm_policy_revises_an_action_predicted_to_fail_a_bounded_number_of_times() {
    // An LLM that always answers mine_log(2.0) on frames where it gains nothing: the first
    // episode stores the failures; in the second, the same action on the same frame is
    // predicted to fail and sent back with the prediction, at most memory.max_revisions times.
    let dir = tempfile::tempdir().expect("tmp");
    let sessions = tempfile::tempdir().expect("tmp");
    let rt = runtime();
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(chat("The log is in reach.\nAction: mine_log(2.0)")),
            )
            .mount(&server),
    );
    let play = |id: &str| {
        let out = support::binary()
            .args([
                "--set",
                "memory.modules=experiences",
                "--set",
                &format!("memory.db_dir={}", dir.path().display()),
                "--set",
                &format!("embedding.model_dir={}", support::minilm_dir().display()),
                "--set",
                &format!("llm.base_url={}/v1", server.uri()),
                "--set",
                "llm.model=smollm2-135m",
                "--set",
                "llm.api_key_env=VW_TEST_NO_KEY",
                "play",
                "--task",
                "planks",
                "--policy",
                "llm",
                "--dry-run",
                "--max-steps",
                "2",
                "--session-id",
                id,
            ])
            .arg("--frames")
            .arg(support::fixture("detector/images"))
            .env_remove("DISPLAY")
            .env("VISTAWISE_ORT_LIB", support::ort_lib())
            .env(
                "VISTAWISE_DETECTOR__MODEL",
                "tests/fixtures/detector/tiny-raw.onnx",
            )
            .env("VISTAWISE_SESSION__DIR", sessions.path())
            .output()
            .expect("run");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("step limit (2) reached"), "{text}");
        std::fs::read_to_string(sessions.path().join(id).join("session.jsonl")).expect("session")
    };
    let requests = || rt.block_on(server.received_requests()).expect("recording");
    let revisions = |reqs: &[wiremock::Request]| {
        reqs.iter()
            .filter(|r| {
                String::from_utf8_lossy(&r.body).contains("Outcome prediction from past experience")
            })
            .count()
    };
    play("a");
    let after_first = requests().len();
    let failures: Vec<Value> = db_of(dir.path())
        .list(Some("experiences"))
        .expect("list")
        .into_iter()
        .map(|e| e.data)
        .collect();
    assert!(!failures.is_empty());
    assert!(
        failures.iter().all(|d| d["success"] == json!(false)
            && d["plan"]
                .as_str()
                .is_some_and(|p| p.starts_with("mine_log("))),
        "{failures:?}"
    );
    let session = play("b");
    let all = requests();
    let second = &all[after_first..];
    let max = Config::builtin().memory.max_revisions as usize;
    assert!(revisions(second) >= 1, "the repeated failure was predicted");
    assert!(
        second.len() <= 2 * (1 + max),
        "at most {max} revisions a step: {} requests",
        second.len()
    );
    // The session records the revision's answers as attempts of the step.
    let step1: Value = session
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["prompt"].is_string())
        .expect("step");
    assert_eq!(
        step1["attempts"].as_array().expect("attempts").len(),
        1 + max,
        "{step1}"
    );
}

/// An open screen draws icons off the bag (the Minecraft client's recipe list): the memory's
/// inventory is what sits on bag slots, as the planner reads it, or every attempt made in that
/// screen "got" the recipe list's items (the closed loop's experiences said so).
#[test]
fn only_icons_on_bag_slots_are_the_inventory_the_memory_is_asked_about() {
    let p = parts("iron_ore");
    let mut perception = scripted::perception(&scripted::episodes()[0].steps[0]);
    let layout = p.profile.gui.layout(
        perception.frame_w,
        perception.frame_h,
        p.config.game.gui_scale,
    );
    let slot = layout.slot_center("hud.hotbar.3").expect("a hotbar slot");
    let icon = |class: &str, (x, y): (f32, f32)| vistawise::perception::InventoryIcon {
        class: class.into(),
        x,
        y,
        conf: 0.9,
        count: None,
    };
    perception.icons = vec![
        icon("log_icon", slot),
        // Beside the hotbar, on no slot of any screen.
        icon("cobblestone_icon", (60.0, 60.0)),
    ];
    let graph = pipeline::graph_view(&p, &perception);
    let query = pipeline::memory_query(&p, &perception, &graph);
    assert_eq!(
        query
            .inventory
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        ["Log"],
        "{query:?}"
    );
    assert!(
        query.state.starts_with("Inventory: Log."),
        "{}",
        query.state
    );
}
