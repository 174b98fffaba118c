//! The fields of a kustomization file, as Kustomize v5.5 reads them: an
//! unknown field is an error, and `null` stands for an empty value.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Reads `null` as the type's empty value, as Go's decoder does.
fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Reads an integer field as Go's JSON decoder does: a number without a
/// fraction (`2`, `2.0`, `1e1`) is that integer, `null` is 0.
fn whole<'de, D>(d: D) -> Result<i64, D::Error>
where
    D: Deserializer<'de>,
{
    let n: Option<serde_json::Number> = Option::deserialize(d)?;
    let Some(n) = n else {
        return Ok(0);
    };
    if let Some(i) = n.as_i64() {
        return Ok(i);
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
        _ => Err(serde::de::Error::custom(format!("`{n}` is not an integer"))),
    }
}

pub type StringMap = BTreeMap<String, String>;

/// Reads a map of strings as Go's decoder does: `null` is an empty map,
/// and a `null` value an empty string (`commonAnnotations: {note: null}`
/// gives `note: ""`).
fn string_map<'de, D>(d: D) -> Result<StringMap, D::Error>
where
    D: Deserializer<'de>,
{
    let map: Option<BTreeMap<String, Option<String>>> = Option::deserialize(d)?;
    // Kustomize writes these keys into objects unquoted, and reads them
    // back: a key that reads as a number, a boolean, a date or null stops
    // `kubectl kustomize` (`json: unsupported type`).
    if let Some(key) = map
        .iter()
        .flat_map(|m| m.keys())
        .find(|k| k.is_empty() || crate::yaml::go_reads_as_non_string(k))
    {
        return Err(serde::de::Error::custom(match key.is_empty() {
            true => "an empty key: kubectl kustomize stops on it; name the key".to_string(),
            false => format!(
                "the key `{key}` reads as a number, a boolean, a date or null once Kustomize writes it into an object, and kubectl kustomize stops on it; use a key that starts with a letter"
            ),
        }));
    }
    Ok(map
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.unwrap_or_default()))
        .collect())
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Kustomization {
    // Read so that the field is known; Kustomize does not check it either.
    #[allow(dead_code)]
    #[serde(default, deserialize_with = "nullable")]
    pub api_version: String,
    #[serde(default, deserialize_with = "nullable")]
    pub kind: String,
    #[allow(dead_code)]
    #[serde(default)]
    pub metadata: Option<Value>,
    #[serde(default, deserialize_with = "nullable")]
    pub resources: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub bases: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub namespace: String,
    #[serde(default, deserialize_with = "nullable")]
    pub name_prefix: String,
    #[serde(default, deserialize_with = "nullable")]
    pub name_suffix: String,
    #[serde(default, deserialize_with = "string_map")]
    pub common_labels: StringMap,
    #[serde(default, deserialize_with = "nullable")]
    pub labels: Vec<LabelArgs>,
    #[serde(default, deserialize_with = "string_map")]
    pub common_annotations: StringMap,
    #[serde(default, deserialize_with = "nullable")]
    pub patches: Vec<PatchArgs>,
    #[serde(default, deserialize_with = "nullable")]
    pub patches_strategic_merge: Vec<String>,
    #[serde(default, deserialize_with = "nullable", rename = "patchesJson6902")]
    pub patches_json6902: Vec<PatchArgs>,
    #[serde(default, deserialize_with = "nullable")]
    pub images: Vec<ImageArgs>,
    #[serde(default, deserialize_with = "nullable")]
    pub image_tags: Vec<ImageArgs>,
    #[serde(default, deserialize_with = "nullable")]
    pub replicas: Vec<ReplicaArgs>,
    #[serde(default, deserialize_with = "nullable")]
    pub config_map_generator: Vec<ConfigMapArgs>,
    #[serde(default, deserialize_with = "nullable")]
    pub secret_generator: Vec<SecretArgs>,
    #[serde(default)]
    pub generator_options: Option<GeneratorOptions>,
    #[serde(default, deserialize_with = "nullable")]
    pub components: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub replacements: Vec<ReplacementArgs>,
    // Fields Kustomize knows and basepress does not build.
    #[serde(default)]
    pub crds: Option<Value>,
    #[serde(default)]
    pub configurations: Option<Value>,
    #[serde(default)]
    pub generators: Option<Value>,
    #[serde(default)]
    pub transformers: Option<Value>,
    #[serde(default)]
    pub validators: Option<Value>,
    #[serde(default)]
    pub vars: Option<Value>,
    #[serde(default)]
    pub helm_charts: Option<Value>,
    #[serde(default)]
    pub helm_globals: Option<Value>,
    #[serde(default)]
    pub helm_chart_inflation_generator: Option<Value>,
    #[serde(default)]
    pub openapi: Option<Value>,
    #[serde(default)]
    pub sort_options: Option<Value>,
    #[serde(default)]
    pub build_metadata: Option<Value>,
}

impl Kustomization {
    /// The fields set that basepress does not build, by name.
    pub fn unsupported(&self) -> Vec<&'static str> {
        let set = |v: &Option<Value>| match v {
            None | Some(Value::Null) => false,
            Some(Value::Array(a)) => !a.is_empty(),
            Some(Value::Object(m)) => !m.is_empty(),
            Some(_) => true,
        };
        // `order: legacy` alone is the order basepress builds in.
        let legacy = serde_json::json!({"order": "legacy"});
        let sort_options = self.sort_options.as_ref().filter(|v| **v != legacy);
        let fields = [
            ("crds", &self.crds),
            ("configurations", &self.configurations),
            ("generators", &self.generators),
            ("transformers", &self.transformers),
            ("validators", &self.validators),
            ("vars", &self.vars),
            ("helmCharts", &self.helm_charts),
            ("helmGlobals", &self.helm_globals),
            (
                "helmChartInflationGenerator",
                &self.helm_chart_inflation_generator,
            ),
            ("openapi", &self.openapi),
            ("sortOptions", &sort_options.cloned()),
            ("buildMetadata", &self.build_metadata),
        ];
        fields
            .into_iter()
            .filter(|(_, v)| set(v))
            .map(|(name, _)| name)
            .collect()
    }

    /// Whether the kustomization sets nothing at all (Kustomize refuses it).
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
            && self.bases.is_empty()
            && self.namespace.is_empty()
            && self.name_prefix.is_empty()
            && self.name_suffix.is_empty()
            && self.common_labels.is_empty()
            && self.labels.is_empty()
            && self.common_annotations.is_empty()
            && self.patches.is_empty()
            && self.patches_strategic_merge.is_empty()
            && self.patches_json6902.is_empty()
            && self.images.is_empty()
            && self.image_tags.is_empty()
            && self.replicas.is_empty()
            && self.config_map_generator.is_empty()
            && self.secret_generator.is_empty()
            && self.generator_options.is_none()
            && self.components.is_empty()
            && self.replacements.is_empty()
            && self.unsupported().is_empty()
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LabelArgs {
    #[serde(default, deserialize_with = "string_map")]
    pub pairs: StringMap,
    #[serde(default, deserialize_with = "nullable")]
    pub include_selectors: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub include_templates: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub fields: Vec<FieldSpecArgs>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FieldSpecArgs {
    #[serde(default, deserialize_with = "nullable")]
    pub group: String,
    #[serde(default, deserialize_with = "nullable")]
    pub version: String,
    #[serde(default, deserialize_with = "nullable")]
    pub kind: String,
    #[serde(default, deserialize_with = "nullable")]
    pub path: String,
    #[serde(default, deserialize_with = "nullable")]
    pub create: bool,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Selector {
    #[serde(default, deserialize_with = "nullable")]
    pub group: String,
    #[serde(default, deserialize_with = "nullable")]
    pub version: String,
    #[serde(default, deserialize_with = "nullable")]
    pub kind: String,
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub namespace: String,
    #[serde(default, deserialize_with = "nullable")]
    pub label_selector: String,
    #[serde(default, deserialize_with = "nullable")]
    pub annotation_selector: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PatchArgs {
    #[serde(default, deserialize_with = "nullable")]
    pub path: String,
    #[serde(default, deserialize_with = "nullable")]
    pub patch: String,
    #[serde(default)]
    pub target: Option<Selector>,
    #[serde(default, deserialize_with = "nullable")]
    pub options: BTreeMap<String, bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImageArgs {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub new_name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub new_tag: String,
    #[serde(default, deserialize_with = "nullable")]
    pub digest: String,
    #[serde(default, deserialize_with = "nullable")]
    pub tag_suffix: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplicaArgs {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    #[serde(default, deserialize_with = "whole")]
    pub count: i64,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GeneratorOptions {
    #[serde(default, deserialize_with = "string_map")]
    pub labels: StringMap,
    #[serde(default, deserialize_with = "string_map")]
    pub annotations: StringMap,
    #[serde(default, deserialize_with = "nullable")]
    pub disable_name_suffix_hash: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub immutable: bool,
}

impl GeneratorOptions {
    /// The options of one generator with the kustomization's
    /// `generatorOptions` (the generator's own labels and annotations win).
    pub fn merged(local: Option<&GeneratorOptions>, global: Option<&GeneratorOptions>) -> Self {
        let mut out = local.cloned().unwrap_or_default();
        if let Some(g) = global {
            for (k, v) in &g.labels {
                out.labels.entry(k.clone()).or_insert_with(|| v.clone());
            }
            for (k, v) in &g.annotations {
                out.annotations
                    .entry(k.clone())
                    .or_insert_with(|| v.clone());
            }
            out.disable_name_suffix_hash |= g.disable_name_suffix_hash;
            out.immutable |= g.immutable;
        }
        out
    }
}

/// What the two generators share.
#[derive(Debug, Default)]
pub struct GeneratorArgs {
    pub name: String,
    pub namespace: String,
    pub behavior: String,
    pub literals: Vec<String>,
    pub files: Vec<String>,
    pub envs: Vec<String>,
    pub env: String,
    pub options: Option<GeneratorOptions>,
    /// A Secret's type ("" for a ConfigMap, and for the default `Opaque`).
    pub secret_type: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConfigMapArgs {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub namespace: String,
    #[serde(default, deserialize_with = "nullable")]
    pub behavior: String,
    #[serde(default, deserialize_with = "nullable")]
    pub literals: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub files: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub envs: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub env: String,
    #[serde(default)]
    pub options: Option<GeneratorOptions>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SecretArgs {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub namespace: String,
    #[serde(default, deserialize_with = "nullable")]
    pub behavior: String,
    #[serde(default, deserialize_with = "nullable")]
    pub literals: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub files: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub envs: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub env: String,
    #[serde(default)]
    pub options: Option<GeneratorOptions>,
    #[serde(default, deserialize_with = "nullable", rename = "type")]
    pub secret_type: String,
}

impl From<&ConfigMapArgs> for GeneratorArgs {
    fn from(a: &ConfigMapArgs) -> Self {
        GeneratorArgs {
            name: a.name.clone(),
            namespace: a.namespace.clone(),
            behavior: a.behavior.clone(),
            literals: a.literals.clone(),
            files: a.files.clone(),
            envs: a.envs.clone(),
            env: a.env.clone(),
            options: a.options.clone(),
            secret_type: String::new(),
        }
    }
}

impl From<&SecretArgs> for GeneratorArgs {
    fn from(a: &SecretArgs) -> Self {
        GeneratorArgs {
            name: a.name.clone(),
            namespace: a.namespace.clone(),
            behavior: a.behavior.clone(),
            literals: a.literals.clone(),
            files: a.files.clone(),
            envs: a.envs.clone(),
            env: a.env.clone(),
            options: a.options.clone(),
            secret_type: a.secret_type.clone(),
        }
    }
}

/// One entry of `replacements`: inline, or a `path` to a file of one or
/// more.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplacementArgs {
    #[serde(default, deserialize_with = "nullable")]
    pub path: String,
    #[serde(default)]
    pub source: Option<SourceArgs>,
    #[serde(default, deserialize_with = "nullable")]
    pub targets: Vec<TargetArgs>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SourceArgs {
    #[serde(default, deserialize_with = "nullable")]
    pub group: String,
    #[serde(default, deserialize_with = "nullable")]
    pub version: String,
    #[serde(default, deserialize_with = "nullable")]
    pub kind: String,
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub namespace: String,
    #[serde(default, deserialize_with = "nullable")]
    pub field_path: String,
    #[serde(default)]
    pub options: Option<FieldOptions>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TargetArgs {
    #[serde(default)]
    pub select: Option<Selector>,
    #[serde(default, deserialize_with = "nullable")]
    pub reject: Vec<Selector>,
    #[serde(default, deserialize_with = "nullable")]
    pub field_paths: Vec<String>,
    #[serde(default)]
    pub options: Option<FieldOptions>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FieldOptions {
    #[serde(default, deserialize_with = "nullable")]
    pub delimiter: String,
    #[serde(default, deserialize_with = "whole")]
    pub index: i64,
    // Read so that the field is known; Kustomize does not use it either.
    #[allow(dead_code)]
    #[serde(default, deserialize_with = "nullable")]
    pub encoding: String,
    #[serde(default, deserialize_with = "nullable")]
    pub create: bool,
}
