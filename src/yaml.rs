//! The one place that knows which YAML parser basepress uses.
//!
//! Everything else asks this module for typed values (through serde) or for
//! generic JSON-shaped values, and gets errors with a 1-based line and column.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::collections::HashMap;
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
    /// The error serde_yaml gave for `text`, placed where the problem is.
    fn from_serde(e: serde_yaml::Error, text: &str) -> Self {
        let mut message = e.to_string();
        // serde_yaml appends "at line L column C"; basepress reports the
        // position separately, so keep only the explanation.
        if let Some(i) = message.find(" at line ") {
            message.truncate(i);
        }
        let loc = e.location();
        let mut line = loc.as_ref().map(|l| l.line());
        let mut column = loc.as_ref().map(|l| l.column());
        // The reader says where a character it refuses is as a byte offset.
        if let Some(offset) = message
            .rsplit_once(" at position ")
            .and_then(|(_, n)| n.parse::<usize>().ok())
        {
            let at = offset.min(text.len());
            let at = (0..=at)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            line = Some(text[..at].matches('\n').count() + 1);
            column = Some(
                text[..at]
                    .rsplit('\n')
                    .next()
                    .map_or(0, |l| l.chars().count())
                    + 1,
            );
            if let Some((head, _)) = message.rsplit_once(" at position ") {
                message.truncate(head.len());
            }
        }
        // A second document is reported without a place: it starts where
        // the parser starts the second.
        if line.is_none() && message.contains("more than one document") {
            let second = saphyr_parser::Parser::new_from_str(text)
                .map_while(Result::ok)
                .filter(|(e, _)| matches!(e, saphyr_parser::Event::DocumentStart(_)))
                .nth(1);
            if let Some((_, span)) = second {
                line = Some(span.start.line());
                column = Some(span.start.col() + 1);
            }
            message = "the file holds more than one YAML document (a `---` line starts the second): it must hold one".into();
        }
        // A repeated key is reported at the start of its mapping: point at
        // the repetition instead.
        if let (Some(key), Some(l), Some(c)) = (repeated_key(&message), line, column) {
            if let Some(l) = repetition(text, &key, l, c) {
                line = Some(l);
            }
        }
        Error {
            message,
            line,
            column,
        }
    }

    /// Moves the position down by `lines`, for YAML embedded in a larger
    /// file (front matter, a fenced block in Markdown).
    pub fn offset(mut self, lines: usize) -> Self {
        self.line = self.line.map(|l| l + lines);
        self
    }
}

/// How deep collections may nest: serde_yaml refuses deeper values anyway
/// (its recursion limit), but only after scanning the whole text, in time
/// that grows with the depth times the length.
pub const MAX_DEPTH: usize = 128;

/// Refuses text whose collections nest deeper than [`MAX_DEPTH`] before
/// serde_yaml reads it: its scanner does work proportional to the flow
/// depth for every token, so 200 KB of `[` took half a minute.
///
/// Text with at most [`MAX_DEPTH`] flow indicators cannot be deeper in
/// flow style (and block nesting costs the scanner nothing), so only
/// other text is walked, with a parser that stops at the first level too
/// deep. A syntax error is left for serde_yaml to report.
fn depth_guard(text: &str) -> Result<(), Error> {
    use saphyr_parser::{Event, Parser};
    let openers = text.bytes().filter(|b| matches!(b, b'[' | b'{')).count();
    if openers <= MAX_DEPTH {
        return Ok(());
    }
    let too_deep = |line: usize, col: usize| {
        Error {
        message: format!(
            "collections nested more than {MAX_DEPTH} levels deep; basepress reads at most {MAX_DEPTH}"
        ),
        line: Some(line),
        column: Some(col + 1),
    }
    };
    let mut depth = 0usize;
    for item in Parser::new_from_str(text) {
        let (event, span) = match item {
            Ok(item) => item,
            // The scanner runs ahead of the events and has a flow limit of
            // its own.
            Err(e) if e.info().contains("recursion limit") => {
                return Err(too_deep(e.marker().line(), e.marker().col()));
            }
            Err(_) => return Ok(()),
        };
        match event {
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(too_deep(span.start.line(), span.start.col()));
                }
            }
            Event::MappingEnd | Event::SequenceEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// The key an error says is repeated in a mapping: serde_yaml's words
/// for a map (`duplicate entry with key "a"`), serde's for a struct's field
/// (``duplicate field `a` ``).
fn repeated_key(message: &str) -> Option<String> {
    let (rest, close) = match message.split_once("duplicate entry with key \"") {
        Some((_, rest)) => (rest, '"'),
        None => (message.split_once("duplicate field `")?.1, '`'),
    };
    Some(rest[..rest.find(close)?].to_string())
}

/// The line of the second `key` of the block mapping whose first key is
/// at `line`:`column` (1-based): the lines below it at that indentation,
/// until one less indented ends the mapping.
fn repetition(text: &str, key: &str, line: usize, column: usize) -> Option<usize> {
    let indent = column.checked_sub(1)?;
    let is_key = |rest: &str| {
        [
            format!("{key}:"),
            format!("\"{key}\":"),
            format!("'{key}':"),
        ]
        .iter()
        .any(|k| rest.starts_with(k.as_str()))
    };
    let mut seen = 0;
    for (i, l) in text.lines().enumerate().skip(line.saturating_sub(1)) {
        let trimmed = l.trim_start_matches(' ');
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let depth = l.len() - trimmed.len();
        let at = match l.get(indent..) {
            // The mapping's first line may start with `- ` or a key.
            Some(rest) if i + 1 == line || depth == indent => rest,
            _ if depth < indent => return None,
            _ => continue,
        };
        if is_key(at) {
            seen += 1;
            if seen == 2 {
                return Some(i + 1);
            }
        }
    }
    None
}

/// Parses one YAML document into `T`. Unknown keys are errors where `T`
/// says `deny_unknown_fields`.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    depth_guard(text)?;
    serde_yaml::from_str(text).map_err(|e| Error::from_serde(e, text))
}

/// What in a stream of Kubernetes objects Kustomize's reader (kyaml)
/// would not read as YAML does, at its line (1-based). kyaml splits the
/// text at each line that starts with `---` (after the first line, before
/// the last) and reads one document from each piece, so a separator line
/// may hold nothing but a comment after `---` (`--- !!map` fails), a
/// `%YAML` directive is left alone in a piece and fails, and a document
/// after `...` before the next `---` line would be dropped unread.
pub fn kubernetes_stream_problem(text: &str) -> Option<(usize, String)> {
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len().saturating_sub(1);
    let mut ended_at = None;
    // Whether the piece since the last separator holds a node yet.
    let mut has_node = false;
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let is_separator = i > 0 && i < last && line.starts_with("---");
        if is_separator {
            let after = line[3..].trim();
            if !after.is_empty() && !after.starts_with('#') {
                return Some((
                    i + 1,
                    format!(
                        "`{}` has text after `---`: Kustomize reads a line that starts with `---` as a document separator only, with nothing after it but a comment (kubectl: invalid document separator); move `{after}` to the next line",
                        line.trim_end()
                    ),
                ));
            }
            ended_at = None;
            has_node = false;
            continue;
        }
        if line.starts_with('%') {
            return Some((
                i + 1,
                format!(
                    "`{}` is a YAML directive, which Kustomize cannot read: it splits files at `---` lines and leaves the directive without its document; remove the line",
                    line.trim_end()
                ),
            ));
        }
        if line.trim_end() == "..." || line.starts_with("... ") {
            if !has_node {
                return Some((
                    i + 1,
                    "`...` ends a document that has nothing in it: Kustomize reads the text between `---` lines as one document each, and fails on an empty one ended this way (kubectl: did not find expected node content); remove the `...`".to_string(),
                ));
            }
            ended_at = Some(i + 1);
            continue;
        }
        let content = !line.trim().is_empty() && !line.trim_start().starts_with('#');
        // A `---` that is no separator (the first line, the last one
        // without a line end) starts a document, and is no node of one.
        if line.starts_with("---") {
            continue;
        }
        has_node |= content;
        if let (Some(end), true) = (ended_at, content) {
            return Some((
                i + 1,
                format!(
                    "this text follows the document end `...` on line {end} without a `---` line: kubectl would drop it unread; put a `---` line before it, or remove the `...`"
                ),
            ));
        }
    }
    None
}

/// Parses every document of a multi-document YAML stream, skipping empty
/// ones (a stream that starts with `---`, or a trailing `---`).
pub fn documents(text: &str) -> Result<Vec<Value>, Error> {
    depth_guard(text)?;
    let mut docs = Vec::new();
    for de in serde_yaml::Deserializer::from_str(text) {
        let v = merged(load(de, text)?)?;
        if v.is_null() {
            continue;
        }
        docs.push(to_json(v)?);
    }
    Ok(docs)
}

/// `v` with its YAML merge keys (`<<: *defaults`) applied, as Kubernetes'
/// YAML readers apply them.
fn merged(mut v: serde_yaml::Value) -> Result<serde_yaml::Value, Error> {
    v.apply_merge().map_err(|e| Error {
        message: format!("a `<<` merge key cannot be applied: {e}"),
        line: None,
        column: None,
    })?;
    Ok(v)
}

/// One document read as Go's YAML library reads it into Kubernetes'
/// objects: see [`Loaded`].
fn load(de: serde_yaml::Deserializer<'_>, text: &str) -> Result<serde_yaml::Value, Error> {
    Loaded::deserialize(de)
        .map(|l| l.0)
        .map_err(|e| Error::from_serde(e, text))
}

/// A YAML value read as Go's YAML library (yaml.v3, under kubectl) reads
/// one where serde_yaml's own reader differs: a local tag (`!foo bar`)
/// is dropped and its value kept, an integer past 64 bits is a float
/// (`1e+23`), where serde_yaml keeps the tag or refuses the number, and
/// `.inf` or `.nan` is an error.
struct Loaded(serde_yaml::Value);

impl<'de> Deserialize<'de> for Loaded {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LoadedVisitor).map(Loaded)
    }
}

struct LoadedVisitor;

impl<'de> serde::de::Visitor<'de> for LoadedVisitor {
    type Value = serde_yaml::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
        Ok(serde_yaml::Value::Bool(b))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Self::Value, E> {
        Ok(serde_yaml::Value::Number(i.into()))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Self::Value, E> {
        Ok(serde_yaml::Value::Number(u.into()))
    }

    fn visit_i128<E>(self, i: i128) -> Result<Self::Value, E> {
        Ok(serde_yaml::Value::Number((i as f64).into()))
    }

    fn visit_u128<E>(self, u: u128) -> Result<Self::Value, E> {
        Ok(serde_yaml::Value::Number((u as f64).into()))
    }

    /// A float JSON cannot hold (`.inf`, `.nan`) is refused, as kubectl
    /// refuses it, rather than made `null`.
    fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<Self::Value, E> {
        if f.is_finite() {
            return Ok(serde_yaml::Value::Number(f.into()));
        }
        let written = if f.is_nan() {
            ".nan"
        } else if f > 0.0 {
            ".inf"
        } else {
            "-.inf"
        };
        Err(E::custom(format!(
            "`{written}` is a YAML float that JSON, and so Kubernetes, cannot hold; \
             quote it (\"{written}\") if it is meant as text"
        )))
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(serde_yaml::Value::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(serde_yaml::Value::String(s))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_yaml::Value::Null)
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(serde_yaml::Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Loaded::deserialize(d).map(|l| l.0)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Loaded(v)) = a.next_element()? {
            items.push(v);
        }
        Ok(serde_yaml::Value::Sequence(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut map = serde_yaml::Mapping::new();
        while let Some(Loaded(key)) = a.next_key()? {
            if map.contains_key(&key) {
                // serde_yaml's words, which the error's location reads.
                let key = match &key {
                    serde_yaml::Value::String(s) => format!("with key {s:?}"),
                    serde_yaml::Value::Number(n) => format!("with key {n}"),
                    serde_yaml::Value::Bool(b) => format!("with key `{b}`"),
                    serde_yaml::Value::Null => "with null key".into(),
                    _ => "in YAML map".into(),
                };
                return Err(serde::de::Error::custom(format!("duplicate entry {key}")));
            }
            let Loaded(value) = a.next_value()?;
            map.insert(key, value);
        }
        Ok(serde_yaml::Value::Mapping(map))
    }

    fn visit_enum<A: serde::de::EnumAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
        use serde::de::VariantAccess;
        // serde_yaml gives a node with a local tag as an enum named by it.
        let (_tag, value): (serde::de::IgnoredAny, _) = a.variant()?;
        value.newtype_variant::<Loaded>().map(|l| l.0)
    }
}

fn to_json(v: serde_yaml::Value) -> Result<Value, Error> {
    serde_json::to_value(v).map_err(|e| Error {
        message: format!("value cannot be represented as JSON: {e}"),
        line: None,
        column: None,
    })
}

/// Where the nodes of one YAML document are: a JSON pointer (`/spec/replicas`,
/// `/spec/template/spec/containers/0`) to the 1-based line and column of
/// the node (for a mapping entry, of its key).
#[derive(Debug, Default, Clone)]
pub struct Positions(
    HashMap<String, (usize, usize)>,
    /// The scalar values written quoted or as a block (`"http"`, `'x'`,
    /// `|`), by pointer.
    std::collections::HashSet<String>,
);

impl Positions {
    pub fn get(&self, pointer: &str) -> Option<(usize, usize)> {
        self.0.get(pointer).copied()
    }

    /// Whether the scalar value at `pointer` was written quoted or as a
    /// block scalar (a JSON string too), not plain.
    pub fn quoted(&self, pointer: &str) -> bool {
        self.1.contains(pointer)
    }

    /// The position of `pointer`, or of its nearest ancestor that has one.
    pub fn nearest(&self, pointer: &str) -> Option<(usize, usize)> {
        let mut p = pointer;
        loop {
            if let Some(pos) = self.get(p) {
                return Some(pos);
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return None,
            }
        }
    }
}

/// One document of a YAML stream with the positions of its nodes.
#[derive(Debug, Clone)]
pub struct Document {
    pub value: Value,
    pub positions: Positions,
    /// The plain (unquoted) scalars that a reader may take for something
    /// other than a string (`0644`, `1_000`, `true`, `~`), as written, and
    /// the nodes tagged `!!binary` or `!!set`, by JSON pointer: see
    /// [`Document::as_kubernetes_reads_it`].
    plain: Plain,
}

impl Document {
    /// The document's value as `kubectl` reads a resource (with Go's YAML
    /// library, then through JSON): a plain number is what Go's parser
    /// makes of it (`0644` is octal 420, `1_000` is 1000, `09` is 9, where
    /// YAML 1.2 keeps them as text), a float without a fraction is an
    /// integer (`1.0` is 1), and an annotation's value is always the text
    /// written (`prometheus.io/port: 9090` is `"9090"`).
    /// A plain timestamp is the time, as Go writes it in JSON
    /// (`2024-1-2` is `"2024-01-02T00:00:00Z"`).
    pub fn as_kubernetes_reads_it(self) -> Document {
        self.read_as_kubernetes(Reading::Object)
    }

    /// [`Document::as_kubernetes_reads_it`] for a strategic merge patch,
    /// where an annotation's `null` is no text: it deletes the annotation.
    pub fn as_kubernetes_reads_a_patch(self) -> Document {
        self.read_as_kubernetes(Reading::Patch)
    }

    /// [`Document::as_kubernetes_reads_it`] for JSON 6902 operations,
    /// which Kustomize turns into JSON with another library: a timestamp
    /// stays the text written.
    pub fn as_kubernetes_reads_operations(self) -> Document {
        self.read_as_kubernetes(Reading::Operations)
    }

    fn read_as_kubernetes(mut self, reading: Reading) -> Document {
        let patch = reading == Reading::Patch;
        for (pointer, written) in &self.plain {
            let Some(node) = self.value.pointer_mut(pointer) else {
                continue;
            };
            let (raw, in_flow) = match written {
                Written::Plain(raw, in_flow) => (raw, *in_flow),
                // `!!binary`: the bytes the base64 text stands for.
                Written::Binary => {
                    use base64::Engine;
                    let text: String = node
                        .as_str()
                        .unwrap_or_default()
                        .split_whitespace()
                        .collect();
                    if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(text) {
                        *node = Value::String(String::from_utf8_lossy(&bytes).into_owned());
                    }
                    continue;
                }
                // `!!set {a, b}`: members whose values Go writes as "".
                Written::Set => {
                    if let Value::Object(members) = node {
                        for v in members.values_mut().filter(|v| v.is_null()) {
                            *v = Value::String(String::new());
                        }
                    }
                    continue;
                }
            };
            let is_annotation = pointer
                .strip_prefix("/metadata/annotations/")
                .is_some_and(|key| !key.contains('/'));
            if is_annotation {
                // A patch's `null` deletes the annotation.
                let kept = node.is_string() || (patch && node.is_null());
                if !kept {
                    *node = Value::String(raw.clone());
                }
            } else if node.is_string() {
                if let Some(n) = go_number(raw) {
                    *node = Value::Number(n);
                } else if let Some(time) = go_timestamp_json(raw) {
                    // Kustomize writes a flow collection back in flow
                    // style, where Go's writer quotes a scalar with a `:`
                    // and it is read back as text.
                    let quoted = in_flow && raw.contains(':');
                    if reading != Reading::Operations && !quoted {
                        *node = Value::String(time);
                    }
                }
            }
        }
        integral_floats(&mut self.value);
        self
    }
}

/// What a document is read as (see [`Document::as_kubernetes_reads_it`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    Object,
    Patch,
    Operations,
}

/// Whether a plain scalar may be read as something other than a string.
fn maybe_not_text(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
        || matches!(
            s,
            "~" | "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
        )
}

/// The text of a scalar as YAML writes it; None for a map or a list.
pub fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some("null".into()),
        Value::Array(_) | Value::Object(_) => None,
    }
}

/// The value of a plain (unquoted, untagged) scalar written as `text`,
/// as Kustomize's YAML library resolves it.
pub fn plain_scalar(text: &str) -> Value {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ => go_number(text).map_or_else(|| Value::String(text.into()), Value::Number),
    }
}

/// The number Go's YAML library reads in the plain scalar `s`, as
/// `strconv.ParseInt(s, 0, 64)`, then `ParseUint`, then `ParseFloat` for
/// the float syntax do, after dropping `_`: a leading `0` is octal (`0644`),
/// `0x`, `0o` and `0b` give their bases, and `09` is a float.
pub fn go_number(s: &str) -> Option<serde_json::Number> {
    // Go's reader looks at the first byte: a digit or a sign may start a
    // number (its `_` dropped); a `.` a float, read as Go's `ParseFloat`
    // reads it, with `_` only between digits (`.5_0`, not `._5`, `.5_`);
    // anything else (`_1`) is text.
    match s.as_bytes().first() {
        Some(b'0'..=b'9' | b'+' | b'-') => {}
        Some(b'.') => {
            let b = s.as_bytes();
            let between_digits = |i: usize| {
                i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit)
            };
            if !(0..b.len()).all(|i| b[i] != b'_' || between_digits(i)) {
                return None;
            }
        }
        _ => return None,
    }
    let s: String = s.chars().filter(|&c| c != '_').collect();
    let (negative, unsigned) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(&s)),
    };
    let lower = unsigned.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix)) {
        if let Ok(n) = u64::from_str_radix(digits, radix) {
            if !negative {
                return Some(n.into());
            }
            if let Ok(n) = i64::try_from(-i128::from(n)) {
                return Some(n.into());
            }
        }
    }
    // `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e.strip_prefix(['+', '-']).unwrap_or(e))),
        None => (unsigned, None),
    };
    let digits_only = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some((whole, fraction)) => {
            digits_only(whole)
                && digits_only(fraction)
                && !(whole.is_empty() && fraction.is_empty())
        }
        None => !mantissa.is_empty() && digits_only(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| !e.is_empty() && digits_only(e));
    if !(mantissa_ok && exponent_ok) {
        return None;
    }
    let f: f64 = s.parse().ok()?;
    serde_json::Number::from_f64(f)
}

/// Floats without a fraction made integers, as a trip through Go's JSON
/// and YAML makes them (`1.0` and `1e3` are 1 and 1000; `1e20`, beyond
/// 64 bits, stays a float).
fn integral_floats(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.fract() == 0.0 {
                if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
                    *n = (f as u64).into();
                } else if (-9_223_372_036_854_775_808.0..0.0).contains(&f) {
                    *n = (f as i64).into();
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats),
        Value::Object(map) => map.values_mut().for_each(integral_floats),
        _ => {}
    }
}

/// Where the nodes of the first document of `text` are (none when it does
/// not parse): for findings about a value of a settings file, at that
/// value rather than where its text first appears.
pub fn first_positions(text: &str) -> Positions {
    documents_with_positions(text)
        .ok()
        .and_then(|d| d.into_iter().next())
        .map(|d| d.positions)
        .unwrap_or_default()
}

/// Like [`documents`], with the position of every node.
pub fn documents_with_positions(text: &str) -> Result<Vec<Document>, Error> {
    depth_guard(text)?;
    let mut values = Vec::new();
    for de in serde_yaml::Deserializer::from_str(text) {
        let v = load(de, text)?;
        values.push(merged(v)?);
    }
    // Positions come from a second, event-level parser; if the two disagree
    // on the documents, findings fall back to the file without a line.
    let mut positions = positions(text).unwrap_or_default();
    if positions.len() != values.len() {
        positions = vec![Default::default(); values.len()];
    }
    let mut docs = Vec::new();
    for (v, (positions, plain)) in values.into_iter().zip(positions) {
        if v.is_null() {
            continue;
        }
        docs.push(Document {
            value: to_json(v)?,
            positions,
            plain,
        });
    }
    Ok(docs)
}

/// Where the text of a block scalar (`patch: |`) whose key is on line
/// `key_line` (1-based) of `text` starts: that line itself (the text's
/// first line is the next), and the indentation of its first line, in
/// characters. `None` when the value on that line is not a block scalar.
pub fn block_scalar_start(text: &str, key_line: usize) -> Option<(usize, usize)> {
    let mut lines = text.lines().skip(key_line.checked_sub(1)?);
    let after = lines.next()?.split_once(':')?.1.trim_start();
    if !(after.starts_with('|') || after.starts_with('>')) {
        return None;
    }
    let indent = lines
        .find(|l| !l.trim().is_empty())
        .map_or(0, |l| l.chars().count() - l.trim_start().chars().count());
    Some((key_line, indent))
}

/// Escapes one JSON pointer segment.
pub fn pointer_segment(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// The key one JSON pointer segment stands for: [`pointer_segment`]
/// undone (`~1` is `/`, then `~0` is `~`, so `~01` is `~1`). Any other
/// `~` is itself, as Kustomize's JSON patch library reads it.
pub fn pointer_key(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// Plain scalars as written, and nodes with a core tag Go's reader
/// applies, by JSON pointer.
type Plain = Vec<(String, Written)>;

/// How a node that Go's reader takes differently was written.
#[derive(Debug, Clone)]
enum Written {
    /// A plain scalar, as written, and whether it is in a flow
    /// collection (`{a: 1}`, `[1]`).
    Plain(String, bool),
    /// A scalar tagged `!!binary`.
    Binary,
    /// A map tagged `!!set`.
    Set,
}

/// Whether `tag` is the core schema's `suffix` (`!!binary`).
fn is_core(tag: Option<&saphyr_parser::Tag>, suffix: &str) -> bool {
    tag.is_some_and(|t| t.is_yaml_core_schema() && t.suffix == suffix)
}

/// The positions of each document's nodes, and its plain scalars that may
/// not be text (see [`Document`]).
fn positions(text: &str) -> Option<Vec<(Positions, Plain)>> {
    use saphyr_parser::{Event, Parser, ScalarStyle};
    let mut plain = Vec::new();
    enum Frame {
        Map {
            path: String,
            key: Option<String>,
            flow: bool,
        },
        Seq {
            path: String,
            index: usize,
            flow: bool,
        },
    }
    // Whether a collection starting at (line, column) is written in flow
    // style: its first character is `{` or `[`.
    let lines: Vec<&str> = text.split('\n').collect();
    let flow_at = |line: usize, column: usize| {
        line.checked_sub(1)
            .and_then(|l| lines.get(l))
            .and_then(|l| l.chars().nth(column))
            .is_some_and(|c| c == '{' || c == '[')
    };
    let mut docs = Vec::new();
    let mut current = Positions::default();
    let mut stack: Vec<Frame> = Vec::new();
    for item in Parser::new_from_str(text) {
        let (event, span) = item.ok()?;
        let pos = (span.start.line(), span.start.col() + 1);
        // The path of the node this event starts, if it starts one.
        let mut node_path = |stack: &mut Vec<Frame>, is_scalar: Option<&str>| -> Option<String> {
            match stack.last_mut() {
                None => Some(String::new()),
                Some(Frame::Seq { path, index, .. }) => {
                    let p = format!("{path}/{index}");
                    *index += 1;
                    Some(p)
                }
                Some(Frame::Map { path, key, .. }) => match key.take() {
                    Some(k) => Some(format!("{path}/{}", pointer_segment(&k))),
                    None => {
                        // This node is a key.
                        let k = is_scalar.unwrap_or("?").to_string();
                        current
                            .0
                            .entry(format!("{path}/{}", pointer_segment(&k)))
                            .or_insert(pos);
                        *key = Some(k);
                        None
                    }
                },
            }
        };
        match event {
            Event::DocumentStart(_) => {
                current = Positions::default();
                plain.clear();
                stack.clear();
            }
            Event::DocumentEnd => {
                docs.push((std::mem::take(&mut current), std::mem::take(&mut plain)));
            }
            Event::Scalar(value, style, _, tag) => {
                if let Some(p) = node_path(&mut stack, Some(&value)) {
                    // A tag (`!!str 12`) says what the scalar is.
                    if style == ScalarStyle::Plain && tag.is_none() && maybe_not_text(&value) {
                        let in_flow = matches!(
                            stack.last(),
                            Some(Frame::Map { flow: true, .. } | Frame::Seq { flow: true, .. })
                        );
                        plain.push((p.clone(), Written::Plain(value.to_string(), in_flow)));
                    } else if is_core(tag.as_deref(), "binary") {
                        plain.push((p.clone(), Written::Binary));
                    }
                    if style != ScalarStyle::Plain {
                        current.1.insert(p.clone());
                    }
                    current.0.entry(p).or_insert(pos);
                }
            }
            Event::Alias(_) => {
                if let Some(p) = node_path(&mut stack, None) {
                    current.0.entry(p).or_insert(pos);
                }
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let is_map = matches!(event, Event::MappingStart(..));
                let path = node_path(&mut stack, None).unwrap_or_else(|| "/?".into());
                current.0.entry(path.clone()).or_insert(pos);
                if let Event::MappingStart(_, tag) = &event {
                    if is_core(tag.as_deref(), "set") {
                        plain.push((path.clone(), Written::Set));
                    }
                }
                let flow = flow_at(span.start.line(), span.start.col());
                stack.push(if is_map {
                    Frame::Map {
                        path,
                        key: None,
                        flow,
                    }
                } else {
                    Frame::Seq {
                        path,
                        index: 0,
                        flow,
                    }
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
            }
            _ => {}
        }
    }
    Some(docs)
}

/// The plain scalars of the first document that YAML 1.1 reads as
/// booleans and YAML 1.2 (this module's parser) as strings (`yes`, `on`,
/// `n`, ...), by JSON pointer, with the boolean YAML 1.1 gives them. Tools
/// that read YAML 1.1 (Kustomize's kustomization reader) see booleans there.
pub fn yaml11_booleans(text: &str) -> Vec<(String, bool)> {
    yaml11_scalars(text)
        .into_iter()
        .filter_map(|(p, v)| v.as_bool().map(|b| (p, b)))
        .collect()
}

/// The boolean YAML 1.1 reads in a plain scalar: `y`, `yes`, `on`, and
/// `true` (in three cases each), and their opposites.
pub fn yaml11_boolean(s: &str) -> Option<bool> {
    match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => {
            Some(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => {
            Some(false)
        }
        _ => None,
    }
}

/// The plain scalars of the first document as Go's YAML 1.1 reader takes
/// them, where that is a boolean (`yes`, `on`) or a number ([`go_number`]:
/// `010` is 8, `1_000` is 1000), by JSON pointer: what Kustomize's
/// kustomization reader sees there.
pub fn yaml11_scalars(text: &str) -> Vec<(String, Value)> {
    yaml11_walk(text).0
}

/// The plain map keys of the first document that YAML 1.1 reads as
/// booleans (`y:`, `on:`), by JSON pointer: Kustomize's YAML-to-JSON step
/// writes each as the text of its boolean (`"true":`).
pub fn yaml11_boolean_keys(text: &str) -> Vec<String> {
    yaml11_walk(text).1
}

/// [`yaml11_scalars`] and [`yaml11_boolean_keys`], from one walk.
fn yaml11_walk(text: &str) -> (Vec<(String, Value)>, Vec<String>) {
    use saphyr_parser::{Event, Parser, ScalarStyle};
    enum Frame {
        Map { path: String, key: Option<String> },
        Seq { path: String, index: usize },
    }
    let mut out = Vec::new();
    let mut keys = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    for item in Parser::new_from_str(text) {
        let Ok((event, _)) = item else {
            break;
        };
        // The path of the value this event starts; None for a map key.
        let next = |stack: &mut Vec<Frame>, scalar: Option<&str>| -> Option<String> {
            match stack.last_mut() {
                None => Some(String::new()),
                Some(Frame::Seq { path, index }) => {
                    *index += 1;
                    Some(format!("{path}/{}", *index - 1))
                }
                Some(Frame::Map { path, key }) => match key.take() {
                    Some(k) => Some(format!("{path}/{}", pointer_segment(&k))),
                    None => {
                        *key = Some(scalar.unwrap_or("?").to_string());
                        None
                    }
                },
            }
        };
        match event {
            Event::DocumentEnd => break,
            Event::Scalar(value, style, _, tag) => {
                let plain = style == ScalarStyle::Plain && tag.is_none();
                if let (true, Some(Frame::Map { path, key: None })) = (plain, stack.last()) {
                    if yaml11_boolean(&value).is_some() {
                        keys.push(format!("{path}/{}", pointer_segment(&value)));
                    }
                }
                if let Some(p) = next(&mut stack, Some(&value)) {
                    if let (ScalarStyle::Plain, None) = (style, tag) {
                        if let Some(b) = yaml11_boolean(&value) {
                            out.push((p, Value::Bool(b)));
                        } else if let Some(n) = go_number(&value) {
                            out.push((p, Value::Number(n)));
                        }
                    }
                }
            }
            Event::Alias(_) => {
                next(&mut stack, None);
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let is_map = matches!(event, Event::MappingStart(..));
                let path = next(&mut stack, None).unwrap_or_else(|| "/?".into());
                stack.push(if is_map {
                    Frame::Map { path, key: None }
                } else {
                    Frame::Seq { path, index: 0 }
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
            }
            _ => {}
        }
    }
    (out, keys)
}

/// Whether a value Kustomize generates (a ConfigMap's data) is written
/// quoted or as a block, a style a patch's scalar then takes: text of
/// several lines, text a plain scalar would read as something else
/// (`8080`, `~`, `0x1F`, `.inf`, YAML 1.1's `yes` and `NO`, not a date),
/// and text that starts or ends as YAML syntax does (`#x`, `&x`, `- x`,
/// `? x`, `x:`, `a: b`), as `kubectl kustomize` was seen to write them
/// (`[x`, `*x`, `!x`, `a b`, `2024-01-02` and the empty text stay plain).
pub fn generated_quoted(s: &str) -> bool {
    !s.is_empty()
        && (s.contains('\n')
            || go_number_bool_or_null(s)
            || yaml11_boolean(s).is_some()
            || s.starts_with(['#', '&'])
            || s.starts_with("- ")
            || s.starts_with("? ")
            || s.ends_with(':')
            || s.contains(": "))
}

/// Whether Go's YAML reader takes the plain scalar `s` for something
/// other than a string: a number (`8080`, `0x1F`, `1_0`, `1e3`, `.inf`),
/// a boolean (`true`, `False`), null (`~`, `NULL`) or a date
/// (`2024-01-02`). YAML 1.1's words (`yes`, `on`) are
/// [`yaml11_boolean`]'s.
pub fn go_reads_as_non_string(s: &str) -> bool {
    go_number_bool_or_null(s) || go_timestamp(s)
}

/// [`go_reads_as_non_string`] but for dates.
fn go_number_bool_or_null(s: &str) -> bool {
    let unsigned = s.strip_prefix(['-', '+']).unwrap_or(s);
    matches!(
        s,
        "~" | "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
    ) || matches!(unsigned, ".inf" | ".Inf" | ".INF")
        || matches!(s, ".nan" | ".NaN" | ".NAN")
        || go_number(s).is_some()
}

/// Whether Go's YAML reader takes `s` for a timestamp (see
/// [`go_timestamp_json`]).
fn go_timestamp(s: &str) -> bool {
    go_timestamp_json(s).is_some()
}

/// The text Kubernetes gets for a plain scalar that Go's YAML reader
/// takes for a timestamp: the time, written as Go writes it in JSON
/// (RFC 3339, the fraction's trailing zeros dropped, `Z` for UTC):
/// `2024-1-2` is `2024-01-02T00:00:00Z`. A timestamp is a date
/// `YYYY-M-D`, alone, or followed by `T` or `t`, a time `H:M:S` with an
/// optional fraction and a zone (`Z` or `±hh:mm`), or by a space and a
/// time without a zone (UTC); a date or a time out of range is text.
pub fn go_timestamp_json(s: &str) -> Option<String> {
    // One or two digits, in `range`.
    let num = |t: &str, range: std::ops::RangeInclusive<u32>| -> Option<u32> {
        let ok = (1..=2).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_digit());
        ok.then(|| t.parse().ok())
            .flatten()
            .filter(|n| range.contains(n))
    };
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return None;
    }
    let sep = s.find(['T', 't', ' ']);
    let date = &s[..sep.unwrap_or(s.len())];
    let mut parts = date.split('-');
    let year: u32 = parts.next()?.parse().ok()?;
    let month = num(parts.next()?, 1..=12)?;
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let day = num(parts.next()?, 1..=days)?;
    if parts.next().is_some() {
        return None;
    }
    let Some(sep) = sep else {
        return Some(format!("{year:04}-{month:02}-{day:02}T00:00:00Z"));
    };
    let time = &s[sep + 1..];
    let clock_end = time
        .find(|c: char| !(c.is_ascii_digit() || c == ':'))
        .unwrap_or(time.len());
    let mut clock = time[..clock_end].split(':');
    let hour = num(clock.next()?, 0..=23)?;
    let minute = num(clock.next()?, 0..=59)?;
    let second = num(clock.next()?, 0..=59)?;
    if clock.next().is_some() {
        return None;
    }
    let mut rest = &time[clock_end..];
    // A fraction (`.` or `,`, then digits), kept to nanoseconds.
    let mut fraction = String::new();
    if let Some(f) = rest.strip_prefix(['.', ',']) {
        let end = f.find(|c: char| !c.is_ascii_digit()).unwrap_or(f.len());
        if end == 0 {
            return None;
        }
        fraction = f[..end.min(9)].trim_end_matches('0').to_string();
        rest = &f[end..];
    }
    let zone = match (b[sep], rest) {
        (b' ', "") | (b'T' | b't', "Z") => "Z".to_string(),
        (b'T' | b't', zone) => {
            let sign = zone.chars().next().filter(|c| matches!(c, '+' | '-'))?;
            let (hh, mm) = zone[1..].split_once(':')?;
            let ok = hh.len() == 2 && mm.len() == 2;
            let (hh, mm) = (num(hh, 0..=24)?, num(mm, 0..=60)?);
            match (ok, hh == 0 && mm == 0) {
                (false, _) => return None,
                (true, true) => "Z".to_string(),
                (true, false) => format!("{sign}{hh:02}:{mm:02}"),
            }
        }
        _ => return None,
    };
    let fraction = match fraction.is_empty() {
        true => String::new(),
        false => format!(".{fraction}"),
    };
    Some(format!(
        "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{fraction}{zone}"
    ))
}

/// The plain map keys of every document of `text` that Go's YAML reader
/// takes for something other than a string (a number, `true`, `~`, and
/// with `yaml11` also `yes`, `on`, `y`…), with their line and column.
/// `kubectl kustomize` cannot build an object with such a key (`8080:
/// http`): it stops at once.
pub fn non_string_keys(text: &str, yaml11: bool) -> Vec<(usize, usize, String)> {
    use saphyr_parser::{Event, Parser, ScalarStyle};
    let not_text = |key: &str| {
        key.is_empty() || go_reads_as_non_string(key) || (yaml11 && yaml11_boolean(key).is_some())
    };
    // For each open map, whether the next scalar is a key.
    let mut maps: Vec<Option<bool>> = Vec::new();
    let mut out = Vec::new();
    for item in Parser::new_from_str(text) {
        let Ok((event, span)) = item else {
            break;
        };
        let is_key = matches!(maps.last(), Some(Some(true)));
        // A node in a map flips it between key and value.
        let step = |maps: &mut Vec<Option<bool>>| {
            if let Some(Some(k)) = maps.last_mut() {
                *k = !*k;
            }
        };
        match event {
            Event::Scalar(value, style, _, tag) => {
                if is_key && style == ScalarStyle::Plain && tag.is_none() && not_text(&value) {
                    out.push((span.start.line(), span.start.col() + 1, value.to_string()));
                }
                step(&mut maps);
            }
            Event::Alias(_) => step(&mut maps),
            Event::MappingStart(..) => {
                step(&mut maps);
                maps.push(Some(true));
            }
            Event::SequenceStart(..) => {
                step(&mut maps);
                maps.push(None);
            }
            Event::MappingEnd | Event::SequenceEnd => {
                maps.pop();
            }
            _ => {}
        }
    }
    out
}

/// Finds the first line holding `needle` as a YAML scalar (a list item, a
/// value after `key:`, quoted or plain), returning its 1-based line and
/// column. Used to point a finding about a value at its place in the file.
pub fn locate_scalar(text: &str, needle: &str) -> Option<(usize, usize)> {
    if needle.is_empty() {
        return None;
    }
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
    /// A file that must hold one document and holds two: the error is
    /// where the second starts.
    #[test]
    fn a_second_document_is_reported_where_it_starts() {
        let e = super::from_str::<serde_json::Value>("a: 1\nb: 2\n---\nfoo: 1\n").unwrap_err();
        assert!(
            e.message.contains("more than one YAML document"),
            "{}",
            e.message
        );
        assert_eq!((e.line, e.column), (Some(3), Some(1)));
    }

    /// Values as kubectl's YAML reader makes them, where serde_yaml's own
    /// reader differs.
    #[test]
    fn values_as_go_reads_them() {
        let docs = super::documents(
            "local: !foo bar\nmap: !thing {a: 1}\nbig: 100000000000000000000000\n\
             small: -12345678901234567890\nkeep: 18446744073709551615\n",
        )
        .unwrap();
        assert_eq!(
            docs[0],
            serde_json::json!({"local": "bar", "map": {"a": 1}, "big": 1e23,
                "small": -1.2345678901234567e19, "keep": 18446744073709551615u64})
        );
        for (text, written) in [
            ("a:\n  b: .inf\n", ".inf"),
            ("a:\n  b: -.Inf\n", "-.inf"),
            ("a:\n  b: .NaN\n", ".nan"),
        ] {
            let e = super::documents(text).unwrap_err();
            assert!(e.message.contains(&format!("`{written}`")), "{e:?}");
            assert_eq!((e.line, e.column), (Some(2), Some(6)), "{text}");
            assert!(super::documents_with_positions(text).is_err());
        }
        // Quoted, it is text.
        assert_eq!(
            super::documents("a: \".inf\"\n").unwrap()[0],
            serde_json::json!({"a": ".inf"})
        );
        let e = super::documents("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert!(
            e.message.contains("duplicate entry with key \"a\""),
            "{e:?}"
        );
        assert_eq!(e.line, Some(3));
    }

    #[test]
    fn pointer_keys_undo_pointer_segments() {
        for key in ["a/b", "~", "~1", "~0", "a~/b~~1", ""] {
            assert_eq!(super::pointer_key(&super::pointer_segment(key)), key);
        }
        assert_eq!(super::pointer_key("~01"), "~1");
        assert_eq!(super::pointer_key("a~2b"), "a~2b");
    }

    /// Core tags kubectl's reader applies: `!!binary` is decoded, a
    /// `!!set`'s members have "" for values.
    #[test]
    fn core_tags_as_go_reads_them() {
        let doc = super::documents_with_positions(
            "bin: !!binary aGVs\n  bG8=\nst: !!set {a, b}\nkeep: aGVsbG8=\n",
        )
        .unwrap()
        .remove(0)
        .as_kubernetes_reads_it();
        assert_eq!(
            doc.value,
            serde_json::json!({"bin": "hello", "st": {"a": "", "b": ""}, "keep": "aGVsbG8="})
        );
    }

    /// Kustomize splits a stream at lines that start with `---`.
    #[test]
    fn stream_problems_are_found_at_their_line() {
        use super::kubernetes_stream_problem as problem;
        assert_eq!(problem("a: 1\r\n--- # c\r\nb: 2\r\n---\r\n"), None);
        assert_eq!(problem("--- !!map\na: 1\n"), None, "the first line");
        assert_eq!(problem("a: 1\n--- x"), None, "the last line, no newline");
        assert_eq!(problem("a: 1\n--- !!map\r\nb: 2\n").map(|p| p.0), Some(2));
        assert_eq!(problem("a: 1\n---x\nb: 2\n").map(|p| p.0), Some(2));
        assert_eq!(problem("%YAML 1.1\n---\na: 1\n").map(|p| p.0), Some(1));
        assert_eq!(problem("a: 1\n...\n# c\n\nb: 2\n").map(|p| p.0), Some(5));
        assert_eq!(problem("a: 1\n...\n---\nb: 2\n"), None);
        assert_eq!(
            problem("a: 1\n...\n---"),
            None,
            "a last `---` without a line end"
        );
        assert_eq!(
            problem("a: 1\n---\n...\n").map(|p| p.0),
            Some(3),
            "an empty document"
        );
    }

    #[test]
    fn keys_that_are_not_text() {
        let text =
            "a: 1\n8080: http\n\"9090\": ok\nnested:\n  - {true: x, ~: y, y: z}\n---\n1.5: f\n";
        let keys: Vec<(usize, usize, String)> = non_string_keys(text, false);
        let names: Vec<&str> = keys.iter().map(|(_, _, k)| k.as_str()).collect();
        assert_eq!(names, ["8080", "true", "~", "1.5"]);
        assert_eq!((keys[0].0, keys[0].1), (2, 1));
        let yaml11: Vec<String> = non_string_keys("on: 1\nvalue: y\n", true)
            .into_iter()
            .map(|(_, _, k)| k)
            .collect();
        assert_eq!(yaml11, ["on"]);
    }

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
    fn nesting_beyond_the_limit_is_refused_where_it_starts() {
        let deep = |n: usize| format!("a: {}{}\n", "[".repeat(n), "]".repeat(n));
        assert!(documents(&deep(MAX_DEPTH - 1)).is_ok());
        // 200 KB of `[` once took serde_yaml half a minute to refuse.
        let text = format!("x: 1\na: {}\n", "[".repeat(200_000));
        for e in [
            documents(&text).unwrap_err(),
            documents_with_positions(&text).unwrap_err(),
            from_str::<Value>(&text).unwrap_err(),
        ] {
            assert!(e.message.contains("nested more than 128"), "{}", e.message);
            assert_eq!(e.line, Some(2));
            assert!(e.column.is_some_and(|c| c > 4 + MAX_DEPTH), "{e:?}");
        }
        // Block nesting costs the scanner nothing: serde_yaml refuses it, at
        // the line.
        let mut text = String::new();
        for i in 0..=MAX_DEPTH {
            text.push_str(&format!("{}k:\n", " ".repeat(i)));
        }
        let e = documents(&format!("{text}{}v\n", " ".repeat(MAX_DEPTH + 1))).unwrap_err();
        assert_eq!(e.line, Some(MAX_DEPTH + 1), "{e:?}");
        // Brackets in strings are not nesting.
        let text = format!("a: \"{}\"\nb: [{{c: 1}}]\n", "[{".repeat(500));
        assert_eq!(documents(&text).unwrap()[0]["b"][0]["c"], 1);
    }

    #[test]
    fn refused_characters_and_repeated_keys_are_where_they_are() {
        let e = documents("a: b\nc: d\u{1}\n").unwrap_err();
        assert_eq!((e.line, e.column), (Some(2), Some(5)), "{e:?}");
        assert!(!e.message.contains("position"), "{}", e.message);
        let text = "kind: X\nspec:\n  replicas: 1\n  deep:\n    replicas: 3\n\n  # c\n  replicas: 2\nother: 1\n";
        for e in [
            documents(text).unwrap_err(),
            documents_with_positions(text).unwrap_err(),
        ] {
            assert!(e.message.contains("duplicate entry"), "{}", e.message);
            assert_eq!(e.line, Some(8), "{e:?}");
        }
        // In a list item, and at the top.
        let e = documents("items:\n  - name: a\n    x: 1\n    name: b\n").unwrap_err();
        assert_eq!(e.line, Some(4), "{e:?}");
        let e = documents("a: 1\nb: 2\n'a': 3\n").unwrap_err();
        assert_eq!(e.line, Some(3), "{e:?}");
        // A struct's field, in its own words.
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Front {
            title: String,
            weight: Option<u32>,
            description: Option<String>,
        }
        let e =
            from_str::<Front>("title: A\ndescription: x\nweight: 1\ndescription: y\n").unwrap_err();
        assert!(e.message.contains("duplicate field"), "{}", e.message);
        assert_eq!(e.line, Some(4), "{e:?}");
    }

    #[test]
    fn documents_skip_empty() {
        let docs = documents("---\na: 1\n---\nb: 2\n---\n").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1]["b"], 2);
    }

    #[test]
    fn positions_point_at_keys_and_items() {
        let text = "a: 1\n---\nkind: X\nspec:\n  items:\n    - name: one\n    - name: two\n      x: [1, 2]\n";
        let docs = documents_with_positions(text).unwrap();
        assert_eq!(docs.len(), 2);
        let p = &docs[1].positions;
        assert_eq!(p.get("/kind"), Some((3, 1)));
        assert_eq!(p.get("/spec/items/1"), Some((7, 7)));
        assert_eq!(p.get("/spec/items/1/name"), Some((7, 7)));
        assert_eq!(p.get("/spec/items/1/x"), Some((8, 7)));
        assert_eq!(p.get("/spec/items/1/x/1"), Some((8, 14)));
        assert_eq!(p.nearest("/spec/items/0/missing/deeper"), Some((6, 7)));
        assert_eq!(docs[0].positions.get("/a"), Some((1, 1)));
    }

    #[test]
    fn a_tagged_scalar_is_what_its_tag_says() {
        let docs =
            documents_with_positions("a: !!str 0644\nb: 0644\nc: !!str yes\nd: yes\n").unwrap();
        let v = docs
            .into_iter()
            .next()
            .unwrap()
            .as_kubernetes_reads_it()
            .value;
        assert_eq!(v["a"], serde_json::json!("0644"));
        assert_eq!(v["b"], serde_json::json!(420));
        let booleans = yaml11_booleans("c: !!str yes\nd: yes\n");
        assert_eq!(booleans, [("/d".to_string(), true)]);
    }

    #[test]
    fn yaml11_booleans_are_plain_words() {
        let text = "a: yes\nb: 'yes'\nc: [on, x, N]\nyes: 1\n";
        let found = yaml11_booleans(text);
        assert_eq!(
            found,
            vec![
                ("/a".to_string(), true),
                ("/c/0".into(), true),
                ("/c/2".into(), false)
            ]
        );
    }

    #[test]
    fn locate_finds_list_items_and_values() {
        let text = "resources:\n  - ns.yaml\n  - app.yaml # note\npatches:\n  - path: \"p.yaml\"\n";
        assert_eq!(locate_scalar(text, "app.yaml"), Some((3, 5)));
        assert_eq!(locate_scalar(text, "p.yaml"), Some((5, 11)));
        assert_eq!(locate_scalar(text, "ns"), None);
        // An empty needle once looped forever (found by fuzz/run.sh).
        assert_eq!(locate_scalar(text, ""), None);
    }

    proptest::proptest! {
        /// Whatever the text, parsing gives values or an error placed
        /// inside the text: never a panic (the placing does arithmetic on
        /// positions and byte offsets).
        #[test]
        fn errors_are_placed_inside_the_text(
            text in "([a-c]{1,2}|: |- |\\[|\\]|\\{|\\}|, |\n|  |'|\"|é|\u{1}|#|---\n){0,40}",
        ) {
            let lines = text.lines().count().max(1) + 1;
            for e in [
                documents(&text).err(),
                documents_with_positions(&text).err(),
                from_str::<std::collections::BTreeMap<String, Value>>(&text).err(),
            ]
            .into_iter()
            .flatten()
            {
                proptest::prop_assert!(e.line.is_none_or(|l| (1..=lines).contains(&l)), "{e:?}");
                proptest::prop_assert!(e.column.is_none_or(|c| c >= 1), "{e:?}");
            }
        }
    }
}
