//! Every manifest of a base against its typed Kubernetes API: unknown
//! fields, values of the wrong type and missing required fields are errors
//! naming their path.
//!
//! Required fields come from k8s-openapi, which makes a property a plain
//! (non-`Option`) field exactly when the Kubernetes OpenAPI lists it as
//! `required`: such a field is always serialized, so an object read into
//! its type and written back has every required field, and the keys it
//! gains are the ones the manifest lacks. A few requirements are not in
//! the OpenAPI but in the API server's validation (`REQUIRED_BY_VALIDATION`).

use super::{Context, Subject};
use crate::diagnostics::{rule, Diagnostic, Rule};
use crate::yaml::{pointer_segment, Value};
use k8s_openapi::api;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// One step of a path into a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A JSON pointer (`/spec/template`) for positions.
pub fn pointer(path: &[Segment]) -> String {
    path.iter()
        .map(|s| match s {
            Segment::Key(k) => format!("/{}", pointer_segment(k)),
            Segment::Index(i) => format!("/{i}"),
        })
        .collect()
}

/// A path as people read it: `spec.template.spec.containers[agent].llamas`,
/// naming list items by their `name` where they have one.
pub fn display_path(value: &Value, path: &[Segment]) -> String {
    let mut out = String::new();
    let mut node = Some(value);
    for s in path {
        match s {
            Segment::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
                node = node.and_then(|n| n.get(k));
            }
            Segment::Index(i) => {
                let item = node.and_then(|n| n.get(*i));
                match item.and_then(|n| n.get("name")).and_then(Value::as_str) {
                    Some(name) => out.push_str(&format!("[{name}]")),
                    None => out.push_str(&format!("[{i}]")),
                }
                node = item;
            }
        }
    }
    out
}

fn ignored_path(path: &serde_ignored::Path) -> Vec<Segment> {
    use serde_ignored::Path;
    let mut out = Vec::new();
    let mut cur = path;
    loop {
        match cur {
            Path::Root => break,
            Path::Seq { parent, index } => {
                out.push(Segment::Index(*index));
                cur = parent;
            }
            Path::Map { parent, key } => {
                out.push(Segment::Key(key.clone()));
                cur = parent;
            }
            Path::Some { parent }
            | Path::NewtypeStruct { parent }
            | Path::NewtypeVariant { parent } => cur = parent,
        }
    }
    out.reverse();
    out
}

fn error_path(path: &serde_path_to_error::Path) -> Vec<Segment> {
    use serde_path_to_error::Segment as S;
    path.iter()
        .filter_map(|s| match s {
            S::Seq { index } => Some(Segment::Index(*index)),
            S::Map { key } => Some(Segment::Key(key.clone())),
            S::Enum { variant } => Some(Segment::Key(variant.clone())),
            S::Unknown => None,
        })
        .collect()
}

/// A problem found by deserializing a manifest into its API type.
#[derive(Debug)]
pub enum Problem {
    UnknownField(Vec<Segment>),
    WrongType(Vec<Segment>, String),
    /// A required field is missing (the path of the field), or an item
    /// list the API server needs non-empty is empty (the path of the
    /// list); the text says which requirement it is.
    Missing(Vec<Segment>, String),
    /// A value the API server's validation refuses (a volume mount naming
    /// no volume of its pod); the text says why.
    Invalid(Vec<Segment>, String),
}

/// The keys `written` (the object read into its type and serialized
/// again) has and `read` lacks: the required fields `read` leaves out.
/// `apiVersion` and `kind` are written for nested objects of resource
/// types too (a claim template) without being required there.
fn gained(read: &Value, written: &Value, path: &mut Vec<Segment>, out: &mut Vec<Problem>) {
    match (read, written) {
        (Value::Object(r), Value::Object(w)) => {
            for (k, wv) in w {
                if k == "apiVersion" || k == "kind" {
                    continue;
                }
                path.push(Segment::Key(k.clone()));
                match r.get(k) {
                    None | Some(Value::Null) => out.push(Problem::Missing(
                        path.clone(),
                        "a required property of its Kubernetes OpenAPI schema".to_string(),
                    )),
                    Some(rv) => gained(rv, wv, path, out),
                }
                path.pop();
            }
        }
        (Value::Array(r), Value::Array(w)) if r.len() == w.len() => {
            for (i, (rv, wv)) in r.iter().zip(w).enumerate() {
                path.push(Segment::Index(i));
                gained(rv, wv, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Splits a JSON pointer into segments (numbers are list indexes).
fn segments_of(pointer: &str) -> Vec<Segment> {
    pointer
        .split('/')
        .skip(1)
        .map(|s| {
            let s = crate::yaml::pointer_key(s);
            match s.parse::<usize>() {
                Ok(i) => Segment::Index(i),
                Err(_) => Segment::Key(s),
            }
        })
        .collect()
}

/// Requirements of the API server's validation
/// (k8s.io/kubernetes pkg/apis/core/validation) that the OpenAPI schema
/// does not state, that `value` (an object of `kind`) misses.
fn validation_problems(kind: &str, value: &Value) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut need = |ptr: String, what: String| {
        let empty = match value.pointer(&ptr) {
            None | Some(Value::Null) => true,
            Some(Value::Array(a)) => a.is_empty(),
            Some(Value::String(s)) => s.is_empty(),
            Some(_) => false,
        };
        if empty {
            out.push(Problem::Missing(segments_of(&ptr), what));
        }
    };
    // ValidatePodSpec: "must have at least one container" (a missing list
    // is a missing required field).
    if let Some(pod) = crate::kustomize::pod_spec_pointer(kind) {
        let ptr = format!("{pod}/containers");
        if value.pointer(&ptr).is_some() {
            need(ptr, "a pod needs at least one container".to_string());
        }
    }
    // ValidatePersistentVolumeClaimSpec: "at least 1 access mode is
    // required" and "storage request is required", wherever a claim is.
    for claim in crate::kustomize::claim_specs(kind, value) {
        let (at, what) = (&claim.pointer, claim.what);
        need(
            format!("{at}/accessModes"),
            format!("a {what} needs at least one access mode"),
        );
        need(
            format!("{at}/resources/requests/storage"),
            format!("a {what} needs a storage request"),
        );
    }
    if let Some(pod) = crate::kustomize::pod_spec_pointer(kind) {
        out.extend(unknown_volumes(value, pod));
        out.extend(repeated_names(value, pod));
    }
    out
}

/// ValidatePodSpec: the names of a pod's containers (init and ephemeral
/// ones too) are unique, and so are its volumes' and each container's
/// port names, or the API server answers "Duplicate value". A JSON patch
/// that appends a container `agent` beside the base's makes one.
fn repeated_names(value: &Value, pod: &str) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut unique = |lists: Vec<(String, Option<&Value>)>, name: &str, what: &str| {
        let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for (ptr, list) in lists {
            for (i, item) in list
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                // An unnamed port is no name (and a container without
                // one is a finding of its own).
                let Some(n) = item.get(name).and_then(Value::as_str) else {
                    continue;
                };
                if !n.is_empty() && !seen.insert(n) {
                    out.push(Problem::Invalid(
                        segments_of(&format!("{ptr}/{i}/{name}")),
                        format!("two {what} are named `{n}`; the API server refuses the second"),
                    ));
                }
            }
        }
    };
    let list = |field: &str| {
        let ptr = format!("{pod}/{field}");
        let v = value.pointer(&ptr);
        (ptr, v)
    };
    unique(
        vec![
            list("initContainers"),
            list("containers"),
            list("ephemeralContainers"),
        ],
        "name",
        "containers of the pod",
    );
    unique(vec![list("volumes")], "name", "volumes of the pod");
    for field in ["initContainers", "containers"] {
        let (ptr, containers) = list(field);
        for (i, c) in containers
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let ports = format!("{ptr}/{i}/ports");
            let container = c.get("name").and_then(Value::as_str).unwrap_or("?");
            unique(
                vec![(ports, c.get("ports"))],
                "name",
                &format!("ports of container `{container}`"),
            );
        }
    }
    out
}

/// ValidateVolumeMounts and ValidateVolumeDevices: a container's mount
/// or device names a volume of its pod (or, in a StatefulSet, a claim
/// template), or the API server answers "Not found".
fn unknown_volumes(value: &Value, pod: &str) -> Vec<Problem> {
    let names = |list: Option<&Value>, name: &str| -> Vec<String> {
        list.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.pointer(name).and_then(Value::as_str))
            .map(str::to_string)
            .collect()
    };
    let mut volumes = names(value.pointer(&format!("{pod}/volumes")), "/name");
    volumes.extend(names(
        value.pointer("/spec/volumeClaimTemplates"),
        "/metadata/name",
    ));
    let mut out = Vec::new();
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        let containers = value
            .pointer(&format!("{pod}/{list}"))
            .and_then(Value::as_array);
        for (i, c) in containers.into_iter().flatten().enumerate() {
            for field in ["volumeMounts", "volumeDevices"] {
                let mounts = c.get(field).and_then(Value::as_array);
                for (j, m) in mounts.into_iter().flatten().enumerate() {
                    let Some(name) = m.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    if volumes.iter().any(|v| v == name) {
                        continue;
                    }
                    let container = c.get("name").and_then(Value::as_str).unwrap_or("?");
                    let known = if volumes.is_empty() {
                        "the pod has no volumes".to_string()
                    } else {
                        format!("its volumes: {}", volumes.join(", "))
                    };
                    out.push(Problem::Invalid(
                        segments_of(&format!("{pod}/{list}/{i}/{field}/{j}/name")),
                        format!("container `{container}` mounts volume `{name}`, which the pod does not have ({known})"),
                    ));
                }
            }
        }
    }
    out
}

/// Deserializes `value` as `T`, collecting unknown fields and the first
/// type error.
pub fn typed<T: DeserializeOwned>(value: &Value) -> (Option<T>, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut unknown = Vec::new();
    let mut record = |p: serde_ignored::Path| unknown.push(ignored_path(&p));
    let de = serde_ignored::Deserializer::new(value, &mut record);
    let result: Result<T, _> = serde_path_to_error::deserialize(de);
    problems.extend(unknown.into_iter().map(Problem::UnknownField));
    match result {
        Ok(t) => (Some(t), problems),
        Err(e) => {
            let path = error_path(e.path());
            problems.push(Problem::WrongType(path, e.into_inner().to_string()));
            (None, problems)
        }
    }
}

/// Checks `value` against the API type its apiVersion and kind name;
/// `None` when basepress does not know that type.
pub fn problems(api_version: &str, kind: &str, value: &Value) -> Option<Vec<Problem>> {
    fn p<T: DeserializeOwned + Serialize>(v: &Value) -> Vec<Problem> {
        let (t, mut problems) = typed::<T>(v);
        if let Some(written) = t.and_then(|t| serde_json::to_value(t).ok()) {
            gained(v, &written, &mut Vec::new(), &mut problems);
        }
        problems
    }
    let mut found = match (api_version, kind) {
        ("v1", "Namespace") => p::<api::core::v1::Namespace>(value),
        ("v1", "ConfigMap") => p::<api::core::v1::ConfigMap>(value),
        ("v1", "Secret") => p::<api::core::v1::Secret>(value),
        ("v1", "Service") => p::<api::core::v1::Service>(value),
        ("v1", "ServiceAccount") => p::<api::core::v1::ServiceAccount>(value),
        ("v1", "PersistentVolumeClaim") => p::<api::core::v1::PersistentVolumeClaim>(value),
        ("v1", "Pod") => p::<api::core::v1::Pod>(value),
        ("v1", "LimitRange") => p::<api::core::v1::LimitRange>(value),
        ("v1", "ResourceQuota") => p::<api::core::v1::ResourceQuota>(value),
        ("apps/v1", "StatefulSet") => p::<api::apps::v1::StatefulSet>(value),
        ("apps/v1", "Deployment") => p::<api::apps::v1::Deployment>(value),
        ("apps/v1", "DaemonSet") => p::<api::apps::v1::DaemonSet>(value),
        ("apps/v1", "ReplicaSet") => p::<api::apps::v1::ReplicaSet>(value),
        ("v1", "ReplicationController") => p::<api::core::v1::ReplicationController>(value),
        ("v1", "PodTemplate") => p::<api::core::v1::PodTemplate>(value),
        ("batch/v1", "Job") => p::<api::batch::v1::Job>(value),
        ("batch/v1", "CronJob") => p::<api::batch::v1::CronJob>(value),
        ("networking.k8s.io/v1", "NetworkPolicy") => p::<api::networking::v1::NetworkPolicy>(value),
        ("policy/v1", "PodDisruptionBudget") => p::<api::policy::v1::PodDisruptionBudget>(value),
        ("rbac.authorization.k8s.io/v1", "Role") => p::<api::rbac::v1::Role>(value),
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => p::<api::rbac::v1::RoleBinding>(value),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => p::<api::rbac::v1::ClusterRole>(value),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            p::<api::rbac::v1::ClusterRoleBinding>(value)
        }
        _ => return None,
    };
    found.extend(validation_problems(kind, value));
    Some(found)
}

/// The rules of [`check`].
pub const RULES: &[&Rule] = &[
    rule::MANIFEST_KIND_UNCHECKED,
    rule::MANIFEST_UNKNOWN_FIELD,
    rule::MANIFEST_TYPE_INVALID,
    rule::MANIFEST_REQUIRED_FIELD_MISSING,
    rule::MANIFEST_VALUE_INVALID,
];

/// Every object a build made against its API type.
pub fn check(_ctx: &Context, subject: &Subject) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for o in subject.objects {
        out.extend(object_findings(&o.value, |pointer| o.locate(pointer)));
    }
    out
}

/// The findings of one object (`value`) against its API type, each
/// where `locate` says the node at a JSON pointer is written: an object
/// of a build, or one a page shows as written.
pub(super) fn object_findings(
    value: &Value,
    locate: impl Fn(&str) -> crate::diagnostics::Location,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let (kind, name) = (
        value["kind"].as_str().unwrap_or_default(),
        value["metadata"]["name"].as_str().unwrap_or_default(),
    );
    let api_version = value["apiVersion"].as_str().unwrap_or_default();
    let Some(problems) = problems(api_version, kind, value) else {
        out.push(
            Diagnostic::new(
                rule::MANIFEST_KIND_UNCHECKED,
                format!(
                    "{kind} `{name}` ({api_version}) is not a type basepress knows, so its fields are not checked"
                ),
            )
            .at(locate("/kind")),
        );
        return out;
    };
    for problem in problems {
        out.push(match problem {
            Problem::UnknownField(path) => Diagnostic::new(
                rule::MANIFEST_UNKNOWN_FIELD,
                format!(
                    "{kind} `{name}` has no field `{}`",
                    display_path(value, &path)
                ),
            )
            .at(locate(&pointer(&path))),
            Problem::WrongType(path, message) => Diagnostic::new(
                rule::MANIFEST_TYPE_INVALID,
                format!(
                    "{kind} `{name}`: `{}`: {message}",
                    display_path(value, &path)
                ),
            )
            .at(locate(&pointer(&path))),
            Problem::Invalid(path, why) => Diagnostic::new(
                rule::MANIFEST_VALUE_INVALID,
                format!("{kind} `{name}`: {why}, so the API server rejects it"),
            )
            .at(locate(&pointer(&path))),
            Problem::Missing(path, what) => {
                // The field is not there: point at what holds it.
                let holder = &path[..path.len().saturating_sub(1)];
                Diagnostic::new(
                    rule::MANIFEST_REQUIRED_FIELD_MISSING,
                    format!(
                        "{kind} `{name}` lacks `{}` ({what}), so the API server rejects it",
                        display_path(value, &path)
                    ),
                )
                .at(locate(&pointer(holder)))
            }
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml;

    #[test]
    fn unknown_fields_and_wrong_types_have_paths() {
        let v: Value = yaml::from_str(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: a}\nspec:\n  selector: {}\n  template:\n    spec:\n      containers:\n        - name: agent\n          llamas: true\n",
        )
        .unwrap();
        let ps = problems("apps/v1", "StatefulSet", &v).unwrap();
        assert_eq!(ps.len(), 1);
        let Problem::UnknownField(path) = &ps[0] else {
            panic!("{ps:?}")
        };
        assert_eq!(
            display_path(&v, path),
            "spec.template.spec.containers[agent].llamas"
        );
        assert_eq!(pointer(path), "/spec/template/spec/containers/0/llamas");

        let v: Value = yaml::from_str(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: a}\nspec:\n  replicas: many\n  selector: {}\n  template: {}\n",
        )
        .unwrap();
        let ps = problems("apps/v1", "StatefulSet", &v).unwrap();
        assert!(
            matches!(&ps[..], [Problem::WrongType(p, m)] if pointer(p) == "/spec/replicas" && m.contains("invalid type")),
            "{ps:?}"
        );
        assert!(problems("example.com/v1", "Thing", &v).is_none());
    }

    #[test]
    fn required_fields_from_the_openapi_and_validation() {
        let v: Value = yaml::from_str(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n      containers: []\n      volumes:\n        - emptyDir: {}\n  volumeClaimTemplates:\n    - metadata: {name: id}\n      spec:\n        resources: {requests: {cpu: 1}}\n",
        )
        .unwrap();
        let ps = problems("apps/v1", "StatefulSet", &v).unwrap();
        let missing: Vec<String> = ps
            .iter()
            .filter_map(|p| match p {
                Problem::Missing(path, _) => Some(pointer(path)),
                _ => None,
            })
            .collect();
        assert_eq!(
            missing,
            [
                "/spec/selector",
                "/spec/template/spec/volumes/0/name",
                "/spec/template/spec/containers",
                "/spec/volumeClaimTemplates/0/spec/accessModes",
                "/spec/volumeClaimTemplates/0/spec/resources/requests/storage",
            ],
            "{ps:?}"
        );
    }

    #[test]
    fn mounts_name_a_volume_or_a_claim_template_of_their_pod() {
        let v: Value = yaml::from_str(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: a}\nspec:\n  selector: {}\n  template:\n    spec:\n      initContainers:\n        - {name: i, image: x, volumeMounts: [{name: tmp, mountPath: /t}, {name: cach, mountPath: /c}]}\n      containers:\n        - {name: c, image: x, volumeMounts: [{name: id, mountPath: /id}], volumeDevices: [{name: raw, devicePath: /dev/x}]}\n      volumes:\n        - {name: tmp, emptyDir: {}}\n  volumeClaimTemplates:\n    - metadata: {name: id}\n      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n",
        )
        .unwrap();
        let invalid: Vec<String> = problems("apps/v1", "StatefulSet", &v)
            .unwrap()
            .iter()
            .filter_map(|p| match p {
                Problem::Invalid(path, _) => Some(pointer(path)),
                _ => None,
            })
            .collect();
        assert_eq!(
            invalid,
            [
                "/spec/template/spec/initContainers/0/volumeMounts/1/name",
                "/spec/template/spec/containers/0/volumeDevices/0/name",
            ]
        );
    }
}
