use super::*;
use proptest::prelude::*;

fn templates() -> GroupIdSettings {
    GroupIdSettings::default()
}

fn direct(sender: Option<&str>) -> HookContext {
    HookContext {
        session_key: Some("agent:main:main".into()),
        agent_id: Some("main".into()),
        sender_id: sender.map(str::to_string),
        chat_type: ChatType::Direct,
        ..HookContext::default()
    }
}

fn group_session(chat: &str) -> String {
    format!("agent:main:telegram:group:{chat}")
}

/// A hook's context in a Telegram group, as OpenClaw gives it.
fn hook_in_group(chat: &str) -> HookContext {
    HookContext {
        session_key: Some(group_session(chat)),
        agent_id: Some("main".into()),
        sender_id: Some("alex".into()),
        chat_id: Some(chat.into()),
        channel: Some("telegram".into()),
        chat_type: ChatType::Group,
        ..HookContext::default()
    }
}

#[test]
fn a_tool_or_command_in_a_group_uses_its_turns_group() {
    let turn = group_id(&templates(), &hook_in_group("555")).unwrap();
    assert_eq!(turn, "main-group-555");
    // A tool's or command's context: a session key, a sender, no chat id and no agent id.
    let tool = HookContext {
        session_key: Some(group_session("555")),
        sender_id: Some("alex".into()),
        chat_type: ChatType::Group,
        ..HookContext::default()
    };
    assert_eq!(group_id(&templates(), &tool).unwrap(), turn);
    let other = HookContext {
        session_key: Some(group_session("556")),
        ..tool
    };
    assert_eq!(group_id(&templates(), &other).unwrap(), "main-group-556");
}

#[test]
fn an_unknown_sender_gets_its_sessions_own_group_never_a_shared_one() {
    let a = group_id(&templates(), &direct(None)).unwrap();
    assert!(a.starts_with("session-agent_main_main-"), "{a}");
    let mut other = direct(None);
    other.session_key = Some("agent:main:webchat:s2".into());
    let b = group_id(&templates(), &other).unwrap();
    assert_ne!(a, b);
    assert!(!a.contains("none") && !b.contains("none"));
}

#[test]
fn the_session_keys_peer_stands_in_for_a_missing_sender() {
    let mut ctx = direct(None);
    ctx.session_key = Some("agent:main:telegram:direct:alex".into());
    assert_eq!(group_id(&templates(), &ctx).unwrap(), "main-dm-alex");
}

#[test]
fn nothing_known_is_an_error_naming_what_is_missing() {
    let err = group_id(&templates(), &HookContext::default()).unwrap_err();
    assert!(
        err.contains("agent id and sender id are unknown, and so is its session"),
        "{err}"
    );
}

#[test]
fn session_keys_parse_as_openclaw_reads_them() {
    let cases = [
        (
            "agent:main:telegram:group:-100555",
            Some("telegram"),
            None,
            Some("-100555"),
        ),
        ("agent:main:direct:alex", None, Some("alex"), None),
        (
            "agent:ops:slack:acct1:channel:C0123",
            Some("slack"),
            None,
            Some("C0123"),
        ),
        (
            "agent:main:discord:dm:42",
            Some("discord"),
            Some("42"),
            None,
        ),
        (
            "agent:main:matrix:group:!room:example.org",
            Some("matrix"),
            None,
            Some("!room:example.org"),
        ),
        (
            "agent:main:telegram:group:-100555:topic:7",
            Some("telegram"),
            None,
            Some("-100555"),
        ),
        (
            "agent:main:slack:channel:C1:thread:1700.1",
            Some("slack"),
            None,
            Some("C1"),
        ),
        (
            "AGENT:Main:Telegram:Group:9",
            Some("Telegram"),
            None,
            Some("9"),
        ),
    ];
    for (key, channel, direct_peer, group_peer) in cases {
        let parsed = SessionKey::parse(key);
        assert_eq!(
            (parsed.channel, parsed.direct_peer, parsed.group_peer),
            (channel, direct_peer, group_peer),
            "{key}"
        );
    }
    for key in [
        "agent:main:main",
        "agent:main:telegram:group:",
        "main",
        "agent:main:cron:daily",
        "",
    ] {
        let parsed = SessionKey::parse(key);
        assert_eq!(
            (parsed.direct_peer, parsed.group_peer),
            (None, None),
            "{key}"
        );
    }
    assert_eq!(SessionKey::parse("agent:ops:main").agent, Some("ops"));
}

#[test]
fn lossy_cleaning_no_longer_merges_people() {
    let a = group_id(&templates(), &direct(Some("john.doe@example.com"))).unwrap();
    let b = group_id(&templates(), &direct(Some("john_doe@example.com"))).unwrap();
    assert_ne!(a, b);
    assert!(a.starts_with("main-dm-john_doe_example_com-"), "{a}");
    // A value cleaning leaves alone keeps the group it always had.
    assert_eq!(
        group_id(&templates(), &direct(Some("alex-42"))).unwrap(),
        "main-dm-alex-42"
    );
    let long = "x".repeat(130);
    let longer = format!("{long}y");
    assert_ne!(
        group_id(&templates(), &direct(Some(&long))).unwrap(),
        group_id(&templates(), &direct(Some(&longer))).unwrap()
    );
}

#[test]
fn a_value_that_looks_suffixed_is_suffixed_again() {
    let raw = "john.doe@example.com";
    let suffixed = clean_value(raw);
    assert_ne!(clean_value(&suffixed), suffixed);
    assert_eq!(
        clean_value("alex-0123456789abcdeg"),
        "alex-0123456789abcdeg"
    );
}

#[test]
fn typed_group_ids_are_checked() {
    assert_eq!(check_group_id("main-dm-alex"), Ok("main-dm-alex"));
    assert!(check_group_id("main dm").unwrap_err().contains("' '"));
    assert!(check_group_id("").is_err());
}

#[test]
fn the_legacy_formula_is_what_earlier_releases_wrote() {
    assert_eq!(
        legacy_group_id(&templates(), &direct(Some("john.doe@example.com"))),
        "main-dm-john_doe_example_com"
    );
    let tool = HookContext {
        session_key: Some(group_session("555")),
        chat_type: ChatType::Group,
        ..HookContext::default()
    };
    assert_eq!(legacy_group_id(&templates(), &tool), "none-group-none");
}

fn raw_value() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some("none".to_string())),
        Just(Some(String::new())),
        "[a-z._@-]{1,12}".prop_map(Some),
        "[A-Za-z0-9_-]{1,20}(-[0-9a-f]{16})?".prop_map(Some),
        "\\PC{1,8}".prop_map(Some),
        "[ab]{118,124}".prop_map(Some),
    ]
}

proptest! {
    /// Two different raw values, a missing one included, never share a group id: for a sender in
    /// a direct chat and for a chat in a group, with the rest of the conversation the same.
    #[test]
    fn distinct_values_never_share_a_group(a in raw_value(), b in raw_value(), in_group in any::<bool>()) {
        let blank = |v: &Option<String>| v.as_deref().is_none_or(|v| v.trim().is_empty());
        prop_assume!(a != b && !(blank(&a) && blank(&b)));
        let ctx = |value: &Option<String>| {
            let mut ctx = HookContext {
                session_key: Some("agent:main:webchat:x".into()),
                agent_id: Some("main".into()),
                chat_type: if in_group { ChatType::Group } else { ChatType::Direct },
                ..HookContext::default()
            };
            if in_group { ctx.chat_id = value.clone() } else { ctx.sender_id = value.clone() }
            ctx
        };
        let (ga, gb) = (group_id(&templates(), &ctx(&a)).unwrap(), group_id(&templates(), &ctx(&b)).unwrap());
        prop_assert_ne!(&ga, &gb);
        for g in [&ga, &gb] {
            prop_assert!(g.chars().all(is_group_char), "{}", g);
        }
    }
}

fn conversation(agent: &str, peer: Option<&str>, session: &str, in_group: bool) -> HookContext {
    let mut ctx = HookContext {
        session_key: Some(session.into()),
        agent_id: Some(agent.into()),
        chat_type: if in_group {
            ChatType::Group
        } else {
            ChatType::Direct
        },
        ..HookContext::default()
    };
    if in_group {
        ctx.chat_id = peer.map(str::to_string);
    } else {
        ctx.sender_id = peer.map(str::to_string);
    }
    ctx
}

#[test]
fn values_that_hold_a_templates_separator_no_longer_meet() {
    let a = conversation("main", Some("x-dm-y"), "s1", false);
    let b = conversation("main-dm-x", Some("y"), "s2", false);
    assert_eq!(
        previous_group_id(&templates(), &a),
        previous_group_id(&templates(), &b),
        "the rule before shared one group"
    );
    let (ga, gb) = (
        group_id(&templates(), &a).unwrap(),
        group_id(&templates(), &b).unwrap(),
    );
    assert_ne!(ga, gb);
    assert!(ga.starts_with("main-dm-x_dm_y-"), "{ga}");
    // Ids already unambiguous keep their group, dashes and all.
    for sender in ["alex-42", "user-1", "u-17", "john_doe", "a-b-c"] {
        let ctx = conversation("main", Some(sender), "s", false);
        assert_eq!(
            group_id(&templates(), &ctx).unwrap(),
            format!("main-dm-{sender}")
        );
        assert_eq!(
            group_id(&templates(), &ctx),
            previous_group_id(&templates(), &ctx)
        );
    }
}

/// Values made of pieces of the default templates' own separators (and the session's), so that
/// values which could be read into them, or them into values, are common.
fn separator_value() -> impl Strategy<Value = String> {
    let piece = proptest::sample::select(vec![
        "a", "b", "dm", "group", "session", "-", "_", "-dm-", "-group-", "dm-", "-dm", "group-",
        "-group", "session-", "roup-", "-gro",
    ]);
    proptest::collection::vec(piece, 1..5).prop_map(|pieces| pieces.concat())
}

proptest! {
    /// Conversations that differ in any value the templates read (agent, sender or chat, direct
    /// or group, or the session of one whose peer is unknown) never share a group, however their
    /// values hold the templates' separators: among 64 at once, no two keys meet.
    #[test]
    fn conversations_never_share_a_group_whatever_their_values_hold(
        many in proptest::collection::vec(
            (separator_value(), proptest::option::of(separator_value()), separator_value(), any::<bool>()),
            64,
        ),
    ) {
        let mut seen = std::collections::HashMap::new();
        for (agent, peer, session, in_group) in many {
            let key = match &peer {
                Some(peer) => (in_group, Some(agent.clone()), Some(peer.clone()), None),
                None => (false, None, None, Some(session.clone())),
            };
            let id = group_id(&templates(), &conversation(&agent, peer.as_deref(), &session, in_group)).unwrap();
            if let Some(other) = seen.insert(id.clone(), key.clone()) {
                prop_assert_eq!(&other, &key, "{} is the group of both", id);
            }
        }
    }
}
