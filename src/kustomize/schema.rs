//! The kinds of Kubernetes' own API that Kustomize's embedded schema
//! (Kubernetes 1.21) describes, by apiVersion, and which of them it
//! takes as cluster-scoped. Kustomize keys its schema by apiVersion and
//! kind: a strategic merge knows a list's merge key only for a kind of
//! this table, and the namespace transformer leaves alone only the
//! kinds marked cluster-scoped here. So an `apps/v1beta2` Deployment (gone
//! by 1.21) has its lists replaced whole, and a `flowcontrol.apiserver.
//! k8s.io/v1` FlowSchema (newer than 1.21) is given a namespace.

/// A kind and its scope as Kustomize takes it.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Namespaced, or of no scope the schema states (the review kinds):
    /// Kustomize namespaces both.
    N(&'static str),
    /// Cluster-scoped.
    C(&'static str),
}

use Kind::{C, N};

impl Kind {
    fn name(self) -> &'static str {
        match self {
            N(name) | C(name) => name,
        }
    }
}

#[rustfmt::skip]
const KINDS: &[(&str, &[Kind])] = &[
    ("v1", &[N("Binding"), C("ComponentStatus"), N("ConfigMap"), N("Endpoints"), N("Event"), N("LimitRange"), C("Namespace"), C("Node"), C("PersistentVolume"), N("PersistentVolumeClaim"), N("Pod"), N("PodTemplate"), N("ReplicationController"), N("ResourceQuota"), N("Secret"), N("Service"), N("ServiceAccount")]),
    ("admissionregistration.k8s.io/v1", &[C("MutatingWebhookConfiguration"), C("ValidatingWebhookConfiguration")]),
    ("admissionregistration.k8s.io/v1beta1", &[C("MutatingWebhookConfiguration"), C("ValidatingWebhookConfiguration")]),
    ("apiextensions.k8s.io/v1", &[C("CustomResourceDefinition")]),
    ("apiextensions.k8s.io/v1beta1", &[C("CustomResourceDefinition")]),
    ("apiregistration.k8s.io/v1", &[C("APIService")]),
    ("apiregistration.k8s.io/v1beta1", &[C("APIService")]),
    ("apps/v1", &[N("ControllerRevision"), N("DaemonSet"), N("Deployment"), N("ReplicaSet"), N("StatefulSet")]),
    ("authentication.k8s.io/v1", &[N("TokenRequest"), N("TokenReview")]),
    ("authentication.k8s.io/v1beta1", &[N("TokenReview")]),
    ("authorization.k8s.io/v1", &[N("LocalSubjectAccessReview"), N("SelfSubjectAccessReview"), N("SelfSubjectRulesReview"), N("SubjectAccessReview")]),
    ("authorization.k8s.io/v1beta1", &[N("LocalSubjectAccessReview"), N("SelfSubjectAccessReview"), N("SelfSubjectRulesReview"), N("SubjectAccessReview")]),
    ("autoscaling/v1", &[N("HorizontalPodAutoscaler"), N("Scale")]),
    ("autoscaling/v2beta1", &[N("HorizontalPodAutoscaler")]),
    ("autoscaling/v2beta2", &[N("HorizontalPodAutoscaler")]),
    ("batch/v1", &[N("CronJob"), N("Job")]),
    ("batch/v1beta1", &[N("CronJob")]),
    ("certificates.k8s.io/v1", &[C("CertificateSigningRequest")]),
    ("certificates.k8s.io/v1beta1", &[C("CertificateSigningRequest")]),
    ("coordination.k8s.io/v1", &[N("Lease")]),
    ("coordination.k8s.io/v1beta1", &[N("Lease")]),
    ("discovery.k8s.io/v1", &[N("EndpointSlice")]),
    ("discovery.k8s.io/v1beta1", &[N("EndpointSlice")]),
    ("events.k8s.io/v1", &[N("Event")]),
    ("events.k8s.io/v1beta1", &[N("Event")]),
    ("extensions/v1beta1", &[N("Ingress")]),
    ("flowcontrol.apiserver.k8s.io/v1beta1", &[C("FlowSchema"), C("PriorityLevelConfiguration")]),
    ("networking.k8s.io/v1", &[N("Ingress"), C("IngressClass"), N("NetworkPolicy")]),
    ("networking.k8s.io/v1beta1", &[N("Ingress"), C("IngressClass")]),
    ("node.k8s.io/v1", &[C("RuntimeClass")]),
    ("node.k8s.io/v1beta1", &[C("RuntimeClass")]),
    ("policy/v1", &[N("PodDisruptionBudget")]),
    ("policy/v1beta1", &[N("Eviction"), N("PodDisruptionBudget"), C("PodSecurityPolicy")]),
    ("rbac.authorization.k8s.io/v1", &[C("ClusterRole"), C("ClusterRoleBinding"), N("Role"), N("RoleBinding")]),
    ("rbac.authorization.k8s.io/v1beta1", &[C("ClusterRole"), C("ClusterRoleBinding"), N("Role"), N("RoleBinding")]),
    ("scheduling.k8s.io/v1", &[C("PriorityClass")]),
    ("scheduling.k8s.io/v1beta1", &[C("PriorityClass")]),
    ("storage.k8s.io/v1", &[C("CSIDriver"), C("CSINode"), C("StorageClass"), C("VolumeAttachment")]),
    ("storage.k8s.io/v1beta1", &[C("CSIDriver"), C("CSINode"), N("CSIStorageCapacity"), C("StorageClass"), C("VolumeAttachment")]),
];

/// Splits an apiVersion into group and version (`v1` is the core group's).
pub fn group_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

fn find(group: &str, version: &str, kind: &str) -> Option<Kind> {
    let (_, kinds) = KINDS
        .iter()
        .find(|(api, _)| group_version(api) == (group, version))?;
    kinds.iter().copied().find(|k| k.name() == kind)
}

/// Whether the schema describes `kind` at `api_version`: a kind of
/// Kubernetes' own API at a version Kubernetes 1.21 serves.
pub fn knows(api_version: &str, kind: &str) -> bool {
    let (group, version) = group_version(api_version);
    find(group, version, kind).is_some()
}

/// Whether Kustomize takes `kind` of `group` at `version` as
/// cluster-scoped (it gives every other kind a namespace, custom
/// resources included).
pub fn is_cluster_scoped(group: &str, version: &str, kind: &str) -> bool {
    matches!(find(group, version, kind), Some(C(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_and_knowledge_follow_the_version() {
        assert!(knows("apps/v1", "Deployment"));
        assert!(!knows("apps/v1beta2", "Deployment"));
        assert!(!knows("example.com/v1", "Deployment"));
        assert!(!knows("autoscaling/v2", "HorizontalPodAutoscaler"));
        let flow = "flowcontrol.apiserver.k8s.io";
        assert!(is_cluster_scoped("", "v1", "Namespace"));
        assert!(!is_cluster_scoped("", "v2", "Namespace"));
        assert!(!is_cluster_scoped("example.com", "v1", "Namespace"));
        assert!(is_cluster_scoped(flow, "v1beta1", "FlowSchema"));
        assert!(!is_cluster_scoped(flow, "v1", "FlowSchema"));
        assert!(!is_cluster_scoped(
            "authentication.k8s.io",
            "v1",
            "TokenReview"
        ));
        assert!(knows("authentication.k8s.io/v1", "TokenReview"));
    }

    #[test]
    fn every_version_is_listed_once_and_kinds_sorted() {
        let mut apis: Vec<&str> = KINDS.iter().map(|(api, _)| *api).collect();
        let n = apis.len();
        apis.sort_unstable();
        apis.dedup();
        assert_eq!(apis.len(), n);
        for (api, kinds) in KINDS {
            let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
            assert!(names.windows(2).all(|w| w[0] < w[1]), "{api}: {names:?}");
        }
    }
}
