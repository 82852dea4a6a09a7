//! `a3ctl-sim`: a local, faithful stand-in for the Google Cloud REST APIs and the Kubernetes API
//! server that a3ctl drives.
//!
//! One HTTP port serves every Google API under its real path, behind a per-API prefix where real
//! paths would collide (GKE, Filestore and Artifact Registry all use `/v1/projects/*/locations/*`):
//!
//! | API | path on the simulator | gcloud override |
//! |---|---|---|
//! | Compute v1 | `/compute/v1/...` | `CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE=<base>/` |
//! | GKE v1 | `/container/v1/...` | `CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER=<base>/container/` |
//! | Filestore v1 | `/file/v1/...` | `CLOUDSDK_API_ENDPOINT_OVERRIDES_FILE=<base>/file/` |
//! | Artifact Registry v1 | `/artifactregistry/v1/...` | `CLOUDSDK_API_ENDPOINT_OVERRIDES_ARTIFACTREGISTRY=<base>/artifactregistry/` |
//! | Cloud Storage JSON v1 | `/storage/v1/...`, `/upload/storage/v1/...`, `/download/storage/v1/...` | `CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=<base>/` |
//! | Service Usage v1 (services get, list, enable, disable, batchEnable; operations get) | `/serviceusage/v1/...` | `CLOUDSDK_API_ENDPOINT_OVERRIDES_SERVICEUSAGE=<base>/serviceusage/` |
//! | IAM v1 (service accounts) | `/iam/v1/...` | `CLOUDSDK_API_ENDPOINT_OVERRIDES_IAM=<base>/iam/` |
//! | Resource Manager v1 and v3 (project IAM policies) | `/cloudresourcemanager/v1/...`, `/cloudresourcemanager/v3/...` | `CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDRESOURCEMANAGER=<base>/cloudresourcemanager/` |
//! | Cloud Quotas v1 and v1beta (`quotaInfos` of Compute) | `/cloudquotas/v1/...`, `/cloudquotas/v1beta/...` | `CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDQUOTAS=<base>/cloudquotas/` |
//! | GitHub release downloads (Kueue's `manifests.yaml`, generated) | `/github/<owner>/<repo>/releases/download/<tag>/<file>` | |
//! | admin (not Google's) | `/_sim/...` | |
//!
//! Every simulated GKE cluster gets its own Kubernetes API server on its own HTTPS port, with a CA
//! generated for that cluster ([`kube`]).
//!
//! Every project has the served APIs enabled until Service Usage disables one; a call to a
//! disabled API is refused with Google's SERVICE_DISABLED error ([`serviceusage::enforce`]).
//!
//! A world file ([`worldspec::WorldSpec`], `SimConfig::world`) sets project numbers, enabled
//! services, quotas, zone capacity ([`capacity`]) and reservations, service accounts and project
//! IAM bindings that exist at start, the bus bandwidth simulated NCCL tests report (at 2G–8G)
//! ([`kube::controllers::runs`]; also `PUT /_sim/workloads`), and a cap on every page of every list
//! (`[lists]`, a test aid; [`paging`]).
//!
//! Every list pages as its API does ([`paging`]); a path Google serves that the simulator does
//! not answers 501, any other unknown path Google's 404 ([`discovery`]); a request body is checked
//! against the discovery documents' schema of its method before any handler runs
//! ([`discovery::schema`]).
//!
//! The world is one value ([`world::World`]) behind one lock. Time is simulated ([`clock::Clock`]):
//! operations are given a duration from the latency profile when they start and are finished lazily
//! by [`world::World::tick`] the next time anyone looks, so nothing runs in the background and a
//! test can drive a manual clock instead of waiting.
//!
//! Every API is one declaration in the registry ([`apis::ALL`], how to add one is there): its
//! routes, its tick, its inventory, the collection names of its paths and its endpoint variables.
//! The router, the front door, ticking, the inventory and the environment for gcloud and a3ctl go
//! through the list.
//!
//! # Layers
//!
//! Imports point down (`tests/it/layers.rs` fails on any cycle among the top-level modules):
//!
//! 1. foundations: [`clock`], [`error`], [`faults`], [`geo`], [`latency`], [`enums`],
//!    [`discovery`], [`http`];
//! 2. [`state`], every API's serialisable state (types only), and [`config`], the configuration
//!    and the world file's types;
//! 3. [`world`], the states side by side with ids, times and project numbers; [`persist`];
//! 4. [`shared`]: the [`shared::Shared`] state, the [`shared::Ctx`] a handler or a tick gets (the
//!    time, the latency profile, faults, quota and capacity settings: not the server), the
//!    [`shared::Api`] declaration type, the request log and running a request under its faults;
//! 5. what several APIs read: [`instance_groups`] (the VMs of GKE's node pools), [`quotas`],
//!    [`capacity`], [`lro`], [`aip151`], [`paging`];
//! 6. the APIs, each importing only APIs below it: IAM below Cloud Storage below Artifact Registry,
//!    Service Usage's check above IAM and Cloud Storage; Compute and Kubernetes below GKE (GKE
//!    consumes Compute's reservations and drives its clusters' API servers);
//! 7. [`apis`] (the registry) and [`worldspec`] (checking and seeding a world file);
//! 8. [`server`]: the router, the front door, [`start`] and [`SimHandle`]. Nothing imports it.
//!
//! The simulator shares no code with a3ctl: it fakes Google's and Kubernetes' APIs from their
//! published shapes, not from our client.

pub mod admin;
pub mod aip151;
pub mod apis;
pub mod artifactregistry;
pub mod capacity;
pub mod clock;
pub mod cloudquotas;
pub mod compute;
pub mod config;
pub mod container;
pub mod discovery;
pub mod enums;
pub mod error;
pub mod faults;
pub mod filestore;
pub mod geo;
pub mod http;
pub mod iam;
pub mod instance_groups;
pub mod kube;
pub mod latency;
pub mod lro;
pub mod paging;
pub mod persist;
pub mod project_numbers;
pub mod quotas;
pub mod releases;
pub mod resourcemanager;
pub mod server;
pub mod serviceusage;
pub mod shared;
pub mod state;
pub mod storage;
pub mod world;
pub mod worldspec;

pub use config::{SimConfig, Start};
pub use server::{SimHandle, start};
pub use worldspec::WorldSpec;
