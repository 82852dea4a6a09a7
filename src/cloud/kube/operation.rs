//! The name of a Kubernetes "operation": the wait for an applied object to become ready.
//!
//! Format: `k8s://<endpoint>/<apiVersion>/<Kind>/<namespace or ->/<name>?until=<condition>`, e.g.
//! `k8s://34.1.2.3/apps/v1/Deployment/kueue-system/kueue-controller-manager?until=available` or
//! `k8s://34.1.2.3/apiextensions.k8s.io/v1/CustomResourceDefinition/-/topologies.kueue.x-k8s.io?until=established`.
//! `-` stands for "no namespace" (cluster-scoped, or `default` for namespaced kinds). Endpoints,
//! names and namespaces contain no `/`, `?` or spaces, so the name parses back unambiguously.

use super::conditions::Condition;
use crate::cloud::{CloudError, CloudResult, ErrorClass};

const SCHEME: &str = "k8s://";

/// What a Kubernetes operation waits for.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitFor {
    /// `host[:port]` of the cluster's API server.
    pub endpoint: String,
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub condition: Condition,
}

impl WaitFor {
    pub fn to_name(&self) -> String {
        format!(
            "{SCHEME}{}/{}/{}/{}/{}?until={}",
            self.endpoint,
            self.api_version,
            self.kind,
            self.namespace.as_deref().unwrap_or("-"),
            self.name,
            self.condition.name()
        )
    }

    pub fn parse(name: &str) -> CloudResult<WaitFor> {
        let bad = || {
            CloudError::new(
                ErrorClass::Invalid,
                format!(
                    "`{name}` is not a Kubernetes wait (k8s://ENDPOINT/APIVERSION/KIND/NAMESPACE/NAME?until=CONDITION)"
                ),
            )
        };
        let rest = name.strip_prefix(SCHEME).ok_or_else(bad)?;
        let (path, query) = rest.split_once('?').ok_or_else(bad)?;
        let condition = query
            .strip_prefix("until=")
            .and_then(Condition::parse)
            .ok_or_else(bad)?;
        let parts: Vec<&str> = path.split('/').collect();
        let (endpoint, api_version, kind, namespace, name) = match parts.as_slice() {
            [e, v, k, ns, n] => (*e, v.to_string(), *k, *ns, *n),
            [e, g, v, k, ns, n] => (*e, format!("{g}/{v}"), *k, *ns, *n),
            _ => return Err(bad()),
        };
        if [endpoint, kind, namespace, name]
            .iter()
            .any(|s| s.is_empty())
        {
            return Err(bad());
        }
        Ok(WaitFor {
            endpoint: endpoint.to_string(),
            api_version,
            kind: kind.to_string(),
            namespace: (namespace != "-").then(|| namespace.to_string()),
            name: name.to_string(),
            condition,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let w = WaitFor {
            endpoint: "127.0.0.1:4443".into(),
            api_version: "apps/v1".into(),
            kind: "DaemonSet".into(),
            namespace: Some("kube-system".into()),
            name: "nccl-tcpxo-installer".into(),
            condition: Condition::OnMatchingNodes(2),
        };
        assert_eq!(
            w.to_name(),
            "k8s://127.0.0.1:4443/apps/v1/DaemonSet/kube-system/nccl-tcpxo-installer?until=on_matching_nodes(2)"
        );
        assert_eq!(WaitFor::parse(&w.to_name()).unwrap(), w);
        let ns = WaitFor {
            api_version: "v1".into(),
            kind: "Namespace".into(),
            namespace: None,
            name: "kueue-system".into(),
            condition: Condition::Active,
            ..w
        };
        assert_eq!(WaitFor::parse(&ns.to_name()).unwrap(), ns);
        assert!(WaitFor::parse("projects/p/operations/x").is_err());
        assert!(WaitFor::parse("k8s://e/v1/Namespace/-/n?until=soon").is_err());
    }
}
