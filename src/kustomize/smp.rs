//! Strategic merge patch (being written; this stub only knows merge keys).

/// The merge key of the list at `path` for an object of `kind`.
pub fn merge_key(_kind: &str, path: &[&str]) -> Option<&'static str> {
    match path.last().copied()? {
        "containers" | "initContainers" | "volumes" | "env" => Some("name"),
        "volumeMounts" => Some("mountPath"),
        "ports" => Some("containerPort"),
        _ => None,
    }
}
