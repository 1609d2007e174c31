//! A chat's group in FalkorDB, in Graphiti's own schema: graphiti-core writes each group to a graph
//! named by the group id (the server's default graph holds the group of that name), with
//! `Episodic` and `Entity` nodes, `MENTIONS` edges from an episode to the entities it names and
//! `RELATES_TO` facts between entities, each listing the episodes that support it. Every query
//! also matches the group id, so a group sharing the default graph touches only its own nodes.

use super::{Falkor, FalkorError, Param, Result};
use serde_json::{Value, json};

/// The graphiti-core releases whose schema these queries were tested on.
pub const TESTED_GRAPHITI: &str = "graphiti-core 0.31.1 and 0.31.2";

/// What a probe needs to find in a group's graph for these queries to mean what they say.
const NEEDED_KEYS: [&str; 7] = [
    "uuid",
    "group_id",
    "name",
    "content",
    "entity_edges",
    "episodes",
    "fact",
];

/// Whether `group`'s graph exists (a read of a missing graph is an error, and a write creates it).
pub fn exists(falkor: &mut Falkor, group: &str) -> Result<bool> {
    Ok(falkor.graphs()?.iter().any(|g| g == group))
}

/// Checks that `group`'s graph has Graphiti's schema, so that a delete cannot misread it: an
/// error names what is missing and the versions tested.
pub fn probe(falkor: &mut Falkor, group: &str) -> Result<()> {
    let labels = column_texts(falkor.read(group, "CALL db.labels()", &[])?);
    if !labels.iter().any(|l| l == "Episodic") {
        return Ok(());
    }
    let keys = column_texts(falkor.read(group, "CALL db.propertyKeys()", &[])?);
    let types = column_texts(falkor.read(group, "CALL db.relationshipTypes()", &[])?);
    let missing: Vec<&str> = NEEDED_KEYS
        .iter()
        .copied()
        .filter(|k| !keys.iter().any(|key| key == k))
        .chain(
            ["MENTIONS", "Entity"]
                .into_iter()
                .filter(|t| !types.iter().chain(&labels).any(|have| have == t)),
        )
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(FalkorError::Malformed(format!(
        "graph {group} does not have Graphiti's schema (no {}): the plugin's queries were \
         tested on {TESTED_GRAPHITI}; nothing was deleted",
        missing.join(", ")
    )))
}

fn column_texts(table: super::Table) -> Vec<String> {
    table
        .rows
        .into_iter()
        .filter_map(|row| row.into_iter().next()?.text().map(str::to_string))
        .collect()
}

fn group_param(group: &str) -> (&'static str, Param) {
    ("group", Param::Text(group.to_string()))
}

/// The group's `max` most recent episodes, newest first, as Graphiti's listing gives them.
pub fn episodes(falkor: &mut Falkor, group: &str, max: usize) -> Result<Vec<Value>> {
    if !exists(falkor, group)? {
        return Ok(Vec::new());
    }
    let max = i64::try_from(max).unwrap_or(i64::MAX);
    let table = falkor.read(
        group,
        "MATCH (e:Episodic) WHERE e.group_id = $group \
         RETURN e.uuid, e.name, e.content, e.source_description, e.created_at, e.valid_at \
         ORDER BY e.created_at DESC LIMIT $max",
        &[group_param(group), ("max", Param::Int(max))],
    )?;
    let text = |cell: &super::Cell| cell.text().map_or(Value::Null, |t| json!(t));
    Ok(table
        .rows
        .iter()
        .map(|row| {
            json!({
                "uuid": text(&row[0]),
                "name": text(&row[1]),
                "content": text(&row[2]),
                "source_description": text(&row[3]),
                "created_at": text(&row[4]),
                "valid_at": text(&row[5]),
                "group_id": group,
            })
        })
        .collect())
}

/// Which of the episodes named `names` the group holds.
pub fn stored_names(falkor: &mut Falkor, group: &str, names: &[String]) -> Result<Vec<String>> {
    if names.is_empty() || !exists(falkor, group)? {
        return Ok(Vec::new());
    }
    let table = falkor.read(
        group,
        "MATCH (e:Episodic) WHERE e.group_id = $group AND e.name IN $names RETURN e.name",
        &[group_param(group), ("names", Param::Texts(names.to_vec()))],
    )?;
    Ok(column_texts(table))
}

/// What deleting one episode did, by the rule of graphiti-core's `remove_episode`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Removal {
    /// Facts only this episode supported.
    pub facts_deleted: Vec<String>,
    /// Facts other episodes support too: kept, this episode taken off their list.
    pub facts_kept: Vec<String>,
    /// Entities only this episode mentioned.
    pub entities_deleted: Vec<String>,
    /// Entities other episodes mention too, by name: kept with their summaries as they were
    /// (Graphiti rebuilds them with its LLM; the plugin has none).
    pub summaries_left: Vec<String>,
}

/// Deletes episode `uuid` of `group` as graphiti-core 0.31.2's `remove_episode` does, short of
/// rebuilding summaries; None when the group holds no such episode. The episode goes last, so a
/// delete cut short is finished by the next one.
pub fn delete_episode(falkor: &mut Falkor, group: &str, uuid: &str) -> Result<Option<Removal>> {
    if !exists(falkor, group)? {
        return Ok(None);
    }
    probe(falkor, group)?;
    let episode = ("uuid", Param::Text(uuid.to_string()));
    let found = falkor.read(
        group,
        "MATCH (e:Episodic {uuid: $uuid}) WHERE e.group_id = $group RETURN e.entity_edges",
        &[episode.clone(), group_param(group)],
    )?;
    let Some(row) = found.rows.first() else {
        return Ok(None);
    };
    let edges = row[0].texts();
    let facts = falkor.read(
        group,
        "MATCH ()-[r:RELATES_TO]->() WHERE r.uuid IN $edges AND r.group_id = $group \
         RETURN r.uuid, r.episodes",
        &[("edges", Param::Texts(edges)), group_param(group)],
    )?;
    let mentioned = falkor.read(
        group,
        "MATCH (e:Episodic {uuid: $uuid})-[:MENTIONS]->(n:Entity) \
         MATCH (o:Episodic)-[:MENTIONS]->(n) RETURN n.uuid, n.name, count(o)",
        std::slice::from_ref(&episode),
    )?;
    let mut removal = Removal::default();
    for row in &facts.rows {
        let (Some(fact), supporters) = (row[0].text(), row[1].texts()) else {
            continue;
        };
        if !supporters.iter().any(|s| s == uuid) {
            continue;
        }
        let left: Vec<String> = supporters.into_iter().filter(|s| s != uuid).collect();
        if left.is_empty() {
            removal.facts_deleted.push(fact.to_string());
        } else {
            falkor.write(
                group,
                "MATCH ()-[r:RELATES_TO {uuid: $fact}]->() SET r.episodes = $left",
                &[
                    ("fact", Param::Text(fact.to_string())),
                    ("left", Param::Texts(left)),
                ],
            )?;
            removal.facts_kept.push(fact.to_string());
        }
    }
    for row in &mentioned.rows {
        let (Some(entity), name) = (row[0].text(), row[1].text().unwrap_or_default()) else {
            continue;
        };
        if row[2].int() == Some(1) {
            removal.entities_deleted.push(entity.to_string());
        } else {
            removal.summaries_left.push(name.to_string());
        }
    }
    falkor.write(
        group,
        "MATCH ()-[r:RELATES_TO]->() WHERE r.uuid IN $facts DELETE r",
        &[("facts", Param::Texts(removal.facts_deleted.clone()))],
    )?;
    falkor.write(
        group,
        "MATCH (n:Entity) WHERE n.uuid IN $entities DETACH DELETE n",
        &[("entities", Param::Texts(removal.entities_deleted.clone()))],
    )?;
    falkor.write(
        group,
        "MATCH (e:Episodic {uuid: $uuid}) WHERE e.group_id = $group DETACH DELETE e",
        &[episode, group_param(group)],
    )?;
    Ok(Some(removal))
}

/// Every fact of entity `uuid` in `group`: `(uuid, fact)` each.
pub fn facts_of_entity(
    falkor: &mut Falkor,
    group: &str,
    uuid: &str,
) -> Result<Vec<(String, String)>> {
    if !exists(falkor, group)? {
        return Ok(Vec::new());
    }
    let table = falkor.read(
        group,
        "MATCH (n:Entity {uuid: $uuid})-[r:RELATES_TO]-() WHERE n.group_id = $group \
         RETURN DISTINCT r.uuid, r.fact",
        &[("uuid", Param::Text(uuid.to_string())), group_param(group)],
    )?;
    Ok(table
        .rows
        .iter()
        .filter_map(|row| {
            let text = |i: usize| row[i].text().map(str::to_string);
            Some((text(0)?, text(1).unwrap_or_default()))
        })
        .collect())
}

/// Deletes entity `uuid` of `group` with every edge of it (its facts and mentions), as Graphiti
/// deletes a node; false when the group holds no such entity.
pub fn delete_entity(falkor: &mut Falkor, group: &str, uuid: &str) -> Result<bool> {
    delete_one(
        falkor,
        group,
        uuid,
        (
            "MATCH (n:Entity {uuid: $uuid}) WHERE n.group_id = $group",
            "n",
            "DETACH DELETE",
        ),
    )
}

/// Deletes fact `uuid` of `group`; false when the group holds no such fact.
pub fn delete_fact(falkor: &mut Falkor, group: &str, uuid: &str) -> Result<bool> {
    delete_one(
        falkor,
        group,
        uuid,
        (
            "MATCH ()-[r:RELATES_TO {uuid: $uuid}]->() WHERE r.group_id = $group",
            "r",
            "DELETE",
        ),
    )
}

/// Deletes what `pattern` (a match naming `variable`, with `$uuid` and `$group`) finds, after the
/// schema probe; false when it finds nothing.
fn delete_one(
    falkor: &mut Falkor,
    group: &str,
    uuid: &str,
    (pattern, variable, delete): (&str, &str, &str),
) -> Result<bool> {
    if !exists(falkor, group)? {
        return Ok(false);
    }
    probe(falkor, group)?;
    let params = [("uuid", Param::Text(uuid.to_string())), group_param(group)];
    let found = falkor.read(group, &format!("{pattern} RETURN {variable}.uuid"), &params)?;
    if found.rows.is_empty() {
        return Ok(false);
    }
    falkor.write(group, &format!("{pattern} {delete} {variable}"), &params)?;
    Ok(true)
}

/// Deletes everything of `group`: its graph, or, when it lives in the server's default graph
/// (`default_graph`, which is never deleted), the nodes carrying its group id.
pub fn delete_group(falkor: &mut Falkor, group: &str, default_graph: &str) -> Result<()> {
    if !exists(falkor, group)? {
        return Ok(());
    }
    if group == default_graph {
        falkor.write(
            group,
            "MATCH (n) WHERE n.group_id = $group DETACH DELETE n",
            &[group_param(group)],
        )?;
        return Ok(());
    }
    falkor.delete_graph(group)
}

/// Which of `uuids` (nodes or edges) the group still holds.
pub fn remaining(falkor: &mut Falkor, group: &str, uuids: &[String]) -> Result<Vec<String>> {
    if uuids.is_empty() || !exists(falkor, group)? {
        return Ok(Vec::new());
    }
    let params = [("uuids", Param::Texts(uuids.to_vec())), group_param(group)];
    let mut left = column_texts(falkor.read(
        group,
        "MATCH (n) WHERE n.uuid IN $uuids AND n.group_id = $group RETURN n.uuid",
        &params,
    )?);
    left.extend(column_texts(falkor.read(
        group,
        "MATCH ()-[r]->() WHERE r.uuid IN $uuids AND r.group_id = $group RETURN r.uuid",
        &params,
    )?));
    Ok(left)
}

/// How many nodes of the group are left (0 once its graph is gone).
pub fn node_count(falkor: &mut Falkor, group: &str) -> Result<i64> {
    if !exists(falkor, group)? {
        return Ok(0);
    }
    let table = falkor.read(
        group,
        "MATCH (n) WHERE n.group_id = $group RETURN count(n)",
        &[group_param(group)],
    )?;
    Ok(table.rows.first().and_then(|r| r[0].int()).unwrap_or(0))
}

/// A summary Graphiti keeps: an entity's, a community's or a saga's.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub label: String,
    pub name: String,
    pub summary: String,
}

/// The group's non-empty entity, community and saga summaries, at most `max`.
pub fn summaries(falkor: &mut Falkor, group: &str, max: usize) -> Result<Vec<Summary>> {
    if !exists(falkor, group)? {
        return Ok(Vec::new());
    }
    let table = falkor.read(
        group,
        "MATCH (n) WHERE n.group_id = $group AND (n:Entity OR n:Community OR n:Saga) \
         AND n.summary <> '' RETURN labels(n)[0], n.name, n.summary LIMIT $max",
        &[
            group_param(group),
            ("max", Param::Int(i64::try_from(max).unwrap_or(i64::MAX))),
        ],
    )?;
    Ok(table
        .rows
        .iter()
        .map(|row| {
            let text = |i: usize| row[i].text().unwrap_or_default().to_string();
            Summary {
                label: text(0),
                name: text(1),
                summary: text(2),
            }
        })
        .collect())
}

/// The FalkorDB behind Graphiti, reached through the host: what a sender keeps between passes.
pub struct FalkorAt<'a> {
    pub database: &'a mut dyn super::Database,
    pub origin: &'a str,
}

impl FalkorAt<'_> {
    /// The names of the group's 100 most recent episodes, read in its graph (an episode is
    /// written there only once Graphiti's extraction is done).
    pub fn recent_episode_names(
        &mut self,
        group: &str,
        deadline: crate::memory::graphiti::http::Deadline,
    ) -> std::result::Result<Vec<String>, String> {
        let mut falkor = Falkor {
            db: &mut *self.database,
            origin: self.origin,
            deadline,
        };
        episodes(&mut falkor, group, 100)
            .map(|listed| crate::memory::graphiti::names_of(&listed))
            .map_err(|e| format!("FalkorDB: {e}"))
    }
}
