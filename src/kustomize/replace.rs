//! `replacements`: copy a field of one resource into fields of others, as
//! Kustomize v5.5 does it.
//!
//! The source is found by its id (any id it has had, exact, empty fields
//! match anything) and read by a path of field names, list indices, `-`
//! (the last item) and `[field=value]` (the item whose field is exactly
//! that value). Targets are every resource a `select` picks and no
//! `reject` does; their paths also take `*` (every item) and read
//! `[field=value]` as a regular expression found anywhere in the item's
//! field, as Kustomize's path matcher does (`[name=web]` also picks
//! `web-sidecar`). With `create`, missing fields and items are added. A
//! scalar target keeps its type where it was a string and takes the
//! value's plain reading otherwise (`replicas: 1` given `"3"` is 3).

use regex::Regex;
use serde_json::{Map, Value};

use super::kustomization::{FieldOptions, ReplacementArgs, Selector};
use super::prov::{Kids, Prov, Src};
use super::resource::{Id, Res};
use super::select::Compiled;
use crate::yaml;

/// Where a value came from in the source, and the value.
struct Picked {
    value: Value,
    prov: Prov,
}

/// Applies one replacement to `all`. `at` is the replacement's place in
/// the kustomization (for nodes the replacement creates).
pub fn apply(all: &mut [Res], r: &ReplacementArgs, at: &Src) -> Result<(), String> {
    let (Some(source), false) = (&r.source, r.targets.is_empty()) else {
        return Err("a replacement needs a `source` and at least one target".into());
    };
    let selector = Id {
        group: source.group.clone(),
        version: source.version.clone(),
        kind: source.kind.clone(),
        name: source.name.clone(),
        namespace: source.namespace.clone(),
    };
    let mut found = all
        .iter()
        .filter(|res| res.any_ids().iter().any(|id| selects(&selector, id)));
    let shown = describe(&selector);
    let res = found
        .next()
        .ok_or_else(|| format!("the source {shown} selects no resource"))?;
    if found.next().is_some() {
        return Err(format!("the source {shown} selects more than one resource"));
    }
    let field_path = if source.field_path.is_empty() {
        "metadata.name"
    } else {
        &source.field_path
    };
    let picked = lookup(&res.value, &res.prov, field_path)?.ok_or_else(|| {
        format!("the source {shown} has no field `{field_path}` (or it is empty)")
    })?;
    let picked = refine(picked, source.options.as_ref())?;
    for target in &r.targets {
        let Some(select) = &target.select else {
            return Err("a replacement target needs `select`".into());
        };
        let pick = Targets::new(select, &target.reject)?;
        let paths: Vec<&str> = if target.field_paths.is_empty() {
            vec!["metadata.name"]
        } else {
            target.field_paths.iter().map(String::as_str).collect()
        };
        for res in all.iter_mut().filter(|res| pick.picks(res)) {
            for path in &paths {
                set_all(res, path, &picked, target.options.as_ref(), at)?;
            }
        }
    }
    Ok(())
}

/// `kind name` of a selector, for messages.
fn describe(id: &Id) -> String {
    let mut parts = Vec::new();
    for (field, value) in [
        ("group", &id.group),
        ("version", &id.version),
        ("kind", &id.kind),
        ("name", &id.name),
        ("namespace", &id.namespace),
    ] {
        if !value.is_empty() {
            parts.push(format!("{field}: {value}"));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// Kustomize's `IsSelectedBy`: every field the selector sets is equal,
/// namespaces compared as effective namespaces.
fn selects(selector: &Id, id: &Id) -> bool {
    (selector.name.is_empty() || selector.name == id.name)
        && (selector.namespace.is_empty()
            || selector.effective_namespace() == id.effective_namespace())
        && id.selected_by(&selector.group, &selector.version, &selector.kind)
}

/// The targets of one entry of `targets`.
struct Targets {
    select: Id,
    labels: Compiled,
    rejects: Vec<(Id, Option<Compiled>)>,
}

fn id_of(s: &Selector) -> Id {
    Id {
        group: s.group.clone(),
        version: s.version.clone(),
        kind: s.kind.clone(),
        name: s.name.clone(),
        namespace: s.namespace.clone(),
    }
}

/// The label and annotation part of a selector, compiled.
fn labels_of(s: &Selector) -> Result<Compiled, String> {
    Compiled::new(&Selector {
        label_selector: s.label_selector.clone(),
        annotation_selector: s.annotation_selector.clone(),
        ..Selector::default()
    })
}

impl Targets {
    fn new(select: &Selector, reject: &[Selector]) -> Result<Self, String> {
        let rejects = reject
            .iter()
            .map(|r| {
                let labels = (!r.label_selector.is_empty() || !r.annotation_selector.is_empty())
                    .then(|| labels_of(r))
                    .transpose()?;
                Ok((id_of(r), labels))
            })
            .collect::<Result<_, String>>()?;
        Ok(Targets {
            select: id_of(select),
            labels: labels_of(select)?,
            rejects,
        })
    }

    fn picks(&self, res: &Res) -> bool {
        if !self.labels.selects_object(&res.value) {
            return false;
        }
        let ids = res.any_ids();
        for (id, labels) in &self.rejects {
            if labels
                .as_ref()
                .is_some_and(|l| l.selects_object(&res.value))
            {
                return false;
            }
            let empty = id.group.is_empty()
                && id.version.is_empty()
                && id.kind.is_empty()
                && id.name.is_empty()
                && id.namespace.is_empty();
            if !empty && ids.iter().any(|i| selects(id, i)) {
                return false;
            }
        }
        ids.iter().any(|i| selects(&self.select, i))
    }
}

/// Splits a field path on dots: `\.` is a dot in a name, and a bracketed
/// part keeps its dots (`[name=a.b]`, or `[a.b]` for a key with dots).
pub fn split_path(path: &str) -> Vec<String> {
    let mut raw: Vec<&str> = path.split('.').collect();
    if raw.len() > 1 && raw[0].is_empty() {
        raw.remove(0);
    }
    let mut escaped: Vec<String> = Vec::new();
    for part in raw {
        match escaped.last_mut() {
            Some(last) if last.ends_with('\\') => {
                last.pop();
                last.push('.');
                last.push_str(part);
            }
            _ => escaped.push(part.to_string()),
        }
    }
    let mut out = Vec::new();
    let mut parts = escaped.into_iter();
    while let Some(part) = parts.next() {
        if part.starts_with('[') && !part.ends_with(']') {
            let mut joined = part;
            for next in parts.by_ref() {
                joined.push('.');
                joined.push_str(&next);
                if joined.ends_with(']') {
                    break;
                }
            }
            if joined.contains('=') {
                out.push(joined);
            } else {
                out.push(joined.trim_matches(['[', ']']).to_string());
            }
        } else {
            out.push(part);
        }
    }
    out
}

fn is_list_match(part: &str) -> bool {
    part.starts_with('[') && part.ends_with(']')
}

/// `[field=value]` as its field and value.
fn list_match(part: &str) -> Result<(&str, &str), String> {
    let inner = part.trim_start_matches('[').trim_end_matches(']');
    inner.split_once('=').ok_or_else(|| {
        format!("`{part}` names no item: a list part is `[field=value]` (or `[=value]` for a list of values)")
    })
}

/// Reads the source field (Kustomize's path getter).
fn lookup(value: &Value, prov: &Prov, path: &str) -> Result<Option<Picked>, String> {
    let (mut node, mut at) = (value, prov);
    let parts = split_path(path);
    for part in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        let next = if let Ok(i) = part.parse::<i64>() {
            let i = usize::try_from(i)
                .map_err(|_| format!("`{path}`: a list index cannot be negative"))?;
            node.as_array()
                .and_then(|items| items.get(i))
                .map(|v| (v, i))
        } else if part == "-" {
            node.as_array()
                .and_then(|items| items.last().map(|v| (v, items.len() - 1)))
        } else if part == "*" {
            return Err(format!("`{path}`: a source path cannot use `*`"));
        } else if is_list_match(part) {
            let (field, want) = list_match(part)?;
            node.as_array().and_then(|items| {
                items.iter().enumerate().find_map(|(i, item)| {
                    let got = if field.is_empty() {
                        Some(item)
                    } else {
                        item.get(field)
                    };
                    (got.and_then(yaml::scalar_text).as_deref() == Some(want)).then_some((item, i))
                })
            })
        } else {
            match node {
                Value::Object(map) => map.get(part).map(|v| (v, usize::MAX)),
                _ => None,
            }
        };
        let Some((v, i)) = next else {
            return Ok(None);
        };
        at = if i == usize::MAX {
            at.key(part)
        } else {
            at.index(i)
        }
        .unwrap_or(at);
        node = v;
    }
    let empty = match node {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    };
    Ok((!empty).then(|| Picked {
        value: node.clone(),
        prov: at.clone(),
    }))
}

/// Applies the source's `delimiter` and `index`.
fn refine(picked: Picked, options: Option<&FieldOptions>) -> Result<Picked, String> {
    let Some(o) = options.filter(|o| !o.delimiter.is_empty()) else {
        return Ok(picked);
    };
    let text = yaml::scalar_text(&picked.value)
        .ok_or("the delimiter option can only be used on a scalar (text, a number)")?;
    let parts: Vec<&str> = text.split(o.delimiter.as_str()).collect();
    let part = usize::try_from(o.index)
        .ok()
        .and_then(|i| parts.get(i))
        .ok_or_else(|| format!("options.index {} is out of bounds for `{text}`", o.index))?;
    Ok(Picked {
        value: Value::String((*part).to_string()),
        prov: picked.prov,
    })
}

/// One step of a target path.
enum Step {
    Field(String),
    Index(usize),
    /// `[field=regex]`; an empty field matches the items themselves.
    Match(String, Regex, String),
    Every,
}

fn steps(path: &str) -> Result<Vec<Step>, String> {
    split_path(path)
        .into_iter()
        .map(|part| {
            if let Ok(i) = part.parse::<usize>() {
                Ok(Step::Index(i))
            } else if is_list_match(&part) {
                let (field, value) = list_match(&part)?;
                let re = super::goregex::compile("{}", value)
                    .map_err(|e| format!("`{part}` is not a valid regular expression: {e}"))?;
                Ok(Step::Match(field.into(), re, value.into()))
            } else if part == "*" {
                Ok(Step::Every)
            } else {
                Ok(Step::Field(part))
            }
        })
        .collect()
}

/// What a created node starts as, from the step after it.
fn new_node(next: Option<&Step>, value: &Value) -> Value {
    match next {
        Some(Step::Match(..) | Step::Index(_)) => Value::Array(Vec::new()),
        Some(_) => Value::Object(Map::new()),
        None => match value {
            Value::Object(_) => Value::Object(Map::new()),
            Value::Array(_) => Value::Array(Vec::new()),
            _ => Value::Null,
        },
    }
}

/// Finds (creating them with `create`) the nodes a target path names, as
/// JSON pointers.
fn find(
    node: &mut Value,
    prov: &mut Prov,
    steps: &[Step],
    create: Option<(&Value, &Src)>,
    pointer: String,
    out: &mut Vec<String>,
) -> Result<(), String> {
    let Some((step, rest)) = steps.split_first() else {
        out.push(pointer);
        return Ok(());
    };
    let kind = |v: &Value| match v {
        Value::Object(_) => "a map",
        Value::Array(_) => "a list",
        _ => "a scalar",
    };
    match step {
        Step::Field(name) => {
            // A null map is no map: Kustomize looks nothing up in it, and
            // creates nothing either, without a word, except for
            // `metadata.annotations`, which it reads as an empty map.
            if node.is_null() {
                match create {
                    None => return Ok(()),
                    Some(_) if pointer == "/metadata/annotations" => {
                        *node = Value::Object(Map::new());
                    }
                    Some(_) => {
                        return Err(format!(
                            "the target runs through `{}`, which is null: Kustomize would create nothing there, and leave the field as it is without a word; give it a map (`{{}}`) in the resource, or remove it",
                            pointer.trim_start_matches('/').replace('/', ".")
                        ))
                    }
                }
            }
            let found = match node {
                Value::Object(map) => map.contains_key(name),
                other => {
                    return Err(format!(
                        "`{name}` is a field, but the node is {}",
                        kind(other)
                    ))
                }
            };
            if !found {
                let Some((value, at)) = create else {
                    return Ok(());
                };
                let fresh = new_node(rest.first(), value);
                prov.set_key(name, Prov::uniform(&fresh, at));
                if let Value::Object(map) = node {
                    map.insert(name.clone(), fresh);
                }
            }
            let (Some(child), Some(child_prov)) = (node.get_mut(name.as_str()), prov.key_mut(name))
            else {
                return Ok(());
            };
            // Kustomize sets a value's text into the node it finds and keeps
            // its `null` type, which cannot hold it.
            if found && rest.is_empty() && child.is_null() {
                return Err(format!(
                    "the target field `{}` is null, and Kustomize cannot set a value into a null one (kubectl: cannot decode as a !!null); remove the field from the resource, or give it a value",
                    format!("{pointer}/{name}").trim_start_matches('/').replace('/', ".")
                ));
            }
            let pointer = format!("{pointer}/{}", yaml::pointer_segment(name));
            find(child, child_prov, rest, create, pointer, out)
        }
        Step::Index(i) => {
            let Value::Array(items) = node else {
                return Err(format!(
                    "`{i}` is a list index, but the node is {}",
                    kind(node)
                ));
            };
            if *i == items.len() {
                if let Some((value, at)) = create {
                    let fresh = new_node(rest.first(), value);
                    if let Some(list) = prov.list_mut() {
                        list.push(Prov::uniform(&fresh, at));
                    }
                    items.push(fresh);
                }
            }
            let n = items.len();
            let child = items
                .get_mut(*i)
                .ok_or_else(|| format!("index {i} given but the list has {n} items"))?;
            let Some(child_prov) = prov.list_mut().and_then(|l| l.get_mut(*i)) else {
                return Ok(());
            };
            find(
                child,
                child_prov,
                rest,
                create,
                format!("{pointer}/{i}"),
                out,
            )
        }
        Step::Every => {
            let Value::Array(items) = node else {
                return Err(format!(
                    "`*` is every item of a list, but the node is {}",
                    kind(node)
                ));
            };
            let Kids::List(provs) = &mut prov.kids else {
                return Ok(());
            };
            for (i, (child, child_prov)) in items.iter_mut().zip(provs).enumerate() {
                find(
                    child,
                    child_prov,
                    rest,
                    create,
                    format!("{pointer}/{i}"),
                    out,
                )?;
            }
            Ok(())
        }
        Step::Match(field, re, text) => {
            let Value::Array(items) = node else {
                return Err(format!(
                    "`[{field}={text}]` is an item of a list, but the node is {}",
                    kind(node)
                ));
            };
            let matching = |item: &Value| {
                let got = if field.is_empty() {
                    Some(item)
                } else {
                    item.as_object().and_then(|m| m.get(field.as_str()))
                };
                got.and_then(yaml::scalar_text)
                    .is_some_and(|s| re.is_match(s.trim()))
            };
            let before = out.len();
            let mut any = false;
            if let Kids::List(provs) = &mut prov.kids {
                for (i, (child, child_prov)) in items.iter_mut().zip(provs).enumerate() {
                    if !matching(child) {
                        continue;
                    }
                    any = true;
                    let pointer = format!("{pointer}/{i}");
                    if field.is_empty() {
                        // A list of values: the item itself, whatever
                        // the rest of the path.
                        out.push(pointer);
                    } else {
                        find(child, child_prov, rest, create, pointer, out)?;
                    }
                }
            }
            if any || before != out.len() {
                return Ok(());
            }
            let Some((_, at)) = create else {
                return Ok(());
            };
            let item = if field.is_empty() {
                yaml::plain_scalar(text)
            } else {
                let mut m = Map::new();
                m.insert(field.clone(), yaml::plain_scalar(text));
                Value::Object(m)
            };
            if let Some(list) = prov.list_mut() {
                list.push(Prov::uniform(&item, at));
            }
            items.push(item);
            find(node, prov, steps, create, pointer, out)
        }
    }
}

/// Whether a value read as `plain` still reads as a number of `n`'s kind
/// (a whole number for a whole number).
fn reads_as_number(n: &serde_json::Number, plain: &Value) -> bool {
    if n.is_f64() {
        plain.is_number()
    } else {
        plain.is_i64() || plain.is_u64()
    }
}

/// Writes the value into every field `path` names in `res`.
fn set_all(
    res: &mut Res,
    path: &str,
    picked: &Picked,
    options: Option<&FieldOptions>,
    at: &Src,
) -> Result<(), String> {
    let create = options.is_some_and(|o| o.create);
    let steps = steps(path)?;
    let mut pointers = Vec::new();
    find(
        &mut res.value,
        &mut res.prov,
        &steps,
        create.then_some((&picked.value, at)),
        String::new(),
        &mut pointers,
    )
    .map_err(|m| format!("target field `{path}`: {m}"))?;
    if pointers.is_empty() {
        let what = if create { "find or create" } else { "find" };
        return Err(format!(
            "cannot {what} the field `{path}` in the target {}",
            res.cur()
        ));
    }
    for pointer in pointers {
        let (Some(node), Some(node_prov)) =
            (res.value.pointer_mut(&pointer), res.prov.at_mut(&pointer))
        else {
            continue;
        };
        let mut value = picked.value.clone();
        if let Some(o) = options.filter(|o| !o.delimiter.is_empty()) {
            // A field just created (or null) splits as empty text.
            let old = match &*node {
                Value::Null => Some(String::new()),
                other => yaml::scalar_text(other),
            };
            let (Some(old), Some(new)) = (old, yaml::scalar_text(&value)) else {
                return Err(format!(
                    "target field `{path}`: the delimiter option can only be used on a scalar"
                ));
            };
            let mut parts: Vec<&str> = old.split(o.delimiter.as_str()).collect();
            match usize::try_from(o.index) {
                Err(_) => parts.insert(0, &new),
                Ok(i) if i >= parts.len() => parts.push(&new),
                Ok(i) => parts[i] = &new,
            }
            value = Value::String(parts.join(&o.delimiter));
        }
        match node {
            Value::Object(_) | Value::Array(_) => {
                *node = value;
                *node_prov = picked.prov.clone();
            }
            scalar => {
                // Kustomize keeps a scalar's type and writes the text: a
                // number or a boolean must read as one still.
                let text = yaml::scalar_text(&value).unwrap_or_default();
                let meta = |map: &str| {
                    pointer
                        .strip_prefix(map)
                        .is_some_and(|key| !key.contains('/'))
                };
                let plain = yaml::plain_scalar(&text);
                *scalar = match scalar {
                    Value::String(_) => Value::String(text),
                    // Kustomize keeps annotations as text, and an empty
                    // label as an empty one.
                    _ if meta("/metadata/annotations/") => Value::String(text),
                    _ if meta("/metadata/labels/") && text.is_empty() => Value::String(text),
                    Value::Number(n) if !reads_as_number(n, &plain) => {
                        return Err(format!(
                            "target field `{path}` is a number, and `{text}` is not one"
                        ))
                    }
                    Value::Bool(_) if !plain.is_boolean() => {
                        return Err(format!(
                            "target field `{path}` is true or false, and `{text}` is neither"
                        ))
                    }
                    _ => plain,
                };
                *node_prov = picked.prov.clone_leaf();
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_like_kustomize() {
        let cases: &[(&str, &[&str])] = &[
            ("a.b.c", &["a", "b", "c"]),
            (
                "spec.containers.[name=a.b].image",
                &["spec", "containers", "[name=a.b]", "image"],
            ),
            (
                "metadata.annotations.[a.b/c]",
                &["metadata", "annotations", "a.b/c"],
            ),
            (
                r"metadata.labels.app\.kubernetes\.io/name",
                &["metadata", "labels", "app.kubernetes.io/name"],
            ),
            (".a.b", &["a", "b"]),
        ];
        for (path, want) in cases {
            assert_eq!(split_path(path), *want, "{path}");
        }
    }
}
