//! FalkorDB's compact replies (`--compact`), read from the host's flattened values: a header of
//! `[type, name]` pairs, the rows of `[type, value]` cells, and the statistics. Compact cells are
//! typed, so a list of texts stays a list (the verbose form prints it as one string).

use super::values::{DbValue, FalkorError, Result};

/// A value of a cell. Nodes, edges, paths and maps are never returned by memory control's queries:
/// they read as [`Cell::Other`].
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Null,
    Text(String),
    Int(i64),
    Bool(bool),
    Double(f64),
    List(Vec<Cell>),
    Other,
}

impl Cell {
    pub fn text(&self) -> Option<&str> {
        match self {
            Cell::Text(text) => Some(text),
            _ => None,
        }
    }

    pub fn int(&self) -> Option<i64> {
        match self {
            Cell::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// The texts of a list (others left out).
    pub fn texts(&self) -> Vec<String> {
        match self {
            Cell::List(items) => items
                .iter()
                .filter_map(|c| c.text().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// A query's result: its columns and rows (none for a write without `RETURN`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// A pre-order reply, read as a tree.
#[derive(Debug)]
enum Node {
    Nil,
    Int(i64),
    Bytes(Vec<u8>),
    Array(Vec<Node>),
}

fn tree(values: &[DbValue]) -> Result<Node> {
    let mut at = 0;
    let node = node(values, &mut at, 0)?;
    if at != values.len() {
        return Err(malformed("values after the reply"));
    }
    Ok(node)
}

fn node(values: &[DbValue], at: &mut usize, depth: usize) -> Result<Node> {
    if depth > 64 {
        return Err(malformed("nested deeper than 64"));
    }
    let value = values.get(*at).ok_or_else(|| malformed("it ends early"))?;
    *at += 1;
    Ok(match value {
        DbValue::Nil => Node::Nil,
        DbValue::Integer(n) => Node::Int(*n),
        DbValue::Bytes(bytes) => Node::Bytes(bytes.clone()),
        DbValue::Error(why) => return Err(FalkorError::Server(why.clone())),
        DbValue::Array(n) => {
            let n = *n as usize;
            if n > values.len() - *at {
                return Err(malformed("an array longer than the reply"));
            }
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(node(values, at, depth + 1)?);
            }
            Node::Array(items)
        }
    })
}

fn malformed(why: &str) -> FalkorError {
    FalkorError::Malformed(why.to_string())
}

fn text_of(node: &Node) -> Result<String> {
    match node {
        Node::Bytes(bytes) => Ok(String::from_utf8_lossy(bytes).into_owned()),
        _ => Err(malformed("a text expected")),
    }
}

/// A compact reply as a table.
pub fn table(values: &[DbValue]) -> Result<Table> {
    let Node::Array(parts) = tree(values)? else {
        return Err(malformed("not an array"));
    };
    // A write without RETURN answers with its statistics only.
    if parts.len() < 3 {
        return Ok(Table::default());
    }
    let (Node::Array(header), Node::Array(rows)) = (&parts[0], &parts[1]) else {
        return Err(malformed("no header and rows"));
    };
    let columns = header
        .iter()
        .map(|column| match column {
            Node::Array(pair) if pair.len() == 2 => text_of(&pair[1]),
            _ => Err(malformed("a column is not [type, name]")),
        })
        .collect::<Result<Vec<_>>>()?;
    let rows = rows
        .iter()
        .map(|row| match row {
            Node::Array(cells) if cells.len() == columns.len() => cells.iter().map(cell).collect(),
            _ => Err(malformed("a row does not match the header")),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Table { columns, rows })
}

/// A compact `[type, value]` cell (FalkorDB's value types: 1 null, 2 string, 3 integer,
/// 4 boolean, 5 double, 6 array).
fn cell(node: &Node) -> Result<Cell> {
    let Node::Array(pair) = node else {
        return Err(malformed("a cell is not [type, value]"));
    };
    let [Node::Int(kind), value] = pair.as_slice() else {
        return Err(malformed("a cell is not [type, value]"));
    };
    Ok(match (kind, value) {
        (1, _) => Cell::Null,
        (2, value) => Cell::Text(text_of(value)?),
        (3, Node::Int(n)) => Cell::Int(*n),
        (4, value) => Cell::Bool(text_of(value)? == "true"),
        (5, value) => Cell::Double(
            text_of(value)?
                .parse()
                .map_err(|_| malformed("a double that is not a number"))?,
        ),
        (6, Node::Array(items)) => Cell::List(items.iter().map(cell).collect::<Result<_>>()?),
        _ => Cell::Other,
    })
}

/// A reply that is a list of texts (`GRAPH.LIST`).
pub fn texts(values: &[DbValue]) -> Result<Vec<String>> {
    match tree(values)? {
        Node::Array(items) => items.iter().map(text_of).collect(),
        _ => Err(malformed("not a list")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(text: &str) -> DbValue {
        DbValue::Bytes(text.as_bytes().to_vec())
    }

    #[test]
    fn a_compact_reply_reads_as_typed_cells() {
        // [[[1,"e.uuid"],[1,"edges"]], [[[2,"a"],[6,[[2,"x, y"]]]]], ["stats"]]
        let values = vec![
            DbValue::Array(3),
            DbValue::Array(2),
            DbValue::Array(2),
            DbValue::Integer(1),
            bytes("e.uuid"),
            DbValue::Array(2),
            DbValue::Integer(1),
            bytes("edges"),
            DbValue::Array(1),
            DbValue::Array(2),
            DbValue::Array(2),
            DbValue::Integer(2),
            bytes("a"),
            DbValue::Array(2),
            DbValue::Integer(6),
            DbValue::Array(1),
            DbValue::Array(2),
            DbValue::Integer(2),
            bytes("x, y"),
            DbValue::Array(1),
            bytes("Cached execution: 0"),
        ];
        let table = table(&values).unwrap();
        assert_eq!(table.columns, ["e.uuid", "edges"]);
        assert_eq!(table.rows[0][0], Cell::Text("a".into()));
        assert_eq!(table.rows[0][1].texts(), ["x, y"]);
    }

    #[test]
    fn a_reply_that_lies_about_its_length_is_an_error_not_a_panic() {
        let values = vec![DbValue::Array(u32::MAX), DbValue::Nil];
        assert!(matches!(table(&values), Err(FalkorError::Malformed(_))));
        let values = vec![DbValue::Array(2), DbValue::Nil];
        assert!(matches!(table(&values), Err(FalkorError::Malformed(_))));
    }
}
