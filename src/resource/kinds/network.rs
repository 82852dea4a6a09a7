//! A VPC network (`compute.networks`,
//! <https://cloud.google.com/compute/docs/reference/rest/v1/networks>). What replaces one follows
//! the `ForceNew` flags of the Terraform Google provider's `google_compute_network`
//! (hashicorp/terraform-provider-google, `google/services/compute/resource_compute_network.go`):
//! the name, the description and the subnet mode; the MTU and the routing mode change with PATCH.

use super::{ShapeError, live_str};
use crate::resource::Observed;
use crate::resource::spec::Change::{ForceNew, InPlace};
use crate::resource::spec::{f, kind_fields, mark};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const KIND: &str = "network";

/// What a3ctl declares about a network.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetworkSpec {
    pub name: String,
    /// Carries a3ctl's ownership mark.
    pub description: String,
    pub auto_create_subnetworks: bool,
    pub mtu: u32,
    /// `REGIONAL` or `GLOBAL`.
    pub routing_mode: String,
    /// The network profile the VPC is made from (`projects/<p>/global/networkProfiles/<name>`,
    /// e.g. a zone's `<zone>-vpc-roce` for RDMA NICs); settable only when the network is created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_profile: Option<String>,
}

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::Network,
    name: "network",
    api: super::Api::Compute,
    fields: FIELDS,
    deadline_minutes: 20,
    create_latency: Some("compute.network.insert"),
    service: Some("compute.googleapis.com"),
};

kind_fields! {
    /// The fields of [`NetworkSpec`].
    pub enum NetworkField for Network in FIELDS {
        Name => f("name", ForceNew),
        Description => mark(ForceNew),
        AutoCreateSubnetworks => f("auto_create_subnetworks", ForceNew),
        Mtu => f("mtu", InPlace),
        RoutingMode => f("routing_mode", InPlace),
        // `networkProfile` is "set only at resource creation" (Compute's Network reference).
        NetworkProfile => f("network_profile", ForceNew),
    }
}

/// Compute's MTU for a network created without one
/// (<https://cloud.google.com/vpc/docs/mtu>).
const DEFAULT_MTU: u32 = 1460;

impl NetworkSpec {
    /// The body of `networks.insert`.
    pub fn body(&self) -> Value {
        let mut body = json!({
            "name": self.name,
            "description": self.description,
            "autoCreateSubnetworks": self.auto_create_subnetworks,
            "mtu": self.mtu,
            "routingConfig": {"routingMode": self.routing_mode},
        });
        if let Some(profile) = &self.network_profile {
            body["networkProfile"] = json!(profile);
        }
        body
    }

    /// The body of a `networks.patch` that changes `fields`; a field that is never patched
    /// (replaced, or the mark, which never differs) adds nothing.
    pub fn patch(&self, fields: &[NetworkField]) -> Value {
        let mut body = serde_json::Map::new();
        for field in fields {
            match field {
                NetworkField::Mtu => {
                    body.insert("mtu".into(), json!(self.mtu));
                }
                NetworkField::RoutingMode => {
                    body.insert(
                        "routingConfig".into(),
                        json!({"routingMode": self.routing_mode}),
                    );
                }
                NetworkField::Name
                | NetworkField::Description
                | NetworkField::AutoCreateSubnetworks
                | NetworkField::NetworkProfile => {}
            }
        }
        Value::Object(body)
    }

    /// The live network (the API's JSON) as a spec, with its outputs. Absent optional fields
    /// read as Compute's defaults; a network without a name or self link is an error.
    pub fn project(live: &Value) -> Result<Observed, ShapeError> {
        let spec = NetworkSpec {
            name: live_str(KIND, live, "name")?.to_string(),
            description: live["description"].as_str().unwrap_or("").to_string(),
            auto_create_subnetworks: live["autoCreateSubnetworks"].as_bool().unwrap_or(false),
            mtu: live["mtu"]
                .as_u64()
                .and_then(|m| u32::try_from(m).ok())
                .unwrap_or(DEFAULT_MTU),
            // Compute's default routing mode.
            routing_mode: live["routingConfig"]["routingMode"]
                .as_str()
                .unwrap_or("REGIONAL")
                .to_string(),
            // Compute answers with the profile's full URL; the spec keeps the partial path.
            network_profile: live["networkProfile"]
                .as_str()
                .filter(|p| !p.is_empty())
                .map(|p| p.find("projects/").map_or(p, |at| &p[at..]).to_string()),
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
    fn a_spec_round_trips_through_its_body_and_projection() {
        let spec = NetworkSpec {
            name: "a3mega-gpunet-0".into(),
            description: "Managed by a3ctl (a3ctl-blueprint=a3mega)".into(),
            auto_create_subnetworks: false,
            mtu: 8244,
            routing_mode: "REGIONAL".into(),
            network_profile: None,
        };
        let mut live = spec.body();
        live["selfLink"] = json!("https://compute/v1/projects/p/global/networks/a3mega-gpunet-0");
        live["id"] = json!("123");
        let observed = NetworkSpec::project(&live).unwrap();
        assert_eq!(observed.spec, crate::resource::kinds::to_spec(&spec));
        assert_eq!(observed.outputs["id"], "123");
        assert_eq!(
            spec.patch(&[NetworkField::Mtu, NetworkField::Name]),
            json!({"mtu": 8244})
        );
    }

    #[test]
    fn a_network_profile_is_sent_and_read_back_as_its_partial_path() {
        let spec = NetworkSpec {
            name: "a3u-rdma-net".into(),
            description: "Managed by a3ctl (a3ctl-blueprint=a3u)".into(),
            auto_create_subnetworks: false,
            mtu: 8896,
            routing_mode: "REGIONAL".into(),
            network_profile: Some(
                "projects/p/global/networkProfiles/us-central1-b-vpc-roce".into(),
            ),
        };
        let mut live = spec.body();
        assert_eq!(
            live["networkProfile"],
            "projects/p/global/networkProfiles/us-central1-b-vpc-roce"
        );
        live["networkProfile"] = json!(
            "https://www.googleapis.com/compute/v1/projects/p/global/networkProfiles/us-central1-b-vpc-roce"
        );
        live["selfLink"] = json!("x");
        let observed = NetworkSpec::project(&live).unwrap();
        assert_eq!(observed.spec, crate::resource::kinds::to_spec(&spec));
    }

    #[test]
    fn missing_fields_are_defaults_or_errors() {
        let bare = json!({"name": "n", "selfLink": "x"});
        let spec = NetworkSpec::project(&bare).unwrap().spec;
        assert_eq!(spec["mtu"], 1460);
        assert_eq!(spec["routing_mode"], "REGIONAL");
        assert_eq!(
            NetworkSpec::project(&json!({"name": "n"})).unwrap_err(),
            ShapeError::Live {
                kind: "network",
                name: "n".into(),
                field: "selfLink"
            }
        );
        let err =
            super::super::from_spec::<NetworkSpec>("network", &json!({"name": "n"})).unwrap_err();
        assert!(err.to_string().contains("missing field"), "{err}");
    }
}
