//! The file formats as parsed (manifest, component frontmatter, tool files): everything optional, so
//! missing fields are findings rather than parse failures.

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;

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
    /// Every top-level key, as written (read apart: see `load::read_manifest`).
    #[serde(skip)]
    pub keys: Vec<String>,
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
    pub dedupe_key: Option<String>,
    pub payload_mapping: Option<OrderedPairs>,
    pub description: Option<String>,
}

/// A mapping of strings in file order (a `BTreeMap` would sort it; the runtime maps in the author's order).
#[derive(Debug, Default)]
pub(crate) struct OrderedPairs(pub Vec<(String, String)>);

impl<'de> Deserialize<'de> for OrderedPairs {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Pairs;
        impl<'de> Visitor<'de> for Pairs {
            type Value = OrderedPairs;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping of names to strings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderedPairs, A::Error> {
                let mut pairs = Vec::new();
                while let Some(pair) = map.next_entry::<String, String>()? {
                    pairs.push(pair);
                }
                Ok(OrderedPairs(pairs))
            }
        }
        deserializer.deserialize_map(Pairs)
    }
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ConcurrencySpec {
    pub default: Option<String>,
    pub key: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ExecutionSpec {
    pub timeout: Option<String>,
    pub idempotent: Option<bool>,
    pub on_failure: Option<String>,
    pub retry: Option<RetrySpec>,
    pub resume_from_execution_log: Option<bool>,
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
    /// Process level only (spec §7).
    pub sla: Option<String>,
    pub sla_breach: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct LearningSpec {
    pub enabled: Option<bool>,
    pub approval: Option<String>,
    pub max_entries_per_file: Option<u64>,
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
    pub session: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct ProcessFront {
    pub name: Option<String>,
    pub description: Option<String>,
    pub trigger: Option<String>,
    pub functions: Option<Vec<String>>,
    pub tools: Option<Vec<String>>,
    /// Each a name or a mapping with `name` (the spec's examples use `{name, type}`).
    pub inputs: Option<Vec<serde_norway::Value>>,
    pub outputs: Option<Vec<serde_norway::Value>>,
    pub context: Option<Vec<String>>,
    pub scratchpad: Option<String>,
    pub execution: Option<ExecutionSpec>,
    pub delivery: Option<DeliverySpec>,
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
