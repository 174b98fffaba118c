//! The `kubectl` commands a page shows against the base it documents: a
//! command that names an object of the base (`statefulset/whystack-agent`,
//! the pod `whystack-agent-0`) must look for it in the base's namespace,
//! by a name the base gives it, and name one of its containers with
//! `-c`. Run as written, such a command otherwise answers `not found`.

use std::collections::BTreeSet;

use super::docs::documented_version;
use super::{shell, Context};
use crate::diagnostics::{closest, rule, Diagnostic, Location, Severity};
use crate::kustomize::Object;
use crate::model::document::{CodeBlock, Document};
use crate::model::images::Args;
use crate::model::site::Site;

/// Languages of the blocks that hold scripts to copy: a `#` starts a
/// comment, also at a line's start.
const SCRIPTS: &[&str] = &[
    "sh",
    "bash",
    "shell",
    "zsh",
    "ksh",
    "fish",
    "powershell",
    "pwsh",
    "ps1",
    "cmd",
    "bat",
    "batch",
];

/// Languages of the blocks that show a terminal session, or nothing said:
/// a `#` at a line's start is root's prompt. An indented block, and a
/// fence without a language, render as code a reader copies too.
const SESSIONS: &[&str] = &[
    "console",
    "shell-session",
    "shellsession",
    "sh-session",
    "terminal",
    "",
    "text",
    "txt",
    "plaintext",
];

/// Subcommands whose arguments name objects of the current namespace.
const NAMING: &[&str] = &[
    "annotate",
    "attach",
    "delete",
    "describe",
    "edit",
    "exec",
    "get",
    "label",
    "logs",
    "patch",
    "port-forward",
    "rollout",
    "scale",
    "set",
    "top",
    "wait",
];

/// Options of kubectl that take the next word as their value: every
/// global option that does (`kubectl options`), and those of the
/// subcommands a page runs on the base's objects.
const VALUED: &[&str] = &[
    // Global.
    "-n",
    "--namespace",
    "--as",
    "--as-group",
    "--as-uid",
    "--cache-dir",
    "--certificate-authority",
    "--client-certificate",
    "--client-key",
    "--cluster",
    "--context",
    "--kubeconfig",
    "--log-flush-frequency",
    "--password",
    "--profile",
    "--profile-output",
    "--request-timeout",
    "-s",
    "--server",
    "--tls-server-name",
    "--token",
    "--user",
    "--username",
    "-v",
    "--v",
    "--vmodule",
    // Of subcommands.
    "-c",
    "--container",
    "-l",
    "--selector",
    "--field-selector",
    "-o",
    "--output",
    "--template",
    "--sort-by",
    "-f",
    "--filename",
    "-k",
    "--kustomize",
    "--since",
    "--since-time",
    "--tail",
    "--limit-bytes",
    "--max-log-requests",
    "--pod-running-timeout",
    "--for",
    "--timeout",
    "--grace-period",
    "--replicas",
    "--current-replicas",
    "--resource-version",
    "-p",
    "--patch",
    "--patch-file",
    "--type",
    "--subresource",
    "-e",
    "--env",
    "--from",
    "--image",
    "--target",
    "--address",
    "--field-manager",
    "-L",
    "--label-columns",
    "--chunk-size",
];

/// Kinds by the names kubectl takes for them, alone or with their API
/// group (`statefulsets.apps`, `statefulsets.v1.apps`).
fn kind_of(word: &str) -> Option<&'static str> {
    let (name, group) = word.split_once('.').unwrap_or((word, ""));
    let (kind, own) = match name.to_ascii_lowercase().as_str() {
        "po" | "pod" | "pods" => ("Pod", ""),
        "sts" | "statefulset" | "statefulsets" => ("StatefulSet", "apps"),
        "deploy" | "deployment" | "deployments" => ("Deployment", "apps"),
        "ds" | "daemonset" | "daemonsets" => ("DaemonSet", "apps"),
        "rs" | "replicaset" | "replicasets" => ("ReplicaSet", "apps"),
        "job" | "jobs" => ("Job", "batch"),
        "cj" | "cronjob" | "cronjobs" => ("CronJob", "batch"),
        "svc" | "service" | "services" => ("Service", ""),
        "cm" | "configmap" | "configmaps" => ("ConfigMap", ""),
        "secret" | "secrets" => ("Secret", ""),
        "pvc" | "persistentvolumeclaim" | "persistentvolumeclaims" => ("PersistentVolumeClaim", ""),
        "sa" | "serviceaccount" | "serviceaccounts" => ("ServiceAccount", ""),
        "netpol" | "networkpolicy" | "networkpolicies" => ("NetworkPolicy", "networking.k8s.io"),
        "pdb" | "poddisruptionbudget" | "poddisruptionbudgets" => ("PodDisruptionBudget", "policy"),
        _ => return None,
    };
    // The group, maybe after a version (`v1.apps`); the core group's
    // kinds take none.
    let versioned = group
        .split_once('.')
        .is_some_and(|(v, g)| v.starts_with('v') && g == own);
    (group.is_empty() || (!own.is_empty() && (group == own || versioned))).then_some(kind)
}

/// Kinds whose pods `kubectl logs`, `exec` and `attach` reach through the
/// object (`kubectl logs statefulset/NAME` picks one of its pods).
const RUNS_PODS: &[&str] = &[
    "StatefulSet",
    "Deployment",
    "DaemonSet",
    "ReplicaSet",
    "Job",
];

/// The containers (and init containers) of a workload's pod template.
fn containers_of(o: &Object) -> Vec<String> {
    let spec = match o.kind() {
        "CronJob" => &o.value["spec"]["jobTemplate"]["spec"]["template"]["spec"],
        _ => &o.value["spec"]["template"]["spec"],
    };
    ["containers", "initContainers"]
        .iter()
        .flat_map(|f| spec[f].as_array().into_iter().flatten())
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect()
}

/// A pod the base runs: a StatefulSet's `NAME-N`, with its containers.
struct Pod<'a> {
    name: String,
    namespace: Option<&'a str>,
    containers: Vec<String>,
}

/// What the overlay a page shows does to the base's names: its
/// `namespace`, `namePrefix` and `nameSuffix`.
#[derive(Default)]
struct Moves {
    namespace: Option<String>,
    prefix: String,
    suffix: String,
    /// It adds labels (`labels`, `commonLabels`): the pods' are not only
    /// the base's.
    labels: bool,
    /// A page shows it: its patches may rename what the pods refer to.
    shown: bool,
}

impl Moves {
    /// The moves of the page's overlays (its `file=kustomization.yaml`
    /// blocks), each with its tab; none moves nothing.
    fn of(doc: &crate::model::document::Document) -> Vec<(Option<&str>, Moves)> {
        let mut out: Vec<(Option<&str>, Moves)> = Vec::new();
        for block in doc
            .code_blocks
            .iter()
            .filter(|b| super::overlays::is_kustomization(b))
        {
            let tab = block.attr("tab");
            if out.iter().any(|(t, _)| *t == tab) {
                continue;
            }
            let value = crate::yaml::documents(&block.code)
                .ok()
                .and_then(|docs| docs.into_iter().next())
                .unwrap_or_default();
            let text = |k: &str| value[k].as_str().unwrap_or_default().to_string();
            let moves = Moves {
                namespace: Some(text("namespace")).filter(|n| !n.is_empty()),
                prefix: text("namePrefix"),
                suffix: text("nameSuffix"),
                labels: !value["labels"].is_null() || !value["commonLabels"].is_null(),
                shown: true,
            };
            out.push((tab, moves));
        }
        if out.is_empty() {
            out.push((None, Moves::default()));
        }
        out
    }

    fn name(&self, name: &str) -> String {
        format!("{}{name}{}", self.prefix, self.suffix)
    }

    /// Where an object of namespace `namespace` lands: the overlay's
    /// namespace sets every namespaced object's.
    fn namespace<'a>(&'a self, namespace: Option<&'a str>) -> Option<&'a str> {
        self.namespace.as_deref().or(namespace)
    }
}

/// The pods the base's StatefulSets run, one per replica.
fn pods<'o>(objects: &'o [Object], moves: &'o Moves) -> Vec<Pod<'o>> {
    let mut out = Vec::new();
    for o in objects.iter().filter(|o| o.kind() == "StatefulSet") {
        let replicas = o.value["spec"]["replicas"].as_u64().unwrap_or(1).min(64);
        let containers = containers_of(o);
        for n in 0..replicas {
            out.push(Pod {
                name: format!("{}-{n}", moves.name(o.name())),
                namespace: moves.namespace(o.namespace()),
                containers: containers.clone(),
            });
        }
    }
    out
}

/// One `kubectl` command line of a block, read: where each word is (its
/// column in the line), the namespace it names, the subcommand and the
/// words after it.
struct Command<'l> {
    words: Vec<(usize, &'l str)>,
}

/// Words that run the command after them (after their own options):
/// `sudo kubectl …`, `watch -n 5 kubectl …`, `env KUBECONFIG=x kubectl …`.
/// Each with its options that take a value.
const WRAPPERS: &[(&str, &[&str])] = &[
    (
        "sudo",
        &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"],
    ),
    ("env", &["-u", "-C", "-S"]),
    ("watch", &["-n", "--interval", "-q"]),
    ("time", &[]),
    ("command", &[]),
    ("exec", &[]),
    ("nohup", &[]),
    ("nice", &["-n"]),
];

/// Words at the start of a line that are a prompt, not a command.
const PROMPTS: &[&str] = &["$", "#", "%", "PS>", ">"];

impl<'l> Command<'l> {
    /// The `kubectl` commands of a line as the shell reads it: each simple
    /// command of its lists and pipelines (`a && kubectl …`, `x; kubectl
    /// …`, `… | kubectl …`, `$(kubectl …)`), after a prompt (`$ `, `PS> `)
    /// at the start, and after the variable assignments and the wrappers
    /// before it (`KUBECONFIG=k sudo -E kubectl …`). A `#` starting a word
    /// begins a comment; at the line's start, in a `session`, it is root's
    /// prompt.
    fn read_all(line: &'l str, session: bool) -> Vec<Command<'l>> {
        let mut out = Vec::new();
        let mut words = Vec::new();
        for token in tokens(line, session) {
            match token {
                Token::Word(at, w) => words.push((at, w)),
                Token::Operator => {
                    out.extend(Command::simple(std::mem::take(&mut words)));
                }
            }
        }
        out.extend(Command::simple(words));
        out
    }

    /// One simple command's words, if it runs `kubectl`.
    fn simple(mut words: Vec<(usize, &'l str)>) -> Option<Command<'l>> {
        let mut skip = 0;
        while let Some(&(_, w)) = words.get(skip) {
            let assignment = w.split_once('=').is_some_and(|(name, _)| {
                !name.is_empty()
                    && !name.starts_with(|c: char| c.is_ascii_digit())
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            });
            if assignment {
                skip += 1;
                continue;
            }
            let Some((_, valued)) = WRAPPERS.iter().find(|(name, _)| *name == w) else {
                break;
            };
            skip += 1;
            // The wrapper's options, and their values.
            while let Some(&(_, option)) = words.get(skip) {
                if option == "--" {
                    skip += 1;
                    break;
                }
                if !option.starts_with('-') {
                    break;
                }
                skip += if valued.contains(&option) { 2 } else { 1 };
            }
        }
        words.drain(..skip.min(words.len()));
        let program = words.first()?.1;
        let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
        matches!(name, "kubectl" | "kubectl.exe").then_some(Command { words })
    }

    /// The value of option `short`/`long` (`-n X`, `-nX`, `--namespace=X`,
    /// `--namespace X`), with its column.
    fn option(&self, short: &str, long: &str) -> Option<(usize, &'l str)> {
        let mut words = self.words.iter();
        while let Some(&(at, w)) = words.next() {
            if w == "--" {
                break;
            }
            if w == short || w == long {
                return words.next().copied();
            }
            if let Some(v) = w.strip_prefix(&format!("{long}=")) {
                return Some((at + long.len() + 1, v));
            }
            if let Some(v) = w
                .strip_prefix(short)
                .filter(|v| !v.is_empty() && !w.starts_with("--"))
            {
                // `-nX`, and `-n=X` as pflag reads it.
                return Some(match v.strip_prefix('=') {
                    Some(v) => (at + short.len() + 1, v),
                    None => (at + short.len(), v),
                });
            }
        }
        None
    }

    /// The words that are not options (nor their values), before `--`.
    /// For `kubectl logs`, `-f` and `-p` are `--follow` and `--previous`,
    /// and take no value; no option takes a word that is an option.
    fn operands(&self) -> Vec<(usize, &'l str)> {
        let logs = self.words.iter().any(|(_, w)| *w == "logs");
        let flag = |w: &str| logs && matches!(w, "-f" | "-p");
        let mut out = Vec::new();
        let mut words = self.words.iter().skip(1).peekable();
        while let Some(&(at, w)) = words.next() {
            if w == "--" {
                break;
            }
            if VALUED.contains(&w) && !flag(w) {
                words.next_if(|(_, next)| !next.starts_with('-'));
            } else if !w.starts_with('-') {
                out.push((at, w));
            }
        }
        out
    }
}

/// A word of a line (its column in characters and its text, without
/// the quotes around it), or what ends a simple command.
enum Token<'l> {
    Word(usize, &'l str),
    Operator,
}

/// The words and command separators of `line`, as the shell splits them:
/// at blanks outside quotes, and at `;`, `&`, `|`, `(`, `)` and a
/// backquote, which end a simple command (`$(` too: its `$` is no word).
/// A prompt at the start of the line is dropped; `#` is one only in a
/// `session`.
fn tokens<'l>(line: &'l str, session: bool) -> Vec<Token<'l>> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None;
    let mut quote: Option<char> = None;
    let push = |out: &mut Vec<Token<'l>>, (at, from): (usize, usize), to: usize| {
        let word = &line[from..to];
        let trimmed = word.trim_start_matches(['"', '\'']);
        let at = at + (word.len() - trimmed.len());
        let trimmed = trimmed.trim_end_matches(['"', '\'']);
        if trimmed != "$" {
            out.push(Token::Word(at, trimmed));
        }
    };
    for (column, (i, c)) in line.char_indices().enumerate() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                start.get_or_insert((column, i));
            }
            None if c == ' ' || c == '\t' => {
                if let Some(s) = start.take() {
                    push(&mut out, s, i);
                }
            }
            // `2>&1`, `<&3`: a redirection, not a background command.
            None if c == '&' && line[..i].ends_with(['>', '<']) => {
                start.get_or_insert((column, i));
            }
            None if matches!(c, ';' | '&' | '|' | '(' | ')' | '`') => {
                if let Some(s) = start.take() {
                    push(&mut out, s, i);
                }
                out.push(Token::Operator);
            }
            None if c == '#' && start.is_none() && (!session || !out.is_empty()) => break,
            None => {
                start.get_or_insert((column, i));
            }
        }
    }
    if let Some(s) = start {
        push(&mut out, s, line.len());
    }
    // The prompt: its words before the first command.
    let prompt = out
        .iter()
        .take_while(|t| matches!(t, Token::Word(_, w) if PROMPTS.contains(w)))
        .count();
    out.drain(..prompt);
    out
}

/// The `kubectl` commands of the shell blocks of page `i`, against the
/// objects of the base it documents.
pub fn check_page(ctx: &Context, i: usize) -> Vec<Diagnostic> {
    let site = ctx.site;
    let (Some(page), Some(doc)) = (site.pages.get(i), ctx.analysis.docs.get(i)) else {
        return Vec::new();
    };
    let mut out = signature_checks(site, page, doc);
    let version = documented_version(site, page);
    // The base the page documents, built, and how its overlays move it.
    let on_base = version
        .and_then(|v| site.bases.iter().position(|b| &b.version == v))
        .and_then(|b| Some((site.bases[b].folder(), ctx.analysis.built.get(b)?.as_ref()?)));
    let overlays = match on_base {
        Some(_) => Moves::of(doc),
        None => Vec::new(),
    };
    let views: Vec<(Option<&str>, View)> = match &on_base {
        Some((_, built)) => overlays
            .iter()
            .map(|(tab, moves)| (*tab, View::new(&built.objects, moves)))
            .collect(),
        None => Vec::new(),
    };
    // Every command of the page once, through each check.
    each_command(doc, |block, n, command| {
        let at =
            |column: usize| Location::at(&page.source, block.line + n, column + 1 + block.indent);
        if let Some((folder, built)) = &on_base {
            base_command(
                command,
                (&built.objects, &views),
                folder,
                block,
                at,
                &mut out,
            );
        }
        if let Some(version) = version {
            image_command(site, version, command, at, &mut out);
        }
        apply_from_the_site(&ctx.analysis.index, command, at, &mut out);
    });
    out
}

/// `kubectl apply` of the site's own base URLs, which a reader cannot use
/// as written: `-k` takes a folder or a Git repository, never a base
/// served over HTTP(S) (`kubectl` reads no files.txt), and `-f` of one
/// file of a base applies it unbuilt (no namespace, no generated
/// ConfigMap, no image pin of the overlay).
fn apply_from_the_site(
    index: &crate::analyze::links::LinkIndex,
    command: &Command,
    at: impl Fn(usize) -> Location,
    out: &mut Vec<Diagnostic>,
) {
    let verb = command.operands().first().map(|o| o.1);
    if !matches!(verb, Some("apply" | "create" | "replace" | "diff")) {
        return;
    }
    for (flag, long) in [("-k", "--kustomize"), ("-f", "--filename")] {
        let Some((col, url)) = command.option(flag, long) else {
            continue;
        };
        let Some(path) = index.own_path(url) else {
            continue;
        };
        let below = path
            .split_once(crate::model::layout::KUBERNETES_DIR)
            .map(|(_, rest)| rest);
        let Some(rest) = below.filter(|r| r.contains("/base")) else {
            continue;
        };
        let why = match flag {
            "-k" => "`kubectl apply -k` builds a folder or a Git repository, and cannot fetch a base over HTTP(S): the command fails",
            _ if rest.ends_with(".yaml") || rest.ends_with(".yml") => {
                "it applies one file of the base as it is, unbuilt: without the namespace, the generated ConfigMaps and the image pin the build and the overlay give it"
            }
            _ => continue,
        };
        out.push(
            Diagnostic::new(
                rule::DOC_COMMAND_MISMATCH,
                format!("`kubectl {flag} {url}`: {why}"),
            )
            .at(at(col))
            .help("download the base with its files.txt loop, then `kubectl apply -k` the overlay folder that names it"),
        );
    }
}

/// The `ssh-keygen -Y verify` commands of a page's shell blocks pass the
/// signer identity (`-I`) and the namespace (`-n NAMESPACE/vX.Y.Z`) that
/// site.yaml's `signing` signs with: any other fails for every reader who
/// copies it.
fn signature_checks(
    site: &crate::model::site::Site,
    page: &crate::model::site::Page,
    doc: &crate::model::document::Document,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(signing) = &site.config.signing else {
        return out;
    };
    for block in doc
        .code_blocks
        .iter()
        .filter(|b| b.code.contains("ssh-keygen"))
    {
        let session = SESSIONS.contains(&block.lang.as_str());
        if !session && !SCRIPTS.contains(&block.lang.as_str()) {
            continue;
        }
        for (n, line) in logical_lines(&block.code) {
            let words: Vec<(usize, &str)> = tokens(&line, session)
                .into_iter()
                .filter_map(|t| match t {
                    Token::Word(at, w) => Some((at, w)),
                    Token::Operator => None,
                })
                .collect();
            let verifies = words.windows(3).any(|w| {
                w[0].1.rsplit('/').next() == Some("ssh-keygen")
                    && w[1].1 == "-Y"
                    && w[2].1 == "verify"
            });
            if !verifies {
                continue;
            }
            let value = |option: &str| {
                words
                    .windows(2)
                    .find(|w| w[0].1 == option)
                    .map(|w| w[1])
                    // A value from a variable is the reader's.
                    .filter(|(_, v)| !v.starts_with('$'))
            };
            let at = |column: usize| {
                Location::at(&page.source, block.line + n, column + 1 + block.indent)
            };
            if let Some((c, identity)) = value("-I").filter(|(_, v)| *v != signing.identity) {
                out.push(
                    Diagnostic::new(
                        rule::DOC_COMMAND_MISMATCH,
                        format!(
                            "the signature check passes `-I {identity}`, and the releases are signed by `{}` (site.yaml's `signing.identity`): it fails for every reader",
                            signing.identity
                        ),
                    )
                    .at(at(c))
                    .help(format!("write `-I {}`", signing.identity)),
                );
            }
            let prefix = format!("{}/v", signing.namespace);
            if let Some((c, namespace)) = value("-n").filter(|(_, v)| !v.starts_with(&prefix)) {
                out.push(
                    Diagnostic::new(
                        rule::DOC_COMMAND_MISMATCH,
                        format!(
                            "the signature check passes `-n {namespace}`, and version vX.Y.Z is signed in `{prefix}X.Y.Z` (site.yaml's `signing.namespace`): it fails for every reader"
                        ),
                    )
                    .at(at(c))
                    .help(format!("write `-n \"{prefix}${{VERSION#v}}\"`")),
                );
            }
        }
    }
    out
}

/// A command on the base the page documents, through the overlay its
/// page shows: a block in a tab runs on its tab's overlay, else on the
/// one in no tab; a block in no tab on any of them, and is wrong only
/// when it is wrong on each.
fn base_command(
    command: &Command,
    (objects, views): (&[Object], &[(Option<&str>, View)]),
    folder: &str,
    block: &CodeBlock,
    at: impl Fn(usize) -> Location + Copy,
    out: &mut Vec<Diagnostic>,
) {
    let tab = block.attr("tab");
    let own: Vec<&View> = views
        .iter()
        .filter(|(t, _)| tab.is_some() && *t == tab)
        .chain(views.iter().filter(|(t, _)| t.is_none()))
        .map(|(_, v)| v)
        .take(1)
        .collect();
    let candidates: Vec<&View> = match own.is_empty() {
        false => own,
        true => views.iter().map(|(_, v)| v).collect(),
    };
    let mut first: Option<Vec<Diagnostic>> = None;
    for view in &candidates {
        let mut found = Vec::new();
        check_command(command, (objects, view), folder, at, &mut found);
        if found.is_empty() {
            first = Some(found);
            break;
        }
        first.get_or_insert(found);
    }
    out.extend(first.into_iter().flatten());
}

/// Every `kubectl` command of a page's code, with its block and the row
/// of its line in the block.
fn each_command(doc: &Document, mut f: impl FnMut(&CodeBlock, usize, &Command)) {
    for block in &doc.code_blocks {
        let session = SESSIONS.contains(&block.lang.as_str());
        if !session && !SCRIPTS.contains(&block.lang.as_str()) {
            continue;
        }
        for (n, line) in logical_lines(&block.code) {
            for command in Command::read_all(&line, session) {
                f(block, n, &command);
            }
        }
    }
}

/// What `kubectl exec … -- CMD` runs in a container, against the image of
/// the release the page documents: a command the image data gives to some
/// release must be in this one, and take these arguments. (What the data
/// does not list, `ls`, `cat`, is left alone.)
fn image_command(
    site: &Site,
    version: &semver::Version,
    command: &Command,
    at: impl Fn(usize) -> Location,
    out: &mut Vec<Diagnostic>,
) {
    if command.operands().first().map(|o| o.1) != Some("exec") {
        return;
    }
    let Some(dashes) = command.words.iter().position(|(_, w)| *w == "--") else {
        return;
    };
    let Some(&(col, _)) = command.words.get(dashes + 1) else {
        return;
    };
    let images = &site.images;
    let product = &site.config.image.name;
    let argv: Vec<Option<String>> = command.words[dashes + 1..]
        .iter()
        .map(|(_, w)| Some(w.to_string()))
        .collect();
    for call in shell::calls(&argv).calls {
        let Some(program) = call.program() else {
            continue;
        };
        let first = images
            .releases
            .iter()
            .find(|v| images.command_at(v, program).is_some());
        let Some(first) = first else {
            continue;
        };
        let Some(fact) = images.command_at(version, program) else {
            let when = match first > version {
                true => format!("the image has it from {first}"),
                false => format!("the image had it in {first}"),
            };
            out.push(
                Diagnostic::new(
                    rule::DOC_COMMAND_MISMATCH,
                    format!("`kubectl exec` runs `{program}`, which image {product}:{version}, the release this page documents, does not have: {when}"),
                )
                .at(at(col))
                .help(format!("show a command that {product}:{version} has, or move the command to the docs of {first}")),
            );
            continue;
        };
        let (Args::OneOf(lists), Some(args)) = (&fact.args, call.args()) else {
            continue;
        };
        if !lists
            .iter()
            .any(|l| l.iter().map(String::as_str).eq(args.iter().copied()))
        {
            let accepted: Vec<String> =
                lists.iter().map(|l| format!("`{}`", l.join(" "))).collect();
            out.push(
                Diagnostic::new(
                    rule::DOC_COMMAND_MISMATCH,
                    format!(
                        "`kubectl exec` runs `{program} {}`, which {product}:{version} does not accept: `{}` takes {}",
                        args.join(" "),
                        fact.name,
                        accepted.join(" or ")
                    ),
                )
                .at(at(col)),
            );
        }
    }
}

/// The base's objects as an overlay moves them: their pods and the
/// namespaces they are in.
struct View<'o> {
    moves: &'o Moves,
    pods: Vec<Pod<'o>>,
    namespaces: BTreeSet<&'o str>,
}

impl<'o> View<'o> {
    fn new(objects: &'o [Object], moves: &'o Moves) -> View<'o> {
        let mut namespaces: BTreeSet<&str> = objects
            .iter()
            .filter_map(|o| match o.kind() {
                "Namespace" => Some(o.name()),
                _ => o.namespace(),
            })
            .collect();
        if let Some(n) = &moves.namespace {
            namespaces.insert(n);
        }
        View {
            moves,
            pods: pods(objects, moves),
            namespaces,
        }
    }
}

/// The lines of a block as the shell reads them: a line ending in `\`
/// (or PowerShell's `` ` ``) goes on on the next; each with the row it
/// starts on (columns past its first row are approximate).
fn logical_lines(code: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut open = false;
    for (n, line) in code.lines().enumerate() {
        let trimmed = line.trim_end();
        let (text, more) = match trimmed.strip_suffix(['\\', '`']) {
            Some(t) => (t, true),
            None => (trimmed, false),
        };
        match out.last_mut() {
            Some((_, joined)) if open => {
                joined.push(' ');
                joined.push_str(text.trim_start());
            }
            _ => out.push((n, text.to_string())),
        }
        open = more;
    }
    out
}

fn check_command(
    command: &Command,
    (objects, view): (&[Object], &View),
    folder: &str,
    at: impl Fn(usize) -> Location,
    out: &mut Vec<Diagnostic>,
) {
    let View {
        moves,
        pods,
        namespaces,
    } = view;
    let operands = command.operands();
    let Some(&(_, verb)) = operands.first() else {
        return;
    };
    // Across every namespace (`-A`, `--all-namespaces[=true]`), any
    // namespace holds what it names.
    let everywhere = |w: &str| w == "-A" || w.starts_with("--all-namespaces");
    if command.words.iter().any(|(_, w)| everywhere(w)) {
        return;
    }
    let given = command.option("-n", "--namespace");
    // A namespace from a variable or a placeholder is the reader's.
    if given.is_some_and(|(_, g)| g.contains(['$', '`', '<', '{'])) {
        return;
    }
    // A near miss of the base's namespace (`whystack-agnet`), whatever
    // the command looks for there: nothing is in it.
    if let Some((c, g)) = given.filter(|(_, g)| !namespaces.contains(g)) {
        if let Some(near) = namespace_typo(g, namespaces) {
            out.push(
                Diagnostic::new(
                    rule::DOC_COMMAND_MISMATCH,
                    format!(
                        "`kubectl {verb}` looks in namespace `{g}`, which base {folder} does not make: did you mean `{near}`?"
                    ),
                )
                .at(at(c))
                .help(format!("write `-n {near}`")),
            );
            return;
        }
    }
    if verb == "create" {
        check_create(command, &operands, (objects, view), folder, &at, out);
        return;
    }
    // `-l SELECTOR` of pods, in the base's namespace: some pod of the base
    // must have those labels.
    let of_pods = verb == "logs" || operands.iter().skip(1).any(|o| kind_of(o.1) == Some("Pod"));
    let in_base = given.is_some_and(|(_, g)| namespaces.contains(g));
    if let (true, true, false, Some((c, selector))) = (
        of_pods,
        in_base,
        moves.labels,
        command.option("-l", "--selector"),
    ) {
        if let Some(why) = selects_no_pod(objects, selector) {
            out.push(
                Diagnostic::new(
                    rule::DOC_COMMAND_MISMATCH,
                    format!(
                        "`kubectl {verb} -l {selector}` selects no pod of base {folder}: {why}"
                    ),
                )
                .at(at(c))
                .help("select the pods by the labels the base gives them"),
            );
            return;
        }
    }
    if !NAMING.contains(&verb) {
        return;
    }
    // The object it names, of the base: `kind/name`, `kind name`, or a
    // pod by its name (logs, exec, port-forward, attach).
    let mut named: Option<(usize, &str, &str)> = None;
    let args = &operands[1..];
    for (i, &(col, word)) in args.iter().enumerate() {
        if let Some((kind, name)) = word.split_once('/') {
            if let Some(kind) = kind_of(kind) {
                named = Some((col + word.len() - name.len(), kind, name));
                break;
            }
        }
        if let Some(kind) = kind_of(word) {
            if let Some(&(c, name)) = args.get(i + 1) {
                named = Some((c, kind, name));
            }
            break;
        }
        if matches!(verb, "logs" | "exec" | "port-forward" | "attach") {
            named = Some((col, "Pod", word));
            break;
        }
    }
    let Some((col, kind, name)) = named else {
        return;
    };
    let name = name.split(':').next().unwrap_or(name);
    // Only the base's own objects are held to it: a command about another
    // pod or object of the cluster names what the base cannot know.
    let owner = |n: &str| -> Option<Option<&str>> {
        if kind == "Pod" {
            return pod_named(pods, n).map(|p| p.namespace);
        }
        if kind == "PersistentVolumeClaim" {
            if let Some(claim) = claims(objects, moves)
                .into_iter()
                .find(|c| claim_named(c, n))
            {
                return Some(claim.1);
            }
        }
        objects
            .iter()
            .find(|o| o.kind() == kind && moves.name(o.name()) == n)
            .map(|o| moves.namespace(o.namespace()))
    };
    let candidates: Vec<String> = match kind {
        "Pod" => pods.iter().map(|p| p.name.clone()).collect(),
        "PersistentVolumeClaim" => claims(objects, moves)
            .into_iter()
            .map(|(stem, _)| format!("{stem}0"))
            .collect(),
        _ => objects
            .iter()
            .filter(|o| o.kind() == kind)
            .map(|o| moves.name(o.name()))
            .collect(),
    };
    let candidates: Vec<&str> = candidates.iter().map(String::as_str).collect();
    let namespace = match owner(name) {
        Some(ns) => ns,
        None => {
            // A name the base gives an object of another kind, or gives
            // this kind with the hash of a generated object.
            // (`delete` may clean up what an older release made.)
            let here = verb != "delete" && given.is_none_or(|(_, g)| namespaces.contains(g));
            if let Some(why) = here
                .then(|| other_name(objects, moves, kind, name))
                .flatten()
            {
                out.push(
                    Diagnostic::new(
                        rule::DOC_COMMAND_MISMATCH,
                        format!(
                            "`kubectl {verb}` names {} `{name}`, which base {folder} does not have: {}",
                            kind.to_ascii_lowercase(),
                            why.0
                        ),
                    )
                    .at(at(col))
                    .help(why.1),
                );
                return;
            }
            // A near miss of one of the base's names (`whystack-agnet`,
            // the pod `whystack-agent-1` of a StatefulSet of one
            // replica), in the base's namespace: not found.
            let in_base = given.is_some_and(|(_, g)| namespaces.contains(g));
            let near = closest(name, candidates.iter().copied());
            if let (true, Some(near)) = (in_base, near) {
                out.push(
                    Diagnostic::new(
                        rule::DOC_COMMAND_MISMATCH,
                        format!(
                            "`kubectl {verb}` names {} `{name}`, which base {folder} does not have: did you mean `{near}`?",
                            kind.to_ascii_lowercase()
                        ),
                    )
                    .at(at(col)),
                );
            }
            return;
        }
    };
    let Some(namespace) = namespace else {
        return;
    };
    match given {
        Some((c, g)) if g != namespace => out.push(
            Diagnostic::new(
                rule::DOC_COMMAND_MISMATCH,
                format!(
                    "`kubectl {verb}` looks for {} `{name}` in namespace `{g}`, and base {folder} puts it in `{namespace}`",
                    kind.to_ascii_lowercase()
                ),
            )
            .at(at(c))
            .help(format!("write `-n {namespace}`")),
        ),
        Some(_) => {}
        None => {
            let mut d = Diagnostic::new(
                rule::DOC_COMMAND_MISMATCH,
                format!(
                    "`kubectl {verb}` names {} `{name}` without a namespace, so it looks in the reader's current one; base {folder} puts it in `{namespace}`",
                    kind.to_ascii_lowercase()
                ),
            )
            .at(at(command.words[0].0))
            .help(format!("add `-n {namespace}` after `kubectl`"));
            // A reader whose context is set to it gets the right answer.
            d.severity = Severity::Warning;
            out.push(d);
        }
    }
    // `kubectl scale --replicas=N` of the agent's workload: a second pod
    // cannot enroll (the bootstrap token is single use).
    if verb == "scale" && RUNS_PODS.contains(&kind) {
        let replicas = command.option("--replicas", "--replicas");
        if let Some((c, n)) = replicas.filter(|(_, n)| n.parse::<u64>().is_ok_and(|n| n > 1)) {
            out.push(
                Diagnostic::new(
                    rule::DOC_COMMAND_MISMATCH,
                    format!(
                        "`kubectl scale` gives {} `{name}` of base {folder} {n} replicas: the agent's bootstrap token is single use, so a second pod fails to enroll",
                        kind.to_ascii_lowercase()
                    ),
                )
                .at(at(c))
                .help("run one replica per agent; for more agents, install the base again under another name (see the docs of several agents)"),
            );
        }
    }
    // `-c NAME`: a container of the pod, or of the pods of the workload
    // (`kubectl logs statefulset/NAME -c agent`, `kubectl set env … -c
    // agent`); `kubectl set image WORKLOAD NAME=IMAGE`: NAME.
    let sub = operands.get(1).map(|o| o.1);
    let set = verb == "set" && matches!(sub, Some("env" | "resources" | "image"));
    if !matches!(verb, "logs" | "exec" | "attach") && !set {
        return;
    }
    let named_containers: Vec<(usize, &str)> = match (verb, sub) {
        ("set", Some("image")) => operands
            .iter()
            .skip(2)
            .filter_map(|&(c, w)| w.split_once('=').map(|(n, _)| (c, n)))
            .filter(|(_, n)| *n != "*")
            .collect(),
        _ => command.option("-c", "--container").into_iter().collect(),
    };
    let containers = match kind {
        "Pod" => pod_named(pods, name).map(|p| p.containers.clone()),
        _ if RUNS_PODS.contains(&kind) => objects
            .iter()
            .find(|o| o.kind() == kind && moves.name(o.name()) == name)
            .map(containers_of),
        _ => None,
    };
    let Some(containers) = containers else {
        return;
    };
    for (c, container) in named_containers {
        if !containers.iter().any(|k| k == container) {
            let near = closest(container, containers.iter().map(String::as_str))
                .map(|k| format!(": did you mean `{k}`?"))
                .unwrap_or_else(|| format!(" (its containers: {})", containers.join(", ")));
            let what = match kind {
                "Pod" => "pod".to_string(),
                _ => format!("the pods of {}", kind.to_ascii_lowercase()),
            };
            out.push(
                Diagnostic::new(
                    rule::DOC_COMMAND_MISMATCH,
                    format!("`kubectl {verb}` names container `{container}`, which {what} `{name}` of base {folder} does not have{near}"),
                )
                .at(at(c)),
            );
        }
    }
}

/// Why an equality-based label selector (`a=b,c!=d,e,!f`) picks no pod of
/// the base's workloads, with the labels their pods have; `None` when it
/// picks one, or is a form not read here (`in (…)`).
fn selects_no_pod(objects: &[Object], selector: &str) -> Option<String> {
    if selector.contains(['(', '$', '<', '{']) || selector.is_empty() {
        return None;
    }
    // Labels the controllers give the pods they make, which the template
    // does not show (`statefulset.kubernetes.io/pod-name=NAME-0`).
    const CONTROLLERS: &[&str] = &[
        "statefulset.kubernetes.io/pod-name",
        "apps.kubernetes.io/pod-index",
        "controller-revision-hash",
        "pod-template-hash",
        "pod-template-generation",
        "controller-uid",
        "job-name",
        "batch.kubernetes.io/job-name",
        "batch.kubernetes.io/controller-uid",
        "batch.kubernetes.io/job-completion-index",
    ];
    let keys = selector.split(',').map(|r| {
        r.split(['=', '!'])
            .find(|k| !k.trim().is_empty())
            .unwrap_or_default()
            .trim()
    });
    if keys.clone().any(|k| CONTROLLERS.contains(&k)) {
        return None;
    }
    let pods: Vec<&serde_json::Map<String, serde_json::Value>> = objects
        .iter()
        .filter_map(|o| {
            let spec = crate::kustomize::pod_spec_pointer(o.kind())?;
            let meta = crate::kustomize::pod_metadata_pointer(spec);
            o.value.pointer(&format!("{meta}/labels"))?.as_object()
        })
        .collect();
    if pods.is_empty() {
        return None;
    }
    let label = |pod: &serde_json::Map<String, serde_json::Value>, k: &str| {
        pod.get(k).and_then(|v| v.as_str()).map(str::to_string)
    };
    let matches = |pod: &&serde_json::Map<String, serde_json::Value>| {
        selector.split(',').map(str::trim).all(|req| {
            if let Some((k, v)) = req.split_once("!=") {
                label(pod, k.trim()).as_deref() != Some(v.trim())
            } else if let Some((k, v)) = req.split_once("==").or_else(|| req.split_once('=')) {
                label(pod, k.trim()).as_deref() == Some(v.trim())
            } else if let Some(k) = req.strip_prefix('!') {
                label(pod, k.trim()).is_none()
            } else {
                label(pod, req).is_some()
            }
        })
    };
    if pods.iter().any(matches) {
        return None;
    }
    let mut have: Vec<String> = pods
        .iter()
        .flat_map(|p| {
            p.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        })
        .collect();
    have.sort();
    have.dedup();
    Some(format!("its pods have {}", have.join(", ")))
}

/// The namespace of the base's that `given` misspells (`whystack-agnet`),
/// if it is a near miss of one: not one that only adds to it or takes
/// from it (`whystack-agent-b`, a second install's), which is another.
fn namespace_typo<'n>(given: &str, namespaces: &BTreeSet<&'n str>) -> Option<&'n str> {
    namespaces.iter().copied().find(|n| {
        let distance = strsim::osa_distance(given, n);
        let variant = given.starts_with(&format!("{n}-")) || n.starts_with(&format!("{given}-"));
        (1..=2).contains(&distance) && n.len() > 4 && !variant
    })
}

/// Why `name` is no object of `kind` in the base when it names another:
/// a workload of another kind (`deployment/whystack-agent` of a
/// StatefulSet), or a generated ConfigMap or Secret, whose name the build
/// ends with a hash of its content. With the remedy.
fn other_name(
    objects: &[Object],
    moves: &Moves,
    kind: &str,
    name: &str,
) -> Option<(String, String)> {
    let workload = |k: &str| RUNS_PODS.contains(&k) || k == "CronJob";
    if workload(kind) {
        if let Some(o) = objects
            .iter()
            .find(|o| o.kind() != kind && workload(o.kind()) && moves.name(o.name()) == name)
        {
            let other = o.kind().to_ascii_lowercase();
            return Some((
                format!("it makes `{name}` a {}", o.kind()),
                format!("write `{other}/{name}`"),
            ));
        }
    }
    if matches!(kind, "ConfigMap" | "Secret") {
        let hashed = objects
            .iter()
            .filter(|o| o.kind() == kind)
            .map(|o| moves.name(o.name()))
            .find(|n| {
                n.strip_prefix(name)
                    .and_then(|h| h.strip_prefix('-'))
                    .is_some_and(|h| h.len() == 10 && h.bytes().all(|b| b.is_ascii_alphanumeric()))
            });
        if let Some(hashed) = hashed {
            let plural = format!("{}s", kind.to_ascii_lowercase());
            return Some((
                format!(
                    "it generates the {kind}, and names it `{hashed}`, after a hash of its content that changes with it"
                ),
                format!("list them (`kubectl get {plural}`) and pick the one whose name starts with `{name}-`, or show the name the build gives, with its hash"),
            ));
        }
    }
    None
}

/// The claims the base's StatefulSets make for their pods, as the stem of
/// their names (`identity-whystack-agent-`, then the pod's ordinal) and
/// their namespace.
fn claims<'o>(objects: &'o [Object], moves: &'o Moves) -> Vec<(String, Option<&'o str>)> {
    objects
        .iter()
        .filter(|o| o.kind() == "StatefulSet")
        .flat_map(|o| {
            let set = moves.name(o.name());
            let namespace = moves.namespace(o.namespace());
            o.value["spec"]["volumeClaimTemplates"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["metadata"]["name"].as_str())
                .map(move |t| (format!("{t}-{set}-"), namespace))
        })
        .collect()
}

/// Whether `name` is a claim of stem `claim` (for any pod's ordinal).
fn claim_named(claim: &(String, Option<&str>), name: &str) -> bool {
    name.strip_prefix(claim.0.as_str())
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// `kubectl create secret …` and `kubectl create configmap NAME` of an
/// object the base's pods refer to: it must be made in their namespace,
/// with the name they use.
fn check_create(
    command: &Command,
    operands: &[(usize, &str)],
    (objects, view): (&[Object], &View),
    folder: &str,
    at: &impl Fn(usize) -> Location,
    out: &mut Vec<Diagnostic>,
) {
    // `create secret generic|tls|docker-registry NAME`, `create configmap NAME`.
    let (kind, name) = match operands.get(1..).unwrap_or_default() {
        [(_, "secret"), _, name, ..] => ("Secret", *name),
        [(_, "configmap" | "cm"), name, ..] => ("ConfigMap", *name),
        _ => return,
    };
    let refs = references(objects, view.moves, kind);
    if refs.is_empty() {
        return;
    }
    let (col, name) = name;
    let lower = kind.to_ascii_lowercase();
    match refs.iter().find(|(n, _)| n == name) {
        Some((_, namespace)) => {
            let Some(namespace) = namespace else { return };
            if let Some((c, g)) = command
                .option("-n", "--namespace")
                .filter(|(_, g)| g != namespace)
            {
                out.push(
                    Diagnostic::new(
                        rule::DOC_COMMAND_MISMATCH,
                        format!(
                            "`kubectl create` makes {lower} `{name}` in namespace `{g}`, and the pods of base {folder} that use it run in `{namespace}`: they do not find it"
                        ),
                    )
                    .at(at(c))
                    .help(format!("write `-n {namespace}`")),
                );
            }
        }
        // A page's overlay may point the pods at another name.
        None if view.moves.shown => {}
        None => {
            let names = refs.iter().map(|(n, _)| n.as_str());
            if let Some(near) = closest(name, names) {
                out.push(
                    Diagnostic::new(
                        rule::DOC_COMMAND_MISMATCH,
                        format!(
                            "`kubectl create` makes {lower} `{name}`, which no pod of base {folder} uses: did you mean `{near}`?"
                        ),
                    )
                    .at(at(col)),
                );
            }
        }
    }
}

/// The ConfigMaps or Secrets (`kind`) the base's pods refer to by name
/// and the base does not make (the installer does), each with the
/// namespace of the pods.
fn references(objects: &[Object], moves: &Moves, kind: &str) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    for o in objects {
        let Some(pointer) = crate::kustomize::pod_spec_pointer(o.kind()) else {
            continue;
        };
        let Some(spec) = o.value.pointer(pointer) else {
            continue;
        };
        let namespace = moves.namespace(o.namespace()).map(str::to_string);
        let mut names: Vec<&str> = Vec::new();
        let (from, key, volume) = match kind {
            "Secret" => ("secretRef", "secretKeyRef", "secret"),
            _ => ("configMapRef", "configMapKeyRef", "configMap"),
        };
        for c in ["containers", "initContainers"]
            .iter()
            .flat_map(|f| spec[f].as_array().into_iter().flatten())
        {
            for e in c["envFrom"].as_array().into_iter().flatten() {
                names.extend(e[from]["name"].as_str());
            }
            for e in c["env"].as_array().into_iter().flatten() {
                names.extend(e["valueFrom"][key]["name"].as_str());
            }
        }
        for v in spec["volumes"].as_array().into_iter().flatten() {
            let field = if kind == "Secret" {
                "secretName"
            } else {
                "name"
            };
            names.extend(v[volume][field].as_str());
            for p in v["projected"]["sources"].as_array().into_iter().flatten() {
                names.extend(p[volume]["name"].as_str());
            }
        }
        if kind == "Secret" {
            for s in spec["imagePullSecrets"].as_array().into_iter().flatten() {
                names.extend(s["name"].as_str());
            }
        }
        for name in names {
            let made = objects.iter().any(|m| m.kind() == kind && m.name() == name);
            let entry = (name.to_string(), namespace.clone());
            if !made && !out.contains(&entry) {
                out.push(entry);
            }
        }
    }
    out
}

/// The pod of the base named `name`: by its name, or as a further
/// replica of a StatefulSet (`NAME-N`, whatever N: scaling, with `kubectl
/// scale` or an overlay's `replicas`, makes more).
fn pod_named<'p, 'o>(pods: &'p [Pod<'o>], name: &str) -> Option<&'p Pod<'o>> {
    let ordinal = |p: &&Pod| {
        let stem = p.name.rsplit_once('-').map_or("", |(s, _)| s);
        name.strip_prefix(stem)
            .and_then(|r| r.strip_prefix('-'))
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    };
    pods.iter()
        .find(|p| p.name == name)
        .or_else(|| pods.iter().find(ordinal))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one `kubectl` command of `line`.
    fn one(line: &str) -> Command<'_> {
        let mut all = Command::read_all(line, true);
        assert_eq!(all.len(), 1, "{line}");
        all.remove(0)
    }

    #[test]
    fn commands_are_read_as_kubectl_reads_them() {
        let c = one("$ kubectl -n whystack-agent logs whystack-agent-0 -c agent | grep x");
        assert_eq!(
            c.option("-n", "--namespace").map(|o| o.1),
            Some("whystack-agent")
        );
        assert_eq!(c.option("-c", "--container").map(|o| o.1), Some("agent"));
        let ops: Vec<&str> = c.operands().iter().map(|o| o.1).collect();
        assert_eq!(ops, ["logs", "whystack-agent-0"]);
        let c = one("kubectl --namespace=x get sts/a");
        assert_eq!(c.option("-n", "--namespace"), Some((20, "x")));
        let c = one("kubectl -nx exec p -- sh -c 'ls -n'");
        assert_eq!(c.option("-n", "--namespace").map(|o| o.1), Some("x"));
        assert_eq!(
            c.operands().iter().map(|o| o.1).collect::<Vec<_>>(),
            ["exec", "p"]
        );
        assert!(Command::read_all("echo kubectl", true).is_empty());
    }

    /// Options as pflag reads them: every global option that takes a
    /// value takes the next word, `-n=X` is X, and a `#` at a line's start
    /// is a comment in a script, root's prompt in a session.
    #[test]
    fn options_values_and_comments_are_read_as_kubectl_and_the_shell_read_them() {
        for line in [
            "kubectl --as admin -n x logs p",
            "kubectl --request-timeout 30s -n x logs p",
            "kubectl --cluster prod -n x describe pod p",
            "kubectl -n x logs --max-log-requests 5 sts/p",
            "kubectl -s https://k:6443 --user u -n x get pod p",
        ] {
            let ops: Vec<&str> = one(line).operands().iter().map(|o| o.1).collect();
            // The subcommand, then its objects: no option's value among them.
            assert!(
                matches!(ops.first(), Some(&("logs" | "describe" | "get"))),
                "{line}: {ops:?}"
            );
            assert!(
                matches!(ops.last(), Some(&("p" | "sts/p"))),
                "{line}: {ops:?}"
            );
        }
        let c = one("kubectl -n=x logs p -c=agent");
        assert_eq!(c.option("-n", "--namespace"), Some((11, "x")));
        assert_eq!(c.option("-c", "--container").map(|o| o.1), Some("agent"));
        assert!(Command::read_all("# kubectl -n old logs p", false).is_empty());
        assert_eq!(Command::read_all("# kubectl -n old logs p", true).len(), 1);
    }

    /// Every simple command of a line is read, after what may come before
    /// `kubectl` in it, and each word keeps its column.
    #[test]
    fn every_kubectl_of_a_line_is_read_behind_lists_prefixes_and_wrappers() {
        let namespaces = |line: &str| -> Vec<(usize, String)> {
            Command::read_all(line, true)
                .iter()
                .map(|c| {
                    let (at, n) = c.option("-n", "--namespace").unwrap_or((0, "-"));
                    (at, n.to_string())
                })
                .collect()
        };
        let cases: &[(&str, &[(usize, &str)])] = &[
            (
                "kubectl apply -k . && kubectl -n a get pods",
                &[(0, "-"), (33, "a")],
            ),
            (
                "kubectl apply -k .; kubectl -n a get pods",
                &[(0, "-"), (31, "a")],
            ),
            (
                "kubectl apply -k . || kubectl -n a get pods",
                &[(0, "-"), (33, "a")],
            ),
            ("cat x | kubectl -n a apply -f -", &[(19, "a")]),
            ("echo $(kubectl -n a get pods)", &[(18, "a")]),
            ("echo `kubectl -n a get pods`", &[(17, "a")]),
            ("KUBECONFIG=/k kubectl -n a logs p", &[(25, "a")]),
            ("sudo -E kubectl -n a logs p", &[(19, "a")]),
            ("sudo -u admin kubectl -n a logs p", &[(25, "a")]),
            ("watch -n 5 kubectl -n a get pods", &[(22, "a")]),
            ("env -u X A=b kubectl -n a get pods", &[(24, "a")]),
            ("time kubectl\t-n\ta get pods", &[(16, "a")]),
            ("/usr/local/bin/kubectl -n a get pods", &[(26, "a")]),
            ("PS> kubectl.exe -n a get pods", &[(19, "a")]),
            ("kubectl logs p -n a 2>&1 | tee log", &[(18, "a")]),
            ("kubectl get pods -n a # then kubectl -n b", &[(20, "a")]),
            ("kubectl get pods -o jsonpath='{.a b}' -n a", &[(41, "a")]),
        ];
        for (line, want) in cases {
            let want: Vec<(usize, String)> =
                want.iter().map(|(at, n)| (*at, n.to_string())).collect();
            assert_eq!(namespaces(line), want, "{line}");
        }
        for none in [
            "echo 'kubectl -n a get pods'",
            "# comment",
            "kubectlx -n a get pods",
            "watch 'kubectl get pods'",
        ] {
            assert!(Command::read_all(none, true).is_empty(), "{none}");
        }
    }

    #[test]
    fn kinds_are_named_alone_or_with_their_group() {
        for (word, kind) in [
            ("sts", Some("StatefulSet")),
            ("statefulsets.apps", Some("StatefulSet")),
            ("statefulsets.v1.apps", Some("StatefulSet")),
            ("jobs.batch", Some("Job")),
            ("networkpolicies.networking.k8s.io", Some("NetworkPolicy")),
            ("pods", Some("Pod")),
            ("statefulsets.batch", None),
            ("pods.apps", None),
            ("deployments.apps.example.com", None),
            ("whystack-agent-0", None),
        ] {
            assert_eq!(kind_of(word), kind, "{word}");
        }
    }
}
