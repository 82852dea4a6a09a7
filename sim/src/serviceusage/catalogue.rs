//! The services Service Usage knows: their names, titles (`config.title`, what `gcloud services
//! list` prints under TITLE and what a SERVICE_DISABLED error calls the API) and dependencies.
//!
//! Google's catalogue has thousands of public services; the simulator knows the ones it serves
//! plus the handful an a3ctl project typically meets. Any other name is answered as Google answers
//! a service that does not exist (`Not found or permission denied for service(s): ...`).
//!
//! Dependencies: enabling a service enables what it depends on, and disabling one that enabled
//! services depend on needs `disableDependentServices`
//! (<https://cloud.google.com/service-usage/docs/reference/rest/v1/services/disable>). Only the
//! edge that public Service Usage answers confirm is modelled: `container.googleapis.com` depends
//! on `compute.googleapis.com` (`The service compute.googleapis.com is depended on by the following
//! active service(s): container.googleapis.com; ...`, quoted in
//! hashicorp/terraform-provider-google#5424). GKE's other dependencies (IAM, OS Login, Pub/Sub,
//! Container Registry, ...) are left out, because a fresh simulated project enables only the
//! services the simulator serves and a dependency must be enabled with its dependent.

/// One service of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceInfo {
    /// `compute.googleapis.com`.
    pub name: &'static str,
    /// `Compute Engine API`.
    pub title: &'static str,
    /// Services this one needs enabled.
    pub depends_on: &'static [&'static str],
}

const fn service(name: &'static str, title: &'static str) -> ServiceInfo {
    ServiceInfo {
        name,
        title,
        depends_on: &[],
    }
}

/// Every service the simulator knows, by name.
pub const CATALOGUE: &[ServiceInfo] = &[
    service("artifactregistry.googleapis.com", "Artifact Registry API"),
    service("bigquery.googleapis.com", "BigQuery API"),
    service("cloudbuild.googleapis.com", "Cloud Build API"),
    service("cloudquotas.googleapis.com", "Cloud Quotas API"),
    service(
        "cloudresourcemanager.googleapis.com",
        "Cloud Resource Manager API",
    ),
    service("cloudtrace.googleapis.com", "Cloud Trace API"),
    service("compute.googleapis.com", "Compute Engine API"),
    ServiceInfo {
        name: "container.googleapis.com",
        title: "Kubernetes Engine API",
        depends_on: &["compute.googleapis.com"],
    },
    service("containerregistry.googleapis.com", "Container Registry API"),
    service("dns.googleapis.com", "Cloud DNS API"),
    service("file.googleapis.com", "Cloud Filestore API"),
    service(
        "iam.googleapis.com",
        "Identity and Access Management (IAM) API",
    ),
    service(
        "iamcredentials.googleapis.com",
        "IAM Service Account Credentials API",
    ),
    service("logging.googleapis.com", "Cloud Logging API"),
    service("monitoring.googleapis.com", "Cloud Monitoring API"),
    service(
        "networkconnectivity.googleapis.com",
        "Network Connectivity API",
    ),
    service("oslogin.googleapis.com", "Cloud OS Login API"),
    service("pubsub.googleapis.com", "Cloud Pub/Sub API"),
    service("secretmanager.googleapis.com", "Secret Manager API"),
    service("servicemanagement.googleapis.com", "Service Management API"),
    service("servicenetworking.googleapis.com", "Service Networking API"),
    service("serviceusage.googleapis.com", "Service Usage API"),
    service(
        "storage-api.googleapis.com",
        "Google Cloud Storage JSON API",
    ),
    service("storage-component.googleapis.com", "Cloud Storage"),
    service("storage.googleapis.com", "Cloud Storage API"),
];

/// What a project has enabled before anyone changes it: the APIs the simulator serves.
pub const DEFAULT_ENABLED: &[&str] = &[
    "compute.googleapis.com",
    "container.googleapis.com",
    "file.googleapis.com",
    "artifactregistry.googleapis.com",
    "storage.googleapis.com",
    "storage-api.googleapis.com",
    "serviceusage.googleapis.com",
    "cloudquotas.googleapis.com",
    "iam.googleapis.com",
    "cloudresourcemanager.googleapis.com",
];

/// The catalogue entry of `name`, if the service exists.
pub fn info(name: &str) -> Option<&'static ServiceInfo> {
    CATALOGUE.iter().find(|s| s.name == name)
}

/// `name` and everything it depends on, directly or not (`name` first).
pub fn with_dependencies(name: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    let mut todo: Vec<&'static str> = info(name).map(|s| s.name).into_iter().collect();
    while let Some(next) = todo.pop() {
        if out.contains(&next) {
            continue;
        }
        out.push(next);
        if let Some(s) = info(next) {
            todo.extend(s.depends_on.iter().copied());
        }
    }
    out
}

/// Every service that depends on `name`, directly or not.
pub fn dependents(name: &str) -> Vec<&'static str> {
    CATALOGUE
        .iter()
        .filter(|s| s.name != name && with_dependencies(s.name).contains(&name))
        .map(|s| s.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_is_sorted_and_closed_under_dependencies() {
        let names: Vec<&str> = CATALOGUE.iter().map(|s| s.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted);
        for s in CATALOGUE {
            for d in s.depends_on {
                assert!(info(d).is_some(), "{} depends on unknown {d}", s.name);
            }
        }
        // A fresh project's services are known and hold their dependencies.
        for s in DEFAULT_ENABLED {
            for d in with_dependencies(s) {
                assert!(DEFAULT_ENABLED.contains(&d), "{s} needs {d}");
            }
        }
    }

    #[test]
    fn gke_depends_on_compute() {
        assert_eq!(
            with_dependencies("container.googleapis.com"),
            vec!["container.googleapis.com", "compute.googleapis.com"]
        );
        assert_eq!(
            dependents("compute.googleapis.com"),
            vec!["container.googleapis.com"]
        );
        assert!(dependents("file.googleapis.com").is_empty());
        assert!(with_dependencies("nosuch.googleapis.com").is_empty());
    }
}
