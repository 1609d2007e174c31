//! The compiled-component cache never runs code another user could have put there (issue 9,
//! defect 1). An entry is deserialized, and so executed, only from a regular file this user owns, that
//! no one else can write, in a directory likewise, whose ancestors up to `/` are the user's or root's
//! and writable by no one else (sticky ones such as /tmp excepted).
//!
//! Out of scope, on purpose: an edit by the same user. Whoever runs as you can already replace the
//! wasm or the shim itself, and a forged entry in your own private cache still loads (the checksum
//! only catches corruption); no test here pretends otherwise. The forgeries below are checked to be
//! well-formed by loading one from a private cache, so the other tests cannot pass because the forgery
//! was broken.
//!
//! "Another user" is uid 65534: the tests run as root and `chown` files to it.


use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use host_shim::{CacheOutcome, Command, Shim};
use crate::support::{
    TempDir, as_root, example_config, give_to_another_user, mode, plugin_wasm, probe_wasm,
    set_mode, shim_with_cache, temp_dir,
};

/// The payload, then a trailer: the wasm's digest (32 bytes) and file identity (40), key (32),
/// xxh3-128 of the payload (16), magic (8).
const TRAILER_LEN: usize = 32 + 40 + 32 + 16 + 8;
const CHECKSUM_AT: usize = TRAILER_LEN - 16 - 8;

/// The payload of the entry at `file`.
fn payload_of(file: &Path) -> Vec<u8> {
    let mut entry = std::fs::read(file).unwrap();
    entry.truncate(entry.len() - TRAILER_LEN);
    entry
}
const ECHO: &[u8] = b"echo: ";
const PATCHED: &[u8] = b"PWNED:";

fn echo(shim: &mut Shim, text: &str) -> String {
    let injection = shim.before_agent_start(
        &host_shim::PromptEvent {
            prompt: text.into(),
            messages_json: "[]".into(),
        },
        &host_shim::HookContext {
            session_key: Some("test".into()),
            session_id: None,
            agent_id: None,
            sender_id: None,
            sender_name: None,
            chat_id: None,
            channel: None,
            chat_type: host_shim::ChatType::Direct,
            trigger: Some("user".into()),
            run_id: None,
            input_provenance: None,
        },
    );
    injection
        .prepend_context
        .unwrap_or_else(|| panic!("no answer: {:?}", injection.notes))
}

/// The outcome as text: `Untrusted { reason: ".." }`, `Recompiled { reason: ".." }`, `Hit`, `Miss`.
fn described(shim: &Shim) -> String {
    format!("{:?}", shim.cache_outcome())
}

/// Replaces `payload` of the entry at `file` and recomputes the checksum, as someone who read the
/// format would; the key is kept, so the entry still claims to be this wasm's.
fn forge(file: &Path, payload: &[u8]) {
    let entry = std::fs::read(file).unwrap();
    let trailer = &entry[entry.len() - TRAILER_LEN..];
    let mut forged = payload.to_vec();
    forged.extend_from_slice(&trailer[..CHECKSUM_AT]);
    forged.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(payload).to_le_bytes());
    forged.extend_from_slice(&trailer[CHECKSUM_AT + 16..]);
    std::fs::write(file, forged).unwrap();
}

/// The probe's compiled code with its "echo: " text patched to "PWNED:".
fn patched_probe_payload(entry_file: &Path) -> Vec<u8> {
    let mut payload = payload_of(entry_file);
    let mut patched = 0;
    for at in 0..payload.len() - ECHO.len() {
        if &payload[at..at + ECHO.len()] == ECHO {
            payload[at..at + ECHO.len()].copy_from_slice(PATCHED);
            patched += 1;
        }
    }
    assert!(patched > 0, "the probe's compiled code has no {ECHO:?}");
    payload
}

/// A cache directory the shim created, holding the probe's entry written by a first shim.
struct ProbeCache {
    config: TempDir,
    _root: TempDir,
    dir: PathBuf,
    file: PathBuf,
}

impl ProbeCache {
    fn new(label: &str) -> ProbeCache {
        let (config, root) = (temp_dir(&format!("{label}-config")), temp_dir(label));
        let dir = root.path().join("cache");
        let shim = shim_with_cache(&probe_wasm(), config.path(), &dir);
        assert_eq!(shim.cache_outcome(), &CacheOutcome::Miss);
        let file = shim.cache_file().unwrap().to_path_buf();
        ProbeCache {
            config,
            _root: root,
            dir,
            file,
        }
    }

    fn shim(&self) -> Shim {
        shim_with_cache(&probe_wasm(), self.config.path(), &self.dir)
    }

    /// Patches the entry's "echo: " to "PWNED:", checksum recomputed.
    fn forge(&self) {
        forge(&self.file, &patched_probe_payload(&self.file));
    }
}

fn assert_untrusted_and_not_run(shim: &mut Shim, expected: &[&str]) {
    let outcome = described(shim);
    assert_eq!(
        echo(shim, "hi"),
        "echo: hi",
        "the forged code ran ({outcome})"
    );
    assert!(outcome.contains("untrusted: "), "{outcome}");
    for words in expected {
        assert!(outcome.contains(words), "{outcome} should say {words:?}");
    }
}

/// After a recompilation in a directory the shim may use: a fresh entry, ours, 0600, in a 0700
/// directory, with none of the forged bytes, that the next shim loads.
fn assert_rewritten_privately(cache: &ProbeCache) {
    assert_eq!(mode(&cache.dir), 0o700, "cache directory mode");
    let meta = std::fs::symlink_metadata(&cache.file).unwrap();
    let file = cache.file.display();
    assert!(meta.file_type().is_file(), "{file} is not a plain file");
    assert_eq!(meta.mode() & 0o7777, 0o600, "entry mode");
    assert_eq!((meta.uid(), meta.nlink()), (our_uid(), 1));
    let bytes = std::fs::read(&cache.file).unwrap();
    assert!(!bytes.windows(PATCHED.len()).any(|w| w == PATCHED));
    let mut again = cache.shim();
    assert_eq!(again.cache_outcome(), &CacheOutcome::Hit);
    assert_eq!(echo(&mut again, "hi"), "echo: hi");
}

#[test]
fn a_same_user_edit_is_out_of_scope_and_the_forgery_here_is_well_formed() {
    let cache = ProbeCache::new("same-user");
    cache.forge();
    let mut shim = cache.shim();
    // A private cache trusts its owner: the forged entry loads. This is the documented limit.
    assert_eq!(shim.cache_outcome(), &CacheOutcome::Hit);
    assert_eq!(echo(&mut shim, "hi"), "PWNED:hi");
}

#[test]
fn a_forged_entry_in_a_world_writable_cache_is_recompiled_and_the_directory_tightened() {
    let cache = ProbeCache::new("world-writable");
    cache.forge();
    set_mode(&cache.dir, 0o777);

    let mut shim = cache.shim();
    assert_untrusted_and_not_run(&mut shim, &["writable by others", "0777"]);
    assert!(
        described(&shim).starts_with("Recompiled"),
        "{}",
        described(&shim)
    );
    assert_rewritten_privately(&cache);
}

#[test]
fn a_forged_entry_writable_by_others_or_owned_by_another_user_is_recompiled() {
    for (label, spoil) in [
        (
            "group-writable-file",
            (|file: &Path| set_mode(file, 0o620)) as fn(&Path),
        ),
        ("world-writable-file", |file| set_mode(file, 0o666)),
        ("file-of-another-user", |file| give_to_another_user(file)),
    ] {
        if label == "file-of-another-user" && !as_root(label) {
            continue;
        }
        let cache = ProbeCache::new(label);
        cache.forge();
        spoil(&cache.file);

        let mut shim = cache.shim();
        let expected = if label == "file-of-another-user" {
            "owned by another user (uid 65534)"
        } else {
            "writable by others"
        };
        assert_untrusted_and_not_run(&mut shim, &[expected]);
        assert_rewritten_privately(&cache);
    }
}

#[test]
fn a_cache_directory_of_another_user_is_neither_read_nor_written() {
    if !as_root("a cache directory of another user") {
        return;
    }
    let cache = ProbeCache::new("dir-of-another-user");
    cache.forge();
    let forged = std::fs::read(&cache.file).unwrap();
    give_to_another_user(&cache.dir);
    set_mode(&cache.dir, 0o777);

    let mut shim = cache.shim();
    assert_untrusted_and_not_run(&mut shim, &["owned by another user (uid 65534)"]);
    assert!(
        described(&shim).starts_with("Untrusted"),
        "{}",
        described(&shim)
    );
    assert_eq!(shim.cache_file(), None);
    assert_eq!(
        std::fs::read(&cache.file).unwrap(),
        forged,
        "the shim wrote there"
    );
    assert_eq!(
        mode(&cache.dir),
        0o777,
        "the shim changed another user's directory"
    );
}

#[test]
fn an_ancestor_others_can_write_makes_the_cache_untrusted_a_sticky_one_does_not() {
    let cache = ProbeCache::new("open-ancestor");
    cache.forge();
    let forged = std::fs::read(&cache.file).unwrap();
    // Anyone could now rename `cache` away and put their own directory in its place.
    let ancestor = cache.dir.parent().unwrap();
    set_mode(ancestor, 0o777);

    let mut shim = cache.shim();
    let expected = format!("{} is writable by others", ancestor.display());
    assert_untrusted_and_not_run(&mut shim, &[&expected]);
    assert!(
        described(&shim).starts_with("Untrusted"),
        "{}",
        described(&shim)
    );
    assert_eq!(
        std::fs::read(&cache.file).unwrap(),
        forged,
        "the shim wrote there"
    );

    // Sticky, like /tmp: others may add entries but not rename ours.
    std::fs::remove_file(&cache.file).unwrap();
    set_mode(ancestor, 0o1777);
    assert_eq!(cache.shim().cache_outcome(), &CacheOutcome::Miss);
    assert_eq!(cache.shim().cache_outcome(), &CacheOutcome::Hit);
}

/// The uid this test runs as (the owner of what it creates).
fn our_uid() -> u32 {
    let probe = temp_dir("uid");
    std::fs::metadata(probe.path()).unwrap().uid()
}

fn check_config_stdout(shim: &mut Shim) -> String {
    shim.run_command(&Command::CheckConfig).stdout
}

#[test]
fn another_guests_code_swapped_into_an_open_cache_is_not_run() {
    // The real component's compiled code (from the cache the shim's tests share) in the probe's entry.
    let shared = std::env::temp_dir().join("graphiti-openclaw-test-cache");
    let plugin = shim_with_cache(&plugin_wasm(), &example_config(), &shared);
    let plugin_code = payload_of(plugin.cache_file().unwrap());
    let cache = ProbeCache::new("swap");

    // Well-formed: in a private cache the swapped code loads and answers as the component does.
    forge(&cache.file, &plugin_code);
    let mut shim = cache.shim();
    assert_eq!(shim.cache_outcome(), &CacheOutcome::Hit);
    assert_ne!(check_config_stdout(&mut shim), "probe\n");

    for (label, spoil) in [
        (
            "open directory",
            (|_: &Path, dir: &Path| set_mode(dir, 0o777)) as fn(&Path, &Path),
        ),
        ("another user's file", |file, _| give_to_another_user(file)),
    ] {
        if label == "another user's file" && !as_root(label) {
            continue;
        }
        forge(&cache.file, &plugin_code);
        spoil(&cache.file, &cache.dir);
        let mut shim = cache.shim();
        let outcome = described(&shim);
        let answer = check_config_stdout(&mut shim);
        assert_eq!(answer, "probe\n", "{label}: another guest ran ({outcome})");
        assert!(outcome.contains("untrusted: "), "{label}: {outcome}");
    }
}

#[test]
fn a_symlinked_entry_is_not_followed_and_is_replaced_not_written_through() {
    let cache = ProbeCache::new("symlinked-entry");
    let elsewhere = temp_dir("symlinked-entry-target");
    let target = elsewhere.path().join("forged.cwasm");
    std::fs::copy(&cache.file, &target).unwrap();
    forge(&target, &patched_probe_payload(&target));
    let forged = std::fs::read(&target).unwrap();
    std::fs::remove_file(&cache.file).unwrap();
    std::os::unix::fs::symlink(&target, &cache.file).unwrap();

    let mut shim = cache.shim();
    assert_untrusted_and_not_run(&mut shim, &["symbolic link"]);
    assert_rewritten_privately(&cache);
    assert_eq!(
        std::fs::read(&target).unwrap(),
        forged,
        "written through the link"
    );
}

#[test]
fn a_hard_link_to_another_users_file_is_not_trusted() {
    if !as_root("a hard link to another user's file") {
        return;
    }
    let cache = ProbeCache::new("hard-link");
    let elsewhere = temp_dir("hard-link-target");
    let target = elsewhere.path().join("forged.cwasm");
    std::fs::copy(&cache.file, &target).unwrap();
    forge(&target, &patched_probe_payload(&target));
    give_to_another_user(&target);
    std::fs::remove_file(&cache.file).unwrap();
    std::fs::hard_link(&target, &cache.file).unwrap();

    let mut shim = cache.shim();
    assert_untrusted_and_not_run(&mut shim, &["owned by another user"]);
    assert_rewritten_privately(&cache);
}

#[test]
fn a_symlinked_cache_directory_is_judged_by_where_it_leads() {
    if !as_root("a symlinked cache directory of another user") {
        return;
    }
    let links = temp_dir("dir-links");
    let config = temp_dir("dir-links-config");

    // To another user's directory holding a forged entry: not used at all.
    let theirs = ProbeCache::new("dir-link-theirs");
    theirs.forge();
    give_to_another_user(&theirs.dir);
    let link = links.path().join("to-theirs");
    std::os::unix::fs::symlink(&theirs.dir, &link).unwrap();
    let mut shim = shim_with_cache(&probe_wasm(), config.path(), &link);
    assert_untrusted_and_not_run(&mut shim, &["owned by another user"]);
    assert!(
        described(&shim).starts_with("Untrusted"),
        "{}",
        described(&shim)
    );

    // To a directory of ours: used as usual.
    let ours = temp_dir("dir-link-ours");
    let link = links.path().join("to-ours");
    std::os::unix::fs::symlink(ours.path().join("cache"), &link).unwrap();
    std::fs::create_dir(ours.path().join("cache")).unwrap();
    let shim = shim_with_cache(&probe_wasm(), config.path(), &link);
    assert_eq!(shim.cache_outcome(), &CacheOutcome::Miss);
    let mut shim = shim_with_cache(&probe_wasm(), config.path(), &link);
    assert_eq!(shim.cache_outcome(), &CacheOutcome::Hit);
    assert_eq!(echo(&mut shim, "hi"), "echo: hi");
}

#[test]
fn a_trusted_cache_hits_without_rewriting_and_new_directories_are_private() {
    let parent = temp_dir("trusted");
    let config = temp_dir("trusted-config");
    let cache = parent.path().join("new/cache");
    let shim = shim_with_cache(&probe_wasm(), config.path(), &cache);
    assert_eq!(shim.cache_outcome(), &CacheOutcome::Miss);
    let file = shim.cache_file().unwrap().to_path_buf();
    assert_eq!((mode(&cache), mode(&file)), (0o700, 0o600));
    assert_eq!(mode(&parent.path().join("new")), 0o700);
    let before = std::fs::metadata(&file).unwrap();

    let mut shim = shim_with_cache(&probe_wasm(), config.path(), &cache);
    assert_eq!(shim.cache_outcome(), &CacheOutcome::Hit);
    assert_eq!(echo(&mut shim, "hi"), "echo: hi");
    let after = std::fs::metadata(&file).unwrap();
    assert_eq!(
        (before.ino(), before.mtime_nsec()),
        (after.ino(), after.mtime_nsec())
    );

    // What earlier versions wrote (0755 directory, 0644 entry) is readable by others but writable by
    // no one else: still a hit.
    set_mode(&cache, 0o755);
    set_mode(&file, 0o644);
    let shim = shim_with_cache(&probe_wasm(), config.path(), &cache);
    assert_eq!(shim.cache_outcome(), &CacheOutcome::Hit);
}
