//! An Artifact Registry repository
//! (<https://cloud.google.com/artifact-registry/docs/reference/rest/v1/projects.locations.repositories>).
//! Name, location and format force a new repository (hashicorp/terraform-provider-google,
//! `google/services/artifactregistry/resource_artifact_registry_repository.go`); the description
//! and labels change with `UpdateRepository`.

use super::{ShapeError, live_str};
use crate::resource::Observed;
use crate::resource::spec::Change::{ForceNew, InPlace};
use crate::resource::spec::{f, kind_fields, labels, mark};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const KIND: &str = "repository";

/// What a3ctl declares about a repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepositorySpec {
    /// The repository id (the last segment of its name).
    pub name: String,
    /// A region or a multi-region (`us`, `europe`, `asia`).
    pub location: String,
    /// `DOCKER`, `PYTHON`, ...
    pub format: String,
    /// Carries a3ctl's ownership mark.
    pub description: String,
    /// Includes the ownership label.
    pub labels: super::Labels,
}

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::Repository,
    name: "repository",
    api: super::Api::ArtifactRegistry,
    fields: FIELDS,
    deadline_minutes: 20,
    create_latency: Some("artifactregistry.repository.create"),
    service: Some("artifactregistry.googleapis.com"),
};

kind_fields! {
    /// The fields of [`RepositorySpec`].
    pub enum RepositoryField for Repository in FIELDS {
        Name => f("name", ForceNew),
        Location => f("location", ForceNew),
        Format => f("format", ForceNew),
        Description => mark(InPlace),
        Labels => labels(),
    }
}

impl RepositorySpec {
    /// The `repository` of `CreateRepository` (the id and parent travel beside it).
    pub fn body(&self) -> Value {
        json!({
            "format": self.format,
            "description": self.description,
            "labels": self.labels,
        })
    }

    /// The `repository` and update mask of an `UpdateRepository` that changes `fields`, named
    /// `name` (its full resource name).
    pub fn patch(&self, name: &str, fields: &[RepositoryField]) -> (Value, Vec<&'static str>) {
        let mut repository = json!({"name": name});
        let mut mask = Vec::new();
        for field in fields {
            match field {
                RepositoryField::Labels => {
                    repository["labels"] = json!(self.labels);
                    mask.push("labels");
                }
                RepositoryField::Description => {
                    repository["description"] = json!(self.description);
                    mask.push("description");
                }
                // Replaced, never updated.
                RepositoryField::Name | RepositoryField::Location | RepositoryField::Format => {}
            }
        }
        (repository, mask)
    }

    /// The live repository (the API's JSON) in `location` as a spec, with its outputs.
    pub fn project(live: &Value, location: &str) -> Result<Observed, ShapeError> {
        let name = live_str(KIND, live, "name")?;
        let spec = RepositorySpec {
            name: name.rsplit('/').next().unwrap_or(name).to_string(),
            location: location.to_string(),
            format: live_str(KIND, live, "format")?.to_string(),
            description: live["description"].as_str().unwrap_or("").to_string(),
            // The API leaves out empty labels.
            labels: super::live_labels(live),
        };
        Ok(Observed {
            spec: super::to_spec(&spec),
            outputs: json!({
                "name": name,
                "registry_uri": live["registryUri"],
                "mode": live["mode"],
                "create_time": live["createTime"],
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repository_projects_its_id_and_defaults() {
        let live = json!({"name": "projects/p/locations/us-central1/repositories/training", "format": "DOCKER"});
        let o = RepositorySpec::project(&live, "us-central1").unwrap();
        assert_eq!(o.spec["name"], "training");
        assert_eq!(o.spec["description"], "");
        assert_eq!(o.spec["labels"], json!({}));
        assert_eq!(
            RepositorySpec::project(&json!({"name": "x"}), "us").unwrap_err(),
            ShapeError::Live {
                kind: "repository",
                name: "x".into(),
                field: "format"
            }
        );
        let spec: RepositorySpec = super::super::from_spec("repository", &o.spec).unwrap();
        let (body, mask) = spec.patch("full/name", &[RepositoryField::Labels]);
        assert_eq!(body, json!({"name": "full/name", "labels": {}}));
        assert_eq!(mask, ["labels"]);
    }
}
