//! Logs and configuration errors: guest logs are kept, bad configuration is logged and survived.

use host_shim::{LogLevel, ReloadError, Shim};

use super::harness::{answer, error_logs, options, temp_dir};

#[test]
fn guest_logs_are_kept() {
    let config = temp_dir("logs");
    let mut shim = Shim::new(options(&config)).unwrap();
    shim.take_logs();

    assert_eq!(
        answer(&mut shim, "log hello from the guest"),
        "logged: hello from the guest"
    );
    let logs = shim.take_logs();
    assert!(
        matches!(&logs[..], [(LogLevel::Info, line)] if line == "hello from the guest"),
        "{logs:?}"
    );
}

#[test]
fn configuration_errors_are_logged_and_the_shim_keeps_going() {
    let config = temp_dir("bad-config");
    std::fs::write(config.path().join("bad"), "").unwrap();
    let mut shim = Shim::new(options(&config)).unwrap();
    assert_eq!(
        error_logs(&shim),
        vec!["bad:3: keywords: probe rejects this file".to_string()]
    );

    assert!(matches!(shim.reload_config(), Err(ReloadError::Invalid(errors)) if errors.len() == 1));
    std::fs::remove_file(config.path().join("bad")).unwrap();
    assert!(shim.reload_config().is_ok());
}
