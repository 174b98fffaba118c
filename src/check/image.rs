//! The base against the real image of its release, when the project says
//! where images are (`image.source`, `--image`): every command a
//! container of the image runs must be a file its user may execute, on
//! every platform of the image; and the image release data must say of
//! the image what the image says of itself.

use super::pods::{
    call_at, exec_location, in_script, script_at, script_location, workloads, Workload,
};
use super::process::{absolute, execs, ContainerEnv, ImageProcess, Mounted, Mounts};
use super::shell;
use super::{Context, Subject};
use crate::diagnostics::{rule, Diagnostic, Location, Rule};
use crate::model::images::ImageReleases;
use crate::oci::{can_execute, can_read, CommandError, Entry, Image, Kind, Lookup, Platform};
use k8s_openapi::api::core::v1::Container;
use semver::Version;

/// The rules of [`commands`].
pub const COMMAND_RULES: &[&Rule] = &[rule::PROBE_COMMAND_MISSING, rule::IMAGE_USER_REFUSED];

/// The rules of [`agreement`].
pub const AGREEMENT_RULES: &[&Rule] = &[rule::IMAGE_DATA_MISMATCH, rule::IMAGE_VERSION_MISMATCH];

/// A uid or gid from the pod spec, when it is one.
fn id(v: Option<i64>) -> Option<u32> {
    v.and_then(|v| u32::try_from(v).ok())
}

/// The uid and gids a container runs with on `platform`: the container's
/// securityContext, else the pod's, else the image user; with `fsGroup`
/// and `supplementalGroups`.
fn identity(platform: &Platform, w: &Workload, c: &Container) -> (u32, Vec<u32>) {
    let pod = w.pod.security_context.as_ref();
    let own = c.security_context.as_ref();
    let user = id(own.and_then(|s| s.run_as_user)).or(id(pod.and_then(|s| s.run_as_user)));
    let group = id(own.and_then(|s| s.run_as_group)).or(id(pod.and_then(|s| s.run_as_group)));
    let fs_group = id(pod.and_then(|s| s.fs_group));
    let supplemental: Vec<u32> = pod
        .and_then(|s| s.supplemental_groups.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|g| u32::try_from(*g).ok())
        .collect();
    platform.identity(user, group, fs_group, &supplemental)
}

/// Why the kubelet or the runtime refuses to start container `c` of
/// workload `w` as the user of `platform`'s image, when it does: a user
/// or group the image does not have (and no `runAsUser` to replace it),
/// or `runAsNonRoot` with an image user that is a name (the kubelet
/// cannot tell its uid) or root, and no `runAsUser`.
fn user_refused(platform: &Platform, w: &Workload, c: &Container) -> Option<String> {
    let pod = w.pod.security_context.as_ref();
    let own = c.security_context.as_ref();
    let run_as_user = own
        .and_then(|s| s.run_as_user)
        .or(pod.and_then(|s| s.run_as_user));
    if run_as_user.is_some() {
        return None;
    }
    if let Some(e) = &platform.user_error {
        return Some(format!("{e}, and no runAsUser replaces it"));
    }
    let non_root = own
        .and_then(|s| s.run_as_non_root)
        .or(pod.and_then(|s| s.run_as_non_root));
    if non_root != Some(true) {
        return None;
    }
    let user = platform.config.user.split(':').next().unwrap_or_default();
    match user.parse::<u32>() {
        Ok(0) => Some("runAsNonRoot is set, and the image runs as root (uid 0)".into()),
        Ok(_) => None,
        Err(_) if user.is_empty() => {
            Some("runAsNonRoot is set, and the image names no user, so it runs as root".into())
        }
        Err(_) => Some(format!(
            "runAsNonRoot is set, and the image's user `{user}` is a name: the kubelet cannot verify that it is not root without runAsUser"
        )),
    }
}

/// Whether the data gives release `v` the command `program` runs, or one
/// of its name: with the image read, a path the image lacks may still be
/// a command the data knows under its name (`/opt/nowhere/node`).
fn names_it(data: &ImageReleases, v: &Version, program: &str) -> bool {
    data.command_at(v, program)
        .or_else(|| data.command_at(v, shell::base_name(program)))
        .is_some()
}

/// The releases of the data file nearest to `version` (later ones first)
/// that have command `name`, per the data file.
fn nearest_with(data: &ImageReleases, version: &Version, name: &str) -> Option<Version> {
    let has = |v: &Version| names_it(data, v, name);
    // The data gives it to this release already: another release is no
    // remedy for a path, a folder or a mode the image gets wrong.
    if has(version) {
        return None;
    }
    data.releases
        .iter()
        .filter(|v| *v > version)
        .find(|v| has(v))
        .or_else(|| {
            data.releases
                .iter()
                .rev()
                .filter(|v| *v < version)
                .find(|v| has(v))
        })
        .cloned()
}

/// Every command a container of the product image runs (probes, hooks,
/// its main process, the commands of their shell scripts) resolves, in
/// the container's environment and working folder, to a file its user
/// may execute, on every platform.
pub fn commands(ctx: &Context, subject: &Subject) -> Vec<Diagnostic> {
    let Some(image) = ctx.image(&subject.base.version) else {
        return Vec::new();
    };
    let product = ctx.site.config.image.name.as_str();
    let version = &subject.base.version;
    let mut out = Vec::new();
    for w in workloads(subject.objects) {
        for (_, ptr, c) in w.containers() {
            if !subject.is_product(product, c.image.as_deref().unwrap_or("")) {
                continue;
            }
            let env = ContainerEnv::of(subject.objects, w.object.namespace(), c);
            let written = Mounts::of(subject.objects, w.object.namespace(), &w.pod, c);
            for platform in &image.platforms {
                let mounts =
                    written.resolved(|p| platform.fs.resolve(p).ok().map(|r| r.path.to_string()));
                if let Some(why) = user_refused(platform, &w, c) {
                    out.push(
                        Diagnostic::new(
                            rule::IMAGE_USER_REFUSED,
                            format!(
                                "container `{}` cannot start from image {}:{version} for {}: {why}",
                                c.name,
                                ctx.site.config.image.name,
                                platform.name()
                            ),
                        )
                        .at(w.object.locate(&format!("{ptr}/image"))),
                    );
                    // Its user is unknown: nothing it runs can be checked.
                    continue;
                }
                let (uid, gids) = identity(platform, &w, c);
                // The runtime looks commands up in the container's own
                // environment (its `PATH` over the image's) and folder.
                let path = match env.get("PATH") {
                    Some(Some(path)) => path,
                    _ => platform.config.path(),
                };
                // A PATH from a Secret or a ConfigMap key is only known
                // when the pod runs: a name not found may be on it.
                let path_unknown = matches!(env.get("PATH"), Some(None));
                let cwd = c.working_dir.as_deref().filter(|d| !d.is_empty());
                let lookup = Lookup {
                    path,
                    cwd: cwd.unwrap_or(platform.config.cwd()),
                };
                let process = ImageProcess {
                    entrypoint: &platform.config.entrypoint,
                    cmd: &platform.config.cmd,
                };
                let files = shell::Files {
                    texts: mounts.texts(),
                    path: lookup.path.to_string(),
                    cwd: lookup.cwd.to_string(),
                    wrappers: ctx.site.images.wrappers_at(version),
                };
                for exec in execs(c, &ptr, &env, Some(process)) {
                    let runs = shell::calls_in(&exec.argv, env.known(), files.clone());
                    let script_at = script_at(w.object, &exec);
                    for call in &runs.calls {
                        let Some(program) = call.program() else {
                            continue;
                        };
                        // Where the script moved it, and the PATH it gave it.
                        let (path, cwd) = (
                            call.scope.path_over(lookup.path),
                            call.scope.cwd_over(lookup.cwd),
                        );
                        let lookup = Lookup {
                            path: &path,
                            cwd: &cwd,
                        };
                        let at = if call.in_script {
                            call_at(ctx.site, &script_location(&mounts, call, &script_at), call)
                        } else {
                            exec_location(w.object, &exec)
                        };
                        // Bash's alone (a builtin, an option, a syntax) in
                        // the script of `sh`: fine if the image's `sh` is
                        // bash; under dash it fails, unless a program of
                        // that name is on the PATH (`time`).
                        if let Some(shell) = &call.bash_only {
                            let dash = platform
                                .may_execute(shell, lookup, uid, &gids)
                                .is_ok_and(|c| shell::base_name(&c.target) == "dash");
                            let a_program =
                                platform.may_execute(program, lookup, uid, &gids).is_ok();
                            if dash && !a_program {
                                out.push(
                                    Diagnostic::new(
                                        rule::PROBE_COMMAND_MISSING,
                                        format!(
                                            "container `{}` runs `{program}` ({}), which only bash has, and `{shell}` in image {}:{version} for {} is dash: dash fails there (`not found`, `Illegal option` or `Syntax error`) and the script does not do its work",
                                            c.name,
                                            in_script(exec.what, call),
                                            ctx.site.config.image.name,
                                            platform.name()
                                        ),
                                    )
                                    .at(at)
                                    .help(
                                        "write it for a POSIX shell (`[ … ]` for `[[ … ]]`, `.` for `source`, no arrays, no `-o pipefail`, `>file 2>&1` for `&>file`), or run the script with `bash -c` if the image has bash",
                                    ),
                                );
                            }
                            continue;
                        }
                        // The program, and the script file a shell given one
                        // (`sh /probe.sh`) must read.
                        let file = shell::script_file(call);
                        // Not found where the script may have moved it
                        // (`cd "$DIR"`, `PATH=$HOME/bin:$PATH`): not known
                        // to be missing.
                        let not_found = |why: &CommandError| matches!(why, CommandError::NotFound);
                        let on_unknown_path = path_unknown
                            && call
                                .scope
                                .path
                                .as_deref()
                                .is_none_or(|p| p.contains("$PATH"));
                        let hidden = |name: &str, why: &CommandError| {
                            not_found(why)
                                && (call.scope.may_hide(name)
                                    || (on_unknown_path && !name.contains('/')))
                        };
                        let who = (uid, &gids[..]);
                        // The main process runs before it writes to its
                        // volumes; a probe or a hook after.
                        let at_start = exec.what == "command" && !call.in_script;
                        let here = |p: &str, read| {
                            run_here(platform, (&mounts, at_start), p, lookup, who, read)
                        };
                        let why = match here(program, false) {
                            Ok(()) => file.and_then(|f| {
                                let why = here(f, true).err()?;
                                // A file is read from the folder, never on PATH.
                                let from_folder = if f.starts_with('/') {
                                    f.to_string()
                                } else {
                                    format!("./{f}")
                                };
                                (!hidden(&from_folder, &why)).then(|| CommandError::ScriptFile {
                                    file: f.to_string(),
                                    why: Box::new(why),
                                })
                            }),
                            // Asked for first (`command -v X || exit 0`):
                            // its absence is provided for.
                            Err(why) if call.guarded && not_found(&why) => None,

                            Err(why) => (!hidden(program, &why)).then_some(why),
                        };
                        let Some(why) = why else {
                            continue;
                        };
                        let mut d = missing(
                            ctx,
                            (version, platform, image),
                            (program, exec.what, &c.name, call),
                            (uid, lookup),
                            &why,
                            at,
                        );
                        let looked_for = match &why {
                            CommandError::ScriptFile { file, .. } => file.as_str(),
                            _ => program,
                        };
                        if let Some((why, help)) =
                            absent_from(&mounts, looked_for, lookup, at_start)
                        {
                            d.message = format!("{}; {why}", d.message);
                            d = d.help(help);
                        }
                        out.push(d);
                    }
                }
            }
        }
    }
    out
}

/// Whether `uid`/`gids` may run `program` (or, `read`, read the script
/// file a shell is given) in the container: the files of its volumes
/// (a ConfigMap's keys, with their mode and `#!` line) over the image's.
fn run_here(
    platform: &Platform,
    (mounts, at_start): (&Mounts, bool),
    program: &str,
    lookup: Lookup,
    (uid, gids): (u32, &[u32]),
    read: bool,
) -> Result<(), CommandError> {
    let file_verdict = |path: &str, m: Mounted| match m {
        Mounted::Unknown => Ok(()),
        Mounted::Absent { .. } => Err(CommandError::NotFound),
        Mounted::File {
            mode,
            gid,
            text,
            from,
        } => {
            let entry = Entry {
                kind: Kind::File,
                mode,
                uid: 0,
                gid,
                size: 0,
                link: None,
                shebang: text
                    .as_deref()
                    .and_then(|t| crate::oci::shebang(t.as_bytes())),
                elf: None,
            };
            let path = format!("{path} ({from})");
            if read {
                return match can_read(&entry, uid, gids) {
                    true => Ok(()),
                    false => Err(CommandError::NotReadable { path, entry }),
                };
            }
            if !can_execute(&entry, uid, gids) {
                return Err(CommandError::NotExecutable { path, entry });
            }
            // A script: the kernel runs its `#!` interpreter from the
            // image, which must be able to read it; the same rules as for
            // a script of the image.
            let command = crate::oci::Command {
                path: path.clone(),
                target: path,
                entry: &entry,
            };
            platform.file_runs(&command, lookup, uid, gids)
        }
    };
    // What the image finds may lie, through its links, under a volume
    // (`/usr/local/bin/tool` a link into `/app/bin`, where a volume is
    // mounted): the volume's file is what runs.
    let image = |program: &str, lookup: Lookup| match read {
        true => platform.may_read(program, lookup, uid, gids),
        false => platform
            .may_execute(program, lookup, uid, gids)
            .and_then(|c| match mounts.at(&c.target, at_start) {
                Some(m) if c.target != absolute(program, lookup.cwd) => file_verdict(&c.target, m),
                _ => Ok(()),
            }),
    };
    if mounts.is_empty() {
        return image(program, lookup);
    }
    if program.contains('/') || read {
        let path = absolute(program, lookup.cwd);
        return match mounts.at(&path, at_start) {
            Some(m) => file_verdict(&path, m),
            None => image(program, lookup),
        };
    }
    // A name: the first folder of PATH that has it, a volume's or the
    // image's.
    let dirs: Vec<String> = lookup
        .path
        .split(':')
        .map(|d| absolute(d, lookup.cwd))
        .collect();
    if dirs
        .iter()
        .all(|d| mounts.at(&format!("{d}/{program}"), at_start).is_none())
    {
        return image(program, lookup);
    }
    for dir in &dirs {
        let path = format!("{}/{program}", dir.trim_end_matches('/'));
        match mounts.at(&path, at_start) {
            Some(Mounted::Absent { .. }) => continue,
            Some(m) => return file_verdict(&path, m),
            None => match image(
                program,
                Lookup {
                    path: dir,
                    cwd: lookup.cwd,
                },
            ) {
                Err(CommandError::NotFound) => continue,
                verdict => return verdict,
            },
        }
    }
    Err(CommandError::NotFound)
}

/// Which volume lacks `program`, when one that the build knows covers
/// where it is looked for.
fn absent_from(
    mounts: &Mounts,
    program: &str,
    lookup: Lookup,
    at_start: bool,
) -> Option<(String, &'static str)> {
    match mounts.at(&absolute(program, lookup.cwd), at_start) {
        Some(Mounted::Absent { why, help }) if program.contains('/') => Some((why, help)),
        _ => None,
    }
}

/// The finding of a command the image does not let the container run.
fn missing(
    ctx: &Context,
    (version, platform, image): (&Version, &Platform, &Image),
    (program, what, container, call): (&str, &str, &str, &shell::Call),
    (uid, lookup): (u32, Lookup),
    why: &CommandError,
    at: Location,
) -> Diagnostic {
    // The digest last: a long reason is worth more than its tail.
    let digest = image
        .digest
        .as_deref()
        .map(|d| format!(" (image {d})"))
        .unwrap_or_default();
    let reason = reason(why, uid, lookup, program);
    let how = match call.in_script {
        true => format!("`{program}` ({})", in_script(what, call)),
        false => format!("`{program}` ({what})"),
    };
    let nearest = nearest_with(&ctx.site.images, version, program);
    let help = match &nearest {
        Some(v) => format!(
            "the image data gives it to release {v}: publish this base for a release whose image has it, or call a command that the {version} image has"
        ),
        None if names_it(&ctx.site.images, version, program) => format!(
            "the image data gives `{}` to {version}, so the image has it under another path or mode: call it by the path the image has it at, or fix the container's PATH, folder or user",
            shell::base_name(program)
        ),
        None => format!("call a command that the {version} image has"),
    };
    Diagnostic::new(
        rule::PROBE_COMMAND_MISSING,
        format!(
            "container `{container}` runs {how}, which image {}:{version} for {} cannot run: {reason}{digest}",
            ctx.site.config.image.name,
            platform.name()
        ),
    )
    .at(at)
    .help(help)
}

/// Why `uid` may not run `program` looked up as `lookup`, in words.
fn reason(why: &CommandError, uid: u32, lookup: Lookup, program: &str) -> String {
    match why {
        CommandError::NotFound if program.starts_with('/') => "no such file".to_string(),
        CommandError::NotFound if program.contains('/') => {
            format!("no such file (from the folder {})", lookup.cwd)
        }
        CommandError::NotFound => format!("no such file on its PATH ({})", lookup.path),
        CommandError::NotExecutable { path, entry } => format!(
            "{path} (mode {:o}, owner {}:{}) may not be executed by uid {uid}",
            entry.mode & 0o7777,
            entry.uid,
            entry.gid
        ),
        CommandError::NotReadable { path, entry } => format!(
            "{path} (mode {:o}, owner {}:{}) may not be read by uid {uid}",
            entry.mode & 0o7777,
            entry.uid,
            entry.gid
        ),
        CommandError::SearchDenied { path, dir } => {
            format!("uid {uid} may not enter {dir} to reach {path}")
        }
        CommandError::ScriptFile { file, why } => format!(
            "the shell cannot read its script {file}: {}",
            reason(why, uid, lookup, file)
        ),
        CommandError::Loader {
            program,
            loader,
            why,
        } => format!(
            "{program} is a program started by the loader {loader}, which cannot run: {} (a program built against another C library, such as musl in a glibc image, fails so: `no such file or directory`)",
            reason(why, uid, lookup, loader)
        ),
        CommandError::Architecture { program, built_for } => format!(
            "{program} is built for {built_for}: the kernel refuses it (`exec format error`)"
        ),
        CommandError::Interpreter {
            script,
            line,
            program,
            why,
        } => format!(
            "{script} is a script for `#!{line}`, and `{program}` cannot run: {}",
            reason(why, uid, lookup, program)
        ),
    }
}

/// The image data and the image agree: each command the data file gives
/// the release is in the image, and the user, the ports and the
/// environment defaults are the image's; the image's version label is the
/// base's version.
pub fn agreement(ctx: &Context, subject: &Subject) -> Vec<Diagnostic> {
    let Some(image) = ctx.image(&subject.base.version) else {
        return Vec::new();
    };
    let data = &ctx.site.images;
    let version = &subject.base.version;
    let data_file = ctx.site.config.image.releases.clone();
    let name = &ctx.site.config.image.name;
    let mut out = Vec::new();
    let mismatch = |what: String| {
        Diagnostic::new(rule::IMAGE_DATA_MISMATCH, what)
            .in_file(&data_file)
            .help(format!(
                "correct {} for {version} (`basepress image inspect` shows what the image has), or check that the source has the right image",
                data_file.display()
            ))
    };
    for platform in &image.platforms {
        let on = format!("{name}:{version} for {}", platform.name());
        for fact in data.commands_at(version) {
            if platform.find_command(&fact.name).is_none() {
                out.push(mismatch(format!(
                    "the image data says release {version} has command `{}`, but image {on} has no such file on its PATH",
                    fact.name
                )));
            }
        }
        if let Some(u) = data.user_at(version) {
            match &platform.user {
                Some(iu) if i64::from(iu.uid) != u.uid || i64::from(iu.gid) != u.gid => {
                    out.push(mismatch(format!(
                        "the image data says release {version} runs as `{}` ({}:{}), but image {on} runs as {}:{}{}",
                        u.name,
                        u.uid,
                        u.gid,
                        iu.uid,
                        iu.gid,
                        iu.name.as_deref().map(|n| format!(" (`{n}`)")).unwrap_or_default()
                    )));
                }
                None => out.push(mismatch(format!(
                    "the image data says release {version} runs as `{}` ({}), but the user of image {on} does not resolve{}",
                    u.name,
                    u.uid,
                    platform
                        .user_error
                        .as_deref()
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default()
                ))),
                _ => {}
            }
        }
        if let Some(listen) = data.ports_at(version) {
            let exposed = platform.config.ports();
            let mut said = listen.to_vec();
            said.sort_unstable();
            if exposed.iter().any(|p| !said.contains(p)) {
                out.push(mismatch(format!(
                    "the image data says release {version} listens on {:?}, but image {on} exposes {:?}",
                    said, exposed
                )));
            }
        }
        for fact in data.env_at(version) {
            let (Some(default), Some(set)) =
                (fact.default.as_deref(), platform.config.env_var(&fact.key))
            else {
                continue;
            };
            if default != set {
                out.push(mismatch(format!(
                    "the image data gives {} the default `{default}` in release {version}, but image {on} sets {}={set}",
                    fact.key, fact.key
                )));
            }
        }
        if let Some(label) = platform.config.version_label() {
            let same = label.trim_start_matches('v') == version.to_string();
            if !same {
                out.push(
                    Diagnostic::new(
                        rule::IMAGE_VERSION_MISMATCH,
                        format!(
                            "base {} reads image {on}, whose label org.opencontainers.image.version is `{label}`",
                            subject.base.folder()
                        ),
                    )
                    .in_file(&subject.base.dir)
                    .help("tag each release's image with its own version, or fix the source"),
                );
            }
        }
    }
    out
}
