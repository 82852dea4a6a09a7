//! VPC networks and subnetworks.
//!
//! Networks: `mtu` and `routingConfig.routingMode` change with PATCH. Subnetworks: the primary
//! range grows with `expandIpCidrRange`; secondary ranges and Private Google Access change with a
//! PATCH that must carry the current `fingerprint` (read just before; a 412 means someone changed
//! the subnetwork in between, and the call is retried once with the new fingerprint).

use super::{ComputeAdapter, Loc, found, gax, last_segment, text, to_json, to_model};
use crate::cloud::{CloudError, CloudResult, ErrorClass, Target, UpdateStep};
use crate::resource::Observed;
use crate::resource::kinds::from_spec;
use crate::resource::kinds::network::NetworkSpec;
use google_cloud_compute_v1::model::{self, Network, Subnetwork};
use serde_json::{Map, Value, json};

/// Subnetwork spec → API body.
fn subnetwork_body(loc: &Loc, spec: &Value) -> Value {
    json!({
        "name": spec["name"],
        "description": spec["description"],
        "network": loc.network_ref(spec["network"].as_str().unwrap_or_default()),
        "ipCidrRange": spec["ip_cidr_range"],
        "secondaryIpRanges": secondary_ranges(spec),
        "privateIpGoogleAccess": spec["private_ip_google_access"].as_bool().unwrap_or(false),
    })
}

fn secondary_ranges(spec: &Value) -> Vec<Value> {
    spec["secondary_ranges"]
        .as_array()
        .map(|ranges| {
            ranges
                .iter()
                .map(|r| json!({"rangeName": r["name"], "ipCidrRange": r["cidr"]}))
                .collect()
        })
        .unwrap_or_default()
}

/// Live subnetwork → spec fields and outputs. Secondary ranges keep the API's order, which is the
/// order they were given in (the graph's).
pub(crate) fn project_subnetwork(live: &Value) -> Observed {
    let secondary: Vec<Value> = live["secondaryIpRanges"]
        .as_array()
        .map(|ranges| {
            ranges
                .iter()
                .map(|r| json!({"name": r["rangeName"], "cidr": r["ipCidrRange"]}))
                .collect()
        })
        .unwrap_or_default();
    Observed {
        spec: json!({
            "name": live["name"],
            "network": last_segment(&text(live, "network")),
            "region": last_segment(&text(live, "region")),
            "description": text(live, "description"),
            "ip_cidr_range": live["ipCidrRange"],
            "secondary_ranges": secondary,
            "private_ip_google_access": live["privateIpGoogleAccess"].as_bool().unwrap_or(false),
        }),
        outputs: json!({
            "self_link": live["selfLink"],
            "id": live["id"],
            "gateway_address": live["gatewayAddress"],
        }),
    }
}

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
        let body: Network = to_model(spec.patch(&step.fields))?;
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
            .map(|s| project_subnetwork(&to_json(&s))))
    }

    pub(super) async fn create_subnetwork(
        &self,
        loc: &Loc,
        target: &Target,
        request_id: String,
    ) -> CloudResult<model::Operation> {
        let body: Subnetwork = to_model(subnetwork_body(loc, &target.spec))?;
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
        if step.name == "expandIpCidrRange" {
            let body: model::SubnetworksExpandIpCidrRangeRequest =
                to_model(json!({"ipCidrRange": target.spec["ip_cidr_range"]}))?;
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
        for field in &step.fields {
            match field.as_str() {
                "secondary_ranges" => {
                    let ranges = secondary_ranges(&target.spec);
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
                "private_ip_google_access" => {
                    patch.insert(
                        "privateIpGoogleAccess".into(),
                        json!(
                            target.spec["private_ip_google_access"]
                                .as_bool()
                                .unwrap_or(false)
                        ),
                    );
                }
                _ => {}
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subnetwork_projection_uses_names_and_the_graph_shapes() {
        let live = json!({
            "name": "s", "network": "https://www.googleapis.com/compute/v1/projects/p/global/networks/n",
            "region": "https://www.googleapis.com/compute/v1/projects/p/regions/us-central1",
            "ipCidrRange": "10.0.0.0/20", "description": "d",
            "secondaryIpRanges": [{"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"}],
        });
        let o = project_subnetwork(&live);
        assert_eq!(o.spec["network"], "n");
        assert_eq!(o.spec["region"], "us-central1");
        assert_eq!(
            o.spec["secondary_ranges"],
            json!([{"name": "pods", "cidr": "10.4.0.0/14"}])
        );
        assert_eq!(o.spec["private_ip_google_access"], false);
    }
}
