//! Label selectors of the built objects against the pods they are meant
//! to pick: a workload's own `selector` must match its template's labels
//! (the API server refuses the workload otherwise), and a Service, a
//! NetworkPolicy or a PodDisruptionBudget that picks no pod of the build
//! does nothing for it.

use super::{Context, Subject};
use crate::diagnostics::{rule, Diagnostic, Rule};
use crate::kustomize::{pod_metadata_pointer, pod_spec_pointer, Object};
use serde_json::{Map, Value};

pub const RULES: &[&Rule] = &[rule::MANIFEST_VALUE_INVALID, rule::SELECTOR_MATCHES_NOTHING];

/// Whether a label selector picks a pod with `labels`: a plain map (a
/// Service's `selector`) or a `LabelSelector` (`matchLabels` and
/// `matchExpressions`). None when the selector cannot be read.
pub fn selects(selector: &Value, labels: &Map<String, Value>) -> Option<bool> {
    let selector = selector.as_object()?;
    let is_label_selector =
        selector.contains_key("matchLabels") || selector.contains_key("matchExpressions");
    let equal = |pairs: &Map<String, Value>| {
        pairs
            .iter()
            .all(|(k, v)| labels.get(k).is_some_and(|l| l.as_str() == v.as_str()))
    };
    if !is_label_selector {
        return Some(equal(selector));
    }
    let pairs = match selector.get("matchLabels") {
        Some(Value::Object(m)) => m.clone(),
        None | Some(Value::Null) => Map::new(),
        Some(_) => return None,
    };
    if !equal(&pairs) {
        return Some(false);
    }
    for e in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = e["key"].as_str()?;
        let values: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let value = labels.get(key).and_then(Value::as_str);
        let ok = match e["operator"].as_str()? {
            "In" => value.is_some_and(|v| values.contains(&v)),
            "NotIn" => value.is_none_or(|v| !values.contains(&v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => return None,
        };
        if !ok {
            return Some(false);
        }
    }
    Some(true)
}

/// Whether a selector (a plain map or a `LabelSelector`, as [`selects`]
/// reads them) states no requirement, and so picks every pod.
fn requires_nothing(selector: &Value) -> bool {
    let empty = |v: Option<&Value>| v.is_none_or(|v| v.as_object().is_none_or(|m| m.is_empty()));
    match selector.as_object() {
        Some(m) if m.contains_key("matchLabels") || m.contains_key("matchExpressions") => {
            empty(m.get("matchLabels"))
                && m.get("matchExpressions")
                    .and_then(Value::as_array)
                    .is_none_or(|e| e.is_empty())
        }
        _ => empty(Some(selector)),
    }
}

/// The namespace an object goes to: without one, the one `kubectl apply`
/// uses, `default` unless told otherwise.
fn namespace(o: &Object) -> &str {
    o.namespace().unwrap_or("default")
}

/// The labels of a workload's pods (a PodTemplate runs none).
fn template_labels(o: &Object) -> Option<&Map<String, Value>> {
    let pod = pod_spec_pointer(o.kind()).filter(|_| o.kind() != "PodTemplate")?;
    o.value
        .pointer(&format!("{}/labels", pod_metadata_pointer(pod)))
        .and_then(Value::as_object)
}

pub fn check(_ctx: &Context, subject: &Subject) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let objects = subject.objects;
    let empty = Map::new();
    // Each workload's selector picks its own template.
    for o in objects {
        let Some(selector) = o.value.pointer("/spec/selector").filter(|_| {
            pod_spec_pointer(o.kind()).is_some() && !matches!(o.kind(), "Pod" | "CronJob" | "Job")
        }) else {
            continue;
        };
        let labels = template_labels(o).unwrap_or(&empty);
        if selects(selector, labels) == Some(false) {
            out.push(
                Diagnostic::new(
                    rule::MANIFEST_VALUE_INVALID,
                    format!(
                        "{} `{}` has a `selector` that does not match its template's labels, so the API server refuses it",
                        o.kind(),
                        o.name()
                    ),
                )
                .at(o.locate("/spec/selector"))
                .help("give the pod template the labels the selector names (a `labels` entry with `includeSelectors: true` changes both)"),
            );
        }
    }
    // Services, policies and budgets pick pods of their namespace.
    let pods: Vec<(&Object, &Map<String, Value>)> = objects
        .iter()
        .filter_map(|o| Some((o, template_labels(o)?)))
        .collect();
    for o in objects {
        let (pointer, what) = match (o.kind(), o.api_version()) {
            ("Service", "v1") => ("/spec/selector", "sends traffic to"),
            ("NetworkPolicy", "networking.k8s.io/v1") => ("/spec/podSelector", "applies to"),
            ("PodDisruptionBudget", "policy/v1") => ("/spec/selector", "protects"),
            _ => continue,
        };
        let Some(selector) = o.value.pointer(pointer) else {
            continue;
        };
        // An empty selector picks every pod of the namespace (a Service
        // without one has its endpoints made by hand).
        if requires_nothing(selector) {
            continue;
        }
        let picks = pods.iter().any(|(p, labels)| {
            namespace(p) == namespace(o) && selects(selector, labels) != Some(false)
        });
        if !picks {
            out.push(
                Diagnostic::new(
                    rule::SELECTOR_MATCHES_NOTHING,
                    format!(
                        "{} `{}` {what} the pods its selector picks, and no workload of the build in its namespace has those labels",
                        o.kind(),
                        o.name()
                    ),
                )
                .at(o.locate(pointer)),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::selects;
    use serde_json::json;

    #[test]
    fn selectors_pick_as_kubernetes_does() {
        let labels = json!({"app": "agent", "tier": "db"});
        let labels = labels.as_object().unwrap();
        let yes = [
            json!({"app": "agent"}),
            json!({"matchLabels": {"app": "agent"}}),
            json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["db", "x"]}]}),
            json!({"matchExpressions": [{"key": "gone", "operator": "DoesNotExist"}]}),
            json!({"matchLabels": {"tier": "db"}, "matchExpressions": [{"key": "app", "operator": "Exists"}]}),
            json!({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["web"]}]}),
        ];
        for s in yes {
            assert_eq!(selects(&s, labels), Some(true), "{s}");
        }
        let no = [
            json!({"app": "other"}),
            json!({"app": "agent", "extra": "x"}),
            json!({"matchLabels": {"app": "agent"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]}),
            json!({"matchExpressions": [{"key": "gone", "operator": "Exists"}]}),
        ];
        for s in no {
            assert_eq!(selects(&s, labels), Some(false), "{s}");
        }
        let odd = json!({"matchExpressions": [{"key": "app", "operator": "Gt", "values": ["1"]}]});
        assert_eq!(selects(&odd, labels), None);
    }
}
