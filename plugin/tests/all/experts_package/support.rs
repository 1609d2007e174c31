//! Packages for these tests: the base fixture copied to a temporary directory and edited in place.

use graphiti_openclaw::experts::{
    Finding, LoadOptions, LoadedExpert, PromptLimits, Rule, assemble_prompt, load_expert,
};
use std::fs;
use std::path::{Path, PathBuf};

pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/experts")
}

pub fn options() -> LoadOptions {
    LoadOptions {
        known_servers: Some(vec!["notes-mcp".into(), "mail-mcp".into()]),
        ..Default::default()
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A copy of the base fixture, removed when dropped.
pub struct TempPackage {
    pub dir: PathBuf,
    _removed_when_dropped: tempfile::TempDir,
}

impl TempPackage {
    /// The base fixture copied under a name unique to this test.
    pub fn base(name: &str) -> TempPackage {
        let temp = tempfile::Builder::new()
            .prefix(&format!("graphiti-experts-package-{name}-"))
            .tempdir()
            .expect("a temporary directory");
        copy_dir(&fixtures().join("base"), temp.path());
        TempPackage {
            dir: temp.path().to_path_buf(),
            _removed_when_dropped: temp,
        }
    }

    /// Replaces `from` (which must occur) by `to` in `file`.
    pub fn edit(&self, file: &str, from: &str, to: &str) -> &Self {
        let path = self.dir.join(file);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{file} has no {from:?}");
        fs::write(&path, text.replacen(from, to, 1)).unwrap();
        self
    }

    /// Inserts `lines` into the manifest just before `components:`.
    pub fn manifest_before_components(&self, lines: &str) -> &Self {
        self.edit(
            "expert.yaml",
            "components:\n",
            &format!("{lines}components:\n"),
        )
    }

    pub fn write(&self, file: &str, text: &[u8]) -> &Self {
        let path = self.dir.join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
        self
    }

    pub fn load(&self) -> LoadedExpert {
        load_expert(&self.dir, &options())
    }

    /// The prompt of the package, which must load ready.
    pub fn ready_prompt(&self) -> String {
        let expert = self.load();
        assert_ready(&expert);
        prompt(&expert)
    }
}

pub fn findings_text(findings: &[Finding]) -> String {
    findings.iter().map(|f| format!("{f}\n")).collect()
}

/// Asserts the package's findings are exactly `expected`, one `Display` line each, in order.
pub fn assert_findings(expert: &LoadedExpert, expected: &[&str]) {
    let actual: Vec<String> = expert.findings.iter().map(|f| f.to_string()).collect();
    assert_eq!(actual, expected, "\n{}", findings_text(&expert.findings));
}

/// Asserts there is a finding of `rule` in `file` at `field` whose message contains `says`.
pub fn assert_finding(expert: &LoadedExpert, rule: Rule, file: &str, field: &str, says: &str) {
    let found = expert.findings.iter().any(|f| {
        f.rule == rule
            && f.file == file
            && f.field.as_deref() == Some(field)
            && f.message.contains(says)
    });
    assert!(
        found,
        "no {rule} finding in {file} at {field} saying {says:?}:\n{}",
        findings_text(&expert.findings)
    );
}

/// The prompt of a package that passed phase 1, with `/ws` as the workspace.
pub fn prompt(expert: &LoadedExpert) -> String {
    let package = expert.package.as_ref().expect("phase 1 passed");
    assemble_prompt(package, "/ws", None, &PromptLimits::default()).text
}

/// Asserts the package is ready (loaded, bound, without errors).
pub fn assert_ready(expert: &LoadedExpert) {
    assert!(
        expert.ready().is_some(),
        "{}",
        findings_text(&expert.findings)
    );
}

/// Asserts the package is not ready: an error keeps it from loading.
pub fn assert_refused(expert: &LoadedExpert) {
    assert!(
        expert.ready().is_none(),
        "{}",
        findings_text(&expert.findings)
    );
}
