//! A resource during the build: its value, provenance, and the identities
//! it had before (Kustomize matches patches, generators and references by
//! any of them).

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

use super::prov::Prov;
use super::schema::{self, group_version};

/// Group, version, kind, name and namespace of a resource.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Id {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

fn str_at<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl Id {
    pub fn of(value: &Value) -> Id {
        let (group, version) = group_version(str_at(value, "/apiVersion"));
        Id {
            group: group.to_string(),
            version: version.to_string(),
            kind: str_at(value, "/kind").to_string(),
            name: str_at(value, "/metadata/name").to_string(),
            namespace: str_at(value, "/metadata/namespace").to_string(),
        }
    }

    pub fn is_cluster_scoped(&self) -> bool {
        schema::is_cluster_scoped(&self.group, &self.version, &self.kind)
    }

    /// The namespace for comparisons: none for cluster-scoped kinds, and
    /// `default` for a namespaced one without a namespace.
    pub fn effective_namespace(&self) -> &str {
        if self.is_cluster_scoped() {
            "~cluster"
        } else if self.namespace.is_empty() {
            "default"
        } else {
            &self.namespace
        }
    }

    /// The id with its effective namespace, so that `==` and hashing
    /// agree with [`Id::equals`].
    pub fn comparable(mut self) -> Id {
        self.namespace = self.effective_namespace().to_string();
        self
    }

    pub fn same_gvk(&self, o: &Id) -> bool {
        self.group == o.group && self.version == o.version && self.kind == o.kind
    }

    /// Kustomize's equality of ids: same group, version, kind, name and
    /// effective namespace.
    pub fn equals(&self, o: &Id) -> bool {
        self.same_gvk(o)
            && self.name == o.name
            && self.effective_namespace() == o.effective_namespace()
    }

    /// Whether a group/version/kind selector (empty fields match
    /// anything) selects this id.
    pub fn selected_by(&self, group: &str, version: &str, kind: &str) -> bool {
        (group.is_empty() || group == self.group)
            && (version.is_empty() || version == self.version)
            && (kind.is_empty() || kind == self.kind)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let api = if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        };
        write!(f, "{} {} {}", api, self.kind, self.name)?;
        if !self.namespace.is_empty() {
            write!(f, " in namespace {}", self.namespace)?;
        }
        Ok(())
    }
}

/// A resource being built.
#[derive(Debug, Clone)]
pub struct Res {
    pub value: Value,
    pub prov: Prov,
    /// The ids it had before renames, oldest first.
    pub prev: Vec<Id>,
    /// Name prefixes and suffixes applied, innermost first.
    pub prefixes: Vec<String>,
    pub suffixes: Vec<String>,
    /// Whether the content hash goes into its name (generated objects).
    pub needs_hash: bool,
}

impl Res {
    pub fn new(value: Value, prov: Prov) -> Self {
        Res {
            value,
            prov,
            prev: Vec::new(),
            prefixes: Vec::new(),
            suffixes: Vec::new(),
            needs_hash: false,
        }
    }

    pub fn cur(&self) -> Id {
        Id::of(&self.value)
    }

    /// The id it was first accumulated with.
    pub fn org(&self) -> Id {
        self.prev.first().cloned().unwrap_or_else(|| self.cur())
    }

    /// Its previous ids and its current one.
    pub fn any_ids(&self) -> Vec<Id> {
        let mut ids = self.prev.clone();
        ids.push(self.cur());
        ids
    }

    /// Whether its current id, or an earlier one, equals `id` (without
    /// building the current id).
    pub fn any_id_equals(&self, id: &Id) -> bool {
        self.prev.iter().any(|p| p.equals(id)) || self.cur_equals(id)
    }

    /// Whether its current id equals `id`.
    pub fn cur_equals(&self, id: &Id) -> bool {
        let v = &self.value;
        let (group, version) = group_version(str_at(v, "/apiVersion"));
        if group != id.group || version != id.version || str_at(v, "/kind") != id.kind {
            return false;
        }
        if str_at(v, "/metadata/name") != id.name {
            return false;
        }
        let ns = str_at(v, "/metadata/namespace");
        // Same group and kind, so both are cluster-scoped or neither is.
        id.is_cluster_scoped()
            || (if ns.is_empty() { "default" } else { ns }) == id.effective_namespace()
    }

    /// Records the current id before a change of name, namespace or kind.
    pub fn store_prev(&mut self) {
        let cur = self.cur();
        self.prev.push(cur);
    }

    pub fn kind(&self) -> &str {
        str_at(&self.value, "/kind")
    }

    pub fn name(&self) -> &str {
        str_at(&self.value, "/metadata/name")
    }
}

/// Kinds Kustomize puts first, in this order, and last.
const ORDER_FIRST: &[&str] = &[
    "Namespace",
    "ResourceQuota",
    "StorageClass",
    "CustomResourceDefinition",
    "ServiceAccount",
    "PodSecurityPolicy",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
    "Endpoints",
    "Service",
    "LimitRange",
    "PriorityClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];
const ORDER_LAST: &[&str] = &[
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

fn kind_rank(kind: &str) -> i64 {
    if let Some(i) = ORDER_FIRST.iter().position(|k| *k == kind) {
        return i as i64 - ORDER_FIRST.len() as i64;
    }
    if let Some(i) = ORDER_LAST.iter().position(|k| *k == kind) {
        return 1 + i as i64;
    }
    0
}

fn gvk_key(id: &Id) -> String {
    let or = |s: &str, d: &str| {
        if s.is_empty() {
            d.to_string()
        } else {
            s.to_string()
        }
    };
    format!(
        "{}_{}_{}",
        or(&id.group, "~G"),
        or(&id.version, "~V"),
        or(&id.kind, "~K")
    )
}

/// Kustomize's default ("legacy") output order: by kind rank, then
/// group/version/kind, then namespace and name.
pub fn legacy_order(a: &Id, b: &Id) -> Ordering {
    if !a.same_gvk(b) {
        let (ra, rb) = (kind_rank(&a.kind), kind_rank(&b.kind));
        if ra != rb {
            return ra.cmp(&rb);
        }
        let (ka, kb) = (gvk_key(a), gvk_key(b));
        if a.kind == "Namespace"
            && b.kind == "Namespace"
            && (a.group.is_empty() || b.group.is_empty())
        {
            return kb.cmp(&ka);
        }
        return ka.cmp(&kb);
    }
    let or = |s: &str, d: &'static str| {
        if s.is_empty() {
            d.to_string()
        } else {
            s.to_string()
        }
    };
    // One string, as Kustomize compares ids: `team-b|a` comes before
    // `team|z` (`-` sorts before `|`).
    let key = |id: &Id| format!("{}|{}", or(&id.namespace, "~X"), or(&id.name, "~N"));
    key(a).cmp(&key(b))
}
