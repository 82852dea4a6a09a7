//! VPC networks and subnetworks.
//!
//! Networks: `mtu` and `routingConfig.routingMode` change with PATCH. Subnetworks: the primary
//! range grows with `expandIpCidrRange`; secondary ranges and Private Google Access change with a
//! PATCH that must carry the current `fingerprint` (read just before; a 412 means someone changed
//! the subnetwork in between, and the call is retried once with the new fingerprint).

use super::{ComputeAdapter, Loc, found, gax, to_json, to_model};
use crate::cloud::{CloudError, CloudResult, ErrorClass, Target, UpdateStep};
use crate::resource::Observed;
use crate::resource::kinds::from_spec;
use crate::resource::kinds::network::NetworkSpec;
use crate::resource::kinds::subnetwork::{SubnetworkField, SubnetworkSpec};
use google_cloud_compute_v1::model::{self, Network, Subnetwork};
use serde_json::{Map, Value, json};

impl ComputeAdapter {
    pub(super) async fn read_network(&self, loc: &Loc) -> CloudResult<Option<Observed>> {
        let live = found(
            self.networks
                .get()
                .set_project(&loc.project)
                .set_network(&loc.name)
                .send()
                .await,
        )?;
        Ok(live
            .map(|n| NetworkSpec::project(&to_json(&n)))
            .transpose()?)
    }

    pub(super) async fn create_network(
        &self,
        loc: &Loc,
        target: &Target,
        request_id: String,
    ) -> CloudResult<model::Operation> {
        let spec: NetworkSpec = from_spec("network", &target.spec)?;
        let body: Network = to_model(spec.body())?;
        gax(self
            .networks
            .insert()
            .set_project(&loc.project)
            .set_body(body)
            .set_request_id(request_id)
            .send()
            .await)
    }

    pub(super) async fn update_network(
        &self,
        loc: &Loc,
        target: &Target,
        step: &UpdateStep,
        request_id: String,
    ) -> CloudResult<model::Operation> {
        let spec: NetworkSpec = from_spec("network", &target.spec)?;
        let body: Network = to_model(spec.patch(&step.fields_of()?))?;
        gax(self
            .networks
            .patch()
            .set_project(&loc.project)
            .set_network(&loc.name)
            .set_body(body)
            .set_request_id(request_id)
            .send()
            .await)
    }

    async fn get_subnetwork(&self, loc: &Loc) -> CloudResult<Option<Subnetwork>> {
        found(
            self.subnetworks
                .get()
                .set_project(&loc.project)
                .set_region(loc.region()?)
                .set_subnetwork(&loc.name)
                .send()
                .await,
        )
    }

    pub(super) async fn read_subnetwork(&self, loc: &Loc) -> CloudResult<Option<Observed>> {
        Ok(self
            .get_subnetwork(loc)
            .await?
            .map(|s| SubnetworkSpec::project(&to_json(&s)))
            .transpose()?)
    }

    pub(super) async fn create_subnetwork(
        &self,
        loc: &Loc,
        target: &Target,
        request_id: String,
    ) -> CloudResult<model::Operation> {
        let spec: SubnetworkSpec = from_spec("subnetwork", &target.spec)?;
        let body: Subnetwork = to_model(spec.body(loc.network_ref(&spec.network)))?;
        gax(self
            .subnetworks
            .insert()
            .set_project(&loc.project)
            .set_region(loc.region()?)
            .set_body(body)
            .set_request_id(request_id)
            .send()
            .await)
    }

    pub(super) async fn update_subnetwork(
        &self,
        loc: &Loc,
        target: &Target,
        step: &UpdateStep,
        request_id: String,
    ) -> CloudResult<model::Operation> {
        let spec: SubnetworkSpec = from_spec("subnetwork", &target.spec)?;
        if step.name == "expandIpCidrRange" {
            let body: model::SubnetworksExpandIpCidrRangeRequest =
                to_model(json!({"ipCidrRange": spec.ip_cidr_range}))?;
            return gax(self
                .subnetworks
                .expand_ip_cidr_range()
                .set_project(&loc.project)
                .set_region(loc.region()?)
                .set_subnetwork(&loc.name)
                .set_body(body)
                .set_request_id(request_id)
                .send()
                .await);
        }
        let mut patch = Map::new();
        for field in step.fields_of::<SubnetworkField>()? {
            match field {
                SubnetworkField::SecondaryRanges => {
                    let ranges = spec.secondary_body();
                    if ranges.is_empty() {
                        // The client leaves an empty list out of the body, which PATCH reads as
                        // "unchanged".
                        return Err(CloudError::new(
                            ErrorClass::Invalid,
                            format!(
                                "cannot remove every secondary range of `{}` in place",
                                loc.name
                            ),
                        )
                        .with_hint("remove them with `gcloud compute networks subnets update --remove-secondary-ranges`, or keep one"));
                    }
                    patch.insert("secondaryIpRanges".into(), Value::Array(ranges));
                }
                SubnetworkField::PrivateIpGoogleAccess => {
                    patch.insert(
                        "privateIpGoogleAccess".into(),
                        json!(spec.private_ip_google_access),
                    );
                }
                // `expandIpCidrRange` above; the rest are replaced, or never differ (the mark).
                SubnetworkField::IpCidrRange
                | SubnetworkField::Name
                | SubnetworkField::Network
                | SubnetworkField::Region
                | SubnetworkField::Description => {}
            }
        }
        // PATCH needs the current fingerprint; retry once if it moved under us.
        let mut request_id = request_id;
        let mut attempt = 0;
        loop {
            let current = self.get_subnetwork(loc).await?.ok_or_else(|| {
                CloudError::new(
                    ErrorClass::NotFound,
                    format!("subnetwork `{}` does not exist", loc.name),
                )
            })?;
            let mut body: Subnetwork = to_model(Value::Object(patch.clone()))?;
            body.fingerprint = current.fingerprint.clone();
            let result = gax(self
                .subnetworks
                .patch()
                .set_project(&loc.project)
                .set_region(loc.region()?)
                .set_subnetwork(&loc.name)
                .set_body(body)
                .set_request_id(request_id.clone())
                .send()
                .await);
            match result {
                Err(e) if e.class == ErrorClass::Conflict && attempt == 0 => {
                    attempt += 1;
                    request_id = uuid::Uuid::new_v4().to_string();
                }
                other => return other,
            }
        }
    }
}
