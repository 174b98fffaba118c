//! Name references: when a build renames an object (a prefix, a suffix,
//! the content hash of a generated ConfigMap), the fields of other
//! objects that name it follow, as Kustomize's nameReference rules say
//! for the built-in kinds.

use serde_json::Value;

use super::prov::Prov;
use super::resource::{Id, Res};

/// A field that names an object of kind `target`: in objects of
/// `referrer` kind (group and version empty: any), at `path`.
struct Rule {
    target: (&'static str, &'static str),
    referrer: (&'static str, &'static str, &'static str),
    /// The path, in two parts (a pod spec's place, and the field in it).
    path: (&'static str, &'static str),
}

/// Where each kind with a pod spec keeps it.
const POD_SPECS: &[(&str, &str, &str)] = &[
    ("v1", "Pod", "spec"),
    ("", "PodTemplate", "template/spec"),
    ("", "Deployment", "spec/template/spec"),
    ("", "ReplicaSet", "spec/template/spec"),
    ("", "DaemonSet", "spec/template/spec"),
    ("", "StatefulSet", "spec/template/spec"),
    ("", "Job", "spec/template/spec"),
    ("", "CronJob", "spec/jobTemplate/spec/template/spec"),
];

/// Where a pod spec names ConfigMaps.
const POD_CONFIG_MAP_REFS: &[&str] = &[
    "containers/env/valueFrom/configMapKeyRef/name",
    "initContainers/env/valueFrom/configMapKeyRef/name",
    "containers/envFrom/configMapRef/name",
    "initContainers/envFrom/configMapRef/name",
    "volumes/configMap/name",
    "volumes/projected/sources/configMap/name",
];

/// Where a pod spec names Secrets.
const POD_SECRET_REFS: &[&str] = &[
    "containers/env/valueFrom/secretKeyRef/name",
    "initContainers/env/valueFrom/secretKeyRef/name",
    "containers/envFrom/secretRef/name",
    "initContainers/envFrom/secretRef/name",
    "volumes/secret/secretName",
    "volumes/projected/sources/secret/name",
    "imagePullSecrets/name",
];

/// Kinds whose pod spec names a ServiceAccount, claims and a priority
/// class in Kustomize's rules (no ReplicaSet or PodTemplate there, but a
/// ReplicationController).
const POD_SPECS_SA: &[(&str, &str)] = &[
    ("Pod", "spec"),
    ("StatefulSet", "spec/template/spec"),
    ("Deployment", "spec/template/spec"),
    ("ReplicationController", "spec/template/spec"),
    ("CronJob", "spec/jobTemplate/spec/template/spec"),
    ("Job", "spec/template/spec"),
    ("DaemonSet", "spec/template/spec"),
];

fn rules() -> Vec<Rule> {
    let mut out = Vec::new();
    let mut add = |target: (&'static str, &'static str),
                   referrer: (&'static str, &'static str, &'static str),
                   path: (&'static str, &'static str)| {
        out.push(Rule {
            target,
            referrer,
            path,
        })
    };
    for (version, kind, spec) in POD_SPECS {
        let r = ("", *version, *kind);
        for field in POD_CONFIG_MAP_REFS {
            add(("", "ConfigMap"), r, (*spec, field));
        }
        for field in POD_SECRET_REFS {
            add(("", "Secret"), r, (*spec, field));
        }
    }
    for (kind, spec) in POD_SPECS_SA {
        let r = ("", "", *kind);
        add(("", "ServiceAccount"), r, (*spec, "serviceAccountName"));
        add(
            ("", "PersistentVolumeClaim"),
            r,
            (*spec, "volumes/persistentVolumeClaim/claimName"),
        );
        add(
            ("scheduling.k8s.io", "PriorityClass"),
            r,
            (*spec, "priorityClassName"),
        );
    }
    for kind in [
        "Deployment",
        "ReplicationController",
        "ReplicaSet",
        "StatefulSet",
    ] {
        add(
            ("", kind),
            ("", "", "HorizontalPodAutoscaler"),
            ("", "spec/scaleTargetRef/name"),
        );
    }
    for target in ["ConfigMap", "Secret"] {
        for kind in ["Role", "ClusterRole"] {
            add(("", target), ("", "", kind), ("", "rules/resourceNames"));
        }
    }
    add(
        ("", "ConfigMap"),
        ("", "", "Node"),
        ("", "spec/configSource/configMap"),
    );
    add(
        ("", "Secret"),
        ("", "", "Ingress"),
        ("", "spec/tls/secretName"),
    );
    add(
        ("", "Secret"),
        ("", "", "ServiceAccount"),
        ("", "imagePullSecrets/name"),
    );
    for p in [
        "secretName",
        "adminSecretName",
        "userSecretName",
        "secretRef",
    ] {
        add(("", "Secret"), ("", "", "StorageClass"), ("parameters", p));
    }
    add(
        ("", "Secret"),
        ("", "", "PersistentVolume"),
        ("", "spec/azureFile/secretName"),
    );
    let service = [
        ("apps", "StatefulSet", "spec/serviceName"),
        ("", "Ingress", "spec/rules/http/paths/backend/serviceName"),
        ("", "Ingress", "spec/backend/serviceName"),
        ("", "Ingress", "spec/rules/http/paths/backend/service/name"),
        ("", "Ingress", "spec/defaultBackend/service/name"),
        ("apiregistration.k8s.io", "APIService", "spec/service/name"),
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
            "webhooks/clientConfig/service",
        ),
        (
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
            "webhooks/clientConfig/service",
        ),
    ];
    for (g, kind, path) in service {
        add(("", "Service"), (g, "", kind), ("", path));
    }
    // A Knative Service's container names Secrets as a pod's does.
    add(
        ("", "Secret"),
        ("serving.knative.dev", "v1", "Service"),
        (
            "",
            "spec/template/spec/containers/env/valueFrom/secretKeyRef/name",
        ),
    );
    // An annotation's key has slashes of its own, written `\/`.
    add(
        ("", "ConfigMap"),
        ("", "", "Ingress"),
        (
            "metadata/annotations",
            "nginx.ingress.kubernetes.io\\/fastcgi-params-configmap",
        ),
    );
    for annotation in [
        "ingress.kubernetes.io\\/auth-secret",
        "nginx.ingress.kubernetes.io\\/auth-secret",
        "nginx.ingress.kubernetes.io\\/auth-tls-secret",
    ] {
        add(
            ("", "Secret"),
            ("", "", "Ingress"),
            ("metadata/annotations", annotation),
        );
    }
    let rbac = "rbac.authorization.k8s.io";
    add(
        (rbac, "Role"),
        (rbac, "", "RoleBinding"),
        ("", "roleRef/name"),
    );
    add(
        (rbac, "ClusterRole"),
        (rbac, "", "RoleBinding"),
        ("", "roleRef/name"),
    );
    add(
        (rbac, "ClusterRole"),
        (rbac, "", "ClusterRoleBinding"),
        ("", "roleRef/name"),
    );
    add(
        ("", "ServiceAccount"),
        (rbac, "", "RoleBinding"),
        ("", "subjects"),
    );
    add(
        ("", "ServiceAccount"),
        (rbac, "", "ClusterRoleBinding"),
        ("", "subjects"),
    );
    add(
        ("", "PersistentVolume"),
        ("", "", "PersistentVolumeClaim"),
        ("", "spec/volumeName"),
    );
    add(
        ("", "PersistentVolume"),
        ("", "", "ClusterRole"),
        ("", "rules/resourceNames"),
    );
    for (kind, path) in [
        ("PersistentVolume", "spec/storageClassName"),
        ("PersistentVolumeClaim", "spec/storageClassName"),
        (
            "StatefulSet",
            "spec/volumeClaimTemplates/spec/storageClassName",
        ),
    ] {
        add(
            ("storage.k8s.io", "StorageClass"),
            ("", "", kind),
            ("", path),
        );
    }
    let admission = "admissionregistration.k8s.io";
    add(
        (admission, "ValidatingAdmissionPolicy"),
        (admission, "", "ValidatingAdmissionPolicyBinding"),
        ("", "spec/policyName"),
    );
    // Kustomize's rule for an IngressClass names its group
    // `networking.k8s.io/v1`, which no object has: it never renames
    // `spec/ingressClassName`, so neither does basepress.
    out
}

/// The version Kustomize's name reference rules give a target kind (an
/// empty group there matches any group): a custom `example.com/v1alpha1`
/// Secret is no Secret to them.
fn target_version(group: &str, kind: &str) -> &'static str {
    match (group, kind) {
        (
            "",
            "ConfigMap"
            | "Secret"
            | "Service"
            | "ServiceAccount"
            | "PersistentVolumeClaim"
            | "PersistentVolume",
        ) => "v1",
        ("storage.k8s.io", "StorageClass") | ("scheduling.k8s.io", "PriorityClass") => "v1",
        _ => "",
    }
}

/// Whether one list ends like the other (an empty list only matches an
/// empty one).
fn same_ending(a: &[String], b: &[String]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.is_empty() {
        return long.is_empty();
    }
    long.ends_with(short)
}

fn affixes_equal(a: &Res, b: &Res, allow_empty: bool) -> bool {
    let check = |x: &[String], y: &[String]| {
        (allow_empty && (x.is_empty() || y.is_empty())) || same_ending(x, y)
    };
    check(&a.prefixes, &b.prefixes) && check(&a.suffixes, &b.suffixes)
}

struct Ctx<'a> {
    all: &'a [Res],
    /// Current and original ids of `all`, which name references do not change.
    curs: &'a [Id],
    orgs: &'a [Id],
    referrer: usize,
    target: (&'static str, &'static str),
    role_ref: Option<(String, String)>,
}

impl Ctx<'_> {
    /// Resources `referrer` could refer to: cluster-scoped ones, those in
    /// its namespace, and for a RoleBinding those in its subjects'.
    fn could_be_referenced(&self) -> Vec<usize> {
        let r = &self.all[self.referrer];
        let cur = &self.curs[self.referrer];
        if cur.is_cluster_scoped() {
            return (0..self.all.len()).collect();
        }
        let mut subject_ns = Vec::new();
        if cur.kind == "RoleBinding" {
            if let Some(Value::Array(subjects)) = r.value.get("subjects") {
                for s in subjects {
                    if s.get("kind").and_then(Value::as_str) == Some("ServiceAccount") {
                        if let Some(ns) = s.get("namespace").and_then(Value::as_str) {
                            subject_ns.push(ns.to_string());
                        }
                    }
                }
            }
        }
        (0..self.all.len())
            .filter(|&i| {
                let id = &self.curs[i];
                id.is_cluster_scoped()
                    || id.effective_namespace() == cur.effective_namespace()
                    || subject_ns.contains(&id.namespace)
            })
            .collect()
    }

    /// The one object `old_name` refers to, if any (Kustomize's sieve).
    fn select(
        &self,
        old_name: &str,
        candidates: &[usize],
        with_namespace: bool,
    ) -> Result<Option<usize>, String> {
        let referrer = &self.all[self.referrer];
        let rcur = &self.curs[self.referrer];
        let mut c: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|&i| {
                let r = &self.all[i];
                r.prev.iter().any(|id| id.name == old_name)
                    && r.prev.iter().any(|id| {
                        let (group, kind) = self.target;
                        id.selected_by(group, target_version(group, kind), kind)
                    })
                    && self
                        .role_ref
                        .as_ref()
                        .is_none_or(|(g, k)| r.prev.iter().any(|id| id.selected_by(g, "", k)))
            })
            .filter(|&i| {
                let id = &self.curs[i];
                rcur.is_cluster_scoped()
                    || id.is_cluster_scoped()
                    || id.kind == "ServiceAccount"
                    || id.effective_namespace() == rcur.effective_namespace()
            })
            .collect();
        if c.len() == 1 {
            return Ok(c.pop());
        }
        c.retain(|&i| affixes_equal(&self.all[i], referrer, true));
        if c.len() > 1 {
            c.retain(|&i| affixes_equal(&self.all[i], referrer, false));
        }
        match c.len() {
            0 => Ok(None),
            1 => Ok(c.pop()),
            _ => {
                let first = &self.curs[c[0]];
                let same = c.iter().all(|&i| {
                    let id = &self.curs[i];
                    id.name == first.name && (!with_namespace || id.namespace == first.namespace)
                });
                if same {
                    Ok(Some(c[0]))
                } else {
                    let ids: Vec<String> = c.iter().map(|&i| self.curs[i].to_string()).collect();
                    Err(format!(
                        "`{old_name}` in {} could refer to several objects: {}",
                        rcur,
                        ids.join(", ")
                    ))
                }
            }
        }
    }
}

/// The new values of name fields, found first and written after.
enum Update {
    Scalar(Vec<usize>, String),
    Subject(Vec<usize>, String, Option<String>),
}

/// Visits `path` in `value` (lists traversed), collecting the nodes found
/// as index paths from the object root.
fn find(value: &Value, path: &[&str], keys: &mut Vec<String>, out: &mut Vec<(Vec<String>, Value)>) {
    if path.is_empty() {
        out.push((keys.clone(), value.clone()));
        return;
    }
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                keys.push(i.to_string());
                find(item, path, keys, out);
                keys.pop();
            }
        }
        Value::Object(map) => {
            if let Some(child) = map.get(path[0]) {
                keys.push(path[0].to_string());
                find(child, &path[1..], keys, out);
                keys.pop();
            }
        }
        _ => {}
    }
}

/// The fields of a rule's path: split at `/`, but not at `\/`, which is
/// a slash of the field's own name.
fn field_segments(path: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'/') => {
                chars.next();
                if let Some(s) = out.last_mut() {
                    s.push('/');
                }
            }
            '/' => out.push(String::new()),
            c => {
                if let Some(s) = out.last_mut() {
                    s.push(c);
                }
            }
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

fn pointer(keys: &[String]) -> String {
    keys.iter()
        .map(|k| format!("/{}", crate::yaml::pointer_segment(k)))
        .collect()
}

/// References written as maps with a `name` (by group, kinds and path),
/// which Kustomize needs to find a name in whether or not anything is
/// renamed.
const MAP_REFERENCES: &[(&str, &[&str], &str)] = &[
    (
        "rbac.authorization.k8s.io",
        &["RoleBinding", "ClusterRoleBinding"],
        "subjects",
    ),
    (
        "admissionregistration.k8s.io",
        &[
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ],
        "webhooks/clientConfig/service",
    ),
];

/// Whether a map at `keys` under `node` (lists crossed item by item) has
/// no `name`.
fn nameless_map(node: &Value, keys: &[&str]) -> bool {
    match (node, keys.split_first()) {
        (Value::Array(items), _) => items.iter().any(|i| nameless_map(i, keys)),
        (Value::Object(map), None) => !map.contains_key("name"),
        (Value::Object(map), Some((k, rest))) => map.get(*k).is_some_and(|v| nameless_map(v, rest)),
        _ => false,
    }
}

/// Rewrites every name reference in `all` to the current name of what it
/// names.
pub fn fix(all: &mut [Res]) -> Result<(), String> {
    // Kustomize reads every reference that is a map (a binding's subject,
    // a webhook's service) for its name, renamed or not, and stops at
    // one without.
    for r in all.iter() {
        let id = r.cur();
        for &(group, kinds, path) in MAP_REFERENCES {
            if id.group != group || !kinds.contains(&id.kind.as_str()) {
                continue;
            }
            let keys: Vec<&str> = path.split('/').collect();
            if nameless_map(&r.value, &keys) {
                return Err(format!(
                    "a `{path}` of {id} has no `name`, so Kustomize cannot update the name references in it; give it the name of what it refers to"
                ));
            }
        }
    }
    // Nothing was renamed or moved: every reference is right as written.
    if all.iter().all(|r| r.prev.is_empty()) {
        return Ok(());
    }
    let rules = rules();
    // Each rule's fields, split once.
    let rule_paths: Vec<Vec<String>> = rules
        .iter()
        .map(|rule| {
            let (spec, field) = rule.path;
            let mut path = field_segments(spec);
            path.extend(field_segments(field));
            path
        })
        .collect();
    let curs: Vec<Id> = all.iter().map(Res::cur).collect();
    let orgs: Vec<Id> = all.iter().map(Res::org).collect();
    let mut writes: Vec<(usize, String, Value)> = Vec::new();
    for r in 0..all.len() {
        let org = &orgs[r];
        for (rule, rule_path) in rules.iter().zip(&rule_paths) {
            let (g, v, k) = rule.referrer;
            if !org.selected_by(g, v, k) {
                continue;
            }
            let path: Vec<&str> = rule_path.iter().map(String::as_str).collect();
            let mut found = Vec::new();
            find(&all[r].value, &path, &mut Vec::new(), &mut found);
            if found.is_empty() {
                continue;
            }
            let role_ref = if rule.path.1 == "roleRef/name" {
                let rr = all[r].value.get("roleRef");
                let g = rr.and_then(|x| x.get("apiGroup")).and_then(Value::as_str);
                let k = rr.and_then(|x| x.get("kind")).and_then(Value::as_str);
                g.zip(k).map(|(g, k)| (g.to_string(), k.to_string()))
            } else {
                None
            };
            let ctx = Ctx {
                all,
                curs: &curs,
                orgs: &orgs,
                referrer: r,
                target: rule.target,
                role_ref,
            };
            let candidates = ctx.could_be_referenced();
            for (keys, node) in found {
                for update in updates(&ctx, &candidates, &node)? {
                    match update {
                        Update::Scalar(at, name) => {
                            let mut k = keys.clone();
                            k.extend(at.iter().map(usize::to_string));
                            writes.push((r, pointer(&k), name.into()));
                        }
                        Update::Subject(at, name, ns) => {
                            let mut k = keys.clone();
                            k.extend(at.iter().map(usize::to_string));
                            let base = pointer(&k);
                            writes.push((r, format!("{base}/name"), name.into()));
                            if let Some(ns) = ns {
                                writes.push((r, format!("{base}/namespace"), ns.into()));
                            }
                        }
                    }
                }
            }
        }
        // Writes of one referrer land before the next referrer reads. Two
        // rules that rename one field (a Role's `resourceNames` naming a
        // ConfigMap and a Secret of one name): Kustomize runs the rules in
        // order, and the first renames it away from the later ones' reach.
        let mut written = std::collections::HashSet::new();
        for (i, p, v) in writes.drain(..) {
            if written.insert(p.clone()) {
                write(&mut all[i], &p, v);
            }
        }
    }
    Ok(())
}

fn updates(ctx: &Ctx, candidates: &[usize], node: &Value) -> Result<Vec<Update>, String> {
    let mut out = Vec::new();
    match node {
        Value::String(old) => {
            if let Some(i) = ctx.select(old, candidates, false)? {
                let name = ctx.all[i].name().to_string();
                if name != *old {
                    out.push(Update::Scalar(Vec::new(), name));
                }
            }
        }
        Value::Array(items) => {
            for (j, item) in items.iter().enumerate() {
                match item {
                    Value::String(old) => {
                        if let Some(i) = ctx.select(old, candidates, false)? {
                            let name = ctx.all[i].name().to_string();
                            if name != *old {
                                out.push(Update::Scalar(vec![j], name));
                            }
                        }
                    }
                    Value::Object(_) => {
                        if let Some(u) = subject(ctx, candidates, item, vec![j])? {
                            out.push(u);
                        }
                    }
                    _ => {}
                }
            }
        }
        Value::Object(_) => {
            if let Some(u) = subject(ctx, candidates, node, Vec::new())? {
                out.push(u);
            }
        }
        _ => {}
    }
    Ok(out)
}

/// A map with `name` (and maybe `namespace`), like a binding's subject.
fn subject(
    ctx: &Ctx,
    candidates: &[usize],
    node: &Value,
    at: Vec<usize>,
) -> Result<Option<Update>, String> {
    let Some(old) = node.get("name").and_then(Value::as_str) else {
        return Ok(None);
    };
    let filtered: Vec<usize> = match node.get("namespace").and_then(Value::as_str) {
        None => candidates.to_vec(),
        Some(ns) => {
            // Candidates by original namespace if any has it, else by the
            // current one (cluster-scoped objects have none).
            let group = |org: bool| -> Vec<usize> {
                candidates
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let id = if org { &ctx.orgs[i] } else { &ctx.curs[i] };
                        !id.is_cluster_scoped() && id.effective_namespace() == ns
                    })
                    .collect()
            };
            let by_org = group(true);
            if by_org.is_empty() {
                group(false)
            } else {
                by_org
            }
        }
    };
    let Some(i) = ctx.select(old, &filtered, true)? else {
        return Ok(None);
    };
    let target: Id = ctx.curs[i].clone();
    if target.name == old && target.namespace.is_empty() {
        return Ok(None);
    }
    let ns = (!target.namespace.is_empty()).then_some(target.namespace);
    Ok(Some(Update::Subject(at, target.name, ns)))
}

/// Writes a string at `pointer`, keeping the node's provenance (the
/// reference is still where it was written).
fn write(res: &mut Res, pointer: &str, value: Value) {
    if let Some(node) = res.value.pointer_mut(pointer) {
        *node = value;
        return;
    }
    // A subject's namespace that was not there: add it.
    if let Some((parent, last)) = pointer.rsplit_once('/') {
        if let Some(Value::Object(m)) = res.value.pointer_mut(parent) {
            m.insert(last.to_string(), value);
            let at = res.prov.nearest(parent).at.clone();
            if let Some(p) = res.prov.at_mut(parent) {
                p.set_key(
                    last,
                    Prov {
                        at,
                        kids: super::prov::Kids::Leaf,
                    },
                );
            }
        }
    }
}
