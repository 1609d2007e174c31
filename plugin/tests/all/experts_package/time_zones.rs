//! A cron trigger's time zone is checked against the host's zones when the package is validated:
//! a misspelled zone is an error naming the trigger and the zone, not a trigger that never fires.

use super::support::TempPackage;
use graphiti_openclaw::Engine;
use graphiti_openclaw::config::ConfigRoots;
use graphiti_openclaw::experts::runs::TimeZones;
use graphiti_openclaw::memory::graphiti::http::NoNetwork;
use graphiti_openclaw::platform::api::{Command, CommandOutput, ExpertsCommand};
use std::path::PathBuf;

/// A host that knows UTC and Europe/Berlin, worded as the hosts word an unknown zone.
struct TwoZones;

impl TimeZones for TwoZones {
    fn utc_offset_minutes(&mut self, zone: &str, _: u64) -> Result<i32, String> {
        match zone {
            "UTC" => Ok(0),
            "Europe/Berlin" => Ok(60),
            _ => Err(format!(
                "unknown time zone {zone:?} (an IANA name such as Europe/Berlin)"
            )),
        }
    }
}

fn validate(package: &TempPackage) -> CommandOutput {
    let config = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../config");
    let mut engine = Engine::new(ConfigRoots::new(config, None), None, Box::new(NoNetwork))
        .with_experts(Some(package.dir.clone()), None, None)
        .with_time_zones(Box::new(TwoZones));
    let target = package.dir.display().to_string();
    engine.run_command(&Command::Experts(ExpertsCommand::Validate(target)))
}

/// An unknown `tz` makes its trigger inactive, as the spec says; the package still loads.
#[test]
fn a_time_zone_the_host_does_not_know_makes_its_trigger_inactive_naming_trigger_and_zone() {
    let temp = TempPackage::base("tz-unknown");
    temp.edit(
        "expert.yaml",
        "    process: daily-review\n",
        "    process: daily-review\n    tz: Europe/Berln\n",
    );
    let out = validate(&temp);
    assert!(
        out.stdout.contains(
            "warning [trigger.inactive] expert.yaml:14: triggers[0].tz: trigger \"daily\" stays \
             inactive: unknown time zone \"Europe/Berln\" (an IANA name such as Europe/Berlin)"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(out.exit_code, 0, "the package loads: {}", out.stdout);

    let temp = TempPackage::base("tz-known");
    temp.edit(
        "expert.yaml",
        "    process: daily-review\n",
        "    process: daily-review\n    tz: Europe/Berlin\n",
    );
    let out = validate(&temp);
    assert!(!out.stdout.contains("time zone"), "{}", out.stdout);
}
