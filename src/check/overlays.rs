//! The overlays the docs show, built on the base they document.
//!
//! A page's fenced blocks marked `file=NAME` are the files of an overlay
//! (`kustomization.yaml`, patches, env files). They are built with the
//! same Kustomize build as the bases, on the base of the release the page
//! documents, placed where the overlay's `resources` names it (`base`,
//! `./base`, `../base`). What Kustomize would refuse is reported at the
//! page's lines; the objects built go through the same checks as a base's,
//! and the findings the overlay adds (those the base alone does not have)
//! are reported too. Two mistakes Kustomize builds without complaint are
//! caught here: a strategic-merge patch naming a container or volume the
//! base does not have, and an `images:` entry naming an image the base
//! does not use. A plain YAML example that shows an object of the base
//! (an excerpt, or a change to copy into an overlay) is held to the first
//! too.

use super::docs::documented_version;
use super::Context;
use crate::diagnostics::{rule, Diagnostic, Location, Rule};
use crate::kustomize::{self, pod_spec_pointer, MemFiles, Object, SourceFile};
use crate::model::document::CodeBlock;
use crate::model::site::Page;
use crate::yaml::{self, Positions, Value};
use std::collections::HashSet;

/// The rules of [`check_page`] itself; it also raises those of the
/// Kustomize build (`kustomize::RULES`, at the page's lines) and of the
/// object checks it runs on what the overlay builds.
pub const RULES: &[&Rule] = &[
    rule::DOC_OVERLAY_INVALID,
    rule::DOC_PATCH_UNKNOWN_NAME,
    rule::DOC_IMAGE_UNKNOWN,
    rule::KUSTOMIZATION_INVALID,
    rule::MANIFEST_YAML_INVALID,
];

/// Rules about what a base must leave to overlays: an overlay is where
/// the StorageClass, the pinned image and the Secret belong.
const BASE_ONLY: &[&str] = &[
    rule::STORAGE_CLASS_SET.id,
    rule::IMAGE_NOT_BARE.id,
    rule::SECRET_IN_BASE.id,
];

/// The file a code block shows (`file=NAME`, `file=./NAME`), as the
/// overlay's folder holds it.
fn file_name(block: &CodeBlock) -> Option<&str> {
    let name = block.attr("file")?;
    Some(name.strip_prefix("./").unwrap_or(name)).filter(|n| !n.is_empty())
}

/// Whether a code block shows an overlay's kustomization: a file named as
/// Kustomize names it (`kustomization.yaml`, `kustomization.yml`,
/// `Kustomization`).
pub(super) fn is_kustomization(block: &CodeBlock) -> bool {
    file_name(block).is_some_and(|f| kustomize::KUSTOMIZATION_FILES.contains(&f))
}

/// The folder of the overlay in the build.
const OVERLAY: &str = "overlay";

/// How an overlay may name the base in `resources`.
const BASE_NAMES: &[&str] = &["base", "./base", "../base"];

/// A finding's identity, to tell what an overlay adds to its base's.
pub type Key = (&'static str, String, Option<Location>);

pub fn key(d: &Diagnostic) -> Key {
    (d.rule.id, d.message.clone(), d.location.clone())
}

/// The overlay page `i` shows, if any, built and checked on its base.
pub fn check_page(ctx: &Context, i: usize) -> Vec<Diagnostic> {
    let site = ctx.site;
    let (Some(page), Some(doc)) = (site.pages.get(i), ctx.analysis.docs.get(i)) else {
        return Vec::new();
    };
    let (blocks, others): (Vec<&CodeBlock>, Vec<&CodeBlock>) =
        doc.code_blocks.iter().partition(|b| file_name(b).is_some());
    let plain: Vec<&CodeBlock> = others.into_iter().filter(|b| b.is_yaml()).collect();
    let mut out = excerpts(ctx, page, &plain);
    out.extend(manifests_shown(ctx, page, &plain));
    // `file=` on blocks that are no Kustomize files (`sh file=install.sh`)
    // names a file to save, and makes no overlay.
    if !blocks.iter().any(|b| b.is_yaml() || is_kustomization(b)) {
        return out;
    }
    // Alternatives in tabs (`tab=GKE`, `tab=EKS`), each with its own
    // kustomization, are overlays of their own; a block in no tab belongs
    // to each of them.
    let tabs: std::collections::BTreeSet<&str> = blocks
        .iter()
        .filter(|b| is_kustomization(b))
        .filter_map(|b| b.attr("tab"))
        .collect();
    if tabs.len() < 2 {
        out.extend(check_overlay(ctx, page, blocks));
        return out;
    }
    for tab in tabs {
        let group = blocks
            .iter()
            .copied()
            .filter(|b| b.attr("tab").is_none_or(|t| t == tab))
            .collect();
        out.extend(check_overlay(ctx, page, group));
    }
    out
}

/// One overlay of a page: its files, built and checked on the base of the
/// release the page documents.
fn check_overlay(ctx: &Context, page: &Page, blocks: Vec<&CodeBlock>) -> Vec<Diagnostic> {
    let site = ctx.site;
    let overlay = Overlay { page, blocks };
    let mut out = Vec::new();
    let Some(k) = overlay.kustomization(&mut out) else {
        return out;
    };
    let version = documented_version(site, page);
    let Some(b) = version.and_then(|v| site.bases.iter().position(|b| &b.version == v)) else {
        // A `base:` with no published base is `doc-base-unknown` already,
        // and a refused base has its own finding.
        if page.base.is_some() || version.is_some_and(|v| site.refused.bases.contains(v)) {
            return out;
        }
        // Nothing to build it on: a reader could not build it either.
        let what = version.map_or("no release".to_string(), |v| format!("v{v}"));
        let published: Vec<_> = site.bases.iter().map(|b| b.folder()).collect();
        out.push(
            Diagnostic::new(
                rule::DOC_OVERLAY_INVALID,
                format!(
                    "the overlay builds on the base of the release the page documents ({what}), and this site publishes no such base, so it cannot be built or checked"
                ),
            )
            .at(overlay.at(k.block, &k.positions, ""))
            .help(format!(
                "set `base:` in the front matter to a published base ({}), or add the base under bases/",
                published.join(", ")
            )),
        );
        return out;
    };
    // A base Kustomize refuses has findings of its own.
    let Some(base_build) = ctx.analysis.built.get(b).and_then(Option::as_ref) else {
        return out;
    };
    let base = &site.bases[b];

    // The files as a reader has them: the overlay's, and the base's where
    // the overlay's `resources` names it.
    let mut files = MemFiles::new();
    for block in &overlay.blocks {
        let mut f = SourceFile::new(block.code.clone(), &page.source);
        f.line_offset = block.line.saturating_sub(1);
        f.column_offset = block.indent;
        files.insert(
            &format!("{OVERLAY}/{}", file_name(block).unwrap_or_default()),
            f,
        );
    }
    let named: Vec<&str> = k.value["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|r| r.trim_end_matches('/'))
        .filter(|r| BASE_NAMES.contains(r))
        .collect();
    if named.is_empty() {
        // A misspelled `resources:` is what a reader would fix first.
        let misspelled = k.value.as_object().and_then(|m| {
            let keys = m.keys().filter(|key| *key != "resources");
            keys.map(String::as_str)
                .find(|key| crate::diagnostics::closest(key, ["resources"].into_iter()).is_some())
        });
        let (pointer, help) = match misspelled {
            Some(key) => (
                format!("/{}", yaml::pointer_segment(key)),
                format!("`{key}` is no kustomization field: did you mean `resources`?"),
            ),
            None => (
                "/resources".to_string(),
                "list the base folder the installation downloads: `resources: [base]`".to_string(),
            ),
        };
        out.push(
            Diagnostic::new(
                rule::DOC_OVERLAY_INVALID,
                format!(
                    "the overlay's `resources` does not name the base, so it does not build on base {}",
                    base.folder()
                ),
            )
            .at(overlay.at(k.block, &k.positions, &pointer))
            .help(help),
        );
        return out;
    }
    for name in named {
        if let Some(dir) = kustomize::files::join(OVERLAY, name) {
            crate::analyze::bases::add_files(&mut files, base, &dir);
        }
    }
    let built = match build_page_files(ctx, &files, OVERLAY) {
        Ok(built) => built,
        Err(errors) => {
            out.extend(errors.iter().filter_map(|e| overlay_error(&overlay, e)));
            return out;
        }
    };

    overlay.unknown_names(&k, &files, &base_build.objects, &mut out);
    overlay.unknown_images(&k, &base_build.objects, &mut out);

    let empty = HashSet::new();
    let before = ctx.known.get(b).unwrap_or(&empty);
    let anchor = overlay.at(k.block, &k.positions, "");
    let product = &site.config.image.name;
    let renamed = k.value["images"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["name"].as_str().map(super::pods::image_repository) == Some(product))
        .filter_map(|i| i["newName"].as_str())
        .map(|n| super::pods::image_repository(n).to_string())
        .filter(|n| n != product)
        .collect();
    let subject = super::Subject {
        base,
        objects: &built.objects,
        renamed,
    };
    for mut d in super::base_checks(ctx, &subject, true) {
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
        out.push(d);
    }
    out
}

/// The folder the manifests of a page without a base are built in.
const MANIFESTS: &str = "manifests";

/// Rules about how objects refer to one another, which the manifests of
/// one page cannot settle: the docs may show a Deployment on one page and
/// the NetworkPolicy or the ConfigMap it goes with on another.
const ACROSS_PAGES: &[&str] = &[
    rule::SELECTOR_MATCHES_NOTHING.id,
    rule::CONFIGMAP_REFERENCE_MISSING.id,
];

/// The whole objects a page shows (`apiVersion`, `kind` and a name) when
/// the release it documents has no published base, as the docs of a
/// release before the bases give readers complete manifests to apply:
/// built as a base is, and checked as that release's base would be, so a
/// command or a setting the release lacks is the page's finding. Blocks
/// that cannot be built together (one object shown twice) are built one
/// by one.
///
/// On the docs of a release with a base, the same holds for the objects
/// a page shows that the base lacks and that run pods; one that runs none
/// (a Secret to create, a NetworkPolicy to add) is held to its API type
/// as written. One the base has is an excerpt of it, read as the change it
/// makes to the base (see [`excerpt_checks`]).
fn manifests_shown(ctx: &Context, page: &Page, blocks: &[&CodeBlock]) -> Vec<Diagnostic> {
    let site = ctx.site;
    let Some(version) = documented_version(site, page) else {
        return Vec::new();
    };
    let base_build = site
        .bases
        .iter()
        .position(|b| &b.version == version)
        .map(|b| ctx.analysis.built.get(b).and_then(Option::as_ref));
    if site.refused.bases.contains(version) || !site.images.releases.contains(version) {
        return Vec::new();
    }
    // A base that does not build has its own findings.
    if base_build.is_some_and(|b| b.is_none()) {
        return Vec::new();
    }
    let base_objects = base_build.flatten().map(|b| b.objects.as_slice());
    let in_base = |d: &serde_json::Value| {
        base_objects.is_some_and(|objects| {
            objects.iter().any(|o| {
                Some(o.kind()) == d["kind"].as_str()
                    && Some(o.name()) == d["metadata"]["name"].as_str()
            })
        })
    };
    let mut objects: Vec<&CodeBlock> = Vec::new();
    let mut excerpts: Vec<&CodeBlock> = Vec::new();
    let mut out = Vec::new();
    for block in blocks {
        // Most blocks are no whole object: not parsed again.
        if !block.code.contains("apiVersion") {
            continue;
        }
        let Ok(docs) = yaml::documents(&block.code) else {
            continue;
        };
        let whole = !docs.is_empty()
            && docs.iter().all(|d| {
                d["apiVersion"].is_string()
                    && d["kind"].is_string()
                    && d["metadata"]["name"].is_string()
            });
        let runs_pods = docs
            .iter()
            .any(|d| d["kind"].as_str().and_then(pod_spec_pointer).is_some());
        match (
            whole,
            docs.iter().any(in_base),
            base_objects.is_some() && !runs_pods,
        ) {
            (false, _, _) => {}
            (true, true, _) => excerpts.push(block),
            // With a base, an object that runs no pods (a Secret, a
            // NetworkPolicy to add) is held to its API type as written:
            // no build needed.
            (true, false, true) => standalone_findings(page, version, block, &docs, &mut out),
            (true, false, false) => objects.push(block),
        }
    }
    out.extend(shown_checks(ctx, page, version, &objects));
    out.extend(excerpt_checks(ctx, page, version, &excerpts));
    out
}

/// The findings of whole objects that a page shows and its base lacks,
/// which run no pods (`docs`, as parsed), against their API type: read
/// again where each node is written only when there is one.
fn standalone_findings(
    page: &Page,
    version: &semver::Version,
    block: &CodeBlock,
    docs: &[Value],
    out: &mut Vec<Diagnostic>,
) {
    let relevant = |d: &Diagnostic| d.rule.id != rule::MANIFEST_KIND_UNCHECKED.id;
    let nowhere = |_: &str| Location::file(&page.source);
    let any = docs.iter().any(|d| {
        super::manifests::object_findings(d, nowhere)
            .iter()
            .any(relevant)
    });
    if !any {
        return;
    }
    let Ok(docs) = yaml::documents_with_positions(&block.code) else {
        return;
    };
    for doc in docs {
        let doc = doc.as_kubernetes_reads_it();
        let locate = |pointer: &str| {
            let (line, column) = doc.positions.nearest(pointer).unwrap_or((1, 1));
            Location::at(&page.source, block.line + line - 1, column + block.indent)
        };
        out.extend(
            super::manifests::object_findings(&doc.value, locate)
                .into_iter()
                .filter(relevant)
                .map(|mut d| {
                    d.message = format!(
                        "{} (in the manifests this page shows for release {version})",
                        d.message
                    );
                    d
                }),
        );
    }
}

/// The excerpts a page shows of its base's objects, each read as the
/// change it makes to the base (a strategic merge patch): the base with
/// them is checked, and a finding about what an excerpt writes (on a line
/// of the page) is the page's. What the excerpt leaves out is the base's,
/// checked already.
fn excerpt_checks(
    ctx: &Context,
    page: &Page,
    version: &semver::Version,
    excerpts: &[&CodeBlock],
) -> Vec<Diagnostic> {
    let site = ctx.site;
    let Some(b) = site.bases.iter().position(|b| &b.version == version) else {
        return Vec::new();
    };
    if excerpts.is_empty() {
        return Vec::new();
    }
    let base = &site.bases[b];
    let build = |blocks: &[&CodeBlock]| {
        let mut files = MemFiles::new();
        let k = blocks_as_files(
            &mut files,
            page,
            EXCERPTS,
            blocks,
            "resources:\n  - base\npatches:\n",
            "  - path: ",
        );
        files.insert(
            &format!("{EXCERPTS}/kustomization.yaml"),
            SourceFile::new(k, &page.source),
        );
        crate::analyze::bases::add_files(&mut files, base, &format!("{EXCERPTS}/base"));
        build_page_files(ctx, &files, EXCERPTS).ok()
    };
    let builds = together_or_each(excerpts, build);
    let empty = HashSet::new();
    let before = ctx.known.get(b).unwrap_or(&empty);
    let mut out: Vec<Diagnostic> = Vec::new();
    for built in &builds {
        let subject = super::Subject {
            base,
            objects: &built.objects,
            renamed: Vec::new(),
        };
        for mut d in super::base_checks(ctx, &subject, true) {
            let in_page = d.location.as_ref().is_some_and(|l| l.file == page.source);
            if !in_page || before.contains(&key(&d)) || BASE_ONLY.contains(&d.rule.id) {
                continue;
            }
            d.message = format!(
                "{} (in the excerpt this page shows of base {})",
                d.message,
                base.folder()
            );
            if !out.iter().any(|o| key(o) == key(&d)) {
                out.push(d);
            }
        }
    }
    out
}

/// Puts a page's `blocks` into `files` as `DIR/0.yaml`, `DIR/1.yaml`…,
/// each found at its lines of the page; returns `head` with a line
/// `ENTRY N.yaml` for each, for the kustomization that lists them.
fn blocks_as_files(
    files: &mut MemFiles,
    page: &Page,
    dir: &str,
    blocks: &[&CodeBlock],
    head: &str,
    entry: &str,
) -> String {
    let mut listed = head.to_string();
    for (i, block) in blocks.iter().enumerate() {
        let mut f = SourceFile::new(block.code.clone(), &page.source);
        f.line_offset = block.line.saturating_sub(1);
        f.column_offset = block.indent;
        files.insert(&format!("{dir}/{i}.yaml"), f);
        listed.push_str(&format!("{entry}{i}.yaml\n"));
    }
    listed
}

/// The build of the kustomization in `dir` of a page's files, with the
/// run's cache of folder builds, or why Kustomize refuses it.
fn build_page_files(
    ctx: &Context,
    files: &MemFiles,
    dir: &str,
) -> Result<kustomize::Build, Vec<kustomize::Error>> {
    // A cache poisoned by a panic elsewhere still holds whole entries.
    let mut cache = match ctx.tools.kustomize.lock() {
        Ok(c) => c,
        Err(poisoned) => poisoned.into_inner(),
    };
    kustomize::build_with(files, dir, &mut cache)
}

/// The builds of `blocks`: together, else one by one (two blocks that
/// cannot go together, one object shown twice, do not hide the rest).
fn together_or_each(
    blocks: &[&CodeBlock],
    build: impl Fn(&[&CodeBlock]) -> Option<kustomize::Build>,
) -> Vec<kustomize::Build> {
    match build(blocks) {
        Some(built) => vec![built],
        None => blocks.iter().filter_map(|b| build(&[b])).collect(),
    }
}

/// The folder the excerpts of a page are built in, over the base.
const EXCERPTS: &str = "excerpts";

/// The checks of [`manifests_shown`] on the objects of `objects`, which
/// the base lacks (built together, else one block by one).
fn shown_checks(
    ctx: &Context,
    page: &Page,
    version: &semver::Version,
    objects: &[&CodeBlock],
) -> Vec<Diagnostic> {
    let site = ctx.site;
    if objects.is_empty() {
        return Vec::new();
    }
    let has_base = site.bases.iter().any(|b| &b.version == version);
    let base = crate::model::site::Base {
        version: version.clone(),
        dir: page.source.clone(),
        files: Vec::new(),
        signature: None,
        image: None,
    };
    let build = |blocks: &[&CodeBlock]| {
        let mut files = MemFiles::new();
        let resources =
            blocks_as_files(&mut files, page, MANIFESTS, blocks, "resources:\n", "  - ");
        files.insert(
            &format!("{MANIFESTS}/kustomization.yaml"),
            SourceFile::new(resources, &page.source),
        );
        build_page_files(ctx, &files, MANIFESTS).ok()
    };
    let builds = together_or_each(objects, build);
    let shown = match has_base {
        true => format!("in the manifests this page shows for release {version}"),
        false => format!(
            "in the manifests this page shows for release {version}, which has no published base"
        ),
    };
    let mut out = Vec::new();
    for built in &builds {
        let subject = super::Subject {
            base: &base,
            objects: &built.objects,
            renamed: Vec::new(),
        };
        out.extend(
            super::base_checks(ctx, &subject, true)
                .into_iter()
                .filter(|d| !BASE_ONLY.contains(&d.rule.id) && !ACROSS_PAGES.contains(&d.rule.id))
                .filter(|d| d.location.as_ref().is_some_and(|l| l.file == page.source))
                .map(|mut d| {
                    d.message = format!("{} ({shown})", d.message);
                    d
                }),
        );
    }
    out
}

/// A finding of the overlay's failed build, as the page's: what cannot be
/// read of a page's example is the example's fault, not the project's
/// (`doc-overlay-invalid`, exit 1, not an input error); a block that is
/// not YAML is `doc-yaml-invalid` already.
fn overlay_error(overlay: &Overlay, e: &kustomize::Error) -> Option<Diagnostic> {
    let d = e.diagnostic();
    if e.rule.class != crate::diagnostics::Class::Input {
        return Some(d);
    }
    let in_block = |b: &&&CodeBlock| {
        e.location.file == overlay.page.source
            && e.location
                .line
                // (an error at the end of the text is on the closing fence)
                .is_some_and(|l| l + 1 >= b.line && l <= b.line + b.code.lines().count())
    };
    let block = overlay.blocks.iter().find(in_block);
    if block.is_some_and(|b| b.is_yaml() && yaml::documents(&b.code).is_err()) {
        return None;
    }
    let mut page = Diagnostic::new(
        rule::DOC_OVERLAY_INVALID,
        format!("the overlay cannot be built: {}", e.message),
    )
    .at(e.location.clone());
    page.help = d.help.clone().or(Some(e.rule.remedy.to_string()));
    Some(page)
}

/// The overlay's kustomization block, parsed.
struct Kustomization<'a> {
    block: &'a CodeBlock,
    value: Value,
    positions: Positions,
}

impl Kustomization<'_> {
    /// Where the text of the scalar at `pointer` (`patch: |`) starts on
    /// the page: the line after its key, and the characters before it (the
    /// block's own and a block scalar's indentation).
    fn scalar_start(&self, pointer: &str) -> (usize, usize) {
        let (l, _) = self.positions.nearest(pointer).unwrap_or((1, 1));
        let indent = yaml::block_scalar_start(&self.block.code, l).map_or(0, |(_, i)| i);
        (self.block.line + l, self.block.indent + indent)
    }
}

struct Overlay<'a> {
    page: &'a Page,
    blocks: Vec<&'a CodeBlock>,
}

impl<'a> Overlay<'a> {
    fn block(&self, name: &str) -> Option<&'a CodeBlock> {
        self.blocks
            .iter()
            .copied()
            .find(|b| file_name(b) == Some(name))
    }

    /// The overlay's kustomization: a block named as Kustomize names the
    /// file (`kustomization.yaml`, `kustomization.yml`, `Kustomization`).
    fn kustomization_block(&self) -> Option<&'a CodeBlock> {
        kustomize::KUSTOMIZATION_FILES
            .iter()
            .find_map(|name| self.block(name))
    }

    /// Where the node at `pointer` of a YAML block is, in the page.
    fn at(&self, block: &CodeBlock, positions: &Positions, pointer: &str) -> Location {
        let (l, c) = positions.nearest(pointer).unwrap_or((1, 1));
        Location::at(&self.page.source, block.line + l - 1, c + block.indent)
    }

    /// The kustomization block, once the files are known to be an
    /// overlay (one block per name, a `kustomization.yaml` among them).
    fn kustomization(&self, out: &mut Vec<Diagnostic>) -> Option<Kustomization<'a>> {
        let mut seen = HashSet::new();
        for b in &self.blocks {
            let name = file_name(b).unwrap_or_default();
            if !seen.insert(name) {
                out.push(
                    Diagnostic::new(
                        rule::DOC_OVERLAY_INVALID,
                        format!("the page shows two files named `{name}`"),
                    )
                    .at(Location::at(&self.page.source, b.line, 1)),
                );
                return None;
            }
        }
        let Some(block) = self.kustomization_block() else {
            let first = self.blocks.first()?;
            out.push(
                Diagnostic::new(
                    rule::DOC_OVERLAY_INVALID,
                    "the page shows overlay files but no `file=kustomization.yaml` block to build them",
                )
                .at(Location::at(&self.page.source, first.line, 1)),
            );
            return None;
        };
        // A block that does not parse is `doc-yaml-invalid` (the YAML
        // check reads every block that `is_yaml`, as this one is).
        let doc = yaml::documents_with_positions(&block.code)
            .ok()?
            .into_iter()
            .next()
            .filter(|d| d.value.is_object());
        let Some(doc) = doc else {
            out.push(
                Diagnostic::new(
                    rule::DOC_OVERLAY_INVALID,
                    "the overlay's kustomization.yaml is empty or not a mapping, so Kustomize refuses to build it",
                )
                .at(Location::at(&self.page.source, block.line, 1))
                .help("write the overlay's kustomization: at least `resources: [base]`"),
            );
            return None;
        };
        Some(Kustomization {
            block,
            value: doc.value,
            positions: doc.positions,
        })
    }

    /// The strategic-merge patches of the overlay: each document with its
    /// target (kind and name) and where it is written.
    fn patches(&self, k: &Kustomization<'a>, files: &MemFiles) -> Vec<Patch> {
        let mut out = Vec::new();
        let mut from_text = |text: &str, (line, indent): (usize, usize), target: Option<&Value>| {
            let Ok(docs) = yaml::documents_with_positions(text) else {
                return;
            };
            for doc in docs.into_iter().filter(|d| d.value.is_object()) {
                // Without a target, a patch names its object itself.
                let target = target.cloned().unwrap_or_else(|| {
                    serde_json::json!({
                        "kind": doc.value["kind"].as_str().unwrap_or_default(),
                        "name": doc.value["metadata"]["name"].as_str().unwrap_or_default(),
                    })
                });
                out.push(Patch {
                    target,
                    value: doc.value,
                    positions: doc.positions,
                    line,
                    indent,
                });
            }
        };
        let file_text = |path: &str| {
            let f = kustomize::Files::file(files, &kustomize::files::join(OVERLAY, path)?)?;
            Some((
                String::from_utf8_lossy(&f.bytes).into_owned(),
                (f.line_offset + 1, f.column_offset),
            ))
        };
        for (i, p) in k.value["patches"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let target = p.get("target").filter(|t| t.is_object());
            if let Some((text, at)) = p["path"].as_str().and_then(file_text) {
                from_text(&text, at, target);
            } else if let Some(inline) = p["patch"].as_str() {
                from_text(
                    inline,
                    k.scalar_start(&format!("/patches/{i}/patch")),
                    target,
                );
            }
        }
        for (i, p) in k.value["patchesStrategicMerge"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .enumerate()
        {
            if let Some((text, at)) = file_text(p) {
                from_text(&text, at, None);
            } else {
                from_text(
                    p,
                    k.scalar_start(&format!("/patchesStrategicMerge/{i}")),
                    None,
                );
            }
        }
        out
    }

    /// Containers and volumes a strategic-merge patch names must exist in
    /// the base, unless the patch adds a complete one (a container with an
    /// image, a volume with a source): otherwise the merge adds a broken
    /// one, which Kustomize builds without a word.
    fn unknown_names(
        &self,
        k: &Kustomization<'a>,
        files: &MemFiles,
        base: &[Object],
        out: &mut Vec<Diagnostic>,
    ) {
        let patches = self.patches(k, files);
        unknown_names(self.page, &patches, Shown::Patch, base, out);
    }

    /// Every `images:` entry must name an image a container of the base
    /// uses; otherwise the real image is never replaced.
    fn unknown_images(&self, k: &Kustomization<'a>, base: &[Object], out: &mut Vec<Diagnostic>) {
        let mut used: Vec<String> = base
            .iter()
            .filter_map(|o| pod_spec_pointer(o.kind()).and_then(|p| o.value.pointer(p)))
            .flat_map(|pod| {
                ["containers", "initContainers"]
                    .into_iter()
                    .flat_map(move |f| pod[f].as_array().into_iter().flatten())
            })
            .filter_map(|c| c["image"].as_str().map(str::to_string))
            .collect();
        used.sort();
        used.dedup();
        for (i, img) in k.value["images"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let Some(name) = img["name"].as_str() else {
                continue;
            };
            if used.iter().any(|u| u == name) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    rule::DOC_IMAGE_UNKNOWN,
                    format!("`images` replaces `{name}`, which no container of the base uses"),
                )
                .at(self.at(k.block, &k.positions, &format!("/images/{i}/name")))
                .help(format!("the base's images: {}", used.join(", "))),
            );
        }
    }
}

/// What a YAML block that names an object of the base is: a patch of
/// an overlay, or an excerpt the page shows (of the base, or to add to an
/// overlay).
#[derive(Clone, Copy, PartialEq)]
enum Shown {
    Patch,
    Excerpt,
}

/// Containers and volumes a strategic-merge patch (or an excerpt of the
/// base's objects) names must exist in the base, unless it adds a
/// complete one (a container with an image, a volume with a source):
/// otherwise the merge adds a broken one, which Kustomize builds without
/// a word, and an excerpt shows what the base does not have.
fn unknown_names(
    page: &Page,
    patches: &[Patch],
    shown: Shown,
    base: &[Object],
    out: &mut Vec<Diagnostic>,
) {
    // Every object a patch targets: a target may name a kind alone, a
    // name pattern or labels, and so pick several.
    let targeted = patches.iter().flat_map(|patch| {
        let target = kustomize::Target::new(&patch.target);
        base.iter()
            .filter(move |o| target.as_ref().is_some_and(|t| t.selects(&o.value)))
            .map(move |o| (patch, o))
    });
    for (patch, object) in targeted {
        let Some(pod_ptr) = pod_spec_pointer(object.kind()) else {
            continue;
        };
        let base_pod = object.value.pointer(pod_ptr);
        let Some(patch_pod) = patch.value.pointer(pod_ptr) else {
            continue;
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
                // A whole new item is meant to be added, unless its
                // name is a near miss of one the base has (`agnet`
                // with an `image:` that pins the agent's).
                let near = crate::diagnostics::closest(name, existing.iter().copied());
                let same_image = |near: &str| {
                    fn image_of(c: &Value) -> Option<&str> {
                        c["image"].as_str().map(super::pods::image_repository)
                    }
                    let base_item = base_pod
                        .and_then(|p| p[field].as_array())
                        .into_iter()
                        .flatten()
                        .find(|c| c["name"] == near);
                    base_item
                        .and_then(image_of)
                        .is_some_and(|i| Some(i) == image_of(item))
                };
                if adds_whole && !near.is_some_and(same_image) {
                    continue;
                }
                let (l, c) = patch
                    .positions
                    .nearest(&format!("{pod_ptr}/{field}/{i}"))
                    .unwrap_or((1, 1));
                let what = if field == "volumes" {
                    "volume"
                } else {
                    "container"
                };
                let suggestion = near.or(existing.first().copied());
                let added = if adds_whole {
                    format!("a second {what} beside `{}`", near.unwrap_or_default())
                } else {
                    format!("a new, incomplete {what}")
                };
                let message = match shown {
                    Shown::Patch => format!(
                        "the patch names {what} `{name}`, which the base does not have: Kustomize would add {added} instead of changing one"
                    ),
                    Shown::Excerpt => format!(
                        "the example shows {what} `{name}` in {} {}, which the base does not have: a reader who copies it into an overlay adds {added} instead of changing one",
                        object.kind(),
                        object.name()
                    ),
                };
                let mut d = Diagnostic::new(rule::DOC_PATCH_UNKNOWN_NAME, message).at(
                    Location::at(&page.source, patch.line + l - 1, c + patch.indent),
                );
                if let Some(s) = suggestion {
                    d = d.help(format!(
                        "the base's {what}s: {}; did you mean `{s}`?",
                        existing.join(", ")
                    ));
                }
                out.push(d);
            }
        }
    }
}

/// The YAML examples of page `i` outside its overlays that show an object
/// of the base it documents (its kind and name): each read as the patch a
/// reader would make of it, whose containers and volumes must be the
/// base's ([`unknown_names`]).
fn excerpts(ctx: &Context, page: &Page, blocks: &[&CodeBlock]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let site = ctx.site;
    let Some(b) = documented_version(site, page)
        .and_then(|v| site.bases.iter().position(|b| &b.version == v))
    else {
        return out;
    };
    let Some(base_build) = ctx.analysis.built.get(b).and_then(Option::as_ref) else {
        return out;
    };
    let mut patches = Vec::new();
    // Only a block that names a workload of the base (its kind and its
    // name) can show its pods: the others are not parsed again.
    let workloads: Vec<(&str, &str)> = base_build
        .objects
        .iter()
        .filter(|o| pod_spec_pointer(o.kind()).is_some() && !o.name().is_empty())
        .map(|o| (o.kind(), o.name()))
        .collect();
    for block in blocks {
        let may_show = workloads
            .iter()
            .any(|(kind, name)| block.code.contains(kind) && block.code.contains(name));
        if !may_show {
            continue;
        }
        // A block that does not parse is `doc-yaml-invalid` already.
        let Ok(docs) = yaml::documents_with_positions(&block.code) else {
            continue;
        };
        for doc in docs {
            let (Some(kind), Some(name)) = (
                doc.value["kind"].as_str(),
                doc.value["metadata"]["name"].as_str(),
            ) else {
                continue;
            };
            let in_base = base_build
                .objects
                .iter()
                .any(|o| o.kind() == kind && o.name() == name);
            if in_base {
                patches.push(Patch {
                    target: serde_json::json!({"kind": kind, "name": name}),
                    value: doc.value,
                    positions: doc.positions,
                    line: block.line,
                    indent: block.indent,
                });
            }
        }
    }
    unknown_names(
        page,
        &patches,
        Shown::Excerpt,
        &base_build.objects,
        &mut out,
    );
    out
}

/// One strategic-merge patch document of an overlay.
struct Patch {
    /// The objects it applies to, as a kustomization `target`.
    target: Value,
    value: Value,
    positions: Positions,
    /// The page line of the document's first line.
    line: usize,
    /// Characters before each of its lines on the page.
    indent: usize,
}
