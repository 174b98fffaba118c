//! Escaping text for HTML, which every page, index and message rendered
//! as HTML goes through.

/// `s` escaped for HTML text and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    escape_into(&mut out, s);
    out
}

/// Appends `s` to `out`, escaped for HTML text and attribute values.
pub fn escape_into(out: &mut String, s: &str) {
    // Byte by byte: the five characters are ASCII, so every cut falls
    // between characters, and no character is decoded on the way.
    let bytes = s.as_bytes();
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let with = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&s[from..i]);
        out.push_str(with);
        from = i + 1;
    }
    out.push_str(&s[from..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The same as replacing each character that needs it, in any text.
        #[test]
        fn each_special_character_is_replaced_and_nothing_else(s in "(\\PC|[&<>\"'])*") {
            let mut expected = String::new();
            for c in s.chars() {
                match c {
                    '&' => expected.push_str("&amp;"),
                    '<' => expected.push_str("&lt;"),
                    '>' => expected.push_str("&gt;"),
                    '"' => expected.push_str("&quot;"),
                    '\'' => expected.push_str("&#39;"),
                    c => expected.push(c),
                }
            }
            proptest::prop_assert_eq!(escape(&s), expected);
        }
    }
}
