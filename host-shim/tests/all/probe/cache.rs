//! The compiled-component cache: misses, hits, corrupt and stale entries.

use std::path::Path;

use host_shim::{CacheOutcome, Shim, ShimOptions};

use super::harness::{LIMITS, TempDir, answer, probe_wasm, temp_dir};

fn cached_shim(wasm: &Path, config: &TempDir, cache: &TempDir) -> Shim {
    Shim::new(ShimOptions {
        cache_dir: Some(cache.path().into()),
        ..ShimOptions::new(wasm, config.path(), LIMITS)
    })
    .unwrap()
}

#[test]
fn cache_misses_then_hits_and_recompiles_a_corrupt_entry() {
    let (config, cache) = (temp_dir("cache-config"), temp_dir("cache"));
    let wasm = probe_wasm();

    assert_eq!(
        cached_shim(&wasm, &config, &cache).cache_outcome(),
        &CacheOutcome::Miss
    );
    let mut shim = cached_shim(&wasm, &config, &cache);
    assert_eq!(shim.cache_outcome(), &CacheOutcome::Hit);
    assert_eq!(answer(&mut shim, "hi"), "echo: hi");

    let file = shim.cache_file().unwrap().to_path_buf();
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&file, &bytes).unwrap();
    let outcome = cached_shim(&wasm, &config, &cache).cache_outcome().clone();
    assert_eq!(
        outcome,
        CacheOutcome::Recompiled {
            reason: "corrupt: checksum mismatch".into()
        }
    );

    // Cut short, as by a full disk: the trailer is gone.
    let whole = std::fs::read(&file).unwrap();
    std::fs::write(&file, &whole[..whole.len() / 2]).unwrap();
    let outcome = cached_shim(&wasm, &config, &cache).cache_outcome().clone();
    assert_eq!(
        outcome,
        CacheOutcome::Recompiled {
            reason: "corrupt: not a cache entry".into()
        }
    );

    // Written by an earlier shim, whose entries began with a header.
    let mut old_format = b"GOCWASM\x02".to_vec();
    old_format.extend_from_slice(&whole);
    std::fs::write(&file, &old_format).unwrap();
    let outcome = cached_shim(&wasm, &config, &cache).cache_outcome().clone();
    assert_eq!(
        outcome,
        CacheOutcome::Recompiled {
            reason: "stale: written in another format by another version of the shim".into()
        }
    );

    std::fs::write(&file, b"junk").unwrap();
    let outcome = cached_shim(&wasm, &config, &cache).cache_outcome().clone();
    assert_eq!(
        outcome,
        CacheOutcome::Recompiled {
            reason: "corrupt: not a cache entry".into()
        }
    );

    let mut shim = cached_shim(&wasm, &config, &cache);
    assert_eq!(shim.cache_outcome(), &CacheOutcome::Hit);
    assert_eq!(answer(&mut shim, "hi"), "echo: hi");
}

#[test]
fn cache_entry_of_another_build_is_stale() {
    let (config, cache) = (temp_dir("stale-config"), temp_dir("stale-cache"));
    let (old, new) = (temp_dir("stale-old"), temp_dir("stale-new"));
    let bytes = std::fs::read(probe_wasm()).unwrap();
    // Same file name, different bytes: the probe with a custom section appended (id 0, size,
    // name "rebuilt", no payload), as a rebuild would give.
    let mut rebuilt = bytes.clone();
    rebuilt.extend_from_slice(&[0, 8, 7]);
    rebuilt.extend_from_slice(b"rebuilt");
    std::fs::write(old.path().join("plugin.wasm"), &bytes).unwrap();
    std::fs::write(new.path().join("plugin.wasm"), &rebuilt).unwrap();

    let old_shim = cached_shim(&old.path().join("plugin.wasm"), &config, &cache);
    assert_eq!(old_shim.cache_outcome(), &CacheOutcome::Miss);
    let mut new_shim = cached_shim(&new.path().join("plugin.wasm"), &config, &cache);
    assert_eq!(old_shim.cache_file(), new_shim.cache_file());
    assert!(
        matches!(new_shim.cache_outcome(), CacheOutcome::Recompiled { reason } if reason.starts_with("stale")),
        "{:?}",
        new_shim.cache_outcome()
    );
    assert_eq!(answer(&mut new_shim, "hi"), "echo: hi");
    let again = cached_shim(&new.path().join("plugin.wasm"), &config, &cache);
    assert_eq!(again.cache_outcome(), &CacheOutcome::Hit);
}

#[test]
fn a_wasm_rewritten_in_place_with_its_old_times_is_not_taken_for_the_cached_one() {
    // An entry keeps the wasm file's identity (inode, size, times) so that an unchanged wasm is not
    // read and hashed at every start. A rewrite in place that keeps the size and restores the
    // modification time (as `cp -p` onto the file does) still changes the change time, which no
    // one can set: the entry is stale, not run for the new bytes.
    let (config, cache, dir) = (
        temp_dir("inplace-config"),
        temp_dir("inplace-cache"),
        temp_dir("inplace-wasm"),
    );
    let probe = std::fs::read(probe_wasm()).unwrap();
    // The probe with a custom section (id 0, size 8, name "aaaaaaa"): rewritten, only the name differs.
    let with_section = |name: &[u8; 7]| {
        let mut bytes = probe.clone();
        bytes.extend_from_slice(&[0, 8, 7]);
        bytes.extend_from_slice(name);
        bytes
    };
    let wasm = dir.path().join("plugin.wasm");
    std::fs::write(&wasm, with_section(b"aaaaaaa")).unwrap();
    // Settled (its change time 2 s old), so its identity is recorded with the entry.
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    assert_eq!(
        cached_shim(&wasm, &config, &cache).cache_outcome(),
        &CacheOutcome::Miss
    );
    assert_eq!(
        cached_shim(&wasm, &config, &cache).cache_outcome(),
        &CacheOutcome::Hit
    );

    let modified = std::fs::metadata(&wasm).unwrap().modified().unwrap();
    let mut file = std::fs::OpenOptions::new().write(true).open(&wasm).unwrap();
    std::io::Write::write_all(&mut file, &with_section(b"bbbbbbb")).unwrap();
    file.set_modified(modified).unwrap();
    drop(file);
    assert_eq!(
        std::fs::metadata(&wasm).unwrap().modified().unwrap(),
        modified
    );

    let mut shim = cached_shim(&wasm, &config, &cache);
    assert!(
        matches!(shim.cache_outcome(), CacheOutcome::Recompiled { reason } if reason.starts_with("stale")),
        "{:?}",
        shim.cache_outcome()
    );
    assert_eq!(answer(&mut shim, "hi"), "echo: hi");
}
