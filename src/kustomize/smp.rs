//! Kubernetes strategic merge patch, as `kubectl kustomize` (kustomize v5.5,
//! which merges with kyaml) applies `patches:` and `patchesStrategicMerge:`
//! entries. Every rule below was checked against `kubectl kustomize`; the
//! differential tests at the end of this file keep checking the main ones.
//!
//! - Maps merge recursively. A `null` deletes a key, and disappears from
//!   content the patch adds.
//! - Lists with a merge key (see [`merge_key`]) merge item by item. The
//!   patch's items come first, in patch order, each merged into the base
//!   item with the same key; then come the base items the patch does not
//!   name, in base order. So a new item lands *before* the base's items.
//! - `ports` and `topologySpreadConstraints` have a second key (`protocol`,
//!   `whenUnsatisfiable`). When any item of such a list sets it, kustomize
//!   instead puts only the new items first and merges the others in place,
//!   and it drops a patch item that matches a base item on the first key but
//!   not on whether the second is set.
//! - `metadata.finalizers` merges as a set, patch values first, and
//!   `metadata.ownerReferences` by `uid`.
//! - A Service's `ports` merge by `port` and `protocol`, and the
//!   `webhooks` of a webhook configuration by `name`.
//! - The few other lists the schema keys (a Node's `podCIDRs` as a set and
//!   its `addresses` by `type`, a Pod's `podIPs` by `ip`, a CSINode's
//!   `drivers` by `name`, the `conditions` of the kinds whose status has
//!   them) merge likewise. Every other list is replaced whole: these are
//!   all the `x-kubernetes-patch-merge-key` lists of Kubernetes 1.21's
//!   schema, the one kustomize embeds.
//! - `$patch: delete` deletes a map or a list item; as an item without the
//!   merge key it deletes the whole list. `$patch: replace` replaces a map,
//!   or (as an item without the merge key) the whole list. As kustomize does,
//!   `$patch: replace` on a list item matching a base item, or on the whole
//!   object, leaves the base unchanged.
//! - kustomize knows no other directive: `$setElementOrder/…`, `$retainKeys`
//!   and `$deleteFromPrimitiveList/…` are merged as ordinary fields.
//! - Unlike kustomize, which silently empties the list, a list item without
//!   its merge key is an error. A value patched with one of another type
//!   (map, list, scalar) is an error, as in kustomize.

use std::collections::HashSet;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::prov::{Kids, Prov, Src};
use super::schema;

/// Why a patch cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeError {
    /// JSON pointer of the patch node at fault, e.g. "/spec/template/spec/containers/0".
    pub pointer: String,
    pub message: String,
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at {})", self.message, self.pointer)
    }
}

impl std::error::Error for MergeError {}

/// Applies strategic-merge `patch` to `base` (both whole Kubernetes objects,
/// JSON data model) and returns the merged object.
///
/// `Value::Null` means the patch deletes the object (`$patch: delete`).
pub fn merge(base: &Value, patch: &Value) -> Result<Value, MergeError> {
    let nowhere = Src::new(&Arc::from(Path::new("")), 0, 0);
    let (bp, pp) = (
        Prov::uniform(base, &nowhere),
        Prov::uniform(patch, &nowhere),
    );
    Ok(merge_located(base, &bp, patch, &pp)?
        .map(|(value, _)| value)
        .unwrap_or(Value::Null))
}

/// Like [`merge`], with the provenance of both sides: every node of the
/// result keeps the provenance of the side it came from. `None` means the
/// patch deletes the object.
pub fn merge_located(
    base: &Value,
    base_prov: &Prov,
    patch: &Value,
    patch_prov: &Prov,
) -> Result<Option<(Value, Prov)>, MergeError> {
    merge_owned(base.clone(), base_prov.clone(), patch, patch_prov)
}

/// Like [`merge_located`], taking the base by value (nothing of it is
/// copied).
pub fn merge_owned(
    base: Value,
    base_prov: Prov,
    patch: &Value,
    patch_prov: &Prov,
) -> Result<Option<(Value, Prov)>, MergeError> {
    // Like Kustomize, the schema of the object patched decides how lists
    // merge, else the schema of the patch's kind in the object's API
    // version (a patch with a `target` may name another kind, and takes
    // the target's apiVersion).
    let field = |v: &Value, name: &str| {
        v.get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let api = match field(&base, "apiVersion") {
        a if a.is_empty() => field(patch, "apiVersion"),
        a => a,
    };
    let has_schema = |kind: &str| {
        schema::knows(&api, kind)
            && (pod_spec_path(kind).is_some()
                || matches!(
                    kind,
                    "Service" | "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration"
                ))
    };
    let (own, patched) = (field(&base, "kind"), field(patch, "kind"));
    let kind = match (has_schema(&own), has_schema(&patched)) {
        (false, true) => patched,
        _ if own.is_empty() => patched,
        _ => own,
    };
    let loc = Loc {
        kind: &kind,
        known: schema::knows(&api, &kind),
        path: Vec::new(),
        pointer: String::new(),
    };
    if let Some(map) = patch.as_object() {
        if directive(map, &loc)? == Directive::Replace {
            return Ok(Some((base, base_prov)));
        }
    }
    unmergeable_lists(&base, &loc)?;
    merge_value(Some((base, base_prov)), patch, patch_prov, &loc)
}

/// Kustomize's merge walks every field of the object, not only the
/// patch's, and rebuilds each list that merges by key from its keys: of
/// items with one key it keeps the last, and next to an item without the
/// key it keeps that item alone. It does so without a word, whatever the
/// patch changes; such a list is refused here instead.
fn unmergeable_lists(value: &Value, loc: &Loc) -> Result<(), MergeError> {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                unmergeable_lists(v, &loc.field(k))?;
            }
            Ok(())
        }
        Value::Array(items) => {
            let ListStrategy::Keyed(keys) = list_strategy(loc.kind, loc.known, &loc.path) else {
                return Ok(());
            };
            let field = loc.path.join(".");
            let mut seen: HashSet<Id> = HashSet::new();
            for (i, item) in items.iter().enumerate() {
                if !item.is_object() {
                    continue;
                }
                let Some(id) = id_of(item, keys) else {
                    return Err(loc.item(i).error(format!(
                        "item {i} of `{field}` in the object has no `{}`: merging any patch into the object, Kustomize keeps that item alone and drops the list's others without a word; give it its `{}`, or change the object with a JSON 6902 patch",
                        keys.0, keys.0
                    )));
                };
                if !seen.insert(id.clone()) {
                    return Err(loc.item(i).error(format!(
                        "`{field}` in the object has two items with `{}: {}`: merging any patch into the object, Kustomize keeps only the last of them, without a word; give each its own `{}`, or change the object with a JSON 6902 patch",
                        keys.0, id.0, keys.0
                    )));
                }
                unmergeable_lists(item, &loc.item(i))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The merge key of the list at `path` (field names from the object root, list
/// indices left out, e.g. ["spec","template","spec","containers"]) for an object
/// of `kind`, if the list merges by key; None means the list is replaced whole
/// (or, for `metadata.finalizers`, merged as a set).
pub fn merge_key(kind: &str, path: &[&str]) -> Option<&'static str> {
    match list_strategy(kind, true, path) {
        ListStrategy::Keyed((key, _)) => Some(key),
        ListStrategy::Set | ListStrategy::Replace => None,
    }
}

const PATCH: &str = "$patch";

/// A list's merge key and, for a few lists, its second key.
type Keys = (&'static str, Option<&'static str>);

/// How a list merges.
#[derive(Debug, Clone, Copy)]
enum ListStrategy {
    Replace,
    Set,
    Keyed(Keys),
}

/// Path of the pod spec in an object of `kind`, for the kinds that run pods.
fn pod_spec_path(kind: &str) -> Option<&'static [&'static str]> {
    const TEMPLATE: &[&str] = &["spec", "template", "spec"];
    match kind {
        "Pod" => Some(&["spec"]),
        "StatefulSet" | "Deployment" | "DaemonSet" | "ReplicaSet" => Some(TEMPLATE),
        "Job" | "ReplicationController" => Some(TEMPLATE),
        "PodTemplate" => Some(&["template", "spec"]),
        "CronJob" => Some(&["spec", "jobTemplate", "spec", "template", "spec"]),
        _ => None,
    }
}

/// The strategy of the list at `path`, from the OpenAPI schema kustomize
/// embeds (older than `resizePolicy`, `schedulingGates`, `resourceClaims`,
/// which it therefore replaces, as it does the ports of ephemeral containers).
fn list_strategy(kind: &str, known: bool, path: &[&str]) -> ListStrategy {
    use ListStrategy::{Keyed, Replace, Set};
    if !known {
        return Replace;
    }
    match (kind, path) {
        ("Service", ["spec", "ports"]) => return Keyed(("port", Some("protocol"))),
        ("MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration", ["webhooks"]) => {
            return Keyed(("name", None))
        }
        // Every kind the schema knows has an ObjectMeta there.
        ("ServiceAccount", ["secrets"]) => return Keyed(("name", None)),
        // Checked with kubectl kind by kind: a CronJob, an Ingress, a
        // CustomResourceDefinition, an HPA and a CertificateSigningRequest
        // replace them.
        (
            "Pod"
            | "Deployment"
            | "StatefulSet"
            | "DaemonSet"
            | "ReplicaSet"
            | "Job"
            | "Node"
            | "PersistentVolumeClaim"
            | "Service"
            | "Namespace"
            | "ReplicationController"
            | "PodDisruptionBudget"
            | "APIService",
            ["status", "conditions"],
        ) => return Keyed(("type", None)),
        // The other keyed lists of the schema, outside pod specs.
        ("Node", ["spec", "podCIDRs"]) => return Set,
        ("Node", ["status", "addresses"]) => return Keyed(("type", None)),
        ("Pod", ["status", "podIPs"]) => return Keyed(("ip", None)),
        ("CSINode", ["spec", "drivers"]) => return Keyed(("name", None)),
        ("ComponentStatus", ["conditions"]) => return Keyed(("type", None)),
        (_, [.., "metadata", "finalizers"]) => return Set,
        (_, [.., "metadata", "ownerReferences"]) => return Keyed(("uid", None)),
        _ => {}
    }
    let Some(pod_spec) = pod_spec_path(kind) else {
        return Replace;
    };
    let containers = ["containers", "initContainers", "ephemeralContainers"];
    match (path, path.strip_prefix(pod_spec)) {
        (_, Some([list])) => match *list {
            "hostAliases" => Keyed(("ip", None)),
            "topologySpreadConstraints" => Keyed(("topologyKey", Some("whenUnsatisfiable"))),
            "volumes" | "imagePullSecrets" => Keyed(("name", None)),
            list if containers.contains(&list) => Keyed(("name", None)),
            _ => Replace,
        },
        (_, Some([list, field])) if containers.contains(list) => match *field {
            "env" => Keyed(("name", None)),
            "volumeMounts" => Keyed(("mountPath", None)),
            "volumeDevices" => Keyed(("devicePath", None)),
            "ports" if *list != "ephemeralContainers" => Keyed(("containerPort", Some("protocol"))),
            _ => Replace,
        },
        _ => Replace,
    }
}

/// Where the merge is: the object's kind, the field path for
/// [`list_strategy`], and the JSON pointer of the patch node for errors.
#[derive(Clone)]
struct Loc<'a> {
    kind: &'a str,
    /// Whether Kustomize's schema knows the kind at the object's
    /// apiVersion; if not, every list is replaced whole.
    known: bool,
    path: Vec<&'a str>,
    pointer: String,
}

impl<'a> Loc<'a> {
    fn field(&self, name: &'a str) -> Self {
        let mut next = self.clone();
        next.path.push(name);
        next.pointer += &format!("/{}", name.replace('~', "~0").replace('/', "~1"));
        next
    }

    fn item(&self, index: usize) -> Self {
        let mut next = self.clone();
        next.pointer += &format!("/{index}");
        next
    }

    fn error(&self, message: String) -> MergeError {
        let pointer = self.pointer.clone();
        MergeError { pointer, message }
    }
}

/// A `$patch` directive.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Directive {
    Merge,
    Replace,
    Delete,
}

fn directive(map: &Map<String, Value>, loc: &Loc) -> Result<Directive, MergeError> {
    match map.get(PATCH).map(|v| (v, v.as_str())) {
        None | Some((_, Some("merge"))) => Ok(Directive::Merge),
        Some((_, Some("replace"))) => Ok(Directive::Replace),
        Some((_, Some("delete"))) => Ok(Directive::Delete),
        Some((value, _)) => {
            let message = format!("unknown patch strategy {value}");
            Err(loc.field(PATCH).error(message))
        }
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Object(_) => "map",
        Value::Array(_) => "list",
        _ => "scalar",
    }
}

/// The provenance children of a list node, one per item, taken out of it
/// (made from its position where the tree lacks them).
fn take_item_provs(prov: Prov, items: &[Value]) -> Vec<Prov> {
    let at = prov.at;
    let mut provs = match prov.kids {
        Kids::List(l) => l,
        _ => Vec::new(),
    };
    provs.truncate(items.len());
    while provs.len() < items.len() {
        provs.push(Prov::uniform(&items[provs.len()], &at));
    }
    provs
}

/// A merged node: its value and provenance; None means "no value".
type Merged = Option<(Value, Prov)>;

/// Merges `patch` into `base` (None when absent).
fn merge_value<'a>(
    base: Option<(Value, Prov)>,
    patch: &'a Value,
    prov: &Prov,
    loc: &Loc<'a>,
) -> Result<Merged, MergeError> {
    let (b, p) = (
        base.as_ref().map_or("null", |b| type_name(&b.0)),
        type_name(patch),
    );
    if b != "null" && p != "null" && b != p {
        return Err(loc.error(format!("cannot patch a {b} with a {p}")));
    }
    match patch {
        Value::Null => Ok(None),
        Value::Object(map) => {
            let base = base.and_then(|(v, p)| match v {
                Value::Object(m) => Some((m, p)),
                _ => None,
            });
            merge_map(base, map, prov, loc)
        }
        Value::Array(list) => {
            let base = base.and_then(|(v, p)| match v {
                Value::Array(l) => Some((l, p)),
                _ => None,
            });
            merge_list(base, list, prov, loc)
        }
        _ => {
            // The node keeps the base's style.
            let mut merged = prov.clone();
            let value = match &base {
                Some((old, old_prov)) => {
                    merged.kids = old_prov.scalar_kids();
                    super::prov::in_style_of(old, old_prov, patch)
                }
                None => patch.clone(),
            };
            Ok(Some((value, merged)))
        }
    }
}

fn merge_map<'a>(
    base: Option<(Map<String, Value>, Prov)>,
    patch: &'a Map<String, Value>,
    prov: &Prov,
    loc: &Loc<'a>,
) -> Result<Merged, MergeError> {
    let empty = || Prov {
        at: prov.at.clone(),
        kids: Kids::Map(Default::default()),
    };
    let (mut out, mut out_prov) = match (directive(patch, loc)?, base) {
        (Directive::Delete, _) => return Ok(None),
        (Directive::Merge, Some((map, bp))) => {
            let bp = if matches!(bp.kids, Kids::Map(_)) {
                bp
            } else {
                Prov::uniform(&Value::Object(map.clone()), &bp.at)
            };
            (map, bp)
        }
        _ => (Map::new(), empty()),
    };
    for (key, value) in patch.iter().filter(|(key, _)| *key != PATCH) {
        let owned;
        let child = match prov.key(key) {
            Some(p) => p,
            None => {
                owned = Prov::uniform(value, &prov.at);
                &owned
            }
        };
        let base_child = out.remove(key).map(|v| {
            let p = out_prov
                .remove_key(key)
                .unwrap_or_else(|| Prov::uniform(&v, &out_prov.at));
            (v, p)
        });
        if let Some((v, p)) = merge_value(base_child, value, child, &loc.field(key))? {
            out.insert(key.clone(), v);
            out_prov.set_key(key, p);
        }
    }
    Ok(Some((Value::Object(out), out_prov)))
}

/// Rebuilds a list node from merged items.
fn list_node(items: Vec<(Value, Prov)>, at: &Src) -> (Value, Prov) {
    let (values, provs): (Vec<Value>, Vec<Prov>) = items.into_iter().unzip();
    let prov = Prov {
        at: at.clone(),
        kids: Kids::List(provs),
    };
    (Value::Array(values), prov)
}

fn merge_list<'a>(
    base: Option<(Vec<Value>, Prov)>,
    patch: &'a [Value],
    prov: &Prov,
    loc: &Loc<'a>,
) -> Result<Merged, MergeError> {
    let strategy = list_strategy(loc.kind, loc.known, &loc.path);
    if let ListStrategy::Replace = strategy {
        return Ok(Some((Value::Array(patch.to_vec()), prov.clone())));
    }
    let (at, base_items) = match base {
        Some((items, bp)) => {
            let at = bp.at.clone();
            let provs = take_item_provs(bp, &items);
            (at, items.into_iter().zip(provs).collect::<Vec<_>>())
        }
        None => (prov.at.clone(), Vec::new()),
    };
    let patch_provs = take_item_provs(prov.clone(), patch);
    match strategy {
        ListStrategy::Replace => Ok(Some((Value::Array(patch.to_vec()), prov.clone()))),
        ListStrategy::Set => {
            let mut out: Vec<(Value, Prov)> = Vec::new();
            let patch_items = patch.iter().cloned().zip(patch_provs);
            for (value, p) in patch_items.chain(base_items) {
                if !out.iter().any(|(v, _)| *v == value) {
                    out.push((value, p));
                }
            }
            Ok(Some(list_node(out, &at)))
        }
        ListStrategy::Keyed(keys) => {
            let merged = merge_keyed(base_items, patch, &patch_provs, keys, loc)?;
            Ok(merged.map(|items| list_node(items, &at)))
        }
    }
}

/// The key of a list item: the merge key's value, and the second key's.
type Id = (String, Option<String>);

/// A patch list item with its key, provenance, and where it is.
struct Item<'a> {
    map: &'a Map<String, Value>,
    prov: &'a Prov,
    id: Id,
    loc: Loc<'a>,
}

/// The scalar value of `field` in `item`, as text (kyaml compares keys as text).
fn scalar_field(item: &Value, field: &str) -> Option<String> {
    match item.get(field)? {
        Value::String(s) => Some(s.clone()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
        other => Some(other.to_string()),
    }
}

fn id_of(item: &Value, (first, second): Keys) -> Option<Id> {
    let second = second.and_then(|s| scalar_field(item, s));
    Some((scalar_field(item, first)?, second))
}

/// Merges a list by key. Patch items without the key are list directives
/// (`$patch: delete` or `replace`) or errors. None: the list is deleted.
fn merge_keyed<'a>(
    mut base: Vec<(Value, Prov)>,
    patch: &'a [Value],
    patch_provs: &'a [Prov],
    (first, second): Keys,
    loc: &Loc<'a>,
) -> Result<Option<Vec<(Value, Prov)>>, MergeError> {
    // kustomize uses the second key only when some item sets it.
    let second = second.filter(|s| {
        base.iter()
            .map(|(v, _)| v)
            .chain(patch)
            .any(|v| scalar_field(v, s).is_some())
    });
    let keys = (first, second);
    let mut items = Vec::new();
    for (index, (value, prov)) in patch.iter().zip(patch_provs).enumerate() {
        let loc = loc.item(index);
        let Some(map) = value.as_object() else {
            return Err(loc.error(format!(
                "list item is not a map with the merge key `{first}`"
            )));
        };
        if let Some(id) = id_of(value, keys) {
            items.push(Item { map, prov, id, loc });
            continue;
        }
        match directive(map, &loc)? {
            Directive::Delete => return Ok(None),
            Directive::Replace => base.clear(),
            Directive::Merge => {
                return Err(loc.error(format!("list item has no merge key `{first}`")))
            }
        }
    }
    merge_items(base, &items, keys).map(Some)
}

/// With one key, the patch's items come first, each merged with its base
/// item, then the other base items. With two, only new items come first,
/// and the others merge in place.
fn merge_items(
    base: Vec<(Value, Prov)>,
    items: &[Item],
    keys: Keys,
) -> Result<Vec<(Value, Prov)>, MergeError> {
    let in_place = keys.1.is_some();
    let ids: Vec<Option<Id>> = base.iter().map(|(b, _)| id_of(b, keys)).collect();
    let mut base: Vec<Option<(Value, Prov)>> = base.into_iter().map(Some).collect();
    let mut claims: Vec<Option<&Item>> = vec![None; base.len()];
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    // Like kustomize, the first of patch items with the same key wins.
    for item in items.iter().filter(|item| seen.insert(&item.id)) {
        // With two keys, a `$patch: delete` item that leaves the second
        // unset deletes nothing (Kustomize matches it on both).
        let deletes = matches!(directive(item.map, &item.loc), Ok(Directive::Delete));
        match ids.iter().position(|id| id.as_ref() == Some(&item.id)) {
            Some(_) if in_place && deletes && item.id.1.is_none() => {}
            Some(i) if in_place => claims[i] = Some(item),
            Some(i) => {
                claims[i] = Some(item);
                out.extend(merge_item(base[i].take(), item)?);
            }
            // kustomize drops an item matching a base item on the first key
            // only, when one of them lacks the second.
            None if in_place && ids.iter().flatten().any(|id| conflict(id, &item.id)) => {}
            None => out.extend(merge_item(None, item)?),
        }
    }
    for (value, claim) in base.into_iter().zip(claims) {
        match (value, claim) {
            (Some(value), Some(item)) if in_place => out.extend(merge_item(Some(value), item)?),
            (Some(value), None) => out.push(value),
            _ => {}
        }
    }
    Ok(out)
}

/// Whether both ids have the same first key, but only one sets the second.
fn conflict(a: &Id, b: &Id) -> bool {
    a.0 == b.0 && a.1.is_some() != b.1.is_some()
}

/// Merges one patch list item into its base item, if any. Like kustomize,
/// `$patch: replace` leaves a matching base item unchanged.
fn merge_item(base: Option<(Value, Prov)>, item: &Item) -> Result<Merged, MergeError> {
    match (base, directive(item.map, &item.loc)?) {
        (Some(base), Directive::Replace) => Ok(Some(base)),
        (base, _) => {
            let base = base.and_then(|(v, p)| match v {
                Value::Object(m) => Some((m, p)),
                _ => None,
            });
            merge_map(base, item.map, item.prov, &item.loc)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::{fs, io, path::Path, process::Command};

    /// Parses YAML.
    fn y(text: &str) -> Value {
        serde_yaml::from_str(text).unwrap()
    }

    /// The agent StatefulSet of the 1.29.0 base.
    fn agent() -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bases/v1.29.0/statefulset.yaml");
        y(&fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
    }

    /// An object of `kind`, named like the agent, whose pod spec is `pod_spec` (YAML).
    fn object(kind: &str, pod_spec: &str) -> Value {
        let path = pod_spec_path(kind).unwrap().iter().rev();
        let mut value = path.fold(y(pod_spec), |v, field| {
            Value::Object(Map::from_iter([(field.to_string(), v)]))
        });
        value["apiVersion"] = match kind {
            "Pod" => "v1",
            "Job" | "CronJob" => "batch/v1",
            _ => "apps/v1",
        }
        .into();
        value["kind"] = kind.into();
        value["metadata"] = y("{name: whystack-agent}");
        value
    }

    /// Merges two pod specs (YAML) in objects of `kind`; returns the merged pod spec.
    fn pod(kind: &str, base: &str, patch: &str) -> Result<Value, MergeError> {
        let merged = merge(&object(kind, base), &object(kind, patch))?;
        let pointer = format!("/{}", pod_spec_path(kind).unwrap().join("/"));
        Ok(merged.pointer(&pointer).unwrap().clone())
    }

    /// The merge of the `field` lists (YAML items) of container `c`, in StatefulSets.
    fn list(field: &str, base: &str, patch: &str) -> Value {
        let pod_spec = |items| format!("containers: [{{name: c, {field}: [{items}]}}]");
        let merged = pod("StatefulSet", &pod_spec(base), &pod_spec(patch)).unwrap();
        merged["containers"][0][field].clone()
    }

    #[test]
    fn maps_merge_and_null_deletes() {
        let base = y("{kind: ConfigMap, data: {a: '1', b: '2'}, x: {y: [1]}}");
        let patch = y("{data: {a: null, c: '3', zz: null}, new: {p: null, q: {}}, x: {z: 1}}");
        let want = y("{kind: ConfigMap, data: {b: '2', c: '3'}, x: {y: [1], z: 1}, new: {q: {}}}");
        assert_eq!(merge(&base, &patch), Ok(want));
    }

    #[test]
    fn containers_merge_by_name_and_a_misspelled_one_is_added_first() {
        let patch = object("StatefulSet", "{containers: [{name: agent, image: v2}]}");
        let merged = merge(&agent(), &patch).unwrap();
        let containers = &merged["spec"]["template"]["spec"]["containers"];
        assert_eq!(containers.as_array().map(Vec::len), Some(1));
        assert_eq!(containers[0]["image"], "v2");
        assert_eq!(containers[0]["env"].as_array().map(Vec::len), Some(4));

        let patch = object("StatefulSet", "{containers: [{name: agnet, args: [x]}]}");
        let merged = merge(&agent(), &patch).unwrap();
        let containers = &merged["spec"]["template"]["spec"]["containers"];
        assert_eq!(containers.as_array().map(Vec::len), Some(2));
        assert_eq!(containers[0], y("{name: agnet, args: [x]}"));
        assert_eq!(containers[1]["name"], "agent");
    }

    #[test]
    fn env_merges_by_name() {
        let base = "{name: A}, {name: B, valueFrom: {}}, {name: C}";
        let patch = "{name: D}, {name: B, value: x}, {name: C, $patch: delete}";
        let want = "[{name: D}, {name: B, value: x, valueFrom: {}}, {name: A}]";
        assert_eq!(list("env", base, patch), y(want));
    }

    #[test]
    fn volume_mounts_merge_by_mount_path() {
        let base = "{name: a, mountPath: /a}, {name: t, mountPath: /t}";
        let patch = "{name: a, mountPath: /b}, {name: u, mountPath: /t}";
        let want = "[{name: a, mountPath: /b}, {name: u, mountPath: /t}, {name: a, mountPath: /a}]";
        assert_eq!(list("volumeMounts", base, patch), y(want));
    }

    #[test]
    fn ports_merge_by_container_port_and_protocol() {
        let base = "{containerPort: 80, name: a}, {containerPort: 81}";
        let patch = "{containerPort: 82}, {containerPort: 81, name: b}";
        let want =
            "[{containerPort: 82}, {containerPort: 81, name: b}, {containerPort: 80, name: a}]";
        assert_eq!(list("ports", base, patch), y(want));
        // With a protocol: new items first, the others in place, a mismatch dropped.
        let base = "{containerPort: 80, name: a}, {containerPort: 81, protocol: TCP}";
        let patch = "{containerPort: 82}, {containerPort: 81, protocol: TCP, name: b},
            {containerPort: 80, protocol: TCP}";
        let want = "[{containerPort: 82}, {containerPort: 80, name: a},
            {containerPort: 81, protocol: TCP, name: b}]";
        assert_eq!(list("ports", base, patch), y(want));
    }

    #[test]
    fn patch_delete_removes_maps_items_and_lists() {
        let base = "{volumes: [{name: tmp}, {name: data}], securityContext: {runAsUser: 1}}";
        let patch = "{volumes: [{name: tmp, $patch: delete}], securityContext: {$patch: delete}}";
        assert_eq!(pod("Job", base, patch), Ok(y("{volumes: [{name: data}]}")));
        let want = y("{securityContext: {runAsUser: 1}}");
        assert_eq!(pod("Job", base, "{volumes: [{$patch: delete}]}"), Ok(want));
        assert_eq!(merge(&y(base), &y("{$patch: delete}")), Ok(Value::Null));
    }

    #[test]
    fn patch_replace_replaces_maps_and_lists() {
        let base = "containers: [{name: c, image: i, resources: {limits: {cpu: '1'}}}]";
        let patch = "containers: [{name: c, resources: {$patch: replace, requests: {x: null}}}]";
        let want = y("containers: [{name: c, image: i, resources: {requests: {}}}]");
        assert_eq!(pod("DaemonSet", base, patch), Ok(want));
        let patch = "containers: [{$patch: replace}, {name: d, image: null}]";
        assert_eq!(
            pod("DaemonSet", base, patch),
            Ok(y("containers: [{name: d}]"))
        );
        // As in kustomize: no effect on a matching list item, nor on the object.
        let patch = "containers: [{name: c, $patch: replace}]";
        assert_eq!(pod("DaemonSet", base, patch), Ok(y(base)));
        let patch = y("{$patch: replace, containers: null}");
        assert_eq!(merge(&y(base), &patch), Ok(y(base)));
    }

    #[test]
    fn pod_spec_locations() {
        let kinds = [
            "Pod",
            "CronJob",
            "Job",
            "DaemonSet",
            "StatefulSet",
            "ReplicaSet",
            "Deployment",
        ];
        for kind in kinds {
            let env = |name: &str| format!("containers: [{{name: c, env: [{{name: {name}}}]}}]");
            let want = y("containers: [{name: c, env: [{name: B}, {name: A}]}]");
            assert_eq!(pod(kind, &env("A"), &env("B")), Ok(want), "{kind}");
        }
        let cron_job = [
            "spec",
            "jobTemplate",
            "spec",
            "template",
            "spec",
            "containers",
            "env",
        ];
        assert_eq!(merge_key("CronJob", &cron_job), Some("name"));
        let mounts = ["spec", "ephemeralContainers", "volumeMounts"];
        assert_eq!(merge_key("Pod", &mounts), Some("mountPath"));
        assert_eq!(merge_key("Pod", &["spec", "hostAliases"]), Some("ip"));
        assert_eq!(merge_key("Deployment", &["spec", "containers"]), None);
        assert_eq!(
            merge_key("Widget", &["spec", "template", "spec", "containers"]),
            None
        );
    }

    #[test]
    fn other_lists_are_replaced() {
        let base =
            "{tolerations: [{key: a}], containers: [{name: c, args: [a], resizePolicy: [{}]}]}";
        let patch = "{tolerations: [], containers: [{name: c, args: [null], resizePolicy: []}]}";
        assert_eq!(pod("StatefulSet", base, patch), Ok(y(patch)));
        let base = y("{kind: StatefulSet, spec: {volumeClaimTemplates: [{metadata: {name: a}}]}}");
        let patch = y("{spec: {volumeClaimTemplates: [{metadata: {name: b}}]}}");
        assert_eq!(merge(&base, &patch).unwrap()["spec"], patch["spec"]);
        let base = y("{kind: Widget, spec: {items: [{name: a}]}}");
        let patch = y("{spec: {items: [{name: b}]}}");
        assert_eq!(merge(&base, &patch).unwrap()["spec"], patch["spec"]);
    }

    #[test]
    fn metadata_finalizers_and_owner_references() {
        let base = y("{apiVersion: v1, kind: Pod, metadata: {finalizers: [a], ownerReferences: [{uid: u0}]}}");
        let patch = y("{metadata: {finalizers: [b, a, b], ownerReferences: [{uid: u1}]}}");
        let want = "{finalizers: [b, a], ownerReferences: [{uid: u1}, {uid: u0}]}";
        assert_eq!(merge(&base, &patch).unwrap()["metadata"], y(want));
    }

    #[test]
    fn other_directives_are_plain_fields() {
        let base = "containers: [{name: c, args: [a]}]";
        let patch = "
            $setElementOrder/containers: [{name: c}]
            containers: [{name: c, $retainKeys: [name]}]";
        let want = "
            $setElementOrder/containers: [{name: c}]
            containers: [{name: c, args: [a], $retainKeys: [name]}]";
        assert_eq!(pod("Pod", base, patch), Ok(y(want)));
    }

    #[test]
    fn errors_point_at_the_patch_node() {
        let err = |base: &str, patch: &str| pod("Pod", base, patch).unwrap_err().pointer;
        let base = "{containers: [{name: c, env: []}], volumes: [{name: v}], hostname: h}";
        let missing_key = err(base, "containers: [{name: c}, {image: x}]");
        assert_eq!(missing_key, "/spec/containers/1");
        assert_eq!(err(base, "volumes: [v]"), "/spec/volumes/0");
        let map_for_list = err(base, "containers: [{name: c, env: {name: A}}]");
        assert_eq!(map_for_list, "/spec/containers/0/env");
        assert_eq!(err(base, "hostname: [h]"), "/spec/hostname");
        assert_eq!(err(base, "containers: {$patch: drop}"), "/spec/containers");
        assert_eq!(
            err(base, "hostAliases: {$patch: drop}"),
            "/spec/hostAliases/$patch"
        );
        assert_eq!(err("{a/b~: x}", "{a/b~: {}}"), "/spec/a~1b~0");
    }

    /// `kubectl kustomize` of `base` with `patch` in `patches:`: the object,
    /// or kubectl's error; None (skip) when kubectl is missing outside CI.
    fn kustomize(name: &str, base: &Value, patch: &Value) -> Option<Result<Value, String>> {
        let dir = std::env::temp_dir().join(format!("smp-test-{}-{name}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let kustomization = "resources: [base.yaml]\npatches:\n  - path: patch.yaml\n";
        fs::write(dir.join("kustomization.yaml"), kustomization).unwrap();
        fs::write(dir.join("base.yaml"), serde_yaml::to_string(base).unwrap()).unwrap();
        fs::write(
            dir.join("patch.yaml"),
            serde_yaml::to_string(patch).unwrap(),
        )
        .unwrap();
        let output = Command::new("kubectl").arg("kustomize").arg(&dir).output();
        fs::remove_dir_all(&dir).unwrap();
        match output {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let ci = crate::testing::tools_required();
                assert!(!ci, "kubectl is missing, and CI=true");
                eprintln!("skipping {name}: kubectl not found");
                None
            }
            Err(e) => panic!("kubectl: {e}"),
            Ok(out) if out.status.success() => {
                Some(Ok(serde_yaml::from_slice(&out.stdout).unwrap()))
            }
            Ok(out) => Some(Err(String::from_utf8_lossy(&out.stderr).into_owned())),
        }
    }

    /// Asserts that `merge` gives what `kubectl kustomize` gives.
    fn differential(name: &str, base: &Value, patch: &Value) {
        let Some(expected) = kustomize(name, base, patch) else {
            return;
        };
        let expected = expected.unwrap_or_else(|e| panic!("{name}: kubectl failed: {e}"));
        let got = merge(base, patch).unwrap_or_else(|e| panic!("{name}: {e}"));
        let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap();
        assert!(
            got == expected,
            "{name}: {}\nkubectl: {}",
            pretty(&got),
            pretty(&expected)
        );
    }

    /// Differential tests on the agent StatefulSet, with patches of its pod spec.
    #[test]
    fn kubectl_agent_patches() {
        let patches = [
            // The GKE token patch of content/en/attestation.md.
            (
                "gke",
                "
                volumes:
                  - name: whystack-token
                    projected:
                      sources:
                        - serviceAccountToken:
                            path: token
                            audience: whystack-enroll
                            expirationSeconds: 3600
                containers:
                  - name: agent
                    volumeMounts:
                      - name: whystack-token
                        mountPath: /var/run/secrets/tokens/gke-oidc
                        readOnly: true",
            ),
            (
                "env",
                "
                containers:
                  - name: agent
                    env:
                      - {name: RUNNER_LOG, value: debug}
                      - {name: RUNNER_INSTANCE_ID, value: fixed}
                      - {name: POD_UID, $patch: delete}",
            ),
            (
                "delete",
                "
                volumes: [{name: tmp, $patch: delete}]
                containers:
                  - name: agent
                    volumeMounts: [{mountPath: /tmp, $patch: delete}]
                    resources: {limits: null, requests: {cpu: null}}",
            ),
            (
                "agnet",
                "containers: [{name: agnet, volumeMounts: [{name: t, mountPath: /t}]}]",
            ),
        ];
        for (name, pod_spec) in patches {
            differential(name, &agent(), &object("StatefulSet", pod_spec));
        }
    }

    #[test]
    fn kubectl_volume_claim_templates_are_replaced() {
        let mut patch = object("StatefulSet", "securityContext: {runAsUser: 2000}");
        patch["spec"]["replicas"] = 2.into();
        let claim = "[{metadata: {name: identity}, spec: {resources: {requests: {storage: 1Gi}}}}]";
        patch["spec"]["volumeClaimTemplates"] = y(claim);
        differential("vct", &agent(), &patch);
    }

    #[test]
    fn kubectl_ports_and_metadata_lists() {
        let base = "
            containers:
              - {name: w, ports: [{containerPort: 53, protocol: UDP}, {containerPort: 80, name: x}]}
            initContainers:
              - {name: init, ports: [{containerPort: 80, protocol: TCP}, {containerPort: 81}]}";
        let patch = "
            containers:
              - {name: w, ports: [{containerPort: 8080}, {containerPort: 80, name: web}]}
            initContainers:
              - name: init
                ports:
                  - {containerPort: 80}
                  - {containerPort: 82, protocol: TCP}
                  - {containerPort: 81, name: b}";
        let (mut base, mut patch) = (object("Deployment", base), object("Deployment", patch));
        base["metadata"] = y("{name: web, finalizers: [a], ownerReferences: [{uid: u0}]}");
        patch["metadata"] = y("{name: web, finalizers: [b, a], ownerReferences: [{uid: u1}]}");
        differential("ports", &base, &patch);
    }

    #[test]
    fn kubectl_cron_job() {
        let base = "
            tolerations: [{key: a, operator: Exists}]
            containers:
              - {name: job, image: job, args: [a, b], env: [{name: A, value: '1'}, {name: B}]}";
        let patch = "
            tolerations: [{key: b, operator: Exists}]
            containers:
              - {name: job, args: [c], env: [{name: C}, {name: A, value: null, valueFrom: {}}]}";
        differential(
            "cronjob",
            &object("CronJob", base),
            &object("CronJob", patch),
        );
    }

    #[test]
    fn kubectl_pod_directives() {
        let base = "
            securityContext: {runAsUser: 1, sysctls: [{name: a, value: '1'}]}
            initContainers: [{name: i1, image: i}]
            containers:
              - {name: c, image: c, resources: {limits: {cpu: '1'}}}
              - {name: d, image: d, env: [{name: A, value: '1'}]}
            volumes: [{name: v, emptyDir: {}}]";
        let patch = "
            $setElementOrder/containers: [{name: d}, {name: c}]
            securityContext: {$patch: replace, runAsGroup: 2, sysctls: [{name: b, value: '2'}]}
            initContainers:
              - $patch: replace
              - {name: i2, image: null, env: [{name: X, value: null}]}
            containers:
              - {name: c, resources: {$patch: replace, requests: {cpu: '2'}}}
              - {name: d, $patch: replace, image: other}
              - {name: e, image: e, resources: {limits: {cpu: null}}}
            volumes: [{$patch: delete}]";
        differential("pod", &object("Pod", base), &object("Pod", patch));
    }

    #[test]
    fn kubectl_daemon_set_pod_lists() {
        let base = "
            hostAliases: [{ip: 1.1.1.1, hostnames: [a]}]
            imagePullSecrets: [{name: s1}]
            topologySpreadConstraints:
              - {topologyKey: zone, whenUnsatisfiable: DoNotSchedule, maxSkew: 1}
              - {topologyKey: host, whenUnsatisfiable: DoNotSchedule, maxSkew: 1}
            ephemeralContainers:
              - {name: e, ports: [{containerPort: 1}], volumeDevices: [{devicePath: /a}]}
            containers: [{name: c, resizePolicy: [{resourceName: cpu}]}]";
        let patch = "
            hostAliases: [{ip: 2.2.2.2, hostnames: [b]}, {ip: 1.1.1.1, hostnames: [c]}]
            imagePullSecrets: [{name: s2}]
            topologySpreadConstraints:
              - {topologyKey: host, whenUnsatisfiable: DoNotSchedule, maxSkew: 3}
              - {topologyKey: rack, whenUnsatisfiable: DoNotSchedule, maxSkew: 1}
            ephemeralContainers:
              - {name: e, ports: [{containerPort: 2}], volumeDevices: [{devicePath: /b}]}
            containers: [{name: c, resizePolicy: [{resourceName: memory}]}]";
        differential(
            "daemonset",
            &object("DaemonSet", base),
            &object("DaemonSet", patch),
        );
    }

    #[test]
    fn kubectl_custom_resource_lists_are_replaced() {
        let base =
            "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, finalizers: [a]},
            spec: {items: [{name: a, v: 1}], template: {spec: {containers: [{name: c}]}}}}";
        let patch =
            "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, finalizers: [b]},
            spec: {items: [{name: b}], template: {spec: {containers: [{name: d}]}}, x: {y: null}}}";
        differential("widget", &y(base), &y(patch));
    }

    #[test]
    fn kubectl_fails_on_type_mismatches_too() {
        for (name, field) in [("scalar", "{selector: 1}"), ("list", "{replicas: [1]}")] {
            let mut patch = object("StatefulSet", "{}");
            patch["spec"] = y(field);
            let Some(kubectl) = kustomize(name, &agent(), &patch) else {
                return;
            };
            assert!(kubectl.is_err(), "{name}: kubectl merged it");
            assert!(merge(&agent(), &patch).is_err(), "{name}");
        }
    }
}
