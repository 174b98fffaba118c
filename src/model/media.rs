//! What a published file is, for the hosts that serve it: its
//! `Content-Type`, by file name. The preview server and `deploy` (which
//! stores it with each object) answer the same.

/// The `Content-Type` of a site path, by its file name. Text that people
/// read in a browser (the download index, checksums, YAML, env files) is
/// `text/plain` so browsers show it instead of downloading it.
pub fn content_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    // The indexes of the download contract, and who signs them.
    if name == "SHA256SUMS" || name == "allowed_signers" {
        return "text/plain; charset=utf-8";
    }
    let ext = match name.rsplit_once('.') {
        Some((_, ext)) => ext.to_ascii_lowercase(),
        None => return "application/octet-stream",
    };
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "application/javascript; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "avif" => "image/avif",
        "ico" => "image/x-icon",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "ttf" => "font/ttf",
        "otf" => "font/otf",
        "pdf" => "application/pdf",
        "xml" => "application/xml",
        "wasm" => "application/wasm",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "txt" | "yaml" | "yml" | "env" | "md" | "sh" | "csv" | "toml" | "conf" | "sig" => {
            "text/plain; charset=utf-8"
        }
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_follow_the_file_name() {
        assert_eq!(content_type("/es/index.html"), "text/html; charset=utf-8");
        assert_eq!(
            content_type("/kubernetes/v1.0.0/base/SHA256SUMS"),
            "text/plain; charset=utf-8"
        );
        assert_eq!(
            content_type("/kubernetes/v1.0.0/base/config.env"),
            "text/plain; charset=utf-8"
        );
        assert_eq!(content_type("/a/B.YAML"), "text/plain; charset=utf-8");
        assert_eq!(content_type("/logo.svg"), "image/svg+xml");
        assert_eq!(
            content_type("/kubernetes/versions.json"),
            "application/json"
        );
        assert_eq!(content_type("/x/LICENSE"), "application/octet-stream");
        // The signature is armored text, and so is the list of signers.
        assert_eq!(
            content_type("/kubernetes/v1.0.0/base/SHA256SUMS.sig"),
            "text/plain; charset=utf-8"
        );
        assert_eq!(
            content_type("/kubernetes/allowed_signers"),
            "text/plain; charset=utf-8"
        );
    }
}
