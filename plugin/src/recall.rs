//! Recalled graph data as routing sees it: node names, labels and summaries, and fact texts, parsed
//! defensively from the shapes Graphiti returns.

use serde_json::Value;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecalledNode {
    pub name: String,
    pub summary: String,
    pub labels: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecalledFact {
    pub name: String,
    pub fact: String,
    /// Set when Graphiti says the fact is no longer true.
    pub invalid_at: Option<String>,
    pub expired_at: Option<String>,
}

impl RecalledFact {
    pub fn is_current(&self) -> bool {
        self.invalid_at.is_none() && self.expired_at.is_none()
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recall {
    pub nodes: Vec<RecalledNode>,
    pub facts: Vec<RecalledFact>,
}

/// Most items routing looks at, whatever a fixture or server sends.
const MAX_ITEMS: usize = 200;

impl Recall {
    /// Parses `{"nodes": [...], "facts": [...]}` (either key optional), the payloads of Graphiti's
    /// `search_nodes` / `search_memory_facts` tools and REST `/search`, also wrapped in `{"result": ...}`.
    pub fn from_json(text: &str) -> Result<Recall, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("recall data is not JSON: {e}"))?;
        let value = match value.get("result") {
            Some(inner) if inner.is_object() => inner.clone(),
            _ => value,
        };
        let Some(object) = value.as_object() else {
            return Err("recall data must be a JSON object with \"nodes\" and/or \"facts\"".into());
        };
        let list = |key: &str| -> Result<Vec<Value>, String> {
            match object.get(key) {
                None | Some(Value::Null) => Ok(vec![]),
                Some(Value::Array(items)) => Ok(items.iter().take(MAX_ITEMS).cloned().collect()),
                Some(other) => Err(format!("recall data: \"{key}\" must be a list, not {}", kind(other))),
            }
        };
        let text = |item: &Value, key: &str| item.get(key).and_then(Value::as_str).unwrap_or("").to_string();
        let date = |item: &Value, key: &str| item.get(key).and_then(Value::as_str).map(str::to_string);
        let nodes = list("nodes")?
            .iter()
            .enumerate()
            .map(|(i, item)| {
                if !item.is_object() {
                    return Err(format!("recall data: nodes[{i}] must be an object, not {}", kind(item)));
                }
                Ok(RecalledNode {
                    name: text(item, "name"),
                    summary: text(item, "summary"),
                    labels: item
                        .get("labels")
                        .and_then(Value::as_array)
                        .map(|l| l.iter().filter_map(Value::as_str).map(str::to_string).collect())
                        .unwrap_or_default(),
                })
            })
            .collect::<Result<_, _>>()?;
        let facts = list("facts")?
            .iter()
            .enumerate()
            .map(|(i, item)| {
                if !item.is_object() {
                    return Err(format!("recall data: facts[{i}] must be an object, not {}", kind(item)));
                }
                Ok(RecalledFact {
                    name: text(item, "name"),
                    fact: text(item, "fact"),
                    invalid_at: date(item, "invalid_at"),
                    expired_at: date(item, "expired_at"),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Recall { nodes, facts })
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_graphiti_shapes() {
        let r = Recall::from_json(
            r#"{"result":{"nodes":[{"uuid":"1","name":"Acme","labels":["Entity","Company"],"summary":"A startup"}],
                "facts":[{"fact":"Alice works at Acme","invalid_at":"2025-01-03T00:00:00Z"}]}}"#,
        )
        .unwrap();
        assert_eq!(r.nodes[0].labels, vec!["Entity", "Company"]);
        assert!(!r.facts[0].is_current());
    }

    #[test]
    fn malformed_recall_names_the_problem() {
        assert!(Recall::from_json("[1]").unwrap_err().contains("JSON object"));
        assert!(Recall::from_json(r#"{"nodes": 3}"#).unwrap_err().contains("\"nodes\" must be a list"));
        assert!(Recall::from_json(r#"{"facts": ["x"]}"#).unwrap_err().contains("facts[0]"));
    }
}
