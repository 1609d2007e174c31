//! The prompt's `##` sections, and fitting them to the total limit (the approval policy and the
//! instructions are never cut).

use super::cut::cut_at_line;
use crate::platform::text::truncate_chars;

pub(super) struct Section {
    pub title: &'static str,
    pub body: String,
    /// Never cut for the total limit.
    pub reserved: bool,
}

/// The whole prompt: the sections that are not empty, one blank line apart.
pub(super) fn join(sections: &[Section]) -> String {
    sections
        .iter()
        .filter(|s| !s.body.is_empty())
        .map(Section::render)
        .collect::<Vec<_>>()
        .join("\n")
}

impl Section {
    fn render(&self) -> String {
        format!("## {}\n{}", self.title, self.body)
    }
}

/// Cuts the unreserved sections so the whole fits `max_total`: each gets an equal share of what the
/// reserved sections leave, and a section needing less than its share passes the rest on (so small
/// indexes stay whole and the largest documents are cut first).
pub(super) fn fit_total(sections: &mut [Section], max_total: usize, truncations: &mut Vec<String>) {
    let len = |s: &Section| s.render().chars().count();
    let separators = sections.len().saturating_sub(1);
    let reserved: usize = sections.iter().filter(|s| s.reserved).map(len).sum();
    // Room for the note naming sections left out entirely (appended to the last section).
    let mut budget = max_total.saturating_sub(reserved + separators + OMITTED_NOTE_RESERVE);
    let mut omitted = Vec::new();
    let mut order: Vec<usize> = (0..sections.len())
        .filter(|&i| !sections[i].reserved)
        .collect();
    crate::platform::sorting::sort_by_key(&mut order, |&i| (len(&sections[i]), i));
    let mut left = order.len();
    for i in order {
        let share = budget / left.max(1);
        left -= 1;
        let need = len(&sections[i]);
        if need <= share {
            budget -= need;
            continue;
        }
        let header = sections[i].title.chars().count() + 4;
        let marker = format!("[… section cut to fit the prompt size limit: {need} characters]\n");
        // Room for the body, less the marker and a fence that may have to be closed.
        let Some(room) = share
            .checked_sub(header + marker.chars().count() + 5)
            .filter(|r| *r > 0)
        else {
            truncations.push(format!(
                "section {:?}: left out to fit the total limit ({need} characters)",
                sections[i].title
            ));
            sections[i].body.clear();
            omitted.push((i, sections[i].title));
            continue;
        };
        let mut new_body = String::from(cut_at_line(&sections[i].body, room));
        if !new_body.is_empty() && !new_body.ends_with('\n') {
            new_body.push('\n');
        }
        if !new_body
            .lines()
            .filter(|l| l.trim_start().starts_with("```"))
            .count()
            .is_multiple_of(2)
        {
            new_body.push_str("```\n");
        }
        new_body.push_str(&marker);
        truncations.push(format!(
            "section {:?}: cut from {need} characters to fit the total limit",
            sections[i].title
        ));
        sections[i].body = new_body;
        budget = budget.saturating_sub(len(&sections[i]));
    }
    if !omitted.is_empty() {
        crate::platform::sorting::sort(&mut omitted);
        let titles: Vec<&str> = omitted.iter().map(|(_, t)| *t).collect();
        let note = format!(
            "[… left out to fit the prompt size limit: {}]\n",
            titles.join(", ")
        );
        if let Some(last) = sections.last_mut() {
            last.body
                .push_str(&truncate_chars(&note, OMITTED_NOTE_RESERVE - 2));
        }
    }
}

/// Characters kept free for the note naming sections left out entirely.
const OMITTED_NOTE_RESERVE: usize = 160;
