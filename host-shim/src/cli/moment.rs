//! Moments given on the command line: RFC 3339 or Unix epoch milliseconds. The CLI is the host: when
//! none is given it reads the wall clock here, once, and the component takes the time as an input.

/// `text` (the value of `flag`) as Unix milliseconds; now when absent.
pub(crate) fn moment(flag: &str, text: Option<&str>) -> Result<u64, String> {
    let Some(text) = text else {
        return Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64));
    };
    if let Ok(ms) = text.parse::<u64>() {
        return Ok(ms);
    }
    let at: jiff::Timestamp = text
        .parse()
        .map_err(|e| format!("{flag} {text:?} is neither RFC 3339 nor epoch milliseconds: {e}"))?;
    u64::try_from(at.as_millisecond()).map_err(|_| format!("{flag} {text:?} is before 1970"))
}

#[cfg(test)]
mod tests {
    use super::moment;

    #[test]
    fn rfc3339_and_epoch_milliseconds_give_the_same_moment() {
        let rfc = moment("--now", Some("2026-03-01T10:47:00Z")).unwrap();
        assert_eq!(rfc, 1_772_362_020_000);
        assert_eq!(moment("--now", Some("1772362020000")).unwrap(), rfc);
        let offset = moment("--now", Some("2026-03-01T11:47:00+01:00")).unwrap();
        assert_eq!(offset, rfc);
    }

    #[test]
    fn a_bad_moment_names_the_flag() {
        let err = moment("--previous-at", Some("yesterday")).unwrap_err();
        assert!(
            err.starts_with("--previous-at \"yesterday\" is neither RFC 3339"),
            "{err}"
        );
        let err = moment("--now", Some("1969-12-31T23:00:00Z")).unwrap_err();
        assert_eq!(err, "--now \"1969-12-31T23:00:00Z\" is before 1970");
    }
}
