//! Patch targets: Kustomize's selectors, with group, version, kind, name
//! and namespace as anchored regular expressions, and Kubernetes label
//! and annotation selectors.

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::Value;

use super::kustomization::Selector;
use super::resource::{Id, Res};

/// A selector, compiled.
pub struct Compiled {
    group: Option<Regex>,
    version: Option<Regex>,
    kind: Option<Regex>,
    name: Option<Regex>,
    namespace: Option<Regex>,
    labels: Vec<Requirement>,
    annotations: Vec<Requirement>,
}

/// Regular expressions of a selector match whole values, as Kustomize
/// anchors them; an empty one matches anything.
fn anchored(field: &str, pattern: &str) -> Result<Option<Regex>, String> {
    if pattern.is_empty() {
        return Ok(None);
    }
    super::goregex::compile("^(?:{})$", pattern)
        .map(Some)
        .map_err(|e| format!("target {field} {pattern:?} is not a valid regular expression: {e}"))
}

fn matches(re: &Option<Regex>, s: &str) -> bool {
    re.as_ref().is_none_or(|re| re.is_match(s))
}

impl Compiled {
    pub fn new(s: &Selector) -> Result<Self, String> {
        Ok(Compiled {
            group: anchored("group", &s.group)?,
            version: anchored("version", &s.version)?,
            kind: anchored("kind", &s.kind)?,
            name: anchored("name", &s.name)?,
            namespace: anchored("namespace", &s.namespace)?,
            labels: parse_selector(&s.label_selector)
                .map_err(|e| format!("labelSelector {:?}: {e}", s.label_selector))?,
            annotations: parse_selector(&s.annotation_selector)
                .map_err(|e| format!("annotationSelector {:?}: {e}", s.annotation_selector))?,
        })
    }

    /// Whether the selector picks `res`: namespace and name by the
    /// original or the current id, group, version and kind by the current.
    pub fn selects(&self, res: &Res) -> bool {
        self.picks(&res.org(), &res.cur(), &res.value)
    }

    /// Whether the selector picks a built object, known by its id alone.
    pub fn selects_object(&self, value: &Value) -> bool {
        let id = Id::of(value);
        self.picks(&id, &id, value)
    }

    fn picks(&self, org: &Id, cur: &Id, value: &Value) -> bool {
        (matches(&self.namespace, org.effective_namespace())
            || matches(&self.namespace, cur.effective_namespace()))
            && (matches(&self.name, &org.name) || matches(&self.name, &cur.name))
            && matches(&self.group, &cur.group)
            && matches(&self.version, &cur.version)
            && matches(&self.kind, &cur.kind)
            && self
                .labels
                .iter()
                .all(|r| r.matches(&string_map(value, "labels")))
            && self
                .annotations
                .iter()
                .all(|r| r.matches(&string_map(value, "annotations")))
    }
}

fn string_map(value: &Value, field: &str) -> BTreeMap<String, String> {
    let Some(Value::Object(m)) = value.get("metadata").and_then(|m| m.get(field)) else {
        return BTreeMap::new();
    };
    m.iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), v)
        })
        .collect()
}

/// One requirement of a label selector.
#[derive(Debug, PartialEq)]
enum Requirement {
    Exists(String),
    NotExists(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    /// `key>N`, `key<N`: the label's value, read as a whole number, is
    /// greater (less) than N; a value that is no number never matches.
    Greater(String, i64),
    Less(String, i64),
}

impl Requirement {
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        match self {
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::NotExists(k) => !labels.contains_key(k),
            Requirement::In(k, vs) => labels.get(k).is_some_and(|v| vs.contains(v)),
            Requirement::NotIn(k, vs) => labels.get(k).is_none_or(|v| !vs.contains(v)),
            Requirement::Greater(k, n) => number(labels, k).is_some_and(|v| v > *n),
            Requirement::Less(k, n) => number(labels, k).is_some_and(|v| v < *n),
        }
    }
}

/// The value of label `k` as a whole number, as Kubernetes reads it for
/// `>` and `<`.
fn number(labels: &BTreeMap<String, String>, k: &str) -> Option<i64> {
    labels.get(k)?.parse().ok()
}

/// Parses a Kubernetes label selector: comma-separated `key`, `!key`,
/// `key=value`, `key==value`, `key!=value`, `key in (a,b)`,
/// `key notin (a,b)`, `key>N`, `key<N`.
fn parse_selector(text: &str) -> Result<Vec<Requirement>, String> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        // One requirement ends at a comma outside parentheses.
        let mut depth = 0;
        let mut end = rest.len();
        for (i, c) in rest.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        out.push(requirement(rest[..end].trim())?);
        rest = rest.get(end + 1..).unwrap_or_default().trim();
        if end < text.len() && rest.is_empty() && text.trim_end().ends_with(',') {
            return Err("a selector cannot end with a comma".into());
        }
    }
    Ok(out)
}

/// A label name's part after any prefix, or a label value: at most 63
/// letters, digits, `-`, `_` and `.`, starting and ending with a letter or
/// digit (Kubernetes' `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`).
fn is_label_word(s: &str) -> bool {
    let ends_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    s.len() <= 63
        && ends_ok(s.chars().next())
        && ends_ok(s.chars().last())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// Whether `s` is a DNS subdomain (a label key's prefix): at most 253
/// characters of dot-separated lowercase words that start and end with a
/// letter or digit.
fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|w| {
            let ends_ok =
                |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
            ends_ok(w.chars().next())
                && ends_ok(w.chars().last())
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
}

/// A selector's key, as Kubernetes validates it: a qualified name, an
/// optional DNS subdomain and `/` before a [label word](is_label_word).
fn valid_key(k: &str) -> Result<String, String> {
    let ok = match k.split_once('/') {
        Some((prefix, name)) => is_dns_subdomain(prefix) && is_label_word(name),
        None => is_label_word(k),
    };
    if ok {
        Ok(k.to_string())
    } else {
        Err(format!(
            "invalid label key {k:?}: a key is at most 63 letters, digits, `-`, `_` and `.`, \
             starting and ending with a letter or digit, after an optional DNS prefix and `/` \
             (`app.kubernetes.io/name`)"
        ))
    }
}

/// A selector's value: empty, or a [label word](is_label_word).
fn valid_value(v: &str) -> Result<String, String> {
    let v = v.trim();
    if v.is_empty() || is_label_word(v) {
        Ok(v.to_string())
    } else {
        Err(format!(
            "invalid label value {v:?}: a value is empty or at most 63 letters, digits, \
             `-`, `_` and `.`, starting and ending with a letter or digit"
        ))
    }
}

fn set_values(s: &str) -> Result<Vec<String>, String> {
    let s = s.trim();
    let inner = s
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| format!("expected a parenthesised list of values, got {s:?}"))?;
    inner.split(',').map(valid_value).collect()
}

fn requirement(r: &str) -> Result<Requirement, String> {
    if r.is_empty() {
        return Err("empty requirement".into());
    }
    if let Some(k) = r.strip_prefix('!') {
        return Ok(Requirement::NotExists(valid_key(k.trim())?));
    }
    if let Some((k, v)) = r.split_once("!=") {
        return Ok(Requirement::NotIn(
            valid_key(k.trim())?,
            vec![valid_value(v)?],
        ));
    }
    if let Some((k, v)) = r.split_once("==").or_else(|| r.split_once('=')) {
        return Ok(Requirement::In(valid_key(k.trim())?, vec![valid_value(v)?]));
    }
    for (op, greater) in [('>', true), ('<', false)] {
        if let Some((k, v)) = r.split_once(op) {
            let n: i64 = v.trim().parse().map_err(|_| {
                format!(
                    "for `{op}`, the value must be a whole number, not {:?}",
                    v.trim()
                )
            })?;
            let k = valid_key(k.trim())?;
            return Ok(match greater {
                true => Requirement::Greater(k, n),
                false => Requirement::Less(k, n),
            });
        }
    }
    let words: Vec<&str> = r.splitn(2, char::is_whitespace).collect();
    match words.as_slice() {
        [k] => Ok(Requirement::Exists(valid_key(k)?)),
        [k, rest] => {
            let rest = rest.trim_start();
            if let Some(vs) = rest.strip_prefix("notin") {
                Ok(Requirement::NotIn(valid_key(k)?, set_values(vs)?))
            } else if let Some(vs) = rest.strip_prefix("in") {
                Ok(Requirement::In(valid_key(k)?, set_values(vs)?))
            } else {
                Err(format!("unknown operator in {r:?}"))
            }
        }
        _ => Err(format!("cannot parse {r:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_selectors_parse() {
        let labels: BTreeMap<String, String> = [
            ("app".to_string(), "web".to_string()),
            ("tier".into(), "a".into()),
        ]
        .into();
        let ok = |s: &str| {
            parse_selector(s)
                .unwrap()
                .iter()
                .all(|r| r.matches(&labels))
        };
        assert!(ok("app=web"));
        assert!(ok("app==web,tier"));
        assert!(ok("app in (web, db), !gone"));
        assert!(!ok("app notin (web)"));
        assert!(!ok("tier!=a"));
        assert!(ok(""));
        assert!(parse_selector("app=(x").is_err());
        assert!(parse_selector("a b c").is_err());
    }
}
