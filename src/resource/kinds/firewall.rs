//! A VPC firewall rule (`compute.firewalls`,
//! <https://cloud.google.com/compute/docs/reference/rest/v1/firewalls>). Name, network and
//! direction force a new rule (the `ForceNew` flags of hashicorp/terraform-provider-google's
//! `google/services/compute/resource_compute_firewall.go`); everything else changes with one PATCH.

use super::{ShapeError, live_last, live_str};
use crate::resource::Observed;
use crate::resource::spec::Change::{ForceNew, InPlace};
use crate::resource::spec::{Compare, Field, f, kind_fields, mark, set};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const KIND: &str = "firewall";

/// One allowed protocol, with its ports (none: every port).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    pub protocol: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<String>>,
}

/// What a3ctl declares about a firewall rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FirewallSpec {
    pub name: String,
    /// The network's name (in the rule's project).
    pub network: String,
    /// `INGRESS` or `EGRESS`.
    pub direction: String,
    /// Carries a3ctl's ownership mark.
    pub description: String,
    pub priority: u32,
    pub allowed: Vec<Rule>,
    /// Sorted: compared as a set.
    pub source_ranges: Vec<String>,
}

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::Firewall,
    name: "firewall",
    api: super::Api::Compute,
    fields: FIELDS,
    deadline_minutes: 20,
    create_latency: Some("compute.firewall.insert"),
    service: Some("compute.googleapis.com"),
};

kind_fields! {
    /// The fields of [`FirewallSpec`].
    pub enum FirewallField for Firewall in FIELDS {
        Name => f("name", ForceNew),
        Network => f("network", ForceNew),
        Direction => f("direction", ForceNew),
        Description => mark(InPlace),
        Priority => f("priority", InPlace),
        Allowed => Field {
            name: "allowed",
            change: InPlace,
            compare: Compare::FirewallRules,
        },
        SourceRanges => set("source_ranges", InPlace),
    }
}

/// Compute's priority for a rule created without one.
const DEFAULT_PRIORITY: u32 = 1000;

impl FirewallSpec {
    /// `[{protocol, ports?}]` as the API spells it: `[{IPProtocol, ports?}]`.
    fn allowed_body(&self) -> Value {
        Value::Array(
            self.allowed
                .iter()
                .map(|r| {
                    let mut rule = json!({"IPProtocol": r.protocol});
                    if let Some(ports) = &r.ports {
                        rule["ports"] = json!(ports);
                    }
                    rule
                })
                .collect(),
        )
    }

    /// The body of `firewalls.insert`; `network` is the network's relative URL.
    pub fn body(&self, network: String) -> Value {
        json!({
            "name": self.name,
            "description": self.description,
            "network": network,
            "direction": self.direction,
            "priority": self.priority,
            "allowed": self.allowed_body(),
            "sourceRanges": self.source_ranges,
        })
    }

    /// The body of a `firewalls.patch` that changes `fields` (names of [`FIELDS`]).
    pub fn patch(&self, fields: &[FirewallField]) -> Value {
        let mut body = serde_json::Map::new();
        for field in fields {
            let (key, value) = match field {
                FirewallField::Description => ("description", json!(self.description)),
                FirewallField::Priority => ("priority", json!(self.priority)),
                FirewallField::Allowed => ("allowed", self.allowed_body()),
                FirewallField::SourceRanges => ("sourceRanges", json!(self.source_ranges)),
                // Replaced, never patched.
                FirewallField::Name | FirewallField::Network | FirewallField::Direction => continue,
            };
            body.insert(key.into(), value);
        }
        Value::Object(body)
    }

    /// The live rule (the API's JSON) as a spec (`source_ranges` sorted), with its outputs.
    pub fn project(live: &Value) -> Result<Observed, ShapeError> {
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        };
        let mut allowed = Vec::new();
        // A rule that allows nothing lists no `allowed` (the API leaves empty lists out).
        for rule in live["allowed"].as_array().into_iter().flatten() {
            let ports = strings(&rule["ports"]);
            allowed.push(Rule {
                protocol: live_str(KIND, rule, "IPProtocol")?.to_string(),
                ports: (!ports.is_empty()).then_some(ports),
            });
        }
        let mut source_ranges = strings(&live["sourceRanges"]);
        source_ranges.sort();
        let spec = FirewallSpec {
            name: live_str(KIND, live, "name")?.to_string(),
            network: live_last(KIND, live, "network")?,
            // Compute's defaults for a rule created without them.
            direction: live["direction"].as_str().unwrap_or("INGRESS").to_string(),
            description: live["description"].as_str().unwrap_or("").to_string(),
            priority: live["priority"]
                .as_u64()
                .and_then(|p| u32::try_from(p).ok())
                .unwrap_or(DEFAULT_PRIORITY),
            allowed,
            source_ranges,
        };
        Ok(Observed {
            spec: super::to_spec(&spec),
            outputs: json!({
                "self_link": live_str(KIND, live, "selfLink")?,
                "id": live["id"],
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> FirewallSpec {
        FirewallSpec {
            name: "net-allow-internal".into(),
            network: "net".into(),
            direction: "INGRESS".into(),
            description: "Managed by a3ctl (a3ctl-blueprint=x)".into(),
            priority: 1000,
            allowed: vec![
                Rule {
                    protocol: "icmp".into(),
                    ports: None,
                },
                Rule {
                    protocol: "tcp".into(),
                    ports: Some(vec!["0-65535".into()]),
                },
            ],
            source_ranges: vec!["10.0.0.0/20".into(), "10.4.0.0/14".into()],
        }
    }

    #[test]
    fn rules_round_trip_through_the_api_shape() {
        let spec = spec();
        let mut live = spec.body("projects/p/global/networks/net".into());
        live["network"] = json!("https://compute/v1/projects/p/global/networks/net");
        live["selfLink"] = json!("https://compute/v1/projects/p/global/firewalls/x");
        live["sourceRanges"] = json!(["10.4.0.0/14", "10.0.0.0/20"]);
        let observed = FirewallSpec::project(&live).unwrap();
        assert_eq!(observed.spec, super::super::to_spec(&spec));
        assert_eq!(
            spec.patch(&[FirewallField::Priority, FirewallField::Allowed]),
            json!({"priority": 1000, "allowed": [{"IPProtocol": "icmp"}, {"IPProtocol": "tcp", "ports": ["0-65535"]}]})
        );
    }

    #[test]
    fn a_live_rule_without_its_protocol_or_network_is_an_error() {
        let live =
            json!({"name": "x", "selfLink": "s", "network": "n", "allowed": [{"ports": ["22"]}]});
        assert_eq!(
            FirewallSpec::project(&live).unwrap_err(),
            ShapeError::Live {
                kind: "firewall",
                name: "(unnamed)".into(),
                field: "IPProtocol"
            }
        );
        let live = json!({"name": "x", "selfLink": "s"});
        assert!(FirewallSpec::project(&live).is_err());
    }
}
