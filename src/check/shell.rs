//! What a container runs when its command is a shell with a script
//! (`sh -c "…"`, `/bin/bash -ec "…"`): every command the script can run,
//! read with a real shell parser (tree-sitter-bash), so that the commands
//! behind `exec`, `&&`, `||`, `;`, pipes and `$( )` are checked against the
//! image like the container's own.
//!
//! A script whose commands cannot be named before it runs (a command name
//! from a variable or a substitution, `eval`, a sourced file) is reported
//! as such; its other commands are still checked.

use tree_sitter::{Node, Parser};

/// Shells whose `-c` takes a script in the POSIX shell language.
const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "ash",
    "ksh",
    "mksh",
    "zsh",
    "busybox-sh",
];

/// Commands of the shell itself (POSIX's, and `local`, which dash,
/// ash and bash all have): they run no program of the image.
const BUILTINS: &[&str] = &[
    ":", "[", "alias", "bg", "break", "cd", "continue", "echo", "exit", "export", "false", "fg",
    "getopts", "hash", "jobs", "kill", "local", "printf", "pwd", "read", "readonly", "return",
    "set", "shift", "test", "times", "trap", "true", "type", "ulimit", "umask", "unalias", "unset",
    "wait",
];

/// Builtins and keywords of bash that POSIX shells such as dash lack: in
/// dash, `[[ -f x ]]` fails with `[[: not found`.
const BASH_ONLY: &[&str] = &[
    "[[",
    "bind",
    "builtin",
    "caller",
    "compgen",
    "complete",
    "coproc",
    "declare",
    "dirs",
    "disown",
    "enable",
    "fc",
    "help",
    "history",
    "let",
    "logout",
    "mapfile",
    "popd",
    "pushd",
    "readarray",
    "shopt",
    "source",
    "suspend",
    "time",
    "typeset",
];

/// Shells that have every builtin of [`BASH_ONLY`] they are likely to
/// be given (bash itself, and the Korn-like shells for `[[`, `let`,
/// `typeset`).
const BASH_LIKE: &[&str] = &["bash", "zsh", "ksh", "mksh"];

/// Longest script basepress reads; a longer one is reported as too large
/// to analyse.
const MAX_SCRIPT: usize = 64 * 1024;

/// How deep `sh -c` may nest inside a script.
const MAX_NESTING: usize = 4;

/// One command a container can run, as its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The program and its arguments, as the shell passes them. An
    /// argument that is only known when the script runs is `None`.
    pub argv: Vec<Option<String>>,
    /// Whether the call is inside a shell script (not the container's own
    /// argv).
    pub in_script: bool,
    /// The folder and `PATH` the script gave it, where it changed them.
    pub scope: Scope,
    /// For what only bash has (a builtin such as `[[`, `declare`,
    /// `source`; an option, `-o pipefail`; a syntax, `a=(x)`, `<<<`,
    /// `&>`) in the script of a POSIX shell (`sh -c`): that shell as
    /// written. It runs
    /// no program if the image's shell is bash, and fails (`not found`)
    /// if it is dash: the image decides.
    pub bash_only: Option<String>,
    /// The script asks whether the program is there before it runs it
    /// (`command -v curl >/dev/null || exit 0; curl …`): its absence is
    /// provided for, not a failure.
    pub guarded: bool,
    /// The line of the container's script the call is on (0-based, as
    /// written), for a call of a script; a call of a script inside it
    /// (`sh -c '…'`, a substitution) is on the line of its command. For a
    /// call of a script file a volume holds, the line of that file.
    pub line: Option<usize>,
    /// The script file a volume holds (its path in the container) that
    /// the call is in, when it is in one.
    pub file: Option<String>,
}

/// The script files a container's volumes hold, which its commands may
/// run (`/scripts/probe.sh`, `sh /scripts/probe.sh`, `. /scripts/lib.sh`):
/// their texts by absolute path, and the `PATH` and folder the process
/// starts with, to find them by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Files {
    pub texts: std::collections::BTreeMap<String, String>,
    pub path: String,
    pub cwd: String,
    /// Programs of the image that run their arguments as a command (an
    /// entrypoint ending in `exec "$@"`), as the image data names them.
    pub wrappers: Vec<String>,
}

impl Files {
    /// Whether `program` is one of [`Files::wrappers`]: by the name the
    /// data gives it, or by a path ending in it.
    fn wraps(&self, program: &str) -> bool {
        self.wrappers.iter().any(|w| {
            let w = w.strip_prefix("./").unwrap_or(w);
            let p = program.strip_prefix("./").unwrap_or(program);
            p == w || p.ends_with(&format!("/{w}"))
        })
    }
}

/// What a script changed of the process it runs commands in: the working
/// folder (`cd DIR`: absolute, or relative to the one it started in) and
/// `PATH` (`PATH=/opt/bin:$PATH`, `export PATH=…`, or for one command,
/// `PATH=… cmd`; `$PATH` standing for the one it started with). `None`
/// keeps the process's own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    pub cwd: Option<String>,
    pub path: Option<String>,
    /// A `cd` to a folder only known when the script runs (`cd "$DIR"`,
    /// `cd ~`, `cd` alone) came before: a relative path is not known to
    /// be missing.
    pub cwd_unknown: bool,
    /// A `PATH` only known when the script runs came before
    /// (`PATH=$HOME/bin:$PATH`): a command not found on the known part
    /// may be on the rest.
    pub path_unknown: bool,
}

impl Scope {
    /// The `PATH` a call looks commands up in, given the process's own.
    pub fn path_over(&self, path: &str) -> String {
        match &self.path {
            Some(p) => p.replace("$PATH", path),
            None => path.to_string(),
        }
    }

    /// `cd DIR`: an absolute folder, or one below the current.
    fn cd(&mut self, dir: &str) {
        self.cwd = Some(match &self.cwd {
            Some(prev) if !dir.starts_with('/') => format!("{prev}/{dir}"),
            _ => dir.to_string(),
        });
        // Somewhere known again only from the root.
        self.cwd_unknown &= !dir.starts_with('/');
    }

    /// A `cd` to a folder only known when the script runs.
    fn cd_unknown(&mut self) {
        self.cwd = None;
        self.cwd_unknown = true;
    }

    /// A `PATH=` assignment: its value when known (`$PATH` standing for
    /// the one before), else `None`.
    fn set_path(&mut self, value: Option<String>) {
        match value {
            Some(path) => {
                // `$PATH` in it keeps what was unknown of the one before.
                self.path_unknown &= path.contains("$PATH");
                let before = self.path.as_deref().unwrap_or("$PATH");
                self.path = Some(path.replace("$PATH", before));
            }
            None => {
                self.path = None;
                self.path_unknown = true;
            }
        }
    }

    /// The scope after a part of the script that may or may not have run
    /// and left `then`: what it changed is only known when the script runs.
    fn maybe(mut self, then: &Scope) -> Scope {
        if then.cwd != self.cwd || then.cwd_unknown {
            self.cwd_unknown = true;
        }
        if then.path != self.path || then.path_unknown {
            self.path_unknown = true;
        }
        self
    }

    /// Whether `program`, not found, may still be there: it is looked up
    /// in a folder or on a `PATH` only known when the script runs.
    pub fn may_hide(&self, program: &str) -> bool {
        match program.contains('/') {
            true => !program.starts_with('/') && self.cwd_unknown,
            false => self.path_unknown,
        }
    }

    /// The folder a call runs in, given the process's own.
    pub fn cwd_over(&self, cwd: &str) -> String {
        match &self.cwd {
            Some(d) if d.starts_with('/') => d.clone(),
            Some(d) => format!("{}/{d}", cwd.trim_end_matches('/')),
            None => cwd.to_string(),
        }
    }
}

impl Call {
    pub fn program(&self) -> Option<&str> {
        self.argv.first().and_then(|a| a.as_deref())
    }

    /// The arguments after the program, when all of them are known.
    pub fn args(&self) -> Option<Vec<&str>> {
        self.argv.iter().skip(1).map(|a| a.as_deref()).collect()
    }

    /// The words as written, `…` for those only known at run time.
    pub fn display(&self) -> String {
        self.argv
            .iter()
            .map(|a| a.as_deref().unwrap_or("…"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A file a script writes to (`> FILE`, `>> FILE`, `&> FILE`), where
/// its path is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    pub path: String,
    /// Where the script had moved (`cd DIR`) when it writes.
    pub scope: Scope,
    /// As [`Call::line`] and [`Call::file`].
    pub line: Option<usize>,
    pub file: Option<String>,
}

/// Where in a script a call or a write is: the line, and the script file
/// of a volume it is in, if any.
pub trait InScript {
    fn line(&self) -> Option<usize>;
    fn file(&self) -> Option<&str>;
}

impl InScript for Call {
    fn line(&self) -> Option<usize> {
        self.line
    }
    fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }
}

impl InScript for Write {
    fn line(&self) -> Option<usize> {
        self.line
    }
    fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }
}

/// What an argv runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Calls {
    /// Every command, the argv's own program first.
    pub calls: Vec<Call>,
    /// The files its scripts write to.
    pub writes: Vec<Write>,
    /// Why some commands cannot be named: one sentence each.
    pub dynamic: Vec<String>,
    /// The scope of the command being followed.
    scope: Scope,
    /// The shell whose script is being read, as written.
    shell: Option<String>,
    /// The line of the container's script being read, where known.
    line: Option<usize>,
    /// The functions and aliases of the scripts being read (a `trap`'s
    /// action may call them).
    functions: Vec<String>,
    /// The first call after the script sourced a file (`. /lib.sh`): a
    /// name not found from there on may be a function of that file.
    sourced_at: Option<usize>,
    /// The shell variables whose values are known at the command being
    /// read: the container's environment, then what the script assigned.
    vars: Vars,
    /// The script files of the container's volumes.
    files: Files,
    /// The script file being read, and its nesting depth.
    file: Option<(String, usize)>,
}

impl Calls {
    /// The script file of a volume being read, if one is.
    fn file_name(&self) -> Option<String> {
        self.file.as_ref().map(|(f, _)| f.clone())
    }

    /// The script file a volume holds that `word` names, with its text:
    /// a path from the folder the script is in, or (`by_name`, for a
    /// command or `.`) a name looked up on `PATH`.
    fn volume_file(&self, word: &str, by_name: bool) -> Option<(String, String)> {
        let files = &self.files;
        if files.texts.is_empty() {
            return None;
        }
        let cwd = self.scope.cwd_over(&files.cwd);
        let found = |p: &str| {
            let p = super::process::absolute(p, &cwd);
            files.texts.get(&p).map(|t| (p, t.clone()))
        };
        if word.contains('/') || !by_name {
            return found(word);
        }
        self.scope
            .path_over(&files.path)
            .split(':')
            .find_map(|dir| found(&format!("{dir}/{word}")))
    }

    /// Runs `read` as a nested shell does: with the exported variables
    /// alone, and the parent's as they were after it.
    fn in_child_shell(&mut self, read: impl FnOnce(&mut Calls)) {
        let child = self.vars.for_child();
        let parent = std::mem::replace(&mut self.vars, child);
        read(self);
        self.vars = parent;
    }

    /// Reads the text of a volume's script file `file` (run by `shell`,
    /// with `params` as its `$0`, `$1`…), as a shell of its own unless
    /// `sourced` (`. FILE`).
    fn read_file(
        &mut self,
        (file, text): (String, String),
        shell: &str,
        params: &[&str],
        depth: usize,
        sourced: bool,
    ) {
        if self.file.as_ref().is_some_and(|(f, _)| *f == file) || depth >= MAX_NESTING {
            return;
        }
        let text = with_parameters(&text, params).into_owned();
        let outer_file = self.file.replace((file, depth + 1));
        let outer_shell = self.shell.replace(shell.to_string());
        let outer_line = self.line.take();
        match sourced {
            true => read_script(&text, depth + 1, self),
            false => self.in_child_shell(|out| read_script(&text, depth + 1, out)),
        }
        self.line = outer_line;
        self.shell = outer_shell;
        self.file = outer_file;
    }
}

/// The shell a script file's `#!` line names (`#!/bin/sh`,
/// `#!/usr/bin/env bash`), when it names one.
fn shebang_shell(text: &str) -> Option<String> {
    let line = text.strip_prefix("#!")?.lines().next()?;
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let shell = match base_name(first) {
        "env" => words.find(|w| !w.starts_with('-'))?,
        _ => first,
    };
    SHELLS
        .contains(&base_name(shell))
        .then(|| shell.to_string())
}

/// Shell variables with a value known before the script runs, by name; a
/// name missing is only known when it runs. Which of them are exported:
/// a nested shell (`sh -c '…'`) sees only those.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Vars {
    known: std::collections::BTreeMap<String, String>,
    exported: std::collections::BTreeSet<String>,
}

impl Vars {
    fn get(&self, name: &str) -> Option<&str> {
        self.known.get(name).map(String::as_str)
    }

    /// `NAME=VALUE`, `None` for a value only known when the script runs.
    fn set(&mut self, name: &str, value: Option<String>) {
        match value {
            Some(v) => self.known.insert(name.to_string(), v),
            None => self.known.remove(name),
        };
    }

    /// After a part of the script that may or may not have run and left
    /// `then`: only the values both agree on stay known.
    fn maybe(mut self, then: &Vars) -> Vars {
        self.known.retain(|k, v| then.known.get(k) == Some(v));
        self
    }

    /// What a nested shell starts with: the exported variables.
    fn for_child(&self) -> Vars {
        let mut child = self.clone();
        child.known.retain(|k, _| self.exported.contains(k));
        child
    }
}

/// The last path segment of a program (`/bin/sh` → `sh`).
pub fn base_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// The script of a shell invocation `SHELL [OPTIONS] -c SCRIPT [NAME ARGS…]`,
/// if `argv` is one, read as the shell reads its options: `-c` may sit in
/// a cluster (`-ec`, `-co pipefail`) or anywhere before the script; each
/// `o` or `O` of a cluster (`-o NAME`, `+o NAME`, `-euo pipefail`, bash's
/// `-O SHOPT`) and bash's `--rcfile FILE` and `--init-file FILE` take the
/// next word; `--` or `-` ends the options. The script is the first word
/// that is not an option.
pub fn script_of(argv: &[String]) -> Option<&str> {
    shell_operand(argv).and_then(|(has_c, word)| has_c.then_some(word))
}

/// The script file a shell runs without `-c` (`sh /probe.sh`): its
/// commands are in a file of the image, which basepress does not read.
fn script_file_of(argv: &[String]) -> Option<&str> {
    shell_operand(argv).and_then(|(has_c, word)| (!has_c).then_some(word))
}

/// The script file `call` gives a shell (`sh /probe.sh`), when it does.
pub fn script_file(call: &Call) -> Option<&str> {
    let known: Option<Vec<String>> = call.argv.iter().cloned().collect();
    let file = script_file_of(&known?)?.to_string();
    call.argv
        .iter()
        .flatten()
        .find(|w| **w == file)
        .map(String::as_str)
}

/// The first word of a shell invocation that is not an option, and
/// whether `-c` came before it (then it is the script, else a file).
fn shell_operand(argv: &[String]) -> Option<(bool, &str)> {
    // `busybox sh -c …` runs its `sh` applet.
    let argv = match argv.split_first() {
        Some((first, rest)) if base_name(first) == "busybox" => rest,
        _ => argv,
    };
    let shell = base_name(argv.first()?);
    if !SHELLS.contains(&shell) {
        return None;
    }
    let mut has_c = false;
    // Words still owed to options as their arguments.
    let mut owed = 0usize;
    let mut words = argv.iter().skip(1);
    while let Some(a) = words.next() {
        if owed > 0 {
            owed -= 1;
            continue;
        }
        if a == "--" || a == "-" {
            return words.next().map(|w| (has_c, w.as_str()));
        }
        if let Some(long) = a.strip_prefix("--") {
            if matches!(long, "rcfile" | "init-file") {
                owed += 1;
            }
            continue;
        }
        let cluster = a.strip_prefix('-').or_else(|| a.strip_prefix('+'));
        match cluster {
            Some(letters) if !letters.is_empty() => {
                has_c |= a.starts_with('-') && letters.contains('c');
                owed += letters.chars().filter(|&l| l == 'o' || l == 'O').count();
            }
            _ => return Some((has_c, a.as_str())),
        }
    }
    None
}

/// Programs that run the command given after their own options, and
/// (options that take the next word, words before the command):
/// `env [OPTION|NAME=VALUE]… CMD`, `timeout [OPTION]… DURATION CMD`, …
const WRAPPERS: &[(&str, &[&str], usize)] = &[
    ("env", &["-u", "--unset", "-C", "--chdir"], 0),
    ("nohup", &[], 0),
    ("nice", &["-n", "--adjustment"], 0),
    ("timeout", &["-s", "--signal", "-k", "--kill-after"], 1),
    (
        "stdbuf",
        &["-i", "-o", "-e", "--input", "--output", "--error"],
        0,
    ),
    ("setsid", &[], 0),
    ("tini", &["-p", "-e"], 0),
    (
        "xargs",
        &[
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "-d",
            "-E",
            "-a",
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-lines",
            "--max-chars",
            "--replace",
        ],
        0,
    ),
    ("su-exec", &[], 1),
    ("time", &["-f", "-o", "--format", "--output"], 0),
    ("ionice", &["-c", "-n", "--class", "--classdata"], 0),
    ("taskset", &[], 1),
    ("chrt", &[], 1),
    ("prlimit", &[], 0),
    ("gosu", &[], 1),
    ("dumb-init", &["-r", "--rewrite"], 0),
];

/// Where `env` looks for its command when it runs it without a `PATH`.
const ENV_DEFAULT_PATH: &str = "/bin:/usr/bin";

/// The command a wrapper (`env`, `nohup`, `timeout`, `tini`, …) runs, as
/// the words from that command on; `Err` says why it cannot be known.
fn wrapped(argv: &[Option<String>]) -> Result<Option<&[Option<String>]>, String> {
    let Some(program) = argv.first().and_then(|p| p.as_deref()) else {
        return Ok(None);
    };
    let name = base_name(program);
    // `busybox timeout 5 CMD`: the applet wraps as the program would.
    if name == "busybox" && argv.len() > 1 {
        return wrapped(&argv[1..]);
    }
    // Given a process id (`taskset -p`, `chrt -p`, `ionice -p`,
    // `prlimit -p`), they change a running process and run nothing.
    let pid_form = matches!(name, "taskset" | "chrt" | "ionice" | "prlimit")
        && argv[1..]
            .iter()
            .flatten()
            .any(|w| w == "-p" || w == "--pid");
    if pid_form {
        return Ok(None);
    }
    let Some(&(_, takes_value, before)) = WRAPPERS.iter().find(|(w, _, _)| *w == name) else {
        return Ok(None);
    };
    let unknown = || format!("`{name}` runs a command only known when it runs");
    let mut i = 1;
    let mut options = true;
    while let Some(word) = argv.get(i) {
        let Some(w) = word.as_deref() else {
            return Err(unknown());
        };
        // After `--`, `env` still takes NAME=VALUE words.
        if w == "--" && options {
            i += 1;
            options = false;
            if name == "env" {
                continue;
            }
            break;
        }
        if !options {
            if name == "env" && w.contains('=') {
                i += 1;
                continue;
            }
            break;
        }
        // `env -` (or `-i`) starts from an empty environment.
        if name == "env" && matches!(w, "-" | "-i" | "--ignore-environment") {
            i += 1;
            continue;
        }
        if name == "env"
            && (matches!(w, "-S" | "--split-string") || w.starts_with("--split-string="))
        {
            return Err(format!("`{name} {w}` splits its command out of a string"));
        }
        if w.len() > 1 && w.starts_with('-') {
            i += option_words(w, takes_value);
            continue;
        }
        if name == "env" && w.contains('=') {
            i += 1;
            continue;
        }
        break;
    }
    let i = i + before;
    Ok(argv.get(i..).filter(|rest| !rest.is_empty()))
}

/// How many words option word `w` takes, its value included: a long
/// option (`--chdir DIR`) as listed; a cluster of short ones (`-iu NAME`)
/// as `getopt` reads it, the first that takes a value taking the rest of
/// the word (`-uNAME`), else the next word.
fn option_words(w: &str, takes_value: &[&str]) -> usize {
    if w.starts_with("--") {
        return if takes_value.contains(&w) { 2 } else { 1 };
    }
    let letters = &w[1..];
    for (at, c) in letters.char_indices() {
        let option = format!("-{c}");
        if takes_value.contains(&option.as_str()) {
            let attached = at + c.len_utf8() < letters.len();
            return if attached { 1 } else { 2 };
        }
    }
    1
}

/// Every command `argv` (a container command, a probe's or a hook's exec)
/// can run: itself, and when it is a shell with a script, the commands of
/// the script.
/// A word only known when the pod runs is `None`.
pub fn calls(argv: &[Option<String>]) -> Calls {
    calls_in(argv, std::iter::empty(), Files::default())
}

/// [`calls`] of a process whose environment gives `env` (name, value),
/// with the script files of its volumes: a script's `$NAME` is that value
/// until the script changes it, and a script file it runs is read.
pub fn calls_in<'e>(
    argv: &[Option<String>],
    env: impl IntoIterator<Item = (&'e str, &'e str)>,
    files: Files,
) -> Calls {
    let mut out = Calls {
        files,
        ..Calls::default()
    };
    for (name, value) in env {
        out.vars.set(name, Some(value.to_string()));
        out.vars.exported.insert(name.to_string());
    }
    if argv.first().is_some_and(Option::is_none) {
        out.dynamic
            .push("its program is named by a variable only known when the pod runs".into());
    }
    follow(argv.to_vec(), false, 0, &mut out);
    out
}

/// One call, and what it runs in turn: the command of a wrapper
/// (`env CMD`), the script of a shell (`sh -c SCRIPT`), or a script file,
/// which is named as not analysed.
fn follow(argv: Vec<Option<String>>, in_script: bool, depth: usize, out: &mut Calls) {
    if argv.is_empty() {
        return;
    }
    // What a wrapper runs, and for `env`, the words before it.
    let inner = match wrapped(&argv) {
        Ok(inner) => inner.map(|rest| {
            let settings: Vec<String> = match argv.first().and_then(|p| p.as_deref()) {
                Some(p) if base_name(p) == "env" => argv
                    .get(1..argv.len().saturating_sub(rest.len()))
                    .unwrap_or_default()
                    .iter()
                    .flatten()
                    .cloned()
                    .collect(),
                _ => Vec::new(),
            };
            (rest.to_vec(), settings)
        }),
        Err(why) => {
            out.dynamic.push(why);
            None
        }
    };
    // A program of the image that runs its arguments (`exec "$@"`).
    let inner = inner.or_else(|| {
        let program = argv.first()?.as_deref()?;
        (argv.len() > 1 && out.files.wraps(program)).then(|| (argv[1..].to_vec(), Vec::new()))
    });
    let known: Option<Vec<String>> = argv.iter().cloned().collect();
    let scope = out.scope.clone();
    out.calls.push(Call {
        argv,
        in_script,
        scope,
        bash_only: None,
        guarded: false,
        line: out.line,
        file: out.file_name(),
    });
    if let Some((inner, settings)) = inner {
        // `env PATH=… CMD` and `env -C DIR CMD` run CMD there.
        let outer = out.scope.clone();
        for (i, w) in settings.iter().enumerate() {
            if let Some(path) = w.strip_prefix("PATH=") {
                // `env` sets it as written: no `$PATH` to expand.
                out.scope.path = Some(path.to_string());
                out.scope.path_unknown = false;
            }
            if matches!(w.as_str(), "-C" | "--chdir") {
                if let Some(dir) = settings.get(i + 1) {
                    out.scope.cd(dir);
                }
            } else if let Some(dir) = w
                .strip_prefix("--chdir=")
                .or_else(|| w.strip_prefix("-C").filter(|d| !d.is_empty()))
            {
                out.scope.cd(dir);
            }
            // Without PATH (`env -i`, `env -u PATH`), env's exec searches
            // the C library's default: /bin and /usr/bin.
            let unsets_path = matches!(w.as_str(), "-" | "-i" | "--ignore-environment")
                || w == "--unset=PATH"
                || (matches!(w.as_str(), "-u" | "--unset")
                    && settings.get(i + 1).is_some_and(|n| n == "PATH"));
            if unsets_path {
                out.scope.path = Some(ENV_DEFAULT_PATH.to_string());
                out.scope.path_unknown = false;
            }
        }
        follow(inner, in_script, depth, out);
        out.scope = outer;
    }
    let Some(known) = known else {
        // A shell whose script holds a value only known when the pod runs
        // (`sh -c "tool $(TOKEN)"`): none of its commands can be named.
        let call = out.calls.last();
        let shell = call
            .and_then(Call::program)
            .map(base_name)
            .is_some_and(|p| SHELLS.contains(&p) || p == "busybox");
        if shell {
            let shown = call.map(Call::display).unwrap_or_default();
            out.dynamic.push(format!(
                "`{}` has a word only known when the pod runs",
                shown.chars().take(60).collect::<String>()
            ));
        }
        return;
    };
    if let Some(script) = script_of(&known) {
        let outer = out.shell.replace(known[0].clone());
        let options: Vec<&str> = known[1..]
            .iter()
            .map(String::as_str)
            .take_while(|w| *w != script)
            .collect();
        if sets_pipefail(&options) {
            bash_only(vec![Some("-o pipefail".into())], out);
        }
        // The words after the script are its `$0`, `$1`…, known here.
        let params: Vec<&str> = known
            .iter()
            .skip_while(|w| w.as_str() != script)
            .skip(1)
            .map(String::as_str)
            .collect();
        let script = with_parameters(script, &params);
        out.in_child_shell(|out| read_script(&script, depth, out));
        out.shell = outer;
    } else if let Some(file) = script_file_of(&known) {
        // `sh FILE ARG…`: FILE is `$0`, the words after it `$1`….
        let params: Vec<&str> = known
            .iter()
            .skip_while(|w| w.as_str() != file)
            .map(String::as_str)
            .collect();
        match out.volume_file(file, false) {
            Some(found) => out.read_file(found, &known[0], &params, depth, false),
            None => out.dynamic.push(format!(
                "`{}` runs the commands of the file {file}",
                known.join(" ").chars().take(60).collect::<String>()
            )),
        }
    } else if let Some(found) = out.volume_file(&known[0], true) {
        // A script file of a volume, run by the shell of its `#!` line.
        if let Some(shell) = shebang_shell(&found.1) {
            let params: Vec<&str> = known.iter().map(String::as_str).collect();
            out.read_file(found, &shell, &params, depth, false);
        }
    } else if SHELLS.contains(&base_name(&known[0]))
        && (in_script || known.iter().any(|w| w == "-s"))
        && !known
            .iter()
            .any(|w| matches!(w.as_str(), "--version" | "--help" | "-n"))
    {
        // `… | sh`, `sh -s`, `sh <<EOF`: the commands come on its input.
        out.dynamic.push(format!(
            "`{}` reads the commands it runs from its input",
            known.join(" ").chars().take(60).collect::<String>()
        ));
    }
}

/// `script` with its positional parameters written in, as the shell
/// expands them from the words after the script (`sh -c 'tool $1' sh
/// ready` runs `tool ready`): `$0` to `$9`, `${N}`, `$#`, and `$@`, `$*`
/// and `"$@"` as the words they stand for. A parameter the words do not
/// give is empty; one given with a line break is left as written. Only
/// when the words give the script's `$0` at least: without them, `$0` is
/// the shell's own name and is left as written too.
fn with_parameters<'s>(script: &'s str, params: &[&str]) -> std::borrow::Cow<'s, str> {
    if params.is_empty() || !script.contains('$') || params.iter().any(|p| p.contains('\n')) {
        return script.into();
    }
    // A value as one word, in the quoting it is written in.
    let single = |v: &str| format!("'{}'", v.replace('\'', "'\\''"));
    let double = |v: &str| {
        v.chars().fold(String::new(), |mut o, c| {
            if matches!(c, '"' | '$' | '`' | '\\') {
                o.push('\\');
            }
            o.push(c);
            o
        })
    };
    let args = params.get(1..).unwrap_or_default();
    let mut out = String::with_capacity(script.len());
    let (mut in_single, mut in_double) = (false, false);
    let mut rest = script;
    while let Some(c) = rest.chars().next() {
        let after = &rest[c.len_utf8()..];
        match c {
            '\'' if !in_double => in_single = !in_single,
            '"' if !in_single => {
                // `"$@"`: each argument a word of its own.
                if !in_double {
                    if let Some(tail) = after.strip_prefix("$@\"") {
                        let words: Vec<String> = args.iter().map(|a| single(a)).collect();
                        out.push_str(&words.join(" "));
                        rest = tail;
                        continue;
                    }
                }
                in_double = !in_double;
            }
            '\\' if !in_single => {
                let len = c.len_utf8() + after.chars().next().map_or(0, char::len_utf8);
                out.push_str(&rest[..len]);
                rest = &rest[len..];
                continue;
            }
            '$' if !in_single => {
                let (name, tail) = match after.as_bytes().first() {
                    Some(b'{') => match after[1..].split_once('}') {
                        Some((n, t)) if n.len() == 1 && n.as_bytes()[0].is_ascii_digit() => (n, t),
                        _ => ("", after),
                    },
                    Some(b'0'..=b'9' | b'@' | b'*' | b'#') => (&after[..1], &after[1..]),
                    _ => ("", after),
                };
                if !name.is_empty() {
                    let value = match name {
                        "#" => args.len().to_string(),
                        "@" | "*" if in_double => double(&args.join(" ")),
                        "@" | "*" => args.iter().map(|a| single(a)).collect::<Vec<_>>().join(" "),
                        n => {
                            let v = n.parse::<usize>().ok().and_then(|i| params.get(i)).copied();
                            match (v, in_double) {
                                (Some(v), true) => double(v),
                                (Some(v), false) => single(v),
                                (None, _) => String::new(),
                            }
                        }
                    };
                    out.push_str(&value);
                    rest = tail;
                    continue;
                }
            }
            _ => {}
        }
        out.push(c);
        rest = after;
    }
    out.into()
}

fn read_script(script: &str, depth: usize, out: &mut Calls) {
    if depth >= MAX_NESTING {
        out.dynamic
            .push("it nests `sh -c` more deeply than basepress follows".into());
        return;
    }
    if script.len() > MAX_SCRIPT {
        out.dynamic.push(format!(
            "its script is longer than the {MAX_SCRIPT} bytes basepress reads"
        ));
        return;
    }
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        out.dynamic
            .push("the shell parser could not be loaded".into());
        return;
    }
    // The shell joins a line ending in `\` with the next before it reads
    // words (`no\<newline>de` is `node`); the parser would not.
    let (script, joined) = join_continued_lines(script);
    let Some(mut tree) = parser.parse(&script, None) else {
        out.dynamic.push("its script could not be parsed".into());
        return;
    };
    let mut script = script;
    if tree.root_node().has_error() {
        // Forms the shells take that the parser's grammar lacks: a
        // closing word right after another (`fi done`, `} }`), and
        // `for i do` (over the arguments).
        let repaired = repair(&script);
        if let Some(t) = parser
            .parse(&repaired, None)
            .filter(|t| !t.root_node().has_error())
        {
            tree = t;
            script = repaired;
        }
    }
    let root = tree.root_node();
    if root.has_error() {
        out.dynamic.push(
            "basepress's shell parser cannot read its script (it may be invalid, or a form the parser lacks), so none of its commands are checked"
                .into(),
        );
        return;
    }
    let src = script.as_bytes();
    let inherited = out.functions.len();
    out.functions.extend(function_names(root, src));
    let guards = guards(root, src);
    let uncalled = uncalled_functions(root, src);
    // Where in the script each of its calls is.
    let mut placed: Vec<(usize, usize)> = Vec::new();
    // What a file sourced here defines is this script's (not its parent's,
    // for a `sh -c '. lib.sh; …'` inside it).
    let sourced_before = out.sourced_at.take();
    // Nothing after a top-level `exec CMD` or `exit` runs.
    let end = reachable_end(root, src);
    // Every `command` node, wherever it is: in lists, pipelines, `if`,
    // loops and command substitutions; and the `PATH` assignments between
    // them, in the order they run. What the script changes stays in it.
    let outer = out.scope.clone();
    let vars_before = out.vars.clone();
    // Parts of the script whose changes stay in them (a subshell, a
    // pipeline, a substitution), or may not happen (a branch, a loop, a
    // function's body): each with its end and the scope and variables
    // before it.
    let mut regions: Vec<(usize, Scope, Vars, bool)> = Vec::new();
    let mut changed_in_script: Option<Vec<String>> = None;
    let mut kinds = vec![
        "command",
        "variable_assignment",
        "heredoc_body",
        "test_command",
        "declaration_command",
        "unset_command",
    ];
    kinds.extend(ISOLATED);
    kinds.extend(MAYBE);
    kinds.extend(BASH_SYNTAX);
    for node in nodes_of_kinds(root, &kinds) {
        if node.start_byte() >= end {
            break;
        }
        while let Some((end, saved, vars, isolated)) = regions.pop() {
            if node.start_byte() < end {
                regions.push((end, saved, vars, isolated));
                break;
            }
            (out.scope, out.vars) = if isolated {
                (saved, vars)
            } else {
                (saved.maybe(&out.scope), vars.maybe(&out.vars))
            };
        }
        if depth == 0 || out.file.as_ref().is_some_and(|(_, d)| *d == depth) {
            // The line as written: the rows before it, and the lines the
            // shell joined to others before it.
            let at = node.start_byte();
            out.line =
                Some(node.start_position().row + joined.iter().filter(|&&j| j <= at).count());
        }
        if BASH_SYNTAX.contains(&node.kind()) {
            if let Some(form) = bash_syntax(node, src) {
                bash_only(vec![Some(form)], out);
            }
        }
        if ISOLATED.contains(&node.kind()) || MAYBE.contains(&node.kind()) {
            let isolated = ISOLATED.contains(&node.kind());
            regions.push((
                node.end_byte(),
                out.scope.clone(),
                out.vars.clone(),
                isolated,
            ));
            forget_changed_inside(node, src, &mut out.vars, &mut changed_in_script);
            continue;
        }
        if node.kind() == "expansion" {
            // The outermost `${…}` only: its text holds the inner ones.
            let nested = std::iter::successors(node.parent(), |p| p.parent())
                .any(|p| p.kind() == "expansion")
                || in_quoted_heredoc(node, src);
            if !nested && node.utf8_text(src).is_ok_and(|t| t.contains('`')) {
                let before = out.calls.len();
                unparsed_substitutions(node, src, depth, out);
                placed.extend((before..out.calls.len()).map(|i| (i, node.start_byte())));
            }
        } else if node.kind() == "file_redirect" {
            // Read above as syntax (`&>`); what it writes to.
            if !in_quoted_heredoc(node, src)
                && !uncalled.iter().any(|b| b.contains(&node.start_byte()))
            {
                written_to(node, src, out);
            }
        } else if BASH_SYNTAX.contains(&node.kind()) {
            // Read above; the commands inside are nodes of their own.
        } else if node.kind() == "heredoc_body" {
            let before = out.calls.len();
            heredoc_substitutions(node, src, depth, out);
            placed.extend((before..out.calls.len()).map(|i| (i, node.start_byte())));
        } else if node.kind() == "unset_command" {
            // `unset NAME` (and `unset -f`, `-v`): only known when it runs.
            let mut c = node.walk();
            for name in node
                .named_children(&mut c)
                .filter_map(|n| n.utf8_text(src).ok())
            {
                out.vars.set(name, None);
            }
        } else if matches!(node.kind(), "test_command" | "declaration_command") {
            // `[[ … ]]` and `declare`/`typeset`, which the parser reads
            // as syntax of their own: bash's alone.
            let text = node.utf8_text(src).unwrap_or_default();
            let word = text.split_whitespace().next().unwrap_or_default();
            // `export NAME`, `local NAME`: what the assignments beside
            // them do is read with those.
            let mut c = node.walk();
            for name in node
                .named_children(&mut c)
                .filter(|n| n.kind() == "variable_name")
                .filter_map(|n| n.utf8_text(src).ok())
            {
                match word {
                    "export" => {
                        out.vars.exported.insert(name.to_string());
                    }
                    _ => out.vars.set(name, None),
                }
            }
            if matches!(word, "[[" | "declare" | "typeset") {
                let argv = text
                    .split_whitespace()
                    .map(|w| Some(w.to_string()))
                    .collect();
                bash_only(argv, out);
            }
        } else if node.kind() == "command"
            && (in_quoted_heredoc(node, src)
                || uncalled.iter().any(|b| b.contains(&node.start_byte())))
        {
            // Text of a body left as written, or of a function never called.
        } else if node.kind() == "command" {
            let before = out.calls.len();
            command(node, src, depth, out);
            placed.extend((before..out.calls.len()).map(|i| (i, node.start_byte())));
        } else if node.parent().is_none_or(|p| p.kind() != "command") {
            if let Some(path) = path_assignment(node, src) {
                out.scope.set_path(path);
            }
            assign(node, src, &mut out.vars);
            // `NAME+=VALUE` appends in bash; dash runs it as a command.
            let text = node.utf8_text(src).unwrap_or_default();
            if node
                .child_by_field_name("name")
                .is_some_and(|n| text[n.end_byte() - node.start_byte()..].starts_with("+="))
            {
                bash_only(vec![Some(text.chars().take(40).collect())], out);
            }
        }
    }
    out.scope = outer;
    out.vars = vars_before;
    out.functions.truncate(inherited);
    if depth == 0 {
        out.line = None;
    }
    for &(i, at) in &placed {
        let call = &mut out.calls[i];
        let asked = |g: &Guard| call.program() == Some(g.name.as_str()) && g.protects.contains(&at);
        if guards.iter().any(asked) {
            call.guarded = true;
        }
    }
    // After `. FILE`, a name may be a function FILE defines: its absence
    // from the image is no failure the script shows.
    if let Some(at) = out.sourced_at.take() {
        for call in out.calls.iter_mut().skip(at) {
            if call.program().is_some_and(|p| !p.contains('/')) {
                call.guarded = true;
            }
        }
    }
    out.sourced_at = sourced_before;
}

/// Whether a file a script sources (`. FILE`) may define the functions
/// it calls after: not one of settings (`/etc/os-release`, `*.env`).
fn may_define_functions(file: Option<&str>) -> bool {
    let Some(file) = file else {
        return true;
    };
    let name = base_name(file);
    let data = matches!(name, "os-release" | "environment" | "lsb-release")
        || [".env", ".conf", ".properties", ".cfg", ".ini"]
            .iter()
            .any(|e| name.ends_with(e));
    !data
}

/// Whether a shell's options (`set -o pipefail`, `-euo pipefail`,
/// `sh -o pipefail -c …`) turn on `pipefail`: each `o` of a cluster takes
/// the next word as its option's name.
fn sets_pipefail(options: &[&str]) -> bool {
    let mut owed = 0usize;
    for word in options {
        if owed > 0 {
            owed -= 1;
            if *word == "pipefail" {
                return true;
            }
            continue;
        }
        match word.strip_prefix('-') {
            Some(letters) if !letters.starts_with('-') => {
                owed += letters.chars().filter(|&l| l == 'o').count();
            }
            _ => {}
        }
    }
    false
}

/// Where what runs of a script ends: after the first top-level `exec
/// CMD` (the shell becomes CMD) or `exit`, nothing runs; the end of the
/// script if there is none.
fn reachable_end(root: Node, src: &[u8]) -> usize {
    let mut c = root.walk();
    let last = root.named_children(&mut c).find(|n| {
        n.kind() == "command"
            && words_of(*n, src).is_some_and(|w| match w.first() {
                Some(Some(name)) if name == "exit" => true,
                Some(Some(name)) if name == "exec" => w.len() > 1,
                _ => false,
            })
    });
    last.map_or(usize::MAX, |n| n.end_byte())
}

/// Syntax of bash that POSIX shells such as dash refuse or read
/// otherwise (the nodes [`bash_syntax`] looks at).
const BASH_SYNTAX: &[&str] = &[
    "array",
    "herestring_redirect",
    "process_substitution",
    "compound_statement",
    "function_definition",
    "expansion",
    "file_redirect",
];

/// The form, as written, when `node` is bash's alone: an array
/// (`a=(x y)`), a here-string (`<<<`), a process substitution (`<(…)`),
/// `((…))`, `function NAME`, `${x:0:1}`, `${x/a/b}`, `${x^^}`, `${!x}`,
/// `&>`.
fn bash_syntax(node: Node, src: &[u8]) -> Option<String> {
    let text = node.utf8_text(src).ok()?;
    let bash = match node.kind() {
        "array" | "herestring_redirect" | "process_substitution" => true,
        "compound_statement" => text.starts_with("(("),
        "function_definition" => node.child(0).is_some_and(|c| c.kind() == "function"),
        "file_redirect" => text.starts_with("&>"),
        "expansion" => {
            let inner = text.strip_prefix("${")?;
            let name_end = inner
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(inner.len());
            let op = &inner[name_end..];
            inner
                .strip_prefix('!')
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
                || op.starts_with(['/', '^', ','])
                || (op.starts_with(':')
                    && op[1..].starts_with(|c: char| c.is_ascii_digit() || c == ' '))
        }
        _ => false,
    };
    let first_line = text.lines().next().unwrap_or_default();
    bash.then(|| first_line.chars().take(40).collect())
}

/// A program a script asks for before it runs it (`command -v NAME`,
/// `which NAME`, `type NAME`, `hash NAME`, or a file test, `[ -x PATH ]`,
/// `test -f PATH`, `[[ -e PATH ]]`), and the bytes of the script where
/// the answer keeps the script from running it when it is absent.
struct Guard {
    name: String,
    protects: std::ops::Range<usize>,
}

/// The guards of a script: a question protects the calls it keeps from
/// running when the program is absent, and no others. That is the right
/// side of `Q && CALL` (unless that list is the script's last statement,
/// whose failure is the probe's), the `then` of `if Q; then CALL; fi` (the
/// `else` of `if ! Q`), and everything after `Q || exit 0` or `if ! Q;
/// then exit 0; fi` in the same block. An answer the script ignores (`Q;
/// CALL`), a question after the call, and an "absent" branch that exits
/// with a failure (`Q || exit 1`: without the program the probe fails all
/// the same) protect nothing.
fn guards(root: Node, src: &[u8]) -> Vec<Guard> {
    const FILE_TESTS: &[&str] = &["-x", "-f", "-e", "-s", "-r", "-L", "-h"];
    let mut out = Vec::new();
    for node in nodes_of_kinds(root, &["command", "test_command"]) {
        let words = match node.kind() {
            "test_command" => node
                .utf8_text(src)
                .unwrap_or_default()
                .split_whitespace()
                .map(|w| Some(w.to_string()))
                .collect(),
            _ => match words_of(node, src) {
                Some(words) => words,
                None => continue,
            },
        };
        let (Some(Some(name)), args) = (words.first(), &words[1..]) else {
            continue;
        };
        // The programs asked for: the words after the options.
        let programs = || {
            let words = args.iter().flatten().filter(|a| !a.starts_with('-'));
            words.cloned().collect()
        };
        let asked: Vec<String> = match name.as_str() {
            "command" if only_asks(args) => programs(),
            "which" | "type" | "hash" => programs(),
            "[" | "[[" | "test" => args
                .windows(2)
                .filter(|w| w[0].as_deref().is_some_and(|op| FILE_TESTS.contains(&op)))
                .filter_map(|w| w[1].clone())
                .collect(),
            _ => continue,
        };
        for protects in protected(node, src) {
            out.extend(asked.iter().map(|name| Guard {
                name: name.clone(),
                protects: protects.clone(),
            }));
        }
    }
    out
}

/// The parts of the script that run only when the question `node`
/// answers "present", or only after an "absent" answer stopped the
/// script without a failure (see [`guards`]).
fn protected(node: Node, src: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut n = node;
    let mut negated = false;
    while let Some(p) = n.parent() {
        match p.kind() {
            "redirected_statement" => n = p,
            "negated_command" => {
                negated = !negated;
                n = p;
            }
            _ => break,
        }
    }
    let Some(parent) = n.parent() else {
        return Vec::new();
    };
    // The rest of the block the statement is in, after it.
    let after = |statement: Node| {
        let end = statement.parent().map_or(src.len(), |b| b.end_byte());
        statement.end_byte()..end
    };
    let (on_yes, on_no) = if negated { ("||", "&&") } else { ("&&", "||") };
    match parent.kind() {
        "list" if n.next_sibling().is_some_and(|o| o.kind() == on_yes) => {
            // `Q && CALL && …`: the rest of the list, unless its status
            // is the script's.
            let mut list = parent;
            while let Some(p) = list.parent().filter(|p| p.kind() == "list") {
                list = p;
            }
            let last = list.parent().is_some_and(|p| p.kind() == "program")
                && next_statement(list).is_none();
            match last {
                true => Vec::new(),
                false => std::iter::once(n.end_byte()..list.end_byte()).collect(),
            }
        }
        "list" if n.next_sibling().is_some_and(|o| o.kind() == on_no) => {
            match n.next_named_sibling() {
                Some(stop) if stops_without_failing(stop, src) => {
                    std::iter::once(after(parent)).collect()
                }
                _ => Vec::new(),
            }
        }
        "if_statement" => {
            let mut c = parent.walk();
            let kids: Vec<Node> = parent.children(&mut c).collect();
            let then: Vec<Node> = kids
                .iter()
                .skip_while(|k| k.kind() != "then")
                .skip(1)
                .take_while(|k| !matches!(k.kind(), "elif_clause" | "else_clause" | "fi"))
                .filter(|k| k.is_named())
                .copied()
                .collect();
            let other: Vec<Node> = kids
                .iter()
                .filter(|k| k.kind() == "else_clause")
                .copied()
                .collect();
            let (present, absent) = if negated {
                (other, then)
            } else {
                (then, other)
            };
            // Without the program the script fails all the same.
            if absent.iter().any(|k| exits_failing(*k, src)) {
                return Vec::new();
            }
            let mut out: Vec<_> = present
                .iter()
                .map(|k| k.start_byte()..k.end_byte())
                .collect();
            if absent.iter().any(|k| stops_without_failing(*k, src)) {
                out.push(after(parent));
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The next statement of `node`'s block, comments aside.
fn next_statement(node: Node) -> Option<Node> {
    let mut n = node.next_named_sibling();
    while let Some(s) = n.filter(|s| s.kind() == "comment") {
        n = s.next_named_sibling();
    }
    n
}

/// Whether `node` ends the script with `exit` and a status that is no
/// failure (`exit 0`; not `exit 1`, nor a bare `exit` right after a failed
/// question, which keeps its status).
fn stops_without_failing(node: Node, src: &[u8]) -> bool {
    let exits = nodes_of_kind(node, "command").into_iter().any(|c| {
        words_of(c, src).is_some_and(|w| w.first().is_some_and(|n| n.as_deref() == Some("exit")))
    });
    exits && !exits_failing(node, src)
}

/// Whether `node` holds an `exit` with a failing status (`exit 1`; a
/// bare `exit` right after the failed question, in `… || exit`, keeps its
/// failing status).
fn exits_failing(node: Node, src: &[u8]) -> bool {
    nodes_of_kind(node, "command").into_iter().any(|c| {
        words_of(c, src).is_some_and(|w| {
            let exit = w.first().is_some_and(|n| n.as_deref() == Some("exit"));
            exit && match w.get(1) {
                Some(Some(a)) => a != "0",
                Some(None) => false,
                None => c.id() == node.id(),
            }
        })
    })
}

/// The file a redirection writes to (`>`, `>>`, `>|`, `&>`, `&>>`; not
/// `<`, nor `>&2`, which points at another descriptor), when its path is
/// known before the script runs.
fn written_to(node: Node, src: &[u8], out: &mut Calls) {
    let Some(dest) = node.child_by_field_name("destination") else {
        return;
    };
    let from = node
        .child_by_field_name("descriptor")
        .map_or(node.start_byte(), |d| d.end_byte());
    let operator = std::str::from_utf8(&src[from..dest.start_byte()])
        .unwrap_or_default()
        .trim();
    if !matches!(operator, ">" | ">>" | ">|" | "&>" | "&>>") {
        return;
    }
    let Some(path) = literal_in(dest, src, &out.vars, true).filter(|p| !p.is_empty()) else {
        return;
    };
    out.writes.push(Write {
        path,
        scope: out.scope.clone(),
        line: out.line,
        file: out.file_name(),
    });
}

/// Whether `command`'s options (`-v`, `-V`, `-pv`) make it print where a
/// program is, running nothing.
fn only_asks(args: &[Option<String>]) -> bool {
    args.iter()
        .map_while(|a| a.as_deref().filter(|a| a.starts_with('-')))
        .any(|flags| flags.contains(['v', 'V']))
}

/// The words of a `command` node as the shell passes them: its name, then
/// its arguments (`None` for one only known when the script runs).
fn words_of(node: Node, src: &[u8]) -> Option<Vec<Option<String>>> {
    words_in(node, src, &Vars::default())
}

/// [`words_of`], with the variables known at the command: an unquoted
/// `$NAME` whose value is known splits into the words of that value, as
/// the shell splits it (none for an empty one).
fn words_in(node: Node, src: &[u8], vars: &Vars) -> Option<Vec<Option<String>>> {
    let name = node.child_by_field_name("name")?;
    let mut c = node.walk();
    let arguments = node.children_by_field_name("argument", &mut c);
    let mut words = Vec::new();
    for word in std::iter::once(name).chain(arguments) {
        let only = match word.kind() {
            "command_name" => {
                let mut c = word.walk();
                let kids: Vec<Node> = word.named_children(&mut c).collect();
                match kids.as_slice() {
                    [only] => *only,
                    _ => word,
                }
            }
            _ => word,
        };
        match only.kind() {
            "simple_expansion" | "expansion" => match variable(only, src, vars) {
                Some(Some(value)) if !has_glob(value) => words.extend(
                    value
                        .split([' ', '\t', '\n'])
                        .filter(|w| !w.is_empty())
                        .map(|w| Some(w.to_string())),
                ),
                _ => words.push(None),
            },
            _ => words.push(literal_in(word, src, vars, true)),
        }
    }
    Some(words)
}

/// Whether an unquoted value holds a pattern the shell would match
/// against files.
fn has_glob(value: &str) -> bool {
    value.contains(['*', '?', '['])
}

/// What `$NAME` or `${NAME}` gives: `None` for another expansion
/// (`${NAME:-x}`, `$1`, `$?`), `Some(None)` for a variable only known
/// when the script runs.
fn variable<'v>(node: Node, src: &[u8], vars: &'v Vars) -> Option<Option<&'v str>> {
    let text = node.utf8_text(src).ok()?;
    let name = text.strip_prefix('$')?;
    let name = match name.strip_prefix('{') {
        Some(braced) => braced.strip_suffix('}')?,
        None => name,
    };
    let plain = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !plain {
        return None;
    }
    Some(vars.get(name))
}

/// `NAME=VALUE` (alone, or after `export`, `local`, `readonly`): NAME
/// holds VALUE when it is known, else is only known when the script runs.
fn assign(node: Node, src: &[u8], vars: &mut Vars) {
    let Some(name) = node
        .child_by_field_name("name")
        .and_then(|n| n.utf8_text(src).ok())
    else {
        return;
    };
    let value = match node.child_by_field_name("value") {
        // No word splitting in an assignment.
        Some(v) => literal_in(v, src, vars, false),
        None => Some(String::new()),
    };
    let appends = node
        .utf8_text(src)
        .is_ok_and(|t| t[name.len()..].starts_with("+="));
    let value = match appends {
        true => value.and_then(|v| Some(format!("{}{v}", vars.get(name)?))),
        false => value,
    };
    vars.set(name, value);
    let exports = node
        .parent()
        .and_then(|p| p.utf8_text(src).ok())
        .is_some_and(|t| t.starts_with("export"));
    if exports {
        vars.exported.insert(name.to_string());
    }
}

/// The names whose values a part of a script may change each time it runs
/// (a loop's body, run again with what the last round left) or before it
/// runs (a function's body, run when called): only known when it runs.
/// `in_script` holds, once found, the names the whole script changes.
fn forget_changed_inside(
    node: Node,
    src: &[u8],
    vars: &mut Vars,
    in_script: &mut Option<Vec<String>>,
) {
    let names = match node.kind() {
        "while_statement" | "for_statement" | "c_style_for_statement" => changed_names(node, src),
        // A function runs when called, after anything in the script.
        "function_definition" => in_script
            .get_or_insert_with(|| {
                let root = std::iter::successors(Some(node), |n| n.parent()).last();
                changed_names(root.unwrap_or(node), src)
            })
            .clone(),
        _ => return,
    };
    for name in names {
        vars.set(&name, None);
    }
}

/// Every name a part of a script assigns: `NAME=…`, `for NAME`, and the
/// builtins that set or unset one (`read`, `getopts`, `unset`…).
fn changed_names(node: Node, src: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    let kinds = [
        "variable_assignment",
        "for_statement",
        "command",
        "unset_command",
    ];
    for n in nodes_of_kinds(node, &kinds) {
        match n.kind() {
            "unset_command" => {
                let mut c = n.walk();
                let words = n
                    .named_children(&mut c)
                    .filter_map(|w| w.utf8_text(src).ok());
                names.extend(words.map(str::to_string));
            }
            "command" => {
                if let Some(words) = words_of(n, src) {
                    names.extend(set_by_builtin(&words).into_iter().flatten());
                }
            }
            _ => {
                let field = if n.kind() == "for_statement" {
                    "variable"
                } else {
                    "name"
                };
                if let Some(name) = n
                    .child_by_field_name(field)
                    .and_then(|v| v.utf8_text(src).ok())
                {
                    names.push(name.to_string());
                }
            }
        }
    }
    names
}

/// The names a builtin sets (`read NAME`, `local NAME`,
/// `getopts OPTS NAME`, `printf -v NAME`); `None` when it may set any
/// (`eval`, `.`, `source`).
fn set_by_builtin(words: &[Option<String>]) -> Option<Vec<String>> {
    let program = words.first().cloned().flatten().unwrap_or_default();
    let names = || {
        words
            .iter()
            .skip(1)
            .flatten()
            .filter(|w| !w.starts_with('-'))
            .cloned()
            .collect()
    };
    match program.as_str() {
        "eval" | "." | "source" => None,
        "read" | "getopts" | "mapfile" | "readarray" | "local" | "typeset" | "declare" => {
            Some(names())
        }
        "printf" => Some(
            words
                .windows(2)
                .filter(|w| w[0].as_deref() == Some("-v"))
                .filter_map(|w| w[1].clone())
                .collect(),
        ),
        _ => Some(Vec::new()),
    }
}

/// Parts of a script that run in a child process: a `cd` or a `PATH` set
/// there is gone after them.
const ISOLATED: &[&str] = &["subshell", "command_substitution", "pipeline"];

/// Parts of a script that may run or not, or run later: after them, a
/// folder or `PATH` they change is only known when the script runs.
const MAYBE: &[&str] = &[
    "if_statement",
    "case_statement",
    "while_statement",
    "for_statement",
    "c_style_for_statement",
    "function_definition",
];

/// A builtin of bash alone: nothing under bash, a call the image decides
/// on under another shell.
fn bash_only(argv: Vec<Option<String>>, out: &mut Calls) {
    let shell = out.shell.clone().unwrap_or_default();
    if shell.is_empty() || BASH_LIKE.contains(&base_name(&shell)) {
        return;
    }
    let scope = out.scope.clone();
    out.calls.push(Call {
        argv,
        in_script: true,
        scope,
        bash_only: Some(shell),
        guarded: false,
        line: out.line,
        file: out.file_name(),
    });
}

/// The script with each backslash-newline removed where the shell
/// removes it: everywhere but inside single quotes.
fn join_continued_lines(script: &str) -> (String, Vec<usize>) {
    let mut joined = Vec::new();
    if !script.contains("\\\n") {
        return (script.to_string(), joined);
    }
    let mut out = String::with_capacity(script.len());
    let mut chars = script.chars().peekable();
    let (mut single, mut double, mut comment) = (false, false, false);
    // Here-documents whose bodies start after this line: each delimiter,
    // whether it was quoted (then its body joins no lines), and whether
    // `<<-` strips the body's leading tabs.
    let mut pending: Vec<(String, bool, bool)> = Vec::new();
    // The here-document being read, and the text of its current line.
    let mut body: Option<(String, bool, bool)> = None;
    let mut line = String::new();
    while let Some(c) = chars.next() {
        if let Some((delimiter, quoted, tabs)) = &body {
            if c == '\\' && !quoted && chars.peek() == Some(&'\n') {
                chars.next();
                joined.push(out.len());
                continue;
            }
            out.push(c);
            if c != '\n' {
                line.push(c);
                continue;
            }
            let text = if *tabs {
                line.trim_start_matches('\t')
            } else {
                &line
            };
            if text == delimiter {
                body = None;
            }
            line.clear();
            if body.is_none() && !pending.is_empty() {
                body = Some(pending.remove(0));
            }
            continue;
        }
        match c {
            '\n' => {
                comment = false;
                out.push(c);
                if !single && !double && !pending.is_empty() {
                    body = Some(pending.remove(0));
                }
                continue;
            }
            _ if comment => {}
            // A word that starts with `#` starts a comment.
            '#' if !single
                && !double
                && out
                    .chars()
                    .next_back()
                    .is_none_or(|p| p.is_whitespace() || ";&|()".contains(p)) =>
            {
                comment = true;
            }
            '<' if !single && !double && out.ends_with('<') && !out.ends_with("<<") => {
                out.push(c);
                if let Some(h) = heredoc_delimiter(&mut chars, &mut out) {
                    pending.push(h);
                }
                continue;
            }
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '\\' if !single => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                    // Where a line was joined to the one before.
                    joined.push(out.len());
                    continue;
                }
                out.push(c);
                if let Some(next) = chars.next() {
                    out.push(next);
                }
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    (out, joined)
}

/// The delimiter of a here-document, read after its `<<` (copied to
/// `out`): `-` (tabs stripped), blanks, then the word, quoted in whole or
/// in part (`'EOF'`, `EO"F"`: the body is then not expanded, and joins no
/// lines).
fn heredoc_delimiter(
    chars: &mut std::iter::Peekable<std::str::Chars>,
    out: &mut String,
) -> Option<(String, bool, bool)> {
    let mut tabs = false;
    if chars.peek() == Some(&'-') {
        tabs = true;
        out.push('-');
        chars.next();
    }
    while let Some(&c) = chars.peek().filter(|c| **c == ' ' || **c == '\t') {
        out.push(c);
        chars.next();
    }
    let (mut word, mut quoted, mut quote) = (String::new(), false, None::<char>);
    while let Some(&c) = chars.peek() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), '\n') => break,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                quoted = true;
            }
            (None, '\\') => {
                quoted = true;
                out.push(c);
                chars.next();
                match chars.peek() {
                    Some(&n) if n != '\n' => word.push(n),
                    _ => continue,
                }
            }
            (None, c) if c.is_whitespace() || ";&|()<>".contains(c) => break,
            (None, c) => word.push(c),
        }
        out.push(c);
        chars.next();
    }
    (!word.is_empty()).then_some((word, quoted, tabs))
}

/// The script with what the parser's grammar lacks written the way it
/// reads it: `;` between two closing words (`fi done`, `esac fi`, `} }`),
/// and `for NAME do` as `for NAME in "$@"; do`. Used only when the script
/// as written does not parse, and only if the result does.
fn repair(script: &str) -> String {
    // Built here: a script reaches this only when it does not parse.
    let (Ok(close), Ok(for_do)) = (
        regex::Regex::new(r"(^|[\s;&|])(fi|done|esac|\})([ \t]+)(fi|done|esac|\}|;;)"),
        regex::Regex::new(r"\bfor([ \t]+)([A-Za-z_][A-Za-z_0-9]*)[ \t]*(;?)([ \t\n]*)do\b"),
    ) else {
        return script.to_string();
    };
    let mut text = script.to_string();
    // Twice: `fi done done` overlaps.
    for _ in 0..2 {
        text = close.replace_all(&text, "${1}${2};${3}${4}").into_owned();
    }
    for_do
        .replace_all(&text, "for${1}${2} in \"$$@\";${4}do")
        .into_owned()
}

/// The commands of `$( )` and backquotes in the body of a here-document
/// whose delimiter is not quoted (the shell expands it), where the parser
/// did not read them itself (a line starting with a tab, a backquote).
/// Whether the body of a here-document is left as written: its
/// delimiter is quoted, in whole or in part (`'EOF'`, `EO"F"`, `\EOF`).
fn heredoc_quoted(body: Node, src: &[u8]) -> bool {
    fn start_of(redirect: Node) -> Option<Node> {
        let mut c = redirect.walk();
        let start = redirect
            .children(&mut c)
            .find(|n| n.kind() == "heredoc_start");
        start
    }
    body.parent()
        .and_then(start_of)
        .and_then(|start| start.utf8_text(src).ok())
        .is_some_and(|start| start.contains(['\'', '"', '\\']))
}

/// Whether `node` is inside the body of a here-document left as written
/// (see [`heredoc_quoted`]): a `$(…)` there runs nothing.
fn in_quoted_heredoc(node: Node, src: &[u8]) -> bool {
    let mut n = node.parent();
    while let Some(p) = n {
        if p.kind() == "heredoc_body" {
            return heredoc_quoted(p, src);
        }
        n = p.parent();
    }
    false
}

fn heredoc_substitutions(body: Node, src: &[u8], depth: usize, out: &mut Calls) {
    if heredoc_quoted(body, src) {
        return;
    }
    unparsed_substitutions(body, src, depth, out);
}

/// The substitutions in the text of `node` (a here-document's body, a
/// `${…}` expansion) that the parser left as text (`` ${X:-`cmd`} ``),
/// read as scripts.
fn unparsed_substitutions(node: Node, src: &[u8], depth: usize, out: &mut Calls) {
    let body = node;
    let Ok(text) = body.utf8_text(src) else {
        return;
    };
    // What the parser read already, as offsets into the text.
    let start = body.start_byte();
    let parsed: Vec<(usize, usize)> = nodes_of_kind(body, "command_substitution")
        .into_iter()
        .map(|n| (n.start_byte() - start, n.end_byte() - start))
        .collect();
    for (at, inner) in substitutions(text) {
        if parsed.iter().any(|&(a, b)| a <= at && at < b) {
            continue;
        }
        read_script(inner, depth + 1, out);
    }
}

/// The command substitutions of a text, `$(…)` (nested parentheses
/// counted) and `` `…` ``, with their offsets.
fn substitutions(text: &str) -> Vec<(usize, &str)> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'$' if bytes.get(i + 1) == Some(&b'(') && bytes.get(i + 2) != Some(&b'(') => {
                let mut depth = 0;
                let mut j = i + 1;
                while j < bytes.len() {
                    match bytes[j] {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                if let Some(inner) = text.get(i + 2..j.min(bytes.len())) {
                    found.push((i, inner));
                }
                i = j + 1;
            }
            b'`' => {
                let end = bytes[i + 1..].iter().position(|&b| b == b'`');
                let Some(end) = end else { break };
                if let Some(inner) = text.get(i + 1..i + 1 + end) {
                    found.push((i, inner));
                }
                i += end + 2;
            }
            _ => i += 1,
        }
    }
    found
}

/// For a `PATH=VALUE` assignment (`None` for any other), VALUE when it is
/// known but for `$PATH`, which it keeps; `Some(None)` when it holds
/// something only known when the script runs (`$HOME`, `~`, `$(…)`).
fn path_assignment(node: Node, src: &[u8]) -> Option<Option<String>> {
    let name = node.child_by_field_name("name")?.utf8_text(src).ok()?;
    if name != "PATH" {
        return None;
    }
    let Some(value) = node
        .child_by_field_name("value")
        .and_then(|v| v.utf8_text(src).ok())
    else {
        // `PATH=`: empty, so only paths with a `/` run.
        return Some(Some(String::new()));
    };
    // `PATH+=VALUE` (bash) appends.
    let appends = node.utf8_text(src).is_ok_and(|t| t.starts_with("PATH+="));
    Some(path_value(value).map(|v| if appends { format!("$PATH{v}") } else { v }))
}

/// The value a `PATH=` assignment's text gives, quotes removed, with
/// `$PATH` (`${PATH}`, `${PATH:-…}`, quoted or not) kept for the one it
/// started with; `None` when another expansion or a `~` makes it only
/// known when the script runs.
fn path_value(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = text;
    let mut double = false;
    while let Some(c) = rest.chars().next() {
        rest = &rest[c.len_utf8()..];
        match c {
            '"' => double = !double,
            '\'' if !double => {
                let end = rest.find('\'')?;
                out.push_str(&rest[..end]);
                rest = &rest[end + 1..];
            }
            '\\' => {
                let next = rest.chars().next()?;
                out.push(next);
                rest = &rest[next.len_utf8()..];
            }
            '$' => {
                if let Some(braced) = rest.strip_prefix('{') {
                    let end = closing_brace(braced)?;
                    out.push_str(&path_expansion(&braced[..end])?);
                    rest = &braced[end + 1..];
                    continue;
                }
                let (name, after) = {
                    let end = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(rest.len());
                    (&rest[..end], &rest[end..])
                };
                if name != "PATH" {
                    return None;
                }
                out.push_str("$PATH");
                rest = after;
            }
            '`' => return None,
            c => out.push(c),
        }
    }
    let home = out.split(':').any(|dir| dir.starts_with('~'));
    (!home && !double).then_some(out)
}

/// Where the `}` that closes a `${` is in `text` (what follows the `{`),
/// counting the `${ … }` nested in it.
fn closing_brace(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 1;
            }
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

/// What `${INNER}` gives in a `PATH=` value: `$PATH` for `${PATH}`,
/// `${PATH:-x}` and `${PATH:=x}` (a container's PATH is set), the word of
/// `${PATH:+WORD}` (the idiom `/opt/bin${PATH:+:$PATH}`); `None` for
/// another variable or another expansion of it.
fn path_expansion(inner: &str) -> Option<String> {
    // A word nesting `${PATH:+…}` deeper than this is not worth reading.
    if inner.matches("${").count() > 8 {
        return None;
    }
    let op = inner.strip_prefix("PATH")?;
    match op {
        "" => Some("$PATH".into()),
        _ if ["-", ":-", "=", ":="].iter().any(|p| op.starts_with(p)) => Some("$PATH".into()),
        _ => {
            let word = op.strip_prefix(":+").or_else(|| op.strip_prefix('+'))?;
            path_value(word)
        }
    }
}

/// The names of the functions a script defines: calls to them run no
/// program.
fn function_names(root: Node, src: &[u8]) -> Vec<String> {
    let mut names: Vec<String> = nodes_of_kind(root, "function_definition")
        .into_iter()
        .filter_map(|node| node.child_by_field_name("name")?.utf8_text(src).ok())
        .map(str::to_string)
        .collect();
    // And the aliases it defines (`alias ll='ls -l'`), which a shell
    // expands in the lines after.
    for words in nodes_of_kind(root, "command")
        .into_iter()
        .filter_map(|node| words_of(node, src))
        .filter(|words| words.first().is_some_and(|w| w.as_deref() == Some("alias")))
    {
        let definitions = words[1..].iter().flatten();
        names.extend(definitions.filter_map(|a| Some(a.split_once('=')?.0.to_string())));
    }
    names
}

/// The bodies (as byte ranges) of the functions a script defines and
/// never calls: not by name outside their own body, nor from a `trap`'s
/// action, nor by a name only known when it runs. What they would run
/// never runs.
fn uncalled_functions(root: Node, src: &[u8]) -> Vec<std::ops::Range<usize>> {
    let commands: Vec<(usize, Option<Vec<Option<String>>>)> = nodes_of_kind(root, "command")
        .into_iter()
        .map(|c| (c.start_byte(), words_of(c, src)))
        .collect();
    // A command whose name is only known when it runs may call any.
    let dynamic = commands.iter().any(|(_, w)| {
        w.as_ref()
            .is_none_or(|w| w.first().is_none_or(Option::is_none))
    });
    if dynamic {
        return Vec::new();
    }
    let mut out = Vec::new();
    for def in nodes_of_kind(root, "function_definition") {
        let Some(name) = def
            .child_by_field_name("name")
            .and_then(|n| n.utf8_text(src).ok())
        else {
            continue;
        };
        let body = def.start_byte()..def.end_byte();
        let called = commands.iter().any(|(at, words)| {
            let Some(words) = words else { return false };
            let first = words.first().and_then(|w| w.as_deref());
            let by_name = first == Some(name) && !body.contains(at);
            // `trap 'cleanup; exit' EXIT`: the action names it.
            let by_trap = first == Some("trap")
                && words.iter().skip(1).flatten().any(|w| {
                    w.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
                        .any(|t| t == name)
                });
            by_name || by_trap
        });
        if !called {
            out.push(body);
        }
    }
    out
}

/// The nodes of `kind` in the tree below `root` (and `root` itself), in
/// document order, found by one walk without recursion.
fn nodes_of_kind<'t>(root: Node<'t>, kind: &str) -> Vec<Node<'t>> {
    nodes_of_kinds(root, &[kind])
}

/// The nodes of any of `kinds` below `root` (and `root` itself), in
/// document order, found by one walk without recursion.
fn nodes_of_kinds<'t>(root: Node<'t>, kinds: &[&str]) -> Vec<Node<'t>> {
    let mut found = Vec::new();
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        if kinds.contains(&node.kind()) {
            found.push(node);
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    found
}

/// One `command` node of a script.
fn command(node: Node, src: &[u8], depth: usize, out: &mut Calls) {
    let Some(mut words) = words_in(node, src, &out.vars) else {
        return;
    };
    match set_by_builtin(&words) {
        Some(names) => names.iter().for_each(|n| out.vars.set(n, None)),
        None => out.vars.known.clear(),
    }
    // `exec CMD`, `command CMD` and `env [NAME=VALUE]… CMD` run CMD.
    loop {
        match words.first() {
            Some(Some(w)) if w == "exec" || w == "command" => {
                if w == "command" && only_asks(&words[1..]) {
                    return;
                }
                let exec = w == "exec";
                words.remove(0);
                while let Some(option) = words
                    .first()
                    .and_then(|w| w.as_deref())
                    .filter(|w| w.starts_with('-'))
                {
                    // `exec -a NAME CMD`: NAME is what CMD is called.
                    let takes_name = exec && option == "-a";
                    words.remove(0);
                    if takes_name && !words.is_empty() {
                        words.remove(0);
                    }
                }
            }
            _ => break,
        }
    }
    let Some(first) = words.first() else {
        return;
    };
    let text = || {
        node.utf8_text(src)
            .unwrap_or_default()
            .chars()
            .take(60)
            .collect::<String>()
    };
    let Some(program) = first.clone() else {
        out.dynamic.push(format!(
            "`{}` takes its command name from a variable, a substitution or a home folder (`~`)",
            text()
        ));
        return;
    };
    match program.as_str() {
        "eval" => {
            out.dynamic
                .push(format!("`{}` runs a command built at run time", text()));
            return;
        }
        "." => {
            let sourced = words.get(1).cloned().flatten();
            if let Some(found) = sourced.as_deref().and_then(|f| out.volume_file(f, true)) {
                // A file of a volume: its commands run here.
                let shell = out.shell.clone().unwrap_or_else(|| "sh".into());
                let params: Vec<&str> = Vec::new();
                out.read_file(found, &shell, &params, depth, true);
                // The functions it defines may be called after.
                out.sourced_at.get_or_insert(out.calls.len());
                return;
            }
            out.dynamic
                .push(format!("`{}` runs the commands of another file", text()));
            // A file named by a path must be there for the shell to read,
            // as the script file of `sh FILE` must (dash stops at once
            // with `cannot open`): checked as that.
            let file = words.get(1).cloned().flatten().filter(|f| f.contains('/'));
            if let (Some(file), Some(shell)) = (file, out.shell.clone()) {
                let scope = out.scope.clone();
                out.calls.push(Call {
                    argv: vec![Some(shell), Some(file)],
                    in_script: true,
                    scope,
                    bash_only: None,
                    guarded: false,
                    line: out.line,
                    file: out.file_name(),
                });
            }
            if may_define_functions(words.get(1).cloned().flatten().as_deref()) {
                out.sourced_at.get_or_insert(out.calls.len());
            }
            return;
        }
        // `time CMD` (bash's keyword, else a program) runs CMD.
        "time" => {
            bash_only(vec![Some(program.clone())], out);
            // bash's `-p`, and the options of /usr/bin/time, are the
            // wrapper's (see WRAPPERS).
            match wrapped(&words) {
                Ok(Some(inner)) => follow(inner.to_vec(), true, depth + 1, out),
                Ok(None) => {}
                Err(why) => out.dynamic.push(why),
            }
            return;
        }
        p if BASH_ONLY.contains(&p) => {
            let source = p == "source";
            // `pushd DIR` moves the commands after it, as `cd` does.
            match p {
                "pushd" => match words
                    .iter()
                    .skip(1)
                    .find(|w| w.as_deref().is_none_or(|w| !w.starts_with(['-', '+'])))
                {
                    Some(Some(dir)) => out.scope.cd(dir),
                    _ => out.scope.cd_unknown(),
                },
                "popd" => out.scope.cd_unknown(),
                _ => {}
            }
            let sourced = words.get(1).cloned().flatten();
            bash_only(words, out);
            if source {
                out.dynamic
                    .push(format!("`{}` runs the commands of another file", text()));
                if may_define_functions(sourced.as_deref()) {
                    out.sourced_at.get_or_insert(out.calls.len());
                }
            }
            return;
        }
        // `set -o pipefail` (and `-euo pipefail`): bash's option, which
        // dash refuses (`Illegal option -o pipefail`) before the script
        // runs anything.
        "set" => {
            let known: Vec<&str> = words.iter().skip(1).flatten().map(String::as_str).collect();
            if sets_pipefail(&known) {
                bash_only(vec![Some("set -o pipefail".into())], out);
            }
            return;
        }
        // `alias NAME=VALUE`: NAME runs VALUE's command.
        "alias" => {
            for value in words
                .iter()
                .skip(1)
                .flatten()
                .filter_map(|d| d.split_once('='))
            {
                read_script(value.1, depth + 1, out);
            }
            return;
        }
        "cd" => {
            // `cd DIR` moves the commands after it (`cd -P DIR` too); `cd`
            // alone goes home, `cd -` back, `cd "$DIR"` where the script
            // says when it runs.
            let dir = words
                .iter()
                .skip(1)
                .find(|w| w.as_deref().is_none_or(|w| !w.starts_with('-')));
            match dir {
                Some(Some(dir)) => out.scope.cd(dir),
                _ => out.scope.cd_unknown(),
            }
            return;
        }
        // `trap ACTION SIGNAL…` runs ACTION, a script, when a signal comes.
        "trap" => {
            // `trap -- ACTION SIGNAL…`: `--` ends the options.
            let words: Vec<Option<String>> = match words.get(1) {
                Some(Some(w)) if w == "--" => [&words[..1], &words[2..]].concat(),
                _ => words,
            };
            let action = words.get(1).cloned().flatten();
            if let Some(action) = action.filter(|a| {
                words.len() > 2 && !a.is_empty() && a != "-" && a.parse::<u32>().is_err()
            }) {
                read_script(&action, depth + 1, out);
            }
            return;
        }
        p if BUILTINS.contains(&p) || out.functions.iter().any(|f| f == p) => return,
        _ => {}
    }
    // `tee FILE…` and `touch FILE…` write to their files.
    if matches!(base_name(&program), "tee" | "touch") {
        let files = words
            .iter()
            .skip(1)
            .flatten()
            .filter(|w| !w.starts_with('-'));
        for path in files.cloned().collect::<Vec<_>>() {
            out.writes.push(Write {
                path,
                scope: out.scope.clone(),
                line: out.line,
                file: out.file_name(),
            });
        }
    }
    // `PATH=… CMD` gives CMD alone that PATH.
    let outer = out.scope.clone();
    let mut c = node.walk();
    for assignment in node
        .children(&mut c)
        .filter(|n| n.kind() == "variable_assignment")
    {
        if let Some(path) = path_assignment(assignment, src) {
            out.scope.set_path(path);
        }
    }
    // A wrapper's command and a shell's script inside the script too.
    follow(words, true, depth + 1, out);
    out.scope = outer;
}

/// The value of a word as the shell passes it, when it is known before
/// the script runs: plain words (with backslash escapes), quoted strings,
/// concatenations of those, and `$NAME` and `${NAME}` of the variables
/// known in `vars`. With `split` (an argument, not an assignment's
/// value), an unquoted one that the shell would split into words or match
/// against files is only known when the script runs.
fn literal_in(node: Node, src: &[u8], vars: &Vars, split: bool) -> Option<String> {
    let text = node.utf8_text(src).ok()?;
    match node.kind() {
        "command_name" => {
            let mut c = node.walk();
            let kids: Vec<Node> = node.named_children(&mut c).collect();
            match kids.as_slice() {
                [only] => literal_in(*only, src, vars, split),
                _ => None,
            }
        }
        // `~` and `~user` at a word's start stand for a home folder.
        "word" if text.starts_with('~') => None,
        "word" | "number" => unescape(text),
        "raw_string" => text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .map(str::to_string),
        "simple_expansion" | "expansion" => {
            let value = variable(node, src, vars)??;
            let splits = value.contains([' ', '\t', '\n']) || has_glob(value);
            (!split || !splits).then(|| value.to_string())
        }
        "string" => {
            let mut c = node.walk();
            let mut value = String::new();
            for kid in node.named_children(&mut c) {
                match kid.kind() {
                    "string_content" => value.push_str(&unescape_double(kid.utf8_text(src).ok()?)),
                    "simple_expansion" | "expansion" => value.push_str(variable(kid, src, vars)??),
                    _ => return None,
                }
            }
            Some(value)
        }
        "concatenation" => {
            let mut c = node.walk();
            let mut value = String::new();
            for kid in node.named_children(&mut c) {
                value.push_str(&literal_in(kid, src, vars, split)?);
            }
            Some(value)
        }
        _ => None,
    }
}

/// A plain word without its backslashes; `None` when it holds a glob,
/// whose value depends on the files there.
fn unescape(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '*' | '?' | '[' if text.len() > 1 => return None,
            '$' | '`' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// The text of a double-quoted string without the backslashes that
/// quote `$`, `` ` ``, `"`, `\` and newlines.
fn unescape_double(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => out.extend(chars.next()),
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    pub(super) fn programs(words: &[&str]) -> (Vec<String>, Vec<String>) {
        let words: Vec<Option<String>> = argv(words).into_iter().map(Some).collect();
        let c = calls(&words);
        (c.calls.iter().map(Call::display).collect(), c.dynamic)
    }

    #[test]
    fn scripts_of_shells() {
        assert_eq!(script_of(&argv(&["sh", "-c", "x"])), Some("x"));
        assert_eq!(
            script_of(&argv(&["/bin/bash", "-ec", "x", "name"])),
            Some("x")
        );
        for words in [
            &["bash", "-o", "pipefail", "-c", "x"][..],
            &["bash", "-euo", "pipefail", "-c", "x"],
            &["sh", "+o", "errexit", "-c", "x"],
            &["bash", "-O", "extglob", "-c", "x"],
            &["bash", "-co", "pipefail", "x"],
            &["bash", "-c", "-o", "pipefail", "x"],
            &["bash", "-oo", "pipefail", "errexit", "-c", "x"],
            &["bash", "--rcfile", "/dev/null", "-c", "x"],
            &["bash", "--norc", "-c", "x"],
            &["sh", "-c", "--", "x", "name"],
            &["sh", "-c", "-", "x"],
        ] {
            assert_eq!(script_of(&argv(words)), Some("x"), "{words:?}");
        }
        assert_eq!(script_of(&argv(&["sh", "-o", "-c", "x"])), None);
        assert_eq!(script_of(&argv(&["sh", "--", "-c", "x"])), None);
        assert_eq!(script_of(&argv(&["bash", "-e", "-c", "x"])), Some("x"));
        assert_eq!(script_of(&argv(&["sh", "script.sh"])), None);
        assert_eq!(script_of(&argv(&["node", "-c", "x"])), None);
        assert_eq!(script_of(&argv(&["sh", "-c"])), None);
    }

    /// `script_of` against the shells themselves: for argvs made of the
    /// options shells take, in any order, the real `bash` and `dash` run
    /// the script exactly when `script_of` names it.
    #[test]
    fn scripts_are_found_as_the_shells_find_them() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        const SCRIPT: &str = "echo script-ran";
        let common: Vec<&[&str]> = vec![
            &["-e"],
            &["-eu"],
            &["-o", "errexit"],
            &["+o", "nounset"],
            &["-euo", "errexit"],
            &["-oo", "errexit", "nounset"],
            &["-c"],
            &["-ec"],
            &["-ce"],
            &["-co", "errexit"],
            &["-oc", "nounset"],
        ];
        let bash_only: Vec<&[&str]> = vec![&["-O", "extglob"], &["+O", "nullglob"]];
        let bash_leading: Vec<&[&str]> =
            vec![&["--norc"], &["--noprofile"], &["--rcfile", "/dev/null"]];
        let ci = crate::testing::tools_required();
        for shell in ["bash", "dash"] {
            if std::process::Command::new(shell)
                .arg("-c")
                .arg(":")
                .output()
                .is_err()
            {
                assert!(!ci, "`{shell}` is required when CI=true");
                eprintln!("skipping: `{shell}` is not installed");
                continue;
            }
            let mut units = common.clone();
            let mut leading: Vec<&[&str]> = vec![&[]];
            if shell == "bash" {
                units.extend(&bash_only);
                leading.extend(&bash_leading);
            }
            let argvs = (
                proptest::sample::select(leading),
                proptest::collection::vec(proptest::sample::select(units), 0..5),
                proptest::sample::select(vec![&[][..], &["--"], &["-"]]),
                any::<bool>(),
                any::<bool>(),
            )
                .prop_map(move |(lead, units, end, script, args)| {
                    let mut words = vec![shell];
                    words.extend(lead);
                    units.iter().for_each(|u| words.extend(*u));
                    words.extend(end);
                    if script {
                        words.push(SCRIPT);
                    }
                    if args {
                        words.extend(["name", "arg"]);
                    }
                    argv(&words)
                });
            let mut runner = TestRunner::new(Config {
                cases: 96,
                failure_persistence: None,
                ..Config::default()
            });
            runner
                .run(&argvs, |argv| {
                    let out = std::process::Command::new(&argv[0])
                        .args(&argv[1..])
                        .stdin(std::process::Stdio::null())
                        .output()
                        .map_err(|e| TestCaseError::fail(e.to_string()))?;
                    let ran = String::from_utf8_lossy(&out.stdout).contains("script-ran");
                    prop_assert_eq!(ran, script_of(&argv) == Some(SCRIPT), "{:?}", argv);
                    Ok(())
                })
                .unwrap_or_else(|e| panic!("{shell}: {e}"));
        }
    }

    #[test]
    fn every_command_of_a_script() {
        let (p, d) = programs(&["sh", "-c", "whystack-health live"]);
        assert_eq!(p, ["sh -c whystack-health live", "whystack-health live"]);
        assert!(d.is_empty());
        let (p, _) = programs(&["/bin/sh", "-c", "exec whystack-health ready"]);
        assert_eq!(p[1], "whystack-health ready");
        let (p, d) = programs(&[
            "bash",
            "-c",
            "set -e; mkdir -p /x && cp a b || { echo no; exit 1; }; cat f | grep -q y; v=$(date +%s); test -f \"/tmp/a b\"",
        ]);
        assert_eq!(
            p[1..],
            ["mkdir -p /x", "cp a b", "cat f", "grep -q y", "date +%s"]
        );
        assert!(d.is_empty(), "{d:?}");
        let (p, _) = programs(&["sh", "-c", "f() { node x; }; f; 'whystack-health' \"live\""]);
        assert_eq!(p[1..], ["node x", "whystack-health live"]);
        let (p, _) = programs(&[
            "sh",
            "-c",
            "env A=1 node x; command -v node; command node y",
        ]);
        assert_eq!(p[1..], ["env A=1 node x", "node x", "node y"]);
        // A shell in the script.
        let (p, _) = programs(&["sh", "-c", "sh -c 'exec whystack-health live'"]);
        assert_eq!(
            p[1..],
            ["sh -c exec whystack-health live", "whystack-health live"]
        );
    }

    /// Forms every shell takes that the parser's grammar does not, or
    /// reads differently: each script's commands are the ones dash runs.
    #[test]
    fn forms_the_grammar_lacks_are_read_as_the_shell_reads_them() {
        let cases: &[(&str, &[&str])] = &[
            ("for i in 1; do if true; then curl x; fi done", &["curl x"]),
            ("{ { curl x; } }", &["curl x"]),
            ("if true; then case a in a) curl x;; esac fi", &["curl x"]),
            (
                "for i in 1; do for j in 2; do curl x; done done",
                &["curl x"],
            ),
            ("for i do curl x; done", &["curl x"]),
            ("for i; do curl x; done", &["curl x"]),
            ("no\\\nde x", &["node x"]),
            ("whystack-\\\nhealth live", &["whystack-health live"]),
            ("ls 'a\\\nb'; curl x", &["ls a\\\nb", "curl x"]),
            ("cat <<EOF\n\t$(curl x)\nEOF", &["cat", "curl x"]),
            ("cat <<-EOF\n\t$(curl x)\n\tEOF", &["cat", "curl x"]),
            ("cat <<EOF\nid: `curl x`\nEOF", &["cat", "curl x"]),
            ("cat <<'EOF'\n$(curl x)\nEOF", &["cat"]),
            ("cat <<EOF\n$(curl x)\nEOF", &["cat", "curl x"]),
        ];
        for (script, want) in cases {
            let (p, d) = programs(&["sh", "-c", script]);
            assert_eq!(p[1..], **want, "{script:?}: {d:?}");
            assert!(d.is_empty(), "{script:?}: {d:?}");
        }
        // What the parser cannot read is said to be so, not to be invalid.
        let (_, d) = programs(&["sh", "-c", "if then fi fi ((("]);
        assert!(d[0].contains("cannot read its script"), "{d:?}");
    }

    #[test]
    fn env_without_path_and_other_wrappers() {
        let scoped = |script: &str| -> Vec<(String, Option<String>)> {
            let words = [
                Some("sh".to_string()),
                Some("-c".into()),
                Some(script.into()),
            ];
            calls(&words).calls[1..]
                .iter()
                .map(|c| (c.display(), c.scope.path.clone()))
                .collect()
        };
        let bin = Some(ENV_DEFAULT_PATH.to_string());
        assert_eq!(scoped("env -i node x")[1], ("node x".into(), bin.clone()));
        assert_eq!(
            scoped("env -u PATH node x")[1],
            ("node x".into(), bin.clone())
        );
        assert_eq!(scoped("env --unset=PATH node x")[1], ("node x".into(), bin));
        assert_eq!(
            scoped("env -i PATH=/opt node x")[1].1.as_deref(),
            Some("/opt")
        );
        assert_eq!(scoped("env -- A=1 node x")[1].0, "node x");
        let (p, _) = programs(&["sh", "-c", "trap 'curl a' EXIT; trap - TERM; trap '' INT"]);
        assert_eq!(p[1..], ["curl a"]);
        let (p, _) = programs(&["sh", "-c", "trap -- 'curl b' EXIT; trap -- - TERM"]);
        assert_eq!(p[1..], ["curl b"]);
        let (p, _) = programs(&["sh", "-c", "command -pv curl || echo none; echo a | xargs -n 1 curl; su-exec node:node whystack-health live"]);
        assert_eq!(
            p[1..],
            [
                "xargs -n 1 curl",
                "curl",
                "su-exec node:node whystack-health live",
                "whystack-health live"
            ]
        );
    }

    #[test]
    fn a_program_asked_for_first_is_guarded() {
        let words = |script: &str| {
            [
                Some("sh".to_string()),
                Some("-c".into()),
                Some(script.into()),
            ]
        };
        let guarded = |script: &str| -> Vec<(String, bool)> {
            calls(&words(script)).calls[1..]
                .iter()
                .map(|c| (c.display(), c.guarded))
                .collect()
        };
        assert_eq!(
            guarded("command -v curl >/dev/null || exit 0; curl x; wget y"),
            [("curl x".to_string(), true), ("wget y".to_string(), false)]
        );
        assert_eq!(
            guarded("if which jq; then jq .; fi"),
            [("which jq".to_string(), false), ("jq .".to_string(), true)]
        );
    }

    /// Bash's own builtins run no program under bash; under `sh` they are
    /// calls the image decides on (dash has none of them).
    #[test]
    fn bash_builtins_depend_on_the_shell() {
        let run = |shell: &str, script: &str| {
            let words = [
                Some(shell.to_string()),
                Some("-c".into()),
                Some(script.into()),
            ];
            calls(&words).calls[1..]
                .iter()
                .map(|c| (c.display(), c.bash_only.clone()))
                .collect::<Vec<_>>()
        };
        // An alias runs its command, not a program of its name.
        let (p, _) = programs(&["sh", "-c", "alias ll='ls -l'\nll /tmp"]);
        assert_eq!(p[1..], ["ls -l"]);
        let script = "[[ -f /x ]] && pushd /tmp && declare -a a; local v; curl x";
        assert_eq!(run("bash", script), [("curl x".to_string(), None)]);
        let sh = Some("/bin/sh".to_string());
        assert_eq!(
            run("/bin/sh", script),
            [
                ("[[ -f /x ]]".to_string(), sh.clone()),
                ("pushd /tmp".to_string(), sh.clone()),
                ("declare -a a".to_string(), sh),
                ("curl x".to_string(), None),
            ]
        );
    }

    #[test]
    fn path_values_are_read_through_quotes() {
        for (text, want) in [
            ("/opt/tools:$PATH", Some("/opt/tools:$PATH")),
            ("/opt/tools:\"$PATH\"", Some("/opt/tools:$PATH")),
            ("\"/opt/tools:${PATH}\"", Some("/opt/tools:$PATH")),
            ("'/opt/tools':$PATH", Some("/opt/tools:$PATH")),
            ("${PATH:-/usr/bin}:/x", Some("$PATH:/x")),
            ("/a\\ b", Some("/a b")),
            ("$HOME/bin:$PATH", None),
            ("~/bin:$PATH", None),
            ("$(pwd):$PATH", None),
            ("'unclosed", None),
        ] {
            assert_eq!(path_value(text).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn wrappers_run_their_command() {
        let cases: &[(&[&str], &[&str])] = &[
            (
                &["env", "whystack-health", "ready"],
                &["whystack-health ready"],
            ),
            (
                &["/usr/bin/env", "-i", "-u", "HOME", "A=b", "--", "node", "x"],
                &["node x"],
            ),
            (
                &["env", "-C", "/tmp", "sh", "-c", "whystack-health live"],
                &["sh -c whystack-health live", "whystack-health live"],
            ),
            (
                &["timeout", "-s", "KILL", "5", "whystack-health", "live"],
                &["whystack-health live"],
            ),
            (
                &["nice", "-n", "5", "nohup", "node"],
                &["nohup node", "node"],
            ),
            (&["tini", "--", "node", "main.js"], &["node main.js"]),
            (&["dumb-init", "-r", "15:2", "node"], &["node"]),
            (&["stdbuf", "-oL", "node"], &["node"]),
            (
                &["sh", "-c", "env X=1 sh -c 'whystack-health live'"],
                &[
                    "env X=1 sh -c whystack-health live",
                    "sh -c whystack-health live",
                    "whystack-health live",
                ],
            ),
            (&["env"], &[]),
            (&["env", "-", "node"], &["node"]),
            // Short options in one word, as getopt reads them.
            (&["env", "-iu", "PATH", "curl", "x"], &["curl x"]),
            (&["env", "-uPATH", "curl", "x"], &["curl x"]),
            (&["timeout", "-sKILL", "5", "node"], &["node"]),
            (
                &["busybox", "sh", "-c", "whystack-health live"],
                &["whystack-health live"],
            ),
            (&["zsh", "-c", "node x"], &["node x"]),
            (
                &["sh", "-c", "exec -a agent node main.js"],
                &["node main.js"],
            ),
        ];
        for (argv_, want) in cases {
            let (p, d) = programs(argv_);
            assert!(d.is_empty(), "{argv_:?}: {d:?}");
            // The argv's own program, then what it runs.
            assert_eq!(p[0], argv_.join(" "), "{argv_:?}");
            // Every level of wrapping and scripting, in order.
            let rest: Vec<&str> = p[1..].iter().map(String::as_str).collect();
            assert_eq!(&rest[..], *want, "{argv_:?}: {p:?}");
        }
        let (_, d) = programs(&["env", "-S", "node main.js"]);
        assert!(d[0].contains("splits its command"), "{d:?}");
    }

    #[test]
    fn a_script_file_is_named_as_not_read() {
        for argv_ in [
            &["sh", "/tmp/probe.sh"][..],
            &["bash", "-e", "/probe.sh", "x"],
            &["sh", "-c", "sh /tmp/probe.sh"],
        ] {
            let (_, d) = programs(argv_);
            assert_eq!(d.len(), 1, "{argv_:?}: {d:?}");
            assert!(d[0].contains("runs the commands of the file"), "{d:?}");
        }
        // Reading its script from -c is not a file; from its input, the
        // commands are named as not known.
        assert!(programs(&["sh", "-c", "true"]).1.is_empty());
        let (_, d) = programs(&["sh", "-s"]);
        assert!(d.len() == 1 && d[0].contains("from its input"), "{d:?}");
    }

    #[test]
    fn dynamic_scripts_are_named() {
        let (p, d) = programs(&[
            "sh",
            "-c",
            "$CMD live; eval \"$X\"; . /etc/profile; node $ARG",
        ]);
        // The sourced file is not read, but must be there to read.
        assert_eq!(p[1..], ["sh /etc/profile", "node …"]);
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d[0].contains("$CMD live"), "{d:?}");
        assert!(d[1].contains("eval"), "{d:?}");
        let (_, d) = programs(&["sh", "-c", "if then fi ((("]);
        assert!(d[0].contains("cannot read its script"), "{d:?}");
    }
}

#[cfg(test)]
mod scope_tests {
    use super::*;

    fn scopes(words: &[&str]) -> Vec<(String, Scope)> {
        let argv: Vec<Option<String>> = words.iter().map(|w| Some(w.to_string())).collect();
        calls(&argv)
            .calls
            .into_iter()
            .map(|c| (c.display(), c.scope))
            .collect()
    }

    fn scope(cwd: Option<&str>, path: Option<&str>) -> Scope {
        Scope {
            cwd: cwd.map(str::to_string),
            path: path.map(str::to_string),
            ..Scope::default()
        }
    }

    /// A change in a subshell, a pipeline or a substitution is gone after
    /// it; one in a branch, a loop or a function leaves the folder or
    /// `PATH` only known when the script runs.
    #[test]
    fn changes_stay_where_the_shell_keeps_them() {
        let after = |script: &str| {
            let got = scopes(&["sh", "-c", script]);
            let last = got.last().map(|(_, s)| s.clone()).unwrap_or_default();
            (last.cwd, last.cwd_unknown, last.path, last.path_unknown)
        };
        for script in [
            "(cd /tmp && ls); ./run.sh",
            "x=$(cd /tmp; pwd); ./run.sh",
            "cd /tmp | true; ./run.sh",
            "(PATH=/nowhere; true); ./run.sh",
            // A function never called changes nothing.
            "g() { cd /tmp; }; ./run.sh",
        ] {
            assert_eq!(after(script), (None, false, None, false), "{script}");
        }
        for script in [
            "if false; then cd /tmp; fi; ./run.sh",
            "g() { cd /tmp; }; g; ./run.sh",
            "for d in a; do cd $d; done; ./run.sh",
        ] {
            assert_eq!(after(script), (None, true, None, false), "{script}");
        }
        assert_eq!(
            after("f() { export PATH=/opt/tools:$PATH; }; ./run.sh"),
            (None, false, None, true)
        );
        // Inside the part, the change holds.
        let got = scopes(&["sh", "-c", "(cd /tmp && ./a); ./b"]);
        assert_eq!(got[1].1.cwd.as_deref(), Some("/tmp"), "{got:?}");
    }

    #[test]
    fn a_script_moves_and_repaths_the_commands_after_it() {
        let got = scopes(&[
            "sh",
            "-c",
            "cd /opt/app && ./bin/tool; cd lib; x; PATH=/p:$PATH y; z; export PATH=\"/q:${PATH}\"; w",
        ]);
        let want = [
            ("./bin/tool", scope(Some("/opt/app"), None)),
            ("x", scope(Some("/opt/app/lib"), None)),
            ("y", scope(Some("/opt/app/lib"), Some("/p:$PATH"))),
            ("z", scope(Some("/opt/app/lib"), None)),
            ("w", scope(Some("/opt/app/lib"), Some("/q:$PATH"))),
        ];
        for (program, s) in want {
            let found = got.iter().find(|(d, _)| d == program).map(|(_, s)| s);
            assert_eq!(found, Some(&s), "{program}: {got:?}");
        }
        assert_eq!(
            scope(Some("lib"), Some("/q:$PATH")).path_over("/usr/bin"),
            "/q:/usr/bin"
        );
        assert_eq!(scope(Some("lib"), None).cwd_over("/app"), "/app/lib");
        // A value known only when the script runs makes what it sets
        // unknown, until it is set to something known again.
        let got = scopes(&["sh", "-c", "PATH=$HOME/bin:$PATH; cd \"$DIR\"; v"]);
        let unknown = Scope {
            cwd_unknown: true,
            path_unknown: true,
            ..Scope::default()
        };
        assert_eq!(got.last().map(|(_, s)| s.clone()), Some(unknown.clone()));
        let last = |script: &str| scopes(&["sh", "-c", script]).last().map(|(_, s)| s.clone());
        let after = last("cd ~/app; PATH=~/bin:$PATH; v").unwrap();
        assert!(after.cwd_unknown && after.path_unknown, "{after:?}");
        assert!(after.may_hide("./run.sh") && after.may_hide("tool"));
        assert!(!after.may_hide("/bin/tool"));
        let after = last("cd; cd sub; PATH=/opt/bin:$PATH; v").unwrap();
        assert!(after.cwd_unknown && !after.path_unknown, "{after:?}");
        let after = last("cd \"$X\"; cd /srv; export PATH=/usr/bin; v").unwrap();
        assert_eq!(after, scope(Some("/srv"), Some("/usr/bin")));
        assert!(!after.may_hide("./run.sh") && !after.may_hide("tool"));
        // `~/bin/tool` names no program known before the script runs.
        assert_eq!(last("~/bin/tool; v").unwrap(), Scope::default());
        // `env` sets them for the command it runs.
        let got = scopes(&["env", "-C", "/srv", "PATH=/opt/bin", "tool"]);
        assert_eq!(got[1].1, scope(Some("/srv"), Some("/opt/bin")));
        assert_eq!(got[0].1, Scope::default());
    }

    #[test]
    fn a_script_only_known_when_the_pod_runs_is_said_to_be() {
        let argv = [Some("sh".to_string()), Some("-c".to_string()), None];
        let c = calls(&argv);
        assert_eq!(c.dynamic.len(), 1, "{c:?}");
        assert!(c.dynamic[0].contains("only known when the pod runs"));
        let argv = [Some("tool".to_string()), None];
        assert!(calls(&argv).dynamic.is_empty());
    }
    fn in_sh(script: &str) -> Calls {
        calls(&[
            Some("sh".to_string()),
            Some("-c".into()),
            Some(script.into()),
        ])
    }

    /// `(program, bash_only, guarded)` of each call of `sh -c SCRIPT`.
    fn read(script: &str) -> Vec<(String, bool, bool)> {
        in_sh(script).calls[1..]
            .iter()
            .map(|c| (c.display(), c.bash_only.is_some(), c.guarded))
            .collect()
    }

    #[test]
    fn path_idioms_are_read_as_the_shell_expands_them() {
        for (text, want) in [
            ("/opt/bin${PATH:+:$PATH}", Some("/opt/bin:$PATH")),
            ("\"/opt/bin${PATH:+:${PATH}}\"", Some("/opt/bin:$PATH")),
            ("${PATH:=/bin}:/x", Some("$PATH:/x")),
            ("${PATH#/usr}", None),
            ("${HOME:+/h}", None),
        ] {
            assert_eq!(path_value(text).as_deref(), want, "{text}");
        }
        let path = |script: &str| {
            in_sh(script)
                .calls
                .last()
                .and_then(|c| c.scope.path.clone())
        };
        assert_eq!(
            path("PATH+=:/opt/bin\nx").as_deref(),
            Some("$PATH:/opt/bin")
        );
        let cwd = |words: &[&str]| {
            let words: Vec<Option<String>> = words.iter().map(|w| Some(w.to_string())).collect();
            calls(&words).calls.last().and_then(|c| c.scope.cwd.clone())
        };
        assert_eq!(
            cwd(&["bash", "-c", "pushd /srv >/dev/null && ./run"]).as_deref(),
            Some("/srv")
        );
        assert_eq!(
            cwd(&["env", "--chdir=/srv", "./run"]).as_deref(),
            Some("/srv")
        );
        assert_eq!(cwd(&["env", "-C/srv", "./run"]).as_deref(), Some("/srv"));
    }

    /// What only bash has, written for `sh`: the image decides (dash
    /// refuses it); under `bash -c`, nothing to check.
    #[test]
    fn bash_syntax_and_options_depend_on_the_shell() {
        for script in [
            "set -euo pipefail\nx",
            "set -o pipefail; x",
            "a=(one two); x",
            "function f { x; }\nf",
            "read -r m <<< live; x",
            "((i++)); x",
            "echo ${v:0:1}; x",
            "echo ${v/a/b}; x",
            "x &> /dev/null",
            "diff <(x) y",
            "PATH+=:/opt; x",
        ] {
            let got = read(script);
            assert!(got.iter().any(|(_, bash, _)| *bash), "{script}: {got:?}");
            let words = [
                Some("bash".to_string()),
                Some("-c".into()),
                Some(script.into()),
            ];
            assert!(
                calls(&words).calls.iter().all(|c| c.bash_only.is_none()),
                "{script}"
            );
        }
        for script in [
            "set -eu; x",
            "echo ${v:-a} ${v#p} $((1+2)); x",
            "f() { x; }\nf",
            "x > /dev/null 2>&1",
        ] {
            let got = read(script);
            assert!(got.iter().all(|(_, bash, _)| !bash), "{script}: {got:?}");
        }
        let words: Vec<Option<String>> = ["sh", "-o", "pipefail", "-c", "x"]
            .iter()
            .map(|w| Some(w.to_string()))
            .collect();
        assert!(calls(&words).calls.iter().any(|c| c.bash_only.is_some()));
    }

    #[test]
    fn functions_aliases_and_sourced_files() {
        // A trap's action may call a function of the script.
        let got = read("cleanup() { rm -f /tmp/x; }\ntrap cleanup EXIT\nwhystack-health live");
        assert_eq!(
            got.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
            ["rm -f /tmp/x", "whystack-health live"]
        );
        // An alias's command is checked.
        let got = read("alias hc='nosuch-tool live'\nhc");
        assert_eq!(got[0].0, "nosuch-tool live");
        // After `. FILE`, a name may be a function of FILE.
        let got = read(". /app/lib.sh\ncheck_health live\n/bin/x");
        let check = got.iter().find(|c| c.0 == "check_health live").unwrap();
        assert!(check.2, "{got:?}");
        assert!(!got.iter().find(|c| c.0 == "/bin/x").unwrap().2);
        assert!(!read("check_health live")[0].2);
    }

    /// What the review found read wrongly: POSIX forms taken for bash's, a
    /// data file taken for a library, `time`'s options taken for its
    /// command.
    #[test]
    fn posix_forms_data_files_and_time_options() {
        for script in [
            "functions_init() { x; }\nfunctions_init",
            "x & pid=${!}; wait ${!}",
        ] {
            assert!(read(script).iter().all(|(_, bash, _)| !bash), "{script}");
        }
        let got = read(". /etc/os-release\ncurl -fsS x");
        assert!(
            !got.iter().find(|c| c.0.starts_with("curl")).unwrap().2,
            "{got:?}"
        );
        let got = read("time -f '%e' ./job a");
        assert_eq!(got.last().map(|c| c.0.as_str()), Some("./job a"), "{got:?}");
        assert!(!got.iter().any(|c| c.0.starts_with("-f")), "{got:?}");
        // A bare `exit` after the failed question keeps its status.
        let got = read("command -v hc >/dev/null || exit\nhc live");
        assert!(!got.iter().find(|c| c.0 == "hc live").unwrap().2, "{got:?}");
        // Deep `${PATH:+…}` nesting reads as unknown, without recursing on.
        let deep = format!(
            "PATH={}/x{}; tool",
            "${PATH:+".repeat(2000),
            "}".repeat(2000)
        );
        assert!(in_sh(&deep)
            .calls
            .last()
            .is_some_and(|c| c.scope.path_unknown));
        // `bash --version` reads no commands from its input.
        let words: Vec<Option<String>> = ["bash", "--version"]
            .iter()
            .map(|w| Some(w.to_string()))
            .collect();
        assert!(calls(&words).dynamic.is_empty());
    }

    #[test]
    fn nothing_runs_after_exec_or_exit() {
        let names = |script: &str| read(script).into_iter().map(|c| c.0).collect::<Vec<_>>();
        assert_eq!(
            names("exec whystack-health live\nnosuch-tool"),
            ["whystack-health live"]
        );
        assert_eq!(names("a\nexit 0\nb"), ["a"]);
        // `exec` with redirections alone goes on; a conditional exit too.
        assert_eq!(names("exec >/dev/null 2>&1\na"), ["a"]);
        assert_eq!(names("[ -f x ] && exit 0\na"), ["a"]);
    }

    #[test]
    fn a_guard_that_fails_without_the_program_plans_for_nothing() {
        let guarded = |script: &str, name: &str| {
            read(script)
                .into_iter()
                .find(|c| c.0.starts_with(name))
                .map(|c| c.2)
        };
        assert_eq!(
            guarded("command -v hc >/dev/null || exit 0\nhc live", "hc"),
            Some(true)
        );
        assert_eq!(
            guarded("command -v hc >/dev/null || exit 1\nhc live", "hc"),
            Some(false)
        );
        assert_eq!(
            guarded(
                "type hc >/dev/null 2>&1 || { echo no; exit 1; }\nhc live",
                "hc"
            ),
            Some(false)
        );
        assert_eq!(
            guarded(
                "if ! command -v hc >/dev/null; then echo no >&2; exit 1; fi\nhc live",
                "hc"
            ),
            Some(false)
        );
        assert_eq!(
            guarded("if command -v hc; then hc live; else exit 3; fi", "hc live"),
            Some(false)
        );
        assert_eq!(
            guarded("if command -v hc; then hc live; fi", "hc live"),
            Some(true)
        );
        // A file test plans for the file's absence.
        assert_eq!(
            guarded(
                "if [ -x /opt/hc ]; then exec /opt/hc live; fi\nexit 0",
                "/opt/hc"
            ),
            Some(true)
        );
        // `Q && CALL` protects the call, unless the list's status is the
        // script's: then the probe fails without the program all the same.
        assert_eq!(
            guarded("[[ -x /opt/hc ]] && /opt/hc live\ntrue", "/opt/hc"),
            Some(true)
        );
        assert_eq!(
            guarded("[[ -x /opt/hc ]] && /opt/hc live", "/opt/hc"),
            Some(false)
        );
    }

    /// A question protects only the calls its answer keeps from running
    /// when the program is absent: not those after an answer the script
    /// ignores, nor those before the question.
    #[test]
    fn a_guard_protects_only_what_its_answer_decides() {
        let guarded = |script: &str| {
            read(script)
                .into_iter()
                .filter(|c| c.0.starts_with("curl -f"))
                .map(|c| c.2)
                .collect::<Vec<bool>>()
        };
        for (script, want) in [
            ("command -v curl >/dev/null; curl -f x", vec![false]),
            ("command -v curl >/dev/null && curl -f x", vec![false]),
            (
                "command -v curl >/dev/null && curl -f x; exit 0",
                vec![true],
            ),
            ("curl -f x; command -v curl || exit 0", vec![false]),
            ("command -v curl || echo no curl; curl -f x", vec![false]),
            ("if command -v curl; then :; fi; curl -f x", vec![false]),
            ("type curl; curl -f x", vec![false]),
            ("hash curl 2>/dev/null; curl -f x", vec![false]),
            ("[ -x /usr/bin/curl ]; curl -f x", vec![false]),
            (
                "command -v curl >/dev/null || exit 0; curl -f x",
                vec![true],
            ),
            (
                "command -v curl >/dev/null || { echo no; exit 0; }\ncurl -f x",
                vec![true],
            ),
            (
                "if ! command -v curl; then exit 0; fi; curl -f x",
                vec![true],
            ),
            (
                "if ! command -v curl; then echo no; else curl -f x; fi",
                vec![true],
            ),
            (
                "if command -v curl; then curl -f x; fi; curl -f y",
                vec![true, false],
            ),
            (
                "if which curl; then :; else exit 0; fi; curl -f x",
                vec![true],
            ),
            (
                "f() { command -v curl || return 0; }; f; curl -f x",
                vec![false],
            ),
            // In a block, the guard holds to the block's end.
            (
                "if true; then command -v curl || exit 0; curl -f x; fi; curl -f y",
                vec![true, false],
            ),
        ] {
            assert_eq!(guarded(script), want, "{script}");
        }
    }

    /// A line ends a comment and a here-document's body is no shell text:
    /// their quotes do not keep a backslash-newline from joining lines;
    /// a body left as written (a delimiter quoted even in part) runs no
    /// substitution.
    #[test]
    fn comments_and_here_documents_are_read_as_the_shell_reads_them() {
        let names =
            |script: &str| -> Vec<String> { read(script).into_iter().map(|c| c.0).collect() };
        assert_eq!(names("# it's the check\nnode\\\njs -e 1"), ["nodejs -e 1"]);
        assert_eq!(
            names("cat <<EOF\nit's\nEOF\nnode\\\njs -e 1"),
            ["cat", "nodejs -e 1"]
        );
        assert_eq!(names("echo a#b'c'\nno\\\nde x"), ["node x"]);
        for quoted in ["'EOF'", "EO\"F\"", "\\EOF"] {
            let script = format!("cat <<{quoted}\n$(curl -s x)\nEOF\n");
            assert_eq!(names(&script), ["cat"], "{quoted}");
        }
        assert_eq!(
            names("cat <<EOF\n$(curl -s x)\nEOF\n"),
            ["cat", "curl -s x"]
        );
    }

    /// A backquoted substitution inside `${…}`, which the parser leaves as
    /// text, runs its command all the same; once.
    #[test]
    fn backquotes_inside_an_expansion_are_read() {
        for script in [
            "echo ${X:-`curl -s x`}",
            "echo \"${X:-`curl -s x`}\"",
            "X=${Y:-`curl -s x`}",
            "echo ${X:+${Y:-`curl -s x`}}",
            "echo ${X:-$(curl -s x)}",
        ] {
            let got: Vec<String> = read(script).into_iter().map(|c| c.0).collect();
            assert_eq!(got, ["curl -s x"], "{script}");
        }
    }

    /// The words after a `-c` script are its positional parameters.
    #[test]
    fn positional_parameters_are_the_words_after_the_script() {
        for (words, want) in [
            (
                &["sh", "-c", "whystack-health $1", "sh", "ready"][..],
                "whystack-health ready",
            ),
            (
                &["sh", "-c", "whystack-health \"$0\"", "ready"],
                "whystack-health ready",
            ),
            (
                &["sh", "-c", "exec \"$@\"", "sh", "curl", "-f", "x y"],
                "curl -f x y",
            ),
            (&["sh", "-c", "\"$0\" -f x", "curl"], "curl -f x"),
            (&["sh", "-c", "tool ${1} $2 '$1'", "sh", "a"], "tool a $1"),
            (
                &["sh", "-c", "tool \"$*\" $#", "sh", "a", "b"],
                "tool a b 2",
            ),
        ] {
            let (p, _) = super::tests::programs(words);
            assert_eq!(p.last().map(String::as_str), Some(want), "{words:?}");
        }
        // Without words after it, `$0` is the shell's name, unknown here.
        let (_, dynamic) = super::tests::programs(&["sh", "-c", "\"$0\" x"]);
        assert!(!dynamic.is_empty());
    }

    /// A variable the script (or the container's environment) gives a
    /// value is that value where the shell expands it, until something
    /// may have changed it: a branch, a loop's earlier round, the time a
    /// function is called, `read`, a sourced file. A nested shell sees
    /// only what is exported.
    #[test]
    fn variables_are_their_values_where_the_shell_knows_them() {
        let last = |script: &str, env: &[(&str, &str)]| {
            let argv = [
                Some("sh".to_string()),
                Some("-c".into()),
                Some(script.into()),
            ];
            let runs = calls_in(&argv, env.iter().copied(), Files::default());
            runs.calls.last().map(Call::display).unwrap_or_default()
        };
        for (script, want) in [
            ("W=ready; tool $W", "tool ready"),
            ("W=ready\ntool \"$W\" ${W}", "tool ready ready"),
            ("T=whystack-health; $T ready", "whystack-health ready"),
            ("CMD='whystack-health ready'; $CMD", "whystack-health ready"),
            (
                "CMD='whystack-health ready'; \"$CMD\"",
                "whystack-health ready",
            ),
            ("D=/opt/bin; $D/tool", "/opt/bin/tool"),
            ("E=; $E tool x", "tool x"),
            ("A=x; B=\"$A-y\"; tool $B", "tool x-y"),
            ("A=x; A+=y; tool $A", "tool xy"),
            ("export W=ready; tool $W", "tool ready"),
            ("W=a; (W=b); tool $W", "tool a"),
            ("W=a; W=b tool $W", "tool a"),
            ("G='*'; tool \"$G\"", "tool *"),
            // Only known when the script runs.
            ("G='*'; tool $G", "tool …"),
            ("W=a; if test -f x; then W=b; fi; tool $W", "tool …"),
            ("W=a; for i in 1 2; do tool $W; W=b; done", "tool …"),
            ("W=a; f() { tool $W; }; W=b; f", "tool …"),
            ("W=a; read W; tool $W", "tool …"),
            ("W=a; unset W; tool $W", "tool …"),
            ("W=a; . ./lib.sh; tool $W", "tool …"),
            ("W=a; eval \"$X\"; tool $W", "tool …"),
            ("W=$(date); tool $W", "tool …"),
            ("W=a; tool ${W:-b}", "tool …"),
            ("tool $HOME", "tool …"),
            // A nested shell: the parent expands a double-quoted script;
            // a single-quoted one sees only exported variables.
            ("W=a; sh -c \"tool $W\"", "tool a"),
            ("W=a; sh -c 'tool $W'", "tool …"),
            ("export W=a; sh -c 'tool $W'", "tool a"),
            ("W=a; export W; sh -c 'tool $W'", "tool a"),
        ] {
            assert_eq!(last(script, &[]), want, "{script}");
        }
        // The container's environment: exported, and changed by the script.
        let env = [("MODE", "ready")];
        assert_eq!(last("whystack-health $MODE", &env), "whystack-health ready");
        assert_eq!(last("sh -c 'tool $MODE'", &env), "tool ready");
        assert_eq!(last("MODE=live; tool $MODE", &env), "tool live");
    }

    /// A script file one of the container's volumes holds is read where
    /// a command runs it: by its path, on PATH, as `sh FILE` (with its
    /// words as `$1`…) and as `. FILE`; each call of it knows the file and
    /// its line there.
    #[test]
    fn script_files_of_volumes_are_read_where_they_run() {
        let files = Files {
            texts: [
                (
                    "/opt/probe/probe.sh",
                    "#!/bin/sh\nset -e\nwhystack-nope \"$1\"\n",
                ),
                ("/opt/probe/lib.sh", "helper() { :; }\nlib-tool x\n"),
                ("/opt/probe/loop.sh", "#!/bin/sh\n/opt/probe/loop.sh\n"),
                ("/opt/probe/tool.py", "#!/usr/bin/env python3\nimport os\n"),
                ("/opt/probe/env.sh", "#!/usr/bin/env -S bash\nenv-tool\n"),
            ]
            .into_iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect(),
            path: "/opt/probe:/usr/bin".into(),
            cwd: "/opt".into(),
            wrappers: vec!["apps/entrypoint.sh".into()],
        };
        let run = |argv: &[&str]| {
            let argv: Vec<Option<String>> = argv.iter().map(|w| Some(w.to_string())).collect();
            calls_in(&argv, std::iter::empty(), files.clone())
        };
        let in_file = |runs: &Calls| -> Vec<(String, Option<String>, Option<usize>)> {
            runs.calls
                .iter()
                .filter(|c| c.file.is_some())
                .map(|c| (c.display(), c.file.clone(), c.line))
                .collect()
        };
        let probe = |arg: &str| {
            vec![(
                format!("whystack-nope {arg}"),
                Some("/opt/probe/probe.sh".to_string()),
                Some(2),
            )]
        };
        assert_eq!(
            in_file(&run(&["/opt/probe/probe.sh", "live"])),
            probe("live")
        );
        assert_eq!(in_file(&run(&["probe.sh", "live"])), probe("live"));
        assert_eq!(
            in_file(&run(&["sh", "probe/probe.sh", "ready"])),
            probe("ready")
        );
        assert_eq!(
            in_file(&run(&["sh", "-c", "cd probe && sh ./probe.sh x"])),
            probe("x")
        );
        let sourced = run(&["sh", "-c", ". /opt/probe/lib.sh; helper; other"]);
        assert_eq!(in_file(&sourced)[0].0, "lib-tool x");
        assert!(sourced.dynamic.is_empty(), "{:?}", sourced.dynamic);
        // After it, a name may be one of its functions.
        assert!(sourced
            .calls
            .iter()
            .any(|c| c.display() == "helper" && c.guarded));
        // Not a shell's script, or calling itself: read once, or not at all.
        assert_eq!(in_file(&run(&["/opt/probe/tool.py"])), []);
        assert_eq!(in_file(&run(&["/opt/probe/env.sh"]))[0].0, "env-tool");
        assert_eq!(in_file(&run(&["/opt/probe/loop.sh"])).len(), 1);
        // A file no volume holds is still named as not read.
        let other = run(&["sh", "/elsewhere/probe.sh"]);
        assert_eq!(other.dynamic.len(), 1, "{:?}", other.dynamic);
        // A program that runs its arguments runs them.
        let wrapped = run(&["/app/apps/entrypoint.sh", "node", "x.js"]);
        let shown: Vec<String> = wrapped.calls.iter().map(Call::display).collect();
        assert_eq!(shown, ["/app/apps/entrypoint.sh node x.js", "node x.js"]);
    }

    /// What a function never called would run never runs; a call by name,
    /// from a trap, or from another function that is called runs it.
    #[test]
    fn a_function_never_called_runs_nothing() {
        let names =
            |script: &str| -> Vec<String> { read(script).into_iter().map(|c| c.0).collect() };
        assert_eq!(names("f() { curl -s x; }\nnode y"), ["node y"]);
        assert_eq!(names("f() { curl -s x; f; }\nnode y"), ["node y"]);
        assert_eq!(names("f() { curl -s x; }\nf"), ["curl -s x"]);
        assert_eq!(
            names("cleanup() { rm -rf /tmp/x; }\ntrap cleanup EXIT\nnode y"),
            ["rm -rf /tmp/x", "node y"]
        );
        assert_eq!(names("g() { curl -s x; }\nf() { g; }\nf"), ["curl -s x"]);
        // A command named at run time may call any of them.
        assert_eq!(names("f() { curl -s x; }\n\"$1\""), ["curl -s x"]);
    }

    /// What a nested script sources defines its functions, not its
    /// parent's.
    #[test]
    fn a_file_sourced_by_a_nested_script_defines_nothing_in_its_parent() {
        let got = read("sh -c '. /opt/lib.sh; lib_fn'\ncurl -f x");
        let of = |name: &str| got.iter().find(|c| c.0.starts_with(name)).map(|c| c.2);
        assert_eq!(of("lib_fn"), Some(true));
        assert_eq!(of("curl"), Some(false));
        let got = read(". /opt/lib.sh\nlib_fn");
        assert_eq!(got.last().map(|c| c.2), Some(true));
    }

    #[test]
    fn more_wrappers_run_their_command() {
        for words in [
            &["time", "-p", "x", "a"][..],
            &["ionice", "-c3", "x", "a"],
            &["ionice", "-c", "3", "x", "a"],
            &["taskset", "-c", "0,1", "x", "a"],
            &["chrt", "-f", "10", "x", "a"],
            &["prlimit", "--nofile=1024", "x", "a"],
            &["busybox", "timeout", "5", "x", "a"],
        ] {
            let (p, _) = super::tests::programs(words);
            assert_eq!(p.last().map(String::as_str), Some("x a"), "{words:?}");
        }
        let (p, _) = super::tests::programs(&["taskset", "-p", "3", "1"]);
        assert_eq!(p.len(), 1);
        let got = read("time nosuch-tool live");
        assert_eq!(got.last().map(|c| c.0.as_str()), Some("nosuch-tool live"));
    }

    #[test]
    fn a_script_on_a_shells_input_is_named() {
        for script in ["echo 'x' | sh", "sh -s <<'EOF'\nx\nEOF\n"] {
            assert!(!in_sh(script).dynamic.is_empty(), "{script}");
        }
        assert!(in_sh("sh -c 'x'").dynamic.is_empty());
    }
}
