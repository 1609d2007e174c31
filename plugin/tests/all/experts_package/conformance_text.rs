//! What the model and the main agent read, fixes found against the upstream openexperts fixture:
//! package text verbatim, explicit overrides always listed, only resolved triggers listed, the
//! registry's real default tier.

use super::support::{TempPackage, assert_ready, prompt};
use graphiti_openclaw::experts::{RegistryLimits, experts_md, registry_summary};

#[test]
fn package_text_reaches_the_prompt_and_the_registry_verbatim() {
    let temp = TempPackage::base("verbatim");
    let rule = "Offer a discount > 20% only with approval & a <reason>.";
    temp.write("orchestrator.md", format!("# Routing\n{rule}\n").as_bytes());
    temp.edit(
        "functions/reply.md",
        "Draft a reply to a mail",
        "Reply when score >= 3 & <urgent>",
    );
    temp.edit("expert.yaml", "in one place", "in one place (a < b)");
    let expert = temp.load();
    assert_ready(&expert);
    let text = prompt(&expert);
    assert!(text.contains(&format!("\n{rule}\n")), "{text}");
    assert!(
        text.contains("- reply: Reply when score >= 3 & <urgent>\n"),
        "{text}"
    );
    assert!(!text.contains("&gt;") && !text.contains("&amp;"), "{text}");
    // Our own sections still cannot be forged: the author's heading sits below ours.
    assert!(text.contains("\n### Routing\n"), "{text}");
    let experts = [expert];
    let md = experts_md(&experts, &RegistryLimits::default());
    assert!(md.contains("in one place (a < b)"), "{md}");
    let summary = registry_summary(&experts, &RegistryLimits::default());
    assert!(summary.contains("in one place (a < b)"), "{summary}");
}

/// A tool `bulk` with `count` operations, required, listed and bound.
fn add_bulk_tool(temp: &TempPackage, count: usize) {
    let ops: String = (0..count)
        .map(|i| format!("  - name: op_{i:03}\n"))
        .collect();
    temp.write(
        "tools/bulk.yaml",
        format!("name: bulk\noperations:\n{ops}").as_bytes(),
    );
    temp.edit("expert.yaml", "    - mail\n", "    - mail\n    - bulk\n");
    temp.edit(
        "expert.yaml",
        "    - tools/mail.yaml\n",
        "    - tools/mail.yaml\n    - tools/bulk.yaml\n",
    );
    temp.edit(
        "expert.yaml",
        "      mail.send: manual\n",
        "      mail.send: manual\n      bulk.op_249: manual\n",
    );
    temp.edit(
        "bindings.yaml",
        "  mail:\n",
        "  bulk:\n    type: mcp\n    server: notes-mcp\n  mail:\n",
    );
}

#[test]
fn explicit_overrides_are_listed_whatever_the_operation_cap() {
    let temp = TempPackage::base("operation-cap");
    add_bulk_tool(&temp, 250);
    let text = temp.ready_prompt();
    // 254 operations, 3 of them overridden: those 3 and 197 at the default tier are listed.
    for explicit in ["- notes.read\n", "- mail.send\n", "- bulk.op_249\n"] {
        assert!(text.contains(explicit), "{explicit:?} missing:\n{text}");
    }
    assert!(
        text.contains("- bulk.op_196\n") && !text.contains("- bulk.op_197\n"),
        "{text}"
    );
    let policy = text.split("## Tool Approval Policy\n").nth(1).unwrap();
    let listed = policy.lines().filter(|l| l.starts_with("- ")).count();
    assert_eq!(listed, 200, "{text}");
    assert!(
        text.contains("[… 54 more operations at the default tier (confirm) not listed; their tiers are enforced all the same]"),
        "{text}"
    );
}

#[test]
fn only_triggers_that_start_a_process_are_listed_with_it() {
    let temp = TempPackage::base("unresolved-trigger");
    temp.edit(
        "processes/weekly-cleanup.md",
        "tools: [notes]\n",
        "tools: [notes]\ntrigger: weekly\n",
    );
    let text = temp.ready_prompt();
    assert!(
        text.contains("\n- weekly-cleanup: Archive old notes\n"),
        "{text}"
    );
    assert!(
        text.contains("\n- daily-review: Review the day (trigger: daily)\n"),
        "{text}"
    );
}

#[test]
fn an_inactive_trigger_is_not_advertised_in_the_prompt() {
    let temp = TempPackage::base("inactive-trigger");
    temp.edit(
        "expert.yaml",
        "    expr: \"0 9 * * *\"\n",
        "    expr: \"0 9 * * *\"\n    tz: somewhere east\n",
    );
    let text = temp.ready_prompt();
    assert!(
        text.contains("\n- daily-review: Review the day\n"),
        "a trigger that never fires is not offered as what starts the process: {text}"
    );
}

#[test]
fn the_registry_names_the_real_default_tier() {
    let temp = TempPackage::base("auto-default");
    temp.edit(
        "expert.yaml",
        "    default: confirm\n",
        "    default: auto\n",
    );
    let expert = temp.load();
    assert_ready(&expert);
    let experts = [expert];
    let md = experts_md(&experts, &RegistryLimits::default());
    assert!(
        md.contains("- **Policy:** auto by default (undeclared operations: confirm); manual (draft-only): mail.send\n"),
        "{md}"
    );
}

#[test]
fn knowledge_without_a_description_is_indexed_with_its_first_line() {
    let temp = TempPackage::base("knowledge-first-line");
    temp.write(
        "knowledge/style.md",
        b"# House style for summaries\n\nShort sentences.\n",
    );
    let text = temp.ready_prompt();
    assert!(
        text.contains("\n- style: House style for summaries"),
        "{text}"
    );
}
