//! Patches: strategic merge (through [`super::smp`]) and JSON 6902
//! (through the `json-patch` crate), each keeping provenance in step.

use json_patch::PatchOperation;
use serde_json::Value;

use super::prov::{segments, Prov};
use super::resource::Res;
use super::smp;

/// A patch, read from its text.
pub enum Parsed {
    /// Strategic merge patches, one per document, with provenance.
    Strategic(Vec<(Value, Prov)>),
    /// JSON 6902 operations, each with the provenance of its node.
    Json(Vec<(PatchOperation, Prov)>),
}

/// Reads JSON 6902 operations from a list value.
pub fn json_ops(list: &Value, prov: &Prov) -> Result<Vec<(PatchOperation, Prov)>, String> {
    let Value::Array(items) = list else {
        return Err("a JSON 6902 patch is a list of operations".into());
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let mut item = item.clone();
        if let Value::Object(fields) = &mut item {
            for field in ["path", "from"] {
                if let Some(Value::String(path)) = fields.get_mut(field) {
                    *path =
                        go_pointer(path).map_err(|m| format!("operation {i}: `{field}` {m}"))?;
                }
            }
        }
        let op: PatchOperation = serde_json::from_value(item.clone())
            .map_err(|e| format!("operation {i} is not a JSON 6902 operation: {e}"))?;
        let p = prov
            .index(i)
            .cloned()
            .unwrap_or_else(|| Prov::uniform(&item, &prov.at));
        out.push((op, p));
    }
    Ok(out)
}

/// Applies a strategic merge patch to `res`, as Kustomize does: the
/// patch takes the target's apiVersion, and the target keeps its kind,
/// name and namespace unless the options allow a change. Returns false
/// when the patch deletes the object.
pub fn apply_strategic(
    res: &mut Res,
    patch: &Value,
    prov: &Prov,
    allow_name_change: bool,
    allow_kind_change: bool,
) -> Result<bool, smp::MergeError> {
    if allow_name_change || allow_kind_change {
        res.store_prev();
    }
    let mut patch = patch.clone();
    let mut patch_prov = prov.clone();
    if let (Value::Object(m), Some(api)) = (&mut patch, res.value.get("apiVersion")) {
        m.insert("apiVersion".into(), api.clone());
        if let Some(p) = res.prov.key("apiVersion") {
            patch_prov.set_key("apiVersion", p.clone());
        }
    }
    // The fields the target keeps, saved before the merge takes it.
    let mut kept = Value::Object(Default::default());
    let mut kept_prov = res.prov.clone();
    kept_prov.kids = super::prov::Kids::Leaf;
    for field in ["kind", "metadata"] {
        if let Some(v) = res.value.get(field) {
            let v = match field {
                "metadata" => {
                    let mut m = serde_json::Map::new();
                    for k in ["name", "namespace"] {
                        if let Some(x) = v.get(k) {
                            m.insert(k.into(), x.clone());
                        }
                    }
                    Value::Object(m)
                }
                _ => v.clone(),
            };
            kept[field] = v;
        }
    }
    for pointer in ["/kind", "/metadata/name", "/metadata/namespace"] {
        let p = res.prov.nearest(pointer).clone();
        let segs: Vec<String> = segments(pointer).collect();
        match segs.as_slice() {
            [k] => kept_prov.set_key(k, p),
            [m, k] => {
                if kept_prov.key(m).is_none() {
                    let at = res.prov.nearest(&format!("/{m}")).at.clone();
                    kept_prov.set_key(
                        m,
                        Prov {
                            at,
                            kids: super::prov::Kids::Leaf,
                        },
                    );
                }
                if let Some(mp) = kept_prov.key_mut(m) {
                    mp.set_key(k, p);
                }
            }
            _ => {}
        }
    }
    let base = std::mem::take(&mut res.value);
    let base_prov = res.prov.clone_leaf();
    let base_prov = std::mem::replace(&mut res.prov, base_prov);
    let api = base.get("apiVersion").cloned();
    let merged = match smp::merge_owned(base, base_prov, &patch, &patch_prov) {
        Ok(merged) => merged,
        Err(e) => {
            // The build stops here; the object keeps its id for the
            // message that names it.
            res.value = kept;
            if let Some(api) = api {
                res.value["apiVersion"] = api;
            }
            return Err(e);
        }
    };
    let Some((mut value, mut new_prov)) = merged else {
        return Ok(false);
    };
    if value.as_object().is_none_or(|m| m.is_empty()) {
        return Ok(false);
    }
    let mut keep = vec!["/metadata/namespace"];
    if !allow_kind_change {
        keep.push("/kind");
    }
    if !allow_name_change {
        keep.push("/metadata/name");
    }
    for pointer in keep {
        restore(&kept, &kept_prov, &mut value, &mut new_prov, pointer);
    }
    res.value = value;
    res.prov = new_prov;
    Ok(true)
}

/// Puts back the field at `pointer` (`/kind` or `/metadata/x`) as it was
/// in `old`, removing it if it was not there.
fn restore(old: &Value, old_prov: &Prov, new: &mut Value, new_prov: &mut Prov, pointer: &str) {
    let segs: Vec<String> = segments(pointer).collect();
    let (parent, last) = match segs.as_slice() {
        [last] => (None, last.as_str()),
        [parent, last] => (Some(parent.as_str()), last.as_str()),
        _ => return,
    };
    let old_parent = match parent {
        Some(p) => old.get(p),
        None => Some(old),
    };
    let old_value = old_parent.and_then(|p| p.get(last)).cloned();
    let old_leaf = old_prov.nearest(pointer).clone();
    let (target, target_prov) = match parent {
        None => (Some(new), Some(new_prov)),
        Some(p) => match (new.get_mut(p), new_prov.key_mut(p)) {
            (Some(v), Some(vp)) => (Some(v), Some(vp)),
            _ => (None, None),
        },
    };
    let (Some(Value::Object(map)), Some(tp)) = (target, target_prov) else {
        return;
    };
    match old_value {
        Some(v) => {
            map.insert(last.to_string(), v);
            tp.set_key(last, old_leaf);
        }
        None => {
            map.remove(last);
            tp.remove_key(last);
        }
    }
}

/// A JSON 6902 path as Kustomize's JSON patch library (evanphx/json-patch
/// v4) reads it, written as an RFC 6901 pointer. That library splits the
/// path at each `/` and ignores what comes before the first (`data/x` is
/// `/x`), and unescapes `~1` and `~0` only (`a~2b` is that key). A path
/// without `/` (`""` too) names nothing it can patch.
fn go_pointer(path: &str) -> Result<String, String> {
    let Some((_, rest)) = path.split_once('/') else {
        return Err(format!(
            "{path:?} names no field: Kustomize's JSON patch cannot change the object \
             as a whole (kubectl: doc is missing path); write a path such as `/spec/replicas`"
        ));
    };
    let mut out = String::with_capacity(path.len() + 1);
    for segment in rest.split('/') {
        out.push('/');
        out.push_str(&crate::yaml::pointer_segment(&crate::yaml::pointer_key(
            segment,
        )));
    }
    Ok(out)
}

/// `pointer` with each list index written as RFC 6901 wants it, read as
/// Kustomize's JSON patch library reads it in `doc`: as Go's `Atoi` does
/// (`01` and `+1` are 1) and, when negative, counted from the end (`-1`
/// is the last item; for the last segment of an `add`, the end itself).
/// None when nothing changes.
fn go_indexes(doc: &Value, pointer: &str, adds: bool) -> Option<String> {
    let segments: Vec<&str> = pointer.split('/').skip(1).collect();
    let mut node = Some(doc);
    let mut out = String::with_capacity(pointer.len());
    let mut changed = false;
    for (n, segment) in segments.iter().enumerate() {
        out.push('/');
        let mut written = (*segment).to_string();
        match node {
            Some(Value::Array(items)) => {
                let digits = segment.strip_prefix(['+', '-']).unwrap_or(segment);
                let is_int = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
                let len = items.len() + usize::from(adds && n + 1 == segments.len());
                let index = segment.parse::<i64>().ok().filter(|_| is_int);
                let index = index.and_then(|i| {
                    let i = if i < 0 { i + len as i64 } else { i };
                    usize::try_from(i).ok()
                });
                if let Some(i) = index {
                    written = i.to_string();
                }
                node = index.and_then(|i| items.get(i));
            }
            Some(Value::Object(map)) => {
                let key = crate::yaml::pointer_key(segment);
                node = map.get(&key);
            }
            _ => node = None,
        }
        changed |= written != *segment;
        out.push_str(&written);
    }
    changed.then_some(out)
}

/// `op` with its list indexes read as Kustomize reads them
/// ([`go_indexes`]) in `doc`.
fn with_go_indexes(doc: &Value, op: &PatchOperation) -> Option<PatchOperation> {
    let (path, from) = match op {
        PatchOperation::Add(a) => (go_indexes(doc, a.path.as_str(), true), None),
        PatchOperation::Remove(r) => (go_indexes(doc, r.path.as_str(), false), None),
        PatchOperation::Replace(r) => (go_indexes(doc, r.path.as_str(), false), None),
        PatchOperation::Test(t) => (go_indexes(doc, t.path.as_str(), false), None),
        PatchOperation::Copy(c) => (
            go_indexes(doc, c.path.as_str(), true),
            go_indexes(doc, c.from.as_str(), false),
        ),
        PatchOperation::Move(m) => {
            let from = go_indexes(doc, m.from.as_str(), false);
            // The path is read once the value has left `from`.
            let mut left = doc.clone();
            let from_now = from.as_deref().unwrap_or(m.from.as_str());
            let removed: PatchOperation =
                serde_json::from_value(serde_json::json!({"op": "remove", "path": from_now}))
                    .ok()?;
            json_patch::patch(&mut left, &[removed]).ok()?;
            (go_indexes(&left, m.path.as_str(), true), from)
        }
    };
    if path.is_none() && from.is_none() {
        return None;
    }
    let mut fields = serde_json::to_value(op).ok()?;
    if let Some(p) = path {
        fields["path"] = Value::String(p);
    }
    if let Some(f) = from {
        fields["from"] = Value::String(f);
    }
    serde_json::from_value(fields).ok()
}

/// Applies JSON 6902 operations one by one, moving provenance with the
/// values they move. An operation that cannot be applied is an error at
/// that operation.
pub fn apply_json(
    res: &mut Res,
    ops: &[(PatchOperation, Prov)],
) -> Result<(), (String, crate::diagnostics::Location)> {
    for (i, (op, op_prov)) in ops.iter().enumerate() {
        let indexed = with_go_indexes(&res.value, op);
        let op = indexed.as_ref().unwrap_or(op);
        let lenient = lenient_replace(&res.value, op);
        let op = lenient.as_ref().unwrap_or(op);
        json_patch::patch(&mut res.value, std::slice::from_ref(op)).map_err(|e| {
            let message = format!(
                "operation {i} ({} {}) cannot be applied: {}",
                op_name(op),
                op.path(),
                e.kind
            );
            (message, op_prov.at.location())
        })?;
        let value_prov = || {
            op_prov
                .key("value")
                .cloned()
                .unwrap_or_else(|| op_prov.clone())
        };
        match op {
            PatchOperation::Add(a) => {
                let p = value_prov();
                prov_add(&mut res.prov, a.path.as_str(), p);
            }
            PatchOperation::Remove(r) => {
                prov_remove(&mut res.prov, r.path.as_str());
            }
            PatchOperation::Replace(r) => {
                let p = value_prov();
                if let Some(node) = res.prov.at_mut(r.path.as_str()) {
                    *node = p;
                }
            }
            PatchOperation::Move(m) => {
                let moved = prov_remove(&mut res.prov, m.from.as_str());
                let mut p = moved.unwrap_or_else(|| op_prov.clone());
                p.at = op_prov.at.clone();
                prov_add(&mut res.prov, m.path.as_str(), p);
            }
            PatchOperation::Copy(c) => {
                let mut p = res.prov.nearest(c.from.as_str()).clone();
                p.at = op_prov.at.clone();
                prov_add(&mut res.prov, c.path.as_str(), p);
            }
            PatchOperation::Test(_) => {}
        }
    }
    Ok(())
}

/// Kustomize's JSON patch library replaces a key that an object does not
/// have as if it were added (`replace /spec/replicas` on a `spec` without
/// one); a missing list item or parent is still an error.
fn lenient_replace(value: &Value, op: &PatchOperation) -> Option<PatchOperation> {
    let PatchOperation::Replace(r) = op else {
        return None;
    };
    let pointer = r.path.as_str();
    let (parent, _) = split_last(pointer)?;
    let adds =
        value.pointer(pointer).is_none() && value.pointer(parent).is_some_and(Value::is_object);
    adds.then(|| {
        PatchOperation::Add(json_patch::AddOperation {
            path: r.path.clone(),
            value: r.value.clone(),
        })
    })
}

fn op_name(op: &PatchOperation) -> &'static str {
    match op {
        PatchOperation::Add(_) => "add",
        PatchOperation::Remove(_) => "remove",
        PatchOperation::Replace(_) => "replace",
        PatchOperation::Move(_) => "move",
        PatchOperation::Copy(_) => "copy",
        PatchOperation::Test(_) => "test",
    }
}

fn split_last(pointer: &str) -> Option<(&str, String)> {
    let i = pointer.rfind('/')?;
    let last = crate::yaml::pointer_key(&pointer[i + 1..]);
    Some((&pointer[..i], last))
}

fn prov_add(root: &mut Prov, pointer: &str, p: Prov) {
    let Some((parent, last)) = split_last(pointer) else {
        *root = p;
        return;
    };
    let Some(node) = root.at_mut(parent) else {
        return;
    };
    if let super::prov::Kids::List(list) = &mut node.kids {
        if last == "-" {
            list.push(p);
        } else if let Ok(i) = last.parse::<usize>() {
            if i <= list.len() {
                list.insert(i, p);
            }
        }
        return;
    }
    node.set_key(&last, p);
}

fn prov_remove(root: &mut Prov, pointer: &str) -> Option<Prov> {
    let (parent, last) = split_last(pointer)?;
    let node = root.at_mut(parent)?;
    if let super::prov::Kids::List(list) = &mut node.kids {
        let i = last.parse::<usize>().ok()?;
        return (i < list.len()).then(|| list.remove(i));
    }
    node.remove_key(&last)
}
