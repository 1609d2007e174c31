//! Whether Graphiti's API can delete in a chat's group. On FalkorDB every group is a graph of its
//! own, and the API's deletes look only in the server's default graph (getzep/graphiti issues 1651
//! and 1842): a delete by id fails, and clearing a group answers success and deletes nothing,
//! unless the group lives in the default graph. The MCP server names its database in `get_status`.
//! The REST server names none: a delete it answered with an error for an item that a search of the
//! group still finds teaches it, and that is kept (`memory/graphiti-deletes.json`) so that the next
//! proposal warns before it is confirmed; a delete by id that succeeds there unlearns it.

use super::search::GRAPHITI_TIMEOUT;
use super::{Kind, Proposal, memory_dir};
use crate::config::{GraphitiSettings, Transport};
use crate::memory::control::context::Context;
use crate::memory::graphiti::Client;
use crate::memory::graphiti::http::{Deadline, Http};
use crate::platform::files;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where the documentation says how to delete in FalkorDB itself.
pub const HOW_TO_DELETE: &str = "docs/memory-control.md, \"What each backend can forget\"";

/// Why the configured server's deletes miss a group's own graph: how the plugin knows.
#[derive(Clone, Debug, PartialEq)]
pub struct Misses {
    pub known_by: String,
}

impl Misses {
    /// Why what stayed in `group` stayed, and what to do: said once, after the items.
    pub fn explanation(&self, group: &str) -> String {
        format!(
            "Graphiti's API cannot delete in this chat's graph {group} ({}): on FalkorDB it \
             deletes only in the server's default graph (getzep/graphiti issues 1651 and 1842). \
             Delete what stayed in FalkorDB itself: GRAPH.DELETE {group} for the whole chat, or \
             as {HOW_TO_DELETE} shows for one item.",
            self.known_by
        )
    }

    /// What a proposal says before it is confirmed.
    pub fn warning(&self, group: &str) -> String {
        format!(
            "Warning: {} Confirming removes the captures not yet sent and the plugin's own \
             copies, but is likely to delete nothing Graphiti holds; the reply names what stayed.",
            self.explanation(group)
        )
    }
}

/// What the plugin knows of the configured server's deletes: `Some` when they are known to miss
/// a group's own graph. Asks an MCP server for its status when it has not named its database yet.
pub fn misses(cx: &mut Context, deadline: Deadline) -> Option<Misses> {
    // Connected to the database, the plugin deletes there itself.
    if cx.settings.graphiti.falkordb.configured().is_some() {
        return None;
    }
    let (client, _) = cx.graphiti_knowing_database(deadline);
    if client.database() == Some("falkordb") {
        return Some(Misses {
            known_by: "its MCP server names FalkorDB as its database".into(),
        });
    }
    let dir = cx.state_dir?;
    learned(dir, &cx.settings.graphiti).map(|learned| Misses {
        known_by: learned.evidence,
    })
}

/// What a proposal says before it is confirmed when Graphiti's deletes are known to miss the
/// chat's graph (FalkorDB), unless the group lives in the server's default graph.
pub fn deletes_warning(cx: &mut Context, proposal: &Proposal) -> Option<String> {
    let in_graphiti = !proposal.whole_groups.is_empty()
        || proposal.candidates.iter().any(|c| c.kind != Kind::Capture);
    if !in_graphiti {
        return None;
    }
    let deadline = Deadline::after(GRAPHITI_TIMEOUT);
    let misses = misses(cx, deadline)?;
    let in_default_graph = lives_in_default_graph(cx, &proposal.group, deadline);
    cx.save_graphiti_session();
    (!in_default_graph).then(|| misses.warning(&proposal.group))
}

/// Whether `group` lives in the default graph of a server whose deletes miss the others: only
/// there does the MCP server's listing, which reads the default graph, find its episodes (the
/// REST server's listing finds every group's, so it cannot tell).
pub fn lives_in_default_graph(cx: &mut Context, group: &str, deadline: Deadline) -> bool {
    if cx.settings.graphiti.transport != Transport::Mcp {
        return false;
    }
    let (client, http) = cx.graphiti();
    lists_episodes(client, http, group, deadline)
}

/// Whether the server's listing shows any episode of `group`.
pub fn lists_episodes(
    client: &mut Client,
    http: &mut dyn Http,
    group: &str,
    deadline: Deadline,
) -> bool {
    let listed = client.recent_episodes(http, group, 1, deadline);
    listed.is_ok_and(|listed| listed.is_some_and(|episodes| !episodes.is_empty()))
}

/// A server seen to miss: which one, and what showed it.
#[derive(Debug, Deserialize, Serialize)]
struct Learned {
    graphiti_url: String,
    at_ms: u64,
    evidence: String,
}

fn learned_path(state_dir: &Path) -> PathBuf {
    memory_dir(state_dir).join("graphiti-deletes.json")
}

/// What was learned of the configured server (one learned of another URL is of another server).
fn learned(state_dir: &Path, graphiti: &GraphitiSettings) -> Option<Learned> {
    let bytes = files::read_regular(&learned_path(state_dir), 64 * 1024)
        .ok()
        .flatten()?;
    let learned: Learned = serde_json::from_slice(&bytes).ok()?;
    (learned.graphiti_url == graphiti.url).then_some(learned)
}

/// Forgets what was learned (a delete by id succeeded): trouble removing it is left unsaid, as the
/// next proposal then only warns once more.
pub fn unlearn(state_dir: &Path) {
    let _ = std::fs::remove_file(learned_path(state_dir));
}

/// Keeps what showed that the configured server's deletes miss the group's graph.
pub fn learn(
    state_dir: &Path,
    graphiti: &GraphitiSettings,
    evidence: String,
    at_ms: u64,
) -> Result<Misses, String> {
    let learned = Learned {
        graphiti_url: graphiti.url.clone(),
        at_ms,
        evidence,
    };
    let path = learned_path(state_dir);
    let bytes = serde_json::to_vec_pretty(&learned).expect("serialises");
    std::fs::create_dir_all(memory_dir(state_dir))
        .and_then(|()| files::write_atomically(&path, &bytes))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(Misses {
        known_by: learned.evidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(url: &str) -> GraphitiSettings {
        GraphitiSettings {
            url: url.into(),
            ..GraphitiSettings::default()
        }
    }

    #[test]
    fn what_was_learned_holds_for_that_server_only() {
        let dir = tempfile::tempdir().unwrap();
        let rest = settings("http://graphiti:8000");
        assert!(learned(dir.path(), &rest).is_none());
        learn(dir.path(), &rest, "a delete answered 404".into(), 1).unwrap();
        assert_eq!(
            learned(dir.path(), &rest).map(|l| l.evidence).as_deref(),
            Some("a delete answered 404")
        );
        assert!(learned(dir.path(), &settings("http://other:8000")).is_none());
    }

    #[test]
    fn an_unreadable_record_is_as_if_nothing_was_learned() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(memory_dir(dir.path())).unwrap();
        std::fs::write(learned_path(dir.path()), b"{not json").unwrap();
        assert!(learned(dir.path(), &settings("http://graphiti:8000")).is_none());
    }
}
