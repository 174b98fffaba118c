//! The overlays the docs show, checked on the base they document.
//!
//! A page's fenced blocks marked `file=NAME` are the files of an overlay
//! (`kustomization.yaml`, patches, env files). They are assembled on top of
//! the base of the release the page documents, the way Kustomize would:
//! patches are merged into the base's objects, generators with
//! `behavior: merge` into the base's generators. The result goes through
//! the same rules as a base; what the overlay changes is reported at the
//! page's lines.

use super::docs::documented_version;
use super::Context;
use crate::diagnostics::{rule, Diagnostic, Location, Rule};
use crate::kustomize::{pod_spec_pointer, smp};
use crate::model::document::CodeBlock;
use crate::model::site::{Base, GeneratedEntry, Generator, GeneratorKind, Page, PatchSource};
use crate::yaml::{self, Value};
use std::collections::HashSet;

/// The rules of [`check_page`] itself; it also raises those of the object
/// checks it runs on what the overlay builds.
pub const RULES: &[&Rule] = &[
    rule::DOC_OVERLAY_INVALID,
    rule::DOC_PATCH_TARGET_MISSING,
    rule::DOC_PATCH_UNKNOWN_NAME,
    rule::DOC_GENERATOR_UNKNOWN,
    rule::DOC_IMAGE_UNKNOWN,
];

/// Rules about what a base must leave to overlays: an overlay is where
/// the StorageClass, the pinned image and the Secret belong.
const BASE_ONLY: &[&str] = &[
    rule::STORAGE_CLASS_SET.id,
    rule::IMAGE_NOT_BARE.id,
    rule::SECRET_IN_BASE.id,
];

/// A finding's identity, to tell what an overlay adds to its base's.
pub type Key = (&'static str, String, Option<Location>);

pub fn key(d: &Diagnostic) -> Key {
    (d.rule.id, d.message.clone(), d.location.clone())
}

/// The overlay page `i` shows, if any, checked on its base.
pub fn check_page(ctx: &Context, i: usize) -> Vec<Diagnostic> {
    let site = ctx.site;
    let (Some(page), Some(doc)) = (site.pages.get(i), ctx.analysis.docs.get(i)) else {
        return Vec::new();
    };
    let files: Vec<&CodeBlock> = doc
        .code_blocks
        .iter()
        .filter(|b| b.attr("file").is_some())
        .collect();
    if files.is_empty() {
        return Vec::new();
    }
    let Some(version) = documented_version(site, page) else {
        return Vec::new();
    };
    let Some(b) = site.bases.iter().position(|b| &b.version == version) else {
        return Vec::new();
    };
    let base = &site.bases[b];
    let empty = HashSet::new();
    let before = ctx.known.get(b).unwrap_or(&empty);
    let mut overlay = Overlay {
        page,
        files: &files,
        out: Vec::new(),
    };
    if let Some(virtual_base) = overlay.assemble(base) {
        let anchor = overlay.kustomization_location();
        for mut d in super::base_checks(ctx, &virtual_base, true) {
            if before.contains(&key(&d)) || BASE_ONLY.contains(&d.rule.id) {
                continue;
            }
            let in_page = d.location.as_ref().is_some_and(|l| l.file == page.source);
            if !in_page {
                d.message = format!(
                    "{} (with the overlay this page shows, on base {})",
                    d.message,
                    base.folder()
                );
                d.location = Some(anchor.clone());
            }
            overlay.out.push(d);
        }
    }
    overlay.out
}

struct Overlay<'a> {
    page: &'a Page,
    files: &'a [&'a CodeBlock],
    out: Vec<Diagnostic>,
}

impl<'a> Overlay<'a> {
    fn block(&self, name: &str) -> Option<&'a CodeBlock> {
        self.files
            .iter()
            .copied()
            .find(|b| b.attr("file") == Some(name))
    }

    /// A 1-based line of a block's code, as a location in the page.
    fn at(&self, block: &CodeBlock, line: usize, column: usize) -> Location {
        Location::at(&self.page.source, block.line + line - 1, column)
    }

    /// Where a value is written in a block, or the block's first line.
    fn find(&self, block: &CodeBlock, needle: &str) -> Location {
        match yaml::locate_scalar(&block.code, needle) {
            Some((l, c)) => self.at(block, l, c),
            None => self.at(block, 1, 1),
        }
    }

    fn kustomization_location(&self) -> Location {
        match self.block("kustomization.yaml") {
            Some(b) => self.at(b, 1, 1),
            None => Location::file(&self.page.source),
        }
    }

    fn error(&mut self, rule: &'static crate::diagnostics::Rule, message: String, at: Location) {
        self.out.push(Diagnostic::new(rule, message).at(at));
    }

    /// The base as the overlay makes it, or `None` when the overlay cannot
    /// be assembled (the reason is reported).
    fn assemble(&mut self, base: &Base) -> Option<Base> {
        let mut seen = HashSet::new();
        for b in self.files {
            let name = b.attr("file").unwrap_or_default();
            if !seen.insert(name) {
                self.error(
                    rule::DOC_OVERLAY_INVALID,
                    format!("the page shows two files named `{name}`"),
                    self.at(b, 1, 1),
                );
                return None;
            }
        }
        let Some(kblock) = self.block("kustomization.yaml") else {
            let first = self.files[0];
            self.error(
                rule::DOC_OVERLAY_INVALID,
                "the page shows overlay files but no `file=kustomization.yaml` block to assemble them".into(),
                self.at(first, 1, 1),
            );
            return None;
        };
        let k: Value = match yaml::from_str(&kblock.code) {
            Ok(v @ Value::Object(_)) => v,
            // A block that does not parse is reported by the YAML check.
            _ => return None,
        };
        let mut result = base.clone();

        for r in k["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let r = r.trim_end_matches('/');
            if matches!(r, "base" | "../base" | "./base") {
                continue;
            }
            if self.block(r).is_none() {
                self.error(
                    rule::DOC_OVERLAY_INVALID,
                    format!("`resources` names `{r}`, which is neither the base nor a file the page shows"),
                    self.find(kblock, r),
                );
                return None;
            }
        }

        let mut patches: Vec<(&'a CodeBlock, Value, Option<Value>)> = Vec::new();
        for p in k["patches"].as_array().into_iter().flatten() {
            let target = p.get("target").cloned();
            match (p["path"].as_str(), p["patch"].as_str()) {
                (Some(path), _) => match self.block(path) {
                    Some(b) => match yaml::from_str::<Value>(&b.code) {
                        Ok(v) => patches.push((b, v, target)),
                        Err(_) => return None,
                    },
                    None => {
                        self.error(
                            rule::DOC_OVERLAY_INVALID,
                            format!("the patch `{path}` is not shown on the page as a `file={path}` block"),
                            self.find(kblock, path),
                        );
                        return None;
                    }
                },
                (None, Some(inline)) => match yaml::from_str::<Value>(inline) {
                    Ok(v) => patches.push((kblock, v, target)),
                    Err(_) => return None,
                },
                _ => {}
            }
        }
        for path in k["patchesStrategicMerge"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            match self
                .block(path)
                .map(|b| (b, yaml::from_str::<Value>(&b.code)))
            {
                Some((b, Ok(v))) => patches.push((b, v, None)),
                Some((_, Err(_))) => return None,
                None => {
                    self.error(
                        rule::DOC_OVERLAY_INVALID,
                        format!(
                            "the patch `{path}` is not shown on the page as a `file={path}` block"
                        ),
                        self.find(kblock, path),
                    );
                    return None;
                }
            }
        }
        for (block, patch, target) in patches {
            self.apply_patch(&mut result, block, &patch, target.as_ref());
        }

        self.merge_generators(&mut result, kblock, &k);
        self.check_images(base, kblock, &k);
        Some(result)
    }

    fn apply_patch(
        &mut self,
        base: &mut Base,
        block: &CodeBlock,
        patch: &Value,
        target: Option<&Value>,
    ) {
        // A JSON 6902 patch is a list of operations: only its target is checked.
        let (kind, name) = match target {
            Some(t) => (t["kind"].as_str(), t["name"].as_str()),
            None => (patch["kind"].as_str(), patch["metadata"]["name"].as_str()),
        };
        let (Some(kind), Some(name)) = (kind, name) else {
            self.error(
                rule::DOC_OVERLAY_INVALID,
                "the patch names no target: give it `kind` and `metadata.name`, or a `target`"
                    .into(),
                self.at(block, 1, 1),
            );
            return;
        };
        let Some(m) = base
            .manifests
            .iter_mut()
            .find(|m| m.kind == kind && m.name == name)
        else {
            let have: Vec<String> = base
                .manifests
                .iter()
                .map(|m| format!("{} {}", m.kind, m.name))
                .collect();
            let at = self.find(block, name);
            self.out.push(
                Diagnostic::new(
                    rule::DOC_PATCH_TARGET_MISSING,
                    format!(
                        "the patch targets {kind} `{name}`, which base {} does not have",
                        base.folder()
                    ),
                )
                .at(at)
                .help(format!("the base has: {}", have.join(", "))),
            );
            return;
        };
        if !patch.is_object() {
            return;
        }
        let positions = yaml::documents_with_positions(&block.code)
            .ok()
            .and_then(|d| d.into_iter().next())
            .map(|d| d.positions)
            .unwrap_or_default();
        if let Some(pod_ptr) = pod_spec_pointer(kind) {
            self.unknown_names(block, &positions, &m.value, patch, pod_ptr);
        }
        match smp::merge(&m.value, patch) {
            // `$patch: delete` on the whole object removes it.
            Ok(Value::Null) => base
                .manifests
                .retain(|m| !(m.kind == kind && m.name == name)),
            Ok(merged) => {
                m.value = merged;
                m.patches.push(PatchSource {
                    file: self.page.source.clone(),
                    line_offset: block.line - 1,
                    value: patch.clone(),
                    positions,
                });
            }
            Err(e) => {
                let (l, c) = positions.nearest(&e.pointer).unwrap_or((1, 1));
                self.error(
                    rule::DOC_OVERLAY_INVALID,
                    format!("the patch cannot be merged: {}", e.message),
                    self.at(block, l, c),
                );
            }
        }
    }

    /// Containers and volumes a patch names must exist in the base, unless
    /// the patch adds a complete one (a container with an image, a volume
    /// with a source): otherwise the merge adds a broken one.
    fn unknown_names(
        &mut self,
        block: &CodeBlock,
        positions: &yaml::Positions,
        base: &Value,
        patch: &Value,
        pod_ptr: &str,
    ) {
        let base_pod = base.pointer(pod_ptr);
        let Some(patch_pod) = patch.pointer(pod_ptr) else {
            return;
        };
        for (field, complete) in [
            ("containers", "image"),
            ("initContainers", "image"),
            ("volumes", ""),
        ] {
            let existing: Vec<&str> = base_pod
                .and_then(|p| p[field].as_array())
                .into_iter()
                .flatten()
                .filter_map(|c| c["name"].as_str())
                .collect();
            for (i, item) in patch_pod[field]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let Some(name) = item["name"].as_str() else {
                    continue;
                };
                if existing.contains(&name) || item.get("$patch").is_some() {
                    continue;
                }
                let adds_whole = if complete.is_empty() {
                    item.as_object().is_some_and(|o| o.len() > 1)
                } else {
                    item.get(complete).is_some()
                };
                if adds_whole {
                    continue;
                }
                let (l, c) = positions
                    .nearest(&format!("{pod_ptr}/{field}/{i}"))
                    .unwrap_or((1, 1));
                let what = if field == "volumes" {
                    "volume"
                } else {
                    "container"
                };
                let suggestion = crate::diagnostics::closest(name, existing.iter().copied())
                    .or(existing.first().copied());
                let mut d = Diagnostic::new(
                    rule::DOC_PATCH_UNKNOWN_NAME,
                    format!(
                        "the patch names {what} `{name}`, which the base does not have: Kustomize would add a new, incomplete {what} instead of changing one"
                    ),
                )
                .at(self.at(block, l, c));
                if let Some(s) = suggestion {
                    d = d.help(format!(
                        "the base's {what}s: {}; did you mean `{s}`?",
                        existing.join(", ")
                    ));
                }
                self.out.push(d);
            }
        }
    }

    fn merge_generators(&mut self, base: &mut Base, kblock: &CodeBlock, k: &Value) {
        for (field, kind) in [
            ("configMapGenerator", GeneratorKind::ConfigMap),
            ("secretGenerator", GeneratorKind::Secret),
        ] {
            for g in k[field].as_array().into_iter().flatten() {
                let Some(name) = g["name"].as_str() else {
                    continue;
                };
                let behavior = g["behavior"].as_str().unwrap_or("create");
                let entries = self.generator_entries(kblock, g);
                let existing = base
                    .generators
                    .iter_mut()
                    .find(|b| b.kind == kind && b.name == name);
                match (behavior, existing) {
                    ("merge", Some(b)) => {
                        for e in entries {
                            b.entries.retain(|x| x.key != e.key);
                            b.entries.push(e);
                        }
                    }
                    ("replace", Some(b)) => b.entries = entries,
                    ("merge" | "replace", None) => {
                        let have: Vec<_> = base.generators.iter().filter(|b| b.kind == kind).map(|b| b.name.as_str()).collect();
                        self.out.push(
                            Diagnostic::new(
                                rule::DOC_GENERATOR_UNKNOWN,
                                format!("`{name}` has behavior: {behavior}, but base {} has no {field} of that name", base.folder()),
                            )
                            .at(self.find(kblock, name))
                            .help(format!("the base's generators: {}", have.join(", "))),
                        );
                    }
                    (_, Some(_)) => self.error(
                        rule::DOC_OVERLAY_INVALID,
                        format!("the base already generates `{name}`: Kustomize needs `behavior: merge` or `replace` to change it"),
                        self.find(kblock, name),
                    ),
                    (_, None) => {
                        if kind == GeneratorKind::ConfigMap {
                            base.generators.push(Generator {
                                kind,
                                name: name.to_string(),
                                behavior: Some(behavior.to_string()),
                                entries,
                                at: self.find(kblock, name),
                            });
                        }
                    }
                }
            }
        }
    }

    /// The keys a generator of the overlay sets, located in the page.
    fn generator_entries(&self, kblock: &CodeBlock, g: &Value) -> Vec<GeneratedEntry> {
        let mut out = Vec::new();
        for lit in g["literals"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let (key, value) = lit.split_once('=').unwrap_or((lit, ""));
            out.push(GeneratedEntry {
                key: key.to_string(),
                value: value.to_string(),
                at: self.find(kblock, lit),
            });
        }
        let env_files = g["envs"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(std::iter::once(&g["env"]))
            .filter_map(Value::as_str);
        for name in env_files {
            let Some(b) = self.block(name) else { continue };
            for (line, setting) in crate::load::env_lines(&b.code) {
                if let Ok((key, value)) = setting {
                    out.push(GeneratedEntry {
                        key: key.to_string(),
                        value: value.to_string(),
                        at: self.at(b, line, 1),
                    });
                }
            }
        }
        out
    }

    fn check_images(&mut self, base: &Base, kblock: &CodeBlock, k: &Value) {
        let used: HashSet<String> = base
            .manifests
            .iter()
            .filter_map(|m| pod_spec_pointer(&m.kind).and_then(|p| m.value.pointer(p)))
            .flat_map(|pod| {
                ["containers", "initContainers"]
                    .into_iter()
                    .flat_map(move |f| pod[f].as_array().into_iter().flatten())
            })
            .filter_map(|c| c["image"].as_str().map(str::to_string))
            .collect();
        for img in k["images"].as_array().into_iter().flatten() {
            let Some(name) = img["name"].as_str() else {
                continue;
            };
            if !used.contains(name) {
                let mut list: Vec<_> = used.iter().cloned().collect();
                list.sort();
                self.out.push(
                    Diagnostic::new(
                        rule::DOC_IMAGE_UNKNOWN,
                        format!(
                            "`images` replaces `{name}`, which no container of base {} uses",
                            base.folder()
                        ),
                    )
                    .at(self.find(kblock, name))
                    .help(format!("the base's images: {}", list.join(", "))),
                );
            }
        }
    }
}
