//! A Google API of a project (Service Usage `services`,
//! <https://cloud.google.com/service-usage/docs/reference/rest/v1/services>): whether it is
//! enabled. Every call to a disabled API fails with `403 SERVICE_DISABLED`, so preflight reads the
//! services a plan calls before anything is created. With `enable_services = true` the blueprint's
//! graph has one per API it calls, enabled before anything that calls it and never disabled.

use super::{ShapeError, live_str};
use crate::resource::Observed;
use crate::resource::spec::Change::{ForceNew, InPlace};
use crate::resource::spec::{f, kind_fields};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const KIND: &str = "service";

/// What a3ctl knows about a service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceSpec {
    /// `compute.googleapis.com`.
    pub name: String,
    pub enabled: bool,
}

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::Service,
    name: "service",
    api: super::Api::ServiceUsage,
    fields: FIELDS,
    deadline_minutes: 10,
    create_latency: Some("serviceusage.service.enable"),
    service: Some("serviceusage.googleapis.com"),
};

kind_fields! {
    /// The fields of [`ServiceSpec`].
    pub enum ServiceField for Service in FIELDS {
        Name => f("name", ForceNew),
        Enabled => f("enabled", InPlace),
    }
}

impl ServiceSpec {
    /// The live service (`projects/NUMBER/services/NAME` with `state` and `config.name`) as a
    /// spec. A service without a name or state is an error.
    pub fn project(live: &Value) -> Result<Observed, ShapeError> {
        let name = live_str(KIND, live, "name")?;
        let state = live_str(KIND, live, "state")?;
        let spec = ServiceSpec {
            name: name.rsplit('/').next().unwrap_or(name).to_string(),
            enabled: state == "ENABLED",
        };
        Ok(Observed {
            spec: super::to_spec(&spec),
            outputs: json!({"state": state, "parent": live["parent"]}),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_reads_as_enabled_or_not() {
        let live = json!({"name": "projects/123/services/file.googleapis.com", "state": "DISABLED",
            "parent": "projects/123"});
        let observed = ServiceSpec::project(&live).unwrap();
        assert_eq!(
            observed.spec,
            json!({"name": "file.googleapis.com", "enabled": false})
        );
        assert_eq!(
            ServiceSpec::project(&json!({"name": "x"}))
                .unwrap_err()
                .to_string(),
            "the service `x` the API returned has no `state`"
        );
    }
}
