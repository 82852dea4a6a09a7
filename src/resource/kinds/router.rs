//! A Cloud Router with its Cloud NAT (`compute.routers`,
//! <https://cloud.google.com/compute/docs/reference/rest/v1/routers>). Name, network and region
//! force a new router (hashicorp/terraform-provider-google,
//! `google/services/compute/resource_compute_router.go`); the NAT gateway, kept inline in the
//! router's `nats[]`, changes in place.

use super::{ShapeError, live_last, live_str};
use crate::resource::Observed;
use crate::resource::spec::Change::{ForceNew, InPlace};
use crate::resource::spec::{f, kind_fields, mark};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const KIND: &str = "router";

/// The NAT gateway a3ctl manages on a router.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Nat {
    pub name: String,
    /// `natIpAllocateOption`: `AUTO_ONLY` or `MANUAL_ONLY`.
    pub ip_allocation: String,
    /// `sourceSubnetworkIpRangesToNat`.
    pub source_ranges: String,
}

/// What a3ctl declares about a router.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterSpec {
    pub name: String,
    /// The network's name (in the router's project).
    pub network: String,
    pub region: String,
    /// Carries a3ctl's ownership mark.
    pub description: String,
    /// `null` for a router without NAT.
    pub nat: Option<Nat>,
}

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::Router,
    name: "router",
    api: super::Api::Compute,
    fields: FIELDS,
    deadline_minutes: 20,
    create_latency: Some("compute.router.insert"),
    service: Some("compute.googleapis.com"),
};

kind_fields! {
    /// The fields of [`RouterSpec`].
    pub enum RouterField for Router in FIELDS {
        Name => f("name", ForceNew),
        Network => f("network", ForceNew),
        Region => f("region", ForceNew),
        // Never differs (the ownership mark), so how it would change does not matter.
        Description => mark(InPlace),
        Nat => f("nat", InPlace),
    }
}

impl Nat {
    /// The API's NAT gateway, on top of `current` (the live gateway of that name, whose other
    /// settings a3ctl keeps).
    pub fn body(&self, current: Option<&Value>) -> Value {
        let mut body = current.cloned().unwrap_or_else(|| json!({}));
        body["name"] = json!(self.name);
        body["natIpAllocateOption"] = json!(self.ip_allocation);
        body["sourceSubnetworkIpRangesToNat"] = json!(self.source_ranges);
        body
    }
}

impl RouterSpec {
    /// The body of `routers.insert`, the NAT inline; `network` is the network's relative URL.
    pub fn body(&self, network: String) -> Value {
        let mut body = json!({
            "name": self.name,
            "description": self.description,
            "network": network,
        });
        if let Some(nat) = &self.nat {
            body["nats"] = json!([nat.body(None)]);
        }
        body
    }

    /// The live router (the API's JSON) as a spec (`nat`: its first gateway), with its outputs.
    pub fn project(live: &Value) -> Result<Observed, ShapeError> {
        let nat = match live["nats"].as_array().and_then(|n| n.first()) {
            None => None,
            Some(gateway) => Some(Nat {
                name: live_str(KIND, gateway, "name")?.to_string(),
                ip_allocation: live_str(KIND, gateway, "natIpAllocateOption")?.to_string(),
                source_ranges: live_str(KIND, gateway, "sourceSubnetworkIpRangesToNat")?
                    .to_string(),
            }),
        };
        let spec = RouterSpec {
            name: live_str(KIND, live, "name")?.to_string(),
            network: live_last(KIND, live, "network")?,
            region: live_last(KIND, live, "region")?,
            description: live["description"].as_str().unwrap_or("").to_string(),
            nat,
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

    #[test]
    fn the_nat_is_projected_from_the_first_gateway_and_keeps_unmanaged_settings() {
        let nat = Nat {
            name: "n".into(),
            ip_allocation: "AUTO_ONLY".into(),
            source_ranges: "ALL_SUBNETWORKS_ALL_IP_RANGES".into(),
        };
        let gateway = nat.body(Some(&json!({"logConfig": {"enable": true}})));
        assert_eq!(gateway["logConfig"]["enable"], true);
        let live = json!({"name": "r", "nats": [gateway], "selfLink": "s",
                          "network": "https://x/projects/p/global/networks/net",
                          "region": "https://x/projects/p/regions/us-central1"});
        let o = RouterSpec::project(&live).unwrap();
        assert_eq!(o.spec["nat"], super::super::to_spec(&nat));
        assert_eq!(o.spec["region"], "us-central1");
        assert_eq!(o.spec["network"], "net");
        let mut bare = live.clone();
        bare.as_object_mut().unwrap().remove("nats");
        assert_eq!(RouterSpec::project(&bare).unwrap().spec["nat"], Value::Null);
        bare.as_object_mut().unwrap().remove("network");
        assert!(RouterSpec::project(&bare).is_err());
    }
}
