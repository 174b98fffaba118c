//! `basepress deploy s3://BUCKET/PREFIX`: puts a built site into object
//! storage, where a CDN serves it, without a reader ever seeing a broken
//! state and without ever changing a published version.
//!
//! A deploy reads the site folder a build wrote (holding the build's lock
//! on it, so no build swaps it meanwhile) and checks it as `basepress
//! verify` does. It lists what the bucket holds below the prefix and reads
//! the SHA-256 each object carries in its metadata (`sha256`; never the
//! ETag, which is not a content hash for multipart uploads). Then it
//! plans ([`plan`]): what to upload, in which order, what to delete, and
//! what stops it before anything is written: a version's object that the
//! bucket holds with other bytes, a version the site no longer has, more
//! deletions than allowed. Then it runs the plan ([`run`]) tier by tier:
//! every version's files and the assets, then `SHA256SUMS`, the
//! signatures, `files.txt`, `allowed_signers`, `versions.txt`, then
//! `versions.json` (only once `versions.txt` went up), new pages, changed pages, and last what points at
//! pages from outside (sitemap, robots.txt, `/`, the 404 page); deletions
//! after all of it. A version's objects are written only if absent
//! (`If-None-Match: *`), and read back before its `SHA256SUMS`; the
//! versions indexes only if they are still what the deploy saw
//! (`If-Match`). A deploy that stops midway leaves every index pointing at
//! files that exist, and the next one completes it.

pub mod aws;
pub mod local;
pub mod plan;
pub mod run;
pub mod store;
pub mod target;

use crate::diagnostics::{rule, Diagnostic};
use crate::engine::Outcome;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The metadata key each object's SHA-256 is kept under
/// (`x-amz-meta-sha256` on S3).
pub const SHA256_KEY: &str = "sha256";

/// What the environment says about object stores: the command line reads
/// it and hands it over.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// The variables whose names start with `AWS_`, `GOOGLE_` or `AZURE_`.
    pub vars: BTreeMap<String, String>,
    /// The home folder, where `.aws/config` and `.aws/credentials` are.
    pub home: Option<PathBuf>,
}

/// What to deploy, where, and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// `s3://BUCKET/PREFIX`, `gs://…` or `az://…`.
    pub target: String,
    /// The folder a build wrote.
    pub site: PathBuf,
    pub environment: Environment,
    /// An AWS profile named on the command line.
    pub profile: Option<String>,
    /// More deletions than this stop the deploy.
    pub max_deletes: usize,
    /// Plan, print, write nothing.
    pub dry_run: bool,
    /// Show progress on the terminal.
    pub progress: bool,
    /// Requests at once.
    pub concurrency: usize,
    /// How long one request may take.
    pub timeout: Duration,
    /// How many times a failed request is tried again.
    pub retries: usize,
}

impl Options {
    /// The defaults for a deploy of `site` to `target`.
    pub fn new(target: impl Into<String>, site: impl Into<PathBuf>) -> Self {
        Options {
            target: target.into(),
            site: site.into(),
            environment: Environment::default(),
            profile: None,
            max_deletes: 256,
            dry_run: false,
            progress: false,
            concurrency: 16,
            timeout: Duration::from_secs(30),
            retries: 3,
        }
    }
}

/// One step of the plan, as printed and in JSON.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Action {
    /// `upload` or `delete`.
    pub action: &'static str,
    /// The site path (`en/index.html`).
    pub path: String,
    /// `new` or `changed` for an upload; empty for a delete.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub reason: &'static str,
    /// Bytes uploaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// What a deploy planned and did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// The target, as given once parsed (`s3://docs/site`).
    pub target: String,
    pub dry_run: bool,
    /// Where the credentials came from (never the credentials).
    #[serde(skip)]
    pub credentials: String,
    /// The plan, in the order it runs.
    pub plan: Vec<Action>,
    /// Files uploaded, and their bytes.
    pub uploaded: usize,
    pub uploaded_bytes: u64,
    /// Files the bucket already had with the same bytes.
    pub unchanged: usize,
    /// Objects deleted.
    pub deleted: usize,
    /// Whether the whole plan ran.
    pub complete: bool,
}

/// Deploys the site folder of `options` to its target. Findings say what
/// stopped it; the report says what it planned and did.
pub fn deploy(options: &Options) -> (Outcome, Report) {
    let mut report = Report {
        dry_run: options.dry_run,
        ..Report::default()
    };
    let target = match target::Target::parse(&options.target) {
        Ok(t) => t,
        Err(d) => return (Outcome::of(vec![d]), report),
    };
    report.target = target.to_string();
    // A build swaps the folder under its lock: hold it for the deploy.
    let _lock = match crate::write::lock_exclusive(&options.site) {
        Ok(l) => l,
        Err(d) => return (Outcome::of(vec![d]), report),
    };
    let files = match local::scan(&options.site) {
        Ok(f) => f,
        Err(findings) => return (Outcome::of(findings), report),
    };
    let site = options.site.to_string_lossy().into_owned();
    let (verified, _) = crate::verify::verify(&site, &crate::verify::Options::default());
    if verified.exit_code() != 0 {
        return (verified, report);
    }
    let (store, from) = match store::open(&target, options) {
        Ok(s) => s,
        Err(d) => return (Outcome::of(vec![d]), report),
    };
    report.credentials = from;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            let d = Diagnostic::new(
                rule::STORE_UNREACHABLE,
                format!("cannot start the network client: {e}"),
            );
            return (Outcome::of(vec![d]), report);
        }
    };
    let ctx = run::Context {
        store,
        target,
        site: options.site.clone(),
        concurrency: options.concurrency.max(1),
        progress: run::Progress::new(options.progress),
    };
    let findings = runtime.block_on(run::deploy(&ctx, &files, options, &mut report));
    (Outcome::of(findings), report)
}

/// An error with its causes, `: `-joined: the store's errors keep the
/// server's answer (status, code, message) in their sources.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    let mut depth = 0;
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
        depth += 1;
        if depth == 8 {
            break;
        }
    }
    out
}
