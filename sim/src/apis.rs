//! The registry of the simulated APIs: one [`Api`] declaration per API, in one list ([`ALL`]).
//!
//! Everything that serves or walks "every API" goes through this list and names no API itself:
//! the router ([`crate::server::router`]), which API a request belongs to
//! ([`crate::server::api_of`]), the request log's endpoints ([`crate::shared::endpoint_template`]),
//! bringing the world up to the current time ([`crate::world::World::tick`]), the admin inventory
//! ([`crate::world::World::inventory`]), and the environment that points gcloud and a3ctl at the
//! simulator ([`crate::server::SimHandle::gcloud_env`], [`crate::server::SimHandle::a3ctl_env`],
//! [`crate::server::SimHandle::endpoint`]).
//!
//! The list's order is the order of the admin inventory's keys and of the endpoint variables;
//! ticks go by [`Tick`]: Service Usage first, then Compute and GKE together (both take from the
//! zones' capacity, so their operations finish in one time order), then the others in list order,
//! Kubernetes after GKE (a cluster that becomes RUNNING in a tick has its Kubernetes objects
//! updated in the same tick).
//!
//! # Adding an API
//!
//! 1. Write its module (`src/<api>.rs` or `src/<api>/mod.rs`, registered in `lib.rs`): its
//!    `router()` with full paths under its own first segment, its `State` (serialisable, with
//!    `#[serde(default)]` so that worlds saved before it load), and, if it has any, its `tick` and
//!    its `inventory`.
//! 2. Add its state as a field of [`crate::world::World`] (with `#[serde(default)]`).
//! 3. Add one [`Api`] line below: its name (the request log's `api` and the fault
//!    configuration's key), the first path segments it serves, its router, its tick, its
//!    inventory key, its collection names, and its gcloud and a3ctl endpoint variables.
//!
//! Nothing else names it: routing, logging, faults, ticking, the inventory and the environment
//! follow from the line.

use crate::shared::{Api, Tick};
use crate::{
    admin, artifactregistry, cloudquotas, compute, container, filestore, iam, kube, releases,
    resourcemanager, serviceusage, storage,
};

/// Every API the simulator serves, in inventory order.
pub static ALL: &[Api] = &[
    Api {
        name: "compute",
        prefixes: &["compute"],
        router: Some(compute::router),
        tick: Tick::Capacity {
            next_due: compute::next_due,
            until: compute::tick_until,
            ticked: compute::ticked,
        },
        inventory: Some(("compute", compute::inventory)),
        collections: &[],
        is_collection: Some(compute::is_collection_segment),
        gcloud: Some(("CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", "/")),
        a3ctl: Some(("A3CTL_COMPUTE_ENDPOINT", "")),
    },
    Api {
        name: "container",
        prefixes: &["container"],
        router: Some(container::router),
        tick: Tick::Capacity {
            next_due: container::next_due,
            until: container::tick_until,
            ticked: container::ticked,
        },
        inventory: Some(("container", container::inventory)),
        collections: &["clusters", "nodePools"],
        is_collection: None,
        gcloud: Some(("CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", "/container/")),
        a3ctl: Some(("A3CTL_CONTAINER_ENDPOINT", "/container")),
    },
    Api {
        name: "file",
        prefixes: &["file"],
        router: Some(filestore::router),
        tick: Tick::After(filestore::tick),
        inventory: Some(("file", filestore::inventory)),
        collections: &["instances"],
        is_collection: None,
        gcloud: Some(("CLOUDSDK_API_ENDPOINT_OVERRIDES_FILE", "/file/")),
        a3ctl: Some(("A3CTL_FILESTORE_ENDPOINT", "/file")),
    },
    Api {
        name: "artifactregistry",
        prefixes: &["artifactregistry"],
        router: Some(artifactregistry::router),
        tick: Tick::After(artifactregistry::tick),
        inventory: Some(("artifactregistry", artifactregistry::inventory)),
        collections: &["repositories"],
        is_collection: None,
        gcloud: Some((
            "CLOUDSDK_API_ENDPOINT_OVERRIDES_ARTIFACTREGISTRY",
            "/artifactregistry/",
        )),
        a3ctl: Some(("A3CTL_ARTIFACTREGISTRY_ENDPOINT", "/artifactregistry")),
    },
    Api {
        name: "storage",
        prefixes: &["storage", "upload", "download", "resumable"],
        router: Some(storage::router),
        tick: Tick::None,
        inventory: Some(("storage", storage::inventory)),
        collections: &["b", "o"],
        is_collection: None,
        gcloud: Some(("CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE", "/")),
        a3ctl: Some(("A3CTL_STORAGE_ENDPOINT", "")),
    },
    // Each cluster's Kubernetes API server, on its own port ([`crate::kube`]).
    Api {
        name: "kube",
        prefixes: &[],
        router: None,
        tick: Tick::After(kube::tick),
        inventory: Some(("kube", kube::inventory)),
        collections: &[
            "namespaces",
            "customresourcedefinitions",
            "nodes",
            "daemonsets",
            "deployments",
            "services",
            "configmaps",
            "secrets",
            "serviceaccounts",
        ],
        is_collection: None,
        gcloud: None,
        a3ctl: None,
    },
    // gcloud asks Service Usage whether an API is enabled before some creates.
    Api {
        name: "serviceusage",
        prefixes: &["serviceusage"],
        router: Some(serviceusage::router),
        tick: Tick::First(serviceusage::tick),
        inventory: Some(("serviceusage", serviceusage::inventory)),
        collections: &[],
        is_collection: None,
        gcloud: Some((
            "CLOUDSDK_API_ENDPOINT_OVERRIDES_SERVICEUSAGE",
            "/serviceusage/",
        )),
        a3ctl: Some(("A3CTL_SERVICEUSAGE_ENDPOINT", "/serviceusage")),
    },
    Api {
        name: "cloudquotas",
        prefixes: &["cloudquotas"],
        router: Some(cloudquotas::router),
        tick: Tick::None,
        inventory: None,
        collections: &[],
        is_collection: None,
        gcloud: Some((
            "CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDQUOTAS",
            "/cloudquotas/",
        )),
        a3ctl: Some(("A3CTL_CLOUDQUOTAS_ENDPOINT", "/cloudquotas")),
    },
    Api {
        name: "iam",
        prefixes: &["iam"],
        router: Some(iam::router),
        tick: Tick::None,
        inventory: Some(("iam", iam::inventory)),
        collections: &["serviceAccounts"],
        is_collection: None,
        gcloud: Some(("CLOUDSDK_API_ENDPOINT_OVERRIDES_IAM", "/iam/")),
        a3ctl: Some(("A3CTL_IAM_ENDPOINT", "/iam")),
    },
    Api {
        name: "cloudresourcemanager",
        prefixes: &["cloudresourcemanager"],
        router: Some(resourcemanager::router),
        tick: Tick::None,
        inventory: None,
        collections: &[],
        is_collection: None,
        gcloud: Some((
            "CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDRESOURCEMANAGER",
            "/cloudresourcemanager/",
        )),
        a3ctl: Some(("A3CTL_RESOURCEMANAGER_ENDPOINT", "/cloudresourcemanager")),
    },
    // GitHub release downloads (Kueue's manifests), not Google's.
    Api {
        name: "github",
        prefixes: &["github"],
        router: Some(releases::router),
        tick: Tick::None,
        inventory: None,
        collections: &[],
        is_collection: None,
        gcloud: None,
        a3ctl: Some(("A3CTL_GITHUB_ENDPOINT", "/github")),
    },
    // The simulator's own endpoint (`/_sim/...`): neither logged nor faulted.
    Api {
        name: "admin",
        prefixes: &["_sim"],
        router: Some(admin::router),
        tick: Tick::None,
        inventory: None,
        collections: &[],
        is_collection: None,
        gcloud: None,
        a3ctl: None,
    },
];
