//! Cloud Routers with their Cloud NAT, and group placement (resource) policies.
//!
//! The router is created with its NAT inline in `nats[]`. A changed NAT is written back with a
//! PATCH of the router's `nats[]` (keeping the settings a3ctl does not manage); removing the NAT
//! uses PUT, because an empty list would be left out of a PATCH body. Resource policies cannot
//! change: every field forces a new policy.

use super::{ComputeAdapter, Loc, found, gax, to_json, to_model};
use crate::cloud::{CloudError, CloudResult, ErrorClass, Target, UpdateStep};
use crate::resource::Observed;
use crate::resource::kinds::from_spec;
use crate::resource::kinds::resource_policy::ResourcePolicySpec;
use crate::resource::kinds::router::{RouterField, RouterSpec};
use google_cloud_compute_v1::model::{self, ResourcePolicy, Router};
use serde_json::json;

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
            .map(|r| RouterSpec::project(&to_json(&r)))
            .transpose()?)
    }

    pub(super) async fn create_router(
        &self,
        loc: &Loc,
        target: &Target,
        request_id: String,
    ) -> CloudResult<model::Operation> {
        let spec: RouterSpec = from_spec("router", &target.spec)?;
        let body: Router = to_model(spec.body(loc.network_ref(&spec.network)))?;
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
        if !step.changes(RouterField::Nat) {
            return Err(super::no_update(target, step));
        }
        let current = self.get_router(loc).await?.ok_or_else(|| {
            CloudError::new(
                ErrorClass::NotFound,
                format!("router `{}` does not exist", loc.name),
            )
        })?;
        let region = loc.region()?;
        let spec: RouterSpec = from_spec("router", &target.spec)?;
        let Some(desired) = &spec.nat else {
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
        };
        let live = to_json(&current);
        let same_name = live["nats"]
            .as_array()
            .and_then(|n| n.iter().find(|n| n["name"] == desired.name.as_str()));
        let body: Router = to_model(json!({"nats": [desired.body(same_name)]}))?;
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
