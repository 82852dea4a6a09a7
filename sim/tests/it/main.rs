//! The simulator's tests, one binary: `gcloud_*` drive each API with the installed gcloud,
//! `kube_*` the Kubernetes API servers with kube-rs and kubectl, `admin` the simulator's own
//! endpoints.

mod gcloud_support;
mod kube_support;

mod admin;
mod gcloud_artifactregistry;
mod gcloud_bodies;
mod gcloud_capacity;
mod gcloud_compute;
mod gcloud_container;
mod gcloud_dranet;
mod gcloud_filestore;
mod gcloud_gpu_networking;
mod gcloud_iam;
mod gcloud_instances;
mod gcloud_maintenance;
mod gcloud_node_upgrades;
mod gcloud_paging;
mod gcloud_quotas;
mod gcloud_rdma;
mod gcloud_resource_iam;
mod gcloud_resourcemanager;
mod gcloud_serviceusage;
mod gcloud_storage;
mod gcloud_surface;
mod gcloud_world;
mod guesses;
mod kube_api;
mod kube_faults;
mod kube_gke_daemonsets;
mod kube_jobs;
mod kube_jobsets;
mod kube_kubectl;
mod kube_kueue;
mod kube_nodes;
mod kube_pods;
mod kube_runs;
mod kube_surface;
mod kube_tls;
mod layers;
