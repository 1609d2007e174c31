//! Reading configuration files: the config directory and its overlay, files named as the user named
//! their directories, and parsing with located errors.

use super::ConfigError;
use crate::platform::documents::errors::{split_path, strip_location};
use crate::platform::documents::{nesting, yaml};
use serde::de::DeserializeOwned;
use std::fs;
use std::path::{Path, PathBuf};

/// The spellings of a configuration file; exactly one may exist per directory.
const EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];

/// A file read from the configuration, with the name used in messages.
pub struct SourceFile {
    pub display: String,
    pub text: String,
    pub from_overlay: bool,
}

/// Where configuration files come from: the overlay (if any) wins over the config directory, file by
/// file. Messages name files by the directories' names: the host's paths in the component (its own
/// paths are `/config`, `/overlay`), the paths themselves natively.
#[derive(Clone, Debug)]
pub struct ConfigRoots {
    pub config: PathBuf,
    pub overlay: Option<PathBuf>,
    pub config_name: String,
    pub overlay_name: Option<String>,
    /// An overlay the host was given but could not mount (it does not exist): said at every load,
    /// since the user expects its files to be read.
    pub missing_overlay: Option<String>,
}

impl ConfigRoots {
    /// Directories named by their own paths.
    pub fn new(config: PathBuf, overlay: Option<PathBuf>) -> ConfigRoots {
        ConfigRoots {
            config_name: config.display().to_string(),
            overlay_name: overlay.as_ref().map(|o| o.display().to_string()),
            missing_overlay: None,
            config,
            overlay,
        }
    }

    /// The name messages give a file `relative` to the overlay or the config directory.
    fn display(&self, from_overlay: bool, relative: &str) -> String {
        let dir = match (from_overlay, &self.overlay_name) {
            (true, Some(name)) => name,
            _ => &self.config_name,
        };
        format!("{}/{relative}", dir.trim_end_matches('/'))
    }

    pub fn config_name(&self) -> &str {
        &self.config_name
    }

    /// The directories to look in, the overlay first.
    fn dirs(&self) -> impl Iterator<Item = (&Path, bool)> {
        self.overlay
            .iter()
            .map(|dir| (dir.as_path(), true))
            .chain([(self.config.as_path(), false)])
    }

    /// Reads `relative` from the overlay if it has it, else from the config directory.
    pub fn read(&self, relative: &str) -> Result<Option<SourceFile>, ConfigError> {
        if relative.starts_with('/') || relative.split(['/', '\\']).any(|part| part == "..") {
            return Err(ConfigError {
                file: relative.into(),
                line: None,
                field: None,
                message: "paths must be relative and stay inside the config directory".into(),
            });
        }
        for (dir, from_overlay) in self.dirs() {
            if let Some(file) = self.read_in(dir, from_overlay, relative)? {
                return Ok(Some(file));
            }
        }
        Ok(None)
    }

    fn read_in(
        &self,
        dir: &Path,
        from_overlay: bool,
        relative: &str,
    ) -> Result<Option<SourceFile>, ConfigError> {
        let display = self.display(from_overlay, relative);
        match crate::platform::files::read_to_string(dir.join(relative)) {
            Ok(text) => Ok(Some(SourceFile {
                display,
                text,
                from_overlay,
            })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ConfigError {
                file: display,
                line: None,
                field: None,
                message: format!("cannot read: {}", io_reason(&e)),
            }),
        }
    }

    /// Reads the file of kind `base` (`<base>.yaml`, `.yml` or `.json`): the overlay's replaces the
    /// config directory's whatever their spellings; two spellings in one directory are an error,
    /// since which one is meant cannot be guessed.
    pub fn read_named(&self, base: &str) -> Result<Option<SourceFile>, ConfigError> {
        for (dir, from_overlay) in self.dirs() {
            let present: Vec<String> = EXTENSIONS
                .iter()
                .map(|ext| format!("{base}.{ext}"))
                .filter(|name| fs::symlink_metadata(dir.join(name)).is_ok())
                .collect();
            match present.as_slice() {
                [] => continue,
                [one] => return self.read_in(dir, from_overlay, one),
                [first, others @ ..] => {
                    let others: Vec<String> = others
                        .iter()
                        .map(|name| self.display(from_overlay, name))
                        .collect();
                    return Err(ConfigError {
                        file: self.display(from_overlay, first),
                        line: None,
                        field: None,
                        message: format!(
                            "{} {} too: keep one of them",
                            others.join(" and "),
                            if others.len() == 1 { "exists" } else { "exist" }
                        ),
                    });
                }
            }
        }
        Ok(None)
    }

    pub fn config_dir(&self) -> &Path {
        &self.config
    }
}

/// An I/O error without the platform's error number.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Parses a YAML or JSON file (by extension) into `T`, turning parser errors into located errors.
/// Nesting and aliases are capped first ([`nesting::check_yaml`]): deeper documents cost the parser
/// quadratic time, and aliases can repeat a small document into a huge one.
pub fn parse<T: DeserializeOwned>(file: &SourceFile) -> Result<T, ConfigError> {
    let located = |line: Option<u32>, field: Option<String>, message: String| ConfigError {
        file: file.display.clone(),
        line,
        field,
        message,
    };
    let json = file.display.ends_with(".json");
    let checked = if json {
        nesting::check_json(&file.text)
    } else {
        nesting::check_yaml(&file.text)
    };
    if let Err(refused) = checked {
        return Err(located(Some(refused.line), None, refused.message()));
    }
    if json {
        serde_json::from_slice(file.text.as_bytes()).map_err(|e| {
            let (field, message) = split_path(&e.to_string());
            located(Some(e.line() as u32), field, strip_location(&message))
        })
    } else {
        yaml::from_str(&file.text).map_err(|e| {
            let (line, message) = e.located(&file.text);
            let (field, message) = split_path(&message);
            located(line, field, message)
        })
    }
}

/// The 1-based lines where `key: value` list items start, by value, for errors found after parsing;
/// built once per file, at the first error located (a file without errors never pays for it), so
/// locating many errors stays linear.
pub struct ItemLines<'a> {
    text: &'a str,
    key: &'a str,
    index: std::cell::OnceCell<ItemIndex<'a>>,
}

struct ItemIndex<'a> {
    lines: Vec<&'a str>,
    starts: std::collections::HashMap<&'a str, usize>,
}

impl<'a> ItemLines<'a> {
    pub fn new(text: &'a str, key: &'a str) -> ItemLines<'a> {
        ItemLines {
            text,
            key,
            index: std::cell::OnceCell::new(),
        }
    }

    fn index(&self) -> &ItemIndex<'a> {
        self.index.get_or_init(|| {
            let lines: Vec<&str> = self.text.lines().collect();
            let mut starts = std::collections::HashMap::new();
            for (i, line) in lines.iter().enumerate() {
                if let Some(value) = item_value(line, self.key) {
                    starts.entry(value).or_insert(i);
                }
            }
            ItemIndex { lines, starts }
        })
    }

    /// The line of `field` inside the item whose key is `item`; falls back to the item's line, then
    /// to none.
    pub fn locate(&self, item: &str, field: Option<&str>) -> Option<u32> {
        let index = self.index();
        let start = *index.starts.get(item)?;
        let Some(field) = field else {
            return Some(start as u32 + 1);
        };
        let lines = &index.lines;
        let indent = |l: &str| l.len() - l.trim_start().len();
        // JSON written one item per line: the field sits on the item's own line.
        if lines[start].contains(&format!("\"{field}\"")) {
            return Some(start as u32 + 1);
        }
        for (i, line) in lines.iter().enumerate().skip(start) {
            let t = line.trim_start();
            if i > start && t.starts_with("- ") && indent(line) <= indent(lines[start]) {
                break; // the next item
            }
            let t = t.trim_start_matches("- ");
            if t.starts_with(&format!("{field}:")) || t.starts_with(&format!("\"{field}\"")) {
                return Some(i as u32 + 1);
            }
        }
        Some(start as u32 + 1)
    }
}

/// The value of `key` when `line` starts a list item with it (`- key: value`, `{"key": value, …`).
fn item_value<'l>(line: &'l str, key: &str) -> Option<&'l str> {
    let t = line.trim_start().trim_start_matches(['-', ' ', '{']);
    let rest = t
        .strip_prefix(key)
        .and_then(|r| r.strip_prefix(':'))
        .or_else(|| {
            t.strip_prefix('"')
                .and_then(|r| r.strip_prefix(key))
                .and_then(|r| r.strip_prefix("\":"))
        })?;
    // The value ends at the end of line, or at a comma in one-line JSON.
    Some(
        rest.split(',')
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches(['"', '\'', '}', ' ']),
    )
}

/// Finds the line (1-based) of `field` inside the list item whose `key` equals `item`, for one error
/// found after parsing; [`ItemLines`] locates many.
pub fn locate(text: &str, key: &str, item: &str, field: Option<&str>) -> Option<u32> {
    ItemLines::new(text, key).locate(item, field)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RulesFile;
    use crate::platform::files::temp_dir;

    fn yaml(text: &str) -> SourceFile {
        SourceFile {
            display: "intent_rules.yaml".into(),
            text: text.into(),
            from_overlay: false,
        }
    }

    #[test]
    fn unknown_field_names_file_line_and_field() {
        let err = parse::<RulesFile>(&yaml(
            "rules:\n  - id: a\n    consumer_profile: p\n    keywrods: [x]\n    scope: public\n    pack_type: t\n",
        ))
        .unwrap_err();
        assert_eq!(err.file, "intent_rules.yaml");
        assert_eq!(err.line, Some(4), "{err}");
        assert!(err.to_string().contains("keywrods"), "{err}");
    }

    #[test]
    fn wrong_type_names_the_field() {
        let err = parse::<RulesFile>(&yaml(
            "rules:\n  - id: a\n    consumer_profile: p\n    keywords: [x]\n    keyword_weight: heavy\n    scope: public\n    pack_type: t\n",
        ))
        .unwrap_err();
        assert_eq!(err.line, Some(5), "{err}");
        assert_eq!(
            err.field.as_deref(),
            Some("rules[0].keyword_weight"),
            "{err}"
        );
    }

    #[test]
    fn json_errors_have_lines() {
        let file = SourceFile {
            display: "r.json".into(),
            text: "{\n \"rules\": [\n  {\"id\": 3}\n ]\n}".into(),
            from_overlay: false,
        };
        let err = parse::<RulesFile>(&file).unwrap_err();
        assert_eq!(err.line, Some(3), "{err}");
    }

    #[test]
    fn a_control_character_is_located_on_its_line() {
        let err =
            parse::<RulesFile>(&yaml("rules:\n  - id: a\n    keywords: [x\u{7}y]\n")).unwrap_err();
        assert_eq!(err.line, Some(3), "{err}");
        assert_eq!(err.message, "control characters are not allowed");
    }

    #[test]
    fn lines_are_counted_as_editors_count_them() {
        // libyaml also breaks lines at CR, NEL and the Unicode line and paragraph separators: a
        // file of one line named its line 3.
        let err = parse::<RulesFile>(&yaml("\u{2028} ")).unwrap_err();
        assert_eq!(err.line, Some(1), "{err}");
        let text =
            "rules:\u{2029}\r\n  - id: a\r  \u{85}\n    keywords: [x]\n    keyword_weight: heavy\n";
        let err = parse::<RulesFile>(&yaml(text)).unwrap_err();
        assert_eq!(err.line, Some(4), "{err}");
        let deep = format!(
            "\u{2028}\nrules:\n  - id: a\n    keywords: {}\n",
            "[".repeat(100_000)
        );
        let err = parse::<RulesFile>(&yaml(&deep)).unwrap_err();
        assert_eq!(err.line, Some(4), "{err}");
    }

    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        let text = format!("rules:\n  - id: a\n    keywords: {}\n", "[".repeat(100_000));
        let err = parse::<RulesFile>(&yaml(&text)).unwrap_err();
        assert_eq!(
            (err.line, err.message.as_str()),
            (Some(3), "nested deeper than 64 levels")
        );
    }

    #[test]
    fn locates_fields_inside_items() {
        let text = "rules:\n  - id: a\n    keywords: [x]\n  - id: b\n    keywords: [y]\n    min_confidence: -1\n";
        assert_eq!(locate(text, "id", "b", Some("min_confidence")), Some(6));
        assert_eq!(locate(text, "id", "b", Some("keywords")), Some(5));
        assert_eq!(locate(text, "id", "a", None), Some(2));
        assert_eq!(locate(text, "id", "zzz", None), None);
        let json = "{\"rules\": [\n {\"id\": \"a\", \"keywords\": []},\n {\"id\": \"b\"}\n]}";
        assert_eq!(locate(json, "id", "b", None), Some(3));
    }

    /// The roots, their two directories and the guard removing them when the test ends.
    fn roots(label: &str) -> (ConfigRoots, PathBuf, PathBuf, tempfile::TempDir) {
        let base = temp_dir(&format!("graphiti-openclaw-source-{label}"));
        let (config, overlay) = (base.path().join("config"), base.path().join("private"));
        fs::create_dir_all(&config).unwrap();
        fs::create_dir_all(&overlay).unwrap();
        let roots = ConfigRoots {
            config_name: "~/cfg".into(),
            overlay_name: Some("/home/u/private/".into()),
            ..ConfigRoots::new(config.clone(), Some(overlay.clone()))
        };
        (roots, config, overlay, base)
    }

    #[test]
    fn files_are_named_by_the_directories_names() {
        let (roots, config, overlay, _base) = roots("names");
        fs::write(config.join("intent_rules.yaml"), "rules: []").unwrap();
        fs::write(overlay.join("settings.json"), "{}").unwrap();
        fs::write(config.join("settings.yaml"), "{}").unwrap();
        let rules = roots.read_named("intent_rules").unwrap().unwrap();
        assert_eq!(
            (rules.display.as_str(), rules.from_overlay),
            ("~/cfg/intent_rules.yaml", false)
        );
        let settings = roots.read_named("settings").unwrap().unwrap();
        assert_eq!(
            (settings.display.as_str(), settings.from_overlay),
            ("/home/u/private/settings.json", true),
            "the overlay's file of a kind wins whatever its spelling"
        );
    }

    #[test]
    fn two_spellings_in_one_directory_are_an_error_naming_both() {
        let (roots, config, overlay, _base) = roots("spellings");
        for name in [
            "pack_registry.yaml",
            "pack_registry.yml",
            "pack_registry.json",
        ] {
            fs::write(config.join(name), "{}").unwrap();
        }
        let err = roots.read_named("pack_registry").err().unwrap();
        assert_eq!(
            err.to_string(),
            "~/cfg/pack_registry.yaml: ~/cfg/pack_registry.yml and ~/cfg/pack_registry.json exist too: keep one of them"
        );
        fs::write(overlay.join("settings.yaml"), "{}").unwrap();
        fs::write(overlay.join("settings.yml"), "{}").unwrap();
        let err = roots.read_named("settings").err().unwrap();
        assert_eq!(
            err.to_string(),
            "/home/u/private/settings.yaml: /home/u/private/settings.yml exists too: keep one of them"
        );
    }
}
