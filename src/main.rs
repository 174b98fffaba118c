use basepress::diagnostics::{self, rule, Format};
use basepress::pipeline::{self, Outcome};
use clap::{Args, Parser, Subcommand};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Publishes a docs site with the versioned Kustomize bases it tells people
/// to download, after checking that both are true.
///
/// Exit codes: 0 success, 1 check findings, 2 usage error or unreadable input.
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
    #[arg(long, default_value = ".")]
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
}

impl Run {
    fn options(&self) -> pipeline::Options {
        pipeline::Options {
            against: self.against.clone(),
        }
    }

    /// Prints the findings and, when asked, how long each stage took.
    fn report(&self, outcome: &Outcome) {
        report(outcome, &self.root, self.format);
        if self.timings {
            eprintln!("timings: {}", outcome.timings);
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
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// How findings are printed.
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
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// The address to listen on.
        #[arg(long, default_value = "127.0.0.1")]
        bind: std::net::IpAddr,
        /// The port [default: 1111, or the next free one up to 1130]; 0 lets
        /// the system choose.
        #[arg(long)]
        port: Option<u16>,
    },
    /// Read container images (OCI layouts, docker-archives, registries).
    Image {
        #[command(subcommand)]
        command: ImageCommand,
    },
    /// List every rule with its id, description and remedy.
    Rules {
        /// `text` for people, `json` for scripts.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Build { run, out } => {
            let format = run.format;
            let out = out.unwrap_or_else(|| run.root.join("site"));
            let start = Instant::now();
            let outcome = pipeline::build_with(&run.root, &out, &run.options());
            run.report(&outcome);
            if let Some(s) = &outcome.written {
                if format == Format::Text {
                    eprintln!(
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
                eprintln!("nothing was written: {} is unchanged", out.display());
            }
            ExitCode::from(outcome.exit_code())
        }
        Command::Check {
            run,
            coverage,
            external,
        } => {
            let format = run.format;
            let outcome = pipeline::check_with(&run.root, &run.options());
            run.report(&outcome);
            if coverage && format == Format::Text {
                print!("{}", coverage_table(&outcome.coverage));
            }
            if external && format == Format::Text {
                for (url, at) in &outcome.external_links {
                    let line = at.line.unwrap_or(0);
                    println!("{url}  ({}:{line})", at.file.display());
                }
            }
            if format == Format::Text && outcome.diagnostics.is_empty() {
                eprintln!("no findings");
            }
            ExitCode::from(outcome.exit_code())
        }
        Command::Release {
            version,
            root,
            format,
        } => match pipeline::release(&root, &version) {
            Ok(msg) => {
                eprintln!("{msg}");
                ExitCode::SUCCESS
            }
            Err(outcome) => {
                report(&outcome, &root, format);
                if format == Format::Text {
                    eprintln!("nothing was released");
                }
                ExitCode::from(outcome.exit_code().max(1))
            }
        },
        Command::Serve { root, bind, port } => {
            match basepress::serve::run(basepress::serve::Options { root, bind, port }) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e:#}");
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
                Format::Json => {
                    let mut s = serde_json::to_string_pretty(rule::ALL).unwrap_or_default();
                    s.push('\n');
                    s
                }
                _ => rule::ALL
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

fn coverage_table(rows: &[pipeline::Coverage]) -> String {
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

fn report(outcome: &Outcome, root: &std::path::Path, format: Format) {
    match format {
        Format::Text => {
            let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            eprint!(
                "{}",
                diagnostics::render_text(&outcome.diagnostics, root, color)
            );
        }
        Format::Json => print!("{}", diagnostics::render_json(&outcome.diagnostics)),
        Format::Github => print!("{}", diagnostics::render_github(&outcome.diagnostics)),
    }
}
