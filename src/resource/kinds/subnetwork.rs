//! A VPC subnetwork (`compute.subnetworks`,
//! <https://cloud.google.com/compute/docs/reference/rest/v1/subnetworks>). Name, network, region
//! and description force a new subnet (hashicorp/terraform-provider-google,
//! `google/services/compute/resource_compute_subnetwork.go`); the primary range only grows in
//! place (`expandIpCidrRange`, <https://cloud.google.com/vpc/docs/create-modify-vpc-networks#expand-subnet>);
//! secondary ranges and Private Google Access change with a fingerprinted PATCH.

use super::{ShapeError, live_last, live_str};
use crate::resource::Observed;
use crate::resource::spec::Change::{ForceNew, GrowOnly, InPlace};
use crate::resource::spec::{f, kind_fields, mark, set};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const KIND: &str = "subnetwork";

/// A named secondary range (GKE's pods and services ranges).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecondaryRange {
    pub name: String,
    pub cidr: String,
}

/// What a3ctl declares about a subnetwork.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubnetworkSpec {
    pub name: String,
    /// The network's name (in the subnet's project).
    pub network: String,
    pub region: String,
    /// Carries a3ctl's ownership mark.
    pub description: String,
    pub ip_cidr_range: String,
    /// In the order given; the API keeps it.
    pub secondary_ranges: Vec<SecondaryRange>,
    pub private_ip_google_access: bool,
}

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::Subnetwork,
    name: "subnetwork",
    api: super::Api::Compute,
    fields: FIELDS,
    deadline_minutes: 20,
    create_latency: Some("compute.subnetwork.insert"),
    service: Some("compute.googleapis.com"),
};

kind_fields! {
    /// The fields of [`SubnetworkSpec`].
    pub enum SubnetworkField for Subnetwork in FIELDS {
        Name => f("name", ForceNew),
        Network => f("network", ForceNew),
        Region => f("region", ForceNew),
        Description => mark(ForceNew),
        IpCidrRange => f("ip_cidr_range", GrowOnly),
        SecondaryRanges => set("secondary_ranges", InPlace),
        PrivateIpGoogleAccess => f("private_ip_google_access", InPlace),
    }
}

impl SubnetworkSpec {
    /// `secondaryIpRanges` as the API spells them.
    pub fn secondary_body(&self) -> Vec<Value> {
        self.secondary_ranges
            .iter()
            .map(|r| json!({"rangeName": r.name, "ipCidrRange": r.cidr}))
            .collect()
    }

    /// The body of `subnetworks.insert`; `network` is the network's relative URL.
    pub fn body(&self, network: String) -> Value {
        json!({
            "name": self.name,
            "description": self.description,
            "network": network,
            "ipCidrRange": self.ip_cidr_range,
            "secondaryIpRanges": self.secondary_body(),
            "privateIpGoogleAccess": self.private_ip_google_access,
        })
    }

    /// The live subnetwork (the API's JSON) as a spec, with its outputs.
    pub fn project(live: &Value) -> Result<Observed, ShapeError> {
        let mut secondary_ranges = Vec::new();
        // The API leaves an empty list out.
        for range in live["secondaryIpRanges"].as_array().into_iter().flatten() {
            secondary_ranges.push(SecondaryRange {
                name: live_str(KIND, range, "rangeName")?.to_string(),
                cidr: live_str(KIND, range, "ipCidrRange")?.to_string(),
            });
        }
        let spec = SubnetworkSpec {
            name: live_str(KIND, live, "name")?.to_string(),
            network: live_last(KIND, live, "network")?,
            region: live_last(KIND, live, "region")?,
            description: live["description"].as_str().unwrap_or("").to_string(),
            ip_cidr_range: live_str(KIND, live, "ipCidrRange")?.to_string(),
            secondary_ranges,
            private_ip_google_access: live["privateIpGoogleAccess"].as_bool().unwrap_or(false),
        };
        Ok(Observed {
            spec: super::to_spec(&spec),
            outputs: json!({
                "self_link": live_str(KIND, live, "selfLink")?,
                "id": live["id"],
                "gateway_address": live["gatewayAddress"],
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subnet_round_trips_and_a_range_without_a_name_is_refused() {
        let spec = SubnetworkSpec {
            name: "a3mega-subnet".into(),
            network: "a3mega-net".into(),
            region: "us-central1".into(),
            description: "Managed by a3ctl (a3ctl-blueprint=a3mega)".into(),
            ip_cidr_range: "10.0.0.0/20".into(),
            secondary_ranges: vec![SecondaryRange {
                name: "pods".into(),
                cidr: "10.4.0.0/14".into(),
            }],
            private_ip_google_access: true,
        };
        let mut live = spec.body("projects/p/global/networks/a3mega-net".into());
        live["region"] = json!("https://compute/v1/projects/p/regions/us-central1");
        live["selfLink"] = json!("s");
        let observed = SubnetworkSpec::project(&live).unwrap();
        assert_eq!(observed.spec, super::super::to_spec(&spec));
        live["secondaryIpRanges"] = json!([{"ipCidrRange": "10.4.0.0/14"}]);
        assert_eq!(
            SubnetworkSpec::project(&live).unwrap_err(),
            ShapeError::Live {
                kind: "subnetwork",
                name: "(unnamed)".into(),
                field: "rangeName"
            }
        );
    }

    #[test]
    fn urls_read_as_names_and_absent_fields_as_defaults() {
        let live = json!({
            "name": "s", "network": "https://www.googleapis.com/compute/v1/projects/p/global/networks/n",
            "region": "https://www.googleapis.com/compute/v1/projects/p/regions/us-central1",
            "ipCidrRange": "10.0.0.0/20", "description": "d", "selfLink": "x",
            "secondaryIpRanges": [{"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"}],
        });
        let o = SubnetworkSpec::project(&live).unwrap();
        assert_eq!(o.spec["network"], "n");
        assert_eq!(o.spec["region"], "us-central1");
        assert_eq!(
            o.spec["secondary_ranges"],
            json!([{"name": "pods", "cidr": "10.4.0.0/14"}])
        );
        assert_eq!(o.spec["private_ip_google_access"], false);
    }
}
