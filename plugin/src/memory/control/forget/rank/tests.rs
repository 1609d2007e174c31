use super::*;
use serde_json::json;

/// One chat's memories: facts (two carried by episodes), episodes as the MCP server stores a turn,
/// and a capture not yet sent.
fn chat() -> (Vec<Value>, Vec<Value>, Vec<SpooledCapture>) {
    let facts = vec![
        json!({"uuid": "f-seat", "fact": "Ana prefers window seats on long flights", "name": "PREFERS", "episodes": ["e-seat"]}),
        json!({"uuid": "f-window", "fact": "Ana broke a kitchen window in 2019", "name": "BROKE"}),
        json!({"uuid": "f-dana", "fact": "Ana had lunch with Dana Lee on Friday", "name": "HAD_LUNCH_WITH"}),
        json!({"uuid": "f-weather", "fact": "The assistant said rain is expected in Lisbon", "name": "SAID"}),
        json!({"uuid": "f-lisbon", "fact": "Ana lives in Lisbon", "name": "LIVES_IN"}),
    ];
    let episodes = vec![
        json!({"uuid": "e-seat", "name": "openclaw-g-1", "content": "ana(user): Book me a window seat please\nassistant(assistant): Done, a window seat."}),
        json!({"uuid": "e-weather", "name": "openclaw-g-2", "content": "ana(user): Will I need an umbrella?\nassistant(assistant): The weather says rain tomorrow."}),
        json!({"uuid": "e-hello", "name": "openclaw-g-3", "content": "ana(user): Hello assistant, it's Ana\nassistant(assistant): Hello Ana!"}),
    ];
    let captures = vec![SpooledCapture {
        stem: "s1".into(),
        name: "openclaw-g-4".into(),
        text: "Therapists are expensive in Lisbon\nNoted.".into(),
    }];
    (facts, episodes, captures)
}

fn ids(ranked: &Ranked, chosen: bool) -> Vec<&str> {
    ranked
        .candidates
        .iter()
        .filter(|c| c.chosen == chosen)
        .map(|c| c.id.as_str())
        .collect()
}

#[test]
fn a_table_of_requests_proposes_what_they_mean_and_lists_the_weaker_apart() {
    let (facts, episodes, captures) = chat();
    // (request, proposed, left out as weaker)
    let table: &[(&str, &[&str], &[&str])] = &[
        ("window seats", &["f-seat", "e-seat"], &["f-window"]),
        (
            "what my assistant said about the weather",
            &["e-weather"],
            &[],
        ),
        ("everything Ana told the user", &[], &[]),
        ("Dana Lee", &["f-dana"], &[]),
        ("lunch with Dana", &["f-dana"], &[]),
        ("therapist", &["s1"], &[]),
        ("Lisbon therapists", &["s1"], &["f-weather", "f-lisbon"]),
    ];
    for (query, proposed, weaker) in table {
        let request = Request::of(query, &["ana"]);
        let ranked = rank(&request, &facts, &episodes, &captures);
        assert_eq!(&ids(&ranked, true), proposed, "proposed for {query:?}");
        assert_eq!(&ids(&ranked, false), weaker, "left out for {query:?}");
    }
}

#[test]
fn the_best_matches_come_first_and_the_rest_are_counted() {
    let (facts, episodes, captures) = chat();
    let request = Request::of("Ana's window seat", &["ana"]);
    let ranked = rank(&request, &facts, &episodes, &captures);
    assert_eq!(ranked.candidates[0].id, "f-seat");
    assert_eq!(ranked.candidates[0].matched, ["window", "seat"]);
    assert_eq!(
        ranked.unmatched, 3,
        "facts that share no word are counted, not listed"
    );
}
