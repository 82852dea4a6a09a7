//! VPC firewall rules. Every field a3ctl manages besides name, network and direction changes with
//! one PATCH.

use super::{ComputeAdapter, Loc, found, gax, to_json, to_model};
use crate::cloud::{CloudResult, Target, UpdateStep};
use crate::resource::Observed;
use crate::resource::kinds::firewall::FirewallSpec;
use crate::resource::kinds::from_spec;
use google_cloud_compute_v1::model::{self, Firewall};

impl ComputeAdapter {
    pub(super) async fn read_firewall(&self, loc: &Loc) -> CloudResult<Option<Observed>> {
        let live = found(
            self.firewalls
                .get()
                .set_project(&loc.project)
                .set_firewall(&loc.name)
                .send()
                .await,
        )?;
        Ok(live
            .map(|f| FirewallSpec::project(&to_json(&f)))
            .transpose()?)
    }

    pub(super) async fn create_firewall(
        &self,
        loc: &Loc,
        target: &Target,
        request_id: String,
    ) -> CloudResult<model::Operation> {
        let spec: FirewallSpec = from_spec("firewall", &target.spec)?;
        let body: Firewall = to_model(spec.body(loc.network_ref(&spec.network)))?;
        gax(self
            .firewalls
            .insert()
            .set_project(&loc.project)
            .set_body(body)
            .set_request_id(request_id)
            .send()
            .await)
    }

    pub(super) async fn update_firewall(
        &self,
        loc: &Loc,
        target: &Target,
        step: &UpdateStep,
        request_id: String,
    ) -> CloudResult<model::Operation> {
        let spec: FirewallSpec = from_spec("firewall", &target.spec)?;
        let body: Firewall = to_model(spec.patch(&step.fields_of()?))?;
        gax(self
            .firewalls
            .patch()
            .set_project(&loc.project)
            .set_firewall(&loc.name)
            .set_body(body)
            .set_request_id(request_id)
            .send()
            .await)
    }
}
