//! Cloud Routers with their Cloud NAT, and group placement (resource) policies.
//!
//! The router is created with its NAT inline in `nats[]`. A changed NAT is written back with a
//! PATCH of the router's `nats[]` (keeping the settings a3ctl does not manage); removing the NAT
//! uses PUT, because an empty list would be left out of a PATCH body. Resource policies cannot
//! change: every field forces a new policy.

use super::{ComputeAdapter, Loc, found, gax, last_segment, text, to_json, to_model};
use crate::cloud::{CloudError, CloudResult, ErrorClass, Target, UpdateStep};
use crate::resource::Observed;
use crate::resource::kinds::from_spec;
use crate::resource::kinds::resource_policy::ResourcePolicySpec;
use google_cloud_compute_v1::model::{self, ResourcePolicy, Router};
use serde_json::{Value, json};

/// The spec's `nat` → the API's NAT gateway, on top of `current` (the live one, if any).
fn nat_body(nat: &Value, current: Option<&Value>) -> Value {
    let mut body = current.cloned().unwrap_or_else(|| json!({}));
    body["name"] = nat["name"].clone();
    body["natIpAllocateOption"] = nat["ip_allocation"].clone();
    body["sourceSubnetworkIpRangesToNat"] = nat["source_ranges"].clone();
    body
}

fn router_body(loc: &Loc, spec: &Value) -> Value {
    let mut body = json!({
        "name": spec["name"],
        "description": spec["description"],
        "network": loc.network_ref(spec["network"].as_str().unwrap_or_default()),
    });
    if spec["nat"].is_object() {
        body["nats"] = json!([nat_body(&spec["nat"], None)]);
    }
    body
}

/// Live router → spec fields (`nat`: the first NAT gateway, or null) and outputs.
pub(crate) fn project_router(live: &Value) -> Observed {
    let nat = live["nats"]
        .as_array()
        .and_then(|n| n.first())
        .map(|n| {
            json!({
                "name": n["name"],
                "ip_allocation": n["natIpAllocateOption"],
                "source_ranges": n["sourceSubnetworkIpRangesToNat"],
            })
        })
        .unwrap_or(Value::Null);
    Observed {
        spec: json!({
            "name": live["name"],
            "network": last_segment(&text(live, "network")),
            "region": last_segment(&text(live, "region")),
            "description": text(live, "description"),
            "nat": nat,
        }),
        outputs: json!({
            "self_link": live["selfLink"],
            "id": live["id"],
        }),
    }
}

impl ComputeAdapter {
    async fn get_router(&self, loc: &Loc) -> CloudResult<Option<Router>> {
        found(
            self.routers
                .get()
                .set_project(&loc.project)
                .set_region(loc.region()?)
                .set_router(&loc.name)
                .send()
                .await,
        )
    }

    pub(super) async fn read_router(&self, loc: &Loc) -> CloudResult<Option<Observed>> {
        Ok(self
            .get_router(loc)
            .await?
            .map(|r| project_router(&to_json(&r))))
    }

    pub(super) async fn create_router(
        &self,
        loc: &Loc,
        target: &Target,
        request_id: String,
    ) -> CloudResult<model::Operation> {
        let body: Router = to_model(router_body(loc, &target.spec))?;
        gax(self
            .routers
            .insert()
            .set_project(&loc.project)
            .set_region(loc.region()?)
            .set_body(body)
            .set_request_id(request_id)
            .send()
            .await)
    }

    pub(super) async fn update_router(
        &self,
        loc: &Loc,
        target: &Target,
        step: &UpdateStep,
        request_id: String,
    ) -> CloudResult<model::Operation> {
        if !step.fields.iter().any(|f| f == "nat") {
            return Err(super::no_update(target, step));
        }
        let current = self.get_router(loc).await?.ok_or_else(|| {
            CloudError::new(
                ErrorClass::NotFound,
                format!("router `{}` does not exist", loc.name),
            )
        })?;
        let region = loc.region()?;
        let desired = &target.spec["nat"];
        if !desired.is_object() {
            // Without a NAT: PUT the router as it is, minus its gateways.
            let mut body = current;
            body.nats.clear();
            return gax(self
                .routers
                .update()
                .set_project(&loc.project)
                .set_region(region)
                .set_router(&loc.name)
                .set_body(body)
                .set_request_id(request_id)
                .send()
                .await);
        }
        let live = to_json(&current);
        let same_name = live["nats"]
            .as_array()
            .and_then(|n| n.iter().find(|n| n["name"] == desired["name"]));
        let body: Router = to_model(json!({"nats": [nat_body(desired, same_name)]}))?;
        gax(self
            .routers
            .patch()
            .set_project(&loc.project)
            .set_region(region)
            .set_router(&loc.name)
            .set_body(body)
            .set_request_id(request_id)
            .send()
            .await)
    }

    pub(super) async fn read_policy(&self, loc: &Loc) -> CloudResult<Option<Observed>> {
        let live = found(
            self.policies
                .get()
                .set_project(&loc.project)
                .set_region(loc.region()?)
                .set_resource_policy(&loc.name)
                .send()
                .await,
        )?;
        Ok(live
            .map(|p| ResourcePolicySpec::project(&to_json(&p)))
            .transpose()?)
    }

    pub(super) async fn create_policy(
        &self,
        loc: &Loc,
        target: &Target,
        request_id: String,
    ) -> CloudResult<model::Operation> {
        let spec: ResourcePolicySpec = from_spec("resource policy", &target.spec)?;
        let body: ResourcePolicy = to_model(spec.body())?;
        gax(self
            .policies
            .insert()
            .set_project(&loc.project)
            .set_region(loc.region()?)
            .set_body(body)
            .set_request_id(request_id)
            .send()
            .await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nat_is_projected_from_the_first_gateway() {
        let spec_nat = json!({"name": "n", "ip_allocation": "AUTO_ONLY",
                              "source_ranges": "ALL_SUBNETWORKS_ALL_IP_RANGES"});
        let live = json!({"name": "r", "nats": [nat_body(&spec_nat, Some(&json!({"logConfig": {}})))],
                          "network": "https://x/projects/p/global/networks/net",
                          "region": "https://x/projects/p/regions/us-central1"});
        let o = project_router(&live);
        assert_eq!(o.spec["nat"], spec_nat);
        assert_eq!(o.spec["region"], "us-central1");
        assert_eq!(project_router(&json!({})).spec["nat"], Value::Null);
    }
}
