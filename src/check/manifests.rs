//! Every manifest of a base against its typed Kubernetes API: unknown
//! fields and values of the wrong type are errors naming their path.

use super::Context;
use crate::diagnostics::{rule, Diagnostic, Rule};
use crate::model::site::Base;
use crate::yaml::{pointer_segment, Value};
use k8s_openapi::api;
use serde::de::DeserializeOwned;

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
    fn p<T: DeserializeOwned>(v: &Value) -> Vec<Problem> {
        typed::<T>(v).1
    }
    Some(match (api_version, kind) {
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
    })
}

/// The rules of [`check`].
pub const RULES: &[&Rule] = &[
    rule::MANIFEST_KIND_UNCHECKED,
    rule::MANIFEST_UNKNOWN_FIELD,
    rule::MANIFEST_TYPE_INVALID,
];

/// Every object of `base` against its API type.
pub fn check(_ctx: &Context, base: &Base) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for m in &base.manifests {
        let Some(problems) = problems(&m.api_version, &m.kind, &m.value) else {
            out.push(
                Diagnostic::new(
                    rule::MANIFEST_KIND_UNCHECKED,
                    format!(
                        "{} `{}` ({}) is not a type basepress knows, so its fields are not checked",
                        m.kind, m.name, m.api_version
                    ),
                )
                .at(m.locate("/kind")),
            );
            continue;
        };
        for problem in problems {
            out.push(match problem {
                Problem::UnknownField(path) => Diagnostic::new(
                    rule::MANIFEST_UNKNOWN_FIELD,
                    format!(
                        "{} `{}` has no field `{}`",
                        m.kind,
                        m.name,
                        display_path(&m.value, &path)
                    ),
                )
                .at(m.locate(&pointer(&path))),
                Problem::WrongType(path, message) => Diagnostic::new(
                    rule::MANIFEST_TYPE_INVALID,
                    format!(
                        "{} `{}`: `{}`: {message}",
                        m.kind,
                        m.name,
                        display_path(&m.value, &path)
                    ),
                )
                .at(m.locate(&pointer(&path))),
            });
        }
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
}
