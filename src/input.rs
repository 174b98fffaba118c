//! Reading the project's files as inputs, and as nothing else.
//!
//! Every input file is opened without following symbolic links (in any
//! component of its path below the project root, not only the last one),
//! must be a regular file (a FIFO would block the build, a device could
//! never end), and is read up to [`MAX_FILE_BYTES`] plus one byte, whatever
//! size the file claims. Folders of inputs must be real folders, not links.
//! Every refusal is a finding with a rule id and the path at fault.

use crate::diagnostics::{rule, Diagnostic, Location, Rule};
use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Component, Path, PathBuf};

/// The largest input file basepress reads.
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// Why a file could not be read.
#[derive(Debug)]
enum Refused {
    /// Nothing at the path (or a component of it is not a folder).
    Missing,
    /// A symbolic link on the way, at this path.
    Link(PathBuf),
    /// Not a regular file: what it is.
    NotFile(&'static str),
    /// More than [`MAX_FILE_BYTES`].
    TooLarge,
    /// The path leaves the project root.
    Outside,
    Io(std::io::Error),
}

/// Reads the input file `path` (below `root`, or named from it).
pub fn read(root: &Path, path: &Path) -> Result<Vec<u8>, Diagnostic> {
    Root::open(root).read(path)
}

/// [`read`], with `None` when there is no file at `path`.
pub fn read_optional(root: &Path, path: &Path) -> Result<Option<Vec<u8>>, Diagnostic> {
    Root::open(root).read_optional(path)
}

/// A project root opened once, for reading many files below it: each read
/// starts from this handle instead of opening the root again (a build
/// reads every page of every docs version).
pub struct Root<'a> {
    path: &'a Path,
    /// The root folder, opened (`None` when it cannot be: each read then
    /// tries again and says why).
    dir: Option<std::fs::File>,
}

impl<'a> Root<'a> {
    pub fn open(path: &'a Path) -> Self {
        Root {
            path,
            dir: std::fs::File::open(path).ok(),
        }
    }

    /// The root's path, as given.
    pub fn path(&self) -> &'a Path {
        self.path
    }

    /// Reads the input file `path` (below the root, or named from it).
    pub fn read(&self, path: &Path) -> Result<Vec<u8>, Diagnostic> {
        self.read_optional(path)?.ok_or_else(|| {
            Diagnostic::new(rule::IO_UNREADABLE, "cannot read: the file does not exist")
                .in_file(relative(self.path, path))
        })
    }

    /// [`Root::read`], with `None` when there is no file at `path`.
    pub fn read_optional(&self, path: &Path) -> Result<Option<Vec<u8>>, Diagnostic> {
        let root = self.path;
        let rel = relative(root, path);
        let result = match path.strip_prefix(root) {
            Ok(below) => match &self.dir {
                Some(dir) => open_below(dir, root, below),
                None => std::fs::File::open(root)
                    .map_err(Refused::Io)
                    .and_then(|dir| open_below(&dir, root, below)),
            }
            .and_then(read_capped),
            // Not named from the root: only the last component is checked.
            Err(_) => open_one(path).and_then(read_capped),
        };
        match result {
            Ok(bytes) => Ok(Some(bytes)),
            Err(Refused::Missing) => Ok(None),
            Err(why) => Err(refusal(root, &rel, why)),
        }
    }
}

/// Reads a file that is not an input of the project (a deployed site, a
/// file a finding quotes) the same careful way: the last component not
/// followed if it is a link, regular files only, at most
/// [`MAX_FILE_BYTES`].
pub fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    open_one(path)
        .and_then(read_capped)
        .map_err(|why| match why {
            Refused::Io(e) => e,
            Refused::Missing => std::io::ErrorKind::NotFound.into(),
            Refused::Link(_) => {
                std::io::Error::other("it is a symbolic link, which basepress does not follow")
            }
            Refused::NotFile(what) => {
                std::io::Error::other(format!("it is {what}, not a regular file"))
            }
            Refused::TooLarge => std::io::Error::other(format!(
                "it has more than the {MAX_FILE_BYTES} bytes basepress reads"
            )),
            Refused::Outside => std::io::Error::other("it is outside the folder read"),
        })
}

/// Opens a file named on the command line or inside an image source,
/// following links as the user's own path does, and never waiting: a
/// FIFO, a socket or a device is refused (`it is a FIFO …`) instead of
/// blocking the run until something writes to it.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    #[cfg(unix)]
    let file: std::fs::File = {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        rustix::fs::open(path, flags, Mode::empty())
            .map_err(std::io::Error::from)?
            .into()
    };
    #[cfg(not(unix))]
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!(
            "it is {}, not a regular file",
            kind(&meta)
        )));
    }
    Ok(file)
}

/// Whether `dir` (below `root`) is a folder to read inputs from: `Ok(true)`
/// for a real folder, `Ok(false)` when nothing is there, and a finding
/// when it is a symbolic link or not a folder.
pub fn dir_state(root: &Path, dir: &Path) -> Result<bool, Diagnostic> {
    let rel = relative(root, dir);
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(refusal(root, &rel, Refused::Io(e))),
        Ok(m) if m.file_type().is_symlink() => Err(refusal(root, &rel, Refused::Link(rel.clone()))),
        Ok(m) if m.is_dir() => match dir.strip_prefix(root).ok().and_then(first_link(root)) {
            Some(link) => Err(refusal(root, &rel, Refused::Link(link))),
            None => Ok(true),
        },
        Ok(m) => Err(Diagnostic::new(
            rule::INPUT_NOT_A_FILE,
            format!(
                "`{}` is {}, where a folder is expected",
                rel.display(),
                kind(&m)
            ),
        )
        .in_file(&rel)
        .help("make it a folder (move the file away, and create the folder in its place)")),
    }
}

/// What a directory entry that is neither a file, a folder nor a link is,
/// as a finding (walkers report them instead of skipping them silently).
pub fn not_a_file(root: &Path, path: &Path) -> Diagnostic {
    let what = std::fs::symlink_metadata(path).map_or("not a regular file", |m| kind(&m));
    refusal(root, &relative(root, path), Refused::NotFile(what))
}

/// Whether a path named by a setting stays inside the project: relative,
/// and without `..`.
pub fn stays_inside(path: &Path) -> bool {
    !path.as_os_str().is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// The lines of a text file as editors write them: after a byte-order
/// mark, ended by `\n`, `\r\n` or a lone `\r` (an old Mac editor's),
/// so that no line break is ever taken for part of a line.
pub fn text_lines(text: &str) -> impl Iterator<Item = &str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.strip_suffix('\n').unwrap_or(text);
    let text = text.strip_suffix('\r').unwrap_or(text);
    text.split('\n')
        .flat_map(|l| l.strip_suffix('\r').unwrap_or(l).split('\r'))
        .filter(move |_| !text.is_empty())
}

/// The text of an input, or a finding of `rule` at the line and column of
/// the first byte that is not UTF-8.
pub fn utf8(bytes: Vec<u8>, file: &Path, rule: &'static Rule) -> Result<String, Diagnostic> {
    String::from_utf8(bytes).map_err(|e| utf8_error(e.as_bytes(), &e.utf8_error(), file, rule))
}

/// The finding for bytes that are not UTF-8, at the line and column (in
/// characters) of the first bad byte.
pub fn utf8_error(
    bytes: &[u8],
    e: &std::str::Utf8Error,
    file: &Path,
    rule: &'static Rule,
) -> Diagnostic {
    let at = e.valid_up_to();
    let (line, column) = utf8_position(bytes, at);
    let byte = bytes.get(at).copied().unwrap_or(0);
    Diagnostic::new(
        rule,
        format!("not valid UTF-8: byte 0x{byte:02X} at line {line}, column {column} is not part of a character"),
    )
    .at(Location::at(file, line, column))
    .help("save the file as UTF-8")
}

/// The 1-based line and column of byte `at` in `bytes`, which are valid
/// UTF-8 before it.
pub fn utf8_position(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = &bytes[..at.min(bytes.len())];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let column = 1 + std::str::from_utf8(&before[line_start..]).map_or(0, |s| s.chars().count());
    (line, column)
}

/// Names in one folder that differ only in case (`Install.md` and
/// `install.md`): a checkout on a disk that ignores case holds only one.
pub fn case_clashes<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<(&'a str, &'a str)> {
    let mut seen: HashMap<String, &str> = HashMap::new();
    let mut out = Vec::new();
    for name in names {
        match seen.get(&name.to_lowercase()) {
            Some(first) if *first != name => out.push((*first, name)),
            Some(_) => {}
            None => {
                seen.insert(name.to_lowercase(), name);
            }
        }
    }
    out
}

fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}

fn kind(m: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    if m.is_dir() {
        "a folder"
    } else if m.file_type().is_symlink() {
        "a symbolic link"
    } else if m.is_file() {
        "a file"
    } else {
        "not a regular file"
    }
}

fn refusal(root: &Path, rel: &Path, why: Refused) -> Diagnostic {
    match why {
        Refused::Missing => {
            Diagnostic::new(rule::IO_UNREADABLE, "cannot read: the file does not exist").in_file(rel)
        }
        Refused::Link(link) => Diagnostic::new(
            rule::INPUT_SYMLINK,
            format!(
                "`{}` is a symbolic link, which basepress does not follow: it could point outside the project",
                link.display()
            ),
        )
        .in_file(relative(root, &link)),
        Refused::NotFile(what) => Diagnostic::new(
            rule::INPUT_NOT_A_FILE,
            format!("`{}` is {what}, not a regular file", rel.display()),
        )
        .in_file(rel),
        Refused::TooLarge => Diagnostic::new(
            rule::INPUT_TOO_LARGE,
            format!("the file has more than {MAX_FILE_BYTES} bytes; basepress reads at most {MAX_FILE_BYTES}"),
        )
        .in_file(rel),
        Refused::Outside => Diagnostic::new(
            rule::IO_UNREADABLE,
            format!("`{}` is outside the project folder", rel.display()),
        )
        .in_file(rel)
        .help("name files inside the project, with relative paths that do not use `..`"),
        Refused::Io(e) => Diagnostic::new(rule::IO_UNREADABLE, format!("cannot read: {e}")).in_file(rel),
    }
}

/// Reads an opened file: a regular file, at most [`MAX_FILE_BYTES`].
fn read_capped(file: std::fs::File) -> Result<Vec<u8>, Refused> {
    let meta = file.metadata().map_err(Refused::Io)?;
    if !meta.is_file() {
        return Err(Refused::NotFile(kind(&meta)));
    }
    let hint = meta.len().min(MAX_FILE_BYTES + 1) as usize;
    let mut bytes = Vec::with_capacity(hint);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(Refused::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Refused::TooLarge);
    }
    Ok(bytes)
}

/// The first component of `below` (relative to `root`) that is a
/// symbolic link, as a path below the root.
fn first_link(root: &Path) -> impl Fn(&Path) -> Option<PathBuf> + '_ {
    move |below: &Path| {
        let mut at = PathBuf::new();
        for c in below.components() {
            at.push(c);
            let m = std::fs::symlink_metadata(root.join(&at)).ok()?;
            if m.file_type().is_symlink() {
                return Some(at);
            }
        }
        None
    }
}

#[cfg(unix)]
mod open {
    use super::Refused;
    use rustix::fs::{openat, statat, AtFlags, FileType, Mode, OFlags};
    use rustix::io::Errno;
    use std::path::{Component, Path};

    const FILE_FLAGS: OFlags = OFlags::RDONLY
        .union(OFlags::NOFOLLOW)
        .union(OFlags::NONBLOCK)
        .union(OFlags::NOCTTY)
        .union(OFlags::CLOEXEC);
    const DIR_FLAGS: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);

    fn refused(e: Errno, at: &Path) -> Refused {
        if e == Errno::LOOP {
            Refused::Link(at.to_path_buf())
        } else if e == Errno::NOENT || e == Errno::NOTDIR {
            Refused::Missing
        } else if e == Errno::NXIO || e == Errno::OPNOTSUPP {
            Refused::NotFile("a socket or a device")
        } else {
            Refused::Io(e.into())
        }
    }

    /// Opens `below` relative to `root` (opened as `root_fd`), following
    /// no link on the way.
    pub(super) fn open_below(
        root_fd: &std::fs::File,
        root: &Path,
        below: &Path,
    ) -> Result<std::fs::File, Refused> {
        if !super::stays_inside(below) {
            return Err(Refused::Outside);
        }
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{openat2, ResolveFlags};
            let resolve =
                ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
            match openat2(root_fd, below, FILE_FLAGS, Mode::empty(), resolve) {
                Ok(fd) => return Ok(fd.into()),
                // Kernels before 5.6, or a sandbox that forbids it: walk.
                Err(e) if e == Errno::NOSYS || e == Errno::PERM || e == Errno::INVAL => {}
                Err(e) if e == Errno::LOOP => {
                    let link = super::first_link(root)(below);
                    return Err(Refused::Link(link.unwrap_or_else(|| below.to_path_buf())));
                }
                Err(e) if e == Errno::XDEV => return Err(Refused::Outside),
                Err(e) => return Err(refused(e, below)),
            }
        }
        walk(root_fd, below)
    }

    /// Opens `below` one component at a time, each relative to the last.
    fn walk(root_fd: &std::fs::File, below: &Path) -> Result<std::fs::File, Refused> {
        let parts: Vec<_> = below
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .collect();
        let Some((last, folders)) = parts.split_last() else {
            return Err(Refused::Outside);
        };
        let mut fd: std::os::fd::OwnedFd = root_fd.try_clone().map_err(Refused::Io)?.into();
        let mut at = std::path::PathBuf::new();
        for part in folders {
            at.push(part);
            fd = match openat(&fd, part.as_os_str(), DIR_FLAGS, Mode::empty()) {
                Ok(next) => next,
                Err(e) if e == Errno::NOTDIR => {
                    let is_link = statat(&fd, part.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
                        .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Symlink);
                    return Err(if is_link {
                        Refused::Link(at)
                    } else {
                        Refused::Missing
                    });
                }
                Err(e) => return Err(refused(e, &at)),
            };
        }
        at.push(last);
        openat(&fd, last.as_os_str(), FILE_FLAGS, Mode::empty())
            .map(Into::into)
            .map_err(|e| refused(e, &at))
    }

    /// Opens `path` without following a link at its last component.
    pub(super) fn open_one(path: &Path) -> Result<std::fs::File, Refused> {
        openat(rustix::fs::CWD, path, FILE_FLAGS, Mode::empty())
            .map(Into::into)
            .map_err(|e| refused(e, path))
    }
}

#[cfg(not(unix))]
mod open {
    use super::Refused;
    use std::path::Path;

    pub(super) fn open_below(
        _root_fd: &std::fs::File,
        root: &Path,
        below: &Path,
    ) -> Result<std::fs::File, Refused> {
        if !super::stays_inside(below) {
            return Err(Refused::Outside);
        }
        if let Some(link) = super::first_link(root)(below) {
            return Err(Refused::Link(link));
        }
        open_one(&root.join(below))
    }

    pub(super) fn open_one(path: &Path) -> Result<std::fs::File, Refused> {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => return Err(Refused::Link(path.to_path_buf())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Refused::Missing),
            _ => {}
        }
        std::fs::File::open(path).map_err(Refused::Io)
    }
}

use open::{open_below, open_one};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_errors_have_a_line_and_a_column() {
        assert_eq!(utf8_position(b"ab\ncd\xc3\xa9f\xff", 8), (2, 5));
        assert_eq!(utf8_position(b"\xff", 0), (1, 1));
        let e = utf8(
            b"ok\nn\xe9e\n".to_vec(),
            Path::new("a.md"),
            rule::IO_UNREADABLE,
        )
        .unwrap_err();
        let loc = e.location.unwrap();
        assert_eq!((loc.line, loc.column), (Some(2), Some(2)));
        assert!(e.message.contains("0xE9"), "{}", e.message);
    }

    #[test]
    fn settings_paths_stay_inside() {
        assert!(stays_inside(Path::new("image-releases.yaml")));
        assert!(stays_inside(Path::new("./data/images.yaml")));
        assert!(!stays_inside(Path::new("../images.yaml")));
        assert!(!stays_inside(Path::new("data/../../x")));
        assert!(!stays_inside(Path::new("/etc/passwd")));
        assert!(!stays_inside(Path::new("")));
    }

    #[test]
    fn names_that_differ_only_in_case_clash() {
        assert_eq!(
            case_clashes(["Install.md", "index.md", "install.md", "Install.md"]),
            [("Install.md", "install.md")]
        );
    }

    #[cfg(unix)]
    #[test]
    fn links_fifos_and_huge_files_are_refused_wherever_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        std::fs::write(root.join("real/sub/a.md"), "a").unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("linked")).unwrap();
        std::os::unix::fs::symlink(root.join("real/sub/a.md"), root.join("real/b.md")).unwrap();
        assert_eq!(read(root, &root.join("real/sub/a.md")).unwrap(), b"a");

        let e = read(root, &root.join("linked/sub/a.md")).unwrap_err();
        assert_eq!(e.rule.id, "input-symlink");
        assert_eq!(e.location.unwrap().file, Path::new("linked"));
        let e = read(root, &root.join("real/b.md")).unwrap_err();
        assert_eq!(e.rule.id, "input-symlink");
        assert_eq!(
            read(root, &root.join("../x")).unwrap_err().rule.id,
            "io-unreadable"
        );
        assert!(read_optional(root, &root.join("real/none.md"))
            .unwrap()
            .is_none());
        let e = dir_state(root, &root.join("linked")).unwrap_err();
        assert_eq!(e.rule.id, "input-symlink");
        assert!(dir_state(root, &root.join("real")).unwrap());
        assert!(!dir_state(root, &root.join("none")).unwrap());

        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            root.join("real/pipe.md"),
            rustix::fs::Mode::from_bits_truncate(0o644),
        )
        .unwrap();
        let e = read(root, &root.join("real/pipe.md")).unwrap_err();
        assert_eq!(e.rule.id, "input-not-a-file");
        assert!(e.message.contains("FIFO"), "{}", e.message);
        // Files outside the project say why in words.
        let e = read_file(&root.join("real/pipe.md")).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        let e = read_file(&root.join("real/b.md")).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        // A file where a folder is expected is called a file.
        let e = dir_state(root, &root.join("real/sub/a.md")).unwrap_err();
        assert!(
            e.message.contains("is a file, where a folder"),
            "{}",
            e.message
        );
        assert!(e
            .help
            .as_deref()
            .is_some_and(|h| h.contains("make it a folder")));
        let e = read(root, &root.join("real")).unwrap_err();
        assert_eq!(e.rule.id, "input-not-a-file");

        // A file that grows past the cap while read: the cap holds.
        let big = std::fs::File::create(root.join("real/big.md")).unwrap();
        big.set_len(MAX_FILE_BYTES + 1).unwrap();
        let e = read(root, &root.join("real/big.md")).unwrap_err();
        assert_eq!(e.rule.id, "input-too-large");
    }
}
