//! The one place that knows which YAML parser basepress uses.
//!
//! Everything else asks this module for typed values (through serde) or for
//! generic JSON-shaped values, and gets errors with a 1-based line and column.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::fmt;

/// A YAML value in the JSON data model, which is what Kubernetes manifests
/// and kustomizations use.
pub type Value = serde_json::Value;

/// A parse error with the position where the parser gave up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl Error {
    fn from_serde(e: serde_yaml::Error) -> Self {
        let mut message = e.to_string();
        // serde_yaml appends "at line L column C"; basepress reports the
        // position separately, so keep only the explanation.
        if let Some(i) = message.find(" at line ") {
            message.truncate(i);
        }
        let loc = e.location();
        Error {
            message,
            line: loc.as_ref().map(|l| l.line()),
            column: loc.as_ref().map(|l| l.column()),
        }
    }

    /// Moves the position down by `lines`, for YAML embedded in a larger
    /// file (front matter, a fenced block in Markdown).
    pub fn offset(mut self, lines: usize) -> Self {
        self.line = self.line.map(|l| l + lines);
        self
    }
}

/// Parses one YAML document into `T`. Unknown keys are errors where `T`
/// says `deny_unknown_fields`.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    serde_yaml::from_str(text).map_err(Error::from_serde)
}

/// Parses every document of a multi-document YAML stream, skipping empty
/// ones (a stream that starts with `---`, or a trailing `---`).
pub fn documents(text: &str) -> Result<Vec<Value>, Error> {
    let mut docs = Vec::new();
    for de in serde_yaml::Deserializer::from_str(text) {
        let v = serde_yaml::Value::deserialize(de).map_err(Error::from_serde)?;
        if v.is_null() {
            continue;
        }
        docs.push(to_json(v)?);
    }
    Ok(docs)
}

fn to_json(v: serde_yaml::Value) -> Result<Value, Error> {
    serde_json::to_value(v).map_err(|e| Error {
        message: format!("value cannot be represented as JSON: {e}"),
        line: None,
        column: None,
    })
}

/// Finds the first line holding `needle` as a YAML scalar (a list item, a
/// value after `key:`, quoted or plain), returning its 1-based line and
/// column. Used to point a finding about a value at its place in the file.
pub fn locate_scalar(text: &str, needle: &str) -> Option<(usize, usize)> {
    for (i, line) in text.lines().enumerate() {
        let code = line.split(" #").next().unwrap_or(line);
        for quote in ["", "\"", "'"] {
            let q = format!("{quote}{needle}{quote}");
            let mut from = 0;
            while let Some(pos) = code[from..].find(&q) {
                let start = from + pos;
                let end = start + q.len();
                let before = code[..start].trim_end();
                let after = code[end..].trim_start();
                let opens = before.is_empty()
                    || before.ends_with('-')
                    || before.ends_with(':')
                    || before.ends_with('[')
                    || before.ends_with(',')
                    || before.ends_with('=');
                let closes = after.is_empty() || after.starts_with(',') || after.starts_with(']');
                if opens && closes {
                    return Some((i + 1, start + 1));
                }
                from = end;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct T {
        a: u32,
    }

    #[test]
    fn unknown_key_has_position() {
        let e = from_str::<T>("a: 1\nb: 2\n").unwrap_err();
        assert!(e.message.contains("unknown field `b`"), "{}", e.message);
        assert_eq!((e.line, e.column), (Some(2), Some(1)));
        assert!(!e.message.contains("at line"));
    }

    #[test]
    fn syntax_error_has_position_and_offset() {
        let e = from_str::<T>("a: [1\n").unwrap_err().offset(10);
        assert!(e.line.unwrap() >= 11);
    }

    #[test]
    fn documents_skip_empty() {
        let docs = documents("---\na: 1\n---\nb: 2\n---\n").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1]["b"], 2);
    }

    #[test]
    fn locate_finds_list_items_and_values() {
        let text = "resources:\n  - ns.yaml\n  - app.yaml # note\npatches:\n  - path: \"p.yaml\"\n";
        assert_eq!(locate_scalar(text, "app.yaml"), Some((3, 5)));
        assert_eq!(locate_scalar(text, "p.yaml"), Some((5, 11)));
        assert_eq!(locate_scalar(text, "ns"), None);
    }
}
