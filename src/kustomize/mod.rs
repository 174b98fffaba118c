//! What basepress knows of Kustomize: a build that makes the objects
//! `kubectl kustomize` (Kustomize v5.5) makes, for the fields a base or a
//! documented overlay may use, with the source position of every field.
//!
//! [`build`] reads a kustomization through [`Files`] and returns the built
//! [`Object`]s in Kustomize's output order, or the [`Error`]s that make
//! Kustomize refuse the build. Each error names a rule of
//! [`crate::diagnostics::rule`] and a location. Where basepress is stricter
//! than Kustomize, it says so with a rule of its own: a patch whose
//! `target` selects nothing (`kustomize-patch-target-unmatched`), and
//! fields basepress does not build (`kustomize-unsupported`).

mod build;
mod cache;
pub mod files;
mod generate;
mod goregex;
mod kustomization;
mod nameref;
mod patch;
pub mod prov;
mod replace;
mod resource;
mod schema;
mod select;
pub mod smp;
mod transform;

pub use cache::Cache;

/// The rules a Kustomize build raises: declared once, by the build stage
/// and by the check that builds the overlays pages show.
pub const RULES: &[&Rule] = &[
    rule::KUSTOMIZE_FILE_MISSING,
    rule::KUSTOMIZE_DUPLICATE_RESOURCE,
    rule::KUSTOMIZE_PATCH_NO_TARGET,
    rule::KUSTOMIZE_PATCH_TARGET_UNMATCHED,
    rule::KUSTOMIZE_PATCH_INVALID,
    rule::KUSTOMIZE_GENERATOR_INVALID,
    rule::KUSTOMIZE_GENERATOR_BASE_MISSING,
    rule::KUSTOMIZE_REPLICAS_NO_TARGET,
    rule::KUSTOMIZE_UNSUPPORTED,
    rule::KUSTOMIZE_BUILD_INVALID,
    rule::KUSTOMIZE_GENERATOR_KEY_INVALID,
];
pub use build::KUSTOMIZATION_FILES;
pub use files::{Files, MemFiles, SourceFile};

use crate::diagnostics::{rule, Diagnostic, Location, Rule};
use serde_json::Value;

/// The objects a kustomization builds, in Kustomize's output order.
#[derive(Debug, Clone)]
pub struct Build {
    pub objects: Vec<Object>,
}

/// One built object, and where each of its fields came from.
#[derive(Debug, Clone)]
pub struct Object {
    pub value: Value,
    prov: prov::Prov,
}

impl Object {
    fn str_at(&self, pointer: &str) -> &str {
        self.value
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    pub fn api_version(&self) -> &str {
        self.str_at("/apiVersion")
    }

    pub fn kind(&self) -> &str {
        self.str_at("/kind")
    }

    pub fn name(&self) -> &str {
        self.str_at("/metadata/name")
    }

    pub fn namespace(&self) -> Option<&str> {
        self.value
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
    }

    /// Where the node at a JSON pointer (or its nearest ancestor the
    /// object has) came from: the resource file, the patch, the generator
    /// literal or env line, the kustomization field that set it.
    pub fn locate(&self, pointer: &str) -> Location {
        self.prov.nearest(pointer).at.location()
    }
}

/// Why Kustomize would refuse a build.
#[derive(Debug, Clone)]
pub struct Error {
    pub rule: &'static Rule,
    pub message: String,
    pub location: Location,
    pub help: Option<String>,
}

impl Error {
    /// The finding this error makes.
    pub fn diagnostic(&self) -> Diagnostic {
        let d = Diagnostic::new(self.rule, self.message.clone()).at(self.location.clone());
        match &self.help {
            Some(h) => d.help(h.clone()),
            None => d,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}]", self.message, self.rule.id)
    }
}

/// Builds the kustomization in folder `dir` ("" for the root) of `files`,
/// as `kubectl kustomize` would.
pub fn build(files: &dyn Files, dir: &str) -> Result<Build, Vec<Error>> {
    build_with(files, dir, &mut Cache::default())
}

/// Like [`build`], keeping folder builds in `cache` for the next builds
/// (overlays of the same base build it once).
pub fn build_with(files: &dyn Files, dir: &str, cache: &mut Cache) -> Result<Build, Vec<Error>> {
    build::run(files, dir, cache).map_err(|e| vec![*e])
}

/// JSON pointer of the pod spec in an object of `kind`, for the kinds
/// that run pods and PodTemplate.
pub fn pod_spec_pointer(kind: &str) -> Option<&'static str> {
    match kind {
        "StatefulSet"
        | "Deployment"
        | "DaemonSet"
        | "ReplicaSet"
        | "ReplicationController"
        | "Job" => Some("/spec/template/spec"),
        "CronJob" => Some("/spec/jobTemplate/spec/template/spec"),
        "Pod" => Some("/spec"),
        // Runs no pods itself, but what uses it (a controller, an
        // operator) runs its spec.
        "PodTemplate" => Some("/template/spec"),
        _ => None,
    }
}

/// JSON pointer of the metadata of the pods whose spec [`pod_spec_pointer`]
/// puts at `pod_spec`: `/spec/template/metadata`, a Pod's own `/metadata`.
pub fn pod_metadata_pointer(pod_spec: &str) -> String {
    format!(
        "{}/metadata",
        pod_spec.strip_suffix("/spec").unwrap_or_default()
    )
}

/// A patch's `target` (as written in a kustomization), compiled once to be
/// tried on many built objects.
pub struct Target(select::Compiled);

impl Target {
    /// `None` when `target` is not a valid selector (the build reports
    /// that).
    pub fn new(target: &Value) -> Option<Target> {
        let selector: kustomization::Selector = serde_json::from_value(target.clone()).ok()?;
        select::Compiled::new(&selector).ok().map(Target)
    }

    /// Whether the target picks the built object `object`.
    pub fn selects(&self, object: &Value) -> bool {
        self.0.selects_object(object)
    }
}

/// A volume claim spec inside an object, found by [`claim_specs`].
pub struct ClaimSpec {
    /// JSON pointer of the spec.
    pub pointer: String,
    /// What it is, for messages (`volume claim template`).
    pub what: &'static str,
    /// The claim's name: the object's, a template's, or for an ephemeral
    /// volume the volume's (its claim is named after it).
    pub name: String,
}

/// Every volume claim spec in an object of `kind`: a PersistentVolumeClaim's
/// own, a StatefulSet's `volumeClaimTemplates`, and the claim template of
/// each generic ephemeral volume of a pod spec. The only place that knows
/// where claims live.
pub fn claim_specs(kind: &str, value: &Value) -> Vec<ClaimSpec> {
    let items = |list: &str| {
        value
            .pointer(list)
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
    };
    let name = |v: &Value, pointer: &str| {
        v.pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut out = Vec::new();
    if kind == "PersistentVolumeClaim" {
        out.push(ClaimSpec {
            pointer: "/spec".to_string(),
            what: "volume claim",
            name: name(value, "/metadata/name"),
        });
    }
    if kind == "StatefulSet" {
        for (i, t) in items("/spec/volumeClaimTemplates").iter().enumerate() {
            out.push(ClaimSpec {
                pointer: format!("/spec/volumeClaimTemplates/{i}/spec"),
                what: "volume claim template",
                name: name(t, "/metadata/name"),
            });
        }
    }
    if let Some(pod) = pod_spec_pointer(kind) {
        let volumes = format!("{pod}/volumes");
        for (i, v) in items(&volumes).iter().enumerate() {
            if v.pointer("/ephemeral/volumeClaimTemplate")
                .is_some_and(Value::is_object)
            {
                out.push(ClaimSpec {
                    pointer: format!("{volumes}/{i}/ephemeral/volumeClaimTemplate/spec"),
                    what: "ephemeral volume's claim template",
                    name: name(v, "/name"),
                });
            }
        }
    }
    out
}

/// The pointer, in `patch`, of the node at `pointer` in `merged` (the
/// result of merging `patch` into an object of `kind`), when the patch
/// sets that node. List items are matched by their merge key (containers
/// by name, volumeMounts by mountPath, …), so an item keeps its place in
/// the patch even when the merged list has base items before it.
pub fn patch_pointer(kind: &str, merged: &Value, patch: &Value, pointer: &str) -> Option<String> {
    let mut m = merged;
    let mut p = patch;
    let mut names: Vec<String> = Vec::new();
    let mut out = String::new();
    for raw in pointer.split('/').skip(1) {
        let seg = crate::yaml::pointer_key(raw);
        match m {
            Value::Object(_) => {
                m = m.get(&seg)?;
                p = p.get(&seg)?;
                names.push(seg);
                out.push('/');
                out.push_str(raw);
            }
            Value::Array(items) => {
                let i: usize = seg.parse().ok()?;
                let item = items.get(i)?;
                let path: Vec<&str> = names.iter().map(String::as_str).collect();
                let j = match smp::merge_key(kind, &path) {
                    Some(key) => {
                        let wanted = item.get(key)?;
                        p.as_array()?
                            .iter()
                            .position(|x| x.get(key) == Some(wanted))?
                    }
                    None => i,
                };
                p = p.get(j)?;
                m = item;
                out.push_str(&format!("/{j}"));
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_follow_merge_keys() {
        let merged = json!({"spec": {"template": {"spec": {
            "containers": [
                {"name": "agent", "volumeMounts": [{"mountPath": "/tmp"}, {"mountPath": "/token"}]}
            ],
            "volumes": [{"name": "token"}, {"name": "tmp"}]
        }}}});
        let patch = json!({"spec": {"template": {"spec": {
            "volumes": [{"name": "token"}],
            "containers": [{"name": "agent", "volumeMounts": [{"mountPath": "/token"}]}]
        }}}});
        let k = "StatefulSet";
        assert_eq!(
            patch_pointer(k, &merged, &patch, "/spec/template/spec/volumes/0").as_deref(),
            Some("/spec/template/spec/volumes/0")
        );
        assert_eq!(
            patch_pointer(
                k,
                &merged,
                &patch,
                "/spec/template/spec/containers/0/volumeMounts/1/mountPath"
            )
            .as_deref(),
            Some("/spec/template/spec/containers/0/volumeMounts/0/mountPath")
        );
        assert_eq!(
            patch_pointer(k, &merged, &patch, "/spec/template/spec/volumes/1"),
            None
        );
        assert_eq!(
            patch_pointer(
                k,
                &merged,
                &patch,
                "/spec/template/spec/containers/0/volumeMounts/0"
            ),
            None
        );
    }
}
