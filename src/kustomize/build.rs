//! The build: what `kubectl kustomize DIR` does, step by step, for the
//! fields basepress supports.
//!
//! For each kustomization (the top one, and each folder its `resources`
//! name, built the same way first): resources in order; generators
//! (`configMapGenerator`, then `secretGenerator`), merged into or replacing
//! generated objects of the folders below; then the transformers in
//! Kustomize's order: `patchesStrategicMerge`, `patches`, `namespace`,
//! `namePrefix`, `nameSuffix`, `labels` then `commonLabels`,
//! `commonAnnotations`, `patchesJson6902`, `replicas`, `images`. Once, at
//! the top: content hashes into generated names, name references, and
//! Kustomize's default output order.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::cache::{Cache, Recording};
use super::files::{join, within, Files, SourceFile};
use super::generate::{self, Pair};
use super::kustomization::{
    GeneratorArgs, GeneratorOptions, Kustomization, PatchArgs, ReplacementArgs, Selector,
};
use super::patch::{self, Parsed};
use super::prov::{Prov, Src};
use super::replace;
use super::resource::{legacy_order, Id, Res};
use super::select::Compiled;
use super::transform::{self, FieldSpec, ImageRule};
use super::{nameref, Build, Error, Object};
use crate::diagnostics::{rule, Location, Rule};
use crate::yaml::{self, Positions};

/// How deep kustomizations may nest (a cycle stops at the first repeat).
const MAX_DEPTH: usize = 32;

/// File names Kustomize accepts for a kustomization.
pub const KUSTOMIZATION_FILES: &[&str] =
    &["kustomization.yaml", "kustomization.yml", "Kustomization"];

type Result<T> = std::result::Result<T, Box<Error>>;

fn error(rule: &'static Rule, message: impl Into<String>, location: Location) -> Box<Error> {
    Box::new(Error {
        rule,
        message: message.into(),
        location,
        help: None,
    })
}

/// The text of a file: UTF-8, with a byte-order mark dropped.
fn text(file: &SourceFile) -> std::result::Result<&str, String> {
    let bytes = file
        .bytes
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(&file.bytes);
    std::str::from_utf8(bytes).map_err(|e| {
        if bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
            "the file is UTF-16 text (it starts with a UTF-16 byte-order mark), which basepress does not read; save it as UTF-8 (PowerShell's `>` writes UTF-16: use `Out-File -Encoding utf8`)".to_string()
        } else {
            format!("the file is not UTF-8 text: {e}")
        }
    })
}

/// Where the first byte of `file` that is not UTF-8 is.
fn not_text_at(file: &SourceFile) -> Location {
    let bytes = file
        .bytes
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(&file.bytes);
    let at = std::str::from_utf8(bytes)
        .err()
        .map_or(0, |e| e.valid_up_to());
    // The text before it is UTF-8: its lines, and the characters of the
    // last one.
    let before = String::from_utf8_lossy(&bytes[..at.min(bytes.len())]);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    file_location(file, Some(line), Some(column))
}

fn origin(file: &SourceFile) -> Arc<Path> {
    Arc::from(file.origin.as_path())
}

fn file_location(file: &SourceFile, line: Option<usize>, column: Option<usize>) -> Location {
    Location {
        file: file.origin.clone(),
        line: Some(line.unwrap_or(1) + file.line_offset),
        column: column.map(|c| c + file.column_offset),
    }
}

/// One kustomization being built.
struct Kz<'a> {
    dir: String,
    file: &'a SourceFile,
    origin: Arc<Path>,
    text: &'a str,
    positions: Positions,
    k: Kustomization,
}

impl Kz<'_> {
    fn is_component(&self) -> bool {
        self.k.kind == "Component"
    }

    /// Where the node at `pointer` of the kustomization is.
    fn src(&self, pointer: &str) -> Src {
        let (line, column) = self.positions.nearest(pointer).unwrap_or((1, 1));
        Src::new(
            &self.origin,
            line + self.file.line_offset,
            column + self.file.column_offset,
        )
    }

    fn loc(&self, pointer: &str) -> Location {
        self.src(pointer).location()
    }

    fn err(&self, rule: &'static Rule, pointer: &str, message: impl Into<String>) -> Box<Error> {
        error(rule, message, self.loc(pointer))
    }

    /// Resolves a file reference of the kustomization; files must be in
    /// or below its folder.
    fn path(&self, rel: &str, pointer: &str) -> Result<String> {
        match join(&self.dir, rel) {
            Some(p) if within(&self.dir, &p) => Ok(p),
            _ => Err(self.err(
                rule::KUSTOMIZE_FILE_MISSING,
                pointer,
                format!("`{rel}` is outside the kustomization's folder; Kustomize only reads files in or below it"),
            )),
        }
    }

    fn read<'f>(
        &self,
        files: &Recording<'f>,
        rel: &str,
        pointer: &str,
    ) -> Result<(String, &'f SourceFile)> {
        let path = self.path(rel, pointer)?;
        match files.file(&path) {
            Some(f) => Ok((path, f)),
            None => Err(self.err(
                rule::KUSTOMIZE_FILE_MISSING,
                pointer,
                format!("`{rel}` does not exist"),
            )),
        }
    }

    /// The provenance of an inline string field (a patch written in the
    /// kustomization): a block scalar maps line for line.
    fn inline(&self, pointer: &str, value: &Value, positions: &Positions) -> Prov {
        let at = self.src(pointer);
        let Some((line, _)) = self.positions.get(pointer) else {
            return Prov::uniform(value, &at);
        };
        let Some((line, indent)) = yaml::block_scalar_start(self.text, line) else {
            return Prov::uniform(value, &at);
        };
        Prov::from_positions(
            value,
            positions,
            &self.origin,
            line + self.file.line_offset,
            indent + self.file.column_offset,
        )
    }
}

struct Builder<'a, 'c> {
    files: &'a Recording<'a>,
    cache: &'c mut Cache,
    stack: Vec<String>,
}

/// Renames the key `e` says is unknown to the field it names in another
/// case (`unknown field `Literals`, expected one of `name`, `literals`…`),
/// when there is one; whether it did.
fn rename_folded(value: &mut Value, e: &serde_path_to_error::Error<serde_json::Error>) -> bool {
    let message = e.inner().to_string();
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return false;
    };
    let Some((unknown, expected)) = rest.split_once('`') else {
        return false;
    };
    let Some(field) = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .find(|f| f.eq_ignore_ascii_case(unknown))
    else {
        return false;
    };
    let mut node = &mut *value;
    for seg in e.path().iter() {
        let next = match seg {
            serde_path_to_error::Segment::Seq { index } => node.get_mut(*index),
            serde_path_to_error::Segment::Map { key } if key != unknown => {
                node.get_mut(key.as_str())
            }
            _ => Some(node),
        };
        match next {
            Some(n) => node = n,
            None => return false,
        }
    }
    let Some(map) = node.as_object_mut() else {
        return false;
    };
    if map.contains_key(field) {
        return false;
    }
    match map.remove(unknown) {
        Some(v) => {
            map.insert(field.to_string(), v);
            true
        }
        None => false,
    }
}

/// Parses the resource documents of a file.
fn resources_of(file: &SourceFile, path: &str) -> Result<Vec<Res>> {
    let text = text(file).map_err(|m| error(rule::MANIFEST_YAML_INVALID, m, not_text_at(file)))?;
    if let Some((line, message)) = yaml::kubernetes_stream_problem(text) {
        return Err(error(
            rule::MANIFEST_YAML_INVALID,
            format!("`{path}`: {message}"),
            file_location(file, Some(line), Some(1)),
        ));
    }
    let docs = yaml::documents_with_positions(text).map_err(|e| {
        error(
            rule::MANIFEST_YAML_INVALID,
            format!("`{path}` is not valid YAML: {}", e.message),
            file_location(file, e.line, e.column),
        )
    })?;
    if let Some((line, column, key)) = yaml::non_string_keys(text, false).into_iter().next() {
        return Err(non_string_key(
            rule::MANIFEST_YAML_INVALID,
            file,
            path,
            (line, column),
            &key,
        ));
    }
    let origin = origin(file);
    let mut queue: std::collections::VecDeque<(Value, Prov)> = docs
        .into_iter()
        // An empty document (`{}`) is skipped, as a null one is.
        .filter(|d| !d.value.as_object().is_some_and(|m| m.is_empty()))
        .map(|d| {
            let d = d.as_kubernetes_reads_it();
            let p = Prov::from_positions(
                &d.value,
                &d.positions,
                &origin,
                file.line_offset,
                file.column_offset,
            );
            (d.value, p)
        })
        .collect();
    let mut out = Vec::new();
    while let Some((value, prov)) = queue.pop_front() {
        let at = prov.at.location();
        let Value::Object(map) = &value else {
            return Err(error(
                rule::MANIFEST_YAML_INVALID,
                format!("a document of `{path}` is not a map (a Kubernetes object)"),
                at,
            ));
        };
        let kind = map.get("kind").and_then(Value::as_str).unwrap_or_default();
        if kind.ends_with("List") {
            match map.get("items") {
                Some(Value::Array(items)) => {
                    for (i, item) in items.iter().enumerate() {
                        // An empty item (`{}`) is skipped, as an empty
                        // document is.
                        if item.as_object().is_some_and(|m| m.is_empty()) {
                            continue;
                        }
                        let p = prov
                            .key("items")
                            .and_then(|p| p.index(i))
                            .cloned()
                            .unwrap_or_else(|| Prov::uniform(item, &prov.at));
                        queue.push_back((item.clone(), p));
                    }
                    continue;
                }
                Some(Value::Null) => continue,
                Some(_) => {
                    return Err(error(
                        rule::MANIFEST_YAML_INVALID,
                        format!("`items` of the {kind} in `{path}` is not a list"),
                        at,
                    ))
                }
                None => {}
            }
        }
        if kind.is_empty() {
            return Err(error(
                rule::MANIFEST_YAML_INVALID,
                format!("an object in `{path}` has no kind"),
                at,
            ));
        }
        match value.pointer("/metadata/name") {
            Some(Value::String(name)) if !name.is_empty() => {}
            // `name: 0123` reads as the number 83: the API server refuses a
            // name that is not a string.
            Some(name @ (Value::Number(_) | Value::Bool(_))) => {
                let at = prov
                    .key("metadata")
                    .and_then(|m| m.key("name"))
                    .map_or(at, |p| p.at.location());
                let mut e = error(
                    rule::MANIFEST_YAML_INVALID,
                    format!(
                        "the metadata.name of a {kind} in `{path}` is not text: it reads as {name}"
                    ),
                    at,
                );
                e.help =
                    Some("quote the name (`name: \"0123\"`): Kubernetes names are strings".into());
                return Err(e);
            }
            _ => {
                return Err(error(
                    rule::MANIFEST_YAML_INVALID,
                    format!("a {kind} in `{path}` has no metadata.name"),
                    at,
                ))
            }
        }
        out.push(Res::new(value, prov));
    }
    Ok(out)
}

/// A map key that YAML reads as a number, a boolean or null: Kubernetes
/// keys are text, and `kubectl kustomize` stops on it.
fn non_string_key(
    rule: &'static Rule,
    file: &SourceFile,
    path: &str,
    (line, column): (usize, usize),
    key: &str,
) -> Box<Error> {
    let mut e = error(
        rule,
        format!("the key `{key}` in `{path}` reads as a number, a boolean or null, not text, and kubectl kustomize stops on it"),
        file_location(file, Some(line), Some(column)),
    );
    e.help = Some(format!("quote the key: `\"{key}\": …`"));
    e
}

/// Adds resources, refusing an id that is already there: `seen` holds the
/// [comparable](Id::comparable) ids of `all`, so that adding n resources
/// takes time in n, not n².
fn append(all: &mut Vec<Res>, seen: &mut HashSet<Id>, new: Vec<Res>, at: &Location) -> Result<()> {
    if let Some(id) = first_repeated(seen, &new) {
        return Err(error(
            rule::KUSTOMIZE_DUPLICATE_RESOURCE,
            format!("{id} is already in the build (a resource may be added only once)"),
            at.clone(),
        ));
    }
    all.extend(new);
    Ok(())
}

/// Refuses two resources with one id once `what` (a transformer) changed
/// ids: `kubectl kustomize` stops with an id conflict, and `apply` could
/// only keep one of them.
fn unique(all: &[Res], at: &Location, what: &str) -> Result<()> {
    match first_repeated(&mut HashSet::with_capacity(all.len()), all) {
        Some(id) => Err(error(
            rule::KUSTOMIZE_DUPLICATE_RESOURCE,
            format!("{what} makes two resources {id} (kubectl stops with an id conflict)"),
            at.clone(),
        )),
        None => Ok(()),
    }
}

/// The first id of `resources` that `seen` (comparable ids) has already,
/// adding the others to it.
fn first_repeated(seen: &mut HashSet<Id>, resources: &[Res]) -> Option<Id> {
    resources
        .iter()
        .map(Res::cur)
        .find(|id| !seen.insert(id.clone().comparable()))
}

/// Makes the provenance of a patch document from its positions.
type ProvOf<'a> = Box<dyn Fn(&Value, &Positions) -> Prov + 'a>;

/// A patch read from `path` or from the inline `patch`.
struct PatchText {
    parsed: Parsed,
    name: String,
}

impl<'a> Builder<'a, '_> {
    fn load(&self, dir: &str) -> Result<Kz<'a>> {
        let mut found = Vec::new();
        for name in KUSTOMIZATION_FILES {
            let path = join(dir, name).unwrap_or_default();
            if let Some(f) = self.files.file(&path) {
                found.push(f);
            }
        }
        let shown = if dir.is_empty() { "." } else { dir };
        let file = match found.as_slice() {
            [f] => *f,
            [] => {
                return Err(error(
                    rule::KUSTOMIZE_FILE_MISSING,
                    format!("folder `{shown}` has no kustomization.yaml"),
                    Location::file(shown),
                ))
            }
            [.., f] => {
                return Err(error(
                    rule::KUSTOMIZATION_INVALID,
                    format!("folder `{shown}` has more than one kustomization file"),
                    file_location(f, None, None),
                ))
            }
        };
        let text =
            text(file).map_err(|m| error(rule::KUSTOMIZATION_INVALID, m, not_text_at(file)))?;
        let invalid = |e: yaml::Error| {
            error(
                rule::KUSTOMIZATION_INVALID,
                format!("invalid kustomization: {}", e.message),
                file_location(file, e.line, e.column),
            )
        };
        let doc = yaml::documents_with_positions(text)
            .map_err(invalid)?
            .into_iter()
            .next();
        // Read as YAML 1.1, where `on:` and `y:` are booleans too.
        if let Some((line, column, key)) = yaml::non_string_keys(text, true).into_iter().next() {
            let name = file.origin.display().to_string();
            return Err(non_string_key(
                rule::KUSTOMIZATION_INVALID,
                file,
                &name,
                (line, column),
                &key,
            ));
        }
        let (mut value, positions) = match doc {
            Some(d) => (d.value, d.positions),
            None => (Value::Object(Default::default()), Positions::default()),
        };
        // Kustomize reads the kustomization as YAML 1.1, where a plain
        // `yes` or `on` is a boolean and `010` the number 8.
        for (pointer, v) in yaml::yaml11_scalars(text) {
            if let Some(node) = value.pointer_mut(&pointer) {
                *node = v;
            }
        }
        // Go's decoder, which Kustomize reads with, takes a field's name in
        // any case (`patchesJSON6902`, `Literals`): each such key is
        // renamed to the field's, as serde names it, and read again.
        let mut renames = 0;
        let k: Kustomization = loop {
            match serde_path_to_error::deserialize::<_, Kustomization>(&value) {
                Err(e) if renames < 64 && rename_folded(&mut value, &e) => renames += 1,
                other => break other,
            }
        }
        .map_err(|e| {
            let mut pointer = String::new();
            for seg in e.path().iter() {
                match seg {
                    serde_path_to_error::Segment::Seq { index } => {
                        pointer.push_str(&format!("/{index}"))
                    }
                    serde_path_to_error::Segment::Map { key } => {
                        pointer.push('/');
                        pointer.push_str(&yaml::pointer_segment(key));
                    }
                    _ => {}
                }
            }
            let (line, column) = positions.nearest(&pointer).unzip();
            let field = e.path().to_string();
            let message = e.into_inner().to_string();
            let message = if field == "." {
                format!("invalid kustomization: {message}")
            } else {
                format!("invalid kustomization: `{field}`: {message}")
            };
            error(
                rule::KUSTOMIZATION_INVALID,
                message,
                file_location(file, line, column),
            )
        })?;
        let kz = Kz {
            dir: dir.to_string(),
            file,
            origin: origin(file),
            text,
            positions,
            k,
        };
        if kz.k.is_empty() {
            return Err(kz.err(
                rule::KUSTOMIZATION_INVALID,
                "",
                "the kustomization is empty",
            ));
        }
        match kz.k.kind.as_str() {
            "" | "Kustomization" | "Component" => {}
            other => {
                return Err(kz.err(
                    rule::KUSTOMIZATION_INVALID,
                    "/kind",
                    format!("kind `{other}` is not Kustomization"),
                ))
            }
        }
        // Kustomize refuses a kustomization written for another version of
        // its format (after taking a missing kind for Kustomization).
        let expected = match kz.k.kind.as_str() {
            "Component" => "kustomize.config.k8s.io/v1alpha1",
            _ => "kustomize.config.k8s.io/v1beta1",
        };
        if !kz.k.api_version.is_empty() && kz.k.api_version != expected {
            let kind = if kz.k.kind.is_empty() {
                "Kustomization"
            } else {
                kz.k.kind.as_str()
            };
            let mut e = kz.err(
                rule::KUSTOMIZATION_INVALID,
                "/apiVersion",
                format!(
                    "apiVersion `{}` is not the one of a {kind}, so Kustomize refuses it",
                    kz.k.api_version
                ),
            );
            e.help = Some(format!(
                "Write `apiVersion: {expected}`, or leave the line out."
            ));
            return Err(e);
        }
        if let Some(field) = kz.k.unsupported().first() {
            return Err(kz.err(
                rule::KUSTOMIZE_UNSUPPORTED,
                &format!("/{field}"),
                format!("basepress does not build `{field}`"),
            ));
        }
        Ok(kz)
    }

    /// Builds the kustomization in `dir`, without the steps done once at
    /// the top; from the cache when the files are as they were.
    fn accumulate(&mut self, dir: &str) -> Result<Vec<Res>> {
        if let Some((reads, result)) = self.cache.lookup(dir, self.files.inner()) {
            self.files.replay(&reads);
            return Ok(result);
        }
        self.files.push();
        let result = self.accumulate_files(dir);
        let reads = self.files.pop();
        // Only folders that others include are worth keeping (the base of
        // many overlays), not the folder being built.
        let included = self.stack.len() > 1;
        if let (Ok(r), true) = (&result, included) {
            self.cache.store(dir, reads, r.clone());
        }
        result
    }

    fn accumulate_files(&mut self, dir: &str) -> Result<Vec<Res>> {
        let kz = self.load(dir)?;
        // A component is built into the resources of the kustomization
        // that lists it, never on its own below another one.
        if kz.is_component() && self.stack.len() > 1 {
            return Err(kz.err(
                rule::KUSTOMIZE_BUILD_INVALID,
                "/kind",
                format!(
                    "`{dir}` is a Component, listed under `resources`: list it under `components` instead"
                ),
            ));
        }
        let mut all = Vec::new();
        self.target(&kz, &mut all)?;
        Ok(all)
    }

    /// Builds a kustomization onto `all`: empty for a kustomization, the
    /// resources built so far for a component. Like Kustomize: its
    /// resources, its generators, its components, then its transformers
    /// over everything.
    fn target(&mut self, kz: &Kz, all: &mut Vec<Res>) -> Result<()> {
        let dir = kz.dir.as_str();
        let mut seen: HashSet<Id> = all.iter().map(|r| r.cur().comparable()).collect();
        let entries = kz.k.resources.iter().map(|r| ("resources", r));
        let entries: Vec<_> = entries
            .chain(kz.k.bases.iter().map(|b| ("bases", b)))
            .collect();
        let mut index = (0, 0);
        for (field, entry) in entries {
            let i = if field == "resources" {
                &mut index.0
            } else {
                &mut index.1
            };
            let pointer = format!("/{field}/{i}");
            *i += 1;
            if entry.contains("://")
                || entry.starts_with("github.com/")
                || entry.starts_with("git@")
            {
                return Err(kz.err(
                    rule::KUSTOMIZE_UNSUPPORTED,
                    &pointer,
                    format!("`{entry}` is a remote resource; basepress builds local files only"),
                ));
            }
            let Some(path) = join(dir, entry) else {
                return Err(kz.err(
                    rule::KUSTOMIZE_FILE_MISSING,
                    &pointer,
                    format!("`{entry}` is outside the files basepress was given"),
                ));
            };
            let at = kz.loc(&pointer);
            if let Some(file) = self.files.file(&path) {
                if !within(dir, &path) {
                    return Err(kz.err(
                        rule::KUSTOMIZE_FILE_MISSING,
                        &pointer,
                        format!("`{entry}` is outside the kustomization's folder; Kustomize only reads files in or below it"),
                    ));
                }
                append(all, &mut seen, resources_of(file, entry)?, &at)?;
            } else if self.files.is_dir(&path) {
                if self.stack.contains(&path) || self.stack.len() >= MAX_DEPTH {
                    return Err(kz.err(
                        rule::KUSTOMIZE_BUILD_INVALID,
                        &pointer,
                        format!("`{entry}` includes itself (a cycle of kustomizations)"),
                    ));
                }
                self.stack.push(path.clone());
                let sub = self.accumulate(&path);
                self.stack.pop();
                append(all, &mut seen, sub?, &at)?;
            } else {
                return Err(kz.err(
                    rule::KUSTOMIZE_FILE_MISSING,
                    &pointer,
                    format!("`{entry}` is neither a file nor a folder with a kustomization"),
                ));
            }
        }
        self.generators(kz, all)?;
        self.components(kz, all)?;
        self.transformers(kz, all)?;
        // A patch that moved a resource onto another's id (kubectl stops
        // there too).
        unique(all, &kz.loc(""), "a patch")?;
        Ok(())
    }

    /// Builds each of the kustomization's `components` onto `all`.
    fn components(&mut self, kz: &Kz, all: &mut Vec<Res>) -> Result<()> {
        for (i, entry) in kz.k.components.iter().enumerate() {
            let pointer = format!("/components/{i}");
            let path = match join(&kz.dir, entry) {
                Some(path) if self.files.is_dir(&path) => path,
                Some(path) if self.files.file(&path).is_some() => {
                    return Err(kz.err(
                        rule::KUSTOMIZE_BUILD_INVALID,
                        &pointer,
                        format!("`{entry}` is a file; a component is a folder with a kustomization of kind Component"),
                    ))
                }
                _ => {
                    return Err(kz.err(
                        rule::KUSTOMIZE_FILE_MISSING,
                        &pointer,
                        format!("component `{entry}` is not a folder basepress was given"),
                    ))
                }
            };
            if self.stack.contains(&path) || self.stack.len() >= MAX_DEPTH {
                return Err(kz.err(
                    rule::KUSTOMIZE_BUILD_INVALID,
                    &pointer,
                    format!("`{entry}` includes itself (a cycle of kustomizations)"),
                ));
            }
            let sub = self.load(&path)?;
            if !sub.is_component() {
                return Err(kz.err(
                    rule::KUSTOMIZE_BUILD_INVALID,
                    &pointer,
                    format!("`{entry}` is a Kustomization, listed under `components`: a component's kustomization has `kind: Component` (list a Kustomization under `resources`)"),
                ));
            }
            self.stack.push(path);
            let built = self.target(&sub, all);
            self.stack.pop();
            built?;
        }
        Ok(())
    }

    fn generators(&self, kz: &Kz, all: &mut Vec<Res>) -> Result<()> {
        let cms =
            kz.k.config_map_generator
                .iter()
                .map(|a| ("configMapGenerator", GeneratorArgs::from(a)));
        let secrets =
            kz.k.secret_generator
                .iter()
                .map(|a| ("secretGenerator", GeneratorArgs::from(a)));
        let mut counts = (0, 0);
        for (field, args) in cms.chain(secrets).collect::<Vec<_>>() {
            let i = if field == "configMapGenerator" {
                &mut counts.0
            } else {
                &mut counts.1
            };
            let pointer = format!("/{field}/{i}");
            *i += 1;
            let res = self.generate(kz, &pointer, &args, field == "secretGenerator")?;
            absorb(kz, &pointer, &args.behavior, all, res)?;
        }
        Ok(())
    }

    fn generate(&self, kz: &Kz, pointer: &str, args: &GeneratorArgs, secret: bool) -> Result<Res> {
        let bad = |p: &str, m: String| kz.err(rule::KUSTOMIZE_GENERATOR_INVALID, p, m);
        if args.name.is_empty() {
            return Err(bad(pointer, "a generator needs a `name`".into()));
        }
        // Like Kustomize, an unknown behavior means `create`.
        let mut pairs: Vec<Pair> = Vec::new();
        let mut envs = args
            .envs
            .iter()
            .enumerate()
            .map(|(j, e)| (format!("{pointer}/envs/{j}"), e))
            .collect::<Vec<_>>();
        if !args.env.is_empty() {
            envs.push((format!("{pointer}/env"), &args.env));
        }
        for (p, env) in envs {
            let (_, file) = kz.read(self.files, env, &p)?;
            let origin = origin(file);
            let (offset, indent) = (file.line_offset, file.column_offset);
            let more = generate::env_pairs(&file.bytes, |line| {
                Src::new(&origin, line + offset, 1 + indent)
            })
            .map_err(|(line, rule, m)| {
                error(
                    rule,
                    format!("env file `{env}`: {m}"),
                    file_location(file, Some(line), Some(1)),
                )
            })?;
            pairs.extend(more);
        }
        for (j, lit) in args.literals.iter().enumerate() {
            let p = format!("{pointer}/literals/{j}");
            let (key, value) = generate::literal(lit).map_err(|m| bad(&p, m))?;
            pairs.push(Pair {
                key,
                value: value.into_bytes(),
                at: kz.src(&p),
            });
        }
        for (j, source) in args.files.iter().enumerate() {
            let p = format!("{pointer}/files/{j}");
            let (key, path) = generate::file_source(source).map_err(|m| bad(&p, m))?;
            let (_, file) = kz.read(self.files, &path, &p)?;
            pairs.push(Pair {
                key,
                value: file.bytes.clone(),
                at: kz.src(&p),
            });
        }
        let mut seen = std::collections::BTreeMap::new();
        for pair in &pairs {
            if !generate::is_config_key(&pair.key) {
                return Err(error(
                    rule::KUSTOMIZE_GENERATOR_KEY_INVALID,
                    format!(
                        "`{}` is not a valid key: use letters, digits, `-`, `_` and `.`",
                        pair.key
                    ),
                    pair.at.location(),
                ));
            }
            // Kustomize writes the key unquoted and reads it back as a
            // number, a boolean, a date or null: `kubectl kustomize` stops.
            if yaml::go_reads_as_non_string(&pair.key) {
                let mut e = error(
                    rule::KUSTOMIZE_GENERATOR_KEY_INVALID,
                    format!(
                        "the key `{}` reads as a number, a boolean, a date or null in YAML, and kubectl kustomize stops on a generated key like it (`json: unsupported type`)",
                        pair.key
                    ),
                    pair.at.location(),
                );
                e.help = Some(format!(
                    "use a key that starts with a letter (`port-{}`), or write the {} as a resource file with the key quoted (`\"{}\": …`)",
                    pair.key,
                    if secret { "Secret" } else { "ConfigMap" },
                    pair.key
                ));
                return Err(e);
            }
            if seen.insert(pair.key.clone(), ()).is_some() {
                return Err(error(
                    rule::KUSTOMIZE_GENERATOR_INVALID,
                    format!(
                        "{} `{}` repeats the key `{}`",
                        if secret { "Secret" } else { "ConfigMap" },
                        args.name,
                        pair.key
                    ),
                    pair.at.location(),
                ));
            }
        }
        // Pairs go in key order, as Kustomize sorts them.
        pairs.sort_by(|a, b| a.key.cmp(&b.key));
        let options =
            GeneratorOptions::merged(args.options.as_ref(), kz.k.generator_options.as_ref());
        let secret_type = secret.then_some(args.secret_type.as_str());
        let g = generate::object(
            &args.name,
            &args.namespace,
            secret_type,
            &pairs,
            &options.labels,
            &options.annotations,
            options.immutable,
            &kz.src(&format!("{pointer}/name")),
        );
        let mut res = Res::new(g.value, g.prov);
        res.needs_hash = !options.disable_name_suffix_hash;
        Ok(res)
    }

    /// The patch an entry gives, from its file or inline. An inline patch
    /// of `patches` (`trimmed`) loses the blanks at its end, as Kustomize
    /// trims it: a block scalar that ends it has no final line break.
    fn patch_text(
        &self,
        kz: &Kz,
        pointer: &str,
        args: &PatchArgs,
        trimmed: bool,
    ) -> Result<PatchText> {
        let bad = |m: String| kz.err(rule::KUSTOMIZE_PATCH_INVALID, pointer, m);
        let (text, positions_of, name): (&str, ProvOf<'_>, String) =
            match (args.path.is_empty(), args.patch.trim().is_empty()) {
                (true, true) => return Err(bad("a patch needs `path` or `patch`".into())),
                (false, false) => {
                    return Err(bad("a patch has both `path` and `patch`; keep one".into()))
                }
                (false, true) => {
                    let (_, file) = kz.read(self.files, &args.path, &format!("{pointer}/path"))?;
                    let text = text(file).map_err(|m| bad(format!("`{}`: {m}", args.path)))?;
                    let origin = origin(file);
                    let (offset, indent) = (file.line_offset, file.column_offset);
                    let f = move |v: &Value, p: &Positions| {
                        Prov::from_positions(v, p, &origin, offset, indent)
                    };
                    (text, Box::new(f), format!("`{}`", args.path))
                }
                (true, false) => {
                    let p = format!("{pointer}/patch");
                    let f = move |v: &Value, pos: &Positions| kz.inline(&p, v, pos);
                    let text = match trimmed {
                        true => args.patch.trim_end(),
                        false => args.patch.as_str(),
                    };
                    (text, Box::new(f), "the inline patch".into())
                }
            };
        let parsed = parse_patch(text, &*positions_of).map_err(|m| bad(format!("{name}: {m}")))?;
        Ok(PatchText { parsed, name })
    }

    fn transformers(&self, kz: &Kz, all: &mut Vec<Res>) -> Result<()> {
        let k = &kz.k;
        // patchesStrategicMerge: each entry a file, or an inline patch.
        for (i, entry) in k.patches_strategic_merge.iter().enumerate() {
            let pointer = format!("/patchesStrategicMerge/{i}");
            let inline = entry.contains('\n') || entry.trim_start().starts_with('{');
            let args = if inline {
                PatchArgs {
                    patch: entry.clone(),
                    ..PatchArgs::default()
                }
            } else {
                PatchArgs {
                    path: entry.clone(),
                    ..PatchArgs::default()
                }
            };
            let pt = if inline {
                self.patch_text_inline_psm(kz, &pointer, entry)?
            } else {
                self.patch_text(kz, &pointer, &args, false)?
            };
            let Parsed::Strategic(docs) = pt.parsed else {
                return Err(kz.err(
                    rule::KUSTOMIZE_PATCH_INVALID,
                    &pointer,
                    format!("{} is not a strategic merge patch", pt.name),
                ));
            };
            for (doc, prov) in docs {
                strategic_by_id(all, &doc, &prov, false, false)?;
            }
        }
        for (i, args) in k.patches.iter().enumerate() {
            let pointer = format!("/patches/{i}");
            let pt = self.patch_text(kz, &pointer, args, true)?;
            let allow_name = args
                .options
                .get("allowNameChange")
                .copied()
                .unwrap_or(false);
            let allow_kind = args
                .options
                .get("allowKindChange")
                .copied()
                .unwrap_or(false);
            match (pt.parsed, &args.target) {
                (Parsed::Strategic(docs), Some(target)) => {
                    if docs.len() > 1 {
                        return Err(kz.err(
                            rule::KUSTOMIZE_PATCH_INVALID,
                            &pointer,
                            format!("{} has several documents, which a patch with `target` may not have", pt.name),
                        ));
                    }
                    let selected = select(kz, &pointer, all, target)?;
                    if let Some((doc, prov)) = docs.first() {
                        let doc = targeted_metadata(doc);
                        strategic_on(all, &selected, &doc, prov, allow_name, allow_kind)?;
                    }
                }
                (Parsed::Strategic(docs), None) => {
                    for (doc, prov) in docs {
                        strategic_by_id(all, &doc, &prov, allow_name, allow_kind)?;
                    }
                }
                (Parsed::Json(ops), Some(target)) => {
                    let selected = select(kz, &pointer, all, target)?;
                    for i in selected {
                        all[i].store_prev();
                        json_on(&mut all[i], &ops).map_err(|(m, at)| {
                            error(
                                rule::KUSTOMIZE_PATCH_INVALID,
                                format!("{}: {m}", pt.name),
                                at,
                            )
                        })?;
                    }
                }
                (Parsed::Json(_), None) => {
                    return Err(kz.err(
                        rule::KUSTOMIZE_PATCH_INVALID,
                        &pointer,
                        format!("{} is a JSON 6902 patch, which needs a `target`", pt.name),
                    ))
                }
            }
        }
        if !k.namespace.is_empty() {
            let src = kz.src("/namespace");
            for r in all.iter_mut() {
                transform::namespace(r, &k.namespace, &src)
                    .map_err(|m| kz.err(rule::KUSTOMIZE_BUILD_INVALID, "/namespace", m))?;
            }
            unique(all, &kz.loc("/namespace"), "the namespace transformer")?;
        }
        if !k.name_prefix.is_empty() {
            let src = kz.src("/namePrefix");
            for r in all.iter_mut() {
                transform::rename(r, &k.name_prefix, true, &src);
            }
        }
        if !k.name_suffix.is_empty() {
            let src = kz.src("/nameSuffix");
            for r in all.iter_mut() {
                transform::rename(r, &k.name_suffix, false, &src);
            }
        }
        for (i, label) in k.labels.iter().enumerate() {
            let pointer = format!("/labels/{i}");
            let mut defaults: Vec<FieldSpec> = Vec::new();
            if label.include_selectors {
                defaults.extend(transform::common_labels());
            } else {
                if label.include_templates {
                    defaults.extend(transform::template_labels());
                }
                defaults.push(FieldSpec {
                    group: String::new(),
                    version: String::new(),
                    kind: String::new(),
                    path: "metadata/labels".into(),
                    create: true,
                });
            }
            let mut specs: Vec<FieldSpec> = label
                .fields
                .iter()
                .map(|f| FieldSpec {
                    group: f.group.clone(),
                    version: f.version.clone(),
                    kind: f.kind.clone(),
                    path: f.path.clone(),
                    create: f.create,
                })
                .collect();
            // Kustomize merges its fields into the entry's, one by one: a
            // field the entry (or an earlier one) already has is dropped,
            // or a conflict with another `create`. The same field is one
            // at the same path of objects the new field's kind, group and
            // version (those given) select.
            for d in defaults {
                let same = specs.iter().position(|s| {
                    s.path == d.path
                        && [
                            (&s.group, &d.group),
                            (&s.version, &d.version),
                            (&s.kind, &d.kind),
                        ]
                        .iter()
                        .all(|(have, wants)| wants.is_empty() || have == wants)
                });
                match same {
                    None => specs.push(d),
                    Some(j) if specs[j].create != d.create => {
                        let at = if j < label.fields.len() {
                            format!("{pointer}/fields/{j}")
                        } else {
                            pointer.clone()
                        };
                        return Err(kz.err(
                            rule::KUSTOMIZE_BUILD_INVALID,
                            &at,
                            format!(
                                "`{}` is a field the labels go to already, with `create: {}`: Kustomize refuses the conflicting fieldspecs",
                                d.path, d.create
                            ),
                        ));
                    }
                    Some(_) => {}
                }
            }
            let pairs: Vec<(String, String, Src)> = label
                .pairs
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.clone(),
                        kz.src(&format!("{pointer}/pairs/{}", yaml::pointer_segment(k))),
                    )
                })
                .collect();
            for r in all.iter_mut() {
                transform::add_pairs(r, &pairs, &specs)
                    .map_err(|m| kz.err(rule::KUSTOMIZE_BUILD_INVALID, &pointer, m))?;
            }
        }
        if !k.common_labels.is_empty() {
            let pairs = pairs_of(kz, "/commonLabels", &k.common_labels);
            let specs = transform::common_labels();
            for r in all.iter_mut() {
                transform::add_pairs(r, &pairs, &specs)
                    .map_err(|m| kz.err(rule::KUSTOMIZE_BUILD_INVALID, "/commonLabels", m))?;
            }
        }
        if !k.common_annotations.is_empty() {
            let pairs = pairs_of(kz, "/commonAnnotations", &k.common_annotations);
            let specs = transform::common_annotations();
            for r in all.iter_mut() {
                transform::add_pairs(r, &pairs, &specs)
                    .map_err(|m| kz.err(rule::KUSTOMIZE_BUILD_INVALID, "/commonAnnotations", m))?;
            }
        }
        for (i, args) in k.patches_json6902.iter().enumerate() {
            let pointer = format!("/patchesJson6902/{i}");
            let Some(target) = args.target.as_ref().filter(|t| !t.name.is_empty()) else {
                return Err(kz.err(
                    rule::KUSTOMIZE_PATCH_INVALID,
                    &pointer,
                    "a patchesJson6902 entry needs a target with a name",
                ));
            };
            let pt = self.patch_text(kz, &pointer, args, false)?;
            let Parsed::Json(ops) = pt.parsed else {
                return Err(kz.err(
                    rule::KUSTOMIZE_PATCH_INVALID,
                    &pointer,
                    format!("{} is not a list of JSON 6902 operations", pt.name),
                ));
            };
            for i in select(kz, &pointer, all, target)? {
                json_on(&mut all[i], &ops).map_err(|(m, at)| {
                    error(
                        rule::KUSTOMIZE_PATCH_INVALID,
                        format!("{}: {m}", pt.name),
                        at,
                    )
                })?;
            }
        }
        for (i, rep) in k.replicas.iter().enumerate() {
            let pointer = format!("/replicas/{i}");
            let src = kz.src(&format!("{pointer}/count"));
            let mut found = false;
            for kind in transform::REPLICA_KINDS {
                for r in all.iter_mut() {
                    if r.any_ids()
                        .iter()
                        .any(|id| id.name == rep.name && id.kind == *kind)
                    {
                        found = true;
                        // Matched by any id, written only if the kind still is.
                        if r.kind() == *kind {
                            transform::replicas(r, rep.count, &src)
                                .map_err(|m| kz.err(rule::KUSTOMIZE_BUILD_INVALID, &pointer, m))?;
                        }
                    }
                }
            }
            if !found {
                return Err(kz.err(
                    rule::KUSTOMIZE_REPLICAS_NO_TARGET,
                    &pointer,
                    format!("no Deployment, ReplicaSet, ReplicationController or StatefulSet is named `{}`", rep.name),
                ));
            }
        }
        for (i, img) in k.images.iter().chain(&k.image_tags).enumerate() {
            let pointer = if i < k.images.len() {
                format!("/images/{i}")
            } else {
                format!("/imageTags/{}", i - k.images.len())
            };
            let rule = ImageRule::new(
                &img.name,
                &img.new_name,
                &img.new_tag,
                &img.digest,
                &img.tag_suffix,
            )
            .map_err(|m| kz.err(rule::KUSTOMIZE_BUILD_INVALID, &pointer, m))?;
            let src = kz.src(&pointer);
            for r in all.iter_mut() {
                transform::images(r, &rule, &src)
                    .map_err(|m| kz.err(rule::KUSTOMIZE_BUILD_INVALID, &pointer, m))?;
            }
        }
        for (i, entry) in k.replacements.iter().enumerate() {
            let pointer = format!("/replacements/{i}");
            for r in self.replacements_of(kz, &pointer, entry)? {
                replace::apply(all, &r, &kz.src(&pointer))
                    .map_err(|m| kz.err(rule::KUSTOMIZE_BUILD_INVALID, &pointer, m))?;
            }
        }
        Ok(())
    }

    /// An entry of `replacements`: itself, or the ones its `path` file
    /// holds (a list, or one).
    fn replacements_of(
        &self,
        kz: &Kz,
        pointer: &str,
        entry: &ReplacementArgs,
    ) -> Result<Vec<ReplacementArgs>> {
        if entry.path.is_empty() {
            return Ok(vec![entry.clone()]);
        }
        let invalid = |m: String| kz.err(rule::KUSTOMIZATION_INVALID, pointer, m);
        if entry.source.is_some() || !entry.targets.is_empty() {
            return Err(invalid(
                "a replacement has both `path` and an inline source or targets; keep one".into(),
            ));
        }
        let (_, file) = kz.read(self.files, &entry.path, &format!("{pointer}/path"))?;
        let text = text(file).map_err(|m| invalid(format!("`{}`: {m}", entry.path)))?;
        let doc = yaml::documents(text)
            .map_err(|e| invalid(format!("`{}` is not valid YAML: {}", entry.path, e.message)))?
            .into_iter()
            .next()
            .unwrap_or(Value::Null);
        let read = |v: Value| serde_json::from_value::<ReplacementArgs>(v);
        let found = match doc {
            Value::Array(items) => items.into_iter().map(read).collect(),
            map @ Value::Object(_) => read(map).map(|r| vec![r]),
            _ => {
                return Err(invalid(format!(
                    "`{}` holds no replacement: write a list of them, or one",
                    entry.path
                )))
            }
        };
        found.map_err(|e| invalid(format!("`{}`: {e}", entry.path)))
    }

    /// An inline `patchesStrategicMerge` entry.
    fn patch_text_inline_psm(&self, kz: &Kz, pointer: &str, entry: &str) -> Result<PatchText> {
        let f = |v: &Value, pos: &Positions| kz.inline(pointer, v, pos);
        let parsed = parse_patch(entry, &f)
            .map_err(|m| kz.err(rule::KUSTOMIZE_PATCH_INVALID, pointer, m))?;
        Ok(PatchText {
            parsed,
            name: "the inline patch".into(),
        })
    }
}

fn pairs_of(
    kz: &Kz,
    field: &str,
    map: &std::collections::BTreeMap<String, String>,
) -> Vec<(String, String, Src)> {
    map.iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.clone(),
                kz.src(&format!("{field}/{}", yaml::pointer_segment(k))),
            )
        })
        .collect()
}

/// Reads a patch: documents that are maps make strategic merge patches,
/// one list makes JSON 6902 operations.
fn parse_patch(
    text: &str,
    prov_of: &dyn Fn(&Value, &Positions) -> Prov,
) -> std::result::Result<Parsed, String> {
    // Kustomize reads a patch whose first character is `[` as JSON, and
    // only other text as YAML.
    let json = text.starts_with('[');
    if json {
        if let Err(e) = serde_json::from_str::<Value>(text) {
            return Err(format!(
                "the patch starts with `[`, so Kustomize reads it as JSON, and it is not \
                 valid JSON (line {} of the patch): {e}; quote its keys and strings, or \
                 write the operations as a YAML block list (`- op: add`)",
                e.line()
            ));
        }
    }
    let docs = yaml::documents_with_positions(text).map_err(|e| match e.line {
        Some(l) => format!("not valid YAML (line {l} of the patch): {}", e.message),
        None => format!("not valid YAML: {}", e.message),
    })?;
    match docs.as_slice() {
        [] => Err("the patch is empty".into()),
        [d] if d.value.is_array() => {
            let mut d = d.clone().as_kubernetes_reads_operations();
            // Kustomize reads operations written in YAML as YAML 1.1,
            // where a plain `yes` or `on` is a boolean, and a map key
            // that is one is its text (`y:` is `"true":`).
            if !json {
                for (pointer, b) in yaml::yaml11_booleans(text) {
                    if let Some(node) = d.value.pointer_mut(&pointer) {
                        *node = Value::Bool(b);
                    }
                }
                rename_yaml11_boolean_keys(&mut d.value, yaml::yaml11_boolean_keys(text));
            }
            let prov = prov_of(&d.value, &d.positions);
            let ops = patch::json_ops(&d.value, &prov)?;
            if ops.is_empty() {
                return Err("the patch has no operations".into());
            }
            Ok(Parsed::Json(ops))
        }
        docs => {
            // Strategic merge patches are read as resources are.
            if let Some((line, message)) = yaml::kubernetes_stream_problem(text) {
                return Err(format!("line {line} of the patch: {message}"));
            }
            let mut out = Vec::new();
            for d in docs {
                if !d.value.is_object() {
                    return Err(
                        "a document of the patch is neither a map nor a list of operations".into(),
                    );
                }
                // Kustomize reads each document as an object first, target
                // or not: it needs a kind and a name.
                let named = |p: &str| {
                    d.value
                        .pointer(p)
                        .and_then(Value::as_str)
                        .is_some_and(|s| !s.is_empty())
                };
                if !(named("/kind") && named("/metadata/name")) {
                    return Err(
                        "a strategic merge patch needs `kind` and `metadata.name`, even with a `target`, or Kustomize cannot read it".into(),
                    );
                }
                let d = d.clone().as_kubernetes_reads_a_patch();
                let prov = prov_of(&d.value, &d.positions);
                out.push((d.value, prov));
            }
            Ok(Parsed::Strategic(out))
        }
    }
}

/// The map keys at `pointers`, plain words that YAML 1.1 reads as
/// booleans (`y`, `no`, `on`), renamed to the text of the boolean, as
/// Kustomize's YAML-to-JSON step writes them.
fn rename_yaml11_boolean_keys(value: &mut Value, mut pointers: Vec<String>) {
    // The deepest first, so that a renamed key leaves the others' paths.
    pointers.sort_by_key(|p| std::cmp::Reverse(p.matches('/').count()));
    for pointer in pointers {
        let Some((parent, key)) = pointer.rsplit_once('/') else {
            continue;
        };
        let key = yaml::pointer_key(key);
        let (Some(b), Some(Value::Object(map))) =
            (yaml::yaml11_boolean(&key), value.pointer_mut(parent))
        else {
            continue;
        };
        if let Some(v) = map.remove(&key) {
            map.insert(b.to_string(), v);
        }
    }
}

/// The resources a target selects; none is an error of basepress's own.
fn select(kz: &Kz, pointer: &str, all: &[Res], target: &Selector) -> Result<Vec<usize>> {
    let tp = format!("{pointer}/target");
    let compiled =
        Compiled::new(target).map_err(|m| kz.err(rule::KUSTOMIZE_BUILD_INVALID, &tp, m))?;
    let selected: Vec<usize> = (0..all.len())
        .filter(|&i| compiled.selects(&all[i]))
        .collect();
    if selected.is_empty() {
        let ids: Vec<String> = all
            .iter()
            .map(|r| format!("{} {}", r.kind(), r.name()))
            .collect();
        let mut e = kz.err(
            rule::KUSTOMIZE_PATCH_TARGET_UNMATCHED,
            &tp,
            "the patch's target selects no resource, so the patch changes nothing",
        );
        e.help = Some(format!(
            "Fix the selector; the build has: {}.",
            if ids.is_empty() {
                "no resources".to_string()
            } else {
                ids.join(", ")
            }
        ));
        return Err(e);
    }
    Ok(selected)
}

/// A strategic merge patch without target: the resource it names.
fn strategic_by_id(
    all: &mut Vec<Res>,
    doc: &Value,
    prov: &Prov,
    allow_name: bool,
    allow_kind: bool,
) -> Result<()> {
    let id = Id::of(doc);
    let matches: Vec<usize> = (0..all.len())
        .filter(|&i| all[i].any_id_equals(&id))
        .collect();
    match matches.as_slice() {
        [i] => strategic_on(all, &[*i], doc, prov, allow_name, allow_kind),
        [] => {
            let ids: Vec<String> = all.iter().map(|r| r.cur().to_string()).collect();
            let mut e = error(
                rule::KUSTOMIZE_PATCH_NO_TARGET,
                format!("no resource of the build is {id}, which the patch names"),
                prov.at.location(),
            );
            e.help = Some(format!(
                "Patch one of: {}.",
                if ids.is_empty() {
                    "(no resources)".to_string()
                } else {
                    ids.join("; ")
                }
            ));
            Err(e)
        }
        _ => Err(error(
            rule::KUSTOMIZE_PATCH_NO_TARGET,
            format!("several resources match {id}, which the patch names"),
            prov.at.location(),
        )),
    }
}

fn strategic_on(
    all: &mut Vec<Res>,
    selected: &[usize],
    doc: &Value,
    prov: &Prov,
    allow_name: bool,
    allow_kind: bool,
) -> Result<()> {
    let mut deleted = Vec::new();
    for &i in selected {
        let keep = patch::apply_strategic(&mut all[i], doc, prov, allow_name, allow_kind).map_err(
            |e| {
                let at = prov.nearest(&e.pointer).at.location();
                error(
                    rule::KUSTOMIZE_PATCH_INVALID,
                    format!(
                        "the patch cannot be merged into {}: {}",
                        all[i].cur(),
                        e.message
                    ),
                    at,
                )
            },
        )?;
        if !keep {
            deleted.push(i);
        }
    }
    for i in deleted.into_iter().rev() {
        all.remove(i);
    }
    Ok(())
}

/// A strategic merge patch with a `target`, as Kustomize applies it: the
/// patch's labels and annotations go through a map of strings, so a
/// `null` value is the text `null`, and `labels: null` or
/// `annotations: null` changes nothing.
fn targeted_metadata(doc: &Value) -> Value {
    let mut doc = doc.clone();
    if let Some(meta) = doc.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in ["labels", "annotations"] {
            match meta.get_mut(key) {
                Some(Value::Null) => {
                    meta.remove(key);
                }
                Some(Value::Object(map)) => {
                    for v in map.values_mut().filter(|v| v.is_null()) {
                        *v = Value::String("null".into());
                    }
                }
                _ => {}
            }
        }
    }
    doc
}

/// JSON 6902 operations on `res`. Kustomize keeps its bookkeeping (the
/// object's earlier names, namespaces and affixes) in annotations while it
/// builds, so an object renamed, moved or generated (or patched with
/// `patches:`, which records its id first) has an annotations map for an
/// operation to add to; one left empty is gone from the output.
fn json_on(
    res: &mut Res,
    ops: &[(json_patch::PatchOperation, Prov)],
) -> std::result::Result<(), (String, Location)> {
    let kept = !res.prev.is_empty() || res.needs_hash;
    let meta = res.value.get_mut("metadata").and_then(Value::as_object_mut);
    let added = match meta {
        Some(meta) if kept && !meta.get("annotations").is_some_and(Value::is_object) => {
            meta.insert("annotations".into(), Value::Object(Default::default()));
            true
        }
        _ => false,
    };
    let applied = patch::apply_json(res, ops);
    if applied.is_ok() {
        through_float64(&mut res.value);
    }
    if added {
        if let Some(meta) = res.value.get_mut("metadata").and_then(Value::as_object_mut) {
            if meta
                .get("annotations")
                .is_some_and(|a| a.as_object().is_some_and(|m| m.is_empty()))
            {
                meta.remove("annotations");
            }
        }
    }
    applied
}

/// The numbers of an object as they come out of a trip through Go's
/// JSON, which Kustomize's JSON patch library makes: every number is a
/// float64 there, so a whole number past 2^53 is rounded, and one past
/// the 64-bit integers stays a float.
fn through_float64(value: &mut Value) {
    match value {
        Value::Number(n) => {
            const EXACT: u64 = 1 << 53;
            let wide = n.as_i64().is_some_and(|i| i.unsigned_abs() > EXACT)
                || n.as_u64().is_some_and(|u| u > EXACT);
            if !wide {
                return;
            }
            let f = n.as_f64().unwrap_or_default();
            *n = if (i64::MIN as f64..i64::MAX as f64).contains(&f) {
                (f as i64).into()
            } else {
                serde_json::Number::from_f64(f).unwrap_or_else(|| n.clone())
            };
        }
        Value::Array(items) => items.iter_mut().for_each(through_float64),
        Value::Object(map) => map.values_mut().for_each(through_float64),
        _ => {}
    }
}

/// Kustomize's last steps on what it built: objects marked
/// `config.kubernetes.io/local-config` (any value but `"false"`) are
/// dropped, the annotations it uses while it builds are removed, and so is
/// an annotations map left empty (or null).
fn finish(all: &mut Vec<Res>) -> Result<()> {
    // Kustomize keeps an object's earlier names and namespaces as lists
    // joined by commas, and panics reading back one that has a comma.
    if let Some((r, id)) = all.iter().find_map(|r| {
        r.prev
            .iter()
            .find(|id| id.name.contains(',') || id.namespace.contains(','))
            .map(|id| (r, id))
    }) {
        let mut e = error(
            rule::KUSTOMIZE_BUILD_INVALID,
            format!(
                "{id} has a comma in its name or namespace, and was renamed or moved: kubectl kustomize crashes on it (it keeps earlier names in a list joined by commas)"
            ),
            r.prov.nearest("/metadata/name").at.location(),
        );
        e.help = Some("Kubernetes names have no commas: rename the object".into());
        return Err(e);
    }
    // Kustomize reads annotations as a map of strings: it drops any other
    // value without a word (a list makes it crash), and the API server
    // would refuse one.
    for r in all.iter() {
        let kind = match r.value.pointer("/metadata/annotations") {
            None | Some(Value::Null | Value::Object(_)) => continue,
            Some(Value::Array(_)) => "a list",
            Some(_) => "a single value",
        };
        return Err(error(
            rule::KUSTOMIZE_BUILD_INVALID,
            format!(
                "`metadata.annotations` of {} is {kind}, not a map of names to text, which Kustomize cannot read",
                r.cur()
            ),
            r.prov.nearest("/metadata/annotations").at.location(),
        ));
    }
    all.retain(|r| {
        r.value
            .pointer("/metadata/annotations/config.kubernetes.io~1local-config")
            .is_none_or(|v| v.as_str() == Some("false"))
    });
    // What kubectl prints, after the local-config objects are dropped.
    for r in all.iter() {
        let Some((pointer, c)) = unwritable(&r.value, &mut String::new()) else {
            continue;
        };
        let what = if c == '\u{85}' {
            "which kubectl kustomize writes as a space (a next-line character)".to_string()
        } else {
            "a control character that kubectl kustomize refuses to write (`control characters are not allowed`)".to_string()
        };
        let mut e = error(
            rule::KUSTOMIZE_BUILD_INVALID,
            format!(
                "`{pointer}` of {} holds U+{:04X}, {what}",
                r.cur(),
                c as u32
            ),
            r.prov.nearest(&pointer).at.location(),
        );
        e.help = Some(
            "remove the character; text from a Windows-1252 file read as Latin-1 has such characters where it had quotes and dashes (U+0092 for ’)".into(),
        );
        return Err(e);
    }
    for r in all.iter_mut() {
        let Some(meta) = r.value.get_mut("metadata").and_then(Value::as_object_mut) else {
            continue;
        };
        if let Some(Value::Object(annotations)) = meta.get_mut("annotations") {
            annotations.retain(|k, _| !BUILD_ANNOTATIONS.contains(&k.as_str()));
            // Kustomize writes annotations back from a map of strings: a
            // map, a list or a null there (made by a replacement) is "",
            // a number or a boolean (a JSON patch's, a List item's) its
            // text.
            for v in annotations.values_mut() {
                match v {
                    Value::Null | Value::Object(_) | Value::Array(_) => {
                        *v = Value::String(String::new())
                    }
                    Value::Number(n) => *v = Value::String(n.to_string()),
                    Value::Bool(b) => *v = Value::String(b.to_string()),
                    Value::String(_) => {}
                }
            }
        }
        let empty = match meta.get("annotations") {
            Some(Value::Object(m)) => m.is_empty(),
            Some(Value::Null) => true,
            _ => false,
        };
        if empty {
            meta.remove("annotations");
        }
    }
    Ok(())
}

/// The annotations Kustomize removes from what it built (its own
/// bookkeeping, and the file and index kyaml records), found by building
/// objects that carry them with `kubectl kustomize`.
const BUILD_ANNOTATIONS: &[&str] = &[
    "config.kubernetes.io/path",
    "config.kubernetes.io/index",
    "config.k8s.io/id",
    "internal.config.kubernetes.io/previousKinds",
    "internal.config.kubernetes.io/previousNames",
    "internal.config.kubernetes.io/previousNamespaces",
    "internal.config.kubernetes.io/prefixes",
    "internal.config.kubernetes.io/suffixes",
    "internal.config.kubernetes.io/refBy",
    "internal.config.kubernetes.io/generatorBehavior",
    "internal.config.kubernetes.io/needsHashSuffix",
    "internal.config.kubernetes.io/index",
    "internal.config.kubernetes.io/id",
    "internal.config.kubernetes.io/path",
    "internal.config.kubernetes.io/annotations-migration-resource-id",
    "internal.config.kubernetes.io/seqindent",
];

/// Adds a generated object: created, merged into the generated object of
/// the same id, or replacing it.
fn absorb(kz: &Kz, pointer: &str, behavior: &str, all: &mut Vec<Res>, mut res: Res) -> Result<()> {
    let id = res.cur();
    let matches: Vec<usize> = (0..all.len())
        .filter(|&i| all[i].any_id_equals(&id))
        .collect();
    let missing = |what: &str| {
        kz.err(
            rule::KUSTOMIZE_GENERATOR_BASE_MISSING,
            pointer,
            format!("{id} does not exist; cannot {what} it"),
        )
    };
    match (matches.as_slice(), behavior) {
        ([], "merge") => Err(missing("merge into")),
        ([], "replace") => Err(missing("replace")),
        ([], _) => {
            all.push(res);
            Ok(())
        }
        ([i], "merge" | "replace") => {
            let old = &all[*i];
            copy_meta(old, &mut res);
            if behavior == "merge" {
                for field in ["data", "binaryData"] {
                    merge_data(old, &mut res, field);
                }
            }
            // Either side can turn the hash off.
            res.needs_hash &= old.needs_hash;
            res.prev = old.prev.clone();
            res.prefixes = old.prefixes.clone();
            res.suffixes = old.suffixes.clone();
            all[*i] = res;
            Ok(())
        }
        ([_], _) => Err(kz.err(
            rule::KUSTOMIZE_GENERATOR_BASE_MISSING,
            pointer,
            format!("{id} already exists; use `behavior: merge` or `replace`"),
        )),
        _ => Err(kz.err(
            rule::KUSTOMIZE_GENERATOR_BASE_MISSING,
            pointer,
            format!("several objects could take the merge of {id}"),
        )),
    }
}

/// Labels and annotations of `old` that `new` does not set, and `old`'s
/// name and namespace, go to `new`.
fn copy_meta(old: &Res, new: &mut Res) {
    for field in ["labels", "annotations"] {
        let Some(Value::Object(old_map)) = old.value.pointer(&format!("/metadata/{field}")) else {
            continue;
        };
        for (k, v) in old_map {
            let pointer = format!("/metadata/{field}");
            let has = new.value.pointer(&pointer).and_then(|m| m.get(k)).is_some();
            if has {
                continue;
            }
            let old_prov = old
                .prov
                .nearest(&format!("{pointer}/{}", yaml::pointer_segment(k)))
                .clone();
            let meta = &mut new.value["metadata"];
            if !meta[field].is_object() {
                meta[field] = Value::Object(Default::default());
                let at = new.prov.nearest("/metadata").at.clone();
                if let Some(m) = new.prov.key_mut("metadata") {
                    m.set_key(
                        field,
                        Prov::uniform(&Value::Object(Default::default()), &at),
                    );
                }
            }
            meta[field][k] = as_text(v);
            if let Some(p) = new.prov.at_mut(&pointer) {
                p.set_key(k, old_prov);
            }
        }
    }
    for field in ["name", "namespace"] {
        let pointer = format!("/metadata/{field}");
        match old.value.pointer(&pointer) {
            Some(v) => {
                new.value["metadata"][field] = v.clone();
                let p = old.prov.nearest(&pointer).clone();
                if let Some(m) = new.prov.key_mut("metadata") {
                    m.set_key(field, p);
                }
            }
            None => {
                if let Some(Value::Object(m)) = new.value.get_mut("metadata") {
                    m.remove(field);
                }
                if let Some(m) = new.prov.key_mut("metadata") {
                    m.remove_key(field);
                }
            }
        }
    }
}

/// A value as Kustomize carries it into a generated object, through a
/// map of strings: `4` is `"4"`, `true` `"true"`, `null` `""`.
fn as_text(v: &Value) -> Value {
    match v {
        Value::Null => Value::String(String::new()),
        Value::Number(_) | Value::Bool(_) => {
            Value::String(yaml::scalar_text(v).unwrap_or_default())
        }
        other => other.clone(),
    }
}

/// Keys of `old`'s `field` map that `new` lacks go to `new`.
fn merge_data(old: &Res, new: &mut Res, field: &str) {
    let Some(Value::Object(old_map)) = old.value.get(field) else {
        return;
    };
    if !new.value.get(field).is_some_and(Value::is_object) {
        new.value[field] = Value::Object(Default::default());
        let at = new.prov.at.clone();
        new.prov.set_key(
            field,
            Prov::uniform(&Value::Object(Default::default()), &at),
        );
    }
    for (k, v) in old_map {
        if new.value[field].get(k).is_some() {
            continue;
        }
        new.value[field][k] = as_text(v);
        let p = old
            .prov
            .nearest(&format!("/{field}/{}", yaml::pointer_segment(k)))
            .clone();
        if let Some(m) = new.prov.key_mut(field) {
            m.set_key(k, p);
        }
    }
}

/// The first key or text in `value` (its pointer below `at`, and the
/// character) with a character that Go's YAML writer, which `kubectl
/// kustomize` prints with, cannot write back as it is: DEL, the C1
/// controls, U+FFFE and U+FFFF, and U+0085, which becomes a space.
fn unwritable(value: &Value, at: &mut String) -> Option<(String, char)> {
    let bad = |s: &str| {
        s.chars()
            .find(|&c| matches!(c, '\u{7f}'..='\u{9f}' | '\u{fffe}' | '\u{ffff}'))
    };
    let len = at.len();
    let found = match value {
        Value::String(s) => bad(s).map(|c| (at.clone(), c)),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            at.truncate(len);
            at.push('/');
            at.push_str(&yaml::pointer_segment(k));
            match bad(k) {
                Some(c) => Some((at.clone(), c)),
                None => unwritable(v, at),
            }
        }),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| {
            at.truncate(len);
            at.push_str(&format!("/{i}"));
            unwritable(v, at)
        }),
        _ => None,
    };
    at.truncate(len);
    found
}

/// Builds the kustomization in folder `dir` of `files`.
pub fn run(files: &dyn Files, dir: &str, cache: &mut Cache) -> Result<Build> {
    let dir = join("", dir).unwrap_or_default();
    let recording = Recording::new(files);
    let mut b = Builder {
        files: &recording,
        cache,
        stack: vec![dir.clone()],
    };
    let mut all = b.accumulate(&dir)?;
    for r in all.iter_mut().filter(|r| r.needs_hash) {
        let h = generate::hash(&r.value);
        r.store_prev();
        let name = format!("{}-{h}", r.name());
        r.value["metadata"]["name"] = name.into();
    }
    if let Err(m) = nameref::fix(&mut all) {
        let at = b
            .load(&dir)
            .map(|kz| kz.loc(""))
            .unwrap_or_else(|e| e.location);
        return Err(error(rule::KUSTOMIZE_BUILD_INVALID, m, at));
    }
    finish(&mut all)?;
    let mut keyed: Vec<(Id, Res)> = all.into_iter().map(|r| (r.cur(), r)).collect();
    keyed.sort_by(|a, b| legacy_order(&a.0, &b.0));
    Ok(Build {
        objects: keyed
            .into_iter()
            .map(|(_, r)| Object {
                value: r.value,
                prov: r.prov,
            })
            .collect(),
    })
}
