use basepress::diagnostics::{self, rule};
use basepress::engine::{self, Outcome};
use basepress::report::{self, Format};
use clap::{Args, Parser, Subcommand};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Publishes a docs site with the versioned Kustomize bases it tells people
/// to download, after checking that both are true.
///
/// Exit codes: 0 success, 1 check findings, 2 usage error or unreadable input.
/// Writes a report to standard output. A reader that went away
/// (`| head -1`) is no error: the findings still decide the exit code. Any
/// other failure to write (a full disk) leaves the report incomplete: exit 2.
fn emit(text: std::fmt::Arguments) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_fmt(text).and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            eprintln!("error: cannot write the report to standard output: {e}");
            std::process::exit(2);
        }
    }
}

macro_rules! out {
    ($($t:tt)*) => { emit(format_args!($($t)*)) };
}

macro_rules! outln {
    ($($t:tt)*) => { emit(format_args!("{}\n", format_args!($($t)*))) };
}

/// Writes to standard error, where the text report and what a command
/// did go. Nothing is left to tell of a failure to write there (a reader
/// that went away, `2>&1 | head -1`): it is not an error of the run.
fn emit_err(text: std::fmt::Arguments) {
    let _ = std::io::stderr().lock().write_fmt(text);
}

macro_rules! err {
    ($($t:tt)*) => { emit_err(format_args!($($t)*)) };
}

macro_rules! errln {
    ($($t:tt)*) => { emit_err(format_args!("{}\n", format_args!($($t)*))) };
}

#[derive(Parser)]
#[command(name = "basepress", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// What `build` and `check` share: the project, what it is checked
/// against and how the run reports.
#[derive(Args)]
struct Run {
    /// The docs project (the folder with site.yaml).
    #[arg(long, default_value = ".", value_parser = project_root)]
    root: PathBuf,
    /// A previously deployed site: every version deployed there must be
    /// published again, byte for byte.
    #[arg(long, value_name = "DIR")]
    against: Option<PathBuf>,
    /// How findings are printed.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also print how long each stage took.
    #[arg(long)]
    timings: bool,
    /// The release key (an unencrypted OpenSSH ed25519 private key): signs
    /// the versions not released yet [default: the key text in
    /// $BASEPRESS_SIGNING_KEY, if set].
    #[arg(long, value_name = "FILE")]
    signing_key: Option<PathBuf>,
    /// Where the images of the releases are, their tag being each base's
    /// version: `oci:DIR`, `docker-archive:FILE`, `registry://HOST/REPO`
    /// [default: site.yaml's `image.source`]. The checks then read each
    /// base's image itself. Registry credentials as for `image inspect`.
    #[arg(long, value_name = "SOURCE")]
    image: Option<String>,
    /// Plain HTTP to an image registry that is not on a loopback address.
    #[arg(long)]
    image_insecure: bool,
    /// The longest one template render may run, in seconds: a run whose
    /// render takes longer stops with `render-timeout` (exit 2), leaving
    /// the output as it was.
    #[arg(long, value_name = "SECONDS", default_value_t = RENDER_TIMEOUT, value_parser = timeout_range())]
    render_timeout: u64,
    /// The most memory the run may hold while a template renders, in MiB:
    /// a render that grows it past this stops with `render-memory` (exit
    /// 2), leaving the output as it was.
    #[arg(long, value_name = "MIB", default_value_t = RENDER_MEMORY, value_parser = memory_range())]
    render_memory: u64,
}

/// Seconds one template render may run by default.
const RENDER_TIMEOUT: u64 = 30;

/// MiB the run may hold while a template renders, by default.
const RENDER_MEMORY: u64 = 4096;

/// What `--render-memory` takes: from 64 MiB to 1 TiB.
fn memory_range() -> clap::builder::RangedU64ValueParser {
    clap::value_parser!(u64).range(64..=1 << 20)
}

/// The limits a watchdog holds template renders to.
#[derive(Clone, Copy)]
struct Limits {
    time: std::time::Duration,
    /// Resident memory of the whole process, in bytes.
    memory: u64,
}

/// The memory the process holds now (its resident set), where the system
/// says (Linux's /proc).
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Watches the template renders of a run: when one outlasts the time
/// limit, or the process holds more memory than the limit while one runs,
/// it reports `render-timeout` or `render-memory` in `format` and ends
/// the process with exit code 2 (nothing inside a render can stop it). A build's staging folder
/// is left for the next build to remove, as after a kill; the output
/// stays as it was.
fn watchdog(
    limits: Limits,
    root: PathBuf,
    format: Format,
) -> std::sync::Arc<basepress::render::watch::Watch> {
    let watch = std::sync::Arc::new(basepress::render::watch::Watch::default());
    let watched = std::sync::Arc::clone(&watch);
    // Often enough to catch a value doubling in a loop between two looks.
    let tick = limits.time.min(std::time::Duration::from_millis(50));
    std::thread::spawn(move || loop {
        std::thread::sleep(tick);
        let Some((took, what)) = watched.longest() else {
            continue;
        };
        let held = resident_bytes().filter(|&b| b > limits.memory);
        let d = if let Some(held) = held {
            diagnostics::Diagnostic::new(
                rule::RENDER_MEMORY,
                format!(
                    "rendering {what} made the run hold {} MiB, more than the {} MiB it may: a template builds a value that grows without bound",
                    held >> 20,
                    limits.memory >> 20
                ),
            )
            .help("look for a value built from itself in a loop (`set_global s = s ~ s`); for a site that really needs more, pass --render-memory MIB")
        } else if took > limits.time {
            diagnostics::Diagnostic::new(
                rule::RENDER_TIMEOUT,
                format!(
                    "rendering {what} ran for more than {} s: a loop or a macro of the templates does too much work",
                    limits.time.as_secs()
                ),
            )
            .help("look for loops nested over the site's data, or a macro that calls itself more than once per item; for a page that really needs longer, pass --render-timeout SECONDS")
        } else {
            continue;
        };
        report(&Outcome::of(vec![d]), &root, format);
        if format == Format::Text {
            errln!("nothing was written");
        }
        std::process::exit(2);
    });
    watch
}

impl Run {
    fn options(&self) -> Result<engine::Options, Box<Outcome>> {
        let env = image_environment();
        let image = basepress::analyze::images::ImageOptions {
            // A folder or archive on the command line is relative to where
            // basepress runs, not to the project.
            source: self.image.as_deref().map(absolute_source),
            oci: basepress::oci::Options {
                cache_dir: env.default_cache,
                credentials: basepress::oci::Credentials {
                    docker_config: env.default_docker_config,
                    bearer_token: env.bearer_token,
                },
                insecure: self.image_insecure,
                ..basepress::oci::Options::default()
            },
        };
        let limit = Limits {
            time: std::time::Duration::from_secs(self.render_timeout),
            memory: self.render_memory << 20,
        };
        Ok(engine::Options {
            against: self.against.clone(),
            signer: signer(self.signing_key.as_deref())?,
            image,
            watch: Some(watchdog(limit, self.root.clone(), self.format)),
            ..environment()
        })
    }

    /// Prints the findings and, when asked, how long each stage took.
    fn report(&self, outcome: &Outcome) {
        report(outcome, &self.root, self.format);
        if self.format == Format::Text {
            for note in &outcome.notes {
                errln!("{note}");
            }
        }
        if self.timings {
            errln!("timings: {}", outcome.timings);
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Check the project, then render the site into the output folder.
    ///
    /// Nothing is written when a check finds an error: the previous output
    /// stays as it was.
    Build {
        #[command(flatten)]
        run: Run,
        /// Where the site goes [default: ROOT/site].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Load and check the project without writing anything.
    Check {
        #[command(flatten)]
        run: Run,
        /// Also print how many pages each language translates.
        #[arg(long)]
        coverage: bool,
        /// Also list the links to other hosts (never fetched: no network).
        #[arg(long)]
        external: bool,
    },
    /// Record a base as released in bases/published.lock, after every check
    /// passes. A released version is immutable: later builds refuse any
    /// change to its files.
    Release {
        /// The version to release (`v1.30.0`).
        version: String,
        /// The docs project (the folder with site.yaml).
        #[arg(long, default_value = ".", value_parser = project_root)]
        root: PathBuf,
        /// How findings are printed.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// The release key, when site.yaml configures `signing`: the
        /// version's signature is stored with the release [default: the key
        /// text in $BASEPRESS_SIGNING_KEY, if set].
        #[arg(long, value_name = "FILE")]
        signing_key: Option<PathBuf>,
    },
    /// Write a new docs project that builds at once: site.yaml, a start
    /// page per language, image data with one release and a base that
    /// passes every check.
    Init {
        /// The project folder: new, or empty (a lone `.git` is allowed).
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// The languages, the default one first (`es,pt,en`).
        #[arg(long, value_delimiter = ',', default_value = basepress::scaffold::DEFAULT_LANGUAGE)]
        languages: Vec<String>,
    },
    /// Start the next release: copy the newest base before it into
    /// bases/vX.Y.Z/, add the version to the image data, and print the
    /// steps left.
    NewRelease {
        /// The new version (`v1.31.0`); it must not have a base yet.
        version: String,
        /// The docs project (the folder with site.yaml).
        #[arg(long, default_value = ".", value_parser = project_root)]
        root: PathBuf,
    },
    /// Check a published site as an installer would: every file that
    /// files.txt lists, its SHA-256 in SHA256SUMS, and the signature.
    ///
    /// Exit codes: 0 everything matches, 1 something does not, 2 the site
    /// cannot be read.
    Verify {
        /// The site: its root URL (`https://docs.example.com`) or the folder
        /// a build wrote.
        site: String,
        /// One version (`v1.30.0`); every version in versions.txt when left
        /// out.
        #[arg(value_parser = parse_version)]
        version: Option<semver::Version>,
        /// Trust this allowed_signers file instead of the site's own, and
        /// require every version to be signed.
        #[arg(long, value_name = "FILE")]
        allowed_signers: Option<PathBuf>,
        /// The identity installers verify with (`ssh-keygen -Y verify -I`):
        /// the signer must be one of its principals.
        #[arg(long, value_name = "ID")]
        identity: Option<String>,
        /// The namespace installers verify with, before `/vX.Y.Z`
        /// (`ssh-keygen -Y verify -n NS/vX.Y.Z`): signatures must be made in
        /// exactly it.
        #[arg(long, value_name = "NS")]
        namespace: Option<String>,
        /// Seconds one download may take (1 to 86400).
        #[arg(long, default_value_t = 30, value_parser = timeout_range())]
        timeout: u64,
        /// How findings are printed.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Put a built site into object storage (S3 and S3-compatible servers,
    /// GCS, Azure), uploading only what changed and never changing a
    /// published version.
    ///
    /// The site folder is checked as `verify` checks it, then compared with
    /// the bucket by the SHA-256 each object keeps in its metadata. Indexes
    /// are uploaded after what they name, a version's objects only if
    /// absent, and deletions come last. Credentials and endpoint come from
    /// the AWS variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
    /// AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL) or a profile
    /// (AWS_PROFILE, --profile); GCS and Azure from GOOGLE_* and AZURE_*.
    ///
    /// Exit codes: 0 deployed (or planned), 1 the bucket or the site says
    /// no (a published version would change, a conflict, too many
    /// deletions), 2 the target, the store or the site cannot be used.
    Deploy {
        /// Where: `s3://BUCKET/PREFIX` (`gs://`, `az://CONTAINER/PREFIX`).
        target: String,
        /// The docs project, whose built site is deployed.
        #[arg(long, default_value = ".", value_parser = project_root)]
        root: PathBuf,
        /// The built site [default: ROOT/site]. Deploy never builds: run
        /// `basepress build` first.
        #[arg(long, value_name = "DIR")]
        site: Option<PathBuf>,
        /// The AWS profile (of ~/.aws/config and ~/.aws/credentials) to take
        /// credentials and region from [default: $AWS_PROFILE].
        #[arg(long)]
        profile: Option<String>,
        /// Stop, writing nothing, when the deploy would delete more objects
        /// than this.
        #[arg(long, default_value_t = 256)]
        max_deletes: usize,
        /// Print the plan and write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Seconds one request may take (1 to 86400).
        #[arg(long, default_value_t = 30, value_parser = timeout_range())]
        timeout: u64,
        /// How many times a failed request is tried again.
        #[arg(long, default_value_t = 3)]
        retries: usize,
        /// Requests at once.
        #[arg(long, default_value_t = 16)]
        jobs: usize,
        /// How findings (and, for `json`, the plan and summary) are printed.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Serve the site for preview, rebuilding it and reloading open pages
    /// whenever an input changes.
    ///
    /// The site is rendered in memory: `site/` is never written. A build
    /// that fails keeps the server running: pages show the findings until
    /// they are fixed. Stop it with Ctrl-C.
    Serve {
        /// The docs project (the folder with site.yaml).
        #[arg(long, default_value = ".", value_parser = project_root)]
        root: PathBuf,
        /// The address to listen on.
        #[arg(long, default_value = "127.0.0.1")]
        bind: std::net::IpAddr,
        /// The port [default: 1111, or the next free one up to 1130]; 0 lets
        /// the system choose.
        #[arg(long)]
        port: Option<u16>,
        /// Also answer requests that name this host (a name pointing at
        /// this machine, or a proxy's); repeat for more. Requests naming
        /// any other host are refused (DNS rebinding), except the address
        /// listened on and, on loopback, `localhost`.
        #[arg(long = "allow-host", value_name = "NAME")]
        allow_host: Vec<String>,
        /// The longest one template render may run, in seconds: a render
        /// that takes longer stops the server with `render-timeout`.
        #[arg(long, value_name = "SECONDS", default_value_t = RENDER_TIMEOUT, value_parser = timeout_range())]
        render_timeout: u64,
        /// The most memory the server may hold while a template renders,
        /// in MiB: past it, the server stops with `render-memory`.
        #[arg(long, value_name = "MIB", default_value_t = RENDER_MEMORY, value_parser = memory_range())]
        render_memory: u64,
    },
    /// Read container images (OCI layouts, docker-archives, registries).
    Image {
        #[command(subcommand)]
        command: ImageCommand,
    },
    /// List every rule with its id, description and remedy.
    Rules {
        /// `text` for people, `json` for scripts.
        #[arg(long, value_enum, default_value_t = RulesFormat::Text)]
        format: RulesFormat,
    },
}

/// How `rules` prints the rules: there are no findings to report, so
/// only these two.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RulesFormat {
    Text,
    Json,
}

/// The settings the environment gives every run: only the command line
/// reads the environment, and hands its values to the engine.
fn environment() -> engine::Options {
    engine::Options {
        against: None,
        source_date_epoch: std::env::var_os("SOURCE_DATE_EPOCH")
            .map(|e| e.to_string_lossy().into_owned()),
        signer: None,
        image: Default::default(),
        build_id: build_id(),
        watch: None,
        preview: false,
    }
}

/// This binary, for the build cache: its version, and the size and time
/// of its executable, which change whenever it is rebuilt. None where the
/// executable cannot be read: then nothing is reused.
fn build_id() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let meta = std::fs::metadata(exe).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!(
        "basepress {} {} {}.{:09}",
        env!("CARGO_PKG_VERSION"),
        meta.len(),
        modified.as_secs(),
        modified.subsec_nanos()
    ))
}

/// What the environment says about object stores: the AWS, Google and
/// Azure variables, and the home folder (for ~/.aws).
fn store_environment() -> basepress::deploy::Environment {
    let vars = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| {
            ["AWS_", "GOOGLE_", "AZURE_"]
                .iter()
                .any(|p| k.starts_with(p))
        })
        .collect();
    basepress::deploy::Environment {
        vars,
        home: std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from),
    }
}

/// `oci:DIR` and `docker-archive:FILE` with their path made absolute from
/// the working folder; other sources as they are.
fn absolute_source(source: &str) -> String {
    for scheme in ["oci:", "docker-archive:"] {
        if let Some(rest) = source.strip_prefix(scheme) {
            if let Ok(cwd) = std::env::current_dir() {
                if !rest.starts_with('/') {
                    return format!("{scheme}{}", cwd.join(rest).display());
                }
            }
        }
    }
    source.to_string()
}

/// Whether findings printed on standard error are coloured.
fn color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

#[derive(Subcommand)]
enum ImageCommand {
    /// Print what basepress sees in an image: digest per platform, user,
    /// commands on PATH, entrypoint, ports, labels.
    Inspect(basepress::oci::inspect::InspectArgs),
}

/// The defaults `image inspect` takes from the environment.
fn image_environment() -> basepress::oci::inspect::Environment {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = var("HOME");
    basepress::oci::inspect::Environment {
        default_cache: var("XDG_CACHE_HOME")
            .or_else(|| home.as_ref().map(|h| h.join(".cache")))
            .map(|d| d.join("basepress")),
        default_docker_config: var("DOCKER_CONFIG")
            .or_else(|| home.as_ref().map(|h| h.join(".docker")))
            .map(|d| d.join("config.json")),
        bearer_token: std::env::var("BASEPRESS_REGISTRY_TOKEN").ok(),
        color: std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    }
}

/// The project at `--root` (`.` unless given). Run from a folder inside a
/// project (`content/es/`), the nearest folder above with a site.yaml is
/// the project, as git finds its repository.
fn project_root(arg: &str) -> Result<PathBuf, String> {
    let given = PathBuf::from(arg);
    if arg != "." || given.join(basepress::load::config::FILE_NAME).exists() {
        return Ok(given);
    }
    let found = std::env::current_dir().ok().and_then(|cwd| {
        cwd.ancestors()
            .skip(1)
            .find(|d| d.join(basepress::load::config::FILE_NAME).is_file())
            .map(std::path::Path::to_path_buf)
    });
    Ok(found.unwrap_or(given))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Build { run, out } => {
            let format = run.format;
            let out = out.unwrap_or_else(|| run.root.join("site"));
            let start = Instant::now();
            let options = match run.options() {
                Ok(o) => o,
                Err(outcome) => {
                    run.report(&outcome);
                    return ExitCode::from(outcome.exit_code());
                }
            };
            let outcome = engine::build(&run.root, &out, &options);
            run.report(&outcome);
            if let Some(s) = &outcome.written {
                if format == Format::Text {
                    errln!(
                        "built {}: {} pages in {} languages, {} base(s){}, {} files in {:.2} s",
                        out.display(),
                        s.pages,
                        s.languages,
                        s.versions.len(),
                        if s.versions.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", s.versions.join(", "))
                        },
                        s.files,
                        start.elapsed().as_secs_f64()
                    );
                }
            } else if format == Format::Text {
                errln!("nothing was written: {} is unchanged", out.display());
            }
            ExitCode::from(outcome.exit_code())
        }
        Command::Check {
            run,
            coverage,
            external,
        } => {
            let format = run.format;
            let options = match run.options() {
                Ok(o) => o,
                Err(outcome) => {
                    run.report(&outcome);
                    return ExitCode::from(outcome.exit_code());
                }
            };
            let outcome = engine::check(&run.root, &options);
            if format == Format::Json {
                let mut extra = serde_json::Map::new();
                if coverage {
                    extra.insert("coverage".into(), coverage_json(&outcome.coverage));
                }
                if external {
                    extra.insert("external".into(), external_json(&outcome.external_links));
                }
                out!("{}", report::render_json_with(&outcome.diagnostics, extra));
                if run.timings {
                    errln!("timings: {}", outcome.timings);
                }
                return ExitCode::from(outcome.exit_code());
            }
            run.report(&outcome);
            if coverage && format == Format::Text {
                out!("{}", coverage_table(&outcome.coverage));
            }
            if external && format == Format::Text {
                for (url, at) in &outcome.external_links {
                    let line = at.line.unwrap_or(0);
                    outln!(
                        "{}  ({}:{line})",
                        report::escape_controls(url),
                        report::escape_controls(&at.file.display().to_string())
                    );
                }
            }
            if format == Format::Text && outcome.diagnostics.is_empty() {
                errln!("no findings");
            }
            ExitCode::from(outcome.exit_code())
        }
        Command::Release {
            version,
            root,
            format,
            signing_key,
        } => match signer(signing_key.as_deref()).and_then(|signer| {
            let options = engine::Options {
                signer,
                ..environment()
            };
            engine::release(&root, &version, &options)
        }) {
            Ok(outcome) => {
                // The warnings left, in the format asked for (a pipeline
                // that uploads SARIF gets a log on success too).
                report(&outcome, &root, format);
                for note in &outcome.notes {
                    errln!("{note}");
                }
                ExitCode::from(outcome.exit_code())
            }
            Err(outcome) => {
                report(&outcome, &root, format);
                if format == Format::Text {
                    errln!("nothing was released");
                }
                ExitCode::from(outcome.exit_code().max(1))
            }
        },
        Command::Init { dir, languages } => match basepress::scaffold::init(&dir, &languages) {
            Ok(created) => {
                err!("{}", init_summary(&created));
                ExitCode::SUCCESS
            }
            Err(d) => {
                report(&Outcome::of(vec![d]), &dir, Format::Text);
                ExitCode::from(2)
            }
        },
        Command::NewRelease { version, root } => {
            match basepress::scaffold::new_release(&root, &version) {
                Ok(prepared) => {
                    err!("{}", prepared.summary());
                    ExitCode::SUCCESS
                }
                Err(found) => {
                    let outcome = Outcome::of(found);
                    report(&outcome, &root, Format::Text);
                    errln!("nothing was written");
                    ExitCode::from(outcome.exit_code().max(2))
                }
            }
        }
        Command::Verify {
            site,
            version,
            allowed_signers,
            identity,
            namespace,
            timeout,
            format,
        } => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let options = basepress::verify::Options {
                version,
                allowed_signers,
                timeout: std::time::Duration::from_secs(timeout),
                identity,
                namespace,
                now: Some(now),
            };
            let (outcome, verified) = basepress::verify::verify(&site, &options);
            // Findings name site paths: for a folder, its files.
            let root = match site.contains("://") {
                true => PathBuf::new(),
                false => PathBuf::from(&site),
            };
            report(&outcome, &root, format);
            if format == Format::Text && outcome.exit_code() == 0 {
                errln!(
                    "verified {}: {} files match SHA256SUMS, {} signature(s) verified",
                    if verified.versions.is_empty() {
                        "no versions".to_string()
                    } else {
                        verified.versions.join(", ")
                    },
                    verified.files,
                    verified.signatures
                );
            }
            ExitCode::from(outcome.exit_code())
        }
        Command::Deploy {
            target,
            root,
            site,
            profile,
            max_deletes,
            dry_run,
            timeout,
            retries,
            jobs,
            format,
        } => {
            let site = site.unwrap_or_else(|| root.join("site"));
            let start = Instant::now();
            let options = basepress::deploy::Options {
                environment: store_environment(),
                profile,
                max_deletes,
                dry_run,
                progress: format == Format::Text,
                concurrency: jobs.clamp(1, 256),
                timeout: std::time::Duration::from_secs(timeout),
                retries,
                ..basepress::deploy::Options::new(target, &site)
            };
            let (outcome, done) = basepress::deploy::deploy(&options);
            if format == Format::Json {
                let mut extra = serde_json::Map::new();
                extra.insert(
                    "deploy".into(),
                    serde_json::to_value(&done).unwrap_or_default(),
                );
                out!("{}", report::render_json_with(&outcome.diagnostics, extra));
                return ExitCode::from(outcome.exit_code());
            }
            report(&outcome, &site, format);
            if format == Format::Text {
                deploy_summary(&site, &done, outcome.exit_code(), start.elapsed());
            }
            ExitCode::from(outcome.exit_code())
        }
        Command::Serve {
            root,
            bind,
            port,
            allow_host,
            render_timeout,
            render_memory,
        } => {
            let limit = Limits {
                time: std::time::Duration::from_secs(render_timeout),
                memory: render_memory << 20,
            };
            let options = basepress::serve::Options {
                build: engine::Options {
                    watch: Some(watchdog(limit, root.clone(), Format::Text)),
                    ..environment()
                },
                root,
                bind,
                port,
                allow_hosts: allow_host,
                color: color(),
            };
            match basepress::serve::run(options) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    errln!("error: {e:#}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Image {
            command: ImageCommand::Inspect(args),
        } => ExitCode::from(basepress::oci::inspect::run(&args, &image_environment())),
        Command::Rules { format } => {
            let mut stdout = std::io::stdout().lock();
            let text = match format {
                RulesFormat::Json => {
                    let mut s = serde_json::to_string_pretty(rule::ALL).unwrap_or_default();
                    s.push('\n');
                    s
                }
                RulesFormat::Text => rule::ALL
                    .iter()
                    .map(|r| {
                        format!(
                            "{} ({}, exit {})\n  {}\n  help: {}\n",
                            r.id,
                            match r.severity {
                                diagnostics::Severity::Error => "error",
                                diagnostics::Severity::Warning => "warning",
                            },
                            match r.class {
                                diagnostics::Class::Input => 2,
                                diagnostics::Class::Check => 1,
                            },
                            r.description,
                            r.remedy
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            };
            let _ = stdout.write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
    }
}

/// The release key: from `--signing-key FILE`, else the key text in
/// `BASEPRESS_SIGNING_KEY` (a pipeline's secret), else none.
fn signer(
    file: Option<&std::path::Path>,
) -> Result<Option<basepress::signing::Signer>, Box<Outcome>> {
    let failed = |d| Box::new(Outcome::of(vec![d]));
    if let Some(path) = file {
        return basepress::signing::Signer::read(path)
            .map(Some)
            .map_err(failed);
    }
    match std::env::var("BASEPRESS_SIGNING_KEY") {
        Ok(text) if !text.trim().is_empty() => {
            basepress::signing::Signer::parse(&text, "BASEPRESS_SIGNING_KEY")
                .map(Some)
                .map_err(failed)
        }
        _ => Ok(None),
    }
}

/// What `init` wrote and the commands to try next.
fn init_summary(created: &basepress::scaffold::Created) -> String {
    let dir = created.dir.display();
    let mut s = format!("created {dir}: {} files\n", created.files.len());
    for f in &created.files {
        s.push_str(&format!("  {}\n", f.display()));
    }
    if !created.strings_to_translate.is_empty() {
        s.push_str(&format!(
            "basepress has no interface strings for {}: translate i18n/<lang>.yaml\n",
            created.strings_to_translate.join(", ")
        ));
    }
    let root = match created.dir.as_os_str() == "." {
        true => String::new(),
        false => format!(" --root {dir}"),
    };
    s.push_str(&format!(
        "\nnext:\n  basepress serve{root}            preview at http://127.0.0.1:1111/{}/\n  basepress check{root}            every check, nothing written\n  basepress build{root}            the site, into {}\n  basepress release v1.0.0{root}   freeze the first base\n",
        created.default_language,
        created.dir.join("site").display()
    ));
    s
}

/// A timeout in whole seconds: at least one (zero would fail every request)
/// and at most a day, so that doubling it for retries cannot overflow.
fn timeout_range() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=86_400)
}

fn parse_version(s: &str) -> Result<semver::Version, String> {
    semver::Version::parse(s.strip_prefix('v').unwrap_or(s))
        .map_err(|e| format!("`{s}` is not a version like v1.30.0 ({e})"))
}

fn coverage_table(rows: &[engine::Coverage]) -> String {
    let mut out = String::from("language  translated  missing\n");
    for r in rows {
        out.push_str(&format!(
            "{:<9} {:>4}/{:<5}  {}\n",
            r.language,
            r.translated,
            r.total,
            if r.missing.is_empty() {
                "-".to_string()
            } else {
                r.missing.join(", ")
            }
        ));
    }
    out
}

/// `check --coverage --format json`: each language's translated pages.
fn coverage_json(rows: &[engine::Coverage]) -> serde_json::Value {
    rows.iter()
        .map(|r| {
            serde_json::json!({
                "language": r.language,
                "translated": r.translated,
                "total": r.total,
                "missing": r.missing,
            })
        })
        .collect()
}

/// `check --external --format json`: each link to another host, with
/// where it first appears.
fn external_json(links: &[(String, basepress::diagnostics::Location)]) -> serde_json::Value {
    links
        .iter()
        .map(|(url, at)| serde_json::json!({ "url": url, "location": at }))
        .collect()
}

/// What a deploy planned or did, for people: the plan of a dry run on
/// standard output, a summary on standard error.
fn deploy_summary(
    site: &std::path::Path,
    done: &basepress::deploy::Report,
    exit: u8,
    took: std::time::Duration,
) {
    use basepress::deploy::run::size;
    if done.target.is_empty() {
        return;
    }
    if !done.credentials.is_empty() {
        errln!("credentials: {}", done.credentials);
    }
    if done.dry_run {
        let mut out = std::io::stdout().lock();
        for a in &done.plan {
            let _ = match a.bytes {
                Some(b) => writeln!(
                    out,
                    "{:<7} {:<8} {:>10}  {}",
                    a.action,
                    a.reason,
                    size(b),
                    a.path
                ),
                None => writeln!(out, "{:<7} {:<8} {:>10}  {}", a.action, "", "", a.path),
            };
        }
    }
    let uploads = done.plan.iter().filter(|a| a.action == "upload").count();
    let bytes: u64 = done.plan.iter().filter_map(|a| a.bytes).sum();
    let deletes = done.plan.len() - uploads;
    if done.dry_run && exit == 0 {
        errln!(
            "dry run: {} to {}: would upload {uploads} file(s) ({}), delete {deletes}; {} unchanged; nothing was written",
            site.display(),
            done.target,
            size(bytes),
            done.unchanged
        );
    } else if done.complete {
        errln!(
            "deployed {} to {}: {} uploaded ({}), {} unchanged, {} deleted in {:.2} s",
            site.display(),
            done.target,
            done.uploaded,
            size(done.uploaded_bytes),
            done.unchanged,
            done.deleted,
            took.as_secs_f64()
        );
    } else if done.uploaded > 0 {
        errln!(
            "the deploy stopped after uploading {} file(s) ({}): every index in {} still names files it holds; deploy again to complete it",
            done.uploaded,
            size(done.uploaded_bytes),
            done.target
        );
    } else {
        errln!("nothing was written to {}", done.target);
    }
}

fn report(outcome: &Outcome, root: &std::path::Path, format: Format) {
    match format {
        Format::Text => err!(
            "{}",
            report::render_text(&outcome.diagnostics, root, color())
        ),
        Format::Json => out!("{}", report::render_json(&outcome.diagnostics)),
        Format::Github => out!("{}", report::render_github(&outcome.diagnostics, root)),
        Format::Sarif => out!("{}", report::sarif::render(&outcome.diagnostics, root)),
        Format::Junit => {
            let cases = report::junit::cases(&outcome.diagnostics);
            out!(
                "{}",
                report::junit::render(&cases, &outcome.diagnostics, root)
            );
        }
    }
}
