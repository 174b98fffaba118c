//! What the API server's admission refuses: the Pod Security Standards a
//! namespace of the build enforces (`pod-security.kubernetes.io/enforce:
//! baseline` or `restricted`) on the pods of its workloads.
//!
//! A workload whose pod template breaks the level is created, and then
//! every pod its controller makes is refused: the install reports success
//! and nothing runs. The rules are those of Kubernetes' Pod Security
//! Standards (baseline, and restricted on top of it), read from the pod
//! template as written; `runAsNonRoot` on the product's own pods is
//! `run-as-non-root-missing`, checked with the rest of the agent.

use super::{Context, Subject};
use crate::diagnostics::{rule, Diagnostic, Rule};
use crate::kustomize::{pod_metadata_pointer, pod_spec_pointer, Object};
use serde_json::Value;

pub const RULES: &[&Rule] = &[rule::POD_SECURITY_REFUSED];

/// The label that makes admission enforce a level on a namespace's pods.
const ENFORCE: &str = "pod-security.kubernetes.io/enforce";

/// Capabilities the baseline level lets a container add.
const BASELINE_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

/// Sysctls the baseline level allows.
const SAFE_SYSCTLS: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];

/// SELinux types the baseline level allows (with none given).
const SELINUX_TYPES: &[&str] = &[
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];

/// Volume types the restricted level allows.
const RESTRICTED_VOLUMES: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Baseline,
    Restricted,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// One way a pod template breaks a level: where, and what.
struct Violation {
    pointer: String,
    what: String,
}

pub fn check(ctx: &Context, subject: &Subject) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let product = &ctx.site.config.image.name;
    for object in subject.objects {
        let Some(pod_ptr) = pod_spec_pointer(object.kind()) else {
            continue;
        };
        let Some(namespace) = object.namespace() else {
            continue;
        };
        let Some(level) = enforced(subject.objects, namespace) else {
            continue;
        };
        let Some(pod) = object.value.pointer(pod_ptr) else {
            continue;
        };
        let runs_product = containers(pod, pod_ptr).any(|(_, c)| {
            c["image"]
                .as_str()
                .is_some_and(|i| subject.is_product(product, i))
        });
        let annotations_ptr = format!("{}/annotations", pod_metadata_pointer(pod_ptr));
        let annotations = object.value.pointer(&annotations_ptr);
        for v in violations(pod_ptr, pod, annotations, level, !runs_product) {
            // The namespace is not named: an overlay that moves the
            // workload to another namespace has the same finding, not a
            // new one.
            out.push(
                Diagnostic::new(
                    rule::POD_SECURITY_REFUSED,
                    format!(
                        "{} `{}` runs in a namespace that enforces the `{}` Pod Security level, and admission refuses its pods: {}",
                        object.kind(),
                        object.name(),
                        level.name(),
                        v.what
                    ),
                )
                .at(object.locate(&v.pointer)),
            );
        }
    }
    out
}

/// The level the Namespace `name` of the build enforces, if it has one
/// that refuses anything.
fn enforced(objects: &[Object], name: &str) -> Option<Level> {
    let ns = objects
        .iter()
        .find(|o| o.kind() == "Namespace" && o.name() == name)?;
    match ns.value["metadata"]["labels"][ENFORCE].as_str()? {
        "baseline" => Some(Level::Baseline),
        "restricted" => Some(Level::Restricted),
        _ => None,
    }
}

/// Every container of a pod (init and ephemeral ones too), with its JSON
/// pointer.
fn containers<'a>(
    pod: &'a Value,
    pod_ptr: &'a str,
) -> impl Iterator<Item = (String, &'a Value)> + 'a {
    ["containers", "initContainers", "ephemeralContainers"]
        .into_iter()
        .flat_map(move |field| {
            pod[field]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .map(move |(i, c)| (format!("{pod_ptr}/{field}/{i}"), c))
        })
}

/// How the pod template `pod` at `pod_ptr` (with its `annotations`)
/// breaks `level`; `run_as_non_root` also requires `runAsNonRoot`.
fn violations(
    pod_ptr: &str,
    pod: &Value,
    annotations: Option<&Value>,
    level: Level,
    run_as_non_root: bool,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut refuse = |pointer: String, what: String| out.push(Violation { pointer, what });
    let pod_sc = &pod["securityContext"];
    let sc_ptr = format!("{pod_ptr}/securityContext");

    // Baseline.
    for field in ["hostNetwork", "hostPID", "hostIPC"] {
        if pod[field] == true {
            refuse(
                format!("{pod_ptr}/{field}"),
                format!("the pod sets {field}: true, which shares the node's namespaces"),
            );
        }
    }
    for (i, v) in pod["volumes"].as_array().into_iter().flatten().enumerate() {
        let name = v["name"].as_str().unwrap_or_default();
        let pointer = format!("{pod_ptr}/volumes/{i}");
        if v.get("hostPath").is_some_and(|h| !h.is_null()) {
            refuse(
                pointer,
                format!("volume `{name}` is a hostPath, a folder of the node"),
            );
        } else if level == Level::Restricted {
            let kind = v
                .as_object()
                .into_iter()
                .flat_map(|m| m.iter())
                .find(|(k, v)| *k != "name" && !v.is_null())
                .map(|(k, _)| k);
            if let Some(kind) = kind.filter(|k| !RESTRICTED_VOLUMES.contains(&k.as_str())) {
                refuse(
                    pointer,
                    format!(
                        "volume `{name}` is of type {kind}; the level allows {}",
                        RESTRICTED_VOLUMES.join(", ")
                    ),
                );
            }
        }
    }
    for (i, s) in pod_sc["sysctls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = s["name"].as_str().unwrap_or_default();
        if !SAFE_SYSCTLS.contains(&name) {
            refuse(
                format!("{sc_ptr}/sysctls/{i}"),
                format!("the pod sets sysctl `{name}`, which is not one of the safe ones"),
            );
        }
    }
    let annotations_ptr = format!("{}/annotations", pod_metadata_pointer(pod_ptr));
    for (key, value) in annotations.and_then(Value::as_object).into_iter().flatten() {
        let apparmor = key.starts_with("container.apparmor.security.beta.kubernetes.io/");
        let profile = value.as_str().unwrap_or_default();
        let allowed =
            profile.is_empty() || profile == "runtime/default" || profile.starts_with("localhost/");
        if apparmor && !allowed {
            refuse(
                annotations_ptr.clone(),
                format!("annotation `{key}: {profile}` turns AppArmor off"),
            );
        }
    }
    let mut contexts: Vec<(String, String, &Value)> =
        vec![(sc_ptr.clone(), "the pod".to_string(), pod_sc)];
    for (ptr, c) in containers(pod, pod_ptr) {
        let name = c["name"].as_str().unwrap_or_default();
        contexts.push((
            format!("{ptr}/securityContext"),
            format!("container `{name}`"),
            &c["securityContext"],
        ));
        for (j, port) in c["ports"].as_array().into_iter().flatten().enumerate() {
            if port["hostPort"].as_i64().is_some_and(|p| p != 0) {
                refuse(
                    format!("{ptr}/ports/{j}/hostPort"),
                    format!(
                        "container `{name}` opens hostPort {}, a port of the node",
                        port["hostPort"]
                    ),
                );
            }
        }
        let handlers = [
            "livenessProbe",
            "readinessProbe",
            "startupProbe",
            "lifecycle/postStart",
            "lifecycle/preStop",
        ];
        for handler in handlers {
            for action in ["httpGet", "tcpSocket"] {
                let at = format!("/{handler}/{action}/host");
                if c.pointer(&at)
                    .and_then(Value::as_str)
                    .is_some_and(|h| !h.is_empty())
                {
                    refuse(
                        format!("{ptr}{at}"),
                        format!("container `{name}` sets a host for its {handler} {action}"),
                    );
                }
            }
        }
    }
    for (ptr, who, sc) in &contexts {
        if sc["windowsOptions"]["hostProcess"] == true {
            refuse(
                format!("{ptr}/windowsOptions/hostProcess"),
                format!("{who} sets windowsOptions.hostProcess: true"),
            );
        }
        if sc["privileged"] == true {
            refuse(
                format!("{ptr}/privileged"),
                format!("{who} sets privileged: true"),
            );
        }
        if let Some(mount) = sc["procMount"].as_str().filter(|m| *m != "Default") {
            refuse(
                format!("{ptr}/procMount"),
                format!("{who} sets procMount: {mount}"),
            );
        }
        let selinux = &sc["seLinuxOptions"];
        let selinux_type = selinux["type"].as_str().unwrap_or_default();
        if !SELINUX_TYPES.contains(&selinux_type) {
            refuse(
                format!("{ptr}/seLinuxOptions/type"),
                format!("{who} sets SELinux type `{selinux_type}`"),
            );
        }
        for field in ["user", "role"] {
            if selinux[field].as_str().is_some_and(|s| !s.is_empty()) {
                refuse(
                    format!("{ptr}/seLinuxOptions/{field}"),
                    format!("{who} sets an SELinux {field}"),
                );
            }
        }
        if sc["appArmorProfile"]["type"] == "Unconfined" {
            refuse(
                format!("{ptr}/appArmorProfile/type"),
                format!("{who} sets appArmorProfile Unconfined"),
            );
        }
        if sc["seccompProfile"]["type"] == "Unconfined" {
            refuse(
                format!("{ptr}/seccompProfile/type"),
                format!("{who} sets seccompProfile Unconfined"),
            );
        }
        if level == Level::Restricted && sc["runAsUser"] == 0 {
            refuse(
                format!("{ptr}/runAsUser"),
                format!("{who} sets runAsUser: 0 (root)"),
            );
        }
    }
    if level == Level::Restricted && run_as_non_root && pod_sc["runAsNonRoot"] == false {
        refuse(
            format!("{sc_ptr}/runAsNonRoot"),
            "the pod sets runAsNonRoot: false".to_string(),
        );
    }
    // Windows pods are exempt from the restricted level's controls of
    // Linux kernel features.
    let windows = pod["os"]["name"] == "windows";
    for (ptr, who, sc) in contexts.iter().skip(1) {
        let caps = &sc["capabilities"];
        let added: Vec<&str> = caps["add"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let allowed: &[&str] = match level {
            Level::Baseline => BASELINE_CAPABILITIES,
            Level::Restricted => &["NET_BIND_SERVICE"],
        };
        let refused: Vec<&str> = added
            .iter()
            .copied()
            .filter(|c| !allowed.contains(c))
            .collect();
        if !refused.is_empty() {
            refuse(
                format!("{ptr}/capabilities/add"),
                format!(
                    "{who} adds capabilities {}; the level allows {}",
                    refused.join(", "),
                    allowed.join(", ")
                ),
            );
        }
        if level < Level::Restricted || windows {
            continue;
        }
        let drops_all = caps["drop"]
            .as_array()
            .is_some_and(|d| d.iter().any(|c| c == "ALL"));
        if !drops_all {
            refuse(
                format!("{ptr}/capabilities"),
                format!("{who} does not drop all capabilities (capabilities.drop: [ALL])"),
            );
        }
        if sc["allowPrivilegeEscalation"] != false {
            refuse(
                format!("{ptr}/allowPrivilegeEscalation"),
                format!("{who} does not set allowPrivilegeEscalation: false"),
            );
        }
        // The container's own profile wins over the pod's.
        let profile = sc["seccompProfile"]["type"]
            .as_str()
            .or(pod_sc["seccompProfile"]["type"].as_str());
        if !matches!(
            profile,
            Some("RuntimeDefault" | "Localhost") | Some("Unconfined")
        ) {
            refuse(
                format!("{ptr}/seccompProfile"),
                format!(
                    "neither the pod nor {who} sets seccompProfile RuntimeDefault or Localhost"
                ),
            );
        }
        let non_root = sc["runAsNonRoot"]
            .as_bool()
            .or(pod_sc["runAsNonRoot"].as_bool());
        if run_as_non_root && non_root != Some(true) {
            refuse(
                format!("{ptr}/runAsNonRoot"),
                format!("neither the pod nor {who} sets runAsNonRoot: true"),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(pod: Value, annotations: Option<Value>, level: Level) -> Vec<String> {
        violations("/spec", &pod, annotations.as_ref(), level, true)
            .into_iter()
            .map(|v| format!("{}: {}", v.pointer, v.what))
            .collect()
    }

    /// A container that meets the restricted level.
    fn good() -> Value {
        json!({"name": "a", "image": "x", "securityContext": {
            "allowPrivilegeEscalation": false,
            "capabilities": {"drop": ["ALL"]}
        }})
    }

    fn pod(extra: Value) -> Value {
        let mut p = json!({
            "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [good()],
        });
        if let (Value::Object(p), Value::Object(e)) = (&mut p, extra) {
            p.extend(e);
        }
        p
    }

    #[test]
    fn a_restricted_pod_passes_both_levels() {
        for level in [Level::Baseline, Level::Restricted] {
            assert_eq!(refused(pod(json!({})), None, level), Vec::<String>::new());
        }
    }

    #[test]
    fn each_baseline_control_is_refused_where_it_is_set() {
        let cases = [
            (json!({"hostPID": true}), "/spec/hostPID"),
            (
                json!({"volumes": [{"name": "v", "hostPath": {"path": "/"}}]}),
                "/spec/volumes/0",
            ),
            (
                json!({"securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"},
                    "sysctls": [{"name": "kernel.msgmax", "value": "1"}]}}),
                "/spec/securityContext/sysctls/0",
            ),
            (
                json!({"containers": [{"name": "a", "ports": [{"containerPort": 80, "hostPort": 80}],
                    "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]}),
                "/spec/containers/0/ports/0/hostPort",
            ),
            (
                json!({"initContainers": [{"name": "i", "securityContext": {"privileged": true,
                    "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]}),
                "/spec/initContainers/0/securityContext/privileged",
            ),
            (
                json!({"securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "Unconfined"}}}),
                "/spec/securityContext/seccompProfile/type",
            ),
            (
                json!({"securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"},
                    "seLinuxOptions": {"type": "spc_t"}}}),
                "/spec/securityContext/seLinuxOptions/type",
            ),
        ];
        for (extra, pointer) in cases {
            let found = refused(pod(extra.clone()), None, Level::Baseline);
            assert_eq!(found.len(), 1, "{extra}: {found:?}");
            assert!(found[0].starts_with(&format!("{pointer}: ")), "{found:?}");
        }
        let apparmor = json!({"container.apparmor.security.beta.kubernetes.io/a": "unconfined"});
        assert_eq!(
            refused(pod(json!({})), Some(apparmor.clone()), Level::Baseline).len(),
            1
        );
        let localhost = json!({"container.apparmor.security.beta.kubernetes.io/a": "localhost/p"});
        assert!(refused(pod(json!({})), Some(localhost), Level::Baseline).is_empty());
        let in_template = violations(
            "/spec/template/spec",
            &pod(json!({})),
            Some(&apparmor),
            Level::Baseline,
            true,
        );
        assert_eq!(
            in_template[0].pointer,
            "/spec/template/metadata/annotations"
        );
        let probe_host = json!({"containers": [{"name": "a", "livenessProbe": {"httpGet": {"host": "10.0.0.1", "port": 80}},
            "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]});
        let found = refused(pod(probe_host), None, Level::Baseline);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("/spec/containers/0/livenessProbe/httpGet/host: "),
            "{found:?}"
        );
        // Windows pods are exempt from the kernel controls of restricted.
        let bare = json!({"name": "w", "image": "x"});
        let windows = json!({"os": {"name": "windows"}, "securityContext": {"runAsNonRoot": true}, "containers": [bare]});
        assert_eq!(
            refused(windows, None, Level::Restricted),
            Vec::<String>::new()
        );
        let null_path = pod(json!({"volumes": [{"name": "v", "hostPath": null, "emptyDir": {}}]}));
        assert_eq!(
            refused(null_path, None, Level::Baseline),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_restricted_level_adds_its_controls() {
        // A volume type outside the list, root, and a container without a
        // profile of its own in a pod without one.
        let p = json!({
            "securityContext": {"runAsNonRoot": true},
            "containers": [good()],
            "volumes": [{"name": "n", "nfs": {"server": "s", "path": "/"}}],
        });
        let found = refused(p.clone(), None, Level::Restricted);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].contains("type nfs"), "{found:?}");
        assert!(
            found[1].contains("seccompProfile RuntimeDefault"),
            "{found:?}"
        );
        assert!(refused(p, None, Level::Baseline).is_empty());
        // The container's own profile is enough.
        let mut c = good();
        c["securityContext"]["seccompProfile"] =
            json!({"type": "Localhost", "localhostProfile": "p"});
        let own = json!({"securityContext": {"runAsNonRoot": true}, "containers": [c]});
        assert!(refused(own, None, Level::Restricted).is_empty());
        let root = pod(
            json!({"securityContext": {"runAsNonRoot": true, "runAsUser": 0,
            "seccompProfile": {"type": "RuntimeDefault"}}}),
        );
        assert_eq!(refused(root, None, Level::Restricted).len(), 1);
        let mut c = good();
        c["securityContext"]["capabilities"]["add"] = json!(["NET_BIND_SERVICE", "CHOWN"]);
        let found = refused(pod(json!({"containers": [c]})), None, Level::Restricted);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("adds capabilities CHOWN;"), "{found:?}");
        let mut c = good();
        c["securityContext"]["runAsNonRoot"] = json!(false);
        assert_eq!(
            refused(pod(json!({"containers": [c]})), None, Level::Restricted).len(),
            1
        );
    }
}
