//! One member of one role on one resource's IAM policy (`iam_member`): what a3ctl grants, and the
//! only thing it ever changes in a policy. Like Terraform's `google_*_iam_member` (not the
//! whole-policy `google_*_iam_policy`, whose writes overwrite each other's bindings), a create adds
//! the member to the role's unconditional binding by read-modify-write with the policy's etag, a
//! delete removes only that member, and every other member, binding and condition is sent back as
//! read (<https://cloud.google.com/iam/docs/granting-changing-revoking-access#programmatic>).
//!
//! The resource is the project (`projects/P`, Resource Manager), a bucket (`projects/_/buckets/B`,
//! Cloud Storage) or a repository (`projects/P/locations/L/repositories/R`, Artifact Registry).
//! Its id is `RESOURCE#ROLE#MEMBER`. Every field forces a new member.

use crate::resource::spec::Change::ForceNew;
use crate::resource::spec::{f, kind_fields};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What a3ctl grants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IamMemberSpec {
    /// `projects/P`, `projects/_/buckets/B` or `projects/P/locations/L/repositories/R`.
    pub resource: String,
    /// `roles/storage.objectUser`.
    pub role: String,
    /// `serviceAccount:EMAIL`, `principal://...`, `principalSet://...`.
    pub member: String,
}

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::IamMember,
    name: "iam_member",
    api: super::Api::Iam,
    fields: FIELDS,
    deadline_minutes: 5,
    create_latency: Some("iam.policy.set"),
    service: Some("cloudresourcemanager.googleapis.com"),
};

kind_fields! {
    /// The fields of [`IamMemberSpec`].
    pub enum IamMemberField for IamMember in FIELDS {
        Resource => f("resource", ForceNew),
        Role => f("role", ForceNew),
        Member => f("member", ForceNew),
    }
}

impl IamMemberSpec {
    /// The id of the grant: `RESOURCE#ROLE#MEMBER`.
    pub fn id(&self) -> String {
        format!("{}#{}#{}", self.resource, self.role, self.member)
    }

    /// The grant an id names.
    pub fn from_id(id: &str) -> Option<IamMemberSpec> {
        let mut parts = id.splitn(3, '#');
        let (resource, role, member) = (parts.next()?, parts.next()?, parts.next()?);
        (!resource.is_empty() && !role.is_empty() && !member.is_empty()).then(|| IamMemberSpec {
            resource: resource.into(),
            role: role.into(),
            member: member.into(),
        })
    }
}

/// The binding of `role` without a condition, in a policy's JSON (`bindings[]`).
fn binding<'a>(policy: &'a Value, role: &str) -> Option<&'a Value> {
    policy["bindings"]
        .as_array()?
        .iter()
        .find(|b| b["role"] == role && b.get("condition").is_none_or(Value::is_null))
}

/// Whether `member` holds `role` unconditionally in `policy`.
pub fn holds(policy: &Value, role: &str, member: &str) -> bool {
    binding(policy, role)
        .and_then(|b| b["members"].as_array())
        .is_some_and(|m| m.iter().any(|x| x == member))
}

/// Adds `member` to the unconditional binding of `role` (created when there is none); returns
/// false when it is there already. Nothing else of the policy changes.
pub fn add(policy: &mut Value, role: &str, member: &str) -> bool {
    if holds(policy, role, member) {
        return false;
    }
    if !policy["bindings"].is_array() {
        policy["bindings"] = json!([]);
    }
    let bindings = policy["bindings"].as_array_mut().expect("an array");
    let unconditional =
        |b: &Value| b["role"] == role && b.get("condition").is_none_or(Value::is_null);
    match bindings.iter_mut().find(|b| unconditional(b)) {
        Some(b) => match b["members"].as_array_mut() {
            Some(members) => members.push(json!(member)),
            None => b["members"] = json!([member]),
        },
        None => bindings.push(json!({"role": role, "members": [member]})),
    }
    true
}

/// Removes `member` from the unconditional binding of `role` (and the binding, when it was its
/// last member); returns false when it was not there. Nothing else of the policy changes.
pub fn remove(policy: &mut Value, role: &str, member: &str) -> bool {
    if !holds(policy, role, member) {
        return false;
    }
    let Some(bindings) = policy["bindings"].as_array_mut() else {
        return false;
    };
    let unconditional =
        |b: &Value| b["role"] == role && b.get("condition").is_none_or(Value::is_null);
    for b in bindings.iter_mut().filter(|b| unconditional(b)) {
        if let Some(members) = b["members"].as_array_mut() {
            members.retain(|m| m != member);
        }
    }
    bindings
        .retain(|b| !unconditional(b) || b["members"].as_array().is_some_and(|m| !m.is_empty()));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        let spec = IamMemberSpec {
            resource: "projects/_/buckets/b".into(),
            role: "roles/storage.objectUser".into(),
            member: "principal://iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p.svc.id.goog/subject/ns/default/sa/default".into(),
        };
        assert_eq!(IamMemberSpec::from_id(&spec.id()), Some(spec));
        assert_eq!(IamMemberSpec::from_id("projects/p#roles/x"), None);
    }

    #[test]
    fn adding_and_removing_touch_only_the_member() {
        let original = json!({"version": 3, "etag": "BwX=", "bindings": [
            {"role": "roles/viewer", "members": ["user:a@x.com"]},
            {"role": "roles/storage.objectUser", "members": ["user:b@x.com"],
             "condition": {"title": "t", "expression": "request.time < timestamp('2030-01-01T00:00:00Z')"}},
            {"role": "roles/storage.objectUser", "members": ["group:g@x.com"]},
        ]});
        let mut policy = original.clone();
        assert!(add(
            &mut policy,
            "roles/storage.objectUser",
            "serviceAccount:s@p.iam.gserviceaccount.com"
        ));
        assert!(!add(
            &mut policy,
            "roles/storage.objectUser",
            "serviceAccount:s@p.iam.gserviceaccount.com"
        ));
        assert_eq!(
            policy["bindings"][2]["members"],
            json!([
                "group:g@x.com",
                "serviceAccount:s@p.iam.gserviceaccount.com"
            ])
        );
        assert_eq!(
            policy["bindings"][1], original["bindings"][1],
            "the conditional binding is kept"
        );
        assert!(holds(
            &policy,
            "roles/storage.objectUser",
            "serviceAccount:s@p.iam.gserviceaccount.com"
        ));
        // A member of the conditional binding does not hold the role unconditionally.
        assert!(!holds(&policy, "roles/storage.objectUser", "user:b@x.com"));
        assert!(remove(
            &mut policy,
            "roles/storage.objectUser",
            "serviceAccount:s@p.iam.gserviceaccount.com"
        ));
        assert_eq!(policy, original);
        // A new role gets its own binding, removed again with its last member.
        assert!(add(
            &mut policy,
            "roles/artifactregistry.reader",
            "serviceAccount:s@p.iam.gserviceaccount.com"
        ));
        assert_eq!(policy["bindings"].as_array().unwrap().len(), 4);
        assert!(remove(
            &mut policy,
            "roles/artifactregistry.reader",
            "serviceAccount:s@p.iam.gserviceaccount.com"
        ));
        assert_eq!(policy, original);
        assert!(!remove(&mut policy, "roles/owner", "user:a@x.com"));
    }
}
