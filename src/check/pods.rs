//! The base against the image of the same release: exec commands, probes,
//! shutdown, security context, replicas and environment, all driven by the
//! image release data. Also what a base must not carry: pinned images,
//! StorageClasses and credentials.

use super::manifests::typed;
use super::process::{
    config_map_value, env_source, execs, object_data, ContainerEnv, Exec, ImageProcess, Mounted,
    Mounts,
};
use super::shell::{self, base_name, Call, InScript};
use super::{Context, Subject};
use crate::diagnostics::{rule, Diagnostic, Location, Rule};
use crate::kustomize::Object;
use crate::model::images::{Args, EnvFact, EnvKind, EnvRole, ImageReleases, Requirement};
use crate::model::site::{Base, Site};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{
    Container, Pod, PodSpec, PodTemplate, Probe, ReplicationController,
};
use semver::Version;
use std::collections::BTreeSet;

/// A pod template of a base, typed, with where it is.
pub(super) struct Workload<'a> {
    pub object: &'a Object,
    /// JSON pointer of the PodSpec (`/spec/template/spec`).
    pub pod_ptr: &'static str,
    pub pod: PodSpec,
    replicas: Option<i32>,
    /// Names of the StatefulSet's volumeClaimTemplates.
    claims: Vec<String>,
}

impl Workload<'_> {
    /// Every container of the pod, its init containers after the others:
    /// the field it is in (`containers`, `initContainers`), its JSON
    /// pointer and the container.
    pub fn containers(&self) -> impl Iterator<Item = (&'static str, String, &Container)> {
        let init = self.pod.init_containers.as_deref().unwrap_or_default();
        [
            ("containers", &self.pod.containers[..]),
            ("initContainers", init),
        ]
        .into_iter()
        .flat_map(move |(field, list)| {
            list.iter()
                .enumerate()
                .map(move |(i, c)| (field, format!("{}/{field}/{i}", self.pod_ptr), c))
        })
    }
}

/// Where the pod of a workload with a pod template is.
const TEMPLATE: &str = "/spec/template/spec";

/// A workload without claim templates, if it has a pod spec.
fn made<'a>(
    object: &'a Object,
    pod_ptr: &'static str,
    replicas: Option<i32>,
    pod: Option<PodSpec>,
) -> Option<Workload<'a>> {
    Some(Workload {
        object,
        pod_ptr,
        replicas,
        claims: Vec::new(),
        pod: pod?,
    })
}

pub(super) fn workloads(objects: &[Object]) -> Vec<Workload<'_>> {
    let mut out = Vec::new();
    for m in objects {
        let v = &m.value;
        let w = match (m.api_version(), m.kind()) {
            ("apps/v1", "StatefulSet") => typed::<StatefulSet>(v).0.and_then(|s| {
                let spec = s.spec;
                Some(Workload {
                    object: m,
                    pod_ptr: "/spec/template/spec",
                    replicas: spec.replicas,
                    claims: spec
                        .volume_claim_templates
                        .unwrap_or_default()
                        .into_iter()
                        .filter_map(|c| c.metadata.name)
                        .collect(),
                    pod: spec.template.spec?,
                })
            }),
            ("apps/v1", "Deployment") => typed::<Deployment>(v)
                .0
                .and_then(|d| made(m, TEMPLATE, d.spec.replicas, d.spec.template.spec)),
            ("apps/v1", "ReplicaSet") => typed::<ReplicaSet>(v)
                .0
                .and_then(|r| made(m, TEMPLATE, r.spec.replicas, r.spec.template?.spec)),
            ("v1", "ReplicationController") => typed::<ReplicationController>(v)
                .0
                .and_then(|r| r.spec)
                .and_then(|spec| made(m, TEMPLATE, spec.replicas, spec.template?.spec)),
            ("apps/v1", "DaemonSet") => typed::<DaemonSet>(v)
                .0
                .and_then(|d| made(m, TEMPLATE, None, d.spec.template.spec)),
            ("batch/v1", "Job") => typed::<Job>(v)
                .0
                .and_then(|j| made(m, TEMPLATE, None, j.spec?.template.spec)),
            ("batch/v1", "CronJob") => typed::<CronJob>(v).0.and_then(|c| {
                let pod = c.spec.job_template.spec?.template.spec;
                made(m, "/spec/jobTemplate/spec/template/spec", None, pod)
            }),
            ("v1", "Pod") => typed::<Pod>(v)
                .0
                .and_then(|p| made(m, "/spec", None, p.spec)),
            // What uses it (a controller, an operator) runs its spec.
            ("v1", "PodTemplate") => typed::<PodTemplate>(v)
                .0
                .and_then(|t| made(m, "/template/spec", None, t.template?.spec)),
            _ => None,
        };
        out.extend(w);
    }
    out
}

/// The repository name of an image reference, without registry, tag or
/// digest: `reg.io/team/agent:1.0@sha256:…` → `agent`.
/// The tag and the digest an image reference pins, if any
/// (`reg.io:5000/team/app:1.0@sha256:ab` pins `1.0` and `sha256:ab`).
fn image_pins(image: &str) -> (Option<&str>, Option<&str>) {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    (last.split_once(':').map(|(_, tag)| tag), digest)
}

/// A container of the product's image that pins a tag or a digest must
/// pin the release of the base it runs on: what the checks read.
fn pinned_release(ctx: &mut Ctx, w: &Workload, ptr: &str, image: &str) {
    let (tag, digest) = image_pins(image);
    let version = ctx.version.to_string();
    let at = || w.object.locate(&format!("{ptr}/image"));
    let product = &ctx.site.config.image.name;
    if let Some(tag) = tag.filter(|t| *t != version) {
        let why = if tag.strip_prefix('v') == Some(version.as_str()) {
            format!("the image's tags have no `v`: `{product}:{version}`")
        } else if ctx.images.releases.iter().any(|r| r.to_string() == tag) {
            format!(
                "{tag} is another release, and the checks of this base hold for the {version} image only"
            )
        } else {
            let releases: Vec<String> = ctx.images.releases.iter().map(|r| r.to_string()).collect();
            format!(
                "{tag} is no release of {product} (its releases: {})",
                releases.join(", ")
            )
        };
        // In a page, `{{ version }}` is the release the page documents.
        let help = format!(
            "pin the release the base is for: `newTag: {version}` (in a page, `newTag: {{{{ version }}}}`), or its digest"
        );
        let d = Diagnostic::new(
            rule::IMAGE_PIN_MISMATCH,
            format!("`{image}` pins tag {tag} on the base of release {version}: {why}"),
        )
        .at(at())
        .help(help);
        ctx.push(d);
        return;
    }
    let (Some(digest), Some(record)) = (digest, ctx.base.image.as_ref()) else {
        return;
    };
    if placeholder_digest(digest) {
        return;
    }
    let known = record.digest.as_deref() == Some(digest)
        || record.platforms.iter().any(|(_, d)| d == digest);
    if !known {
        let d = Diagnostic::new(
            rule::IMAGE_PIN_MISMATCH,
            format!(
                "`{image}` pins a digest that is not of the {version} image the checks read ({})",
                record.digest.as_deref().unwrap_or("no index digest")
            ),
        )
        .at(at())
        .help(format!(
            "pin the digest of the {version} image (`basepress image inspect` shows it), or `newTag: {version}`"
        ));
        ctx.push(d);
    }
}

/// Whether a digest stands for one a reader fills in (`sha256:<digest>`,
/// `sha256:${DIGEST}`, `sha256:000…0`), not for one that could be pulled:
/// anything but 64 lowercase hex digits after `sha256:`, or one digit
/// repeated.
fn placeholder_digest(digest: &str) -> bool {
    let Some(hex) = digest.strip_prefix("sha256:") else {
        return true;
    };
    let real = hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    !real || hex.bytes().all(|b| Some(&b) == hex.as_bytes().first())
}

pub(super) fn image_repository(image: &str) -> &str {
    let no_digest = image.split('@').next().unwrap_or(image);
    let last = no_digest.rsplit('/').next().unwrap_or(no_digest);
    last.split(':').next().unwrap_or(last)
}

struct Ctx<'a> {
    site: &'a Site,
    base: &'a Base,
    subject: &'a Subject<'a>,
    /// Every object of the build: the ConfigMaps and Secrets a container
    /// reads its environment from are among them.
    objects: &'a [Object],
    images: &'a ImageReleases,
    version: &'a Version,
    /// Whether the image data has a release for this base.
    known: bool,
    /// Whether the image itself is read: then it, not the data file, says
    /// which commands exist (the `image-commands` check).
    image_read: bool,
    out: Vec<Diagnostic>,
}

impl Ctx<'_> {
    fn image_ref(&self) -> String {
        format!("{}:{}", self.images.name, self.version)
    }

    fn push(&mut self, d: Diagnostic) {
        self.out.push(d);
    }

    /// Whether container `c` (of the product image) runs the product: it
    /// sets no `command`, so the image's entrypoint runs, or its command
    /// (or a command of its `sh -c` script) is the entrypoint's or the
    /// image command's program. A container of the same image that only
    /// prepares a folder is not the product.
    fn runs_product(&self, c: &Container) -> bool {
        let Some(command) = c.command.as_ref().filter(|c| !c.is_empty()) else {
            return true;
        };
        let programs: Vec<&str> = self
            .images
            .process_at(self.version)
            .into_iter()
            .flat_map(|p| p.entrypoint.first().into_iter().chain(p.command.first()))
            .map(|p| base_name(p))
            .collect();
        let mut argv = command.clone();
        argv.extend(c.args.iter().flatten().cloned());
        let words: Vec<Option<String>> = argv.iter().cloned().map(Some).collect();
        let runs = shell::calls(&words);
        if programs.is_empty() {
            // Without the facts, a shell script is taken for a helper.
            return shell::script_of(&argv).is_none();
        }
        runs.calls
            .iter()
            .filter_map(Call::program)
            .any(|p| programs.contains(&base_name(p)))
    }
}

/// The rules of [`check`].
pub const RULES: &[&Rule] = &[
    rule::PROBE_COMMAND_MISSING,
    rule::COMMAND_ARGS_INVALID,
    rule::LIVENESS_USES_READINESS,
    rule::PROBE_NEEDS_PORT,
    rule::TERMINATION_GRACE_TOO_SHORT,
    rule::HEALTH_DIR_NOT_WRITABLE,
    rule::SECURITY_USER_MISMATCH,
    rule::RUN_AS_NON_ROOT_MISSING,
    rule::REPLICAS_NOT_ONE,
    rule::ENV_KEY_UNKNOWN,
    rule::ENV_VALUE_INVALID,
    rule::ENV_REQUIREMENT_MISSING,
    rule::ENV_VALUE_NOT_IMPLEMENTED,
    rule::LEARNED_STORE_ON_IDENTITY,
    rule::IMAGE_NOT_BARE,
    rule::IMAGE_PIN_MISMATCH,
    rule::STORAGE_CLASS_SET,
    rule::SECRET_IN_BASE,
    rule::SHELL_SCRIPT_DYNAMIC,
    rule::CONFIGMAP_REFERENCE_MISSING,
    rule::WORKING_DIR_INVALID,
    rule::SCRIPT_WRITE_READ_ONLY,
];

/// Runs every rule of this module on the objects of one build.
pub fn check(context: &Context, subject: &Subject) -> Vec<Diagnostic> {
    let site = context.site;
    let base = subject.base;
    let mut ctx = Ctx {
        site,
        base,
        subject,
        objects: subject.objects,
        images: &site.images,
        version: &base.version,
        known: site.images.has_release(&base.version),
        image_read: context.image(&base.version).is_some(),
        out: Vec::new(),
    };
    for w in workloads(subject.objects) {
        check_workload(&mut ctx, &w);
    }
    carried_environment(&mut ctx);
    ctx.out
}

/// The ConfigMaps (and their keys) a pod refers to without `optional:
/// true` are in the build: the kubelet does not start a container whose
/// `configMapKeyRef` or `configMapRef` it cannot resolve
/// (CreateContainerConfigError), nor a pod whose ConfigMap volume is
/// missing (ContainerCreating).
fn config_map_references(ctx: &mut Ctx, w: &Workload) {
    let namespace = w.object.namespace();
    let find = |name: &str| {
        ctx.objects
            .iter()
            .find(|o| o.kind() == "ConfigMap" && o.name() == name && o.namespace() == namespace)
    };
    let has_key = |o: &Object, key: &str| {
        ["data", "binaryData"]
            .iter()
            .any(|f| o.value[f].get(key).is_some())
    };
    // (pointer of the reference's name, ConfigMap, key, optional)
    let mut refs: Vec<(String, String, Option<String>, bool)> = Vec::new();
    for (_, ptr, c) in w.containers() {
        for (i, e) in c.env.iter().flatten().enumerate() {
            if let Some(r) = e
                .value_from
                .as_ref()
                .and_then(|v| v.config_map_key_ref.as_ref())
            {
                refs.push((
                    format!("{ptr}/env/{i}/valueFrom/configMapKeyRef/name"),
                    r.name.clone(),
                    Some(r.key.clone()),
                    r.optional == Some(true),
                ));
            }
        }
        for (i, e) in c.env_from.iter().flatten().enumerate() {
            if let Some(r) = &e.config_map_ref {
                refs.push((
                    format!("{ptr}/envFrom/{i}/configMapRef/name"),
                    r.name.clone(),
                    None,
                    r.optional == Some(true),
                ));
            }
        }
    }
    for (i, v) in w.pod.volumes.iter().flatten().enumerate() {
        if let Some(cm) = &v.config_map {
            let at = format!("{}/volumes/{i}/configMap", w.pod_ptr);
            let optional = cm.optional == Some(true);
            refs.push((format!("{at}/name"), cm.name.clone(), None, optional));
            for (j, item) in cm.items.iter().flatten().enumerate() {
                refs.push((
                    format!("{at}/items/{j}/key"),
                    cm.name.clone(),
                    Some(item.key.clone()),
                    optional,
                ));
            }
        }
    }
    // What every namespace has (the cluster's CA, published by the
    // control plane since Kubernetes 1.20).
    const CLUSTER_MADE: &[&str] = &["kube-root-ca.crt"];
    for (pointer, name, key, optional) in refs {
        if optional || name.is_empty() || CLUSTER_MADE.contains(&name.as_str()) {
            continue;
        }
        let why = match (find(&name), &key) {
            (None, _) => format!("ConfigMap `{name}`, which the build does not have"),
            (Some(o), Some(key)) if !has_key(o, key) => {
                let keys: Vec<&str> = ["data", "binaryData"]
                    .iter()
                    .flat_map(|f| o.value[f].as_object().into_iter().flatten())
                    .map(|(k, _)| k.as_str())
                    .collect();
                let near = crate::diagnostics::closest(key, keys.iter().copied())
                    .map(|k| format!(": did you mean `{k}`?"))
                    .unwrap_or_default();
                format!("key `{key}` of ConfigMap `{name}`, which has no such key{near}")
            }
            _ => continue,
        };
        let d = Diagnostic::new(
            rule::CONFIGMAP_REFERENCE_MISSING,
            format!(
                "{} `{}` refers to {why}, and does not mark it optional: the pod does not start",
                w.object.kind(),
                w.object.name()
            ),
        )
        .at(w.object.locate(&pointer));
        ctx.push(d);
    }
}

fn check_workload(ctx: &mut Ctx, w: &Workload) {
    config_map_references(ctx, w);
    let product = ctx.site.config.image.name.clone();
    let mut runs_product = false;
    let mut runs_agent = false;
    for (field, ptr, c) in w.containers() {
        let image = c.image.as_deref().unwrap_or("");
        // The runtime takes the working folder as the process's, which
        // the OCI runtime spec wants absolute: runc refuses another
        // (`Cwd must be an absolute path`), and the pod never starts.
        if let Some(dir) = c
            .working_dir
            .as_deref()
            .filter(|d| !d.is_empty() && !d.starts_with('/'))
        {
            let at = w.object.locate(&format!("{ptr}/workingDir"));
            ctx.push(
                Diagnostic::new(
                    rule::WORKING_DIR_INVALID,
                    format!(
                        "container `{}` sets workingDir `{dir}`, which is not an absolute path: the container runtime refuses to create the container (CreateContainerError)",
                        c.name
                    ),
                )
                .at(at)
                .help(format!("write the folder from the root: `workingDir: /{}`", dir.trim_start_matches("./"))),
            );
        }
        if image != image_repository(image) {
            let at = w.object.locate(&format!("{ptr}/image"));
            ctx.push(
                Diagnostic::new(
                    rule::IMAGE_NOT_BARE,
                    format!(
                        "container `{}` pins image `{image}`; a base names the bare image `{}`",
                        c.name,
                        image_repository(image)
                    ),
                )
                .at(at),
            );
        }
        let of_product = ctx.subject.is_product(&product, image);
        if of_product {
            pinned_release(ctx, w, &ptr, image);
        }
        let agent = of_product && ctx.known && ctx.runs_product(c);
        if ctx.known && !agent {
            // The agent's are checked with the rest of its environment.
            credentials(ctx, &Env::of(ctx, w, c, &ptr));
        }
        if !of_product {
            continue;
        }
        runs_product = true;
        if !ctx.known {
            continue;
        }
        // Whatever a container of the image runs must be in the image.
        exec_commands(ctx, w, c, &ptr);
        if !agent {
            continue;
        }
        runs_agent = true;
        let env = Env::of(ctx, w, c, &ptr);
        probes_need_ports(ctx, w, c, &ptr);
        health_dir_writable(ctx, w, c, &ptr, &env);
        container_user(ctx, w, c, &ptr);
        environment(ctx, w, c, &ptr, &env);
        if field == "containers" {
            termination_grace(ctx, w, &env);
        }
    }
    if !runs_product {
        return;
    }
    run_as_non_root(ctx, w);
    if !runs_agent && ctx.known {
        return;
    }
    if ctx.known {
        pod_user(ctx, w);
    }
    if let Some(n) = w.replicas.filter(|&n| n != 1) {
        let at = w.object.locate("/spec/replicas");
        ctx.push(
            Diagnostic::new(
                rule::REPLICAS_NOT_ONE,
                format!(
                    "{} `{}` has replicas: {n}; each agent needs its own bootstrap token",
                    w.object.kind(),
                    w.object.name()
                ),
            )
            .at(at),
        );
    }
}

/// The probes of a container, by field name.
fn probes(c: &Container) -> [(&'static str, Option<&Probe>); 3] {
    [
        ("livenessProbe", c.liveness_probe.as_ref()),
        ("readinessProbe", c.readiness_probe.as_ref()),
        ("startupProbe", c.startup_probe.as_ref()),
    ]
}

/// Where an exec's argv is written: at the list, unless a word of it
/// comes from elsewhere (a patch that changed one argument), which is
/// where the command became what it is.
pub(super) fn exec_location(object: &Object, exec: &Exec) -> Location {
    let list = object.locate(&exec.pointer);
    exec.words
        .iter()
        .map(|p| object.locate(p))
        .find(|l| l.file != list.file)
        .unwrap_or(list)
}

/// Every command a container runs in the image: probes, lifecycle hooks,
/// its own command, and the commands of their `sh -c` scripts.
fn exec_commands(ctx: &mut Ctx, w: &Workload, c: &Container, ptr: &str) {
    let env = ContainerEnv::of(ctx.objects, w.object.namespace(), c);
    let process = ctx.images.process_at(ctx.version);
    let image = process.map(|p| ImageProcess {
        entrypoint: &p.entrypoint,
        cmd: &p.command,
    });
    // The image's own programs are what the image data describes.
    let own: Vec<&str> = process
        .into_iter()
        .flat_map(|p| p.entrypoint.first().into_iter().chain(p.command.first()))
        .map(String::as_str)
        .collect();
    // The files of its volumes lie over the image's.
    let mounts = Mounts::of(ctx.objects, w.object.namespace(), &w.pod, c);
    let files = shell::Files {
        texts: mounts.texts(),
        path: match env.get("PATH") {
            Some(Some(path)) => path.to_string(),
            _ => USUAL_PATH.to_string(),
        },
        cwd: c.working_dir.clone().unwrap_or_else(|| "/".into()),
        wrappers: ctx.images.wrappers_at(ctx.version),
    };
    for exec in execs(c, ptr, &env, image) {
        let runs = shell::calls_in(&exec.argv, env.known(), files.clone());
        let script_at = script_at(w.object, &exec);
        for why in &runs.dynamic {
            ctx.push(
                Diagnostic::new(
                    rule::SHELL_SCRIPT_DYNAMIC,
                    format!(
                        "the {} of container `{}` runs a shell script that basepress cannot check against image {}: {why}",
                        exec.what,
                        c.name,
                        ctx.image_ref()
                    ),
                )
                .at(script_at.clone()),
            );
        }
        read_only_writes(ctx, w, c, &exec, &runs, (&mounts, &script_at));
        let argv_at = exec_location(w.object, &exec);
        for call in &runs.calls {
            if !call.in_script && call.program().is_some_and(|p| own.contains(&p)) {
                continue;
            }
            // A bash builtin under `sh`: only the image tells what `sh` is.
            if call.bash_only.is_some() {
                continue;
            }
            let at = if call.in_script {
                call_at(ctx.site, &script_location(&mounts, call, &script_at), call)
            } else {
                argv_at.clone()
            };
            // A program from one of its volumes is the volume's to have,
            // not the image's (with the image read, its check sees both).
            let at_start = exec.what == "command" && !call.in_script;
            let cwd = c.working_dir.as_deref().filter(|d| d.starts_with('/'));
            let path = call
                .program()
                .and_then(|p| match (p.starts_with('/'), cwd) {
                    (true, _) => Some(super::process::absolute(p, "/")),
                    (false, Some(cwd)) if p.contains('/') => Some(super::process::absolute(p, cwd)),
                    _ => None,
                });
            let mounted = path
                .as_deref()
                .filter(|_| !ctx.image_read)
                .and_then(|p| Some((p, mounts.at(p, at_start)?)));
            match mounted {
                Some((path, mounted)) => from_volume(ctx, c, &exec, (path, mounted), at),
                None => check_call(ctx, c, &exec, call, at),
            }
        }
    }
}

/// A program that one of the container's volumes holds (a ConfigMap's
/// key, mounted with its mode), or lacks: the volume decides whether it is
/// there and may run, not the image data.
fn from_volume(
    ctx: &mut Ctx,
    c: &Container,
    exec: &Exec,
    (path, mounted): (&str, Mounted),
    at: Location,
) {
    let why = match mounted {
        Mounted::Unknown => return,
        Mounted::File { mode, from, .. } if mode & 0o111 == 0 => (
            format!("the file comes from {from} with mode {mode:04o}, which lets no one run it"),
            "give it a mode that may run (`defaultMode: 0755`, or the item's `mode`), or run it with its interpreter (`sh FILE`)",
        ),
        Mounted::File { .. } => return,
        Mounted::Absent { why, help } => (why, help),
    };
    ctx.push(
        Diagnostic::new(
            rule::PROBE_COMMAND_MISSING,
            format!(
                "base {} runs `{path}` in the {} of container `{}`, which does not run: {}",
                ctx.base.folder(),
                exec.what,
                c.name,
                why.0
            ),
        )
        .at(at)
        .help(why.1),
    );
}

/// Where the script of a shell exec (`sh -c SCRIPT`) is written, its
/// commands' findings go: the script's word, else the argv.
pub(super) fn script_at(object: &Object, exec: &Exec) -> Location {
    exec.known()
        .as_deref()
        .and_then(shell::script_of)
        .and_then(|s| exec.argv.iter().position(|a| a.as_deref() == Some(s)))
        .and_then(|i| exec.words.get(i))
        .map_or_else(|| object.locate(&exec.pointer), |p| object.locate(p))
}

/// Which script a call is in, for a finding: the container's own (`in
/// the livenessProbe script`), or a file of a volume that it runs (`in
/// /scripts/probe.sh, line 4, which the livenessProbe runs`).
pub(super) fn in_script(what: &str, call: &impl InScript) -> String {
    match (call.file(), call.line()) {
        (Some(file), Some(line)) => {
            format!("in {file}, line {}, which the {what} runs", line + 1)
        }
        (Some(file), None) => format!("in {file}, which the {what} runs"),
        (None, _) => format!("in the {what} script"),
    }
}

/// The `PATH` a container's commands are looked up in when neither the
/// container nor the image read says: the one images usually set.
const USUAL_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Where the script a call is in is written: the key of the volume's
/// file it is in, else `script` (the container's own).
pub(super) fn script_location(
    mounts: &Mounts,
    call: &impl InScript,
    script: &Location,
) -> Location {
    call.file()
        .and_then(|f| mounts.key_at(f))
        .unwrap_or_else(|| script.clone())
}

/// Where a call of a script is: its own line when the script is a
/// literal block (`|`) of a base's file, whose lines are the script's;
/// else where the script is written.
pub(super) fn call_at(site: &Site, script: &Location, call: &impl InScript) -> Location {
    let (Some(k), Some(line)) = (call.line(), script.line) else {
        return script.clone();
    };
    let text = site.bases.iter().find_map(|b| {
        let rel = script.file.strip_prefix(&b.dir).ok()?;
        let name = rel.to_str()?.replace('\\', "/");
        std::str::from_utf8(&b.file(&name)?.bytes).ok()
    });
    let Some(text) = text else {
        return script.clone();
    };
    // A block scalar's position is its first line of text; the line
    // before its blank lines, which the script starts with, ends in its
    // indicator (`|`, `|-`, `|+`, `|2`).
    let all: Vec<&str> = text.lines().collect();
    let mut start = line;
    while start > 1 && all.get(start - 2).is_some_and(|l| l.trim().is_empty()) {
        start -= 1;
    }
    let literal = |l: &str| {
        let indicator = l.trim_end().rsplit(' ').next().unwrap_or_default();
        indicator.starts_with('|')
            && indicator[1..]
                .chars()
                .all(|c| matches!(c, '-' | '+' | '0'..='9'))
    };
    let indent = |l: &str| l.chars().take_while(|c| *c == ' ').count();
    if let (Some(before), Some(first)) = (
        start.checked_sub(2).and_then(|i| all.get(i)),
        all.get(line - 1),
    ) {
        if literal(before) {
            return Location::at(&script.file, start + k, indent(first) + 1);
        }
    }
    // A map's value is found at its key (`live.sh: |`): the script starts
    // on the line after.
    let at_key = all
        .get(line - 1)
        .is_some_and(|l| l.contains(": |") && literal(l));
    match all.iter().skip(line).find(|l| !l.trim().is_empty()) {
        Some(first) if at_key => Location::at(&script.file, line + 1 + k, indent(first) + 1),
        _ => script.clone(),
    }
}

/// One command against the image data: it exists in this release, takes
/// these arguments, and is no readiness check run as liveness.
fn check_call(ctx: &mut Ctx, c: &Container, exec: &Exec, call: &Call, at: Location) {
    let Some(program) = call.program() else {
        return;
    };
    // With the image read, the image says what exists (at whatever path);
    // the data's facts of its name, or of another release, still say how
    // the command is called.
    let fact = ctx.images.command_at(ctx.version, program).or_else(|| {
        let mut releases = ctx.images.releases.iter().rev();
        let name = base_name(program);
        ctx.image_read
            .then(|| {
                ctx.images.command_at(ctx.version, name).or_else(|| {
                    releases.find_map(|v| {
                        ctx.images
                            .command_at(v, program)
                            .or_else(|| ctx.images.command_at(v, name))
                    })
                })
            })
            .flatten()
    });
    let how = match call.in_script {
        true => format!("`{program}` ({})", in_script(exec.what, call)),
        false => format!("`{program}`"),
    };
    let Some(fact) = fact else {
        // Read already, or asked for first (`command -v X || exit 0`).
        if ctx.image_read || call.guarded {
            return;
        }
        let first = ctx
            .images
            .releases
            .iter()
            .find(|v| ctx.images.command_at(v, program).is_some());
        let (why, help) = match first {
            Some(v) if v > ctx.version => (
                format!("the image has it from {v}"),
                format!(
                    "publish this base for {v} or later, or call a command that {} has",
                    ctx.image_ref()
                ),
            ),
            Some(v) => (
                format!("the image had it in {v}"),
                format!("call a command that {} has", ctx.image_ref()),
            ),
            // Without the image read, the data is all there is to go by.
            None => (
                "the image data gives it to no release".to_string(),
                format!(
                    "call a command the image data lists; if the image has it, add it to `commands:` in {} (with the image read, `image.source` in site.yaml, the image itself is checked)",
                    ctx.site.config.image.releases.display()
                ),
            ),
        };
        ctx.push(
            Diagnostic::new(
                rule::PROBE_COMMAND_MISSING,
                format!(
                    "base {} runs {how} in container `{}`, but image {} does not have it: {why}",
                    ctx.base.folder(),
                    c.name,
                    ctx.image_ref()
                ),
            )
            .at(at)
            .help(help),
        );
        return;
    };
    // Arguments known only when the script runs are not checked.
    let Some(args) = call.args() else {
        return;
    };
    if let Args::OneOf(lists) = &fact.args {
        if !lists
            .iter()
            .any(|l| l.iter().map(String::as_str).eq(args.iter().copied()))
        {
            let accepted: Vec<String> = lists.iter().map(|l| l.join(" ")).collect();
            ctx.push(
                Diagnostic::new(
                    rule::COMMAND_ARGS_INVALID,
                    format!(
                        "`{}` does not accept `{}` in {}",
                        fact.name,
                        args.join(" "),
                        ctx.image_ref()
                    ),
                )
                .at(at.clone())
                .help(format!(
                    "call it as one of: {}",
                    accepted
                        .iter()
                        .map(|a| format!("`{} {a}`", fact.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
        }
    }
    if exec.what == "livenessProbe"
        && fact
            .readiness_only
            .iter()
            .any(|l| l.iter().map(String::as_str).eq(args.iter().copied()))
    {
        ctx.push(
            Diagnostic::new(
                rule::LIVENESS_USES_READINESS,
                format!(
                    "the liveness probe of container `{}` runs `{}`, a readiness check",
                    c.name,
                    call.display()
                ),
            )
            .at(at),
        );
    }
}

fn probes_need_ports(ctx: &mut Ctx, w: &Workload, c: &Container, ptr: &str) {
    let Some(ports) = ctx.images.ports_at(ctx.version) else {
        return;
    };
    if !ports.is_empty() {
        return;
    }
    for (field, probe) in probes(c) {
        let Some(p) = probe else { continue };
        let kind = if p.http_get.is_some() {
            "httpGet"
        } else if p.tcp_socket.is_some() {
            "tcpSocket"
        } else if p.grpc.is_some() {
            "grpc"
        } else {
            continue;
        };
        let at = w.object.locate(&format!("{ptr}/{field}/{kind}"));
        ctx.push(
            Diagnostic::new(
                rule::PROBE_NEEDS_PORT,
                format!(
                    "the {field} of container `{}` uses {kind}, but {} listens on no port",
                    c.name,
                    ctx.image_ref()
                ),
            )
            .at(at),
        );
    }
    // A hook that calls a port fails as a probe does: after postStart, the
    // kubelet kills the container; before preStop's work is done, it stops.
    let hooks = c
        .lifecycle
        .as_ref()
        .map(|l| [("postStart", &l.post_start), ("preStop", &l.pre_stop)]);
    for (hook, handler) in hooks.into_iter().flatten() {
        let Some(h) = handler else { continue };
        let kind = match (&h.http_get, &h.tcp_socket) {
            (Some(_), _) => "httpGet",
            (_, Some(_)) => "tcpSocket",
            _ => continue,
        };
        let what = match hook {
            "postStart" => "the kubelet kills the container when it fails, so it never starts",
            _ => "it fails, so the container stops without the work it does",
        };
        let at = w.object.locate(&format!("{ptr}/lifecycle/{hook}/{kind}"));
        ctx.push(
            Diagnostic::new(
                rule::PROBE_NEEDS_PORT,
                format!(
                    "the {hook} hook of container `{}` uses {kind}, but {} listens on no port: {what}",
                    c.name,
                    ctx.image_ref()
                ),
            )
            .at(at)
            .help("run a command of the image instead (`exec`), or `sleep` for a pause before stopping"),
        );
    }
}

/// One environment setting a container gets, with where it is set.
struct Setting {
    key: String,
    /// `None` for `valueFrom`, whose value the base does not know.
    value: Option<String>,
    at: Location,
}

/// The environment a container gets from the base.
struct Env {
    settings: Vec<Setting>,
    /// The container reads a Secret through envFrom (the installer's own).
    secret_ref: bool,
    /// Keys other entries refer to as `$(KEY)`: helpers, not settings.
    referenced: BTreeSet<String>,
}

impl Env {
    /// The object of `kind` named `name` in the workload's namespace.
    fn source<'a>(ctx: &Ctx<'a>, w: &Workload, kind: &str, name: &str) -> Option<&'a Object> {
        env_source(ctx.objects, w.object.namespace(), kind, name)
    }

    fn of(ctx: &Ctx, w: &Workload, c: &Container, ptr: &str) -> Env {
        let mut settings = Vec::new();
        let mut secret_ref = false;
        for from in c.env_from.iter().flatten() {
            let prefix = from.prefix.clone().unwrap_or_default();
            let (name, kind) = match (&from.config_map_ref, &from.secret_ref) {
                (Some(r), _) => (r.name.as_str(), "ConfigMap"),
                (_, Some(r)) => {
                    secret_ref = true;
                    (r.name.as_str(), "Secret")
                }
                _ => continue,
            };
            for (key, value, at) in Env::source(ctx, w, kind, name)
                .map(object_data)
                .unwrap_or_default()
            {
                settings.push(Setting {
                    key: format!("{prefix}{key}"),
                    value,
                    at,
                });
            }
        }
        let mut referenced = BTreeSet::new();
        let mut scan = |s: &str| {
            let mut rest = s;
            while let Some(i) = rest.find("$(") {
                rest = &rest[i + 2..];
                if let Some(j) = rest.find(')') {
                    referenced.insert(rest[..j].to_string());
                    rest = &rest[j..];
                }
            }
        };
        for (i, e) in c.env.iter().flatten().enumerate() {
            if let Some(v) = &e.value {
                scan(v);
            }
            // A key of a ConfigMap of the build has a value the base knows.
            let value = match &e.value_from {
                None => Some(e.value.clone().unwrap_or_default()),
                Some(from) => from.config_map_key_ref.as_ref().and_then(|r| {
                    config_map_value(ctx.objects, w.object.namespace(), &r.name, &r.key)
                }),
            };
            settings.push(Setting {
                key: e.name.clone(),
                value,
                at: w.object.locate(&format!("{ptr}/env/{i}")),
            });
        }
        for s in c.command.iter().chain(c.args.iter()).flatten() {
            scan(s);
        }
        Env {
            settings,
            secret_ref,
            referenced,
        }
    }

    /// The last setting of `key` (env entries override envFrom).
    fn get(&self, key: &str) -> Option<&Setting> {
        self.settings.iter().rev().find(|s| s.key == key)
    }

    /// The value of `key` as the image sees it: set, or the image default.
    fn value(&self, fact: &EnvFact) -> Option<String> {
        match self.get(&fact.key) {
            Some(s) => s.value.clone(),
            None => fact.default.clone(),
        }
    }
}

/// A whole, non-negative number of milliseconds.
fn milliseconds(value: &str) -> Option<u64> {
    let v = value.trim();
    (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .then(|| v.parse().ok())
        .flatten()
}

fn termination_grace(ctx: &mut Ctx, w: &Workload, env: &Env) {
    let Some(fact) = ctx.images.env_role(ctx.version, EnvRole::DrainTimeout) else {
        return;
    };
    // An invalid value is a finding of its own (`env-value-invalid`); the
    // grace period is then checked against the image default.
    let default = fact.default.as_deref().and_then(milliseconds);
    let (drain_ms, source) = match env.get(&fact.key).map(|s| s.value.as_deref()) {
        // Set from a Secret or the downward API: the base does not know it.
        Some(None) => return,
        Some(Some(v)) => match (milliseconds(v), default) {
            (Some(ms), _) => (ms, "as configured".to_string()),
            (None, Some(ms)) => (
                ms,
                format!("the image default, since `{v}` is not a number of milliseconds"),
            ),
            (None, None) => return,
        },
        None => match default {
            Some(ms) => (ms, "the image default".to_string()),
            None => return,
        },
    };
    let set = w.pod.termination_grace_period_seconds;
    let grace = set.unwrap_or(30);
    if u64::try_from(grace).unwrap_or(0) * 1000 > drain_ms {
        return;
    }
    let (what, pointer) = match set {
        Some(s) => (
            format!("terminationGracePeriodSeconds is {s}"),
            format!("{}/terminationGracePeriodSeconds", w.pod_ptr),
        ),
        None => (
            "terminationGracePeriodSeconds is not set, so Kubernetes gives 30".to_string(),
            w.pod_ptr.to_string(),
        ),
    };
    let at = w.object.locate(&pointer);
    let want = drain_ms.div_ceil(1000) + 30;
    ctx.push(
        Diagnostic::new(
            rule::TERMINATION_GRACE_TOO_SHORT,
            format!(
                "{what} s, not more than the drain timeout {} = {drain_ms} ms ({source})",
                fact.key
            ),
        )
        .at(at)
        .help(format!("set terminationGracePeriodSeconds: {want} or more")),
    );
}

/// The files a container's scripts write to (`> FILE`) must be on a
/// writable file system: not the root when it is read-only
/// (`readOnlyRootFilesystem`), not a read-only volume (a ConfigMap, a
/// Secret, `readOnly: true`). Else the write fails, and the command with
/// it: a probe that always fails, a hook that stops.
fn read_only_writes(
    ctx: &mut Ctx,
    w: &Workload,
    c: &Container,
    exec: &Exec,
    runs: &shell::Calls,
    (mounts, script_at): (&Mounts, &Location),
) {
    let root_read_only = c
        .security_context
        .as_ref()
        .and_then(|s| s.read_only_root_filesystem)
        == Some(true);
    let cwd = c
        .working_dir
        .as_deref()
        .filter(|d| d.starts_with('/'))
        .unwrap_or("/");
    for write in &runs.writes {
        let path = super::process::absolute(&write.path, &write.scope.cwd_over(cwd));
        if write.scope.cwd_unknown && !write.path.starts_with('/') {
            continue;
        }
        // The kernel's own file systems, which every container has.
        let kernel = ["/dev", "/proc", "/sys"]
            .iter()
            .any(|k| is_within(&path, k));
        if kernel {
            continue;
        }
        let holding = c
            .volume_mounts
            .iter()
            .flatten()
            .filter(|m| is_within(&path, &m.mount_path))
            .max_by_key(|m| m.mount_path.trim_end_matches('/').len());
        let (writable, on) = match holding {
            Some(m) => {
                let writable = mounts_holding(w, c, &m.mount_path)
                    .iter()
                    .any(|(name, writable)| *name == m.name && *writable);
                (
                    writable,
                    format!(
                        "volume `{}` mounted at {}, which is read-only",
                        m.name, m.mount_path
                    ),
                )
            }
            None => (
                !root_read_only,
                "the root filesystem, which `readOnlyRootFilesystem: true` makes read-only"
                    .to_string(),
            ),
        };
        if writable {
            continue;
        }
        let at = call_at(ctx.site, &script_location(mounts, write, script_at), write);
        ctx.push(
            Diagnostic::new(
                rule::SCRIPT_WRITE_READ_ONLY,
                format!(
                    "the {} of container `{}` writes to {path} ({}), on {on}: the write fails, and the command with it",
                    exec.what,
                    c.name,
                    in_script(exec.what, write)
                ),
            )
            .at(at)
            .help("write below a writable volume (an emptyDir mounted at /tmp), or to /dev/null or /dev/stderr"),
        );
    }
}

/// Whether `dir` is `mount` or below it.
fn is_within(dir: &str, mount: &str) -> bool {
    let mount = mount.trim_end_matches('/');
    dir == mount || mount.is_empty() || dir.starts_with(&format!("{mount}/"))
}

/// The mounts of a container that hold `dir`, with whether each is
/// writable (not read-only, and backed by a writable volume).
fn mounts_holding(w: &Workload, c: &Container, dir: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for m in c.volume_mounts.iter().flatten() {
        if !is_within(dir, &m.mount_path) {
            continue;
        }
        let volume = w.pod.volumes.iter().flatten().find(|v| v.name == m.name);
        let writable_volume = match volume {
            Some(v) => {
                v.empty_dir.is_some()
                    || v.persistent_volume_claim.is_some()
                    || v.ephemeral.is_some()
                    || v.host_path.is_some()
            }
            None => w.claims.contains(&m.name),
        };
        out.push((m.name.clone(), writable_volume && m.read_only != Some(true)));
    }
    out
}

fn health_dir_writable(ctx: &mut Ctx, w: &Workload, c: &Container, ptr: &str, env: &Env) {
    let read_only = c
        .security_context
        .as_ref()
        .and_then(|s| s.read_only_root_filesystem)
        == Some(true);
    if !read_only {
        return;
    }
    let Some(fact) = ctx.images.env_role(ctx.version, EnvRole::HealthDir) else {
        return;
    };
    let Some(dir) = env.value(fact) else { return };
    if mounts_holding(w, c, &dir)
        .iter()
        .any(|(_, writable)| *writable)
    {
        return;
    }
    let at = w
        .object
        .locate(&format!("{ptr}/securityContext/readOnlyRootFilesystem"));
    ctx.push(
        Diagnostic::new(
            rule::HEALTH_DIR_NOT_WRITABLE,
            format!(
                "container `{}` has a read-only root filesystem and no writable volume at {} = {dir}",
                c.name, fact.key
            ),
        )
        .at(at),
    );
}

fn user_mismatch(ctx: &mut Ctx, w: &Workload, pointer: String, field: &str, got: i64, want: i64) {
    if got == want {
        return;
    }
    let at = w.object.locate(&pointer);
    let user = ctx
        .images
        .user_at(ctx.version)
        .map_or("", |u| u.name.as_str())
        .to_string();
    ctx.push(
        Diagnostic::new(
            rule::SECURITY_USER_MISMATCH,
            format!(
                "{field} is {got}, but {} runs as `{user}` ({want})",
                ctx.image_ref()
            ),
        )
        .at(at)
        .help(format!("set {field}: {want}, or leave it out")),
    );
}

fn pod_user(ctx: &mut Ctx, w: &Workload) {
    let Some(user) = ctx.images.user_at(ctx.version).cloned() else {
        return;
    };
    let Some(sc) = &w.pod.security_context else {
        return;
    };
    let p = format!("{}/securityContext", w.pod_ptr);
    for (field, got, want) in [
        ("runAsUser", sc.run_as_user, user.uid),
        ("runAsGroup", sc.run_as_group, user.gid),
        ("fsGroup", sc.fs_group, user.gid),
    ] {
        if let Some(got) = got {
            user_mismatch(ctx, w, format!("{p}/{field}"), field, got, want);
        }
    }
}

fn container_user(ctx: &mut Ctx, w: &Workload, c: &Container, ptr: &str) {
    let Some(user) = ctx.images.user_at(ctx.version).cloned() else {
        return;
    };
    let Some(sc) = &c.security_context else {
        return;
    };
    for (field, got, want) in [
        ("runAsUser", sc.run_as_user, user.uid),
        ("runAsGroup", sc.run_as_group, user.gid),
    ] {
        if let Some(got) = got {
            user_mismatch(
                ctx,
                w,
                format!("{ptr}/securityContext/{field}"),
                field,
                got,
                want,
            );
        }
    }
}

/// Every container, init containers too, must run as non-root: a
/// container's own `runAsNonRoot` wins over the pod's.
fn run_as_non_root(ctx: &mut Ctx, w: &Workload) {
    let pod = w
        .pod
        .security_context
        .as_ref()
        .and_then(|s| s.run_as_non_root);
    for (_, ptr, c) in w.containers() {
        let own = c.security_context.as_ref().and_then(|s| s.run_as_non_root);
        if own.or(pod) == Some(true) {
            continue;
        }
        let (pointer, whose) = match (own, pod) {
            (Some(_), _) => (
                format!("{ptr}/securityContext/runAsNonRoot"),
                format!("container `{}` sets", c.name),
            ),
            (None, Some(_)) => (
                format!("{}/securityContext/runAsNonRoot", w.pod_ptr),
                format!("container `{}` inherits", c.name),
            ),
            (None, None) => (
                format!("{}/securityContext", w.pod_ptr),
                format!("neither the pod nor container `{}` sets", c.name),
            ),
        };
        let at = w.object.locate(&pointer);
        ctx.push(
            Diagnostic::new(
                rule::RUN_AS_NON_ROOT_MISSING,
                format!(
                    "{} `{}` does not set securityContext.runAsNonRoot: true ({whose} {})",
                    w.object.kind(),
                    w.object.name(),
                    if own.or(pod).is_some() {
                        "runAsNonRoot: false"
                    } else {
                        "runAsNonRoot"
                    }
                ),
            )
            .at(at),
        );
        // One finding a workload: the fix is the same for all.
        return;
    }
}

/// A credential of the image (`secret: true`) given a value, in any
/// container: the base would publish it, whoever reads it.
fn credentials(ctx: &mut Ctx, env: &Env) {
    for s in &env.settings {
        let secret = ctx
            .images
            .env_fact(ctx.version, &s.key)
            .is_some_and(|fact| fact.secret);
        if secret && s.value.as_deref().is_some_and(|v| !v.is_empty()) {
            ctx.push(
                Diagnostic::new(
                    rule::SECRET_IN_BASE,
                    format!("`{}` is a credential, and the base gives it a value", s.key),
                )
                .at(s.at.clone()),
            );
        }
    }
}

/// Variables every process reads, whatever the image: the runtime and
/// the shell look commands up on `PATH`, the C library and Node.js read
/// the time zone and locale, temporary files go to `TMPDIR`.
fn is_process_variable(key: &str) -> bool {
    matches!(key, "PATH" | "HOME" | "TZ" | "TMPDIR" | "LANG" | "LANGUAGE") || key.starts_with("LC_")
}

fn environment(ctx: &mut Ctx, w: &Workload, c: &Container, ptr: &str, env: &Env) {
    let v = ctx.version;
    for s in &env.settings {
        let Some(fact) = ctx.images.env_fact(v, &s.key) else {
            // A helper that other values refer to (`$(POD_NAME)`) is for
            // Kubernetes to expand, not for the image to read. A key the
            // image reads is checked below, referred to or not.
            if env.referenced.contains(&s.key) || is_process_variable(&s.key) {
                continue;
            }
            let other = ctx.images.env.iter().find(|e| e.key == s.key);
            let (why, help) = match other {
                Some(e) => (
                    format!("only releases `{}` read it", e.versions),
                    format!("remove it from the base for {}", ctx.base.folder()),
                ),
                None => {
                    match crate::diagnostics::closest(
                        &s.key,
                        ctx.images.env_at(v).map(|e| e.key.as_str()),
                    ) {
                        Some(k) => (
                            format!("did you mean `{k}`?"),
                            format!("rename it to `{k}`"),
                        ),
                        None => (
                            "no release of the image reads it".into(),
                            "remove it, or add it to the image data if the image really reads it"
                                .into(),
                        ),
                    }
                }
            };
            ctx.push(
                Diagnostic::new(
                    rule::ENV_KEY_UNKNOWN,
                    format!("`{}` is not read by {}: {why}", s.key, ctx.image_ref()),
                )
                .at(s.at.clone())
                .help(help),
            );
            continue;
        };
        if let (Some(EnvKind::Milliseconds), Some(v)) = (fact.kind, s.value.as_deref()) {
            // `$(KEY)` is expanded by Kubernetes: its value is not known here.
            if milliseconds(v).is_none() && !v.contains("$(") {
                ctx.push(
                    Diagnostic::new(
                        rule::ENV_VALUE_INVALID,
                        format!(
                            "{}={v} is not a number of milliseconds, which {} needs",
                            s.key,
                            ctx.image_ref()
                        ),
                    )
                    .at(s.at.clone())
                    .help(format!(
                        "give {} a whole, non-negative number of milliseconds{}",
                        s.key,
                        fact.default
                            .as_deref()
                            .map(|d| format!(" (the image default is {d})"))
                            .unwrap_or_default()
                    )),
                );
            }
        }
    }
    credentials(ctx, env);

    // Values and their requirements, for every key the image reads,
    // whether the base sets it or the image default applies.
    for fact in ctx.images.env_at(v) {
        let Some(values) = &fact.values else { continue };
        let Some(value) = env.value(fact) else {
            continue;
        };
        let setting_at = env.get(&fact.key).map(|s| s.at.clone());
        let at = setting_at.clone().unwrap_or_else(|| w.object.locate(ptr));
        let from = if setting_at.is_some() {
            ""
        } else {
            " (the image default)"
        };
        let Some(accepted) = values.iter().find(|a| a.value == value) else {
            let list: Vec<_> = values.iter().map(|a| format!("`{}`", a.value)).collect();
            ctx.push(
                Diagnostic::new(
                    rule::ENV_VALUE_INVALID,
                    format!(
                        "{}={value} is not a value {} accepts",
                        fact.key,
                        ctx.image_ref()
                    ),
                )
                .at(at)
                .help(format!("use one of {}", list.join(", "))),
            );
            continue;
        };
        if let Some(msg) = &accepted.not_implemented {
            ctx.push(
                Diagnostic::new(
                    rule::ENV_VALUE_NOT_IMPLEMENTED,
                    format!(
                        "{}={value}{from} passes config validation but fails at boot: {msg}",
                        fact.key
                    ),
                )
                .at(at.clone()),
            );
        }
        for req in &accepted.requires {
            if let Err(missing) = requirement(ctx, w, c, env, req) {
                let mut d = Diagnostic::new(
                    rule::ENV_REQUIREMENT_MISSING,
                    format!("{}={value}{from} requires {missing}", fact.key),
                )
                .at(at.clone());
                if let Some(e) = &req.error {
                    d = d.help(format!("without it the agent stops at boot with: {e}"));
                }
                ctx.push(d);
            }
        }
    }
    learned_store(ctx, w, c, env);
}

/// Whether a requirement holds; the error says what is missing.
fn requirement(
    ctx: &Ctx,
    w: &Workload,
    c: &Container,
    env: &Env,
    req: &Requirement,
) -> Result<(), String> {
    if let Some(key) = &req.env {
        let set = env.get(key).is_some_and(|s| s.value.as_deref() != Some(""));
        let secret = ctx
            .images
            .env_fact(ctx.version, key)
            .is_some_and(|f| f.secret);
        if !(set || secret && env.secret_ref) {
            return Err(format!("`{key}`, which the base does not set"));
        }
    }
    if let Some(token) = &req.projected_token {
        let path = ctx
            .images
            .env_fact(ctx.version, &token.directory_of)
            .and_then(|f| env.value(f))
            .unwrap_or_default();
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let mount = c
            .volume_mounts
            .iter()
            .flatten()
            .find(|m| m.mount_path.trim_end_matches('/') == dir);
        let Some(mount) = mount else {
            return Err(format!(
                "a projected service account token volume mounted at {dir} (the folder of {} = {path})",
                token.directory_of
            ));
        };
        let audiences: Vec<String> = w
            .pod
            .volumes
            .iter()
            .flatten()
            .filter(|v| v.name == mount.name)
            .filter_map(|v| v.projected.as_ref())
            .flat_map(|p| p.sources.iter().flatten())
            .filter_map(|s| s.service_account_token.as_ref())
            .map(|t| t.audience.clone().unwrap_or_default())
            .collect();
        if !audiences.contains(&token.audience) {
            return Err(match audiences.first() {
                None => format!(
                    "volume `{}` at {dir} to be a projected serviceAccountToken with audience `{}`",
                    mount.name, token.audience
                ),
                Some(a) => format!(
                    "the token at {dir} to be projected for audience `{}`, not `{a}`",
                    token.audience
                ),
            });
        }
    }
    Ok(())
}

fn learned_store(ctx: &mut Ctx, w: &Workload, c: &Container, env: &Env) {
    let v = ctx.version;
    let (Some(store), Some(identity)) = (
        ctx.images.env_role(v, EnvRole::LearnedStore),
        ctx.images.env_role(v, EnvRole::IdentityDir),
    ) else {
        return;
    };
    let Some(path) = env.value(store).filter(|p| p.starts_with('/')) else {
        return;
    };
    let identity_dir = env.value(identity);
    let on_identity_dir = identity_dir.as_deref().is_some_and(|d| is_within(&path, d));
    let on_claim = mounts_holding(w, c, &path)
        .iter()
        .any(|(name, _)| w.claims.contains(name));
    if !(on_identity_dir || on_claim) {
        return;
    }
    let at = env
        .get(&store.key)
        .map(|s| s.at.clone())
        .unwrap_or_else(|| w.object.locate(w.pod_ptr));
    ctx.push(
        Diagnostic::new(
            rule::LEARNED_STORE_ON_IDENTITY,
            format!(
                "{}={path} is on the identity volume{}",
                store.key,
                identity_dir
                    .map(|d| format!(" ({} = {d})", identity.key))
                    .unwrap_or_default()
            ),
        )
        .at(at),
    );
}

/// What a base must not carry: StorageClasses and Secrets (with data, or
/// made by a secretGenerator).
fn carried_environment(ctx: &mut Ctx) {
    for m in ctx.objects {
        let (kind, name) = (m.kind(), m.name());
        for claim in crate::kustomize::claim_specs(kind, &m.value) {
            let field = format!("{}/storageClassName", claim.pointer);
            if !m
                .value
                .pointer(&field)
                .is_some_and(serde_json::Value::is_string)
            {
                continue;
            }
            ctx.push(
                Diagnostic::new(
                    rule::STORAGE_CLASS_SET,
                    if kind == "PersistentVolumeClaim" {
                        format!("{kind} `{name}` names a StorageClass")
                    } else {
                        format!(
                            "{} `{}` of {kind} `{name}` names a StorageClass",
                            claim.what, claim.name
                        )
                    },
                )
                .at(m.locate(&field)),
            );
        }
        if kind != "Secret" {
            continue;
        }
        // A generated object is located, as a whole, at its generator in
        // the kustomization.
        let at_kind = m.locate("/kind");
        let generated = at_kind
            .file
            .file_name()
            .is_some_and(|f| f == crate::model::layout::KUSTOMIZATION);
        if generated {
            ctx.push(
                Diagnostic::new(
                    rule::SECRET_IN_BASE,
                    format!("a secretGenerator would publish Secret `{name}` with the base"),
                )
                .at(at_kind),
            );
            continue;
        }
        for field in ["data", "stringData"] {
            if m.value[field].as_object().is_some_and(|o| !o.is_empty()) {
                ctx.push(
                    Diagnostic::new(
                        rule::SECRET_IN_BASE,
                        format!("Secret `{name}` carries {field}"),
                    )
                    .at(m.locate(&format!("/{field}"))),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_pins_are_the_tag_and_the_digest() {
        assert_eq!(image_pins("whystack-agent"), (None, None));
        assert_eq!(image_pins("reg.io:5000/a/whystack-agent"), (None, None));
        assert_eq!(
            image_pins("reg.io:5000/a/whystack-agent:1.0@sha256:ab"),
            (Some("1.0"), Some("sha256:ab"))
        );
        assert_eq!(image_pins("w@sha256:ab"), (None, Some("sha256:ab")));
    }

    #[test]
    fn image_repository_strips_registry_tag_and_digest() {
        assert_eq!(image_repository("whystack-agent"), "whystack-agent");
        assert_eq!(image_repository("whystack-agent:1.0"), "whystack-agent");
        assert_eq!(
            image_repository("reg.io:5000/team/whystack-agent:1.0@sha256:ab"),
            "whystack-agent"
        );
    }

    #[test]
    fn within_paths() {
        assert!(is_within("/tmp/whystack-health", "/tmp"));
        assert!(is_within("/tmp", "/tmp/"));
        assert!(!is_within("/tmpfoo", "/tmp"));
        assert!(is_within("/x", "/"));
    }
}
