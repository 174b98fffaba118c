//! The text a browser shows of an HTML file, and its tags, each with
//! where every byte came from: highlighted code splits `password: value`
//! into spans and quotes become `&quot;`, so rules that read text need the
//! text; secrets in attributes (a webhook in an `href`) are in the tags.
//! The two views hold each byte of the file once, so scanning both costs
//! about what scanning the file does.

/// Bytes taken from a file, with the offset in the file of each.
#[derive(Default)]
pub struct View {
    pub bytes: Vec<u8>,
    /// Where each run of the view came from, in order of `at`: a few per
    /// tag or reference, not one per byte (a 6 MB sitemap is mostly tags).
    runs: Vec<Run>,
}

/// Bytes of a view from `at` on (up to the next run), taken from the file
/// at `from`: each byte from the next one when `copied`, all from `from`
/// otherwise (a decoded reference, the line break after a tag).
struct Run {
    at: u32,
    from: u32,
    copied: bool,
}

impl View {
    /// The offset in the file of the view's byte `i` (the file's length
    /// for the end of the view).
    pub fn origin(&self, i: usize, file_len: usize) -> usize {
        if i >= self.bytes.len() {
            return file_len;
        }
        let n = self.runs.partition_point(|r| r.at as usize <= i);
        match n.checked_sub(1).and_then(|k| self.runs.get(k)) {
            Some(r) if r.copied => r.from as usize + (i - r.at as usize),
            Some(r) => r.from as usize,
            None => file_len,
        }
    }

    /// Appends `bytes`, all of them mapped to `at`.
    fn push(&mut self, bytes: &[u8], at: usize) {
        self.run(at, false);
        self.bytes.extend_from_slice(bytes);
    }

    /// Appends the file's bytes `from..from + run.len()`.
    fn copy(&mut self, run: &[u8], from: usize) {
        // A run that goes on from the last copied one needs no entry.
        let goes_on = self.runs.last().is_some_and(|r| {
            r.copied && r.from as usize + (self.bytes.len() - r.at as usize) == from
        });
        if !goes_on {
            self.run(from, true);
        }
        self.bytes.extend_from_slice(run);
    }

    /// Starts a run at the end of the view. Offsets fit in 32 bits:
    /// [`views`] takes no larger file.
    fn run(&mut self, from: usize, copied: bool) {
        self.runs.push(Run {
            at: self.bytes.len() as u32,
            from: from as u32,
            copied,
        });
    }
}

/// A markup file split in two: its text (tags stripped, character
/// references decoded) and its tags (each on a line of its own).
pub struct Views {
    pub text: View,
    pub tags: View,
}

/// Splits `html` into its text and its tags. `None` for a file too large
/// to map with 32-bit offsets.
pub fn views(html: &[u8]) -> Option<Views> {
    if u32::try_from(html.len()).is_err() {
        return None;
    }
    let mut text = View {
        bytes: Vec::with_capacity(html.len()),
        runs: Vec::new(),
    };
    let mut tags = View::default();
    let mut i = 0;
    while i < html.len() {
        match html[i] {
            b'<' => match memchr::memchr(b'>', &html[i..]) {
                Some(end) => {
                    tags.copy(&html[i..=i + end], i);
                    tags.push(b"\n", i + end);
                    i += end + 1;
                }
                // Not a tag after all: the rest is text.
                None => {
                    text.copy(&html[i..], i);
                    break;
                }
            },
            b'&' => {
                let (decoded, used) = reference(&html[i..]);
                match decoded {
                    Some(c) => {
                        let mut buf = [0u8; 4];
                        text.push(c.encode_utf8(&mut buf).as_bytes(), i);
                        i += used;
                    }
                    None => {
                        text.push(b"&", i);
                        i += 1;
                    }
                }
            }
            _ => {
                // The run up to the next tag or reference, at once.
                let run = memchr::memchr2(b'<', b'&', &html[i..]).unwrap_or(html.len() - i);
                text.copy(&html[i..i + run], i);
                i += run;
            }
        }
    }
    Some(Views { text, tags })
}

/// The character a reference at the start of `s` (`&amp;`, `&#39;`,
/// `&#x27;`) stands for, and its length; `None` when it is not one.
fn reference(s: &[u8]) -> (Option<char>, usize) {
    let Some(semi) = s.iter().take(12).position(|&b| b == b';') else {
        return (None, 0);
    };
    let name = &s[1..semi];
    let c = match name {
        b"amp" => Some('&'),
        b"lt" => Some('<'),
        b"gt" => Some('>'),
        b"quot" => Some('"'),
        b"apos" => Some('\''),
        b"nbsp" => Some(' '),
        [b'#', b'x' | b'X', hex @ ..] => std::str::from_utf8(hex)
            .ok()
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .and_then(char::from_u32),
        [b'#', dec @ ..] => std::str::from_utf8(dec)
            .ok()
            .and_then(|d| d.parse::<u32>().ok())
            .and_then(char::from_u32),
        _ => None,
    };
    (c, semi + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_go_and_references_decode() {
        let html =
            b"<span class=\"k\">password</span>: <span>&quot;a&amp;b&#39;&#x41;&quot;</span>";
        let v = views(html).unwrap();
        let t = &v.text;
        assert_eq!(t.bytes, b"password: \"a&b'A\"");
        // Every text byte points at the byte it came from.
        assert_eq!(html[t.origin(0, html.len())], b'p');
        let colon = t.bytes.iter().position(|&b| b == b':').unwrap();
        assert_eq!(html[t.origin(colon, html.len())], b':');
        assert_eq!(t.origin(t.bytes.len(), html.len()), html.len());
        // The tags, one a line, point at themselves.
        assert_eq!(
            v.tags.bytes,
            b"<span class=\"k\">\n</span>\n<span>\n</span>\n"
        );
        assert_eq!(v.tags.origin(1, html.len()), 1);
        assert_eq!(html[v.tags.origin(16, html.len())], b'>');
    }

    proptest::proptest! {
        /// Each byte of a view points at the byte it was copied from, or
        /// at the start of the reference it decodes or the end of the tag
        /// it follows; offsets never go back, and the end maps to the end.
        #[test]
        fn every_byte_of_a_view_points_where_it_came_from(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "<span class=\"k\">", "</span>", "password", ": ", "&quot;", "&amp;",
                    "&#39;", "&#x41;", "&nbsp;", "&bogus;", "&", "<", ">", "x\n", "é", "&lt;b&gt;",
                ]),
                0..40,
            )
        ) {
            let html = parts.concat();
            let html = html.as_bytes();
            let v = views(html).unwrap();
            for view in [&v.text, &v.tags] {
                let mut last = 0;
                for (i, &b) in view.bytes.iter().enumerate() {
                    let o = view.origin(i, html.len());
                    proptest::prop_assert!(o < html.len());
                    proptest::prop_assert!(o >= last, "offsets go back at {}", i);
                    last = o;
                    let from = html[o];
                    proptest::prop_assert!(
                        from == b || from == b'&' || (b == b'\n' && from == b'>'),
                        "byte {} ({:?}) points at {:?}", i, b as char, from as char
                    );
                }
                proptest::prop_assert_eq!(view.origin(view.bytes.len(), html.len()), html.len());
            }
        }
    }

    #[test]
    fn a_lone_ampersand_or_angle_bracket_stays() {
        let v = views(b"a & b < c").unwrap();
        assert_eq!(v.text.bytes, b"a & b < c");
        assert!(v.tags.bytes.is_empty());
        let v = views(b"&unknown; x").unwrap();
        assert_eq!(v.text.bytes, b"&unknown; x");
    }
}
