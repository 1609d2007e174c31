//! The compiled-component cache: misses, hits, corrupt and stale entries.

use std::path::Path;

use host_shim::{CacheOutcome, Shim, ShimOptions};

use crate::harness::{LIMITS, TempDir, answer, probe_wasm};

fn cached_shim(wasm: &Path, config: &TempDir, cache: &TempDir) -> Shim {
    Shim::new(ShimOptions {
        cache_dir: Some(cache.path().into()),
        ..ShimOptions::new(wasm, config.path(), LIMITS)
    })
    .unwrap()
}

#[test]
fn cache_misses_then_hits_and_recompiles_a_corrupt_entry() {
    let (config, cache) = (TempDir::new("cache-config"), TempDir::new("cache"));
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
    let (config, cache) = (TempDir::new("stale-config"), TempDir::new("stale-cache"));
    let (old, new) = (TempDir::new("stale-old"), TempDir::new("stale-new"));
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
