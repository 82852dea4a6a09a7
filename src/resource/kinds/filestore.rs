//! A Filestore instance (<https://cloud.google.com/filestore/docs/reference/rest/v1/projects.locations.instances>).
//! Name, location, tier, share name and network force a new instance
//! (hashicorp/terraform-provider-google, `google/services/filestore/resource_filestore_instance.go`);
//! the share's capacity only grows in place
//! (<https://cloud.google.com/filestore/docs/editing-instances>), labels change with a PATCH.

use super::{ShapeError, live_last, live_str};
use crate::resource::Observed;
use crate::resource::spec::Change::{ForceNew, GrowOnly, InPlace};
use crate::resource::spec::{f, kind_fields, labels};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const KIND: &str = "Filestore instance";

/// What a3ctl declares about an instance: one share on one network.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilestoreSpec {
    /// The instance id (the last segment of its name).
    pub name: String,
    /// A zone or a region, as the tier requires.
    pub location: String,
    /// `BASIC_HDD`, `BASIC_SSD`, `ZONAL`, `REGIONAL`, ...
    pub tier: String,
    pub capacity_gb: u64,
    /// The file share's name.
    pub share: String,
    /// The network's name.
    pub network: String,
    /// Includes the ownership label.
    pub labels: super::Labels,
    /// Filestore's own `deletionProtectionEnabled`: the API refuses to delete the instance while
    /// it is on (<https://cloud.google.com/filestore/docs/deletion-protection>). Follows the
    /// blueprint's `[cluster] deletion_protection`; a record from before it existed holds `false`.
    #[serde(default)]
    pub deletion_protection: bool,
}

/// Why a3ctl turned deletion protection on, as the instance shows it.
pub const DELETION_PROTECTION_REASON: &str =
    "a3ctl: [cluster] deletion_protection of the blueprint";

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::Filestore,
    name: "filestore",
    api: super::Api::Filestore,
    fields: FIELDS,
    deadline_minutes: 120,
    create_latency: Some("file.instance.create"),
    service: Some("file.googleapis.com"),
};

kind_fields! {
    /// The fields of [`FilestoreSpec`].
    pub enum FilestoreField for Filestore in FIELDS {
        Name => f("name", ForceNew),
        Location => f("location", ForceNew),
        Tier => f("tier", ForceNew),
        Share => f("share", ForceNew),
        Network => f("network", ForceNew),
        CapacityGb => f("capacity_gb", GrowOnly),
        Labels => labels(),
        DeletionProtection => f("deletion_protection", InPlace),
    }
}

/// An int64 in the API's JSON: a string (proto3 JSON) or, from some clients, a number.
fn int64(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_str()?.parse().ok())
}

impl FilestoreSpec {
    /// The `Instance` of `CreateInstance` (its name comes from `instance_id`).
    pub fn body(&self) -> Value {
        json!({
            "tier": self.tier,
            "fileShares": [self.share_body()],
            "networks": [{"network": self.network, "modes": ["MODE_IPV4"]}],
            "labels": self.labels,
            "deletionProtectionEnabled": self.deletion_protection,
            "deletionProtectionReason": self.protection_reason(),
        })
    }

    /// `deletionProtectionReason`: a3ctl's when protection is on, empty otherwise.
    pub fn protection_reason(&self) -> &'static str {
        if self.deletion_protection {
            DELETION_PROTECTION_REASON
        } else {
            ""
        }
    }

    /// The one file share, as `fileShares[]` holds it.
    pub fn share_body(&self) -> Value {
        json!({"name": self.share, "capacityGb": self.capacity_gb.to_string()})
    }

    /// The live instance (the API's JSON) in `location` as a spec, with its outputs: the share's
    /// IP address (what the Kubernetes volume mounts), state and status message.
    pub fn project(live: &Value, location: &str) -> Result<Observed, ShapeError> {
        let missing = |field| ShapeError::Live {
            kind: KIND,
            name: live["name"].as_str().unwrap_or("(unnamed)").to_string(),
            field,
        };
        let share = live["fileShares"]
            .get(0)
            .ok_or_else(|| missing("fileShares"))?;
        let network = live["networks"].get(0).ok_or_else(|| missing("networks"))?;
        let spec = FilestoreSpec {
            name: live_last(KIND, live, "name")?,
            location: location.to_string(),
            tier: live_str(KIND, live, "tier")?.to_string(),
            capacity_gb: int64(&share["capacityGb"]).ok_or_else(|| missing("capacityGb"))?,
            share: live_str(KIND, share, "name")?.to_string(),
            network: live_last(KIND, network, "network")?,
            // The API leaves out empty labels.
            labels: super::live_labels(live),
            // Left out when false.
            deletion_protection: live["deletionProtectionEnabled"] == true,
        };
        Ok(Observed {
            spec: super::to_spec(&spec),
            outputs: json!({
                // Assigned once the instance is READY; empty while it is being created.
                "ip_address": network["ipAddresses"].get(0).and_then(Value::as_str).unwrap_or(""),
                "share": spec.share,
                "state": live["state"].as_str().unwrap_or("STATE_UNSPECIFIED"),
                "status_message": live["statusMessage"].as_str().unwrap_or(""),
                "create_time": live["createTime"],
                "name": live_str(KIND, live, "name")?,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instance_round_trips_and_one_without_its_share_is_refused() {
        let spec = FilestoreSpec {
            name: "a3mega-fs".into(),
            location: "us-central1-a".into(),
            tier: "BASIC_SSD".into(),
            capacity_gb: 2560,
            share: "nfsshare".into(),
            network: "a3mega-net".into(),
            labels: crate::resource::kinds::Labels::new(),
            deletion_protection: true,
        };
        let mut live = spec.body();
        live["name"] = json!("projects/p/locations/us-central1-a/instances/a3mega-fs");
        live["networks"][0]["ipAddresses"] = json!(["10.0.0.2"]);
        live["state"] = json!("READY");
        let observed = FilestoreSpec::project(&live, "us-central1-a").unwrap();
        assert_eq!(observed.spec, super::super::to_spec(&spec));
        assert_eq!(observed.outputs["ip_address"], "10.0.0.2");
        live["fileShares"][0]["capacityGb"] = json!(2560);
        assert!(FilestoreSpec::project(&live, "us-central1-a").is_ok());
        live["fileShares"] = json!([]);
        assert_eq!(
            FilestoreSpec::project(&live, "us-central1-a").unwrap_err(),
            ShapeError::Live {
                kind: "Filestore instance",
                name: "projects/p/locations/us-central1-a/instances/a3mega-fs".into(),
                field: "fileShares"
            }
        );
    }
}
