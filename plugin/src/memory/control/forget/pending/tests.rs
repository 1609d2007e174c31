use super::store::{MAX_FILE_BYTES, file_stem};
use super::*;
use crate::memory::control::forget::{Candidate, Kind};
use crate::platform::locks::Unshared;

fn capture(stem: &str, chosen: bool) -> Candidate {
    Candidate {
        kind: Kind::Capture,
        id: stem.into(),
        shown: "My therapist moved".into(),
        matched: vec!["therapist".into()],
        chosen,
        name: Some(format!("openclaw-{stem}")),
    }
}

fn fact(uuid: &str, chosen: bool) -> Candidate {
    Candidate {
        kind: Kind::Fact,
        id: uuid.into(),
        shown: "Ana sees a therapist".into(),
        matched: vec!["therapist".into()],
        chosen,
        name: None,
    }
}

fn proposal_in(group: &str, sender: &str, query: &str, created_ms: u64) -> Proposal {
    Proposal {
        id: String::new(),
        created_ms,
        group: group.into(),
        sender: Some(sender.into()),
        session: Some(format!("agent:main:telegram:direct:{sender}")),
        query: Some(query.into()),
        words: 1,
        candidates: vec![
            fact("f1", true),
            capture(&format!("stem-{group}"), true),
            fact("f2", false),
        ],
        whole_groups: vec![],
        chosen_by_id: false,
        accepted_until: None,
        unsearched: None,
    }
}

fn proposal(created_ms: u64) -> Proposal {
    proposal_in("dm-ana", "ana", "therapist", created_ms)
}

fn chat<'a>(group: &str, sender: Option<&'a str>) -> Confirmer<'a> {
    Confirmer::Chat {
        group: Ok(group.into()),
        sender,
        session: Some("agent:main:telegram:direct:ana"),
    }
}

#[test]
fn only_its_sender_in_its_chat_confirms_it_once_before_it_expires() {
    let dir = tempfile::tempdir().unwrap();
    let p = propose(dir.path(), proposal(1_000), &mut Unshared)
        .unwrap()
        .proposal;
    assert_eq!(p.id.len(), super::super::ID_HEX_DIGITS);
    let other_sender = take(
        dir.path(),
        &p.id,
        &chat("dm-ana", Some("bob")),
        2_000,
        &mut Unshared,
    );
    let other_sender = other_sender.unwrap_err();
    assert!(matches!(other_sender, ControlError::NotYours(_)));
    assert!(other_sender.to_string().contains("someone else"));
    let other_chat = take(
        dir.path(),
        &p.id,
        &chat("dm-bob", Some("ana")),
        2_000,
        &mut Unshared,
    );
    let other_chat = other_chat.unwrap_err();
    assert!(matches!(other_chat, ControlError::NotYours(_)));
    assert!(other_chat.to_string().contains("another chat"));
    let upper = p.id.to_ascii_uppercase();
    let taken = take(
        dir.path(),
        &upper,
        &chat("dm-ana", Some("ana")),
        2_000,
        &mut Unshared,
    );
    assert_eq!(taken.unwrap().candidates, p.candidates);
    let replayed = take(
        dir.path(),
        &p.id,
        &chat("dm-ana", Some("ana")),
        2_000,
        &mut Unshared,
    );
    let replayed = replayed.unwrap_err();
    assert!(matches!(replayed, ControlError::NotFound(_)));
    assert!(replayed.to_string().contains("no forget"));

    let late = propose(dir.path(), proposal(5_000), &mut Unshared)
        .unwrap()
        .proposal;
    let expired = take(
        dir.path(),
        &late.id,
        &Confirmer::Operator,
        late.expires_ms(),
        &mut Unshared,
    );
    let expired = expired.unwrap_err();
    assert!(matches!(expired, ControlError::NotFound(_)));
    assert!(expired.to_string().contains("expired"));
}

#[test]
fn a_proposal_without_a_sender_is_the_operators_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = proposal(1_000);
    p.sender = None;
    let p = propose(dir.path(), p, &mut Unshared).unwrap().proposal;
    assert!(
        take(
            dir.path(),
            &p.id,
            &chat("dm-ana", None),
            2_000,
            &mut Unshared
        )
        .is_err()
    );
    assert!(
        take(
            dir.path(),
            &p.id,
            &Confirmer::Operator,
            2_000,
            &mut Unshared
        )
        .is_ok()
    );
}

#[test]
fn ten_thousand_proposals_of_a_thousand_senders_cancel_no_other_chats_forget() {
    let dir = tempfile::tempdir().unwrap();
    let victim = propose(
        dir.path(),
        proposal_in("main-dm-victim", "victim", "therapist", 1_000),
        &mut Unshared,
    )
    .unwrap()
    .proposal;
    let mut refused_in_chat = 0;
    let mut refused_full = 0;
    for sender in 0..1_000 {
        for n in 0..10 {
            let group = format!("main-dm-attacker-{sender}");
            let attack = proposal_in(
                &group,
                &format!("attacker-{sender}"),
                &format!("cats {n}"),
                2_000 + n,
            );
            match propose(dir.path(), attack, &mut Unshared).map_err(|e| e.to_string()) {
                Ok(_) => {}
                Err(why) if why.contains("already waiting in this chat") => refused_in_chat += 1,
                Err(why) if why.contains("as many as are kept") => refused_full += 1,
                Err(why) => panic!("refused for another reason: {why}"),
            }
        }
        if sender % 100 != 99 {
            continue;
        }
        let held = held(dir.path(), 3_000);
        assert_eq!(
            held.until("stem-main-dm-victim", Some("main-dm-victim")),
            Some(victim.expires_ms()),
            "the victim's capture was released after sender {sender}"
        );
    }
    let waiting_chats = MAX_WAITING_GROUPS - 1;
    assert_eq!(
        refused_in_chat,
        waiting_chats * (10 - MAX_PER_GROUP),
        "each chat past its own cap"
    );
    assert_eq!(
        refused_full,
        (1_000 - waiting_chats) * 10,
        "every proposal of a chat past the store's cap"
    );
    let store = dir.path().join("memory/forget-pending");
    let files: Vec<_> = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap())
        .collect();
    let json = files
        .iter()
        .filter(|f| f.file_name().to_string_lossy().ends_with(".json"))
        .count();
    assert_eq!(json, MAX_WAITING_GROUPS, "the store stays within its bound");
    for file in &files {
        assert!(
            file.metadata().unwrap().len() <= MAX_FILE_BYTES,
            "{:?}",
            file.path()
        );
    }
    let confirmer = Confirmer::Chat {
        group: Ok("main-dm-victim".into()),
        sender: Some("victim"),
        session: Some("agent:main:telegram:direct:victim"),
    };
    let taken = take(dir.path(), &victim.id, &confirmer, 3_000, &mut Unshared).unwrap();
    assert_eq!(taken.id, victim.id);
    // Once they lapse, the attackers' files make room again.
    let later = proposal_in(
        "main-dm-late",
        "late",
        "cats",
        2_010 + super::EXPIRES_AFTER_MS,
    );
    assert!(propose(dir.path(), later, &mut Unshared).is_ok());
}

#[test]
fn a_truncated_store_holds_its_chats_captures_until_its_proposals_would_have_lapsed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = propose(dir.path(), proposal(1_000), &mut Unshared)
        .unwrap()
        .proposal;
    let other = propose(
        dir.path(),
        proposal_in("dm-bob", "bob", "cats", 1_000),
        &mut Unshared,
    )
    .unwrap()
    .proposal;
    let file = dir.path().join("memory/forget-pending/dm-ana.json");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();

    let held_now = held(dir.path(), 2_000);
    assert!(
        held_now
            .until("any-capture-of-ana", Some("dm-ana"))
            .is_some(),
        "every capture of the chat is held"
    );
    assert!(
        held_now
            .until("any-capture-of-carl", Some("dm-carl"))
            .is_none(),
        "other chats are not"
    );
    assert_eq!(
        held_now.until("stem-dm-bob", Some("dm-bob")),
        Some(other.expires_ms())
    );
    let said = summary(dir.path(), 2_000);
    assert!(
        said.troubles
            .iter()
            .any(|t| t.contains("dm-ana.json cannot be read")),
        "{said:?}"
    );

    let notes = set_aside_unreadable(dir.path(), 2_000, &mut Unshared);
    assert!(notes.iter().any(|n| n.contains("set aside")), "{notes:?}");
    assert!(!file.exists());
    let aside = summary(dir.path(), 2_000);
    assert!(
        aside
            .troubles
            .iter()
            .any(|t| t.contains("dm-ana.unreadable-2000") && t.contains("held until")),
        "{aside:?}"
    );
    let until = 2_000 + super::EXPIRES_AFTER_MS;
    assert_eq!(
        held(dir.path(), until - 1).until("x", Some("dm-ana")),
        Some(until)
    );
    assert!(
        held(dir.path(), until).until("x", Some("dm-ana")).is_none(),
        "the hold lapses with what it held"
    );
    assert!(victim.expires_ms() < until);
    let confirm = take(
        dir.path(),
        &victim.id,
        &chat("dm-ana", Some("ana")),
        2_500,
        &mut Unshared,
    );
    let confirm = confirm.unwrap_err();
    assert!(matches!(confirm, ControlError::NotFound(_)));
    assert!(confirm.to_string().contains("no forget"));
}

#[test]
fn a_special_file_or_a_file_for_the_store_holds_everything_and_is_set_aside() {
    let dir = tempfile::tempdir().unwrap();
    let memory = dir.path().join("memory");
    std::fs::create_dir_all(&memory).unwrap();
    std::fs::write(memory.join("forget-pending"), "not a directory").unwrap();
    assert!(
        held(dir.path(), 10).until("x", Some("g")).is_some(),
        "a store that is no directory holds every capture"
    );
    let proposed = propose(dir.path(), proposal(20), &mut Unshared).unwrap();
    assert!(
        proposed.notes.iter().any(|n| n.contains("not a directory")),
        "{:?}",
        proposed.notes
    );
    assert_eq!(
        held(dir.path(), 30).until("x", Some("g")),
        Some(20 + super::EXPIRES_AFTER_MS)
    );
    assert!(memory.join("forget-pending.unreadable-20").exists());

    let special = dir.path().join("memory/forget-pending/dm-carl.json");
    std::fs::create_dir_all(&special).unwrap();
    assert!(held(dir.path(), 40).until("x", Some("dm-carl")).is_some());
}

#[test]
fn an_earlier_releases_single_file_is_moved_or_holds_everything() {
    let dir = tempfile::tempdir().unwrap();
    let memory = dir.path().join("memory");
    std::fs::create_dir_all(&memory).unwrap();
    let old = r#"{"proposals": [{"id": "0123456789abcdef", "created_ms": 1000, "group": "dm-ana",
        "sender": "ana", "session": "agent:main:telegram:direct:ana", "query": "therapist",
        "facts": [{"uuid": "f1", "shown": "Ana sees a therapist"}], "episodes": [],
        "spooled": ["stem-1"], "whole_groups": [], "chosen_by_id": false, "accepted": ["a1", "a2"]}]}"#;
    std::fs::write(memory.join("forget-pending.json"), old).unwrap();
    assert_eq!(
        held(dir.path(), 2_000).until("stem-1", None),
        Some(1_000 + super::EXPIRES_AFTER_MS)
    );
    let taken = take(
        dir.path(),
        "0123456789abcdef",
        &chat("dm-ana", Some("ana")),
        2_000,
        &mut Unshared,
    )
    .unwrap();
    assert_eq!(taken.accepted_until.as_deref(), Some("a2"));
    assert_eq!(taken.chosen(Kind::Fact).count(), 1);
    assert!(!memory.join("forget-pending.json").exists());

    std::fs::write(memory.join("forget-pending.json"), &old[..40]).unwrap();
    assert!(held(dir.path(), 3_000).until("x", Some("g")).is_some());
    propose(dir.path(), proposal(3_000), &mut Unshared).unwrap();
    assert_eq!(
        held(dir.path(), 3_500).until("x", Some("g")),
        Some(3_000 + super::EXPIRES_AFTER_MS)
    );
}

#[test]
fn items_are_left_out_and_added_back_by_their_number() {
    let dir = tempfile::tempdir().unwrap();
    let p = propose(dir.path(), proposal(1_000), &mut Unshared)
        .unwrap()
        .proposal;
    let me = chat("dm-ana", Some("ana"));
    let edited = edit(dir.path(), &p.id, &me, (&[2], &[3]), 1_500, &mut Unshared).unwrap();
    let chosen: Vec<bool> = edited.candidates.iter().map(|c| c.chosen).collect();
    assert_eq!(chosen, [true, false, true]);
    assert!(
        held(dir.path(), 1_600)
            .until("stem-dm-ana", Some("dm-ana"))
            .is_none(),
        "a capture left out is not held"
    );
    let bad = edit(dir.path(), &p.id, &me, (&[4], &[]), 1_500, &mut Unshared).unwrap_err();
    assert!(matches!(bad, ControlError::NotFound(_)), "{bad}");
    let bad = bad.to_string();
    assert!(bad.contains("no item 4") && bad.contains("1 to 3"), "{bad}");
    let both = edit(dir.path(), &p.id, &me, (&[1], &[1]), 1_500, &mut Unshared).unwrap_err();
    assert!(matches!(both, ControlError::Refused(_)), "{both}");
    assert!(both.to_string().contains("both"), "{both}");
    let stranger = edit(
        dir.path(),
        &p.id,
        &chat("dm-ana", Some("bob")),
        (&[1], &[]),
        1_500,
        &mut Unshared,
    );
    let stranger = stranger.unwrap_err();
    assert!(matches!(stranger, ControlError::NotYours(_)));
    assert!(stranger.to_string().contains("someone else"));
    let taken = take(dir.path(), &p.id, &me, 1_700, &mut Unshared).unwrap();
    assert_eq!(taken.candidates.iter().filter(|c| c.chosen).count(), 2);
}

#[test]
fn groups_that_differ_only_in_case_keep_files_apart() {
    assert_ne!(file_stem("main-dm-Ana"), file_stem("main-dm-ana"));
    assert_eq!(file_stem("main-dm-ana"), "main-dm-ana");
    assert!(file_stem(&"g".repeat(200)).starts_with('~'));
}

#[test]
fn the_same_request_again_replaces_the_persons_own_earlier_proposal() {
    let dir = tempfile::tempdir().unwrap();
    let first = propose(dir.path(), proposal(1_000), &mut Unshared)
        .unwrap()
        .proposal;
    let again = propose(dir.path(), proposal(2_000), &mut Unshared).unwrap();
    assert_eq!(again.replaced.as_deref(), Some(first.id.as_str()));
    assert!(
        take(
            dir.path(),
            &first.id,
            &chat("dm-ana", Some("ana")),
            2_500,
            &mut Unshared
        )
        .is_err()
    );
    assert!(
        take(
            dir.path(),
            &again.proposal.id,
            &chat("dm-ana", Some("ana")),
            2_500,
            &mut Unshared
        )
        .is_ok()
    );
}
