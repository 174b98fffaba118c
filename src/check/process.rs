//! What the kubelet and the container runtime make of a container: the
//! one place that knows it. The environment its processes get (`envFrom`,
//! then `env`, over the image's), `$(VAR)` references expanded as the
//! kubelet expands them, and the argv of every exec: the main process
//! (`command` and `args` over the image's Entrypoint and Cmd), its probes
//! and its lifecycle hooks.

use crate::diagnostics::Location;
use crate::kustomize::Object;
use k8s_openapi::api::core::v1::Container;

/// A container's environment variables, as the base sets them.
pub(super) struct ContainerEnv {
    /// `envFrom`, then `env`, in order, each value expanded as the kubelet
    /// does; `None` for a value only known when the pod runs (from a
    /// Secret, a field, a resource, an object the build lacks).
    vars: Vec<(String, Option<String>)>,
    /// The `env` entries, each with its literal `value` as written (empty
    /// for a `valueFrom`): the only variables a probe's command may name
    /// (the kubelet's `ExpandContainerCommandOnlyStatic`).
    statics: Vec<(String, String)>,
    /// Whether an `envFrom` source has keys the build does not know (a
    /// Secret the installer creates, an object the build lacks): then any
    /// name may be set when the pod runs.
    open: bool,
}

impl ContainerEnv {
    /// The environment of container `c` of a pod in `namespace`, its
    /// ConfigMaps and Secrets read from `objects`.
    pub fn of(objects: &[Object], namespace: Option<&str>, c: &Container) -> ContainerEnv {
        let source = |kind: &str, name: &str| env_source(objects, namespace, kind, name);
        let mut env = ContainerEnv {
            vars: Vec::new(),
            statics: Vec::new(),
            open: false,
        };
        for from in c.env_from.iter().flatten() {
            let prefix = from.prefix.clone().unwrap_or_default();
            let found = match (&from.config_map_ref, &from.secret_ref) {
                (Some(r), _) => source("ConfigMap", &r.name),
                (_, Some(r)) => source("Secret", &r.name),
                _ => continue,
            };
            match found {
                Some(o) => {
                    for (key, value, _) in object_data(o) {
                        env.vars.push((format!("{prefix}{key}"), value));
                    }
                    // A Secret of a base is empty: the installer fills it.
                    env.open |= o.kind() == "Secret";
                }
                None => env.open = true,
            }
        }
        for e in c.env.iter().flatten() {
            env.statics
                .push((e.name.clone(), e.value.clone().unwrap_or_default()));
            let value = match (&e.value_from, &e.value) {
                (None, value) => {
                    let value = value.clone().unwrap_or_default();
                    expand(&value, |name| env.lookup(name))
                }
                (Some(from), _) => from
                    .config_map_key_ref
                    .as_ref()
                    .and_then(|r| config_map_value(objects, namespace, &r.name, &r.key)),
            };
            env.vars.push((e.name.clone(), value));
        }
        env
    }

    /// What `$(name)` becomes in a command: the value when it is known,
    /// `None` when it is only known when the pod runs, and `$(name)` as
    /// written when nothing sets it.
    fn lookup(&self, name: &str) -> Option<String> {
        match self.vars.iter().rev().find(|(k, _)| k == name) {
            Some((_, value)) => value.clone(),
            // The kubelet adds the services' variables, and an `envFrom`
            // the build does not know may set any variable's name; a
            // shell's `$(date)` is none of them.
            None if is_service_variable(name) => None,
            // What the image sets for its processes (`PATH`) is no setting
            // an installer's Secret carries: `$(PATH)` stays as written.
            None if self.open
                && looks_like_variable(name)
                && !PROCESS_VARIABLES.contains(&name) =>
            {
                None
            }
            None => Some(format!("$({name})")),
        }
    }

    /// The value the container sets for `key`: `None` when it sets none,
    /// `Some(None)` when it is only known when the pod runs.
    pub fn get(&self, key: &str) -> Option<Option<&str>> {
        self.vars
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_deref())
    }

    /// The variables whose values its processes are known to start with:
    /// none that an `envFrom` the build does not know may set over.
    pub fn known(&self) -> impl Iterator<Item = (&str, &str)> {
        let set = |name: &str| self.statics.iter().any(|(k, _)| k == name);
        self.vars
            .iter()
            .enumerate()
            .filter(|(i, (k, _))| !self.vars[i + 1..].iter().any(|(l, _)| l == k))
            .filter(move |(_, (k, _))| !self.open || set(k))
            .filter_map(|(_, (k, v))| Some((k.as_str(), v.as_deref()?)))
    }

    /// `word` of a container's `command` or `args`, as the kubelet passes
    /// it: `None` when it names a variable only known when the pod runs.
    pub fn expand_command(&self, word: &str) -> Option<String> {
        expand(word, |name| self.lookup(name))
    }

    /// `word` of a probe's exec command: only the literal `env` values
    /// are replaced.
    pub fn expand_probe(&self, word: &str) -> String {
        let value = |name: &str| {
            let found = self.statics.iter().rev().find(|(k, _)| k == name);
            Some(found.map_or_else(|| format!("$({name})"), |(_, v)| v.clone()))
        };
        expand(word, value).unwrap_or_else(|| word.to_string())
    }
}

/// Variables the image or the runtime set for a process, which the
/// kubelet does not know when it expands `$(NAME)` (only the container's
/// own `env` and `envFrom`), and which no Secret of an installer sets.
const PROCESS_VARIABLES: &[&str] = &[
    "PATH", "HOME", "HOSTNAME", "PWD", "SHELL", "USER", "TERM", "LANG",
];

/// Whether `name` is one of the variables the kubelet gives a container
/// for the services of its namespace (`KUBERNETES_SERVICE_HOST`,
/// `AGENT_PORT_8080_TCP_ADDR`): set only when the pod runs.
fn is_service_variable(name: &str) -> bool {
    looks_like_variable(name)
        && (name.starts_with("KUBERNETES_")
            || name.contains("_SERVICE_HOST")
            || name.contains("_SERVICE_PORT")
            || name.ends_with("_PORT")
            || name.contains("_PORT_"))
}

/// Whether `name` is written as environment variables are by convention
/// (`RUNNER_TOKEN`): capitals, digits and `_`, not starting with a digit.
fn looks_like_variable(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// `input` with `$(NAME)` replaced by what `value` gives NAME and `$$` by
/// `$`, as the kubelet's expansion does (an unclosed `$(` and any other
/// `$` stay as written); `None` when a value it needs is unknown.
pub(super) fn expand(input: &str, value: impl Fn(&str) -> Option<String>) -> Option<String> {
    if !input.contains('$') {
        return Some(input.to_string());
    }
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(inner) = after.strip_prefix('(') {
            match inner.find(')') {
                Some(j) => {
                    out.push_str(&value(&inner[..j])?);
                    rest = &inner[j + 1..];
                }
                None => {
                    out.push_str("$(");
                    rest = inner;
                }
            }
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Some(out)
}

/// The image's own process, as the image data or the image's config gives
/// it: what runs when the container sets no `command`.
#[derive(Clone, Copy, Default)]
pub(super) struct ImageProcess<'a> {
    pub entrypoint: &'a [String],
    pub cmd: &'a [String],
}

/// One exec a container makes: its main process, a probe's, a hook's.
pub(super) struct Exec {
    /// The field, for messages (`livenessProbe`, `command`).
    pub what: &'static str,
    /// Pointer of the argv list.
    pub pointer: String,
    /// Pointer of each word of the argv (a container's `args` follow its
    /// `command`; a word of the image's Entrypoint or Cmd points at the
    /// container's `image`).
    pub words: Vec<String>,
    /// The words as the runtime gets them; `None` for one only known when
    /// the pod runs.
    pub argv: Vec<Option<String>>,
}

impl Exec {
    /// The argv when every word is known.
    pub fn known(&self) -> Option<Vec<String>> {
        self.argv.iter().cloned().collect()
    }
}

/// Every exec of container `c` (at pointer `ptr`), with its environment
/// `env`: its probes, its lifecycle hooks (run as written: the kubelet
/// expands no variable in them) and its main process, whose argv is
/// `command` (when not empty) with `args`, else the image's Entrypoint
/// with `args` (when not empty) or else the image's Cmd. Without `image`,
/// a container that sets no `command` has no main process to check.
pub(super) fn execs(
    c: &Container,
    ptr: &str,
    env: &ContainerEnv,
    image: Option<ImageProcess>,
) -> Vec<Exec> {
    let mut out = Vec::new();
    let list = |pointer: String, what, argv: Vec<Option<String>>| Exec {
        what,
        words: (0..argv.len()).map(|i| format!("{pointer}/{i}")).collect(),
        pointer,
        argv,
    };
    let probes = [
        ("livenessProbe", c.liveness_probe.as_ref()),
        ("readinessProbe", c.readiness_probe.as_ref()),
        ("startupProbe", c.startup_probe.as_ref()),
    ];
    for (field, probe) in probes {
        if let Some(cmd) = probe
            .and_then(|p| p.exec.as_ref())
            .and_then(|e| e.command.as_ref())
        {
            let argv = cmd.iter().map(|w| Some(env.expand_probe(w))).collect();
            out.push(list(format!("{ptr}/{field}/exec/command"), field, argv));
        }
    }
    if let Some(l) = &c.lifecycle {
        for (field, handler) in [("postStart", &l.post_start), ("preStop", &l.pre_stop)] {
            if let Some(cmd) = handler
                .as_ref()
                .and_then(|h| h.exec.as_ref())
                .and_then(|e| e.command.as_ref())
            {
                let argv = cmd.iter().cloned().map(Some).collect();
                out.push(list(
                    format!("{ptr}/lifecycle/{field}/exec/command"),
                    field,
                    argv,
                ));
            }
        }
    }
    let own = |field: &str, list: &[String]| {
        list.iter()
            .enumerate()
            .map(|(i, w)| (format!("{ptr}/{field}/{i}"), env.expand_command(w)))
            .collect::<Vec<_>>()
    };
    let from_image = |list: &[String]| {
        list.iter()
            .map(|w| (format!("{ptr}/image"), Some(w.clone())))
            .collect::<Vec<_>>()
    };
    // The kubelet takes an empty list for one not set.
    let command = c.command.as_deref().filter(|c| !c.is_empty());
    let args = c.args.as_deref().filter(|a| !a.is_empty());
    let (pointer, words) = match (command, args, image) {
        (Some(command), _, _) => {
            let mut words = own("command", command);
            words.extend(own("args", args.unwrap_or_default()));
            (format!("{ptr}/command"), words)
        }
        (None, Some(args), Some(image)) => {
            let mut words = from_image(image.entrypoint);
            words.extend(own("args", args));
            (format!("{ptr}/args"), words)
        }
        (None, None, Some(image)) => {
            let mut words = from_image(image.entrypoint);
            words.extend(from_image(image.cmd));
            (format!("{ptr}/image"), words)
        }
        (None, _, None) => return out,
    };
    if !words.is_empty() {
        let (words, argv) = words.into_iter().unzip();
        out.push(Exec {
            what: "command",
            pointer,
            words,
            argv,
        });
    }
    out
}

/// The object of `kind` (a ConfigMap, a Secret) named `name` in
/// `namespace` that a container's environment takes values from.
pub(super) fn env_source<'o>(
    objects: &'o [Object],
    namespace: Option<&str>,
    kind: &str,
    name: &str,
) -> Option<&'o Object> {
    objects
        .iter()
        .find(|o| o.kind() == kind && o.name() == name && o.namespace() == namespace)
}

/// What a container finds at a path one of its volumes covers, as the
/// kubelet mounts it over the image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Mounted {
    /// A file of a ConfigMap's or Secret's keys: its mode, group owner and
    /// text, and the volume it comes from.
    File {
        mode: u32,
        gid: u32,
        text: Option<String>,
        from: String,
    },
    /// The volume holds no file there: `why` (the ConfigMap has no such
    /// key, the emptyDir is empty when the container starts) and what to
    /// do about it.
    Absent { why: String, help: &'static str },
    /// What is there is only known when the pod runs (an emptyDir, a
    /// claim, a Secret the installer creates, a `subPath`).
    Unknown,
}

/// A container's volume mounts, each with what it holds.
pub(super) struct Mounts {
    /// `(mount path, files)`: `None` for content only known when the pod
    /// runs; else each file's path below the mount, mode and text.
    mounts: Vec<(String, Option<MountFiles>)>,
}

/// A file of a volume: its path below the mount, mode, text (when the
/// build knows it) and where the key it comes from is written.
type VolumeFile = (String, u32, Option<String>, Option<Location>);

#[derive(Clone)]
struct MountFiles {
    files: Vec<VolumeFile>,
    gid: u32,
    from: String,
    /// An emptyDir no init container fills: empty when the container
    /// starts, and only known later (its process may write to it).
    fresh: bool,
}

impl Mounts {
    /// The mounts of container `c` of a pod in `namespace` with volumes
    /// `pod.volumes`, their ConfigMaps and Secrets read from `objects`.
    pub fn of(
        objects: &[Object],
        namespace: Option<&str>,
        pod: &k8s_openapi::api::core::v1::PodSpec,
        c: &Container,
    ) -> Mounts {
        let fs_group = pod
            .security_context
            .as_ref()
            .and_then(|s| s.fs_group)
            .and_then(|g| u32::try_from(g).ok())
            .unwrap_or(0);
        let mut mounts = Vec::new();
        for m in c.volume_mounts.iter().flatten() {
            let volume = pod.volumes.iter().flatten().find(|v| v.name == m.name);
            // A `subPath` mounts one file or folder of the volume; one from
            // `subPathExpr` is only known when the pod runs.
            let sub_path = m.sub_path.as_deref().filter(|s| !s.is_empty());
            let filled = |name: &str| {
                pod.init_containers.iter().flatten().any(|i| {
                    i.name != c.name && i.volume_mounts.iter().flatten().any(|m| m.name == name)
                })
            };
            let files = volume.filter(|_| m.sub_path_expr.is_none()).and_then(|v| {
                if v.empty_dir.is_some() && !filled(&v.name) && sub_path.is_none() {
                    return Some(MountFiles {
                        files: Vec::new(),
                        gid: fs_group,
                        from: format!("emptyDir `{}` mounted at {}", v.name, m.mount_path),
                        fresh: true,
                    });
                }
                // With `fsGroup`, the kubelet gives the files to that group
                // and lets it read them.
                let group_read = if fs_group != 0 { 0o440 } else { 0 };
                let source = |kind: &str,
                              name: &str,
                              items: &Option<Vec<k8s_openapi::api::core::v1::KeyToPath>>,
                              default_mode: Option<i32>| {
                    volume_files(
                        objects,
                        namespace,
                        (kind, name),
                        items.as_deref(),
                        default_mode,
                        group_read,
                    )
                };
                let (kind, name, files) = match (&v.config_map, &v.secret, &v.projected) {
                    (Some(cm), _, _) => (
                        "ConfigMap",
                        cm.name.clone(),
                        source("ConfigMap", &cm.name, &cm.items, cm.default_mode)?,
                    ),
                    (_, Some(sv), _) => {
                        let name = sv.secret_name.clone().unwrap_or_default();
                        let files = source("Secret", &name, &sv.items, sv.default_mode)?;
                        ("Secret", name, files)
                    }
                    // Every source's files in one folder; a source other
                    // than a ConfigMap's or a Secret's (the service
                    // account's token, the downward API) makes it unknown.
                    (_, _, Some(pv)) => {
                        let mut files = Vec::new();
                        for p in pv.sources.iter().flatten() {
                            files.extend(match (&p.config_map, &p.secret) {
                                (Some(cm), _) => {
                                    source("ConfigMap", &cm.name, &cm.items, pv.default_mode)?
                                }
                                (_, Some(sp)) => {
                                    source("Secret", &sp.name, &sp.items, pv.default_mode)?
                                }
                                _ => return None,
                            });
                        }
                        ("projected volume", v.name.clone(), files)
                    }
                    _ => return None,
                };
                // A `subPath`: the file it names at the mount path, or the
                // folder's files below it.
                let files = match sub_path {
                    None => files,
                    Some(sub) => {
                        let sub = sub.trim_matches('/');
                        files
                            .into_iter()
                            .filter_map(|(path, mode, text, at)| {
                                let below = match path.strip_prefix(sub) {
                                    Some("") => String::new(),
                                    Some(rest) => rest.strip_prefix('/')?.to_string(),
                                    None => return None,
                                };
                                Some((below, mode, text, at))
                            })
                            .collect()
                    }
                };
                Some(MountFiles {
                    files,
                    gid: fs_group,
                    from: format!("{kind} `{name}` mounted at {}", m.mount_path),
                    fresh: false,
                })
            });
            mounts.push((m.mount_path.trim_end_matches('/').to_string(), files));
        }
        Mounts { mounts }
    }

    /// What the container finds at the absolute path `path`, when one of
    /// its volumes covers it (the deepest mount wins); `None` when the
    /// image's own file is there. `at_start`: for the container's main
    /// process, before it has written anything.
    pub fn at(&self, path: &str, at_start: bool) -> Option<Mounted> {
        let (root, files) = self
            .mounts
            .iter()
            .filter(|(root, _)| {
                path == root || root.is_empty() || path.starts_with(&format!("{root}/"))
            })
            .max_by_key(|(root, _)| root.len())?;
        let Some(files) = files else {
            return Some(Mounted::Unknown);
        };
        if files.fresh {
            return Some(match at_start {
                true => Mounted::Absent {
                    why: format!("the {} is empty when the container starts", files.from),
                    help: "call a file of the image outside the volume's mount, or fill the volume from an init container",
                },
                false => Mounted::Unknown,
            });
        }
        let below = path[root.len()..].trim_start_matches('/');
        if let Some((_, mode, text, _)) = files.files.iter().find(|(p, ..)| p == below) {
            return Some(Mounted::File {
                mode: *mode,
                gid: files.gid,
                text: text.clone(),
                from: files.from.clone(),
            });
        }
        // A folder of the volume (`items` with `path: sub/x`), or nothing.
        let folder = files
            .files
            .iter()
            .any(|(p, ..)| below.is_empty() || p.starts_with(&format!("{below}/")));
        Some(if folder {
            Mounted::Unknown
        } else {
            Mounted::Absent {
                why: format!("the {} has no such key", files.from),
                help: "add the key to the ConfigMap (or the item to the volume's `items`), or call the file by the name it has there",
            }
        })
    }

    /// The text of every file the volumes hold where the build knows it,
    /// by its absolute path in the container (what a deeper mount hides
    /// left out): the scripts a command may run from them.
    pub fn texts(&self) -> std::collections::BTreeMap<String, String> {
        let mut out = std::collections::BTreeMap::new();
        for (root, files) in &self.mounts {
            for (path, _, text, _) in files.iter().flat_map(|f| &f.files) {
                // A file mounted by `subPath` is the mount path itself.
                let full = match path.is_empty() {
                    true => root.clone(),
                    false => format!("{root}/{path}"),
                };
                if let (Some(text), Some(Mounted::File { .. })) = (text, self.at(&full, false)) {
                    out.insert(full, text.clone());
                }
            }
        }
        out
    }

    /// Where the key that the file at absolute path `path` comes from is
    /// written.
    pub fn key_at(&self, path: &str) -> Option<Location> {
        let (root, files) = self
            .mounts
            .iter()
            .filter(|(root, _)| path == root || path.starts_with(&format!("{root}/")))
            .max_by_key(|(root, _)| root.len())?;
        let below = path[root.len()..].trim_start_matches('/');
        let files = files.as_ref()?;
        files.files.iter().find(|(p, ..)| p == below)?.3.clone()
    }

    /// The mounts where the runtime puts them in an image: at the path
    /// `resolve` gives a mount path through the image's links (a volume
    /// mounted at `/bin`, a link to `usr/bin`, lies over `/usr/bin`).
    pub fn resolved(&self, resolve: impl Fn(&str) -> Option<String>) -> Mounts {
        let mounts = self
            .mounts
            .iter()
            .map(|(root, files)| {
                let at = resolve(root)
                    .filter(|r| r != "/")
                    .unwrap_or_else(|| root.clone());
                (at.trim_end_matches('/').to_string(), files.clone())
            })
            .collect();
        Mounts { mounts }
    }

    /// Whether any volume is mounted at all.
    pub fn is_empty(&self) -> bool {
        self.mounts.is_empty()
    }
}

/// The files a ConfigMap or a Secret (`kind`, `name`) gives a volume, each
/// with its path in it, mode, text and where its key is written: its keys,
/// or the `items` named. `None` when they are only known when the pod
/// runs (an object the build lacks, a Secret the installer fills).
fn volume_files(
    objects: &[Object],
    namespace: Option<&str>,
    (kind, name): (&str, &str),
    items: Option<&[k8s_openapi::api::core::v1::KeyToPath]>,
    default_mode: Option<i32>,
    group_read: u32,
) -> Option<Vec<VolumeFile>> {
    let object = env_source(objects, namespace, kind, name)?;
    // A Secret of a base is filled by the installer: its keys are only
    // known when the pod runs, unless `items` names the files.
    if kind == "Secret" && items.is_none() {
        return None;
    }
    let mode = |m: Option<i32>| {
        m.or(default_mode)
            .and_then(|m| u32::try_from(m).ok())
            .unwrap_or(0o644)
            | group_read
    };
    let data = object_data(object);
    let key = |key: &str| {
        let found = data.iter().find(|(k, _, _)| k == key);
        (
            found.and_then(|(_, v, _)| v.clone()),
            found.map(|(_, _, at)| at.clone()),
        )
    };
    Some(match items {
        Some(items) => items
            .iter()
            .map(|i| {
                let (text, at) = key(&i.key);
                (i.path.clone(), mode(i.mode), text, at)
            })
            .collect(),
        None => {
            let binary = object.value["binaryData"].as_object();
            data.iter()
                .map(|(k, v, at)| (k.clone(), mode(None), v.clone(), Some(at.clone())))
                .chain(
                    binary
                        .into_iter()
                        .flatten()
                        .map(|(k, _)| (k.clone(), mode(None), None, None)),
                )
                .collect()
        }
    })
}

/// The value of `key` in ConfigMap `name` (a `configMapKeyRef`), when the
/// build has it.
pub(super) fn config_map_value(
    objects: &[Object],
    namespace: Option<&str>,
    name: &str,
    key: &str,
) -> Option<String> {
    env_source(objects, namespace, "ConfigMap", name)
        .map(object_data)
        .into_iter()
        .flatten()
        .find(|(k, _, _)| k == key)
        .and_then(|(_, v, _)| v)
}

/// A ConfigMap's or Secret's keys and values, with where each is set: a
/// Secret's `data` is decoded, `stringData` taken as it is.
pub(super) fn object_data(o: &Object) -> Vec<(String, Option<String>, Location)> {
    use base64::Engine;
    let mut out = Vec::new();
    let secret = o.kind() == "Secret";
    for field in ["data", "stringData"] {
        for (k, v) in o.value[field].as_object().into_iter().flatten() {
            let text = v.as_str().map(|t| {
                if secret && field == "data" {
                    let compact: String = t.chars().filter(|c| !c.is_whitespace()).collect();
                    base64::engine::general_purpose::STANDARD
                        .decode(compact)
                        .ok()
                        .and_then(|b| String::from_utf8(b).ok())
                        .unwrap_or_default()
                } else {
                    t.to_string()
                }
            });
            let at = o.locate(&format!("/{field}/{}", crate::yaml::pointer_segment(k)));
            out.push((k.clone(), text, at));
        }
    }
    out
}

/// `path` from the folder `cwd`, with `.` and `..` resolved as written.
pub(super) fn absolute(path: &str, cwd: &str) -> String {
    let joined = match path.starts_with('/') {
        true => path.to_string(),
        false => format!("{cwd}/{path}"),
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, Option<&'a str>)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| match pairs.iter().find(|(k, _)| *k == name) {
            Some((_, v)) => v.map(str::to_string),
            None => Some(format!("$({name})")),
        }
    }

    #[test]
    fn expansion_follows_the_kubelet() {
        let v = vars(&[("TOOL", Some("whystack-health")), ("TOKEN", None)]);
        assert_eq!(expand("$(TOOL)", &v).as_deref(), Some("whystack-health"));
        assert_eq!(
            expand("/bin/$(TOOL) live", &v).as_deref(),
            Some("/bin/whystack-health live")
        );
        assert_eq!(expand("$$(TOOL)", &v).as_deref(), Some("$(TOOL)"));
        assert_eq!(expand("$(NOPE)", &v).as_deref(), Some("$(NOPE)"));
        assert_eq!(expand("$(TOOL", &v).as_deref(), Some("$(TOOL"));
        assert_eq!(expand("a$b$", &v).as_deref(), Some("a$b$"));
        assert_eq!(
            expand("é$(TOOL)ü", &v).as_deref(),
            Some("éwhystack-healthü")
        );
        assert_eq!(expand("x $(TOKEN)", &v), None);
    }

    fn container(yaml: &str) -> Container {
        let value: serde_json::Value = crate::yaml::from_str(yaml).unwrap();
        serde_json::from_value(value).unwrap()
    }

    fn argv(e: &Exec) -> Vec<&str> {
        e.argv.iter().map(|w| w.as_deref().unwrap_or("?")).collect()
    }

    #[test]
    fn the_main_process_is_command_and_args_over_the_image() {
        let env = |c: &Container| ContainerEnv::of(&[], None, c);
        let entrypoint = ["/entrypoint.sh".to_string()];
        let cmd = ["serve".to_string()];
        let image = Some(ImageProcess {
            entrypoint: &entrypoint,
            cmd: &cmd,
        });
        let main = |yaml: &str| {
            let c = container(yaml);
            let e = execs(&c, "/c", &env(&c), image);
            e.into_iter().find(|e| e.what == "command").map(|e| {
                let words = e.words.clone();
                (argv(&e).join(" "), words)
            })
        };
        let (run, words) = main("name: a\n").unwrap();
        assert_eq!(run, "/entrypoint.sh serve");
        assert_eq!(words, ["/c/image", "/c/image"]);
        let (run, words) = main("name: a\nargs: [live]\n").unwrap();
        assert_eq!(run, "/entrypoint.sh live");
        assert_eq!(words, ["/c/image", "/c/args/0"]);
        // An empty command is no command.
        let (run, _) = main("name: a\ncommand: []\nargs: [--flag]\n").unwrap();
        assert_eq!(run, "/entrypoint.sh --flag");
        let (run, _) = main("name: a\ncommand: [tool]\n").unwrap();
        assert_eq!(run, "tool");
        // Without the image, only a command says what runs.
        let c = container("name: a\nargs: [live]\n");
        assert!(execs(&c, "/c", &env(&c), None).is_empty());
    }

    #[test]
    fn commands_see_every_variable_and_probes_only_literal_ones() {
        let c = container(
            "name: a\nenv:\n- {name: DIR, value: /opt}\n- {name: TOOL, value: '$(DIR)/bin/tool'}\n\
             - name: SECRET\n  valueFrom: {secretKeyRef: {name: s, key: k}}\n\
             command: ['$(TOOL)', '$(SECRET)', '$(UNSET)', '$(KUBERNETES_SERVICE_HOST)']\n\
             livenessProbe: {exec: {command: ['$(TOOL)', '$(DIR)', '$(SECRET)']}}\n\
             lifecycle: {preStop: {exec: {command: ['$(DIR)']}}}\n",
        );
        let env = ContainerEnv::of(&[], None, &c);
        let all = execs(&c, "/c", &env, None);
        let by = |what: &str| all.iter().find(|e| e.what == what).map(argv).unwrap();
        assert_eq!(by("command"), ["/opt/bin/tool", "?", "$(UNSET)", "?"]);
        // A probe sees the literal values, not expanded ones, and an empty
        // one for a `valueFrom`.
        assert_eq!(by("livenessProbe"), ["$(DIR)/bin/tool", "/opt", ""]);
        assert_eq!(by("preStop"), ["$(DIR)"]);
        assert_eq!(env.get("SECRET"), Some(None));
        assert_eq!(env.get("TOOL"), Some(Some("/opt/bin/tool")));

        // With an envFrom Secret the build lacks, a variable's name may be
        // set when the pod runs; a shell's `$(date)` is still no variable.
        let c = container(
            "name: a\nenvFrom: [{secretRef: {name: s}}]\n\
             command: [sh, -c, 'x $(date) $(RUNNER_X) $(lower)']\n",
        );
        let env = ContainerEnv::of(&[], None, &c);
        let all = execs(&c, "/c", &env, None);
        let by = |what: &str| all.iter().find(|e| e.what == what).map(argv).unwrap();
        assert_eq!(by("command"), ["sh", "-c", "?"]);
        assert_eq!(
            env.expand_command("x $(date)").as_deref(),
            Some("x $(date)")
        );
        assert_eq!(env.expand_command("$(lower)").as_deref(), Some("$(lower)"));
        assert_eq!(env.expand_command("$(RUNNER_X)"), None);
    }
}
