//! The pack registry (pack id → file, type, scope, modes; consumer profile → primary pack) and the pack
//! files themselves, loaded and escaped once per configuration.

use crate::config::{
    self, ConfigError, ConfigRoots, PackEntry, PackFile, PackStep, ProfileEntry, RegistryFile,
    Scope, SourceFile,
};
use crate::platform::text::escape_text;
use std::collections::{BTreeMap, HashMap};

/// One pack's texts, already escaped for injection.
#[derive(Clone, Debug)]
struct PackTexts {
    description: Option<String>,
    domain_context: Option<String>,
    compliance_rules: Option<String>,
}

/// A pack's sections, rendered once per configuration.
#[derive(Clone, Debug)]
pub struct PackContent {
    primary: String,
    /// As an addition: without a mode (key None) and in each mode.
    additional: BTreeMap<Option<String>, String>,
}

/// What a pack file says, escaped, before rendering.
struct PackParts {
    name: String,
    texts: PackTexts,
    steps: Vec<String>,
    modes: BTreeMap<String, PackTexts>,
}

#[derive(Clone, Debug)]
pub struct RegisteredPack {
    pub id: String,
    pub pack_type: String,
    /// The stricter of the registry's and the pack file's scope.
    pub scope: Scope,
    pub modes: Vec<String>,
    /// The loaded pack, or why it is unavailable (file missing).
    pub content: Result<PackContent, String>,
}

#[derive(Debug, Default)]
pub struct PackRegistry {
    pub packs: Vec<RegisteredPack>,
    by_id: HashMap<String, usize>,
    /// Registry indexes of each pack type, in registry order.
    by_type: HashMap<String, Vec<usize>>,
    profiles: HashMap<String, String>,
    /// Profiles declared with an error (already reported): rules naming them need no second error.
    broken_profiles: std::collections::HashSet<String>,
}

impl PackRegistry {
    /// Reads the registry and every pack it names. A missing pack file makes that pack unavailable (a
    /// warning); a malformed one is an error.
    pub fn load(
        roots: &ConfigRoots,
        files: &mut Vec<String>,
        warnings: &mut Vec<String>,
        errors: &mut Vec<ConfigError>,
    ) -> PackRegistry {
        let mut registry = PackRegistry::default();
        let Some((source, spec)) = read_registry(roots, files, errors) else {
            return registry;
        };
        let located = RegistrySource {
            source: &source,
            lines: config::ItemLines::new(&source.text, "id"),
        };
        if spec.schema_version != 1 {
            errors.push(config::schema_error(&source.display, spec.schema_version));
        }
        for entry in spec.packs {
            registry.register(entry, roots, &located, files, warnings, errors);
        }
        for profile in spec.consumer_profiles {
            registry.add_profile(profile, &located, errors);
        }
        registry
    }

    /// One registry entry, with its pack file; a broken entry is reported and left out.
    fn register(
        &mut self,
        entry: PackEntry,
        roots: &ConfigRoots,
        located: &RegistrySource,
        files: &mut Vec<String>,
        warnings: &mut Vec<String>,
        errors: &mut Vec<ConfigError>,
    ) {
        if !valid_id(&entry.id) {
            errors.push(located.error(
                &entry.id,
                "id",
                format!(
                    "pack id {:?} must be letters, digits, '_', '-', '.' or ':'",
                    entry.id
                ),
            ));
            return;
        }
        if self.by_id.contains_key(&entry.id) {
            errors.push(located.error(
                &entry.id,
                "id",
                format!("pack {:?} is registered twice", entry.id),
            ));
            return;
        }
        if entry.pack_type.trim().is_empty() {
            errors.push(located.error(
                &entry.id,
                "pack_type",
                "pack_type must not be empty".into(),
            ));
        }
        let Some(content) = read_pack(roots, &entry, located, files, warnings, errors) else {
            return;
        };
        let (file_scope, content) = match content {
            Ok((scope, content)) => (scope, Ok(content)),
            Err(reason) => (None, Err(reason)),
        };
        let scope = if entry.scope == Scope::Private || file_scope == Some(Scope::Private) {
            Scope::Private
        } else {
            Scope::Public
        };
        self.by_id.insert(entry.id.clone(), self.packs.len());
        self.by_type
            .entry(entry.pack_type.clone())
            .or_default()
            .push(self.packs.len());
        self.packs.push(RegisteredPack {
            id: entry.id,
            pack_type: entry.pack_type,
            scope,
            modes: entry.modes,
            content,
        });
    }

    /// A consumer profile, whose primary pack must be registered.
    fn add_profile(
        &mut self,
        profile: ProfileEntry,
        located: &RegistrySource,
        errors: &mut Vec<ConfigError>,
    ) {
        if !self.by_id.contains_key(&profile.primary_pack) {
            self.broken_profiles.insert(profile.id.clone());
            errors.push(located.error(
                &profile.id,
                "primary_pack",
                format!(
                    "consumer profile {:?} names pack {:?}, which is not in the registry",
                    profile.id, profile.primary_pack
                ),
            ));
        } else if self
            .profiles
            .insert(profile.id.clone(), profile.primary_pack)
            .is_some()
        {
            errors.push(located.error(
                &profile.id,
                "id",
                format!("consumer profile {:?} is defined twice", profile.id),
            ));
        }
    }

    pub fn get(&self, id: &str) -> Option<&RegisteredPack> {
        self.by_id.get(id).map(|&i| &self.packs[i])
    }

    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// The primary pack of a consumer profile.
    pub fn profile_pack(&self, profile: &str) -> Option<&str> {
        self.profiles.get(profile).map(String::as_str)
    }

    pub fn is_broken_profile(&self, profile: &str) -> bool {
        self.broken_profiles.contains(profile)
    }

    /// Registered packs of a type, in registry order.
    pub fn of_type(&self, pack_type: &str) -> impl Iterator<Item = usize> + '_ {
        self.by_type.get(pack_type).into_iter().flatten().copied()
    }
}

/// The registry file, for locating its problems.
struct RegistrySource<'a> {
    source: &'a SourceFile,
    lines: config::ItemLines<'a>,
}

impl RegistrySource<'_> {
    fn error(&self, item: &str, field: &str, message: String) -> ConfigError {
        ConfigError {
            file: self.source.display.clone(),
            line: self.lines.locate(item, Some(field)),
            field: Some(field.into()),
            message,
        }
    }
}

/// The registry file, read and parsed; None when it is missing or broken (reported).
fn read_registry(
    roots: &ConfigRoots,
    files: &mut Vec<String>,
    errors: &mut Vec<ConfigError>,
) -> Option<(SourceFile, RegistryFile)> {
    let source = match roots.read_named(config::REGISTRY_FILE) {
        Ok(Some(source)) => source,
        Ok(None) => {
            errors.push(missing_file(roots, config::REGISTRY_FILE));
            return None;
        }
        Err(e) => {
            errors.push(e);
            return None;
        }
    };
    files.push(config::display_name(&source));
    match config::parse(&source) {
        Ok(spec) => Some((source, spec)),
        Err(e) => {
            errors.push(e);
            None
        }
    }
}

/// The pack file a registry entry names, with the scope it declares: Err (a warning given) when the
/// file is missing, so the pack is unavailable; None when it is malformed (an error given).
fn read_pack(
    roots: &ConfigRoots,
    entry: &PackEntry,
    located: &RegistrySource,
    files: &mut Vec<String>,
    warnings: &mut Vec<String>,
    errors: &mut Vec<ConfigError>,
) -> Option<Result<(Option<Scope>, PackContent), String>> {
    match roots.read(&entry.file) {
        Err(mut e) => {
            e.file = located.source.display.clone();
            e.line = located.lines.locate(&entry.id, Some("file"));
            e.field = Some("file".into());
            errors.push(e);
            None
        }
        Ok(None) => {
            let reason = format!("pack file {} not found", entry.file);
            warnings.push(format!("pack {}: {reason}; it is unavailable", entry.id));
            Some(Err(reason))
        }
        Ok(Some(pack_source)) => {
            files.push(config::display_name(&pack_source));
            match config::parse::<PackFile>(&pack_source) {
                Err(e) => {
                    errors.push(e);
                    None
                }
                Ok(file) => {
                    for mode in &entry.modes {
                        if !file.modes.contains_key(mode) {
                            errors.push(ConfigError {
                                file: pack_source.display.clone(),
                                line: None,
                                field: Some("modes".into()),
                                message: format!("the registry lists mode {mode:?} for pack {:?}, but the pack file defines no such mode", entry.id),
                            });
                        }
                    }
                    Some(Ok((file.scope, PackContent::from_file(file))))
                }
            }
        }
    }
}

impl PackContent {
    fn from_file(file: PackFile) -> PackContent {
        let parts = PackParts::from_file(file);
        let mut additional = BTreeMap::new();
        additional.insert(None, parts.render_additional(None));
        for mode in parts.modes.keys() {
            additional.insert(Some(mode.clone()), parts.render_additional(Some(mode)));
        }
        PackContent {
            primary: parts.render_primary(),
            additional,
        }
    }

    /// The pack as the primary workflow.
    pub fn primary(&self) -> &str {
        &self.primary
    }

    /// The pack as an addition, in `mode` when it has that mode.
    pub fn additional(&self, mode: Option<&str>) -> &str {
        let key = mode
            .filter(|m| self.additional.contains_key(&Some(m.to_string())))
            .map(str::to_string);
        &self.additional[&key]
    }
}

impl PackParts {
    fn from_file(file: PackFile) -> PackParts {
        let texts = |description: Option<String>,
                     domain: Option<String>,
                     compliance: Option<String>| PackTexts {
            description: description.map(|t| escape_text(t.trim())),
            domain_context: domain.map(|t| escape_text(t.trim())),
            compliance_rules: compliance.map(|t| escape_text(t.trim())),
        };
        let mut modes = BTreeMap::new();
        modes.extend(file.modes.into_iter().map(|(name, m)| {
            (
                name,
                texts(m.description, m.domain_context, m.compliance_rules),
            )
        }));
        let steps = file
            .steps
            .into_iter()
            .map(|step| match step {
                PackStep::Id(id) => escape_text(&id),
                PackStep::Detailed {
                    id,
                    description: None,
                } => escape_text(&id),
                PackStep::Detailed {
                    id,
                    description: Some(d),
                } => escape_text(&format!("{id}: {}", d.trim())),
            })
            .collect();
        PackParts {
            name: escape_text(file.name.trim()),
            texts: texts(file.description, file.domain_context, file.compliance_rules),
            steps,
            modes,
        }
    }

    fn render_primary(&self) -> String {
        let mut out = format!("## Active Workflow: {}\n", self.name);
        self.render_body(&self.texts, true, &mut out);
        out
    }

    /// The mode's texts override the defaults.
    fn render_additional(&self, mode: Option<&str>) -> String {
        let mut out = match mode {
            Some(mode) => format!("### Composition: {} ({})\n", self.name, escape_text(mode)),
            None => format!("### Composition: {}\n", self.name),
        };
        let texts = match mode.and_then(|m| self.modes.get(m)) {
            Some(m) => PackTexts {
                description: m
                    .description
                    .clone()
                    .or_else(|| self.texts.description.clone()),
                domain_context: m
                    .domain_context
                    .clone()
                    .or_else(|| self.texts.domain_context.clone()),
                compliance_rules: m
                    .compliance_rules
                    .clone()
                    .or_else(|| self.texts.compliance_rules.clone()),
            },
            None => self.texts.clone(),
        };
        self.render_body(&texts, false, &mut out);
        out
    }

    fn render_body(&self, texts: &PackTexts, with_steps: bool, out: &mut String) {
        for text in [&texts.description, &texts.domain_context]
            .into_iter()
            .flatten()
        {
            out.push('\n');
            out.push_str(text);
            out.push('\n');
        }
        if let Some(rules) = &texts.compliance_rules {
            out.push_str("\nCompliance rules:\n");
            out.push_str(rules);
            out.push('\n');
        }
        if with_steps && !self.steps.is_empty() {
            out.push_str("\nSteps:\n");
            for (i, step) in self.steps.iter().enumerate() {
                out.push_str(&format!("{}. {step}\n", i + 1));
            }
        }
    }
}

/// Identifiers of rules and packs: also used in attributes and file names.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.:".contains(c))
}

pub fn missing_file(roots: &ConfigRoots, base: &str) -> ConfigError {
    ConfigError {
        file: format!("{}/{base}.yaml", roots.config_name().trim_end_matches('/')),
        line: None,
        field: None,
        message: format!("missing: the config directory needs {base}.yaml (or .yml / .json)"),
    }
}
