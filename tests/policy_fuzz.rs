//! Fuzzing the answer reader (proptest): no answer may panic the parser or come out as an
//! action the skill library did not validate.

use crate::support;

use proptest::prelude::*;
use vistawise::config::GuiScale;
use vistawise::game::GameProfile;
use vistawise::policy::Attempt;
use vistawise::policy::validate_answer;
use vistawise::skills::InputEvent;

fn profile() -> GameProfile {
    GameProfile::load(&support::repo(), "minecraft").expect("profile")
}

/// Checks a validated action really is valid for the 1280x720 window.
fn assert_valid(profile: &GameProfile, answer: &str, json: bool) {
    let layout = profile.gui.layout(1280, 720, GuiScale::Auto);
    let ctx = profile.expand_context(&layout, 1280, 720);
    if let Ok(action) = validate_answer(answer, json, &profile.skills, &ctx) {
        let skill = profile
            .skills
            .get(&action.call.skill)
            .unwrap_or_else(|| panic!("unknown skill got through: {answer:?}"));
        assert_eq!(skill.params.len(), action.call.args.len(), "{answer:?}");
        for e in &action.events {
            if let InputEvent::MoveTo { x, y } = *e {
                assert!(
                    (0..1280).contains(&x) && (0..720).contains(&y),
                    "{answer:?}: {e:?}"
                );
            }
        }
    }
}

fn skill_names() -> Vec<String> {
    profile()
        .skills
        .names()
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Answers that look like actions: a known or made-up name and numbers of any size and sign.
fn action_like() -> impl Strategy<Value = String> {
    let names = skill_names();
    (
        prop_oneof![prop::sample::select(names), "[a-z_]{1,12}"],
        prop::collection::vec(
            prop_oneof![
                any::<f64>(),
                -5000.0..5000.0f64,
                (0..2000i64).prop_map(|v| v as f64)
            ],
            0..6,
        ),
        "[ \\t`*\"']{0,3}",
        "(.|\\n){0,40}",
    )
        .prop_map(|(name, args, wrap, before)| {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            format!("{before}\nAction: {wrap}{name}({}){wrap}", args.join(", "))
        })
}

/// What the session records of one answer (the attempt with its parsed call, as the LLM
/// policy writes it) must read back as written: a recorded session is never unreadable.
fn assert_round_trip(answer: &str) {
    for parsed in [
        vistawise::policy::action::parse_text(answer).ok(),
        vistawise::policy::action::parse_structured(answer)
            .ok()
            .map(|(c, _)| c),
    ] {
        let attempt = Attempt {
            answer: answer.to_string(),
            parsed,
            rejected: Some("x".into()),
        };
        let text = serde_json::to_string(&attempt).expect("serialise");
        let back: Attempt = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{answer:?} was written as {text} and reads back as {e}"));
        assert_eq!(back, attempt, "{answer:?}");
    }
}

/// Numbers as a model may write them, finite or not.
fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<f64>().prop_map(|v| v.to_string()),
        prop::sample::select(vec![
            "nan",
            "NaN",
            "inf",
            "-inf",
            "infinity",
            "-Infinity",
            "1e309",
            "-1e400",
            "1e-400",
            "\"nan\"",
        ])
        .prop_map(str::to_string),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn every_answer_the_recorder_writes_reads_back(
        name in prop::sample::select(skill_names()),
        numbers in prop::collection::vec(number_text(), 0..4),
        json in any::<bool>(),
        noise in "(.|\\n){0,30}",
    ) {
        let answer = if json {
            format!("{{\"skill\": \"{name}\", \"args\": [{}]}}", numbers.join(", "))
        } else {
            format!("{noise}\nAction: {name}({})", numbers.join(", "))
        };
        assert_round_trip(&answer);
        assert_round_trip(&noise);
    }

    #[test]
    fn arbitrary_text_never_panics_or_escapes_validation(answer in "(.|\\n){0,300}") {
        let p = profile();
        assert_valid(&p, &answer, false);
        assert_valid(&p, &answer, true);
    }

    #[test]
    fn action_shaped_text_is_validated(answer in action_like()) {
        assert_valid(&profile(), &answer, false);
    }

    #[test]
    fn json_shaped_answers_are_validated(
        name in prop::sample::select(skill_names()),
        values in prop::collection::vec(any::<f64>(), 0..5),
        keys in prop::collection::vec("[a-z_]{1,4}", 0..5),
    ) {
        let args: Vec<String> = keys
            .iter()
            .zip(&values)
            .map(|(k, v)| format!("\"{k}\": {}", serde_json::json!(v)))
            .collect();
        let answer = format!("{{\"reasoning\": \"r\", \"skill\": \"{name}\", \"args\": {{{}}}}}", args.join(", "));
        assert_valid(&profile(), &answer, true);
    }
}

#[test]
fn a_tiny_number_reads_back_to_the_bit() {
    // Found by the property above: without serde_json's exact float parsing this came back one
    // unit in the last place off.
    assert_round_trip(
        "Action: craft_plank(-0.00000000000000000000000000000000000000000000000000000000025438153360022943)",
    );
}
