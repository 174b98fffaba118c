//! `basepress image inspect SOURCE[:TAG]`: what basepress sees in an
//! image, as text or JSON, and optionally the mechanical facts written as
//! a starting point for the image data file.

use super::{open, parse_source, Error, Image, Options, Platform};
use crate::diagnostics::{self, rule, Diagnostic};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

/// How `image inspect` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// The flags of `basepress image inspect`.
#[derive(Debug, Clone, clap::Args)]
pub struct InspectArgs {
    /// The image: `oci:DIR[:TAG]`, `docker-archive:FILE[:TAG]`,
    /// `registry://HOST[:PORT]/REPO[:TAG]` or `docker://HOST/REPO[:TAG]`.
    pub source: String,
    /// The tag, when the source names none.
    #[arg(long)]
    pub tag: Option<String>,
    /// `text` for people, `json` for scripts.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write the image's mechanical facts (user, ports, commands on
    /// PATH, environment defaults) to FILE, as a starting point for the
    /// image data file. FILE must not exist.
    #[arg(long, value_name = "FILE")]
    pub write_data: Option<PathBuf>,
    /// The image name in the written data file [default: the last part of
    /// the repository or folder name].
    #[arg(long)]
    pub name: Option<String>,
    /// Where facts are cached by digest [default: $XDG_CACHE_HOME/basepress,
    /// else ~/.cache/basepress].
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Read every layer, whatever the cache holds.
    #[arg(long)]
    pub no_cache: bool,
    /// A Docker config.json with registry credentials [default:
    /// $DOCKER_CONFIG/config.json, else ~/.docker/config.json]. A bearer
    /// token in BASEPRESS_REGISTRY_TOKEN wins over it.
    #[arg(long, value_name = "FILE")]
    pub registry_config: Option<PathBuf>,
    /// Plain HTTP to a registry that is not on a loopback address.
    #[arg(long)]
    pub insecure: bool,
    /// Seconds to wait for a connection or for any read from a registry.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
}

/// What the command line's environment gives `image inspect` (read by
/// the CLI layer, passed down).
#[derive(Debug, Clone, Default)]
pub struct Environment {
    pub default_cache: Option<PathBuf>,
    pub default_docker_config: Option<PathBuf>,
    pub bearer_token: Option<String>,
    pub color: bool,
}

impl InspectArgs {
    pub fn options(&self, env: &Environment) -> InspectOptions {
        InspectOptions {
            source: self.source.clone(),
            tag: self.tag.clone(),
            format: self.format,
            write_data: self.write_data.clone(),
            name: self.name.clone(),
            open: Options {
                cache_dir: if self.no_cache {
                    None
                } else {
                    self.cache.clone().or_else(|| env.default_cache.clone())
                },
                credentials: super::Credentials {
                    docker_config: self
                        .registry_config
                        .clone()
                        .or_else(|| env.default_docker_config.clone()),
                    bearer_token: env.bearer_token.clone(),
                },
                insecure: self.insecure,
                timeout: std::time::Duration::from_secs(self.timeout.max(1)),
                limits: super::Limits::default(),
            },
            color: env.color,
        }
    }
}

/// Runs `image inspect` with the process's standard output and error.
pub fn run(args: &InspectArgs, env: &Environment) -> u8 {
    let opts = args.options(env);
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    inspect_command(&opts, &mut out, &mut err)
}

/// What `image inspect` was asked.
#[derive(Debug, Clone)]
pub struct InspectOptions {
    /// The source as written (`oci:DIR:1.29.0`).
    pub source: String,
    /// The tag when the source has none.
    pub tag: Option<String>,
    pub format: Format,
    /// Where to write the data file's facts, if anywhere.
    pub write_data: Option<PathBuf>,
    /// The data file's `name` (the source's last name part by default).
    pub name: Option<String>,
    pub open: Options,
    /// Colours in text findings.
    pub color: bool,
}

#[derive(Serialize)]
struct JsonCommand {
    name: String,
    path: String,
    target: String,
    /// Whether the image user may execute it.
    executable: bool,
}

#[derive(Serialize)]
struct JsonPlatform<'a> {
    platform: String,
    manifest_digest: Option<&'a str>,
    config_digest: &'a str,
    cached: bool,
    user: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    resolved_user: Option<&'a super::User>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_error: Option<&'a str>,
    entrypoint: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    entrypoint_path: Option<String>,
    cmd: &'a [String],
    working_dir: &'a str,
    path: &'a str,
    env: BTreeMap<&'a str, &'a str>,
    exposed_ports: &'a [String],
    labels: &'a BTreeMap<String, String>,
    files: usize,
    commands: Vec<JsonCommand>,
}

#[derive(Serialize)]
struct JsonImage<'a> {
    source: &'a str,
    tag: Option<&'a str>,
    digest: Option<&'a str>,
    media_type: &'a str,
    platforms: Vec<JsonPlatform<'a>>,
}

fn gids_of(p: &Platform) -> (u32, Vec<u32>) {
    p.identity(None, None, None, &[])
}

fn json_platform(p: &Platform) -> JsonPlatform<'_> {
    let (uid, gids) = gids_of(p);
    let commands = p
        .commands()
        .into_iter()
        .map(|(name, c)| JsonCommand {
            executable: super::can_execute(c.entry, uid, &gids),
            name,
            path: c.path,
            target: c.target,
        })
        .collect();
    JsonPlatform {
        platform: p.name(),
        manifest_digest: p.manifest_digest.as_deref(),
        config_digest: &p.config_digest,
        cached: p.cached,
        user: &p.config.user,
        resolved_user: p.user.as_ref(),
        user_error: p.user_error.as_deref(),
        entrypoint: &p.config.entrypoint,
        entrypoint_path: p
            .config
            .entrypoint
            .first()
            .and_then(|e| p.find_command(e))
            .map(|c| c.target),
        cmd: &p.config.cmd,
        working_dir: p.config.cwd(),
        path: p.config.path(),
        env: p.config.env_pairs().into_iter().collect(),
        exposed_ports: &p.config.exposed_ports,
        labels: &p.config.labels,
        files: p.fs.len(),
        commands,
    }
}

/// The text view of an image.
pub fn render_text(image: &Image) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "image     {}{}",
        image.source,
        image
            .tag
            .as_deref()
            .map(|t| format!(":{t}"))
            .unwrap_or_default()
    );
    match &image.digest {
        Some(d) => {
            let _ = writeln!(out, "digest    {d} ({})", short_type(&image.media_type));
        }
        None => {
            let _ = writeln!(out, "digest    none ({}: no manifest)", image.media_type);
        }
    }
    for p in &image.platforms {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{}{}",
            p.name(),
            if p.cached { " (cached)" } else { "" }
        );
        if let Some(m) = &p.manifest_digest {
            let _ = writeln!(out, "  manifest    {m}");
        }
        let _ = writeln!(out, "  config      {}", p.config_digest);
        let user = match (&p.user, &p.user_error) {
            (Some(u), _) => format!(
                "{} (uid {}, gid {}{}, home {})",
                u.name
                    .clone()
                    .unwrap_or_else(|| if p.config.user.is_empty() {
                        "root".into()
                    } else {
                        p.config.user.clone()
                    }),
                u.uid,
                u.gid,
                if u.groups.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", groups {}",
                        u.groups
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(",")
                    )
                },
                u.home
            ),
            (None, Some(e)) => format!("`{}`: {e}", p.config.user),
            (None, None) => p.config.user.clone(),
        };
        let _ = writeln!(out, "  user        {user}");
        let _ = writeln!(out, "  entrypoint  {}", shell_words(&p.config.entrypoint));
        let _ = writeln!(out, "  cmd         {}", shell_words(&p.config.cmd));
        let _ = writeln!(out, "  workdir     {}", p.config.cwd());
        let ports = if p.config.exposed_ports.is_empty() {
            "none".to_string()
        } else {
            p.config.exposed_ports.join(", ")
        };
        let _ = writeln!(out, "  ports       {ports}");
        for (i, (k, v)) in p.config.labels.iter().enumerate() {
            let head = if i == 0 { "labels" } else { "" };
            let _ = writeln!(out, "  {head:<11} {k}={v}");
        }
        for (i, (k, v)) in p.config.env_pairs().iter().enumerate() {
            let head = if i == 0 { "env" } else { "" };
            let _ = writeln!(out, "  {head:<11} {k}={v}");
        }
        let (uid, gids) = gids_of(p);
        let cmds = p.commands();
        let names: Vec<String> = cmds
            .iter()
            .map(|(n, c)| {
                if super::can_execute(c.entry, uid, &gids) {
                    n.clone()
                } else {
                    format!("{n} (not executable by the user)")
                }
            })
            .collect();
        let _ = writeln!(
            out,
            "  commands    {} on PATH: {}",
            names.len(),
            names.join(", ")
        );
        let _ = writeln!(out, "  files       {}", p.fs.len());
    }
    out
}

fn short_type(media_type: &str) -> &str {
    match media_type {
        super::spec::OCI_INDEX | super::spec::DOCKER_LIST => "index",
        super::spec::OCI_MANIFEST | super::spec::DOCKER_MANIFEST => "manifest",
        other => other,
    }
}

fn shell_words(words: &[String]) -> String {
    if words.is_empty() {
        return "none".to_string();
    }
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./-_".contains(&b))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The JSON view of an image.
pub fn render_json(image: &Image) -> String {
    let view = JsonImage {
        source: &image.source,
        tag: image.tag.as_deref(),
        digest: image.digest.as_deref(),
        media_type: &image.media_type,
        platforms: image.platforms.iter().map(json_platform).collect(),
    };
    let mut s = serde_json::to_string_pretty(&view).unwrap_or_default();
    s.push('\n');
    s
}

/// The image data file's mechanical facts: the release, the user, the
/// ports, every command on `PATH` of every platform (and the entrypoint),
/// and the config's environment defaults (without PATH). What only people
/// know (the arguments a command accepts, the keys the program reads) is
/// left for them to add.
pub fn data_file(image: &Image, name: &str, source: &str) -> Result<String, Error> {
    let tag = image.tag.as_deref().unwrap_or("");
    let version = semver::Version::parse(tag).map_err(|_| {
        Error::source(format!(
            "the tag `{tag}` is not a version (X.Y.Z): the data file's facts are per release"
        ))
        .with_help("inspect the image by its version tag, e.g. oci:DIR:1.29.0")
    })?;
    let Some(first) = image.platforms.first() else {
        return Err(Error::unsupported("the image has no platform"));
    };
    let req = format!("={version}");
    #[derive(Serialize)]
    struct UserFact<'a> {
        versions: &'a str,
        name: String,
        uid: u32,
        gid: u32,
        home: &'a str,
    }
    #[derive(Serialize)]
    struct Ports<'a> {
        versions: &'a str,
        listen: Vec<u16>,
    }
    #[derive(Serialize)]
    struct CommandFact<'a> {
        name: String,
        versions: &'a str,
        args: &'a str,
    }
    #[derive(Serialize)]
    struct EnvFact<'a> {
        key: &'a str,
        versions: &'a str,
        default: &'a str,
    }
    #[derive(Serialize)]
    struct Data<'a> {
        name: &'a str,
        releases: Vec<String>,
        user: Vec<UserFact<'a>>,
        ports: Vec<Ports<'a>>,
        commands: Vec<CommandFact<'a>>,
        env: Vec<EnvFact<'a>>,
    }
    // Commands that every platform has; the others are named in a comment.
    let mut per_platform: Vec<Vec<String>> = Vec::new();
    for p in &image.platforms {
        let mut names: Vec<String> = p.commands().into_iter().map(|(n, _)| n).collect();
        if let Some(e) = p.config.entrypoint.first() {
            if p.find_command(e).is_some() && !names.contains(e) {
                names.push(e.clone());
            }
        }
        names.sort();
        per_platform.push(names);
    }
    let all: Vec<String> = per_platform[0]
        .iter()
        .filter(|n| per_platform.iter().all(|p| p.contains(n)))
        .cloned()
        .collect();
    let mut partial: Vec<String> = per_platform
        .iter()
        .flatten()
        .filter(|n| !all.contains(n))
        .cloned()
        .collect();
    partial.sort();
    partial.dedup();
    let user = first.user.as_ref().map(|u| UserFact {
        versions: &req,
        name: u.name.clone().unwrap_or_else(|| u.uid.to_string()),
        uid: u.uid,
        gid: u.gid,
        home: &u.home,
    });
    let data = Data {
        name,
        releases: vec![version.to_string()],
        user: user.into_iter().collect(),
        ports: vec![Ports {
            versions: &req,
            listen: first.config.ports(),
        }],
        commands: all
            .into_iter()
            .map(|n| CommandFact {
                name: n,
                versions: &req,
                args: "any",
            })
            .collect(),
        env: first
            .config
            .env_pairs()
            .into_iter()
            .filter(|(k, _)| *k != "PATH")
            .map(|(key, default)| EnvFact {
                key,
                versions: &req,
                default,
            })
            .collect(),
    };
    let yaml = serde_yaml::to_string(&data)
        .map_err(|e| Error::unsupported(format!("the facts cannot be written as YAML: {e}")))?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Image facts of {name} {version}, as `basepress image inspect` read them"
    );
    let _ = writeln!(
        out,
        "# from {source}{}.",
        image
            .digest
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        out,
        "# A starting point: add what only people know (the arguments each"
    );
    let _ = writeln!(
        out,
        "# command accepts, the environment keys the program reads and their rules)."
    );
    if !partial.is_empty() {
        let _ = writeln!(
            out,
            "# Left out, as not every platform has them: {}.",
            partial.join(", ")
        );
    }
    out.push_str(&yaml);
    Ok(out)
}

/// Runs `image inspect`: prints what basepress sees to `out`, errors to
/// `err` (text) or `out` (JSON), and returns the exit code (0, or 2 when
/// the image cannot be read).
pub fn inspect_command(opts: &InspectOptions, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match inspect(opts) {
        Ok((image, written)) => {
            let text = match opts.format {
                Format::Text => render_text(&image),
                Format::Json => render_json(&image),
            };
            let _ = out.write_all(text.as_bytes());
            if let Some(path) = written {
                if opts.format == Format::Text {
                    let _ = writeln!(err, "wrote the image facts to {}", path.display());
                }
            }
            0
        }
        Err(e) => {
            let d: Diagnostic = e.diagnostic();
            let ds = [d];
            match opts.format {
                Format::Text => {
                    let _ = err.write_all(
                        crate::report::render_text(&ds, Path::new("."), opts.color).as_bytes(),
                    );
                }
                Format::Json => {
                    let _ = out.write_all(crate::report::render_json(&ds).as_bytes());
                }
            }
            diagnostics::exit_code(&ds).max(2)
        }
    }
}

fn inspect(opts: &InspectOptions) -> Result<(Image, Option<PathBuf>), Error> {
    let source = parse_source(&opts.source)?;
    if let Some(path) = &opts.write_data {
        if path.exists() {
            return Err(Error::new(
                rule::OUTPUT_UNSAFE,
                format!(
                    "{} exists: the facts are a starting point, never written over a data file",
                    path.display()
                ),
            )
            .with_help("write them to a new file and merge what you need by hand"));
        }
    }
    let image = open(&source, opts.tag.as_deref(), &opts.open)?;
    let mut written = None;
    if let Some(path) = &opts.write_data {
        let name = opts.name.clone().unwrap_or_else(|| source.name_hint());
        let text = data_file(&image, &name, &opts.source)?;
        std::fs::write(path, text).map_err(|e| {
            Error::new(
                rule::IO_UNREADABLE,
                format!("{} cannot be written: {e}", path.display()),
            )
        })?;
        written = Some(path.clone());
    }
    Ok((image, written))
}
