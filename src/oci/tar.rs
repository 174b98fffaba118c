//! A streaming reader of tar headers, for metadata only.
//!
//! Layers are read once, as they are decompressed, and only their headers
//! matter: file contents are skipped. The `tar` crate reads GNU long-name
//! and PAX extension members whole with no bound (a hostile layer could
//! make it allocate gigabytes), and its raw mode skips entries without
//! their PAX sizes, so this module reads the format itself, with every
//! extension bounded: ustar, GNU (long names and links, old sparse files,
//! base-256 numbers) and PAX (path, linkpath, size, uid, gid, GNU sparse
//! names and sizes). Writing tars (the fixtures) uses the `tar` crate, so
//! the tests check this reader against it.

use super::Error;
use std::io::{self, Read, Seek, SeekFrom};

const BLOCK: usize = 512;
/// The largest GNU long name, long link or PAX header member accepted.
pub const MAX_EXTENSION_BYTES: u64 = 1 << 20;
/// The longest path or link target accepted.
pub const MAX_PATH_BYTES: usize = 32 << 10;

/// Where the tar bytes come from: anything readable, and a faster skip
/// for files that can seek.
pub trait Input: Read {
    /// Skips exactly `n` bytes, failing with `UnexpectedEof` when fewer
    /// are left.
    fn skip(&mut self, n: u64, scratch: &mut [u8]) -> io::Result<()>;
}

/// A stream that can only be read forward: skipping reads and discards.
pub struct Stream<R>(pub R);

impl<R: Read> Read for Stream<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: Read> Input for Stream<R> {
    fn skip(&mut self, mut n: u64, scratch: &mut [u8]) -> io::Result<()> {
        while n > 0 {
            let want = scratch.len().min(usize::try_from(n).unwrap_or(usize::MAX));
            let got = self.0.read(&mut scratch[..want])?;
            if got == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            n -= got as u64;
        }
        Ok(())
    }
}

/// A file of known length that skips by seeking.
pub struct Seekable<F> {
    inner: F,
    pos: u64,
    len: u64,
}

impl<F: Read + Seek> Seekable<F> {
    pub fn new(mut inner: F) -> io::Result<Self> {
        let len = inner.seek(SeekFrom::End(0))?;
        inner.seek(SeekFrom::Start(0))?;
        Ok(Seekable { inner, pos: 0, len })
    }
}

impl<F: Read> Read for Seekable<F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<F: Read + Seek> Input for Seekable<F> {
    fn skip(&mut self, n: u64, _scratch: &mut [u8]) -> io::Result<()> {
        let to = self.pos.checked_add(n).ok_or(io::ErrorKind::InvalidData)?;
        if to > self.len {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.inner.seek(SeekFrom::Start(to))?;
        self.pos = to;
        Ok(())
    }
}

/// What a tar entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryType {
    File,
    HardLink,
    Symlink,
    Char,
    Block,
    Dir,
    Fifo,
}

/// One entry's header, with its extensions applied.
#[derive(Debug, Clone)]
pub struct Header {
    /// The name as written in the archive (not normalised).
    pub path: Vec<u8>,
    /// The link target of a symbolic or hard link.
    pub link: Vec<u8>,
    pub kind: EntryType,
    /// Permission bits with setuid, setgid and sticky (`mode & 0o7777`).
    pub mode: u32,
    pub uid: u64,
    pub gid: u64,
    /// The file's size (the real size of a sparse file).
    pub size: u64,
    /// The bytes of data stored after the header.
    pub stored: u64,
    /// Where the data starts in the archive.
    pub data_offset: u64,
}

/// Reads headers one after the other; the data of each entry is skipped
/// unless [`TarReader::read_data`] reads it first.
pub struct TarReader<R> {
    inner: R,
    /// Bytes consumed so far.
    pos: u64,
    /// Data and padding of the current entry not read yet.
    pending: u64,
    /// Data of the current entry not read yet (without padding).
    pending_data: u64,
    scratch: Vec<u8>,
    ended: bool,
}

#[derive(Default)]
struct Extensions {
    path: Option<Vec<u8>>,
    link: Option<Vec<u8>>,
    size: Option<u64>,
    uid: Option<u64>,
    gid: Option<u64>,
    real_size: Option<u64>,
}

impl<R: Input> TarReader<R> {
    pub fn new(inner: R) -> Self {
        TarReader {
            inner,
            pos: 0,
            pending: 0,
            pending_data: 0,
            scratch: vec![0; 64 << 10],
            ended: false,
        }
    }

    /// The next entry, or `None` at the end of the archive.
    pub fn next_entry(&mut self) -> Result<Option<Header>, Error> {
        if self.ended {
            return Ok(None);
        }
        self.skip_pending()?;
        let mut ext = Extensions::default();
        let mut seen_ext = 0u32;
        loop {
            let start = self.pos;
            let mut block = [0u8; BLOCK];
            if !self.read_block(&mut block)? {
                if seen_ext > 0 {
                    return Err(Error::corrupt(
                        "the archive ends after an extension header, without the entry it describes",
                    ));
                }
                // Readers accept an archive that ends on a block boundary
                // without its two zero blocks.
                self.ended = true;
                return Ok(None);
            }
            if block.iter().all(|&b| b == 0) {
                self.ended = true;
                return Ok(None);
            }
            verify_checksum(&block, start)?;
            let flag = block[156];
            let stored = match ext.size.filter(|_| !is_extension(flag)) {
                Some(s) => s,
                None => number(&block[124..136], "size", start)?,
            };
            let padded = stored
                .checked_add(BLOCK as u64 - 1)
                .ok_or_else(|| Error::corrupt("a tar entry's size overflows"))?
                & !(BLOCK as u64 - 1);
            if is_extension(flag) {
                seen_ext += 1;
                if seen_ext > 16 {
                    return Err(Error::corrupt(format!(
                        "more than 16 extension headers in a row at byte {start} of the tar stream"
                    )));
                }
                if stored > MAX_EXTENSION_BYTES {
                    return Err(Error::too_large(format!(
                        "a tar extension header at byte {start} is {stored} bytes (at most {MAX_EXTENSION_BYTES})"
                    )));
                }
                let mut data = vec![0u8; stored as usize];
                self.read_exact(&mut data)?;
                self.skip_bytes(padded - stored)?;
                match flag {
                    b'L' => ext.path = Some(cstr(&data).to_vec()),
                    b'K' => ext.link = Some(cstr(&data).to_vec()),
                    b'x' => parse_pax(&data, &mut ext, start)?,
                    // Global PAX headers apply to every later entry;
                    // none of their keys matter here.
                    _ => {}
                }
                continue;
            }
            let magic = &block[257..265];
            let ustar = &magic[..6] == b"ustar\0";
            let gnu = magic == b"ustar  \0";
            let mut path = match ext.path.take() {
                Some(p) => p,
                None => {
                    let name = cstr(&block[0..100]);
                    let prefix = if ustar { cstr(&block[345..500]) } else { &[] };
                    if prefix.is_empty() {
                        name.to_vec()
                    } else {
                        let mut p = prefix.to_vec();
                        p.push(b'/');
                        p.extend_from_slice(name);
                        p
                    }
                }
            };
            let link = ext
                .link
                .take()
                .unwrap_or_else(|| cstr(&block[157..257]).to_vec());
            let kind = match flag {
                b'0' | b'7' => EntryType::File,
                0 if path.ends_with(b"/") => EntryType::Dir,
                0 => EntryType::File,
                b'1' => EntryType::HardLink,
                b'2' => EntryType::Symlink,
                b'3' => EntryType::Char,
                b'4' => EntryType::Block,
                b'5' | b'D' => EntryType::Dir,
                b'6' => EntryType::Fifo,
                b'S' if gnu => EntryType::File,
                other => {
                    return Err(Error::corrupt(format!(
                        "tar entry `{}` at byte {start} has the unknown type {:?}",
                        String::from_utf8_lossy(&path),
                        char::from(other)
                    )))
                }
            };
            let mode = (number(&block[100..108], "mode", start)? & 0o7777) as u32;
            let uid = match ext.uid {
                Some(u) => u,
                None => number(&block[108..116], "uid", start)?,
            };
            let gid = match ext.gid {
                Some(g) => g,
                None => number(&block[116..124], "gid", start)?,
            };
            let mut size = stored;
            if flag == b'S' {
                size = number(&block[483..495], "sparse real size", start)?;
                // Old GNU sparse maps continue in blocks of their own
                // before the data.
                let mut extended = block[482] != 0;
                let mut n = 0;
                while extended {
                    n += 1;
                    if n > 4096 {
                        return Err(Error::too_large(
                            "a sparse tar entry has more than 4096 map blocks",
                        ));
                    }
                    let mut b = [0u8; BLOCK];
                    if !self.read_block(&mut b)? {
                        return Err(truncated());
                    }
                    extended = b[504] != 0;
                }
            }
            if let Some(r) = ext.real_size {
                size = r;
            }
            if path.len() > MAX_PATH_BYTES || link.len() > MAX_PATH_BYTES {
                return Err(Error::too_large(format!(
                    "tar entry at byte {start} has a name or link target longer than {MAX_PATH_BYTES} bytes"
                )));
            }
            if path.is_empty() {
                return Err(Error::corrupt(format!(
                    "tar entry at byte {start} has an empty name"
                )));
            }
            if kind == EntryType::Dir {
                while path.len() > 1 && path.ends_with(b"/") {
                    path.pop();
                }
            }
            self.pending = padded;
            self.pending_data = stored;
            return Ok(Some(Header {
                path,
                link,
                kind,
                mode,
                uid,
                gid,
                size,
                stored,
                data_offset: self.pos,
            }));
        }
    }

    /// Reads the first `n` bytes of the current entry's data (fewer when it
    /// is shorter); the rest is skipped later.
    pub fn read_head(&mut self, n: u64) -> Result<Vec<u8>, Error> {
        let k = n.min(self.pending_data);
        let mut data = vec![0u8; k as usize];
        self.read_exact(&mut data)?;
        self.pending -= k;
        self.pending_data -= k;
        Ok(data)
    }

    /// Reads the data of the current entry whole, when it is at most
    /// `limit` bytes; `None` (and the data is skipped later) otherwise.
    pub fn read_data(&mut self, limit: u64) -> Result<Option<Vec<u8>>, Error> {
        if self.pending_data > limit {
            return Ok(None);
        }
        let mut data = vec![0u8; self.pending_data as usize];
        self.read_exact(&mut data)?;
        self.pending -= self.pending_data;
        self.pending_data = 0;
        Ok(Some(data))
    }

    fn skip_pending(&mut self) -> Result<(), Error> {
        let n = self.pending;
        self.pending = 0;
        self.pending_data = 0;
        self.skip_bytes(n)
    }

    fn skip_bytes(&mut self, n: u64) -> Result<(), Error> {
        if n == 0 {
            return Ok(());
        }
        self.inner
            .skip(n, &mut self.scratch)
            .map_err(|e| io_error(e, "the tar stream"))?;
        self.pos += n;
        Ok(())
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        self.inner
            .read_exact(buf)
            .map_err(|e| io_error(e, "the tar stream"))?;
        self.pos += buf.len() as u64;
        Ok(())
    }

    /// Reads one block; `false` at a clean end of input.
    fn read_block(&mut self, block: &mut [u8; BLOCK]) -> Result<bool, Error> {
        let mut got = 0;
        while got < BLOCK {
            match self.inner.read(&mut block[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_error(e, "the tar stream")),
            }
        }
        self.pos += got as u64;
        match got {
            0 => Ok(false),
            BLOCK => Ok(true),
            _ => Err(truncated()),
        }
    }
}

fn is_extension(flag: u8) -> bool {
    matches!(flag, b'L' | b'K' | b'x' | b'g')
}

fn truncated() -> Error {
    Error::corrupt("the tar stream is truncated in the middle of an entry")
}

/// Turns an I/O error met while reading a layer into an [`Error`]: one
/// that carries an [`Error`] (a bound crossed, a digest mismatch) is
/// returned as it is; an early end is a truncated layer.
pub fn io_error(e: io::Error, what: &str) -> Error {
    if e.get_ref().is_some_and(|inner| inner.is::<Error>()) {
        if let Some(Ok(err)) = e.into_inner().map(|b| b.downcast::<Error>()) {
            return *err;
        }
        return Error::corrupt(format!("{what} cannot be read"));
    }
    if e.kind() == io::ErrorKind::UnexpectedEof {
        return Error::corrupt(format!("{what} is truncated"));
    }
    Error::corrupt(format!("{what} is corrupt: {e}"))
}

/// The bytes up to the first NUL.
fn cstr(b: &[u8]) -> &[u8] {
    match b.iter().position(|&c| c == 0) {
        Some(n) => &b[..n],
        None => b,
    }
}

fn verify_checksum(block: &[u8; BLOCK], at: u64) -> Result<(), Error> {
    let want = number(&block[148..156], "checksum", at)?;
    let mut unsigned: u64 = 0;
    let mut signed: i64 = 0;
    for (i, &b) in block.iter().enumerate() {
        let b = if (148..156).contains(&i) { b' ' } else { b };
        unsigned += u64::from(b);
        signed += i64::from(b as i8);
    }
    if want == unsigned || i64::try_from(want).is_ok_and(|w| w == signed) {
        Ok(())
    } else {
        Err(Error::corrupt(format!(
            "the tar header at byte {at} has a wrong checksum (not a tar stream, or a corrupt one)"
        )))
    }
}

/// A numeric header field: octal text, or GNU base-256 when the high bit
/// of the first byte is set.
fn number(field: &[u8], what: &str, at: u64) -> Result<u64, Error> {
    let bad = || {
        Error::corrupt(format!(
            "the tar header at byte {at} has an invalid {what} field"
        ))
    };
    if field.first().is_some_and(|&b| b & 0x80 != 0) {
        if field[0] == 0xff {
            return Err(bad());
        }
        let mut v: u64 = u64::from(field[0] & 0x7f);
        for &b in &field[1..] {
            if v > (u64::MAX >> 8) {
                return Err(bad());
            }
            v = (v << 8) | u64::from(b);
        }
        return Ok(v);
    }
    let text = cstr(field);
    let text = trim(text);
    let mut v: u64 = 0;
    for &b in text {
        if !(b'0'..=b'7').contains(&b) {
            return Err(bad());
        }
        v = v
            .checked_mul(8)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .ok_or_else(bad)?;
    }
    Ok(v)
}

fn trim(mut b: &[u8]) -> &[u8] {
    while let [b' ', rest @ ..] = b {
        b = rest;
    }
    while let [rest @ .., b' ' | 0] = b {
        b = rest;
    }
    b
}

/// PAX records: `LENGTH KEY=VALUE\n`, LENGTH counting the whole record.
fn parse_pax(data: &[u8], ext: &mut Extensions, at: u64) -> Result<(), Error> {
    let bad = || {
        Error::corrupt(format!(
            "the PAX extension header at byte {at} has a malformed record"
        ))
    };
    let mut rest = data;
    while !rest.is_empty() {
        if rest.iter().all(|&b| b == 0) {
            break;
        }
        let space = rest.iter().position(|&b| b == b' ').ok_or_else(bad)?;
        let len: usize = std::str::from_utf8(&rest[..space])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(bad)?;
        if len <= space + 1 || len > rest.len() || rest[len - 1] != b'\n' {
            return Err(bad());
        }
        let record = &rest[space + 1..len - 1];
        rest = &rest[len..];
        let eq = record.iter().position(|&b| b == b'=').ok_or_else(bad)?;
        let (key, value) = (&record[..eq], &record[eq + 1..]);
        let num = || -> Result<u64, Error> {
            std::str::from_utf8(value)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(bad)
        };
        match key {
            b"path" | b"GNU.sparse.name" => ext.path = Some(value.to_vec()),
            b"linkpath" => ext.link = Some(value.to_vec()),
            b"size" => ext.size = Some(num()?),
            b"uid" => ext.uid = Some(num()?),
            b"gid" => ext.gid = Some(num()?),
            b"GNU.sparse.realsize" | b"GNU.sparse.size" => ext.real_size = Some(num()?),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(bytes: &[u8]) -> Result<Vec<Header>, Error> {
        let mut r = TarReader::new(Stream(bytes));
        let mut out = Vec::new();
        while let Some(h) = r.next_entry()? {
            out.push(h);
        }
        Ok(out)
    }

    fn builder() -> tar::Builder<Vec<u8>> {
        tar::Builder::new(Vec::new())
    }

    fn header(kind: tar::EntryType, size: u64, mode: u32) -> tar::Header {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(mode);
        h.set_uid(1000);
        h.set_gid(1001);
        h
    }

    #[test]
    fn reads_what_the_tar_crate_writes_long_names_included() {
        let mut b = builder();
        let long = format!("usr/{}/bin/tool", "d".repeat(150));
        let mut h = header(tar::EntryType::Regular, 5, 0o755);
        b.append_data(&mut h, &long, &b"hello"[..]).unwrap();
        let mut h = header(tar::EntryType::Symlink, 0, 0o777);
        b.append_link(&mut h, "bin", format!("usr/{}", "t".repeat(120)))
            .unwrap();
        let mut h = header(tar::EntryType::Directory, 0, 0o1777);
        b.append_data(&mut h, "tmp/", &[][..]).unwrap();
        let bytes = b.into_inner().unwrap();
        let hs = read_all(&bytes).unwrap();
        assert_eq!(hs.len(), 3);
        assert_eq!(hs[0].path, long.as_bytes());
        assert_eq!(hs[0].kind, EntryType::File);
        assert_eq!(
            (hs[0].mode, hs[0].uid, hs[0].gid, hs[0].size),
            (0o755, 1000, 1001, 5)
        );
        assert_eq!(hs[1].kind, EntryType::Symlink);
        assert_eq!(hs[1].link, format!("usr/{}", "t".repeat(120)).as_bytes());
        assert_eq!(hs[2].path, b"tmp");
        assert_eq!(hs[2].mode, 0o1777);
    }

    #[test]
    fn pax_records_override_the_header() {
        let mut b = builder();
        let path = format!("opt/{}", "p".repeat(200));
        b.append_pax_extensions([("path", path.as_bytes()), ("uid", b"70000".as_slice())])
            .unwrap();
        let mut h = tar::Header::new_ustar();
        h.set_entry_type(tar::EntryType::Regular);
        h.set_size(3);
        h.set_mode(0o644);
        h.set_path("short").unwrap();
        h.set_cksum();
        b.append(&h, &b"abc"[..]).unwrap();
        let bytes = b.into_inner().unwrap();
        let hs = read_all(&bytes).unwrap();
        assert_eq!(hs.len(), 1);
        assert_eq!(hs[0].path, path.as_bytes());
        assert_eq!(hs[0].uid, 70000);
    }

    #[test]
    fn small_data_is_read_and_the_rest_skipped() {
        let mut b = builder();
        for (name, data) in [
            ("etc/passwd", &b"root:x:0:0::/root:/bin/sh\n"[..]),
            ("big", &[7u8; 3000][..]),
        ] {
            let mut h = header(tar::EntryType::Regular, data.len() as u64, 0o644);
            b.append_data(&mut h, name, data).unwrap();
        }
        let bytes = b.into_inner().unwrap();
        let mut r = TarReader::new(Stream(&bytes[..]));
        let h = r.next_entry().unwrap().unwrap();
        assert_eq!(h.path, b"etc/passwd");
        assert_eq!(
            r.read_data(1024).unwrap().unwrap(),
            b"root:x:0:0::/root:/bin/sh\n"
        );
        let h = r.next_entry().unwrap().unwrap();
        assert_eq!(h.size, 3000);
        assert!(r.read_data(1024).unwrap().is_none());
        assert!(r.next_entry().unwrap().is_none());
    }

    #[test]
    fn truncation_and_garbage_are_errors() {
        let mut b = builder();
        let mut h = header(tar::EntryType::Regular, 2000, 0o644);
        b.append_data(&mut h, "f", &[1u8; 2000][..]).unwrap();
        let bytes = b.into_inner().unwrap();
        let e = read_all(&bytes[..1000]).unwrap_err();
        assert_eq!(e.rule.id, "image-corrupt");
        assert!(e.message.contains("truncated"), "{e}");
        let e = read_all(&bytes[..300]).unwrap_err();
        assert!(e.message.contains("truncated"), "{e}");
        let e = read_all(&[b'x'; 1024]).unwrap_err();
        assert!(e.message.contains("checksum"), "{e}");
    }

    #[test]
    fn huge_extension_headers_are_refused_before_reading_them() {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::GNULongName);
        h.set_size(1 << 40);
        h.set_cksum();
        let mut bytes = h.as_bytes().to_vec();
        bytes.extend_from_slice(&[0u8; 4096]);
        let e = read_all(&bytes).unwrap_err();
        assert_eq!(e.rule.id, "image-too-large");
    }

    #[test]
    fn base256_numbers_are_read() {
        let mut f = [0u8; 12];
        f[0] = 0x80;
        f[11] = 0x10;
        f[10] = 0x01;
        assert_eq!(number(&f, "size", 0).unwrap(), 0x110);
        assert_eq!(number(b"0000644 \0", "mode", 0).unwrap(), 0o644);
        assert!(number(b"0009", "mode", 0).is_err());
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000)) {
            let _ = read_all(&bytes);
        }

        #[test]
        fn never_panics_on_damaged_archives(pos in 0usize..2560, byte in proptest::prelude::any::<u8>()) {
            let mut b = builder();
            let mut h = header(tar::EntryType::Regular, 600, 0o644);
            b.append_data(&mut h, "a/b", &[3u8; 600][..]).unwrap();
            let mut h = header(tar::EntryType::Symlink, 0, 0o777);
            b.append_link(&mut h, "l", "a/b").unwrap();
            let mut bytes = b.into_inner().unwrap();
            if pos < bytes.len() {
                bytes[pos] = byte;
            }
            let _ = read_all(&bytes);
        }
    }
}
