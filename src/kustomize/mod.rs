//! What basepress knows of Kustomize: strategic merge patches of pod
//! templates, to check documented overlays against the bases.

pub mod prov;
pub mod smp;

use serde_json::Value;

/// JSON pointer of the pod spec in an object of `kind`, for the kinds
/// that run pods.
pub fn pod_spec_pointer(kind: &str) -> Option<&'static str> {
    match kind {
        "StatefulSet" | "Deployment" | "DaemonSet" | "ReplicaSet" | "Job" => {
            Some("/spec/template/spec")
        }
        "CronJob" => Some("/spec/jobTemplate/spec/template/spec"),
        "Pod" => Some("/spec"),
        _ => None,
    }
}

/// The pointer, in `patch`, of the node at `pointer` in `merged` (the
/// result of merging `patch` into an object of `kind`), when the patch
/// sets that node. List items are matched by their merge key (containers
/// by name, volumeMounts by mountPath, …), so an item keeps its place in
/// the patch even when the merged list has base items before it.
pub fn patch_pointer(kind: &str, merged: &Value, patch: &Value, pointer: &str) -> Option<String> {
    let mut m = merged;
    let mut p = patch;
    let mut names: Vec<String> = Vec::new();
    let mut out = String::new();
    for raw in pointer.split('/').skip(1) {
        let seg = raw.replace("~1", "/").replace("~0", "~");
        match m {
            Value::Object(_) => {
                m = m.get(&seg)?;
                p = p.get(&seg)?;
                names.push(seg);
                out.push('/');
                out.push_str(raw);
            }
            Value::Array(items) => {
                let i: usize = seg.parse().ok()?;
                let item = items.get(i)?;
                let path: Vec<&str> = names.iter().map(String::as_str).collect();
                let j = match smp::merge_key(kind, &path) {
                    Some(key) => {
                        let wanted = item.get(key)?;
                        p.as_array()?
                            .iter()
                            .position(|x| x.get(key) == Some(wanted))?
                    }
                    None => i,
                };
                p = p.get(j)?;
                m = item;
                out.push_str(&format!("/{j}"));
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_follow_merge_keys() {
        let merged = json!({"spec": {"template": {"spec": {
            "containers": [
                {"name": "agent", "volumeMounts": [{"mountPath": "/tmp"}, {"mountPath": "/token"}]}
            ],
            "volumes": [{"name": "token"}, {"name": "tmp"}]
        }}}});
        let patch = json!({"spec": {"template": {"spec": {
            "volumes": [{"name": "token"}],
            "containers": [{"name": "agent", "volumeMounts": [{"mountPath": "/token"}]}]
        }}}});
        let k = "StatefulSet";
        assert_eq!(
            patch_pointer(k, &merged, &patch, "/spec/template/spec/volumes/0").as_deref(),
            Some("/spec/template/spec/volumes/0")
        );
        assert_eq!(
            patch_pointer(
                k,
                &merged,
                &patch,
                "/spec/template/spec/containers/0/volumeMounts/1/mountPath"
            )
            .as_deref(),
            Some("/spec/template/spec/containers/0/volumeMounts/0/mountPath")
        );
        assert_eq!(
            patch_pointer(k, &merged, &patch, "/spec/template/spec/volumes/1"),
            None
        );
        assert_eq!(
            patch_pointer(
                k,
                &merged,
                &patch,
                "/spec/template/spec/containers/0/volumeMounts/0"
            ),
            None
        );
    }
}
