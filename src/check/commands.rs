//! The `kubectl` commands a page shows against the base it documents: a
//! command that names an object of the base (`statefulset/whystack-agent`,
//! the pod `whystack-agent-0`) must look for it in the base's namespace,
//! by a name the base gives it, and name one of its containers with
//! `-c`. Run as written, such a command otherwise answers `not found`.

use std::collections::BTreeSet;

use super::docs::documented_version;
use super::Context;
use crate::diagnostics::{closest, rule, Diagnostic, Location, Severity};
use crate::kustomize::Object;

/// Languages of the blocks that hold commands to type.
const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "shell",
    "console",
    "shell-session",
    "zsh",
    "powershell",
    "pwsh",
    "ps1",
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

/// Options of kubectl that take the next word as their value.
const VALUED: &[&str] = &[
    "-n",
    "--namespace",
    "-c",
    "--container",
    "--context",
    "--kubeconfig",
    "-l",
    "--selector",
    "-o",
    "--output",
    "-f",
    "--filename",
    "-k",
    "--kustomize",
    "--since",
    "--tail",
    "--for",
    "--timeout",
    "--replicas",
    "-p",
    "--patch",
    "--type",
];

/// Kinds by the names kubectl takes for them.
fn kind_of(word: &str) -> Option<&'static str> {
    Some(match word.to_ascii_lowercase().as_str() {
        "po" | "pod" | "pods" => "Pod",
        "sts" | "statefulset" | "statefulsets" => "StatefulSet",
        "deploy" | "deployment" | "deployments" => "Deployment",
        "ds" | "daemonset" | "daemonsets" => "DaemonSet",
        "job" | "jobs" => "Job",
        "cj" | "cronjob" | "cronjobs" => "CronJob",
        "svc" | "service" | "services" => "Service",
        "cm" | "configmap" | "configmaps" => "ConfigMap",
        "secret" | "secrets" => "Secret",
        "pvc" | "persistentvolumeclaim" | "persistentvolumeclaims" => "PersistentVolumeClaim",
        "sa" | "serviceaccount" | "serviceaccounts" => "ServiceAccount",
        "netpol" | "networkpolicy" | "networkpolicies" => "NetworkPolicy",
        "pdb" | "poddisruptionbudget" | "poddisruptionbudgets" => "PodDisruptionBudget",
        _ => return None,
    })
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
}

impl Moves {
    /// The moves of the page's overlay (its `file=kustomization.yaml`).
    fn of(doc: &crate::model::document::Document) -> Moves {
        let kustomization = doc
            .code_blocks
            .iter()
            .find(|b| super::overlays::is_kustomization(b));
        let value = kustomization
            .and_then(|b| crate::yaml::documents(&b.code).ok())
            .and_then(|docs| docs.into_iter().next())
            .unwrap_or_default();
        let text = |k: &str| value[k].as_str().unwrap_or_default().to_string();
        Moves {
            namespace: Some(text("namespace")).filter(|n| !n.is_empty()),
            prefix: text("namePrefix"),
            suffix: text("nameSuffix"),
        }
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
        let containers: Vec<String> = ["containers", "initContainers"]
            .iter()
            .flat_map(|f| {
                o.value["spec"]["template"]["spec"][f]
                    .as_array()
                    .into_iter()
                    .flatten()
            })
            .filter_map(|c| c["name"].as_str().map(str::to_string))
            .collect();
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

impl<'l> Command<'l> {
    /// `kubectl …` at the start of `line` (after a prompt `$ ` or `PS> `).
    fn read(line: &'l str) -> Option<Command<'l>> {
        // Columns count characters, as every finding's do.
        let mut words: Vec<(usize, &str)> = Vec::new();
        let mut at = 0;
        for w in line.split(' ') {
            if !w.is_empty() {
                let quotes = w.len() - w.trim_start_matches(['"', '\'']).len();
                words.push((at + quotes, w.trim_matches(['"', '\''])));
            }
            at += w.chars().count() + 1;
        }
        while words
            .first()
            .is_some_and(|(_, w)| matches!(*w, "$" | "#" | "PS>" | ">"))
        {
            words.remove(0);
        }
        // A pipe or a list ends the command.
        if let Some(end) = words
            .iter()
            .position(|(_, w)| matches!(*w, "|" | "&&" | "||" | ";" | "\\" | "`"))
        {
            words.truncate(end);
        }
        (words.first()?.1 == "kubectl").then_some(Command { words })
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
                return Some((at + short.len(), v));
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

/// The `kubectl` commands of the shell blocks of page `i`, against the
/// objects of the base it documents.
pub fn check_page(ctx: &Context, i: usize) -> Vec<Diagnostic> {
    let site = ctx.site;
    let (Some(page), Some(doc)) = (site.pages.get(i), ctx.analysis.docs.get(i)) else {
        return Vec::new();
    };
    let Some(b) = documented_version(site, page)
        .and_then(|v| site.bases.iter().position(|b| &b.version == v))
    else {
        return Vec::new();
    };
    let Some(built) = ctx.analysis.built.get(b).and_then(Option::as_ref) else {
        return Vec::new();
    };
    let base = &site.bases[b];
    let objects = &built.objects;
    // The commands of a page that shows an overlay run on what it builds.
    let moves = Moves::of(doc);
    let pods = pods(objects, &moves);
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
    let mut out = Vec::new();
    for block in doc
        .code_blocks
        .iter()
        .filter(|b| SHELLS.contains(&b.lang.as_str()))
    {
        for (n, line) in logical_lines(&block.code) {
            let Some(command) = Command::read(&line) else {
                continue;
            };
            let at = |column: usize| {
                Location::at(&page.source, block.line + n, column + 1 + block.indent)
            };
            let folder = base.folder();
            check_command(
                &command,
                (objects, &pods, &namespaces, &moves),
                &folder,
                at,
                &mut out,
            );
        }
    }
    out
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

/// What the base has that commands may name.
type Known<'o, 'p> = (
    &'o [Object],
    &'p [Pod<'o>],
    &'p BTreeSet<&'o str>,
    &'o Moves,
);

fn check_command(
    command: &Command,
    (objects, pods, namespaces, moves): Known,
    folder: &str,
    at: impl Fn(usize) -> Location,
    out: &mut Vec<Diagnostic>,
) {
    let operands = command.operands();
    let Some(&(_, verb)) = operands.first() else {
        return;
    };
    // Across every namespace (`-A`, `--all-namespaces[=true]`), any
    // namespace holds what it names.
    let everywhere = |w: &str| w == "-A" || w.starts_with("--all-namespaces");
    if !NAMING.contains(&verb) || command.words.iter().any(|(_, w)| everywhere(w)) {
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
            // `NAME-N` of a StatefulSet of the base, whatever N: scaling
            // (`kubectl scale`, an overlay's `replicas`) makes more.
            let ordinal = |p: &&Pod| {
                let stem = p.name.rsplit_once('-').map_or("", |(s, _)| s);
                n.strip_prefix(stem)
                    .and_then(|r| r.strip_prefix('-'))
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            };
            return pods
                .iter()
                .find(|p| p.name == n)
                .or_else(|| pods.iter().find(ordinal))
                .map(|p| p.namespace);
        }
        objects
            .iter()
            .find(|o| o.kind() == kind && moves.name(o.name()) == n)
            .map(|o| moves.namespace(o.namespace()))
    };
    let candidates: Vec<String> = match kind {
        "Pod" => pods.iter().map(|p| p.name.clone()).collect(),
        _ => objects
            .iter()
            .filter(|o| o.kind() == kind)
            .map(|o| moves.name(o.name()))
            .collect(),
    };
    let candidates: Vec<&str> = candidates.iter().map(String::as_str).collect();
    let given = command.option("-n", "--namespace");
    // A namespace from a variable or a placeholder is the reader's.
    if given.is_some_and(|(_, g)| g.contains(['$', '`', '<', '{'])) {
        return;
    }
    let namespace = match owner(name) {
        Some(ns) => ns,
        None => {
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
    // `-c NAME`: a container of the pod.
    if kind == "Pod" && matches!(verb, "logs" | "exec" | "attach") {
        let pod = pods.iter().find(|p| p.name == name);
        if let (Some(pod), Some((c, container))) = (pod, command.option("-c", "--container")) {
            if !pod.containers.iter().any(|k| k == container) {
                let near = closest(container, pod.containers.iter().map(String::as_str))
                    .map(|k| format!(": did you mean `{k}`?"))
                    .unwrap_or_else(|| format!(" (its containers: {})", pod.containers.join(", ")));
                out.push(
                    Diagnostic::new(
                        rule::DOC_COMMAND_MISMATCH,
                        format!("`kubectl {verb}` names container `{container}`, which pod `{name}` of base {folder} does not have{near}"),
                    )
                    .at(at(c)),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_read_as_kubectl_reads_them() {
        let c =
            Command::read("$ kubectl -n whystack-agent logs whystack-agent-0 -c agent | grep x")
                .unwrap();
        assert_eq!(
            c.option("-n", "--namespace").map(|o| o.1),
            Some("whystack-agent")
        );
        assert_eq!(c.option("-c", "--container").map(|o| o.1), Some("agent"));
        let ops: Vec<&str> = c.operands().iter().map(|o| o.1).collect();
        assert_eq!(ops, ["logs", "whystack-agent-0"]);
        let c = Command::read("kubectl --namespace=x get sts/a").unwrap();
        assert_eq!(c.option("-n", "--namespace"), Some((20, "x")));
        let c = Command::read("kubectl -nx exec p -- sh -c 'ls -n'").unwrap();
        assert_eq!(c.option("-n", "--namespace").map(|o| o.1), Some("x"));
        assert_eq!(
            c.operands().iter().map(|o| o.1).collect::<Vec<_>>(),
            ["exec", "p"]
        );
        assert!(Command::read("echo kubectl").is_none());
    }
}
