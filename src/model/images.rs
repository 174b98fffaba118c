//! The image release data: what each release of the product image contains.
//!
//! The checks read these facts instead of knowing the product, so another
//! product can reuse basepress by writing its own data file. Each fact holds
//! for the releases its `versions` requirement matches.

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
    pub fn commands_at<'a>(&'a self, v: &'a Version) -> impl Iterator<Item = &'a CommandFact> {
        self.commands.iter().filter(move |c| c.versions.matches(v))
    }

    /// The environment facts that hold for release `v`.
    pub fn env_at<'a>(&'a self, v: &'a Version) -> impl Iterator<Item = &'a EnvFact> {
        self.env.iter().filter(move |e| e.versions.matches(v))
    }

    pub fn user_at(&self, v: &Version) -> Option<&UserFact> {
        self.user.iter().find(|u| u.versions.matches(v))
    }

    /// The environment fact for `key` at release `v`.
    pub fn env_fact(&self, v: &Version, key: &str) -> Option<&EnvFact> {
        self.env
            .iter()
            .find(|e| e.key == key && e.versions.matches(v))
    }

    /// The environment fact with `role` at release `v`.
    pub fn env_role(&self, v: &Version, role: EnvRole) -> Option<&EnvFact> {
        self.env
            .iter()
            .find(|e| e.role == Some(role) && e.versions.matches(v))
    }

    pub fn ports_at(&self, v: &Version) -> Option<&[u16]> {
        self.ports
            .iter()
            .find(|p| p.versions.matches(v))
            .map(|p| p.listen.as_slice())
    }

    /// The first release whose image has command `name`.
    pub fn first_release_with_command(&self, name: &str) -> Option<&Version> {
        self.releases
            .iter()
            .find(|v| self.commands_at(v).any(|c| c.name == name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml;

    const DATA: &str = r#"
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
        let d: ImageReleases = yaml::from_str(DATA).unwrap();
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
}
