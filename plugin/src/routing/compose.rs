//! The winner's block: scope first (P5: a private winner in a group chat gets no
//! pack), then composition (the packs composition rules add, within the character budget), then the
//! `<pack-context>` block.

use super::model::{Additional, Line, Routed, Rule, no_pack};
use crate::config::Scope;
use crate::platform::text;
use crate::routing::decision::{Decision, SkippedPack};
use crate::routing::packs::PackRegistry;

/// Scope (P5), then composition, then the block.
pub(super) fn compose(
    rule: &Rule,
    registry: &PackRegistry,
    budget: usize,
    group_chat: bool,
    mut decision: Decision,
) -> Routed {
    let primary = &registry.packs[rule.primary_pack];
    decision.intent = Some(rule.id.clone());
    let scope = if rule.scope == Scope::Private || primary.scope == Scope::Private {
        Scope::Private
    } else {
        Scope::Public
    };
    if group_chat && scope == Scope::Private {
        decision.intent = None;
        let reason = format!("{} is private and this is a group chat", rule.id);
        return no_pack(decision, reason);
    }
    let primary_content = match &primary.content {
        Ok(content) => content,
        Err(why) => {
            decision.intent = None;
            let reason = format!("primary pack {} is unavailable: {why}", primary.id);
            let mut routed = no_pack(decision, reason.clone());
            routed.notes.push(reason);
            return routed;
        }
    };

    let mut block = Block {
        rule,
        registry,
        budget,
        group_chat,
        body: text::truncate_chars(primary_content.primary(), budget),
        included: vec![(rule.primary_pack, None)],
        scope,
        notes: Vec::new(),
    };
    for extra in &rule.additional {
        if let Err((pack, why)) = block.add(extra, &mut decision) {
            return required_missing(decision, &pack, &why);
        }
    }
    decision.primary_pack = Some(primary.id.clone());
    decision.trace.push(
        Line::new()
            .text("inject: ")
            .text(&rule.id)
            .text(" with pack ")
            .text(&primary.id)
            .done(),
    );
    let pack_context = block.render(&primary.id, decision.sticky);
    Routed {
        decision,
        pack_context: Some(pack_context),
        notes: block.notes,
        ..Routed::default()
    }
}

/// The block being composed for one winning rule.
struct Block<'a> {
    rule: &'a Rule,
    registry: &'a PackRegistry,
    budget: usize,
    group_chat: bool,
    body: String,
    /// Registry index and mode of each pack already in the body.
    included: Vec<(usize, Option<&'a str>)>,
    /// Private as soon as one included pack is.
    scope: Scope,
    notes: Vec<String>,
}

impl<'a> Block<'a> {
    /// Adds one composition entry, or skips it (traced). Err is a required pack that cannot be
    /// added, and why: then the whole injection is skipped.
    fn add(
        &mut self,
        extra: &'a Additional,
        decision: &mut Decision,
    ) -> Result<(), (String, String)> {
        let skip = |decision: &mut Decision, reason: String| {
            decision
                .trace
                .push(format!("compose: skipped {}: {reason}", extra.label));
            decision.skipped_packs.push(SkippedPack {
                pack: extra.label.clone(),
                reason,
            });
        };
        let pack_index = match &extra.pack {
            Ok(index) => *index,
            Err(why) if extra.required => return Err((extra.label.clone(), why.clone())),
            Err(why) => {
                skip(decision, why.clone());
                return Ok(());
            }
        };
        let pack = &self.registry.packs[pack_index];
        // Scope wins over `required`: a private addition is left out of a group chat, quietly.
        if self.group_chat && pack.scope == Scope::Private {
            skip(decision, "private pack in a group chat".into());
            return Ok(());
        }
        let content = match &pack.content {
            Ok(content) => content,
            Err(why) if extra.required => return Err((pack.id.clone(), why.clone())),
            Err(why) => {
                skip(decision, why.clone());
                return Ok(());
            }
        };
        if self.included.contains(&(pack_index, extra.mode.as_deref())) {
            decision
                .trace
                .push(format!("compose: {} already included", pack.id));
            return Ok(());
        }
        let section = content.additional(extra.mode.as_deref());
        let budget = self.budget;
        if self.body.chars().count() + section.chars().count() + 1 > budget {
            let why = format!("the pack context would exceed its {budget}-character budget");
            if extra.required {
                return Err((pack.id.clone(), why));
            }
            self.notes
                .push(format!("{}: {} left out: {why}", self.rule.id, pack.id));
            skip(decision, why);
            return Ok(());
        }
        self.body.push('\n');
        self.body.push_str(section);
        self.included.push((pack_index, extra.mode.as_deref()));
        if pack.scope == Scope::Private {
            self.scope = Scope::Private;
        }
        let label = match &extra.mode {
            Some(mode) => format!("{} ({mode})", pack.id),
            None => pack.id.clone(),
        };
        decision.trace.push(format!(
            "compose: + {label}{}",
            if extra.required { " (required)" } else { "" }
        ));
        decision.additional_packs.push(label);
        Ok(())
    }

    /// The `<pack-context>` block around the composed body.
    fn render(&self, primary: &str, sticky: bool) -> String {
        let scope_name = if self.scope == Scope::Private {
            "private"
        } else {
            "public"
        };
        let sticky = if sticky { " sticky=\"true\"" } else { "" };
        // Appended piece by piece into one buffer: the block is built every routed turn.
        let body = self.body.trim_end();
        let mut block = String::with_capacity(body.len() + 128);
        block.push_str("<pack-context intent=\"");
        text::push_escaped(&mut block, &self.rule.id, true);
        block.push_str("\" primary-pack=\"");
        text::push_escaped(&mut block, primary, true);
        for piece in [
            "\" scope=\"",
            scope_name,
            "\"",
            sticky,
            ">\n",
            body,
            "\n</pack-context>",
        ] {
            block.push_str(piece);
        }
        block
    }
}

fn required_missing(mut decision: Decision, pack: &str, why: &str) -> Routed {
    let intent = decision.intent.take().unwrap_or_default();
    let reason = format!(
        "required pack {pack} for {intent} is unavailable ({why}): whole injection skipped"
    );
    let mut routed = no_pack(decision, reason.clone());
    routed.notes.push(reason);
    routed
}
