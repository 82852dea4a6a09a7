//! Every environment variable a3ctl reads, in one place.

/// Turn off progress bars (plain progress lines are still printed).
pub const NO_PROGRESS: &str = "A3CTL_NO_PROGRESS";
/// Run every command against the built-in simulator (same as `--sandbox`).
pub const SANDBOX: &str = "A3CTL_SANDBOX";
/// Initial delay between polls of a long-running operation, in milliseconds (default 2000; the
/// sandbox uses 20). Later polls back off up to 15× this. When set, it is also the first delay
/// before retrying a GCS state request that failed transiently (default 1000).
pub const POLL_INTERVAL_MS: &str = "A3CTL_POLL_INTERVAL_MS";
/// Time scale of the sandbox simulator: real seconds per simulated second (default 0.0005: a
/// 10-minute cluster creation takes 0.3 s).
pub const SANDBOX_TIME_SCALE: &str = "A3CTL_SANDBOX_TIME_SCALE";
/// Keep state in this Cloud Storage bucket (same as `--state-bucket`).
pub const STATE_BUCKET: &str = "A3CTL_STATE_BUCKET";
/// Object name prefix of a GCS state (same as `--state-prefix`).
pub const STATE_PREFIX: &str = "A3CTL_STATE_PREFIX";
pub use crate::cloud::gcp::env::{
    ANONYMOUS_CREDENTIALS, ARTIFACTREGISTRY_ENDPOINT, CLOUDQUOTAS_ENDPOINT, COMPUTE_ENDPOINT,
    CONTAINER_ENDPOINT, FILESTORE_ENDPOINT, GITHUB_ENDPOINT, IAM_ENDPOINT,
    RESOURCEMANAGER_ENDPOINT, SERVICEUSAGE_ENDPOINT, STORAGE_ENDPOINT,
};
pub use crate::cloud::kube::paging::KUBE_PAGE_SIZE;
