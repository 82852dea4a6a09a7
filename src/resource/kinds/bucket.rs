//! A Cloud Storage bucket (<https://cloud.google.com/storage/docs/json_api/v1/buckets>). Name,
//! location and hierarchical namespace are fixed at creation
//! (<https://cloud.google.com/storage/docs/hns-overview>); the storage class, uniform access,
//! versioning and labels change with one PATCH.

use super::{ShapeError, live_str};
use crate::resource::Observed;
use crate::resource::spec::Change::{ForceNew, InPlace};
use crate::resource::spec::{f, kind_fields, labels};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

const KIND: &str = "bucket";

/// What a3ctl declares about a bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BucketSpec {
    pub name: String,
    /// Upper case, as Cloud Storage reports it (`US-CENTRAL1`).
    pub location: String,
    pub storage_class: String,
    pub uniform_access: bool,
    pub hierarchical_namespace: bool,
    pub versioning: bool,
    /// Includes the ownership label.
    pub labels: super::Labels,
}

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::Bucket,
    name: "bucket",
    api: super::Api::Storage,
    fields: FIELDS,
    deadline_minutes: 10,
    create_latency: None,
    // The JSON API a3ctl calls: a disabled one answers "Cloud Storage JSON API has not been used
    // in project … before or it is disabled" for `storage-api.googleapis.com`.
    service: Some("storage-api.googleapis.com"),
};

kind_fields! {
    /// The fields of [`BucketSpec`].
    pub enum BucketField for Bucket in FIELDS {
        Name => f("name", ForceNew),
        Location => f("location", ForceNew),
        HierarchicalNamespace => f("hierarchical_namespace", ForceNew),
        StorageClass => f("storage_class", InPlace),
        UniformAccess => f("uniform_access", InPlace),
        Versioning => f("versioning", InPlace),
        Labels => labels(),
    }
}

impl BucketSpec {
    /// The body of `buckets.insert`.
    pub fn body(&self) -> Value {
        let mut body = json!({
            "name": self.name,
            "location": self.location,
            "storageClass": self.storage_class,
            "iamConfiguration": {"uniformBucketLevelAccess": {"enabled": self.uniform_access}},
            "versioning": {"enabled": self.versioning},
            "labels": self.labels,
        });
        if self.hierarchical_namespace {
            body["hierarchicalNamespace"] = json!({"enabled": true});
        }
        body
    }

    /// The body of a `buckets.patch` that changes `fields`. PATCH merges label keys, so the live
    /// labels this spec does not have are sent as null to remove them.
    pub fn patch(&self, fields: &[BucketField], live_labels: Option<&super::Labels>) -> Value {
        let full = self.body();
        let mut body = Map::new();
        for field in fields {
            let (key, value) = match field {
                BucketField::StorageClass => ("storageClass", full["storageClass"].clone()),
                BucketField::UniformAccess => {
                    ("iamConfiguration", full["iamConfiguration"].clone())
                }
                BucketField::Versioning => ("versioning", full["versioning"].clone()),
                BucketField::Labels => {
                    let mut labels: Map<String, Value> = self
                        .labels
                        .iter()
                        .map(|(k, v)| (k.clone(), json!(v)))
                        .collect();
                    for key in live_labels.into_iter().flat_map(|l| l.keys()) {
                        labels.entry(key.clone()).or_insert(Value::Null);
                    }
                    ("labels", Value::Object(labels))
                }
                // Replaced, never patched.
                BucketField::Name | BucketField::Location | BucketField::HierarchicalNamespace => {
                    continue;
                }
            };
            body.insert(key.into(), value);
        }
        Value::Object(body)
    }

    /// The live bucket (the API's JSON) as a spec, with its outputs. Absent settings read as
    /// off; a bucket without a name or location is an error.
    pub fn project(live: &Value) -> Result<Observed, ShapeError> {
        let name = live_str(KIND, live, "name")?;
        let spec = BucketSpec {
            name: name.to_string(),
            location: live_str(KIND, live, "location")?.to_ascii_uppercase(),
            storage_class: live_str(KIND, live, "storageClass")?.to_string(),
            uniform_access: live["iamConfiguration"]["uniformBucketLevelAccess"]["enabled"]
                .as_bool()
                .unwrap_or(false),
            hierarchical_namespace: live["hierarchicalNamespace"]["enabled"]
                .as_bool()
                .unwrap_or(false),
            versioning: live["versioning"]["enabled"].as_bool().unwrap_or(false),
            // The API leaves out empty labels.
            labels: super::live_labels(live),
        };
        Ok(Observed {
            spec: super::to_spec(&spec),
            outputs: json!({
                "self_link": live["selfLink"],
                "url": format!("gs://{name}"),
                "location_type": live["locationType"],
                "project_number": live["projectNumber"],
                "time_created": live["timeCreated"],
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_reads_back_as_its_spec_and_patches_drop_old_labels() {
        let spec = BucketSpec {
            name: "b".into(),
            location: "US-CENTRAL1".into(),
            storage_class: "STANDARD".into(),
            uniform_access: true,
            hierarchical_namespace: true,
            versioning: false,
            labels: [("a3ctl-blueprint".to_string(), "x".to_string())]
                .into_iter()
                .collect(),
        };
        let mut live = spec.body();
        live["locationType"] = json!("region");
        live["location"] = json!("us-central1");
        assert_eq!(
            BucketSpec::project(&live).unwrap().spec,
            super::super::to_spec(&spec)
        );
        let old: super::super::Labels = [("team".to_string(), "a".to_string())]
            .into_iter()
            .collect();
        assert_eq!(
            spec.patch(&[BucketField::Labels, BucketField::Versioning], Some(&old)),
            json!({"labels": {"a3ctl-blueprint": "x", "team": null}, "versioning": {"enabled": false}})
        );
        live.as_object_mut().unwrap().remove("storageClass");
        assert!(BucketSpec::project(&live).is_err());
    }
}
