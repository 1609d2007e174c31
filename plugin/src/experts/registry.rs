//! What the main agent is told about the experts it can delegate to (loader design §7): a short registry
//! for its context and the full `EXPERTS.md`. Only experts that loaded and bound without error appear;
//! private knowledge never does (knowledge is not listed at all).

use super::bindings::Bindings;
use super::loader::LoadedExpert;
use super::package::{Package, Trigger};
use super::policy::Tier;
use super::prompt::one_line;

#[derive(Clone, Debug)]
pub struct RegistryLimits {
    /// Experts listed at most.
    pub max_experts: usize,
    /// Items of one list (triggers, capabilities, operations) shown at most.
    pub max_items: usize,
    /// One description or item, in characters.
    pub max_field_chars: usize,
    /// The short registry as a whole, in characters.
    pub max_total_chars: usize,
}

impl Default for RegistryLimits {
    fn default() -> Self {
        RegistryLimits {
            max_experts: 50,
            max_items: 8,
            max_field_chars: 200,
            max_total_chars: 6000,
        }
    }
}

fn ready(experts: &[LoadedExpert]) -> Vec<(&Package, &Bindings)> {
    experts
        .iter()
        .filter_map(|e| e.ready().map(|p| (p, &e.bindings)))
        .collect()
}

/// Up to `max` items joined, with a count of the rest.
fn capped(items: Vec<String>, max: usize) -> String {
    let total = items.len();
    let mut shown: Vec<String> = items.into_iter().take(max).collect();
    if total > max {
        shown.push(format!("+{} more", total - max));
    }
    shown.join(", ")
}

/// `new_email (webhook/gmail) → inbound-email-triage [serial_per_key: contact_id]`
fn trigger_line(t: &Trigger, max: usize) -> String {
    let source = match (t.kind.as_str(), &t.preset, &t.requires_tool, &t.expr) {
        ("webhook", Some(preset), _, _) => format!("webhook/{preset}"),
        ("webhook", None, Some(tool), _) => format!("webhook via {tool}"),
        ("cron", _, _, Some(expr)) => {
            format!("cron: {} {}", expr.trim(), t.tz.as_deref().unwrap_or("UTC"))
        }
        (kind, ..) => kind.to_string(),
    };
    let mode = match &t.concurrency_key {
        Some(key) => format!("{}: {key}", t.concurrency),
        None => t.concurrency.clone(),
    };
    let source = match t.inactive() {
        Some(_) => format!("{source}, inactive"),
        None => source,
    };
    one_line(
        &format!("{} ({source}) → {} [{mode}]", t.name, t.process),
        max,
    )
}

fn capabilities(package: &Package, limits: &RegistryLimits) -> String {
    capped(
        package
            .functions
            .iter()
            .map(|f| one_line(&f.name, limits.max_field_chars))
            .collect(),
        limits.max_items,
    )
}

fn tools_bound(package: &Package, bindings: &Bindings, limits: &RegistryLimits) -> String {
    if package.required_tools.is_empty() {
        return "none".into();
    }
    let items = package
        .required_tools
        .iter()
        .map(|tool| match bindings.tools.get(tool) {
            Some(b) => one_line(&format!("{tool} → {}", b.server), limits.max_field_chars),
            None => one_line(&format!("{tool} → (unbound)"), limits.max_field_chars),
        })
        .collect();
    capped(items, limits.max_items)
}

/// `confirm by default; auto: crm.get_deal, …; manual (draft-only): email.send`. The default is the
/// policy's; when undeclared operations get a stricter tier (an `auto` default never reaches them), it
/// says so: `auto by default (undeclared operations: confirm); …`.
pub fn policy_summary(package: &Package, max_items: usize, max_chars: usize) -> String {
    let default = package.policy.default;
    let unknown = package.policy.tier_of_unknown();
    let mut first = format!("{} by default", default.as_str());
    if unknown != default {
        first.push_str(&format!(" (undeclared operations: {})", unknown.as_str()));
    }
    let mut parts = vec![first];
    let operations = package.operations();
    for tier in [Tier::Auto, Tier::Confirm, Tier::Manual] {
        if tier == default {
            continue;
        }
        let ops: Vec<String> = operations
            .iter()
            .filter(|op| super::gate::effective_tier(package, op) == tier)
            .map(|op| one_line(op, max_chars))
            .collect();
        if !ops.is_empty() {
            let label = if tier == Tier::Manual {
                "manual (draft-only)"
            } else {
                tier.as_str()
            };
            parts.push(format!("{label}: {}", capped(ops, max_items)));
        }
    }
    parts.join("; ")
}

/// The short registry for the main agent's context: one entry per ready expert, bounded.
pub fn registry_summary(experts: &[LoadedExpert], limits: &RegistryLimits) -> String {
    let ready = ready(experts);
    if ready.is_empty() {
        return String::new();
    }
    let mut out =
        String::from("Experts you can delegate to (send the task to the expert's session):\n");
    let mut listed = 0;
    for (package, bindings) in &ready {
        if listed == limits.max_experts {
            break;
        }
        let mut entry = format!(
            "- {} (session {}): {}\n",
            package.name,
            package.session_label(),
            one_line(&package.description, limits.max_field_chars)
        );
        if !package.triggers.is_empty() {
            let triggers = package
                .triggers
                .iter()
                .map(|t| trigger_line(t, limits.max_field_chars))
                .collect();
            entry.push_str(&format!(
                "  triggers: {}\n",
                capped(triggers, limits.max_items)
            ));
        }
        entry.push_str(&format!(
            "  capabilities: {}\n",
            capabilities(package, limits)
        ));
        entry.push_str(&format!(
            "  tools: {}\n",
            tools_bound(package, bindings, limits)
        ));
        entry.push_str(&format!(
            "  policy: {}\n",
            policy_summary(package, limits.max_items, limits.max_field_chars)
        ));
        let closing = ready.len() - listed - 1;
        let marker_room = if closing > 0 { 64 } else { 0 };
        if out.chars().count() + entry.chars().count() + marker_room > limits.max_total_chars {
            break;
        }
        out.push_str(&entry);
        listed += 1;
    }
    if listed < ready.len() {
        out.push_str(&format!(
            "[… {} more experts not listed; see EXPERTS.md]\n",
            ready.len() - listed
        ));
    }
    out
}

/// The full `EXPERTS.md` (loader design §7).
pub fn experts_md(experts: &[LoadedExpert], limits: &RegistryLimits) -> String {
    let ready = ready(experts);
    let mut out = String::from("# Available Experts\n");
    if ready.is_empty() {
        out.push_str("\nNo expert is available.\n");
    }
    for (package, bindings) in ready.iter().take(limits.max_experts) {
        out.push_str(&format!("\n## {}\n", package.name));
        out.push_str(&format!(
            "- **Description:** {}\n",
            one_line(&package.description, limits.max_field_chars)
        ));
        out.push_str(&format!(
            "- **Version:** {}\n",
            one_line(&package.version, limits.max_field_chars)
        ));
        out.push_str(&format!("- **Session:** {}\n", package.session_label()));
        if package.triggers.is_empty() {
            out.push_str("- **Triggers:** none (on request only)\n");
        } else {
            out.push_str("- **Triggers:**\n");
            for t in package.triggers.iter().take(limits.max_items) {
                out.push_str(&format!(
                    "  - {}\n",
                    trigger_line(t, limits.max_field_chars)
                ));
            }
            if package.triggers.len() > limits.max_items {
                out.push_str(&format!(
                    "  - +{} more\n",
                    package.triggers.len() - limits.max_items
                ));
            }
        }
        out.push_str(&format!(
            "- **Capabilities:** {}\n",
            capabilities(package, limits)
        ));
        if !package.outputs.is_empty() {
            let outputs = package
                .outputs
                .iter()
                .map(|o| one_line(o, limits.max_field_chars))
                .collect();
            out.push_str(&format!(
                "- **Produces:** {}\n",
                capped(outputs, limits.max_items)
            ));
        }
        out.push_str(&format!(
            "- **Tools bound:** {}\n",
            tools_bound(package, bindings, limits)
        ));
        out.push_str(&format!(
            "- **Policy:** {}\n",
            policy_summary(package, limits.max_items, limits.max_field_chars)
        ));
    }
    if ready.len() > limits.max_experts {
        out.push_str(&format!(
            "\n[… {} more experts not listed]\n",
            ready.len() - limits.max_experts
        ));
    }
    out
}
