//! Validation findings: which rule, how severe, where (file relative to the package, line, field).

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The package is not loaded.
    Error,
    /// The package is loaded; the problem is reported.
    Warning,
}

/// Every rule the loader checks, with a stable id. `§14` rules come from the spec's validation section;
/// the others are this loader's additions (the spec allows more), most of them so that a bad input is
/// reported instead of being silently ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Rule {
    // Phase 1: the package.
    ManifestExists,
    ManifestSyntax,
    ManifestRequiredFields,
    ManifestName,
    ManifestSpecVersion,
    ManifestValues,
    ManifestUnknownKey,
    TriggerPreset,
    TriggerInactive,
    TriggerSeconds,
    PolicyValues,
    StructureOrchestrator,
    StructurePersona,
    StructureFunctions,
    StructureReadme,
    FilesExist,
    FilesPath,
    FilesReadable,
    FrontmatterFunction,
    FrontmatterProcess,
    FrontmatterKnowledge,
    FrontmatterState,
    ToolSyntax,
    NamesUnique,
    XrefTriggerProcess,
    XrefProcessTrigger,
    XrefProcessFunctions,
    XrefToolsDeclared,
    XrefFunctionKnowledge,
    XrefPolicyOverrides,
    XrefToolFile,
    XrefPayloadMapping,
    XrefPrivateContext,
    LearningApproval,
    LearningScope,
    // Phase 2: the user's bindings.
    BindingsSyntax,
    BindingsUnbound,
    BindingsUnknownServer,
    BindingsUnknownOperation,
    BindingsUnknownTool,
    BindingsSkill,
    // Across packages.
    DiscoveryDuplicateName,
}

impl Rule {
    pub const ALL: [Rule; 42] = [
        Rule::ManifestExists,
        Rule::ManifestSyntax,
        Rule::ManifestRequiredFields,
        Rule::ManifestName,
        Rule::ManifestSpecVersion,
        Rule::ManifestValues,
        Rule::ManifestUnknownKey,
        Rule::TriggerPreset,
        Rule::TriggerInactive,
        Rule::TriggerSeconds,
        Rule::PolicyValues,
        Rule::StructureOrchestrator,
        Rule::StructurePersona,
        Rule::StructureFunctions,
        Rule::StructureReadme,
        Rule::FilesExist,
        Rule::FilesPath,
        Rule::FilesReadable,
        Rule::FrontmatterFunction,
        Rule::FrontmatterProcess,
        Rule::FrontmatterKnowledge,
        Rule::FrontmatterState,
        Rule::ToolSyntax,
        Rule::NamesUnique,
        Rule::XrefTriggerProcess,
        Rule::XrefProcessTrigger,
        Rule::XrefProcessFunctions,
        Rule::XrefToolsDeclared,
        Rule::XrefFunctionKnowledge,
        Rule::XrefPolicyOverrides,
        Rule::XrefToolFile,
        Rule::XrefPayloadMapping,
        Rule::XrefPrivateContext,
        Rule::LearningApproval,
        Rule::LearningScope,
        Rule::BindingsSyntax,
        Rule::BindingsUnbound,
        Rule::BindingsUnknownServer,
        Rule::BindingsUnknownOperation,
        Rule::BindingsUnknownTool,
        Rule::BindingsSkill,
        Rule::DiscoveryDuplicateName,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Rule::ManifestExists => "manifest.exists",
            Rule::ManifestSyntax => "manifest.syntax",
            Rule::ManifestRequiredFields => "manifest.required-fields",
            Rule::ManifestName => "manifest.name",
            Rule::ManifestSpecVersion => "manifest.spec-version",
            Rule::ManifestValues => "manifest.values",
            Rule::ManifestUnknownKey => "manifest.unknown-key",
            Rule::TriggerPreset => "trigger.preset",
            Rule::TriggerInactive => "trigger.inactive",
            Rule::TriggerSeconds => "trigger.seconds",
            Rule::PolicyValues => "policy.values",
            Rule::StructureOrchestrator => "structure.orchestrator",
            Rule::StructurePersona => "structure.persona",
            Rule::StructureFunctions => "structure.functions",
            Rule::StructureReadme => "structure.readme",
            Rule::FilesExist => "files.exist",
            Rule::FilesPath => "files.path",
            Rule::FilesReadable => "files.readable",
            Rule::FrontmatterFunction => "frontmatter.function",
            Rule::FrontmatterProcess => "frontmatter.process",
            Rule::FrontmatterKnowledge => "frontmatter.knowledge",
            Rule::FrontmatterState => "frontmatter.state",
            Rule::ToolSyntax => "tool.syntax",
            Rule::NamesUnique => "names.unique",
            Rule::XrefTriggerProcess => "xref.trigger-process",
            Rule::XrefProcessTrigger => "xref.process-trigger",
            Rule::XrefProcessFunctions => "xref.process-functions",
            Rule::XrefToolsDeclared => "xref.tools-declared",
            Rule::XrefFunctionKnowledge => "xref.function-knowledge",
            Rule::XrefPolicyOverrides => "xref.policy-overrides",
            Rule::XrefToolFile => "xref.tool-file",
            Rule::XrefPayloadMapping => "xref.payload-mapping",
            Rule::XrefPrivateContext => "xref.private-context",
            Rule::LearningApproval => "learning.approval",
            Rule::LearningScope => "learning.scope",
            Rule::BindingsSyntax => "bindings.syntax",
            Rule::BindingsUnbound => "bindings.unbound",
            Rule::BindingsUnknownServer => "bindings.unknown-server",
            Rule::BindingsUnknownOperation => "bindings.unknown-operation",
            Rule::BindingsUnknownTool => "bindings.unknown-tool",
            Rule::BindingsSkill => "bindings.skill",
            Rule::DiscoveryDuplicateName => "discovery.duplicate-name",
        }
    }

    pub fn severity(self) -> Severity {
        match self {
            Rule::ManifestSpecVersion
            | Rule::TriggerPreset
            | Rule::TriggerInactive
            | Rule::ManifestUnknownKey
            | Rule::TriggerSeconds
            | Rule::StructureReadme
            | Rule::XrefProcessTrigger
            | Rule::XrefProcessFunctions
            | Rule::XrefFunctionKnowledge
            | Rule::XrefPolicyOverrides
            | Rule::XrefToolFile
            | Rule::XrefPayloadMapping
            | Rule::XrefPrivateContext
            | Rule::LearningScope
            | Rule::BindingsUnknownOperation
            | Rule::BindingsUnknownTool => Severity::Warning,
            _ => Severity::Error,
        }
    }

    /// Where the rule comes from: a spec section, the loader design, or this loader.
    pub fn source(self) -> &'static str {
        match self {
            Rule::ManifestExists
            | Rule::ManifestRequiredFields
            | Rule::StructureOrchestrator
            | Rule::StructurePersona
            | Rule::StructureFunctions
            | Rule::FilesExist
            | Rule::XrefTriggerProcess
            | Rule::XrefProcessTrigger
            | Rule::XrefProcessFunctions
            | Rule::XrefToolsDeclared
            | Rule::XrefFunctionKnowledge
            | Rule::XrefPolicyOverrides
            | Rule::LearningApproval
            | Rule::LearningScope => "spec §14",
            Rule::XrefPrivateContext => "spec §9",
            Rule::TriggerPreset | Rule::TriggerInactive => "spec §3",
            Rule::BindingsSyntax
            | Rule::BindingsUnbound
            | Rule::BindingsUnknownServer
            | Rule::BindingsUnknownOperation => "loader design §3",
            _ => "loader",
        }
    }

    /// What a trigger rule demands (see [`Rule::summary`]).
    fn trigger_summary(self) -> &'static str {
        match self {
            Rule::TriggerPreset => {
                "a trigger's preset is one the runtime provides (it provides none): a trigger with another stays inactive"
            }
            Rule::TriggerInactive => {
                "a trigger whose requires_tool is not in requires.tools, or whose tz is unknown, stays inactive (the package loads)"
            }
            Rule::TriggerSeconds => "a 6-field cron expr is said to read seconds first",
            _ => "",
        }
    }

    /// One line saying what the rule demands.
    pub fn summary(self) -> &'static str {
        match self {
            Rule::ManifestExists => "expert.yaml exists and is readable",
            Rule::ManifestSyntax => "expert.yaml is YAML whose fields have the spec's types",
            Rule::ManifestRequiredFields => {
                "expert.yaml has spec, name, version, description and components"
            }
            Rule::ManifestName => {
                "the package name is one safe path segment (it names the workspace and session)"
            }
            Rule::ManifestSpecVersion => "spec is a 1.x version",
            Rule::ManifestValues => {
                "triggers (cron expr, tz, payload paths), concurrency, execution, delivery and learning use the spec's values"
            }
            Rule::ManifestUnknownKey => "expert.yaml uses only the keys spec 1.0 defines",
            Rule::TriggerPreset | Rule::TriggerInactive | Rule::TriggerSeconds => {
                self.trigger_summary()
            }
            Rule::PolicyValues => {
                "policy tiers, timeout, on_timeout and escalation channel use the spec's values"
            }
            Rule::StructureOrchestrator => "orchestrator.md exists at components.orchestrator",
            Rule::StructurePersona => {
                "at least one persona file exists at a path in components.persona"
            }
            Rule::StructureFunctions => {
                "at least one function file exists at a path in components.functions"
            }
            Rule::StructureReadme => "README.md exists (a required component, not needed to load)",
            Rule::FilesExist => "every path in components points to a file in the package",
            Rule::FilesPath => {
                "component paths are relative, stay inside the package and are not symbolic links"
            }
            Rule::FilesReadable => "component files are UTF-8 text within the size limit",
            Rule::FrontmatterFunction => {
                "function files have frontmatter with name and description; session is inline or isolated"
            }
            Rule::FrontmatterProcess => {
                "process files have frontmatter with name and description; inputs, context, execution and delivery use the spec's values"
            }
            Rule::FrontmatterKnowledge => {
                "knowledge frontmatter parses and type is static, dynamic or private"
            }
            Rule::FrontmatterState => "state frontmatter parses and scope is session or persistent",
            Rule::ToolSyntax => "tool files are YAML with a name and named operations",
            Rule::NamesUnique => "trigger, function, process, tool and operation names are unique",
            Rule::XrefTriggerProcess => {
                "every triggers[].process names a process in components.processes"
            }
            Rule::XrefProcessTrigger => "every process trigger names a manifest trigger",
            Rule::XrefProcessFunctions => "every process functions[] entry names a function",
            Rule::XrefToolsDeclared => {
                "every function or process tools[] entry is in requires.tools"
            }
            Rule::XrefFunctionKnowledge => {
                "every function knowledge[] path is in components.knowledge"
            }
            Rule::XrefPolicyOverrides => {
                "every policy.approval.overrides key is tool.operation of a required, declared tool"
            }
            Rule::XrefToolFile => {
                "every requires.tools entry has a tool file declaring its operations"
            }
            Rule::XrefPayloadMapping => {
                "every payload_mapping key is an input of the trigger's process, when it declares inputs"
            }
            Rule::XrefPrivateContext => {
                "a process run in the main session names no private knowledge in context (it is not preloaded there)"
            }
            Rule::LearningApproval => "learning.approval is auto, confirm or manual",
            Rule::LearningScope => "a learnings file's scope is package or a function name",
            Rule::BindingsSyntax => {
                "bindings.yaml is YAML binding tools with type mcp and a server"
            }
            Rule::BindingsUnbound => "every requires.tools entry is bound in bindings.yaml",
            Rule::BindingsUnknownServer => "every bound server is a configured MCP server",
            Rule::BindingsUnknownOperation => "operation mappings name operations of the tool file",
            Rule::BindingsUnknownTool => "bindings.yaml binds only tools in requires.tools",
            Rule::BindingsSkill => "tools are bound to MCP servers, never skills (no typed calls)",
            Rule::DiscoveryDuplicateName => "no two packages under the experts root share a name",
        }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One problem found in a package. Ordering (file, line, rule, field, message) is the report order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Finding {
    /// Relative to the package directory (`expert.yaml`, `functions/a.md`, `bindings.yaml`).
    pub file: String,
    pub line: Option<u32>,
    pub rule: Rule,
    pub field: Option<String>,
    pub message: String,
}

impl Finding {
    pub fn severity(&self) -> Severity {
        self.rule.severity()
    }
    pub fn is_error(&self) -> bool {
        self.severity() == Severity::Error
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}] {}", self.severity(), self.rule.id(), self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A finding at `file` (relative to the package), with the line and field when known.
pub(crate) fn finding(
    file: &str,
    line: Option<u32>,
    rule: Rule,
    field: Option<String>,
    message: impl Into<String>,
) -> Finding {
    Finding {
        file: file.into(),
        line,
        rule,
        field,
        message: message.into(),
    }
}
