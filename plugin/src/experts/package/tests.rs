//! Unit tests of the package rules: paths stay inside, safe names, numbers keep their spelling.

use super::*;

#[test]
fn relative_paths_stay_inside() {
    assert_eq!(
        clean_relative("./functions/a.md"),
        Ok("functions/a.md".into())
    );
    assert!(clean_relative("../x.md").is_err());
    assert!(clean_relative("/etc/passwd").is_err());
    assert!(clean_relative("a/../../x").is_err());
    assert!(clean_relative("").is_err());
    assert!(clean_relative(".").is_err());
}

#[test]
fn safe_names() {
    assert!(is_safe_name("trip-planner_2.0"));
    assert!(is_safe_name("ü"));
    for bad in [
        "",
        "../x",
        "a/b",
        ".hidden",
        "a b",
        "a..b",
        &"x".repeat(129),
    ] {
        assert!(!is_safe_name(bad), "{bad}");
    }
}

#[test]
fn numbers_keep_their_spelling() {
    let v: serde_norway::Value = serde_norway::from_str("1.0").unwrap();
    let serde_norway::Value::Number(n) = v else {
        panic!()
    };
    assert_eq!(n.to_string(), "1.0");
}
