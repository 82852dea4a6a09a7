//! IAM's state: service accounts, deleted default accounts, and the allow policies that were
//! written (project policies here; bucket and repository policies with their resources). The API
//! is [`crate::iam`], policies' behaviour [`crate::iam::policy`].

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// One role binding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Binding {
    pub role: String,
    pub members: Vec<String>,
    /// The `Expr`, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<Value>,
}

/// A stored allow policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    #[serde(default)]
    pub bindings: Vec<Binding>,
    pub etag: String,
    /// `auditConfigs` of a project policy, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_configs: Option<Value>,
}

/// One user-managed service account.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceAccount {
    /// The project id (the key of the project, as [`crate::serviceusage::resolve`] gives it).
    pub project: String,
    pub email: String,
    pub unique_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub display_name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// Everything IAM holds. Worlds saved before it existed load empty.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    /// User-managed service accounts by email.
    #[serde(default)]
    pub accounts: BTreeMap<String, ServiceAccount>,
    /// Compute Engine default service accounts that were deleted, by email.
    #[serde(default)]
    pub deleted_defaults: BTreeSet<String>,
    /// Project IAM policies that were written (Resource Manager's `setIamPolicy`), by project key;
    /// the others are [`crate::iam::default_project_policy`].
    #[serde(default)]
    pub project_policies: BTreeMap<String, Policy>,
}
