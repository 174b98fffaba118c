//! Tests on a matched value: is it a placeholder, does it read as a name,
//! how random is it.

/// Shannon entropy of `bytes`, in bits per byte (0 for no bytes).
pub fn entropy(bytes: &[u8]) -> f64 {
    if bytes.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[b as usize] += 1;
    }
    let n = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// How many of the classes lower case, upper case, digit and other (not
/// counting the separators `-`, `_` and `.`) `bytes` mixes.
pub fn classes(bytes: &[u8]) -> u8 {
    let (mut lower, mut upper, mut digit, mut other) = (false, false, false, false);
    for &b in bytes {
        match b {
            b'a'..=b'z' => lower = true,
            b'A'..=b'Z' => upper = true,
            b'0'..=b'9' => digit = true,
            b'-' | b'_' | b'.' => {}
            _ => other = true,
        }
    }
    u8::from(lower) + u8::from(upper) + u8::from(digit) + u8::from(other)
}

/// Marks of a value that stands for a secret rather than being one.
const PLACEHOLDER_MARKS: &[&[u8]] = &[
    b"<",
    b">",
    b"${",
    b"{{",
    b"}}",
    b"xxxx",
    b"****",
    b"...",
    "\u{2026}".as_bytes(),
    b"example",
    b"changeme",
    b"change_me",
    b"change-me",
    b"placeholder",
    b"redacted",
    b"your_",
    b"your-",
];

/// Whole values that are words of a configuration, not secrets.
const PLACEHOLDER_WORDS: &[&[u8]] = &[b"true", b"false", b"null", b"none", b"nil", b"empty"];

/// Whether a value is a placeholder a doc may show: `<token>`, `${TOKEN}`,
/// `$TOKEN`, `xxxx`, `****`, `changeme`, `example`, `your-token`, a
/// reference or a word such as `true`, or a run of very few characters
/// (`AAAAAAAA`, `0000-0000`).
pub fn is_placeholder(value: &[u8]) -> bool {
    let v = trim_quotes(value);
    if v.is_empty() {
        return true;
    }
    if matches!(v[0], b'$' | b'{' | b'[' | b'(') {
        return true;
    }
    // `%NAME%`, `%(name)s`, a YAML alias `*name` or anchor `&name`, a file
    // `@name.txt`: a sign, then a name. A sign before random characters
    // (`%Tq8vL2…`) is part of a secret.
    if let [b'%' | b'*' | b'&' | b'@', rest @ ..] = v {
        let rest = rest.strip_suffix(b"%").unwrap_or(rest);
        if rest.starts_with(b"(") || reads_as_name(rest) {
            return true;
        }
    }
    let lower = v.to_ascii_lowercase();
    if PLACEHOLDER_MARKS
        .iter()
        .any(|m| memchr::memmem::find(&lower, m).is_some())
    {
        return true;
    }
    if PLACEHOLDER_WORDS.iter().any(|w| lower == *w) {
        return true;
    }
    v.len() >= 8 && distinct(v) < 4
}

fn distinct(bytes: &[u8]) -> usize {
    let mut seen = [false; 256];
    bytes.iter().for_each(|&b| seen[b as usize] = true);
    seen.iter().filter(|&&s| s).count()
}

fn trim_quotes(v: &[u8]) -> &[u8] {
    let mut v = v;
    while let [b'"' | b'\'' | b'`', rest @ ..] = v {
        v = rest;
    }
    while let [rest @ .., b'"' | b'\'' | b'`'] = v {
        v = rest;
    }
    v
}

/// Whether a value reads as something other than a secret: a path
/// (`/var/run/…`, `./x`, `~/x`), a URL, a number or duration (`3600`,
/// `30s`, `10Gi`), a version (`v1.29.0`), or a name made of words
/// (`whystack-agent-env`, `bootstrap-token`, `RUNNER_BOOTSTRAP_TOKEN`,
/// `secretKeyRef`, `kubeconfig.v2`).
pub fn reads_as_name(value: &[u8]) -> bool {
    let v = trim_quotes(value);
    if v.starts_with(b"/") || v.starts_with(b"./") || v.starts_with(b"~/") {
        return true;
    }
    if memchr::memmem::find(v, b"://").is_some() {
        return true;
    }
    v.split(|&b| matches!(b, b'-' | b'_' | b'.' | b'/' | b':' | b'@'))
        .all(word_like)
}

/// A segment of a name: letters with at most a few digits after them
/// (`agent`, `v2`, `log4`), digits with at most a short unit (`3600`,
/// `30s`, `10Gi`), or nothing.
fn word_like(seg: &[u8]) -> bool {
    let letters = seg.iter().take_while(|b| b.is_ascii_alphabetic()).count();
    if letters > 0 {
        let digits = &seg[letters..];
        return digits.len() <= 4 && digits.iter().all(u8::is_ascii_digit);
    }
    let digits = seg.iter().take_while(|b| b.is_ascii_digit()).count();
    let unit = &seg[digits..];
    unit.len() <= 3 && unit.iter().all(u8::is_ascii_alphabetic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_grows_with_randomness() {
        assert_eq!(entropy(b""), 0.0);
        assert_eq!(entropy(b"aaaa"), 0.0);
        assert!((entropy(b"abcd") - 2.0).abs() < 1e-9);
        assert!(entropy(b"Qm7Zp2Lk9Xv4Tn8Rb3Wc6Yd1") > 4.0);
    }

    #[test]
    fn classes_ignore_separators() {
        assert_eq!(classes(b"whystack-agent-env"), 1);
        assert_eq!(classes(b"wst_9f8a"), 2);
        assert_eq!(classes(b"Tr0ub4dor&3"), 4);
    }

    #[test]
    fn placeholders() {
        for p in [
            &b"<token>"[..],
            b"${TOKEN}",
            b"$TOKEN",
            b"xxxxxxxx",
            b"XXXX-XXXX",
            b"********",
            b"changeme",
            b"\"changeme\"",
            b"your-token-here",
            b"AKIAIOSFODNN7EXAMPLE",
            b"true",
            b"AAAAAAAAAAAA",
            b"...",
            b"",
        ] {
            assert!(is_placeholder(p), "{}", String::from_utf8_lossy(p));
        }
        for s in [
            &b"wst_9f8a7b6c5d4e3f2a1b0c"[..],
            b"Tr0ub4dor&3",
            b"hunter22",
        ] {
            assert!(!is_placeholder(s), "{}", String::from_utf8_lossy(s));
        }
    }

    #[test]
    fn names_paths_and_numbers() {
        for n in [
            &b"whystack-agent-env"[..],
            b"bootstrap-token",
            b"RUNNER_BOOTSTRAP_TOKEN",
            b"/var/run/secrets/tokens/gke-oidc/token",
            b"https://vault.internal:8200",
            b"v1.29.0",
            b"3600",
            b"30s",
            b"10Gi",
            b"secretKeyRef",
            b"kubeconfig.v2",
        ] {
            assert!(reads_as_name(n), "{}", String::from_utf8_lossy(n));
        }
        for s in [
            &b"wst_9f8a7b6c5d4e3f2a1b0c"[..],
            b"Tr0ub4dor&3",
            b"c3VwZXJzZWNyZXQ=",
            b"9f8a7b6c5d4e",
        ] {
            assert!(!reads_as_name(s), "{}", String::from_utf8_lossy(s));
        }
    }
}
