//! Stage 3: checks that what the site publishes is true.
//!
//! Every check is an entry of [`CHECKS`]: what it is about, the scope it
//! runs on (the site, one base, one page) and the rules it may raise. One
//! runner ([`run`]) applies them all; the preview server runs the page
//! checks of the pages an edit reaches again ([`rerun_pages`]), through
//! the same entries. Checks only read the analysed project: nothing here
//! reads files or changes anything. [`finish`] applies the exceptions of
//! site.yaml, sorts and drops repeated findings, once, for every stage.

mod admission;
mod commands;
mod docs;
mod image;
pub mod leaks;
mod links;
mod manifests;
mod overlays;
mod pods;
mod process;
mod releases;
mod selectors;
mod shell;
mod suggest;
mod translations;

use crate::analyze::Analysis;
use crate::diagnostics::{rule, Diagnostic, Rule, Severity};
use crate::model::config::{Config, ExceptionSeverity};
use crate::model::site::{Base, Site};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashSet};

/// What a check runs on, and the function that runs it.
#[derive(Clone, Copy)]
pub enum Scope {
    /// Once per project.
    Site(fn(&Context) -> Vec<Diagnostic>),
    /// Once per base. `objects` checks read the objects of a build, and
    /// also run on the objects an overlay of a page builds on its base.
    Base {
        run: fn(&Context, &Subject) -> Vec<Diagnostic>,
        objects: bool,
    },
    /// Once per page (its untranslated copies are checked through their
    /// original).
    Page(fn(&Context, usize) -> Vec<Diagnostic>),
}

/// One check of the registry.
pub struct Check {
    pub id: &'static str,
    /// What it makes sure of, for people.
    pub about: &'static str,
    pub scope: Scope,
    /// Every rule it may raise itself, as lists (a list shared with a
    /// stage, such as the Kustomize build's, is written once).
    pub rules: &'static [&'static [&'static Rule]],
    /// Checks whose rules it may raise too, by id: the overlay check runs
    /// the object checks on what an overlay builds.
    pub reraises: &'static [&'static str],
}

impl Check {
    /// Every rule of its own lists.
    pub fn own_rules(&self) -> impl Iterator<Item = &'static Rule> {
        self.rules.iter().flat_map(|list| list.iter().copied())
    }

    /// Whether this check may raise `rule`.
    pub fn declares(&self, rule: &Rule) -> bool {
        self.rules
            .iter()
            .flat_map(|r| r.iter())
            .any(|r| r.id == rule.id)
            || self
                .reraises
                .iter()
                .filter_map(|id| CHECKS.iter().find(|c| c.id == *id))
                .any(|c| c.declares(rule))
    }
}

/// Every check, in the order they run.
pub const CHECKS: &[Check] = &[
    Check {
        id: "image-release",
        about: "every base ships with an image release of the same version",
        scope: Scope::Base {
            run: releases::image_release,
            objects: false,
        },
        rules: &[&[rule::BASE_IMAGE_RELEASE_MISSING]],
        reraises: &[],
    },
    Check {
        id: "releases",
        about: "released versions are still published, byte for byte",
        scope: Scope::Site(releases::check),
        rules: &[&[
            rule::RELEASED_VERSION_MISSING,
            rule::RELEASED_VERSION_CHANGED,
            rule::VERSION_UNRELEASED,
            rule::DOCS_VERSION_MISSING,
            rule::DOCS_VERSION_UNRELEASED,
            rule::VERSION_PAGE_REMOVED,
        ]],
        reraises: &[],
    },
    Check {
        id: "manifests",
        about: "every object of a base has the fields of its Kubernetes API type",
        scope: Scope::Base {
            run: manifests::check,
            objects: true,
        },
        rules: &[manifests::RULES],
        reraises: &[],
    },
    Check {
        id: "pods",
        about: "what a base runs exists in, and suits, the image of its version",
        scope: Scope::Base {
            run: pods::check,
            objects: true,
        },
        rules: &[pods::RULES],
        reraises: &[],
    },
    Check {
        id: "pod-security",
        about: "the pods of every workload meet the Pod Security level their namespace enforces",
        scope: Scope::Base {
            run: admission::check,
            objects: true,
        },
        rules: &[admission::RULES],
        reraises: &[],
    },
    Check {
        id: "selectors",
        about: "a workload's selector matches its pods, and Services, NetworkPolicies and PodDisruptionBudgets select pods of the build",
        scope: Scope::Base {
            run: selectors::check,
            objects: true,
        },
        rules: &[selectors::RULES],
        reraises: &[],
    },
    Check {
        id: "image-commands",
        about: "what a base runs is a file its user may execute in the image of its version, on every platform",
        scope: Scope::Base {
            run: image::commands,
            objects: true,
        },
        rules: &[image::COMMAND_RULES],
        reraises: &[],
    },
    Check {
        id: "image-data",
        about: "the image release data says of each release what its image says",
        scope: Scope::Base {
            run: image::agreement,
            objects: false,
        },
        rules: &[image::AGREEMENT_RULES],
        reraises: &[],
    },
    Check {
        id: "base-credentials",
        about: "no published base file carries a credential",
        scope: Scope::Base {
            run: leaks::base,
            objects: false,
        },
        rules: &[&[rule::CREDENTIAL_LEAK]],
        reraises: &[],
    },
    Check {
        id: "asset-credentials",
        about: "no published asset or template carries a credential",
        scope: Scope::Site(leaks::assets),
        rules: &[&[rule::CREDENTIAL_LEAK]],
        reraises: &[],
    },
    Check {
        id: "links",
        about: "every link and anchor of a page resolves, every reference link has its definition, and each heading id names one heading",
        scope: Scope::Page(links::check_page),
        rules: &[&[
            rule::LINK_BROKEN,
            rule::ANCHOR_MISSING,
            rule::LINK_OTHER_VERSION,
            rule::HEADING_ID_REPEATED,
            rule::LINK_REFERENCE_UNDEFINED,
        ]],
        reraises: &[],
    },
    Check {
        id: "docs",
        about: "a page documents a published base, its YAML parses and its environment keys are read by that release",
        scope: Scope::Page(docs::check_page),
        rules: &[&[
            rule::DOC_BASE_UNKNOWN,
            rule::DOC_YAML_INVALID,
            rule::DOC_ENV_KEY_UNKNOWN,
            rule::DOC_VERSION_MISMATCH,
        ]],
        reraises: &[],
    },
    Check {
        id: "start-pages",
        about: "every published docs version has a start page in the default language",
        scope: Scope::Site(docs::start_pages),
        rules: &[&[rule::START_PAGE_MISSING]],
        reraises: &[],
    },
    Check {
        id: "commands",
        about: "the kubectl commands of a page name the namespace, the objects and the containers of the base it documents",
        scope: Scope::Page(commands::check_page),
        rules: &[&[rule::DOC_COMMAND_MISMATCH]],
        reraises: &[],
    },
    Check {
        id: "overlays",
        about: "the overlay a page shows builds on its base and passes the base's checks",
        scope: Scope::Page(overlays::check_page),
        rules: &[overlays::RULES, crate::kustomize::RULES],
        reraises: &["manifests", "pods", "pod-security", "selectors", "image-commands"],
    },
    Check {
        id: "translations",
        about: "a translated page shows the code of its original in the default language",
        scope: Scope::Page(translations::check_page),
        rules: &[&[rule::DOC_TRANSLATION_CODE_DIFFERS]],
        reraises: &[],
    },
    Check {
        id: "page-credentials",
        about: "no page carries a credential",
        scope: Scope::Page(leaks::page),
        rules: &[&[rule::CREDENTIAL_LEAK]],
        reraises: &[],
    },
];

/// What a base check runs on: a base, and the objects a build made of it
/// (the base's own build, or the build of an overlay a page shows on it).
pub struct Subject<'a> {
    pub base: &'a Base,
    /// Empty when Kustomize would refuse the build (the reasons are
    /// findings of their own).
    pub objects: &'a [crate::kustomize::Object],
    /// The repositories an overlay's `images:` renames the product's image
    /// to (`newName: registry.example.com/team/runner`): its containers
    /// are still the product's.
    pub renamed: Vec<String>,
}

impl<'a> Subject<'a> {
    /// Base `i` of the analysis, with its own build.
    fn of_base(analysis: &'a Analysis, i: usize) -> Option<Subject<'a>> {
        let base = analysis.site.bases.get(i)?;
        let objects = analysis
            .built
            .get(i)
            .and_then(Option::as_ref)
            .map_or(&[][..], |b| b.objects.as_slice());
        Some(Subject {
            base,
            objects,
            renamed: Vec::new(),
        })
    }

    /// Whether `image` is the product's (`product`), by its repository's
    /// name or as the overlay renamed it.
    pub fn is_product(&self, product: &str, image: &str) -> bool {
        let repository = pods::image_repository(image);
        repository == product || self.renamed.iter().any(|r| r == repository)
    }
}

/// What the checks share: the analysed project, the tools they use and,
/// for the overlay check, what the object checks found on each base.
pub struct Context<'a> {
    pub analysis: &'a Analysis,
    pub site: &'a Site,
    pub tools: &'a Tools,
    /// By base: the findings of its own checks, to tell what an overlay adds.
    known: Vec<HashSet<overlays::Key>>,
}

impl Context<'_> {
    /// The image of the release of `version`, when the checks read it.
    pub fn image(&self, version: &semver::Version) -> Option<&crate::oci::Image> {
        let i = self.site.bases.iter().position(|b| &b.version == version)?;
        self.analysis.images.get(i)?.as_deref()
    }
}

/// What checks need that is costly to make, made once per run (or once
/// per preview server).
#[derive(Default)]
pub struct Tools {
    /// The credential scanner, its rules compiled.
    pub credentials: crate::secrets::Scanner,
    /// Folder builds the docs' overlays share: each base they build on is
    /// built once (and, in the preview server, once until it changes).
    pub kustomize: std::sync::Mutex<crate::kustomize::Cache>,
}

/// The findings of every check, by scope, before exceptions.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    pub site: Vec<Diagnostic>,
    /// By base, in `site.bases` order.
    pub bases: Vec<Vec<Diagnostic>>,
    /// By page, in `site.pages` order.
    pub pages: Vec<Vec<Diagnostic>>,
}

impl Findings {
    pub fn all(&self) -> impl Iterator<Item = &Diagnostic> {
        self.site
            .iter()
            .chain(self.bases.iter().flatten())
            .chain(self.pages.iter().flatten())
    }
}

/// Runs `check` and makes sure it raised only the rules it declares.
fn declared(check: &Check, found: Vec<Diagnostic>) -> Vec<Diagnostic> {
    for d in &found {
        debug_assert!(
            check.declares(d.rule),
            "check `{}` raised `{}`, which it does not declare",
            check.id,
            d.rule.id
        );
    }
    found
}

/// Runs every check.
pub fn run(analysis: &Analysis, tools: &Tools) -> Findings {
    let site = &analysis.site;
    let mut ctx = Context {
        analysis,
        site,
        tools,
        known: Vec::new(),
    };
    let mut findings = Findings::default();
    for check in CHECKS {
        if let Scope::Site(run) = check.scope {
            findings.site.extend(declared(check, run(&ctx)));
        }
    }
    findings.bases = (0..site.bases.len())
        .into_par_iter()
        .map(|i| {
            Subject::of_base(analysis, i)
                .map(|s| base_checks(&ctx, &s, false))
                .unwrap_or_default()
        })
        .collect();
    ctx.known = known(&findings);
    findings.pages = (0..site.pages.len())
        .into_par_iter()
        .map(|i| page_checks(&ctx, i))
        .collect();
    findings
}

/// Runs the page checks of `pages` again, after their documents (or those
/// of the pages they link to) changed; everything else is as `findings`
/// found it.
pub fn rerun_pages(
    analysis: &Analysis,
    tools: &Tools,
    findings: &mut Findings,
    pages: &BTreeSet<usize>,
) {
    let ctx = Context {
        analysis,
        site: &analysis.site,
        tools,
        known: known(findings),
    };
    let redone: Vec<(usize, Vec<Diagnostic>)> = pages
        .par_iter()
        .map(|&i| (i, page_checks(&ctx, i)))
        .collect();
    for (i, found) in redone {
        if let Some(slot) = findings.pages.get_mut(i) {
            *slot = found;
        }
    }
}

fn known(findings: &Findings) -> Vec<HashSet<overlays::Key>> {
    findings
        .bases
        .iter()
        .map(|found| found.iter().map(overlays::key).collect())
        .collect()
}

/// The base checks on `base`: all of them, or (`objects_only`) those that
/// look at its objects, which also run on the objects of an overlay.
fn base_checks(ctx: &Context, subject: &Subject, objects_only: bool) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for check in CHECKS {
        if let Scope::Base { run, objects } = check.scope {
            if objects || !objects_only {
                out.extend(declared(check, run(ctx, subject)));
            }
        }
    }
    out
}

fn page_checks(ctx: &Context, i: usize) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    // An untranslated copy shows its original's text, checked there; the
    // pages of a reused docs version keep their previous findings.
    if ctx
        .site
        .pages
        .get(i)
        .is_none_or(|p| p.fallback_from.is_some())
        || ctx.analysis.is_reused(i)
    {
        return out;
    }
    for check in CHECKS {
        if let Scope::Page(run) = check.scope {
            out.extend(declared(check, run(ctx, i)));
        }
    }
    out
}

/// Applies the `exceptions` of site.yaml (a matching finding becomes a
/// warning that carries the reason, or is dropped), then sorts the
/// findings, drops repeated ones and bounds how many of one rule one file
/// shows ([`crate::diagnostics::bound`]).
pub fn finish(config: Option<&Config>, diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = match config {
        Some(c) => apply_exceptions(c, diagnostics),
        None => diagnostics,
    };
    crate::diagnostics::sort(&mut out);
    crate::diagnostics::dedup(&mut out);
    crate::diagnostics::bound(&mut out);
    out
}

fn apply_exceptions(config: &Config, diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diagnostics
        .into_iter()
        .filter_map(|mut d| {
            let file = d.location.as_ref().map(|l| l.file.clone());
            let in_base = |folder: &str| {
                file.as_ref()
                    .is_some_and(|f| f.starts_with(std::path::Path::new("bases").join(folder)))
            };
            let exception = config.exceptions.iter().find(|e| {
                e.rule == d.rule.id && (e.bases.is_empty() || e.bases.iter().any(|b| in_base(b)))
            });
            match exception {
                None => Some(d),
                Some(e) if e.severity == ExceptionSeverity::Off => None,
                Some(e) => {
                    d.severity = Severity::Warning;
                    d.message =
                        format!("{} (allowed in site.yaml: {})", d.message, e.reason.trim());
                    Some(d)
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The overlay check runs every check of built objects on what an
    /// overlay builds, so it may raise all of their rules.
    #[test]
    fn the_overlay_check_reraises_every_check_of_objects() {
        let objects: Vec<&str> = CHECKS
            .iter()
            .filter(|c| matches!(c.scope, Scope::Base { objects: true, .. }))
            .map(|c| c.id)
            .collect();
        let overlays = CHECKS.iter().find(|c| c.id == "overlays").unwrap();
        assert_eq!(overlays.reraises, objects.as_slice());
    }

    #[test]
    fn check_ids_are_unique_and_every_check_declares_rules() {
        let mut ids: Vec<_> = CHECKS.iter().map(|c| c.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), CHECKS.len());
        for c in CHECKS {
            assert!(c.own_rules().next().is_some(), "{} declares no rule", c.id);
        }
    }
}
