//! The built-in transformers: namespace, name prefix and suffix, labels,
//! annotations, images and replicas, with the field lists Kustomize v5.5
//! applies them to.

use regex::Regex;
use serde_json::{Map, Value};

use super::prov::{Kids, Prov, Src};
use super::resource::Res;
use super::schema::group_version;

/// Where a transformer writes in objects of some kinds: a slash path from
/// the object root (`[]` after a name: a list, never created), and
/// whether missing fields are created.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldSpec {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub path: String,
    pub create: bool,
}

impl FieldSpec {
    fn new(group: &str, version: &str, kind: &str, path: &str, create: bool) -> Self {
        FieldSpec {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            path: path.into(),
            create,
        }
    }

    /// Whether the spec applies to `value`'s kind and apiVersion.
    pub fn applies(&self, value: &Value) -> bool {
        let kind = value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let api = value
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let (group, version) = group_version(api);
        (self.kind.is_empty() || self.kind == kind)
            && (self.group.is_empty() || self.group == group)
            && (self.version.is_empty() || self.version == version)
    }
}

/// The kinds of workload with a pod template, as (group, version, kind,
/// path of the template's metadata).
const TEMPLATES: &[(&str, &str, &str, &str)] = &[
    ("", "v1", "ReplicationController", "spec/template/metadata"),
    ("", "", "Deployment", "spec/template/metadata"),
    ("", "", "ReplicaSet", "spec/template/metadata"),
    ("", "", "DaemonSet", "spec/template/metadata"),
    ("apps", "", "StatefulSet", "spec/template/metadata"),
    ("batch", "", "Job", "spec/template/metadata"),
    ("batch", "", "CronJob", "spec/jobTemplate/metadata"),
    (
        "batch",
        "",
        "CronJob",
        "spec/jobTemplate/spec/template/metadata",
    ),
];

/// Labels on objects and their pod templates (`labels` with
/// `includeTemplates`; v5.5 counts claim templates among them).
pub fn template_labels() -> Vec<FieldSpec> {
    let mut out = vec![FieldSpec::new("", "", "", "metadata/labels", true)];
    for (g, v, k, meta) in TEMPLATES {
        out.push(FieldSpec::new(g, v, k, &format!("{meta}/labels"), true));
    }
    out.push(FieldSpec::new(
        "apps",
        "",
        "StatefulSet",
        "spec/volumeClaimTemplates[]/metadata/labels",
        true,
    ));
    out
}

/// Labels with selectors too (`commonLabels`, `labels` with
/// `includeSelectors`).
pub fn common_labels() -> Vec<FieldSpec> {
    let mut out = vec![
        FieldSpec::new("", "v1", "Service", "spec/selector", true),
        FieldSpec::new("", "v1", "ReplicationController", "spec/selector", true),
        FieldSpec::new("", "", "Deployment", "spec/selector/matchLabels", true),
        FieldSpec::new("", "", "ReplicaSet", "spec/selector/matchLabels", true),
        FieldSpec::new("", "", "DaemonSet", "spec/selector/matchLabels", true),
        FieldSpec::new("apps", "", "StatefulSet", "spec/selector/matchLabels", true),
        FieldSpec::new("batch", "", "Job", "spec/selector/matchLabels", false),
        FieldSpec::new(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/spec/selector/matchLabels",
            false,
        ),
        FieldSpec::new(
            "policy",
            "",
            "PodDisruptionBudget",
            "spec/selector/matchLabels",
            false,
        ),
        FieldSpec::new(
            "networking.k8s.io",
            "",
            "NetworkPolicy",
            "spec/podSelector/matchLabels",
            false,
        ),
        FieldSpec::new(
            "networking.k8s.io",
            "",
            "NetworkPolicy",
            "spec/ingress/from/podSelector/matchLabels",
            false,
        ),
        FieldSpec::new(
            "networking.k8s.io",
            "",
            "NetworkPolicy",
            "spec/egress/to/podSelector/matchLabels",
            false,
        ),
    ];
    let affinity = [
        "podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm",
        "podAffinity/requiredDuringSchedulingIgnoredDuringExecution",
        "podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm",
        "podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution",
    ];
    for kind in ["Deployment", "StatefulSet"] {
        for a in affinity {
            out.push(FieldSpec::new(
                "apps",
                "",
                kind,
                &format!("spec/template/spec/affinity/{a}/labelSelector/matchLabels"),
                false,
            ));
        }
        out.push(FieldSpec::new(
            "apps",
            "",
            kind,
            "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels",
            false,
        ));
    }
    out.extend(template_labels());
    out
}

/// Where `commonAnnotations` go.
pub fn common_annotations() -> Vec<FieldSpec> {
    let mut out = vec![FieldSpec::new("", "", "", "metadata/annotations", true)];
    for (g, v, k, meta) in TEMPLATES {
        let g = if *k == "StatefulSet" { "" } else { g };
        out.push(FieldSpec::new(
            g,
            v,
            k,
            &format!("{meta}/annotations"),
            true,
        ));
    }
    out
}

/// What is created at the end of a path that is missing.
#[derive(Clone, Copy, PartialEq)]
pub enum Create {
    Map,
    Scalar,
}

/// A transformer's failure, as a message.
pub type Fail = String;

/// Visits the node at `path` in `value` (every item of a list on the
/// way), creating missing fields when `create` says what to create, and
/// calls `set` on it. New nodes take `src` as provenance.
pub fn visit(
    value: &mut Value,
    prov: &mut Prov,
    path: &[&str],
    create: Option<Create>,
    src: &Src,
    set: &mut dyn FnMut(&mut Value, &mut Prov) -> Result<(), Fail>,
) -> Result<(), Fail> {
    let Some((first, rest)) = path.split_first() else {
        return set(value, prov);
    };
    match value {
        Value::Null => Ok(()),
        Value::Array(items) => {
            let Some(provs) = list_provs(prov, items) else {
                return Ok(());
            };
            for (item, p) in items.iter_mut().zip(provs.iter_mut()) {
                visit(item, p, path, create, src, set)?;
            }
            Ok(())
        }
        Value::Object(map) => {
            let (name, is_list) = match first.strip_suffix("[]") {
                Some(n) => (n, true),
                None => (*first, false),
            };
            let creating = create.filter(|_| !is_list);
            let fresh = || match (rest.is_empty(), creating) {
                (true, Some(Create::Scalar)) => Value::Null,
                _ => Value::Object(Map::new()),
            };
            match map.get(name) {
                None if creating.is_none() => return Ok(()),
                None => {
                    let v = fresh();
                    prov.set_key(name, Prov::uniform(&v, src));
                    map.insert(name.to_string(), v);
                }
                Some(Value::Null) if creating.is_some() => {
                    let v = fresh();
                    prov.set_key(name, Prov::uniform(&v, src));
                    map.insert(name.to_string(), v);
                }
                // A list field (`containers[]`) that is `null` becomes an
                // empty list, as Kustomize's field specs make it, whether
                // or not they create.
                Some(Value::Null) if is_list => {
                    let v = Value::Array(Vec::new());
                    prov.set_key(name, Prov::uniform(&v, src));
                    map.insert(name.to_string(), v);
                }
                Some(_) => {}
            }
            let Some(child) = map.get_mut(name) else {
                return Ok(());
            };
            if prov.key(name).is_none() {
                prov.set_key(name, Prov::uniform(child, &prov.at.clone()));
            }
            match prov.key_mut(name) {
                Some(p) => visit(child, p, rest, create, src, set),
                None => Ok(()),
            }
        }
        _ => Err(format!(
            "expected a map or a list at `{first}` of path `{}`",
            path.join("/")
        )),
    }
}

/// The provenance children of a list node, one per item (made from the
/// node's own position where missing).
fn list_provs<'a>(prov: &'a mut Prov, items: &[Value]) -> Option<&'a mut Vec<Prov>> {
    let at = prov.at.clone();
    let list = prov.list_mut()?;
    while list.len() < items.len() {
        let v = &items[list.len()];
        list.push(Prov::uniform(v, &at));
    }
    Some(list)
}

/// Sets `key` to the string `value` in a map node.
pub fn set_entry(
    node: &mut Value,
    prov: &mut Prov,
    key: &str,
    value: &str,
    src: &Src,
) -> Result<(), Fail> {
    if node.is_null() {
        *node = Value::Object(Map::new());
    }
    let Value::Object(map) = node else {
        return Err(format!("cannot set `{key}`: the field is not a map"));
    };
    map.insert(key.to_string(), value.into());
    prov.set_key(
        key,
        Prov {
            at: src.clone(),
            kids: Kids::Leaf,
        },
    );
    Ok(())
}

/// Sets a scalar, in the style of the one it replaces (see
/// [`super::prov::in_style_of`]).
fn set_scalar(node: &mut Value, prov: &mut Prov, value: Value, src: &Src) {
    *node = super::prov::in_style_of(node, prov, &value);
    *prov = Prov {
        at: src.clone(),
        kids: prov.scalar_kids(),
    };
}

/// Applies each spec that matches `res` with `set`.
pub fn apply_specs(
    res: &mut Res,
    specs: &[FieldSpec],
    create: Create,
    src: &Src,
    set: &mut dyn FnMut(&mut Value, &mut Prov) -> Result<(), Fail>,
) -> Result<(), Fail> {
    let mut seen: Vec<&FieldSpec> = Vec::new();
    for spec in specs {
        if seen.contains(&spec) || !spec.applies(&res.value) {
            continue;
        }
        seen.push(spec);
        let path: Vec<&str> = spec.path.split('/').collect();
        let create = spec.create.then_some(create);
        visit(&mut res.value, &mut res.prov, &path, create, src, set)?;
    }
    Ok(())
}

/// Adds labels or annotations (`pairs`, each with where it was written)
/// at `specs`.
pub fn add_pairs(
    res: &mut Res,
    pairs: &[(String, String, Src)],
    specs: &[FieldSpec],
) -> Result<(), Fail> {
    for (key, value, src) in pairs {
        apply_specs(res, specs, Create::Map, src, &mut |node, prov| {
            set_entry(node, prov, key, value, src)
        })?;
    }
    Ok(())
}

/// Whether the object is empty (Kustomize leaves such objects alone).
fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// `namespace:`: sets the namespace of every namespaced object, renames a
/// v1 Namespace, and sets it where a few kinds name their own namespace.
pub fn namespace(res: &mut Res, ns: &str, src: &Src) -> Result<(), Fail> {
    if is_empty(&res.value) {
        return Ok(());
    }
    res.store_prev();
    let set = &mut |node: &mut Value, prov: &mut Prov| {
        set_scalar(node, prov, ns.into(), src);
        Ok(())
    };
    let id = res.cur();
    if !id.is_cluster_scoped() {
        let path = ["metadata", "namespace"];
        visit(
            &mut res.value,
            &mut res.prov,
            &path,
            Some(Create::Scalar),
            src,
            set,
        )?;
    }
    let api = res
        .value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let specs = [
        FieldSpec::new("", "", "Namespace", "metadata/name", true),
        FieldSpec::new(
            "apiregistration.k8s.io",
            "",
            "APIService",
            "spec/service/namespace",
            true,
        ),
        FieldSpec::new(
            "apiextensions.k8s.io",
            "",
            "CustomResourceDefinition",
            "spec/conversion/webhook/clientConfig/service/namespace",
            false,
        ),
    ];
    let specs: Vec<FieldSpec> = specs
        .into_iter()
        .filter(|s| api == "v1" || s.path != "metadata/name")
        .collect();
    apply_specs(res, &specs, Create::Scalar, src, set)?;
    if matches!(id.kind.as_str(), "RoleBinding" | "ClusterRoleBinding") {
        let (value, prov) = (&mut res.value, &mut res.prov);
        if let (Some(Value::Array(subjects)), Some(sp)) =
            (value.get_mut("subjects"), prov.key_mut("subjects"))
        {
            let Some(provs) = list_provs(sp, subjects) else {
                return Ok(());
            };
            for (subject, p) in subjects.iter_mut().zip(provs.iter_mut()) {
                if subject.get("name").and_then(Value::as_str) != Some("default") {
                    continue;
                }
                if let Value::Object(m) = subject {
                    m.insert("namespace".into(), ns.into());
                    p.set_key(
                        "namespace",
                        Prov {
                            at: src.clone(),
                            kids: Kids::Leaf,
                        },
                    );
                }
            }
        }
    }
    Ok(())
}

/// Kinds whose names no prefix or suffix changes.
fn keeps_name(res: &Res) -> bool {
    let org = res.org();
    org.kind == "CustomResourceDefinition"
        || org.kind == "Namespace"
        || (org.kind == "APIService" && org.group == "apiregistration.k8s.io")
}

/// `namePrefix:` (`prefix` true) or `nameSuffix:`.
pub fn rename(res: &mut Res, affix: &str, prefix: bool, src: &Src) {
    if keeps_name(res) {
        return;
    }
    if prefix {
        res.prefixes.push(affix.to_string());
    } else {
        res.suffixes.push(affix.to_string());
    }
    res.store_prev();
    let name = res.name().to_string();
    if res.value.pointer("/metadata/name").is_none() {
        return;
    }
    let new = if prefix {
        format!("{affix}{name}")
    } else {
        format!("{name}{affix}")
    };
    res.value["metadata"]["name"] = new.into();
    if let Some(p) = res.prov.at_mut("/metadata/name") {
        p.at = src.clone();
    }
}

/// One `images:` entry.
pub struct ImageRule<'a> {
    pub pattern: Regex,
    pub new_name: &'a str,
    pub new_tag: &'a str,
    pub digest: &'a str,
    pub tag_suffix: &'a str,
}

impl<'a> ImageRule<'a> {
    pub fn new(
        name: &str,
        new_name: &'a str,
        new_tag: &'a str,
        digest: &'a str,
        tag_suffix: &'a str,
    ) -> Result<Self, Fail> {
        // Kustomize puts the name into a regular expression as it is.
        let pattern = super::goregex::compile(
            "^{}(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?$",
            name,
        )
        .map_err(|e| format!("image name {name:?} does not make a valid pattern: {e}"))?;
        Ok(ImageRule {
            pattern,
            new_name,
            new_tag,
            digest,
            tag_suffix,
        })
    }

    /// The new image for `image`, if the rule matches it.
    fn apply(&self, image: &str) -> Option<String> {
        if !self.pattern.is_match(image) {
            return None;
        }
        let (name, mut tag, mut digest) = split_image(image);
        let mut name = name.to_string();
        if !self.new_name.is_empty() {
            name = self.new_name.to_string();
        }
        let mut owned_tag;
        match (self.new_tag.is_empty(), self.digest.is_empty()) {
            (false, false) => {
                tag = self.new_tag;
                digest = self.digest;
            }
            (false, true) => {
                tag = self.new_tag;
                digest = "";
            }
            (true, false) => {
                tag = "";
                digest = self.digest;
            }
            (true, true) if !self.tag_suffix.is_empty() => {
                owned_tag = tag.to_string();
                owned_tag.push_str(self.tag_suffix);
                let mut out = name;
                if !owned_tag.is_empty() {
                    out.push(':');
                    out.push_str(&owned_tag);
                }
                return Some(out);
            }
            (true, true) => {}
        }
        if !tag.is_empty() {
            name.push(':');
            name.push_str(tag);
        }
        if !digest.is_empty() {
            name.push('@');
            name.push_str(digest);
        }
        Some(name)
    }
}

/// Splits an image reference into name, tag and digest, looking for `:`
/// and `@` after the first slash (a registry's port is not a tag).
pub fn split_image(image: &str) -> (&str, &str, &str) {
    let start = match image.find('/') {
        Some(i) if i > 0 => i,
        _ => 0,
    };
    let search = &image[start..];
    let at = search.find('@').map(|i| i + start);
    let colon = search.find(':').map(|i| i + start);
    match (colon, at) {
        (None, None) => (image, "", ""),
        (Some(c), Some(d)) if c < d => (&image[..c], &image[c + 1..d], &image[d + 1..]),
        (_, Some(d)) => (&image[..d], "", &image[d + 1..]),
        (Some(c), None) => (&image[..c], &image[c + 1..], ""),
    }
}

/// Applies an image rule to the `image` of each item of a list node.
fn images_in_list(
    value: &mut Value,
    prov: &mut Prov,
    rule: &ImageRule,
    src: &Src,
) -> Result<(), Fail> {
    let Value::Array(items) = value else {
        return Ok(());
    };
    let Some(provs) = list_provs(prov, items) else {
        return Ok(());
    };
    for (item, p) in items.iter_mut().zip(provs.iter_mut()) {
        // Kustomize reads an image as text: a number is its digits, and a
        // map or a list stops the build.
        let image = match item.get("image") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Object(_) | Value::Array(_)) => {
                return Err("an image in a `containers` list is not a string".into())
            }
            _ => continue,
        };
        let Some(new) = rule.apply(&image) else {
            continue;
        };
        item["image"] = new.into();
        p.set_key(
            "image",
            Prov {
                at: src.clone(),
                kids: Kids::Leaf,
            },
        );
    }
    Ok(())
}

/// Every `containers` and `initContainers` list anywhere in the object
/// (children first), as Kustomize's legacy image filter walks them.
fn images_anywhere(
    value: &mut Value,
    prov: &mut Prov,
    rule: &ImageRule,
    src: &Src,
) -> Result<(), Fail> {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if prov.key(key).is_none() {
                    prov.set_key(key, Prov::uniform(child, &prov.at.clone()));
                }
                let Some(p) = prov.key_mut(key) else {
                    continue;
                };
                images_anywhere(child, p, rule, src)?;
                if key == "containers" || key == "initContainers" {
                    images_in_list(child, p, rule, src)?;
                }
            }
        }
        Value::Array(items) => {
            if let Some(provs) = list_provs(prov, items) {
                for (item, p) in items.iter_mut().zip(provs.iter_mut()) {
                    images_anywhere(item, p, rule, src)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// One `images:` entry on one object.
pub fn images(res: &mut Res, rule: &ImageRule, src: &Src) -> Result<(), Fail> {
    if res.kind() == "CustomResourceDefinition" {
        return Ok(());
    }
    images_anywhere(&mut res.value, &mut res.prov, rule, src)?;
    let specs: Vec<FieldSpec> = [
        "spec/containers[]/image",
        "spec/initContainers[]/image",
        "spec/template/spec/containers[]/image",
        "spec/template/spec/initContainers[]/image",
    ]
    .iter()
    .map(|p| FieldSpec::new("", "", "", p, false))
    .collect();
    apply_specs(res, &specs, Create::Scalar, src, &mut |node, prov| {
        let Some(image) = node.as_str() else {
            return match node {
                Value::Object(_) | Value::Array(_) => Err("an image is not a string".into()),
                _ => Ok(()),
            };
        };
        if let Some(new) = rule.apply(image) {
            set_scalar(node, prov, new.into(), src);
        }
        Ok(())
    })
}

/// The kinds `replicas:` applies to.
pub const REPLICA_KINDS: &[&str] = &[
    "Deployment",
    "ReplicationController",
    "ReplicaSet",
    "StatefulSet",
];

/// Sets `spec.replicas`.
pub fn replicas(res: &mut Res, count: i64, src: &Src) -> Result<(), Fail> {
    let path = ["spec", "replicas"];
    visit(
        &mut res.value,
        &mut res.prov,
        &path,
        Some(Create::Scalar),
        src,
        &mut |node, prov| {
            set_scalar(node, prov, count.into(), src);
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_split_and_rewrite() {
        assert_eq!(split_image("nginx"), ("nginx", "", ""));
        assert_eq!(split_image("nginx:1.2"), ("nginx", "1.2", ""));
        assert_eq!(split_image("r:5000/nginx:1"), ("r:5000/nginx", "1", ""));
        assert_eq!(split_image("n@sha256:ab"), ("n", "", "sha256:ab"));
        assert_eq!(split_image("n:t@sha256:ab"), ("n", "t", "sha256:ab"));
        let rule = ImageRule::new("nginx", "reg/nginx", "", "sha256:ff", "").unwrap();
        assert_eq!(
            rule.apply("nginx:1").as_deref(),
            Some("reg/nginx@sha256:ff")
        );
        assert_eq!(rule.apply("nginx-x:1"), None);
        let rule = ImageRule::new("a", "", "2", "", "").unwrap();
        assert_eq!(rule.apply("a@sha256:x").as_deref(), Some("a:2"));
    }
}
