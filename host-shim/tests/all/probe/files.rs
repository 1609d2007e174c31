//! Files: only the preopens, with their permissions.

use host_shim::{Shim, ShimOptions};

use super::harness::{answer, options, temp_dir};

#[test]
fn config_and_overlay_are_read_only() {
    let config = temp_dir("ro-config");
    let overlay = temp_dir("ro-overlay");
    std::fs::write(config.path().join("rules.yaml"), "rules: []\n").unwrap();
    std::fs::write(overlay.path().join("extra.yaml"), "x").unwrap();
    let mut shim = Shim::new(ShimOptions {
        overlay_dir: Some(overlay.path().into()),
        ..options(&config)
    })
    .unwrap();

    assert_eq!(
        answer(&mut shim, "read /config/rules.yaml"),
        "read ok: 10 bytes"
    );
    assert_eq!(
        answer(&mut shim, "read /overlay/extra.yaml"),
        "read ok: 1 bytes"
    );
    for path in ["/config/new.txt", "/config/rules.yaml", "/overlay/new.txt"] {
        let text = answer(&mut shim, &format!("write {path}"));
        assert!(text.starts_with("write err"), "{path}: {text}");
    }
    assert!(!config.path().join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(config.path().join("rules.yaml")).unwrap(),
        "rules: []\n"
    );
}

#[test]
fn host_files_outside_the_preopens_are_invisible() {
    let config = temp_dir("invisible");
    let elsewhere = temp_dir("elsewhere");
    let secret = elsewhere.path().join("secret.txt");
    std::fs::write(&secret, "secret").unwrap();
    let mut shim = Shim::new(options(&config)).unwrap();

    let text = answer(&mut shim, &format!("read {}", secret.display()));
    assert!(text.starts_with("read err"), "{text}");
    let text = answer(&mut shim, "read /config/../../../../etc/passwd");
    assert!(text.starts_with("read err"), "{text}");
    // No state directory given: nothing to write to.
    let text = answer(&mut shim, "write /state/x");
    assert!(text.starts_with("write err"), "{text}");
}

#[test]
fn state_dir_is_writable() {
    let config = temp_dir("state-config");
    let state = temp_dir("state");
    let mut shim = Shim::new(ShimOptions {
        state_dir: Some(state.path().into()),
        ..options(&config)
    })
    .unwrap();

    assert_eq!(answer(&mut shim, "write /state/probe.txt"), "write ok");
    assert_eq!(
        std::fs::read_to_string(state.path().join("probe.txt")).unwrap(),
        "probe"
    );
}
