//! An IAM service account (<https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts>):
//! the identity a3ctl's node pools run as. Its account id forces a new account (IAM cannot rename
//! one); the display name and description change with `PATCH`
//! (hashicorp/terraform-provider-google `resource_google_service_account.go`: `account_id`
//! ForceNew, `display_name` and `description` updatable). The description carries a3ctl's
//! ownership mark, as Compute resources do, since service accounts have no labels.

use super::{ShapeError, live_str};
use crate::resource::Observed;
use crate::resource::spec::Change::{ForceNew, InPlace};
use crate::resource::spec::{f, kind_fields, mark};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const KIND: &str = "service account";

/// What a3ctl declares about a service account.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceAccountSpec {
    /// The part of the email before `@` (6–30 characters).
    pub account_id: String,
    pub display_name: String,
    /// Carries a3ctl's ownership mark.
    pub description: String,
}

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::ServiceAccount,
    name: "service_account",
    api: super::Api::Iam,
    fields: FIELDS,
    deadline_minutes: 5,
    create_latency: Some("iam.serviceAccount.create"),
    service: Some("iam.googleapis.com"),
};

kind_fields! {
    /// The fields of [`ServiceAccountSpec`].
    pub enum ServiceAccountField for ServiceAccount in FIELDS {
        AccountId => f("account_id", ForceNew),
        DisplayName => f("display_name", InPlace),
        Description => mark(InPlace),
    }
}

/// `ID@PROJECT.iam.gserviceaccount.com`, the email IAM gives an account made in `project`.
pub fn email(account_id: &str, project: &str) -> String {
    format!("{account_id}@{project}.iam.gserviceaccount.com")
}

impl ServiceAccountSpec {
    /// A live `ServiceAccount` as a spec; one without an email is an error.
    pub fn project(live: &Value) -> Result<Observed, ShapeError> {
        let email = live_str(KIND, live, "email")?;
        let account_id = email.split('@').next().unwrap_or(email).to_string();
        let text = |k: &str| live[k].as_str().unwrap_or_default().to_string();
        Ok(Observed {
            spec: super::to_spec(&ServiceAccountSpec {
                account_id,
                display_name: text("displayName"),
                description: text("description"),
            }),
            outputs: json!({
                "email": email,
                "unique_id": live["uniqueId"],
                "disabled": live["disabled"].as_bool().unwrap_or(false),
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_reads_by_its_email() {
        let live = json!({"name": "projects/p/serviceAccounts/a3mega-nodes@p.iam.gserviceaccount.com",
            "email": "a3mega-nodes@p.iam.gserviceaccount.com", "uniqueId": "1234",
            "displayName": "nodes", "description": "Managed by a3ctl"});
        let observed = ServiceAccountSpec::project(&live).unwrap();
        assert_eq!(observed.spec["account_id"], "a3mega-nodes");
        assert_eq!(observed.outputs["email"], live["email"]);
        assert_eq!(
            email("a3mega-nodes", "p"),
            "a3mega-nodes@p.iam.gserviceaccount.com"
        );
        assert!(ServiceAccountSpec::project(&json!({"name": "x"})).is_err());
    }
}
