//! A group placement policy (`compute.resourcePolicies`,
//! <https://cloud.google.com/compute/docs/reference/rest/v1/resourcePolicies>): compact placement
//! for a GPU pool. A policy cannot be changed: every field forces a new one (the API has no
//! update method).

use super::{ShapeError, live_last, live_str};
use crate::resource::Observed;
use crate::resource::spec::Change::ForceNew;
use crate::resource::spec::{f, kind_fields, mark};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const KIND: &str = "resource policy";

/// What a3ctl declares about a placement policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourcePolicySpec {
    pub name: String,
    pub region: String,
    /// `COLLOCATED` for compact placement.
    pub collocation: String,
    /// Carries a3ctl's ownership mark.
    pub description: String,
}

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::ResourcePolicy,
    name: "resource_policy",
    api: super::Api::Compute,
    fields: FIELDS,
    deadline_minutes: 20,
    create_latency: Some("compute.resourcePolicy.insert"),
    service: Some("compute.googleapis.com"),
};

kind_fields! {
    /// The fields of [`ResourcePolicySpec`]: a placement policy is never updated.
    pub enum ResourcePolicyField for ResourcePolicy in FIELDS {
        Name => f("name", ForceNew),
        Region => f("region", ForceNew),
        Collocation => f("collocation", ForceNew),
        Description => mark(ForceNew),
    }
}

impl ResourcePolicySpec {
    /// The body of `resourcePolicies.insert`.
    pub fn body(&self) -> Value {
        json!({
            "name": self.name,
            "description": self.description,
            "groupPlacementPolicy": {"collocation": self.collocation},
        })
    }

    /// The live policy (the API's JSON) as a spec, with its outputs; a policy without a group
    /// placement's collocation is not one a3ctl made.
    pub fn project(live: &Value) -> Result<Observed, ShapeError> {
        let spec = ResourcePolicySpec {
            name: live_str(KIND, live, "name")?.to_string(),
            region: live_last(KIND, live, "region")?,
            collocation: live["groupPlacementPolicy"]["collocation"]
                .as_str()
                .ok_or_else(|| ShapeError::Live {
                    kind: KIND,
                    name: live["name"].as_str().unwrap_or("(unnamed)").to_string(),
                    field: "groupPlacementPolicy.collocation",
                })?
                .to_string(),
            description: live["description"].as_str().unwrap_or("").to_string(),
        };
        Ok(Observed {
            spec: super::to_spec(&spec),
            outputs: json!({
                "self_link": live_str(KIND, live, "selfLink")?,
                "id": live["id"],
                "status": live["status"],
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_round_trips_and_one_without_collocation_is_refused() {
        let spec = ResourcePolicySpec {
            name: "a3mega-a3mega-placement".into(),
            region: "us-central1".into(),
            collocation: "COLLOCATED".into(),
            description: "Managed by a3ctl (a3ctl-blueprint=a3mega)".into(),
        };
        let mut live = spec.body();
        live["region"] = json!("https://compute/v1/projects/p/regions/us-central1");
        live["selfLink"] = json!("s");
        live["status"] = json!("READY");
        let observed = ResourcePolicySpec::project(&live).unwrap();
        assert_eq!(observed.spec, super::super::to_spec(&spec));
        assert_eq!(observed.outputs["status"], "READY");
        live["groupPlacementPolicy"] = json!({});
        assert_eq!(
            ResourcePolicySpec::project(&live).unwrap_err(),
            ShapeError::Live {
                kind: "resource policy",
                name: "a3mega-a3mega-placement".into(),
                field: "groupPlacementPolicy.collocation"
            }
        );
    }
}
