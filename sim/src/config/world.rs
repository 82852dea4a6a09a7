//! The world file's types ([`WorldSpec`]); reading, checking and seeding a world from one is
//! [`crate::worldspec`]'s.

use crate::config::capacity::CapacityConfig;
use crate::config::quotas::QuotaLimit;
use crate::config::workloads::WorkloadSpec;
use crate::state::container::Schedule;
use serde::{Deserialize, Serialize};

/// Everything a world file sets. `WorldSpec::default()` sets nothing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldSpec {
    /// Project numbers and enabled services (`[[projects]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub projects: Vec<ProjectSpec>,
    /// Compute quota limits (`[[quotas]]`), added after `SimConfig::quotas`' own (so they win
    /// among equally specific ones).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quotas: Vec<QuotaLimit>,
    /// Zone capacity and the stockout wait (`[capacity]`); when given, it replaces
    /// `SimConfig::capacity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacityConfig>,
    /// Reservations that exist in a fresh world (`[[reservations]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reservations: Vec<ReservationSpec>,
    /// Service accounts that exist in a fresh world (`[[service_accounts]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub service_accounts: Vec<ServiceAccountSpec>,
    /// Bindings added to projects' IAM policies in a fresh world (`[[iam]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub iam: Vec<IamBindingSpec>,
    /// The wall-clock instant (RFC 3339) simulated time zero stands for in a fresh world;
    /// unset: the moment it starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    /// GKE's release schedule and ends of support (`[gke]`, `[[gke.releases]]`), seeded into a
    /// fresh world; with it, clusters auto-upgrade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gke: Option<Schedule>,
    /// What the simulated NCCL tests report (`[workloads]`, see
    /// [`crate::kube::controllers::runs`]); configuration, applied at every start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workloads: Option<WorkloadSpec>,
    /// How lists page (`[lists]`, see [`crate::paging`]); configuration, applied at every start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lists: Option<ListsSpec>,
}

/// `[lists]`: a test aid that makes every client's paging run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListsSpec {
    /// The most items any page of any list holds, whatever the request asks for (Google may
    /// answer fewer items than asked, so a client must follow `nextPageToken`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_page_size: Option<std::num::NonZeroUsize>,
}

/// A service account, as `gcloud iam service-accounts create` would make it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceAccountSpec {
    /// The project id (the email is `ACCOUNT_ID@PROJECT.iam.gserviceaccount.com`).
    pub project: String,
    /// 6 to 30 characters, `[a-z]([-a-z0-9]*[a-z0-9])`.
    pub account_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub display_name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// One binding of a project's IAM policy, added to the project's default policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IamBindingSpec {
    /// The project id.
    pub project: String,
    /// `roles/NAME`, `projects/P/roles/NAME` or `organizations/O/roles/NAME`.
    pub role: String,
    /// Members as policies write them (`user:`, `serviceAccount:`, `group:`, `domain:`,
    /// `principal://`, `principalSet://`).
    pub members: Vec<String>,
    /// An IAM condition, kept as given (the policy becomes version 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<ConditionSpec>,
}

/// An IAM condition (`google.type.Expr`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionSpec {
    pub title: String,
    pub expression: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectSpec {
    /// The project id: 6 to 30 lowercase letters, digits and hyphens, starting with a letter, not
    /// ending with a hyphen.
    pub id: String,
    /// Its number, a string of digits (`"123456789012"`); unset, the simulator derives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<String>,
    /// The services enabled when the world is created (names of the Service Usage catalogue, with
    /// the services they depend on); unset, the default set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services: Option<Vec<String>>,
}

fn yes() -> bool {
    true
}

/// One reservation, as `gcloud compute reservations create` would make it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReservationSpec {
    pub project: String,
    pub zone: String,
    pub name: String,
    pub machine_type: String,
    /// Listed accelerators (`nvidia-h100-mega-80gb`); with `accelerator_count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accelerator_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accelerator_count: Option<u32>,
    /// VMs.
    pub count: u64,
    /// `specificReservationRequired` (GKE node pools consume only specifically targeted ones).
    #[serde(default = "yes")]
    pub specific_required: bool,
    /// `DENSE` or `DEPLOYMENT_TYPE_UNSPECIFIED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment_type: Option<String>,
    /// `LOCAL` (default), `SPECIFIC_PROJECTS` (with `share_with`) or `ORGANIZATION`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_type: Option<String>,
    /// The projects a `SPECIFIC_PROJECTS` reservation is shared with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub share_with: Vec<String>,
}
