//! The image release data: what each release of the product image contains.
//!
//! The checks read these facts instead of knowing the product, so another
//! product can reuse basepress by writing its own data file. Each fact holds
//! for the releases its `versions` requirement matches ([`holds_for`]), and
//! at most one fact of each kind (one `user`, one `ports`, one per command
//! name and per environment key) may hold for a release.
//!
//! Pre-releases (`1.31.0-rc.1`) are versions as semver defines them: they
//! come before their release (`1.31.0-rc.1 < 1.31.0`) and after every
//! earlier one, so `>=1.29.0` holds for `1.31.0-rc.1` and `>=1.31.0` does
//! not (write `>=1.31.0-rc.1` for a fact that the release candidate already
//! has). The latest base is the highest release that is not a pre-release
//! when there is one ([`latest`]): a release candidate is never what
//! readers get by default.

use semver::{Version, VersionReq};
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageReleases {
    /// Image name, without registry or tag.
    pub name: String,
    /// Every release of the image, ascending.
    pub releases: Vec<Version>,
    #[serde(default)]
    pub user: Vec<UserFact>,
    #[serde(default)]
    pub ports: Vec<PortsFact>,
    #[serde(default)]
    pub commands: Vec<CommandFact>,
    /// How the image starts the product (its entrypoint and command): a
    /// container that runs them is the product itself.
    #[serde(default)]
    pub process: Vec<ProcessFact>,
    #[serde(default)]
    pub env: Vec<EnvFact>,
    /// Prefixes of the image's environment keys (`RUNNER_`): words with
    /// them in the docs are checked against `env`.
    #[serde(default)]
    pub env_prefixes: Vec<String>,
}

/// The user the image runs as.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserFact {
    pub versions: VersionReq,
    pub name: String,
    pub uid: i64,
    pub gid: i64,
    #[serde(default)]
    pub home: Option<String>,
}

/// The ports the image listens on (an empty list: none).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortsFact {
    pub versions: VersionReq,
    pub listen: Vec<u16>,
}

/// The image's `Entrypoint` and `Cmd`: what a container of the image
/// runs when the pod does not set `command`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessFact {
    pub versions: VersionReq,
    #[serde(default)]
    pub entrypoint: Vec<String>,
    #[serde(default)]
    pub command: Vec<String>,
}

/// A command on the image's PATH.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandFact {
    pub name: String,
    pub versions: VersionReq,
    #[serde(default)]
    pub description: Option<String>,
    pub args: Args,
    /// Argument lists that check readiness, which a liveness probe must
    /// never run.
    #[serde(default)]
    pub readiness_only: Vec<Vec<String>>,
    /// It runs its arguments as a command, after what it does first (an
    /// entrypoint that ends in `exec "$@"`): what they name must be in the
    /// image too.
    #[serde(default)]
    pub runs_arguments: bool,
}

/// The argument lists a command accepts.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Args {
    /// `any`: the command accepts any arguments.
    Any(AnyArgs),
    /// Exactly one of these argument lists.
    OneOf(Vec<Vec<String>>),
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnyArgs {
    Any,
}

/// An environment key the image reads.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvFact {
    pub key: String,
    pub versions: VersionReq,
    #[serde(default)]
    pub default: Option<String>,
    #[serde(default)]
    pub kind: Option<EnvKind>,
    /// What the key means to the checks.
    #[serde(default)]
    pub role: Option<EnvRole>,
    #[serde(default)]
    pub description: Option<String>,
    /// A credential: it must never be given a value in a base.
    #[serde(default)]
    pub secret: bool,
    /// The values the image accepts; any value when absent.
    #[serde(default)]
    pub values: Option<Vec<EnvValue>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EnvKind {
    Path,
    Milliseconds,
}

/// Keys whose meaning the checks need to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EnvRole {
    /// Milliseconds the image drains after SIGTERM.
    DrainTimeout,
    /// Folder the image writes its health file to.
    HealthDir,
    /// Folder of the image's persistent identity.
    IdentityDir,
    /// Path of a cache that must not live on the identity volume.
    LearnedStore,
}

/// One accepted value of an environment key, with what it needs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvValue {
    pub value: String,
    #[serde(default)]
    pub requires: Vec<Requirement>,
    /// The image's config validation accepts the value, but the image
    /// fails at boot with this message.
    #[serde(default)]
    pub not_implemented: Option<String>,
}

/// Something a value needs to work.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// Another environment key must be set.
    #[serde(default)]
    pub env: Option<String>,
    /// A projected service account token must be mounted.
    #[serde(default)]
    pub projected_token: Option<ProjectedToken>,
    /// When the requirement stops applying, in words.
    #[serde(default)]
    pub until: Option<String>,
    /// What the image prints when the requirement is not met.
    #[serde(default)]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectedToken {
    /// The token is mounted at the folder of the path this key holds.
    pub directory_of: String,
    pub audience: String,
}

impl ImageReleases {
    pub fn has_release(&self, v: &Version) -> bool {
        self.releases.iter().any(|r| r == v)
    }

    /// The command facts that hold for release `v`.
    /// The commands of release `v` that run their arguments as a command
    /// (`runs_arguments`), by the names the data gives them.
    pub fn wrappers_at(&self, v: &Version) -> Vec<String> {
        self.commands_at(v)
            .filter(|c| c.runs_arguments)
            .map(|c| c.name.clone())
            .collect()
    }

    pub fn commands_at<'a>(&'a self, v: &'a Version) -> impl Iterator<Item = &'a CommandFact> {
        self.commands
            .iter()
            .filter(move |c| holds_for(&c.versions, v))
    }

    /// The fact of release `v` about the command a container calls as
    /// `program`, as the data names it: a name is on the image's `PATH`
    /// (`sh` is also `/bin/sh`, `/usr/local/bin/sh`…, in a folder of the
    /// usual `PATH`, not `/tmp/sh`), a relative path is below the working
    /// folder (`apps/run.sh` is also `./apps/run.sh` and `/app/apps/run.sh`,
    /// not `run.sh`), and an absolute path is itself (and its name, when
    /// its folder is one of the usual `PATH`).
    pub fn command_at<'a>(&'a self, v: &'a Version, program: &str) -> Option<&'a CommandFact> {
        self.commands_at(v)
            .find(|f| names_command(&f.name, program))
    }

    /// The environment facts that hold for release `v`.
    pub fn env_at<'a>(&'a self, v: &'a Version) -> impl Iterator<Item = &'a EnvFact> {
        self.env.iter().filter(move |e| holds_for(&e.versions, v))
    }

    pub fn process_at(&self, v: &Version) -> Option<&ProcessFact> {
        self.process.iter().find(|p| holds_for(&p.versions, v))
    }

    pub fn user_at(&self, v: &Version) -> Option<&UserFact> {
        self.user.iter().find(|u| holds_for(&u.versions, v))
    }

    /// The environment fact for `key` at release `v`.
    pub fn env_fact(&self, v: &Version, key: &str) -> Option<&EnvFact> {
        self.env
            .iter()
            .find(|e| e.key == key && holds_for(&e.versions, v))
    }

    /// The environment fact with `role` at release `v`.
    pub fn env_role(&self, v: &Version, role: EnvRole) -> Option<&EnvFact> {
        self.env
            .iter()
            .find(|e| e.role == Some(role) && holds_for(&e.versions, v))
    }

    pub fn ports_at(&self, v: &Version) -> Option<&[u16]> {
        self.ports
            .iter()
            .find(|p| holds_for(&p.versions, v))
            .map(|p| p.listen.as_slice())
    }

    /// The first release whose image has command `name`.
    pub fn first_release_with_command(&self, name: &str) -> Option<&Version> {
        self.releases
            .iter()
            .find(|v| self.commands_at(v).any(|c| c.name == name))
    }
}

/// Reads the image release data file named in site.yaml.
pub fn holds_for(req: &VersionReq, v: &Version) -> bool {
    if v.pre.is_empty() {
        return req.matches(v);
    }
    req.comparators.iter().all(|c| comparator_holds(c, v))
}

fn comparator_holds(c: &semver::Comparator, v: &Version) -> bool {
    use semver::Op;
    use std::cmp::Ordering::*;
    let at = |major: u64, minor: u64, patch: u64, pre: &semver::Prerelease| Version {
        major,
        minor,
        patch,
        pre: pre.clone(),
        build: semver::BuildMetadata::EMPTY,
    };
    let zero = semver::Prerelease::new("0").unwrap_or(semver::Prerelease::EMPTY);
    let none = semver::Prerelease::EMPTY;
    let cmp = |a: &Version| precedence(v, a);
    let (major, minor, patch) = (c.major, c.minor, c.patch);
    // The version the comparator names, missing parts as 0.
    let named = at(major, minor.unwrap_or(0), patch.unwrap_or(0), &c.pre);
    // The first version after the range a partial version stands for.
    let after_partial = match (minor, patch) {
        (None, _) => at(major + 1, 0, 0, &zero),
        (Some(m), None) => at(major, m + 1, 0, &zero),
        (Some(m), Some(p)) => at(major, m, p + 1, &zero),
    };
    let in_range = |lo: &Version, hi: &Version| cmp(lo) != Less && cmp(hi) == Less;
    match c.op {
        Op::Exact if patch.is_some() => cmp(&named) == Equal,
        Op::Exact | Op::Wildcard => {
            in_range(&at(major, minor.unwrap_or(0), 0, &none), &after_partial)
        }
        Op::Greater if patch.is_some() => cmp(&named) == Greater,
        Op::Greater => cmp(&after_partial) != Less,
        Op::GreaterEq => cmp(&named) != Less,
        Op::Less if patch.is_some() => cmp(&named) == Less,
        Op::Less => cmp(&at(major, minor.unwrap_or(0), 0, &zero)) == Less,
        Op::LessEq if patch.is_some() => cmp(&named) != Greater,
        Op::LessEq => cmp(&after_partial) == Less,
        Op::Tilde => {
            let end = match minor {
                None => at(major + 1, 0, 0, &zero),
                Some(m) => at(major, m + 1, 0, &zero),
            };
            in_range(&named, &end)
        }
        Op::Caret => {
            let end = match (major, minor, patch) {
                (0, None, _) => at(1, 0, 0, &zero),
                (0, Some(0), None) => at(0, 1, 0, &zero),
                (0, Some(0), Some(p)) => at(0, 0, p + 1, &zero),
                (0, Some(m), _) => at(0, m + 1, 0, &zero),
                (n, _, _) => at(n + 1, 0, 0, &zero),
            };
            in_range(&named, &end)
        }
        // A comparator kind added to semver later: the crate's own rule.
        _ => c.matches(v),
    }
}

/// Semver precedence: build metadata does not count.
fn precedence(a: &Version, b: &Version) -> std::cmp::Ordering {
    (a.major, a.minor, a.patch, &a.pre).cmp(&(b.major, b.minor, b.patch, &b.pre))
}

/// The latest of some published versions: the highest that is not a
/// pre-release, or the highest pre-release when all are.
pub fn latest<'a>(versions: impl IntoIterator<Item = &'a Version>) -> Option<&'a Version> {
    let (mut release, mut any): (Option<&Version>, Option<&Version>) = (None, None);
    for v in versions {
        if v.pre.is_empty() && release.is_none_or(|r| v > r) {
            release = Some(v);
        }
        if any.is_none_or(|a| v > a) {
            any = Some(v);
        }
    }
    release.or(any)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small data file, for the tests of this module and of its loader.
    pub(crate) const DATA: &str = r#"
name: agent
releases: [1.0.0, 1.1.0]
user: [{versions: "*", name: node, uid: 1000, gid: 1000}]
ports: [{versions: "*", listen: []}]
commands:
  - {name: node, versions: "*", args: any}
  - {name: health, versions: ">=1.1.0", args: [[live], [ready]]}
env:
  - key: MODE
    versions: "*"
    values:
      - value: a
      - value: b
        requires: [{env: REGION}]
"#;

    #[test]
    fn facts_follow_versions() {
        let d: ImageReleases = crate::yaml::from_str(DATA).unwrap();
        let v1: Version = "1.0.0".parse().unwrap();
        let v2: Version = "1.1.0".parse().unwrap();
        assert_eq!(d.commands_at(&v1).count(), 1);
        assert_eq!(d.commands_at(&v2).count(), 2);
        assert_eq!(d.first_release_with_command("health"), Some(&v2));
        assert!(matches!(d.commands[0].args, Args::Any(_)));
        assert!(matches!(&d.commands[1].args, Args::OneOf(a) if a.len() == 2));
        assert_eq!(d.ports_at(&v1), Some(&[][..]));
        assert_eq!(d.user_at(&v1).map(|u| u.uid), Some(1000));
    }

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn pre_releases_follow_semver_precedence() {
        let holds = |req: &str, ver: &str| holds_for(&req.parse().unwrap(), &v(ver));
        assert!(holds(">=1.29.0", "1.31.0-rc.1"));
        assert!(!holds(">=1.31.0", "1.31.0-rc.1"));
        assert!(holds(">=1.31.0-rc.1", "1.31.0-rc.2"));
        assert!(holds("<1.31.0", "1.31.0-rc.1"));
        assert!(!holds("<1.31", "1.31.0-rc.1"));
        assert!(holds("*", "1.31.0-rc.1"));
        assert!(holds("^1.2", "1.31.0-rc.1"));
        assert!(!holds("^1.2", "2.0.0-rc.1"));
        assert!(!holds("~1.30", "1.31.0-rc.1"));
        assert!(holds("~1.31.0-rc.1", "1.31.0-rc.3"));
        assert!(holds("=1.31.0-rc.1", "1.31.0-rc.1"));
        assert!(!holds("=1.31.0", "1.31.0-rc.1"));
        assert!(holds(">=1.0.0, <2.0.0", "1.5.0-beta"));
        assert!(holds(">1.30", "1.31.0-rc.1"));
        // Releases keep the crate's rules.
        assert!(holds(">=1.29.0", "1.30.0") && !holds(">=1.31.0", "1.30.0"));
    }

    #[test]
    fn the_latest_is_not_a_pre_release_when_a_release_exists() {
        let vs = [v("1.30.0"), v("1.31.0-rc.1"), v("1.29.0")];
        assert_eq!(latest(&vs), Some(&vs[0]));
        let pre = [v("1.31.0-rc.1"), v("1.31.0-rc.2")];
        assert_eq!(latest(&pre), Some(&pre[1]));
        assert_eq!(latest(&[]), None);
    }
}

/// The folders of the `PATH` images set unless told otherwise.
const USUAL_PATH: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// Whether a container calling `program` runs the command the image data
/// names `name` (see [`ImageReleases::command_at`]).
fn names_command(name: &str, program: &str) -> bool {
    if name == program {
        return true;
    }
    // `./x` is in the working folder, never on PATH.
    let program = program.strip_prefix("./").unwrap_or(program);
    let on_usual_path = |path: &str, file: &str| {
        path.rsplit_once('/')
            .is_some_and(|(dir, f)| f == file && USUAL_PATH.contains(&dir))
    };
    match (name.starts_with('/'), name.contains('/')) {
        // On PATH: called by its name, or by its path in a usual folder.
        (false, false) => program.starts_with('/') && on_usual_path(program, name),
        // Below the working folder.
        (false, true) => {
            let name = name.strip_prefix("./").unwrap_or(name);
            program == name
                || program
                    .strip_suffix(name)
                    .is_some_and(|dir| dir.starts_with('/') && dir.ends_with('/'))
        }
        // Its own path, or its name when it is in a usual folder.
        (true, _) => !program.contains('/') && on_usual_path(name, program),
    }
}

#[cfg(test)]
mod command_name_tests {
    use super::names_command;

    #[test]
    fn a_command_is_called_by_what_finds_it() {
        for (name, program, runs) in [
            ("sh", "sh", true),
            ("sh", "/bin/sh", true),
            ("sh", "/usr/local/bin/sh", true),
            ("whystack-health", "/tmp/whystack-health", false),
            ("whystack-health", "./whystack-health", false),
            ("whystack-health", "bin/whystack-health", false),
            (
                "apps/runner/docker-entrypoint.sh",
                "apps/runner/docker-entrypoint.sh",
                true,
            ),
            (
                "apps/runner/docker-entrypoint.sh",
                "./apps/runner/docker-entrypoint.sh",
                true,
            ),
            (
                "apps/runner/docker-entrypoint.sh",
                "/app/apps/runner/docker-entrypoint.sh",
                true,
            ),
            (
                "apps/runner/docker-entrypoint.sh",
                "docker-entrypoint.sh",
                false,
            ),
            (
                "apps/runner/docker-entrypoint.sh",
                "/x/runner/docker-entrypoint.sh",
                false,
            ),
            ("/usr/bin/curl", "/usr/bin/curl", true),
            ("/usr/bin/curl", "curl", true),
            ("/opt/bin/tool", "tool", false),
            ("/opt/bin/tool", "/usr/bin/tool", false),
        ] {
            assert_eq!(names_command(name, program), runs, "{name} as {program}");
        }
    }
}
