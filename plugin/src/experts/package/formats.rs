//! The file formats as parsed (manifest, component frontmatter, tool files): everything optional, so
//! missing fields are findings rather than parse failures.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ManifestFile {
    pub spec: Option<serde_norway::Value>,
    pub name: Option<String>,
    pub version: Option<serde_norway::Value>,
    pub description: Option<String>,
    pub author: Option<String>,
    pub license: Option<String>,
    pub requires: Option<RequiresSpec>,
    pub triggers: Option<Vec<TriggerSpec>>,
    pub concurrency: Option<ConcurrencySpec>,
    pub execution: Option<ExecutionSpec>,
    pub delivery: Option<DeliverySpec>,
    pub learning: Option<LearningSpec>,
    pub policy: Option<PolicySpec>,
    pub outputs: Option<Vec<String>>,
    pub components: Option<ComponentsSpec>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct RequiresSpec {
    pub tools: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct TriggerSpec {
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub process: Option<String>,
    pub preset: Option<String>,
    pub requires_tool: Option<String>,
    pub expr: Option<String>,
    pub tz: Option<String>,
    pub session: Option<String>,
    pub concurrency: Option<String>,
    pub concurrency_key: Option<String>,
    pub description: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ConcurrencySpec {
    pub default: Option<String>,
    pub key: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ExecutionSpec {
    pub timeout: Option<String>,
    pub on_failure: Option<String>,
    pub retry: Option<RetrySpec>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct RetrySpec {
    pub max_attempts: Option<u64>,
    pub backoff: Option<String>,
    pub delay: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct DeliverySpec {
    pub format: Option<String>,
    pub channel: Option<String>,
    pub sla_breach: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct LearningSpec {
    pub enabled: Option<bool>,
    pub approval: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct PolicySpec {
    pub approval: Option<ApprovalSpec>,
    pub escalation: Option<EscalationSpec>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ApprovalSpec {
    pub default: Option<String>,
    pub overrides: Option<BTreeMap<String, String>>,
    pub timeout: Option<String>,
    pub on_timeout: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct EscalationSpec {
    pub channel: Option<String>,
    pub on_low_confidence: Option<bool>,
    pub on_manual_ready: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ComponentsSpec {
    pub orchestrator: Option<String>,
    pub persona: Option<Vec<String>>,
    pub functions: Option<Vec<String>>,
    pub processes: Option<Vec<String>>,
    pub tools: Option<Vec<String>>,
    pub knowledge: Option<Vec<String>>,
    pub state: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct FunctionFront {
    pub name: Option<String>,
    pub description: Option<String>,
    pub tools: Option<Vec<String>>,
    pub knowledge: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct ProcessFront {
    pub name: Option<String>,
    pub description: Option<String>,
    pub trigger: Option<String>,
    pub functions: Option<Vec<String>>,
    pub tools: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct KnowledgeFront {
    pub name: Option<String>,
    pub description: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct StateFront {
    pub name: Option<String>,
    pub description: Option<String>,
    pub scope: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct ToolFile {
    pub name: Option<String>,
    pub description: Option<String>,
    pub operations: Option<Vec<OperationSpec>>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct OperationSpec {
    pub name: Option<String>,
    pub description: Option<String>,
}
