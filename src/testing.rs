//! What the unit tests share.

/// Whether a test that needs an external tool must run it: `.ci/run` sets
/// `CI=true`, and there no test skips.
pub fn tools_required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}
