//! Running a deploy against the store: listing what the bucket holds,
//! reading the SHA-256 of the objects the plan must compare, then the
//! plan's uploads tier by tier and its deletions. Requests run a few at a
//! time; the first failure stops the tier, and no later tier starts.

use super::local::{self, LocalFile};
use super::plan::{self, Plan, Reason, Remote, Upload, Write};
use super::target::Target;
use super::{chain, Action, Options, Report, SHA256_KEY};
use crate::diagnostics::{rule, Diagnostic};
use crate::model::media::content_type;
use crate::model::site::sha256_hex;
use futures_util::stream::{self, StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    Attribute, Attributes, GetOptions, ObjectStore, PutMode, PutOptions, PutPayload, UpdateVersion,
};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write as _};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// At most this many objects below the prefix are looked at.
const MAX_OBJECTS: usize = 2_000_000;
/// A version's object without a SHA-256 in its metadata (put there by
/// another tool) is downloaded and hashed, up to this size.
const MAX_COMPARED: u64 = 64 << 20;

/// What every request of a deploy shares.
pub struct Context {
    pub store: Arc<dyn ObjectStore>,
    pub target: Target,
    pub site: PathBuf,
    pub concurrency: usize,
    pub progress: Progress,
}

/// Plans and, unless it is a dry run, runs the deploy of `files`. The
/// findings say what stopped it.
pub async fn deploy(
    ctx: &Context,
    files: &[LocalFile],
    options: &Options,
    report: &mut Report,
) -> Vec<Diagnostic> {
    let mut remote = match list(ctx).await {
        Ok(r) => r,
        Err(d) => return vec![d],
    };
    if let Err(d) = learn_sha256(ctx, files, &mut remote).await {
        return vec![d];
    }
    let unsigned = unsigned_indexes(&ctx.site, files);
    let plan = plan::plan(&ctx.target, files, &remote, &unsigned, options.max_deletes);
    report.plan = actions(&plan);
    report.unchanged = plan.unchanged.len();
    if !plan.findings.is_empty() {
        return plan.findings;
    }
    if options.dry_run {
        return Vec::new();
    }
    for tier in 0..plan::TIERS {
        let batch: Vec<&Upload> = plan.uploads.iter().filter(|u| u.tier == tier).collect();
        if batch.is_empty() {
            continue;
        }
        let bytes: u64 = batch.iter().map(|u| u.file.size).sum();
        ctx.progress.start("uploading", batch.len(), bytes);
        let results: Vec<Result<Option<u64>, Diagnostic>> = stream::iter(batch.iter())
            .map(|u| upload(ctx, u))
            .buffer_unordered(ctx.concurrency)
            .inspect(|r| {
                ctx.progress
                    .step(r.as_ref().ok().copied().flatten().unwrap_or(0))
            })
            .collect()
            .await;
        ctx.progress.finish();
        let mut findings = Vec::new();
        for r in results {
            match r {
                Ok(Some(n)) => {
                    report.uploaded += 1;
                    report.uploaded_bytes += n;
                }
                // Another deploy had put the same bytes there.
                Ok(None) => report.unchanged += 1,
                Err(d) => findings.push(d),
            }
        }
        if findings.is_empty() && tier == 0 {
            findings = read_back(ctx, &batch).await;
        }
        if !findings.is_empty() {
            return findings;
        }
    }
    if !plan.deletes.is_empty() {
        ctx.progress.start("deleting", plan.deletes.len(), 0);
        match delete(ctx, &plan.deletes).await {
            Ok(n) => report.deleted = n,
            Err(d) => {
                ctx.progress.finish();
                return vec![d];
            }
        }
        ctx.progress.finish();
    }
    report.complete = true;
    Vec::new()
}

/// For each signed version of the site, the SHA-256 its `files.txt` and
/// `SHA256SUMS` had before it was signed (see [`plan::unsigned_indexes`]).
fn unsigned_indexes(site: &std::path::Path, files: &[LocalFile]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let signature = format!("/base/{}", crate::model::layout::SIGNATURE);
    for sig in files.iter().filter(|f| f.path.ends_with(&signature)) {
        let dir = &sig.path[..sig.path.len() - crate::model::layout::SIGNATURE.len()];
        let read = |name: &str| std::fs::read_to_string(site.join(format!("{dir}{name}"))).ok();
        let (Some(files_txt), Some(sums)) = (read("files.txt"), read("SHA256SUMS")) else {
            continue;
        };
        let (files_txt, sums) = plan::unsigned_indexes(&files_txt, &sums);
        let sha = |text: &str| crate::model::site::sha256_hex(text.as_bytes());
        out.insert(format!("{dir}files.txt"), sha(&files_txt));
        out.insert(format!("{dir}SHA256SUMS"), sha(&sums));
    }
    out
}

/// The plan as printed.
fn actions(plan: &Plan) -> Vec<Action> {
    let uploads = plan.uploads.iter().map(|u| Action {
        action: "upload",
        path: u.file.path.clone(),
        reason: match u.reason {
            Reason::New => "new",
            Reason::Changed => "changed",
        },
        bytes: Some(u.file.size),
    });
    let deletes = plan.deletes.iter().map(|p| Action {
        action: "delete",
        path: p.clone(),
        reason: "",
        bytes: None,
    });
    uploads.chain(deletes).collect()
}

fn object_path(ctx: &Context, site_path: &str) -> Result<Path, Diagnostic> {
    Path::parse(ctx.target.key(site_path)).map_err(|e| {
        Diagnostic::new(
            rule::DEPLOY_SITE_INVALID,
            format!("`{site_path}` cannot be an object key: {e}"),
        )
        .in_file(site_path)
    })
}

fn unreachable(ctx: &Context, what: &str, site_path: &str, e: &object_store::Error) -> Diagnostic {
    let url = match site_path.is_empty() {
        true => ctx.target.to_string(),
        false => ctx.target.url(site_path),
    };
    Diagnostic::new(
        rule::STORE_UNREACHABLE,
        format!("cannot {what} {url}: {}", chain(e)),
    )
}

/// Every object below the prefix, by site path.
async fn list(ctx: &Context) -> Result<BTreeMap<String, Remote>, Diagnostic> {
    let prefix = match ctx.target.prefix.is_empty() {
        true => None,
        false => Some(Path::parse(&ctx.target.prefix).map_err(|e| {
            Diagnostic::new(rule::DEPLOY_TARGET_INVALID, format!("the prefix: {e}"))
        })?),
    };
    ctx.progress.start("listing", 0, 0);
    let mut objects = ctx.store.list(prefix.as_ref());
    let mut out = BTreeMap::new();
    while let Some(item) = objects.next().await {
        let meta = item.map_err(|e| unreachable(ctx, "list", "", &e))?;
        ctx.progress.step(0);
        let Some(path) = ctx.target.site_path(meta.location.as_ref()) else {
            continue;
        };
        out.insert(
            path.to_string(),
            Remote {
                size: meta.size,
                e_tag: meta.e_tag,
                sha256: None,
            },
        );
        if out.len() > MAX_OBJECTS {
            ctx.progress.finish();
            return Err(Diagnostic::new(
                rule::DEPLOY_TARGET_INVALID,
                format!(
                    "{} holds more than {MAX_OBJECTS} objects: not a site's prefix",
                    ctx.target
                ),
            ));
        }
    }
    ctx.progress.finish();
    Ok(out)
}

/// Fills in the SHA-256 of the objects the plan must compare.
async fn learn_sha256(
    ctx: &Context,
    files: &[LocalFile],
    remote: &mut BTreeMap<String, Remote>,
) -> Result<(), Diagnostic> {
    let wanted: Vec<(&str, u64)> = files
        .iter()
        .filter_map(|f| {
            let r = remote.get(&f.path)?;
            plan::needs_sha256(f, r).then_some((f.path.as_str(), r.size))
        })
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    ctx.progress.start("comparing", wanted.len(), 0);
    let found: Vec<Result<(&str, Option<Seen>), Diagnostic>> = stream::iter(wanted)
        .map(|(path, size)| async move {
            let seen = match seen(ctx, path).await? {
                Some(s) if s.sha256.is_none() && plan::version_folder(path).is_some() => {
                    Some(Seen {
                        sha256: hash_object(ctx, path, size).await?,
                        ..s
                    })
                }
                other => other,
            };
            Ok((path, seen))
        })
        .buffer_unordered(ctx.concurrency)
        .inspect(|_| ctx.progress.step(0))
        .collect()
        .await;
    ctx.progress.finish();
    for item in found {
        let (path, seen) = item?;
        match seen {
            Some(s) => {
                if let Some(r) = remote.get_mut(path) {
                    r.sha256 = s.sha256;
                    r.size = s.size;
                    if s.e_tag.is_some() {
                        r.e_tag = s.e_tag;
                    }
                }
            }
            // Deleted since the listing.
            None => {
                remote.remove(path);
            }
        }
    }
    Ok(())
}

/// What a HEAD tells of an object.
struct Seen {
    size: u64,
    e_tag: Option<String>,
    sha256: Option<String>,
}

/// The object at `site_path` as a HEAD sees it; `None` when there is none.
async fn seen(ctx: &Context, site_path: &str) -> Result<Option<Seen>, Diagnostic> {
    let path = object_path(ctx, site_path)?;
    let options = GetOptions {
        head: true,
        ..GetOptions::default()
    };
    match ctx.store.get_opts(&path, options).await {
        Ok(r) => {
            let sha256 = r
                .attributes
                .get(&Attribute::Metadata(SHA256_KEY.into()))
                .map(|v| v.as_ref().to_ascii_lowercase())
                .filter(|v| v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()));
            Ok(Some(Seen {
                size: r.meta.size,
                e_tag: r.meta.e_tag,
                sha256,
            }))
        }
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(unreachable(ctx, "read", site_path, &e)),
    }
}

/// The SHA-256 of an object's bytes, downloaded (when not too large).
async fn hash_object(
    ctx: &Context,
    site_path: &str,
    size: u64,
) -> Result<Option<String>, Diagnostic> {
    if size > MAX_COMPARED {
        return Ok(None);
    }
    let path = object_path(ctx, site_path)?;
    let got = match ctx.store.get_opts(&path, GetOptions::default()).await {
        Ok(g) => g,
        Err(object_store::Error::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(unreachable(ctx, "download", site_path, &e)),
    };
    let mut body = got.into_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = body
        .try_next()
        .await
        .map_err(|e| unreachable(ctx, "download", site_path, &e))?
    {
        bytes.extend_from_slice(&chunk);
        if bytes.len() as u64 > MAX_COMPARED {
            return Ok(None);
        }
    }
    Ok(Some(sha256_hex(&bytes)))
}

/// Uploads one file: the bytes uploaded, or `None` when another deploy
/// had already put the same bytes there.
async fn upload(ctx: &Context, u: &Upload) -> Result<Option<u64>, Diagnostic> {
    let path = object_path(ctx, &u.file.path)?;
    let bytes = local::read(&ctx.site, &u.file)?;
    let len = bytes.len() as u64;
    let mut attributes = Attributes::new();
    attributes.insert(Attribute::ContentType, content_type(&u.file.path).into());
    attributes.insert(
        Attribute::CacheControl,
        plan::cache_control(&u.file.path).into(),
    );
    attributes.insert(
        Attribute::Metadata(SHA256_KEY.into()),
        u.file.sha256.clone().into(),
    );
    let mode = match &u.write {
        Write::Create | Write::Replace(None) => PutMode::Create,
        Write::Replace(Some(e_tag)) => PutMode::Update(UpdateVersion {
            e_tag: Some(e_tag.clone()),
            version: None,
        }),
        Write::Overwrite => PutMode::Overwrite,
    };
    let options = PutOptions {
        mode,
        attributes,
        ..PutOptions::default()
    };
    match ctx
        .store
        .put_opts(&path, PutPayload::from(bytes), options)
        .await
    {
        Ok(_) => Ok(Some(len)),
        Err(
            object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. },
        ) => {
            // Someone wrote it since the listing: fine if with our bytes.
            match seen(ctx, &u.file.path).await? {
                Some(s) if s.sha256.as_deref() == Some(u.file.sha256.as_str()) => Ok(None),
                _ => Err(conflict(ctx, u)),
            }
        }
        Err(e) => Err(unreachable(ctx, "upload", &u.file.path, &e)),
    }
}

fn conflict(ctx: &Context, u: &Upload) -> Diagnostic {
    let url = ctx.target.url(&u.file.path);
    let message = match u.write {
        Write::Replace(_) => format!(
            "`{url}` changed while this deploy ran: another deploy replaced it, so this one stops before its pages"
        ),
        _ => format!(
            "`{url}` appeared with other bytes while this deploy ran: another deploy is publishing this version"
        ),
    };
    Diagnostic::new(rule::DEPLOY_CONFLICT, message).in_file(&u.file.path)
}

/// Reads back the version objects just uploaded: each must hold this
/// deploy's bytes before the version's `SHA256SUMS` may vouch for them (a
/// server that ignores `If-None-Match` would let a racing deploy replace
/// one).
async fn read_back(ctx: &Context, batch: &[&Upload]) -> Vec<Diagnostic> {
    let versions: Vec<&&Upload> = batch
        .iter()
        .filter(|u| plan::version_folder(&u.file.path).is_some())
        .collect();
    let results: Vec<Result<(), Diagnostic>> = stream::iter(versions)
        .map(|u| async move {
            match seen(ctx, &u.file.path).await? {
                Some(s) if s.sha256.as_deref() == Some(u.file.sha256.as_str()) => Ok(()),
                _ => Err(conflict(ctx, u)),
            }
        })
        .buffer_unordered(ctx.concurrency)
        .collect()
        .await;
    results.into_iter().filter_map(Result::err).collect()
}

/// Deletes the objects at `paths`: how many were deleted.
async fn delete(ctx: &Context, paths: &[String]) -> Result<usize, Diagnostic> {
    let mut keys = Vec::with_capacity(paths.len());
    for p in paths {
        keys.push(Ok(object_path(ctx, p)?));
    }
    let mut results = ctx.store.delete_stream(stream::iter(keys).boxed());
    let mut deleted = 0;
    while let Some(r) = results.next().await {
        match r {
            Ok(_) | Err(object_store::Error::NotFound { .. }) => {
                deleted += 1;
                ctx.progress.step(0);
            }
            Err(e) => return Err(unreachable(ctx, "delete", "", &e)),
        }
    }
    Ok(deleted)
}

/// A progress line on the terminal, redrawn at most ten times a second.
pub struct Progress {
    enabled: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    phase: &'static str,
    done: usize,
    total: usize,
    bytes: u64,
    total_bytes: u64,
    drawn: Option<Instant>,
}

impl Progress {
    /// Progress drawn on standard error when `enabled` and it is a
    /// terminal.
    pub fn new(enabled: bool) -> Self {
        Progress {
            enabled: enabled && std::io::stderr().is_terminal(),
            state: Mutex::new(State::default()),
        }
    }

    fn start(&self, phase: &'static str, total: usize, total_bytes: u64) {
        if let Ok(mut s) = self.state.lock() {
            *s = State {
                phase,
                total,
                total_bytes,
                ..State::default()
            };
        }
    }

    fn step(&self, bytes: u64) {
        if !self.enabled {
            return;
        }
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        s.done += 1;
        s.bytes += bytes;
        let now = Instant::now();
        if s.drawn
            .is_some_and(|t| now - t < Duration::from_millis(100))
            && s.done != s.total
        {
            return;
        }
        s.drawn = Some(now);
        let mut line = format!("{} {}", s.phase, s.done);
        if s.total > 0 {
            line.push_str(&format!("/{}", s.total));
        }
        if s.total_bytes > 0 {
            line.push_str(&format!(" ({} of {})", size(s.bytes), size(s.total_bytes)));
        }
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
    }

    fn finish(&self) {
        let drawn = self
            .state
            .lock()
            .map(|mut s| s.drawn.take().is_some())
            .unwrap_or(false);
        if self.enabled && drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

/// Bytes for people: `812 B`, `14.2 KiB`, `3.1 MiB`.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(super::size(812), "812 B");
        assert_eq!(super::size(14_540), "14.2 KiB");
        assert_eq!(super::size(3 << 20), "3.0 MiB");
    }
}
