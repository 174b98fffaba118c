//! ConfigMaps and Secrets from `configMapGenerator` and `secretGenerator`,
//! and the content hash Kustomize appends to their names.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::prov::{Kids, Prov, Src};
use crate::diagnostics::{rule, Rule};

/// One key of a generated object, with where its value was written.
pub struct Pair {
    pub key: String,
    pub value: Vec<u8>,
    pub at: Src,
}

/// Splits a `literals` entry `key=value`, dropping one pair of matching
/// quotes around the value, as Kustomize does.
pub fn literal(source: &str) -> Result<(String, String), String> {
    match source.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), unquote(v).to_string())),
        _ => Err(format!(
            "invalid literal source {source:?}, expected key=value"
        )),
    }
}

fn unquote(s: &str) -> &str {
    let b = s.as_bytes();
    if b.len() >= 2 && b[0] == b[b.len() - 1] && (b[0] == b'"' || b[0] == b'\'') {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

/// Splits a `files` entry: `path` (the key is the file name) or `key=path`.
pub fn file_source(source: &str) -> Result<(String, String), String> {
    match source.matches('=').count() {
        0 => {
            let key = source.rsplit('/').next().unwrap_or(source);
            Ok((key.to_string(), source.to_string()))
        }
        1 if source.starts_with('=') => Err(format!(
            "missing key name for file path {:?} in source {source:?}",
            &source[1..]
        )),
        1 if source.ends_with('=') => Err(format!(
            "missing file path for key name {:?} in source {source:?}",
            &source[..source.len() - 1]
        )),
        1 => {
            let (k, p) = source.split_once('=').unwrap_or_default();
            Ok((k.to_string(), p.to_string()))
        }
        _ => Err(format!(
            "source {source:?} key name or file path contains '='"
        )),
    }
}

/// Whether `key` is a valid ConfigMap or Secret key.
pub fn is_config_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 253
        && key != "."
        && key != ".."
        && !key.starts_with("..")
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
}

/// The longest env file line Kustomize reads, and one more: Go's
/// `bufio.Scanner` holds at most 64 KiB, the line end included.
const MAX_ENV_LINE: usize = 64 * 1024;

/// The pairs of an env file: one `KEY=value` a line, `#` comments and
/// blank lines skipped, a byte-order mark and CR line ends accepted.
/// `at(line)` gives the position of a 1-based line.
pub fn env_pairs(
    bytes: &[u8],
    at: impl Fn(usize) -> Src,
) -> Result<Vec<Pair>, (usize, &'static Rule, String)> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut out = Vec::new();
    let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    for (i, raw) in lines.into_iter().enumerate() {
        // Kustomize reads the lines with a scanner whose lines stop at
        // 64 KiB: at a longer one it stops reading, without a word, and
        // builds the file's lines before it only.
        if raw.len() >= MAX_ENV_LINE {
            let m = format!(
                "line {} has {} bytes: Kustomize stops reading an env file at a line of 64 KiB or more and drops it and every line after it; put a value this long in a file of its own (`files:`)",
                i + 1,
                raw.len()
            );
            return Err((i + 1, rule::KUSTOMIZE_GENERATOR_INVALID, m));
        }
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let Ok(line) = std::str::from_utf8(raw) else {
            let m = format!("line {} is not UTF-8 text", i + 1);
            return Err((i + 1, rule::KUSTOMIZE_GENERATOR_INVALID, m));
        };
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once('=').unwrap_or((line, ""));
        // Kustomize takes any key; the API server takes a ConfigMap's
        // or Secret's keys (`2FA_ENABLED` too).
        if !is_config_key(key) {
            return Err((
                i + 1,
                rule::KUSTOMIZE_GENERATOR_KEY_INVALID,
                format!(
                    "{key:?} is not a valid ConfigMap or Secret key, which the API server would refuse: use letters, digits, `-`, `.` and `_`"
                ),
            ));
        }
        out.push(Pair {
            key: key.to_string(),
            value: value.as_bytes().to_vec(),
            at: at(i + 1),
        });
    }
    Ok(out)
}

/// Base64 as Kustomize writes Secret values: lines of 70 characters, each
/// ended by a newline, once the text is 70 characters or longer.
fn secret_base64(bytes: &[u8]) -> String {
    let enc = base64::engine::general_purpose::STANDARD.encode(bytes);
    if enc.len() < 70 {
        return enc;
    }
    let mut out = String::with_capacity(enc.len() + enc.len() / 70 + 1);
    for chunk in enc.as_bytes().chunks(70) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// A generated object's value and provenance, before options.
pub struct Generated {
    pub value: Value,
    pub prov: Prov,
}

/// Builds a ConfigMap (`secret_type` None) or Secret from `pairs`. `at` is
/// where the generator entry is; each data key points at its pair's line.
#[allow(clippy::too_many_arguments)]
pub fn object(
    name: &str,
    namespace: &str,
    secret_type: Option<&str>,
    pairs: &[Pair],
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
    immutable: bool,
    at: &Src,
) -> Generated {
    let mut value = json!({
        "apiVersion": "v1",
        "kind": if secret_type.is_some() { "Secret" } else { "ConfigMap" },
        "metadata": {"name": name},
    });
    if !namespace.is_empty() {
        value["metadata"]["namespace"] = namespace.into();
    }
    let mut data = Map::new();
    let mut binary = Map::new();
    let mut data_prov = BTreeMap::new();
    let mut binary_prov = BTreeMap::new();
    for p in pairs {
        // Kustomize writes each value in the style Go's YAML writer picks,
        // and keeps it when a patch sets the value.
        let leaf = |text: &str| Prov {
            at: p.at.clone(),
            kids: match crate::yaml::generated_quoted(text) {
                true => Kids::Quoted,
                false => Kids::Leaf,
            },
        };
        match (secret_type, std::str::from_utf8(&p.value)) {
            (Some(_), _) => {
                let encoded = secret_base64(&p.value);
                data_prov.insert(p.key.clone(), leaf(&encoded));
                data.insert(p.key.clone(), encoded.into());
            }
            (None, Ok(text)) => {
                data.insert(p.key.clone(), text.into());
                data_prov.insert(p.key.clone(), leaf(text));
            }
            (None, Err(_)) => {
                let enc = base64::engine::general_purpose::STANDARD.encode(&p.value);
                binary_prov.insert(p.key.clone(), leaf(&enc));
                binary.insert(p.key.clone(), enc.into());
            }
        }
    }
    if let Some(t) = secret_type {
        value["type"] = if t.is_empty() { "Opaque" } else { t }.into();
    }
    if !data.is_empty() || secret_type.is_some() {
        value["data"] = Value::Object(data);
    }
    if !binary.is_empty() {
        value["binaryData"] = Value::Object(binary);
    }
    if !labels.is_empty() {
        value["metadata"]["labels"] = json!(labels);
    }
    if !annotations.is_empty() {
        value["metadata"]["annotations"] = json!(annotations);
    }
    if immutable {
        value["immutable"] = true.into();
    }
    let mut prov = Prov::uniform(&value, at);
    if let Some(d) = prov.key_mut("data") {
        d.kids = Kids::Map(data_prov);
    }
    if let Some(d) = prov.key_mut("binaryData") {
        d.kids = Kids::Map(binary_prov);
    }
    Generated { value, prov }
}

/// The name suffix Kustomize computes from a ConfigMap's or Secret's kind
/// and data (other kinds: from the whole object).
pub fn hash(value: &Value) -> String {
    let kind = value
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let field = |name: &str| value.get(name).cloned().unwrap_or_else(|| "".into());
    // Kustomize looks the name up as one field called "metadata/name",
    // which no object has: the name never counts.
    let name = Value::from("");
    let encoded = match kind {
        "ConfigMap" => {
            let mut m = Map::new();
            m.insert("kind".into(), "ConfigMap".into());
            m.insert("name".into(), name);
            m.insert("data".into(), field("data"));
            if let Some(b @ Value::Object(_)) = value.get("binaryData") {
                m.insert("binaryData".into(), b.clone());
            }
            Value::Object(m)
        }
        "Secret" => {
            let mut m = Map::new();
            m.insert("kind".into(), "Secret".into());
            m.insert("type".into(), field("type"));
            m.insert("name".into(), name);
            m.insert("data".into(), field("data"));
            if let Some(s @ Value::Object(_)) = value.get("stringData") {
                m.insert("stringData".into(), s.clone());
            }
            Value::Object(m)
        }
        _ => value.clone(),
    };
    let text = go_json(&encoded);
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().take(5).map(|b| format!("{b:02x}")).collect();
    // Kustomize swaps characters that could make the suffix look like a
    // number or a word.
    hex.chars()
        .map(|c| match c {
            '0' => 'g',
            '1' => 'h',
            '3' => 'k',
            'a' => 'm',
            'e' => 't',
            c => c,
        })
        .collect()
}

/// JSON text as Go's encoder writes it: sorted keys (serde_json's default
/// map), no spaces, and `<`, `>`, `&`, U+2028, U+2029 escaped.
fn go_json(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_files_and_keys() {
        assert_eq!(literal("A='x y'").unwrap(), ("A".into(), "x y".into()));
        assert_eq!(literal("A=\"q").unwrap(), ("A".into(), "\"q".into()));
        assert_eq!(literal("A=b=c").unwrap(), ("A".into(), "b=c".into()));
        assert!(literal("=x").is_err() && literal("x").is_err());
        assert_eq!(
            file_source("d/a.txt").unwrap(),
            ("a.txt".into(), "d/a.txt".into())
        );
        assert_eq!(
            file_source("k=d/a.txt").unwrap(),
            ("k".into(), "d/a.txt".into())
        );
        assert!(file_source("=a").is_err() && file_source("a=").is_err());
        assert!(file_source("a=b=c").is_err());
        assert!(is_config_key("a.b_c-1") && !is_config_key("..a") && !is_config_key("a/b"));
    }

    #[test]
    fn secret_values_wrap_at_seventy() {
        assert_eq!(secret_base64(b"abc"), "YWJj");
        let long = secret_base64(&[b'x'; 60]);
        assert!(long.ends_with('\n'));
        assert_eq!(long.lines().next().unwrap().len(), 70);
    }
}
