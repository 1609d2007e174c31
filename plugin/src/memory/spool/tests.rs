use super::depth::{LISTED_DEPTH_FILE, RECOUNT_NEAR_FULL};
use super::*;

fn episode(name: &str) -> Episode {
    Episode {
        name: name.into(),
        group_id: "g".into(),
        user: "q".into(),
        assistant: "a".into(),
        user_name: None,
        reference_time: "2026-01-01T00:00:00Z".into(),
        source_description: "test".into(),
        kind: Default::default(),
    }
}

fn temp(label: &str) -> tempfile::TempDir {
    crate::platform::files::temp_dir(&format!("spool-unit-{label}"))
}

fn names(spool: &Spool, state: State) -> Vec<String> {
    spool
        .in_state(state)
        .unwrap()
        .iter()
        .map(|e| spool.read(e).unwrap().name)
        .collect()
}

#[test]
fn keeps_order_bounds_and_journals() {
    let dir_temp = temp("order");
    let dir = dir_temp.path();
    let spool = Spool::new(dir);
    for i in 0..3 {
        assert_eq!(
            spool.append(&episode(&format!("e{i}")), 3).unwrap(),
            Appended::Spooled
        );
    }
    assert_eq!(spool.append(&episode("e3"), 3).unwrap(), Appended::Full(3));
    assert_eq!(names(&spool, State::Waiting), ["e0", "e1", "e2"]);
    spool.mark_acked("e0").unwrap();
    let acked = spool.acked();
    assert!(acked.contains("e0") && !acked.contains("e1"));
}

#[test]
fn states_move_by_rename_and_set_aside_entries_requeue_in_order() {
    let dir_temp = temp("states");
    let dir = dir_temp.path();
    let spool = Spool::new(dir);
    for name in ["a", "b", "c"] {
        spool.append(&episode(name), 10).unwrap();
    }
    let entries = spool.entries().unwrap();
    spool
        .set_aside(&entries[0], State::Rejected, "HTTP 422", 1)
        .unwrap();
    spool
        .set_aside(&entries[1], State::Rejected, "HTTP 400", 2)
        .unwrap();
    let doubt = spool.put_in_doubt(&entries[2], 3).unwrap();
    assert_eq!(spool.meta(&doubt.stem).in_doubt_since_ms, Some(3));
    assert_eq!(spool.depth(), 1, "set-aside entries do not count");
    assert_eq!(
        spool.requeue_set_aside().unwrap(),
        Requeued {
            total: 2,
            unconfirmed: 0
        }
    );
    // Back at the end of the queue, behind the in-doubt entry, in their original order.
    let order: Vec<String> = spool
        .entries()
        .unwrap()
        .iter()
        .map(|e| spool.read(e).unwrap().name)
        .collect();
    assert_eq!(order, ["c", "a", "b"]);
    let requeued = spool.in_state(State::Waiting).unwrap();
    let meta = spool.meta(&requeued[0].stem);
    assert_eq!(
        (meta.set_aside_times, meta.set_aside_reason.as_deref()),
        (1, Some("HTTP 422"))
    );
}

#[test]
fn an_unconfirmed_entry_is_kept_aside_out_of_the_queue_until_requeued() {
    let dir_temp = temp("unconfirmed");
    let dir = dir_temp.path();
    let spool = Spool::new(dir);
    spool.append(&episode("u"), 10).unwrap();
    let doubt = spool.put_in_doubt(&spool.entries().unwrap()[0], 5).unwrap();
    spool
        .set_aside(&doubt, State::Unconfirmed, "could not confirm", 6)
        .unwrap();
    assert_eq!(names(&spool, State::Unconfirmed), ["u"]);
    assert!(
        dir.join("spool")
            .join(format!("{}.unconfirmed", doubt.stem))
            .exists()
    );
    assert_eq!(
        spool.depth(),
        0,
        "neither waiting nor in doubt: never sent by itself"
    );
    assert_eq!(spool.meta(&doubt.stem).times_in_doubt, 1);
    assert_eq!(
        spool.requeue_set_aside().unwrap(),
        Requeued {
            total: 1,
            unconfirmed: 1
        }
    );
    let requeued = spool.in_state(State::Waiting).unwrap();
    let meta = spool.meta(&requeued[0].stem);
    assert_eq!(
        (meta.times_in_doubt, meta.set_aside_reason.as_deref()),
        (1, Some("could not confirm")),
        "it goes again with the longer timeout of a send once in doubt"
    );
}

#[test]
fn a_group_seen_unlisted_is_kept_until_forgotten() {
    let dir_temp = temp("unlisted");
    let dir = dir_temp.path();
    let spool = Spool::new(dir);
    assert_eq!(spool.unlisted(), None);
    fs::create_dir_all(dir.join("spool")).unwrap();
    let seen = Unlisted {
        group_id: "chat-1".into(),
        at_ms: 7,
    };
    spool.save_unlisted(&seen).unwrap();
    assert_eq!(spool.unlisted(), Some(seen));
    spool.forget_unlisted();
    assert_eq!(spool.unlisted(), None);
}

#[test]
fn an_unreadable_journal_line_costs_only_itself() {
    let dir_temp = temp("journal");
    let dir = dir_temp.path();
    let spool = Spool::new(dir);
    fs::create_dir_all(dir.join("spool")).unwrap();
    fs::write(dir.join("spool/acked.log"), b"e1\n\xff\xfe torn\ne2").unwrap();
    spool.mark_acked("e3").unwrap();
    let acked = spool.acked();
    assert_eq!(acked.unreadable_lines, 1);
    for name in ["e1", "e2", "e3"] {
        assert!(acked.contains(name), "{name}");
    }
}

#[test]
fn a_journal_look_up_answers_the_same_searched_and_indexed() {
    let dir_temp = temp("journal-lookups");
    let dir = dir_temp.path();
    let spool = Spool::new(dir);
    fs::create_dir_all(dir.join("spool")).unwrap();
    // A first line without a line feed before it, a last one without one after it, a torn line.
    fs::write(
        dir.join("spool/acked.log"),
        b"e1\ne10\n\ne2 torn\n\xffe3\ne4",
    )
    .unwrap();
    let acked = spool.acked();
    assert_eq!(acked.unreadable_lines, 2);
    let asked = [
        ("e1", true),
        ("e10", true),
        ("e4", true),
        ("e", false),
        ("e2", false),
        ("e3", false),
        ("e2 torn", false),
        ("1\ne10", false),
        ("", false),
    ];
    // The first look-ups search the text, the later ones use the index: the same answers.
    for round in 0..4 {
        for (name, want) in asked {
            assert_eq!(acked.contains(name), want, "{name:?} in round {round}");
        }
    }
}

#[test]
fn the_journal_is_trimmed_to_its_latest_names_well_below_its_trim_size() {
    let dir_temp = temp("journal-trim");
    let dir = dir_temp.path();
    let spool = Spool::new(dir);
    let journal = dir.join("spool/acked.log");
    fs::create_dir_all(dir.join("spool")).unwrap();
    // Long names: fewer than ACKED_KEPT of them fit in half the trim size.
    let name = |i: usize| format!("openclaw-{}-{i:08}", "g".repeat(80));
    let (mut acked, mut largest, mut trims, mut last) = (0, 0, 0, 0);
    while acked < 3 * super::ACKED_TRIM_BYTES as usize / 92 {
        spool.mark_acked(&name(acked)).unwrap();
        acked += 1;
        let size = fs::metadata(&journal).unwrap().len();
        if size < last {
            trims += 1;
            assert!(size <= super::ACKED_TRIM_BYTES / 2, "trimmed to {size}");
        }
        (largest, last) = (largest.max(size), size);
    }
    assert!(
        largest <= super::ACKED_TRIM_BYTES + 93,
        "bounded: {largest}"
    );
    assert!(
        (4..=6).contains(&trims),
        "{trims} trims in {acked} acknowledgements"
    );
    let journal = spool.acked();
    assert_eq!(journal.unreadable_lines, 0);
    assert!(journal.contains(&name(acked - 1)) && journal.contains(&name(acked - 1_000)));
    assert!(!journal.contains(&name(0)), "the oldest are dropped");
}

#[test]
fn backoff_doubles_up_to_the_cap() {
    let delays: Vec<u64> = (1..=6).map(|f| backoff_delay_ms(f, 1000, 10_000)).collect();
    assert_eq!(delays, [1000, 2000, 4000, 8000, 10_000, 10_000]);
}

#[test]
fn a_known_depth_is_used_only_while_the_spool_is_unchanged() {
    let dir_temp = temp("known-depth");
    let dir = dir_temp.path();
    let (mine, theirs) = (Spool::new(dir), Spool::new(dir));
    let mut known = None;
    let max = RECOUNT_NEAR_FULL + 4;
    // This instance and another one append in turn: each of the other's entries is counted.
    for i in 0..max {
        let (spool, known) = if i % 2 == 0 {
            (&mine, &mut known)
        } else {
            (&theirs, &mut None)
        };
        assert_eq!(
            spool
                .append_counted(&episode(&format!("e{i}")), max, known)
                .unwrap(),
            Appended::Spooled,
            "entry {i}"
        );
    }
    assert_eq!(mine.depth(), max);
    assert_eq!(
        mine.append_counted(&episode("one more"), max, &mut known)
            .unwrap(),
        Appended::Full(max)
    );
    // Far from the maximum, the depth this instance counted is carried from append to append.
    let mut known = None;
    let roomy = 1000;
    for i in 0..3 {
        mine.append_counted(&episode(&format!("f{i}")), roomy, &mut known)
            .unwrap();
    }
    assert_eq!(known.map(|k| k.depth), Some(max + 3));
    // Another process sends one entry: the directory changed, so the depth is counted again.
    let first = mine.entries().unwrap().remove(0);
    theirs.forget(&first).unwrap();
    mine.append_counted(&episode("g"), roomy, &mut known)
        .unwrap();
    assert_eq!(known.map(|k| k.depth), Some(max + 3));
    assert_eq!(mine.depth(), max + 3);
}

#[test]
fn a_listings_depth_spares_the_next_append_a_count() {
    let dir_temp = temp("listed-depth");
    let spool = Spool::new(dir_temp.path());
    for name in ["a", "b", "c"] {
        spool.append(&episode(name), 100).unwrap();
    }
    let entries = spool.entries().unwrap();
    spool.put_in_doubt(&entries[0], 1).unwrap();
    spool
        .set_aside(&entries[1], State::Rejected, "HTTP 422", 2)
        .unwrap();
    let (listed, mut known) = spool.entries_with_depth().unwrap();
    assert_eq!(listed.len(), 3);
    let depth = known.expect("the directory has a stamp");
    assert_eq!(
        depth.depth, 2,
        "the in-doubt entry counts, the rejected one does not"
    );
    assert_eq!(
        Some(depth.stamp),
        crate::platform::files::stamp(&spool.dir).unwrap()
    );
    // A depth no count would give: the append must have taken it from the listing, not counted.
    known.as_mut().unwrap().depth = 40;
    spool
        .append_counted(&episode("d"), 100, &mut known)
        .unwrap();
    assert_eq!(known.map(|k| k.depth), Some(41));
}

#[test]
fn an_instance_that_takes_turns_uses_the_senders_listed_depth_or_counts() {
    let dir_temp = temp("shared-depth");
    let spool = Spool::new(dir_temp.path());
    for name in ["a", "b"] {
        spool.append(&episode(name), 100).unwrap();
    }
    // The sender's pass: a listing, kept with a depth no count would give.
    let (_, listed) = spool.entries_with_depth().unwrap();
    let planted = Depth {
        depth: 40,
        ..listed.unwrap()
    };
    spool.save_listed_depth(&planted).unwrap();
    let mut known = None;
    spool
        .append_counted(&episode("c"), 100, &mut known)
        .unwrap();
    assert_eq!(
        known.map(|k| k.depth),
        Some(41),
        "taken from the sender's listing"
    );

    // Unreadable, or for another state of the directory (a file's stamp is never a directory's): counted.
    let path = dir_temp.path().join(LISTED_DEPTH_FILE);
    let stale = Depth {
        stamp: crate::platform::files::stamp(&path).unwrap().unwrap(),
        ..planted
    };
    for kept in [b"{not json".to_vec(), serde_json::to_vec(&stale).unwrap()] {
        std::fs::write(&path, kept).unwrap();
        let mut known = None;
        spool
            .append_counted(&episode("d"), 100, &mut known)
            .unwrap();
        let counted = spool.depth();
        assert_eq!(known.map(|k| k.depth), Some(counted));
    }
}
