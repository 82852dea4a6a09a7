//! What the user can do about a failed Google Cloud call: one hint per resource kind and error
//! case, from the table [`ROWS`].
//!
//! [`classify_status`](super::classify_status) knows only the error, so it attaches the hint of
//! the kind-less rows ([`Subject::default`]). [`GcpProvider`](super::GcpProvider) knows the
//! resource ([`Subject::of`] a [`Target`]) and calls [`refine`], which puts the row of that kind in
//! place: a Filestore quota names the Filestore capacity quota and the `[filestore]` fields, a GPU
//! pool's quota the GPU quota metric of its region, a firewall's permission error
//! `roles/compute.securityAdmin`. Kubernetes objects keep the hints of `crate::cloud::kube::errors`.
//!
//! Quota metric names and pages (public Google Cloud documentation):
//! - GPU quota per region (`NVIDIA_H100_GPUS`, `NVIDIA_H100_MEGA_GPUS`, and their `PREEMPTIBLE_`
//!   twins that Spot and flex-start VMs draw on): <https://cloud.google.com/compute/resource-usage#gpu_quota>
//! - Compute allocation quotas (`CPUS`, `SSD_TOTAL_GB`, `IN_USE_ADDRESSES`, `RESOURCE_POLICIES`):
//!   <https://cloud.google.com/compute/resource-usage>
//! - VPC quotas per project (`NETWORKS`, `SUBNETWORKS`, `FIREWALLS`): <https://cloud.google.com/vpc/docs/quota>;
//!   Cloud Routers (`ROUTERS`): <https://cloud.google.com/network-connectivity/docs/router/quotas>
//! - Filestore: capacity quota per tier and region; the number of instances is bounded only by
//!   it: <https://cloud.google.com/filestore/docs/limits>
//! - GKE: <https://cloud.google.com/kubernetes-engine/quotas>
//! - Artifact Registry (one repository create or delete every 2 seconds, requests per minute per
//!   region): <https://cloud.google.com/artifact-registry/quotas>
//! - Cloud Storage (about one bucket create or delete every 2 seconds per project):
//!   <https://cloud.google.com/storage/quotas>
//! - Stockouts: <https://cloud.google.com/compute/docs/troubleshooting/troubleshooting-resource-availability>;
//!   reservations in GKE: <https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations>;
//!   flex-start: <https://cloud.google.com/kubernetes-engine/docs/concepts/dws>
//! - Roles: <https://cloud.google.com/compute/docs/access/iam> (Compute Network Admin manages
//!   networking resources except firewall rules, which need Compute Security Admin).

use crate::cloud::{CloudError, ErrorClass, Target};
use crate::resource::{Api, Kind};
use serde_json::Value;

/// What a hint may say about the resource an error concerns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Subject {
    /// `None` when the resource is not known (a kind-less classification, or an operation polled
    /// after a restart on an API that serves several kinds).
    pub kind: Option<Kind>,
    /// The blueprint's name for it (the address name: a pool's name, `gpu-3`, `shared` ...).
    pub name: String,
    /// Its name in the cloud, the last segment of its id (`a3mega-gpunet-3`), for commands a
    /// hint gives; `None` when the id is not known.
    pub cloud_name: Option<String>,
    pub project: Option<String>,
    /// Region or zone.
    pub location: Option<String>,
    /// Node pools: the machine type, GPU type (`nvidia-h100-mega-80gb`) and GPUs per node.
    pub machine_type: Option<String>,
    pub accelerator: Option<String>,
    pub gpus_per_node: u64,
    /// Node pools: nodes per zone and the zones.
    pub nodes: u64,
    pub zones: Vec<String>,
    /// Node pools: `on-demand`, `reservation`, `spot` or `flex-start`.
    pub capacity: Option<String>,
    pub reservation: Option<String>,
    /// Filestore: tier and capacity.
    pub tier: Option<String>,
    pub capacity_gb: Option<u64>,
}

impl Subject {
    /// Only the kind is known.
    pub fn kind(kind: Kind) -> Subject {
        Subject {
            kind: Some(kind),
            ..Subject::default()
        }
    }

    /// An operation of `api` whose resource is not known: the kind when the API serves one.
    pub fn of_api(api: Api) -> Subject {
        let mut kinds = Kind::ALL.iter().filter(|k| k.api() == api);
        match (kinds.next(), kinds.next()) {
            (Some(kind), None) => Subject::kind(*kind),
            _ => Subject::default(),
        }
    }

    /// Everything a hint may use, from the target's address, identity and spec.
    pub fn of(target: &Target) -> Subject {
        let spec = &target.spec;
        let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
        let project = target
            .id
            .strip_prefix("projects/")
            .and_then(|rest| rest.split('/').next())
            .filter(|p| !p.is_empty() && *p != "_")
            .map(str::to_string);
        let accelerator = spec.get("accelerator").filter(|a| a.is_object());
        Subject {
            kind: Some(target.addr.kind),
            name: target.addr.name.clone(),
            cloud_name: target
                .id
                .rsplit('/')
                .next()
                .filter(|n| !n.is_empty())
                .map(str::to_string),
            project,
            location: text(&spec["location"]).or_else(|| text(&spec["region"])),
            machine_type: text(&spec["machine_type"]),
            accelerator: accelerator.and_then(|a| text(&a["type"])),
            gpus_per_node: accelerator.and_then(|a| a["count"].as_u64()).unwrap_or(0),
            nodes: spec["node_count"].as_u64().unwrap_or(0),
            // Facts for the hint's wording; a spec without them gets a vaguer hint.
            zones: spec["locations"]
                .as_array()
                .map(|zs| zs.iter().filter_map(text).collect())
                .unwrap_or_default(),
            capacity: text(&spec["capacity"]),
            reservation: text(&spec["reservation"]["name"]),
            tier: text(&spec["tier"]),
            capacity_gb: spec["capacity_gb"].as_u64(),
        }
    }

    fn is_gpu_pool(&self) -> bool {
        self.kind == Some(Kind::NodePool) && self.accelerator.is_some()
    }

    /// The region, from a region or zone location (`us-central1-a` → `us-central1`).
    fn region(&self) -> Option<String> {
        let location = self.location.as_deref()?.to_ascii_lowercase();
        Some(region_of(&location).to_string())
    }

    /// Where the blueprint declares this resource, e.g. ``[[gpu_pool]] `a3mega` ``.
    fn table(&self) -> String {
        match self.kind {
            Some(Kind::NodePool) if self.is_gpu_pool() => format!("[[gpu_pool]] `{}`", self.name),
            Some(Kind::NodePool) => "[system_pool]".into(),
            Some(Kind::Cluster) => "[cluster]".into(),
            Some(Kind::Filestore) => "[filestore]".into(),
            Some(Kind::Repository) => format!("[[artifact_registry]] `{}`", self.name),
            Some(Kind::Bucket) => format!("[[bucket]] `{}`", self.name),
            _ => "[network]".into(),
        }
    }
}

/// `us-central1-a` → `us-central1`; a region stays as it is.
fn region_of(location: &str) -> &str {
    match location.rsplit_once('-') {
        Some((region, zone)) if zone.len() == 1 && region.contains('-') => region,
        _ => location,
    }
}

/// What went wrong, as far as a hint is concerned: the [`ErrorClass`] refined by the signals that
/// call for different advice (a disabled API is a 403 like a missing role; a rate limit that
/// outlasted the retries is transient like a 503).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    ApiDisabled,
    Quota,
    RateLimited,
    Capacity,
    Permission,
    Invalid,
    InUse,
    NotFound,
    Conflict,
    Busy,
    Transient,
    AlreadyExists,
    Other,
}

/// The [`Case`] of a classified error.
pub fn case_of(error: &CloudError) -> Case {
    let lower = error.message.to_ascii_lowercase();
    // ErrorInfo reason SERVICE_DISABLED (gRPC, AIP-193) or v1 `accessNotConfigured`; the message
    // reads "X API has not been used in project N before or it is disabled".
    if error.reason == "SERVICE_DISABLED"
        || error.reason == "accessNotConfigured"
        || lower.contains("service_disabled")
        || lower.contains("has not been used in project")
        || (lower.contains(" api ") && lower.contains("it is disabled"))
    {
        return Case::ApiDisabled;
    }
    match error.class {
        ErrorClass::Quota => Case::Quota,
        ErrorClass::Transient
            if error.reason.to_ascii_lowercase().contains("ratelimit")
                || error.http_status == Some(429)
                || error.status == "RESOURCE_EXHAUSTED"
                || lower.contains("rate limit")
                || lower.contains("quota") =>
        {
            Case::RateLimited
        }
        ErrorClass::Transient => Case::Transient,
        ErrorClass::Capacity => Case::Capacity,
        ErrorClass::Permission => Case::Permission,
        ErrorClass::Invalid => Case::Invalid,
        ErrorClass::InUse => Case::InUse,
        ErrorClass::NotFound => Case::NotFound,
        ErrorClass::Conflict => Case::Conflict,
        ErrorClass::Busy => Case::Busy,
        ErrorClass::AlreadyExists => Case::AlreadyExists,
        ErrorClass::Other => Case::Other,
    }
}

impl Case {
    /// Cases whose hint only the table gives (an adapter never words them better): the
    /// resource's row replaces the kind-less one `classify_status` attached. Other cases keep an
    /// adapter's own hint and get the table's only when they have none.
    fn table_owned(self) -> bool {
        matches!(
            self,
            Case::ApiDisabled | Case::Quota | Case::RateLimited | Case::Capacity | Case::Permission
        )
    }
}

/// Which subjects a row is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On {
    /// Any subject, also an unknown one: the fallback rows.
    Any,
    Kinds(&'static [Kind]),
    /// A node pool with GPUs.
    GpuPool,
    /// A node pool without GPUs (the system pool).
    CpuPool,
}

impl On {
    fn matches(self, subject: &Subject) -> bool {
        match self {
            On::Any => true,
            On::Kinds(kinds) => subject.kind.is_some_and(|k| kinds.contains(&k)),
            On::GpuPool => subject.is_gpu_pool(),
            On::CpuPool => subject.kind == Some(Kind::NodePool) && !subject.is_gpu_pool(),
        }
    }
}

/// One row of the table: for these subjects and this case, say this.
pub struct Row {
    pub on: On,
    pub case: Case,
    pub say: fn(&Facts) -> String,
}

/// What a row's text is made of.
pub struct Facts<'a> {
    pub subject: &'a Subject,
    pub error: &'a CloudError,
    /// The quota metric the message names (`NETWORKS`, `NVIDIA_H100_MEGA_GPUS` ...).
    pub metric: Option<String>,
    /// The project id (or number) for commands and console links; `PROJECT` when unknown.
    pub project: String,
    /// `us-central1`, or "the region" when unknown.
    pub region: String,
    lower: String,
}

impl Facts<'_> {
    fn mentions(&self, word: &str) -> bool {
        self.lower.contains(word)
    }

    /// The console page where quotas are raised, for this project.
    fn quotas_page(&self) -> String {
        if self.project == "PROJECT" {
            "https://console.cloud.google.com/iam-admin/quotas".into()
        } else {
            format!(
                "https://console.cloud.google.com/iam-admin/quotas?project={}",
                self.project
            )
        }
    }

    /// `the quota NETWORKS` when the message names one, otherwise `fallback`.
    fn metric_or(&self, fallback: &str) -> String {
        self.metric.clone().unwrap_or_else(|| fallback.to_string())
    }
}

const NETWORK_KINDS: &[Kind] = &[Kind::Network, Kind::Subnetwork, Kind::Router];
const VPC_QUOTAS: &str = "https://cloud.google.com/vpc/docs/quota";
const GPU_QUOTAS: &str = "https://cloud.google.com/compute/resource-usage#gpu_quota";
const STOCKOUTS: &str =
    "https://cloud.google.com/compute/docs/troubleshooting/troubleshooting-resource-availability";
const ADC: &str = "check that Application Default Credentials are the account you mean (`gcloud auth application-default login`)";

/// The hint table: the first row whose subject and case match gives the hint.
pub const ROWS: &[Row] = &[
    // ----- quota --------------------------------------------------------------------------
    Row {
        on: On::Kinds(&[Kind::Filestore]),
        case: Case::Quota,
        say: |f| {
            let tier = f.subject.tier.as_deref().unwrap_or("its");
            let size = f
                .subject
                .capacity_gb
                .map(|gb| format!(" ({gb} GiB asked)"))
                // Without the asked size the message leaves it out.
                .unwrap_or_default();
            format!(
                "the project's Filestore capacity quota for the {tier} tier in {} is used up{size}: Filestore counts GiB per tier and region, and the number of instances is bounded only by that quota; request more for file.googleapis.com on {} (https://cloud.google.com/filestore/docs/limits), delete unused Filestore instances, or lower `capacity_gb` or pick another `tier` in [filestore]",
                f.region,
                f.quotas_page()
            )
        },
    },
    Row {
        on: On::GpuPool,
        case: Case::Quota,
        say: |f| {
            let s = f.subject;
            let metric = f.metric.clone().unwrap_or_else(|| gpu_metric(s));
            let total = s.nodes * s.gpus_per_node * (s.zones.len().max(1) as u64);
            let asked = if total > 0 {
                format!(" (pool `{}` asks for {total} GPUs)", s.name)
            } else {
                String::new()
            };
            format!(
                "the GPU quota {metric} in {} is too small{asked}: request more on {} ({GPU_QUOTAS}), or take the GPUs from a reservation (`capacity = \"reservation\"` and `reservation` in {}), or lower its `nodes`",
                f.region,
                f.quotas_page(),
                s.table()
            )
        },
    },
    Row {
        on: On::CpuPool,
        case: Case::Quota,
        say: |f| {
            format!(
                "the Compute Engine quota {} in {} is too small for the system pool's VMs: request more on {} (https://cloud.google.com/compute/resource-usage), or lower `nodes` or pick a smaller `machine_type` in [system_pool]",
                f.metric_or("CPUS"),
                f.region,
                f.quotas_page()
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Cluster]),
        case: Case::Quota,
        say: |f| {
            format!(
                "creating the cluster ran out of the quota {} in {}: a GKE cluster needs quota for its control plane's nodes and addresses (CPUS, IN_USE_ADDRESSES, SSD_TOTAL_GB); request more on {} (https://cloud.google.com/kubernetes-engine/quotas)",
                f.metric_or("named in the message"),
                f.region,
                f.quotas_page()
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Network]),
        case: Case::Quota,
        say: |f| {
            format!(
                "the project's VPC network quota {} is used up (this blueprint creates one primary VPC and 4 or 8 GPU VPCs): delete unused networks (`gcloud compute networks list --project {}`) or request more on {} ({VPC_QUOTAS})",
                f.metric_or("NETWORKS"),
                f.project,
                f.quotas_page()
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Subnetwork]),
        case: Case::Quota,
        say: |f| {
            format!(
                "the project's subnetwork quota {} is used up: delete unused subnets (`gcloud compute networks subnets list --project {}`) or request more on {} ({VPC_QUOTAS})",
                f.metric_or("SUBNETWORKS"),
                f.project,
                f.quotas_page()
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Firewall]),
        case: Case::Quota,
        say: |f| {
            format!(
                "the project's firewall rule quota {} is used up: delete unused rules (`gcloud compute firewall-rules list --project {}`) or request more on {} ({VPC_QUOTAS})",
                f.metric_or("FIREWALLS"),
                f.project,
                f.quotas_page()
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Router]),
        case: Case::Quota,
        say: |f| {
            format!(
                "the project's Cloud Router quota {} is used up (the router carries the primary VPC's NAT, `nat` in [network]): delete unused routers (`gcloud compute routers list --project {}`) or request more on {} (https://cloud.google.com/network-connectivity/docs/router/quotas)",
                f.metric_or("ROUTERS"),
                f.project,
                f.quotas_page()
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::ResourcePolicy]),
        case: Case::Quota,
        say: |f| {
            format!(
                "the quota {} of resource policies in {} is used up (one compact placement policy per GPU pool with `placement = \"compact\"`): delete unused ones (`gcloud compute resource-policies list --project {}`) or request more on {} (https://cloud.google.com/compute/resource-usage)",
                f.metric_or("RESOURCE_POLICIES"),
                f.region,
                f.project,
                f.quotas_page()
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Repository]),
        case: Case::Quota,
        say: |f| {
            format!(
                "an Artifact Registry quota is exhausted ({}): repository creates and deletes are limited to about one every 2 seconds and requests per minute per region, so wait a minute and run apply again; for a standing limit request more for artifactregistry.googleapis.com on {} (https://cloud.google.com/artifact-registry/quotas)",
                f.metric_or("see the message"),
                f.quotas_page()
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Bucket]),
        case: Case::Quota,
        say: |_| {
            "Cloud Storage allows about one bucket create or delete every 2 seconds per project: wait a moment and run apply again (https://cloud.google.com/storage/quotas)".into()
        },
    },
    Row {
        on: On::Any,
        case: Case::Quota,
        say: |f| {
            let metric = f.metric.as_deref().unwrap_or("named in the message");
            let docs = match f.metric.as_deref() {
                Some(m) if m.contains("GPUS") => GPU_QUOTAS,
                Some("NETWORKS" | "SUBNETWORKS" | "FIREWALLS") => VPC_QUOTAS,
                _ => "https://cloud.google.com/compute/resource-usage",
            };
            format!(
                "request more of the quota {metric} on {} ({docs}), or free some of it",
                f.quotas_page()
            )
        },
    },
    // ----- rate limits that outlasted the retries -----------------------------------------
    Row {
        on: On::Kinds(&[Kind::Bucket]),
        case: Case::RateLimited,
        say: |_| {
            "Cloud Storage allows about one bucket create or delete every 2 seconds per project and kept refusing after retries: wait a moment and run apply again (https://cloud.google.com/storage/quotas)".into()
        },
    },
    Row {
        on: On::Kinds(&[Kind::Repository]),
        case: Case::RateLimited,
        say: |_| {
            "Artifact Registry allows about one repository create or delete every 2 seconds and kept refusing after retries: wait a minute and run apply again (https://cloud.google.com/artifact-registry/quotas)".into()
        },
    },
    Row {
        on: On::Any,
        case: Case::RateLimited,
        say: |f| {
            format!(
                "the API kept answering with a rate limit after retries: wait a minute and run apply again; if it persists, check the API's per-minute quotas on {}",
                f.quotas_page()
            )
        },
    },
    // ----- stockouts ----------------------------------------------------------------------
    Row {
        on: On::GpuPool,
        case: Case::Capacity,
        say: |f| {
            let s = f.subject;
            let machine = s.machine_type.as_deref().unwrap_or("the GPU machine type");
            let zones = if s.zones.is_empty() {
                "the pool's zone".to_string()
            } else {
                s.zones.join(", ")
            };
            match (s.capacity.as_deref(), s.reservation.as_deref()) {
                (Some("reservation"), Some(r)) => format!(
                    "the reservation `{r}` has no free {machine} VMs in {zones} (used by other VMs, or smaller than `nodes`): check it with `gcloud compute reservations describe {r} --project {}`, lower `nodes` of {}, or wait for its VMs to free up",
                    f.project,
                    s.table()
                ),
                (Some("flex-start"), _) => format!(
                    "flex-start found no {machine} capacity in {zones} in time: run apply again later, or add `zones` to {} ({STOCKOUTS})",
                    s.table()
                ),
                _ => format!(
                    "{zones} has no {machine} capacity for this request now (a stockout, not a quota): use a reservation (`capacity = \"reservation\"` and `reservation` in {}), or `capacity = \"flex-start\"` which waits for capacity (https://cloud.google.com/kubernetes-engine/docs/concepts/dws), or another zone (`zones`, or the blueprint's `zone`; compact placement needs one zone) ({STOCKOUTS})",
                    s.table()
                ),
            }
        },
    },
    Row {
        on: On::CpuPool,
        case: Case::Capacity,
        say: |_| {
            format!(
                "the zone has no capacity for the system pool's machine type now: pick another `machine_type` in [system_pool], another `zone`, or run apply again later ({STOCKOUTS})"
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Filestore]),
        case: Case::Capacity,
        say: |f| {
            format!(
                "Filestore has no capacity for the {} tier there now: run apply again later, or pick another `tier` in [filestore] or another `zone`",
                f.subject.tier.as_deref().unwrap_or("chosen")
            )
        },
    },
    Row {
        on: On::Any,
        case: Case::Capacity,
        say: |_| {
            format!(
                "the zone has no capacity for this now: use a reservation, another zone, or run apply again later ({STOCKOUTS})"
            )
        },
    },
    // ----- permissions --------------------------------------------------------------------
    Row {
        on: On::Any,
        case: Case::ApiDisabled,
        say: |f| {
            let service = api_service(f).unwrap_or_else(|| "SERVICE.googleapis.com".into());
            format!(
                "the API is not enabled in the project: run `gcloud services enable {service} --project {}` (if you just enabled it, wait a few minutes) and run the command again, or set `enable_services = true` in the blueprint to have apply enable it",
                f.project
            )
        },
    },
    Row {
        on: On::Kinds(NETWORK_KINDS),
        case: Case::Permission,
        say: |f| {
            format!(
                "the account needs roles/compute.networkAdmin on project {} to manage VPC networks, subnets and Cloud Routers; {ADC}",
                f.project
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Firewall]),
        case: Case::Permission,
        say: |f| {
            format!(
                "firewall rules need roles/compute.securityAdmin on project {} (roles/compute.networkAdmin excludes them); {ADC}",
                f.project
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::ResourcePolicy]),
        case: Case::Permission,
        say: |f| {
            format!(
                "compact placement policies need compute.resourcePolicies.* permissions, e.g. roles/compute.admin on project {}; {ADC}",
                f.project
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Cluster, Kind::NodePool]),
        case: Case::Permission,
        say: |f| {
            format!(
                "the account needs roles/container.admin on project {} (and roles/iam.serviceAccountUser on the nodes' service account); {ADC}",
                f.project
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Filestore]),
        case: Case::Permission,
        say: |f| {
            format!(
                "the account needs roles/file.editor on project {} to manage Filestore instances; {ADC}",
                f.project
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Repository]),
        case: Case::Permission,
        say: |f| {
            format!(
                "the account needs roles/artifactregistry.admin on project {} to manage repositories; {ADC}",
                f.project
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Bucket]),
        case: Case::Permission,
        say: |f| {
            format!(
                "the account needs roles/storage.admin on project {} to manage buckets (objects alone: roles/storage.objectAdmin); {ADC}",
                f.project
            )
        },
    },
    Row {
        on: On::Any,
        case: Case::Permission,
        say: |_| {
            format!(
                "the account lacks a role for this call (e.g. roles/container.admin for GKE, roles/compute.networkAdmin for networks, roles/storage.admin for buckets); {ADC}"
            )
        },
    },
    // ----- invalid arguments: the blueprint field, where one can be told ------------------
    Row {
        on: On::Kinds(&[Kind::Filestore]),
        case: Case::Invalid,
        say: |f| {
            let field = if f.mentions("capacity") || f.mentions("size") {
                "`capacity_gb` (each tier has its own range)"
            } else if f.mentions("tier") {
                "`tier`"
            } else if f.mentions("share") || f.mentions("file share") {
                "`share`"
            } else if f.mentions("network") || f.mentions("range") {
                "the primary network it attaches to ([network])"
            } else {
                "`tier`, `capacity_gb` and `share`"
            };
            format!("Filestore refused the instance: check {field} in [filestore]")
        },
    },
    Row {
        on: On::GpuPool,
        case: Case::Invalid,
        say: |f| {
            let s = f.subject;
            let field = if f.mentions("reservation") {
                "`reservation` and `reservation_block` (the reservation must exist in the pool's zone, be for the same machine type, and allow specific consumption)"
            } else if f.mentions("placement")
                || f.mentions("resource policy")
                || f.mentions("resourcepolic")
            {
                "`placement` (compact placement needs one zone)"
            } else if f.mentions("zone") || f.mentions("location") {
                "`zones`"
            } else if f.mentions("machine type")
                || f.mentions("machinetype")
                || f.mentions("accelerator")
            {
                "`machine_type`"
            } else {
                "`machine_type`, `zones`, `capacity`, `reservation` and `placement`"
            };
            format!("GKE refused the node pool: check {field} in {}", s.table())
        },
    },
    Row {
        on: On::CpuPool,
        case: Case::Invalid,
        say: |_| {
            "GKE refused the node pool: check `machine_type` and `nodes` in [system_pool]".into()
        },
    },
    Row {
        on: On::Kinds(&[Kind::Cluster]),
        case: Case::Invalid,
        say: |f| {
            let field = if f.mentions("version") {
                "`version` and `release_channel` in [cluster]"
            } else if f.mentions("authorized") {
                "`authorized_networks` in [cluster]"
            } else if f.mentions("master") || f.mentions("control plane") {
                "`master_ipv4_cidr` in [network] (a /28 that overlaps no other range)"
            } else if f.mentions("range") || f.mentions("cidr") || f.mentions("subnet") {
                "the ranges in [network] (`primary_subnet`, `pods`, `services`)"
            } else {
                "[cluster] and the ranges in [network]"
            };
            format!("GKE refused the cluster: check {field}")
        },
    },
    Row {
        on: On::Kinds(&[Kind::Subnetwork]),
        case: Case::Invalid,
        say: |_| {
            "the subnet was refused: check the ranges in [network] (`primary_subnet`, `pods`, `services`, `gpu_range` or `gpu_subnets`); they must not overlap each other or other subnets of the network".into()
        },
    },
    Row {
        on: On::Kinds(&[Kind::Network]),
        case: Case::Invalid,
        say: |_| "the network was refused: check `gpu_mtu` and `primary_mtu` in [network]".into(),
    },
    Row {
        on: On::Kinds(&[Kind::Router]),
        case: Case::Invalid,
        say: |_| {
            "the Cloud Router or its NAT was refused: check `nat` and `primary_subnet` in [network]"
                .into()
        },
    },
    Row {
        on: On::Kinds(&[Kind::Firewall]),
        case: Case::Invalid,
        say: |_| {
            "the firewall rule was refused: check the ranges in [network] it allows (`primary_subnet`, `pods`, `gpu_range`)".into()
        },
    },
    Row {
        on: On::Kinds(&[Kind::ResourcePolicy]),
        case: Case::Invalid,
        say: |f| {
            format!(
                "the compact placement policy was refused: check `placement` and `nodes` of the GPU pool `{}` (compact placement limits the number of VMs)",
                f.subject.name
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Repository]),
        case: Case::Invalid,
        say: |f| {
            format!(
                "Artifact Registry refused the repository: check `name` and `format` in {}",
                f.subject.table()
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Bucket]),
        case: Case::Invalid,
        say: |f| {
            format!(
                "Cloud Storage refused the bucket: check `name` (global, lowercase), `location` and `storage_class` in {}",
                f.subject.table()
            )
        },
    },
    // ----- still in use -------------------------------------------------------------------
    Row {
        on: On::Kinds(&[Kind::Network]),
        case: Case::InUse,
        say: |f| {
            format!(
                "something still uses the network, named in the message: often a firewall rule or load balancer that GKE or Kubernetes created (`k8s-fw-…`, `k8s-…-node-hc`) and left behind; list them with `gcloud compute firewall-rules list --filter=network:{} --project {}`, delete them, then run destroy again",
                f.subject.cloud_name.as_deref().unwrap_or(&f.subject.name),
                f.project
            )
        },
    },
    Row {
        on: On::Kinds(&[Kind::Subnetwork]),
        case: Case::InUse,
        say: |_| {
            "the subnet is still used, by what the message names: a cluster's nodes, Cloud NAT, or a forwarding rule left by a Kubernetes load balancer; delete that (the cluster goes first), then run destroy again".into()
        },
    },
    Row {
        on: On::Kinds(&[Kind::ResourcePolicy]),
        case: Case::InUse,
        say: |_| {
            "VMs of a node pool still use the placement policy: delete the pool (or the cluster) first, then run destroy again".into()
        },
    },
    Row {
        on: On::Kinds(&[Kind::Bucket]),
        case: Case::InUse,
        say: |f| {
            format!(
                "the bucket still holds objects: empty it (`gcloud storage rm --recursive gs://{}/**`) or set `force_destroy = true` in its [[bucket]]",
                f.subject.name
            )
        },
    },
    Row {
        on: On::Any,
        case: Case::InUse,
        say: |_| {
            "another resource still uses it (the message names it): remove that first, then run a3ctl again".into()
        },
    },
    // ----- the rest -----------------------------------------------------------------------
    Row {
        on: On::GpuPool,
        case: Case::NotFound,
        say: |f| {
            if f.mentions("reservation") {
                format!(
                    "the reservation in {} does not exist in the pool's zone or project: check `reservation` (`gcloud compute reservations list --project {}`)",
                    f.subject.table(),
                    f.project
                )
            } else {
                "something the node pool refers to is gone (its cluster, a GPU subnet or its placement policy): run `a3ctl plan` to refresh, then apply".into()
            }
        },
    },
    Row {
        on: On::Any,
        case: Case::NotFound,
        say: |_| {
            "something it refers to is gone (deleted outside a3ctl?): run `a3ctl plan` to refresh, then apply".into()
        },
    },
    Row {
        on: On::Any,
        case: Case::Conflict,
        say: |_| {
            "it changed while a3ctl was updating it (its fingerprint or generation moved): run `a3ctl plan` to see it as it is now, then apply".into()
        },
    },
    Row {
        on: On::Any,
        case: Case::Busy,
        say: |f| {
            format!(
                "GKE runs one operation per cluster and another one (an upgrade, repair or resize) outlasted the retries: wait for it (`gcloud container operations list --region {} --project {}`), then apply again",
                f.region, f.project
            )
        },
    },
    Row {
        on: On::Any,
        case: Case::Transient,
        say: |_| {
            "the API kept failing with temporary errors after retries: run apply again; it continues where this run stopped".into()
        },
    },
];

/// The quota metric a GPU pool draws on: `NVIDIA_H100_GPUS` (A3 High), `NVIDIA_H100_MEGA_GPUS`
/// (A3 Mega), with the `PREEMPTIBLE_` prefix for Spot and flex-start pools.
fn gpu_metric(subject: &Subject) -> String {
    let base = match subject.accelerator.as_deref() {
        Some("nvidia-h100-mega-80gb") => "NVIDIA_H100_MEGA_GPUS".to_string(),
        Some("nvidia-h100-80gb") => "NVIDIA_H100_GPUS".to_string(),
        Some(other) => format!(
            "NVIDIA_{}_GPUS",
            other
                .trim_start_matches("nvidia-")
                .trim_start_matches("tesla-")
                .replace('-', "_")
                .to_ascii_uppercase()
        ),
        None => "GPUS_ALL_REGIONS".to_string(),
    };
    match subject.capacity.as_deref() {
        Some("spot" | "flex-start") => format!("PREEMPTIBLE_{base}"),
        _ => base,
    }
}

/// The quota metric a message names: `Quota 'NETWORKS' exceeded`, `resource "NVIDIA_H100_GPUS"`,
/// `quota 'CPUS' exceeded` — the first quoted all-caps name.
pub fn quota_metric(message: &str) -> Option<String> {
    let mut rest = message;
    while let Some(start) = rest.find(['\'', '"']) {
        let quote = rest[start..].chars().next()?;
        let after = &rest[start + 1..];
        let end = after.find(quote)?;
        let word = &after[..end];
        if word.len() >= 4
            && word.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && word
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        {
            return Some(word.to_string());
        }
        // Not a name: the closing quote may open the next one (an apostrophe opened this).
        rest = after;
    }
    None
}

/// The service a disabled-API message names (`…/apis/api/compute.googleapis.com/overview…`),
/// or the one of the subject's kind.
fn api_service(f: &Facts) -> Option<String> {
    let message = &f.error.message;
    if let Some(i) = message.find("/apis/api/") {
        let rest = &message[i + "/apis/api/".len()..];
        let service: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
            .collect();
        if service.ends_with(".googleapis.com") {
            return Some(service);
        }
    }
    if let Some(service) = message
        .split(|c: char| c.is_whitespace() || c == '\'' || c == '"' || c == '/')
        .find(|w| w.ends_with(".googleapis.com"))
    {
        return Some(service.to_string());
    }
    let service = f.subject.kind?.info().service?;
    Some(service.to_string())
}

/// The project a message names (`?project=P`, `project P`), for a subject that does not say.
fn project_in(message: &str) -> Option<String> {
    let word = |rest: &str| -> Option<String> {
        let w: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        (!w.is_empty()).then_some(w)
    };
    if let Some(i) = message.find("project=") {
        return word(&message[i + "project=".len()..]);
    }
    message
        .find("in project ")
        .and_then(|i| word(&message[i + "in project ".len()..]))
}

/// The table's hint for `error` about `subject`, if a row matches.
pub fn hint(subject: &Subject, error: &CloudError) -> Option<String> {
    // Kubernetes errors have their own hints (`crate::cloud::kube::errors`).
    if subject.kind == Some(Kind::Kubernetes) {
        return None;
    }
    let case = case_of(error);
    let row = ROWS
        .iter()
        .find(|r| r.case == case && r.on.matches(subject))?;
    let facts = Facts {
        subject,
        error,
        metric: quota_metric(&error.message),
        project: subject
            .project
            .clone()
            .or_else(|| project_in(&error.message))
            .unwrap_or_else(|| "PROJECT".into()),
        region: subject.region().unwrap_or_else(|| "the region".into()),
        lower: error.message.to_ascii_lowercase(),
    };
    Some((row.say)(&facts))
}

/// `error` with the hint for `subject`: the resource's row replaces the kind-less hint of the
/// cases only the table words ([`Case::table_owned`]); otherwise an adapter's own hint stays and
/// the table only fills a missing one.
pub fn refine(subject: &Subject, mut error: CloudError) -> CloudError {
    if subject.kind == Some(Kind::Kubernetes) {
        return error;
    }
    let case = case_of(&error);
    if (error.hint.is_none() || case.table_owned())
        && let Some(h) = hint(subject, &error)
    {
        error.hint = Some(h);
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::gcp::classify_status;
    use crate::resource::{Addr, Lifecycle};
    use serde_json::json;

    fn target(kind: Kind, name: &str, id: &str, spec: Value) -> Target {
        Target {
            addr: Addr::new(kind, name),
            id: id.into(),
            spec,
            outputs: Value::Null,
            context: Default::default(),
            lifecycle: Lifecycle::default(),
        }
    }

    /// A GPU pool as `crate::graph::build` specifies it.
    fn gpu_pool(capacity: &str, reservation: Option<&str>) -> Subject {
        Subject::of(&target(
            Kind::NodePool,
            "a3mega",
            "projects/p/locations/us-central1/clusters/a3mega/nodePools/a3mega",
            json!({
                "cluster": "a3mega", "location": "us-central1", "name": "a3mega",
                "machine_type": "a3-megagpu-8g", "locations": ["us-central1-a"], "node_count": 4,
                "accelerator": {"type": "nvidia-h100-mega-80gb", "count": 8, "driver": "DEFAULT"},
                "capacity": capacity,
                "reservation": reservation.map(|r| json!({"name": r, "block": null})),
            }),
        ))
    }

    fn system_pool() -> Subject {
        Subject::of(&target(
            Kind::NodePool,
            "system",
            "projects/p/locations/us-central1/clusters/a3mega/nodePools/system",
            json!({"location": "us-central1", "machine_type": "e2-standard-4", "locations": ["us-central1-a"],
                   "node_count": 2, "accelerator": null, "capacity": "on-demand", "reservation": null}),
        ))
    }

    fn filestore() -> Subject {
        Subject::of(&target(
            Kind::Filestore,
            "shared",
            "projects/p/locations/us-central1-a/instances/a3mega-fs",
            json!({"name": "a3mega-fs", "location": "us-central1-a", "tier": "BASIC_SSD", "capacity_gb": 2560}),
        ))
    }

    fn of(kind: Kind, name: &str) -> Subject {
        let id = match kind {
            Kind::Bucket => format!("projects/_/buckets/{name}"),
            Kind::Network => format!("projects/p/global/networks/{name}"),
            _ => format!("projects/p/regions/us-central1/x/{name}"),
        };
        Subject::of(&target(kind, name, &id, json!({"region": "us-central1"})))
    }

    fn e(http: u16, status: &str, reason: &str, message: &str) -> CloudError {
        classify_status(Some(http), status, reason, message)
    }

    fn quota(metric: &str) -> CloudError {
        e(
            403,
            "QUOTA_EXCEEDED",
            "quotaExceeded",
            &format!("Quota '{metric}' exceeded.  Limit: 15.0 globally."),
        )
    }

    /// The simulator's (and Filestore's) storage quota answer, as the Filestore adapter
    /// reclassifies it.
    fn filestore_quota() -> CloudError {
        e(
            429,
            "RESOURCE_EXHAUSTED",
            "quotaExceeded",
            "Quota limit for BASIC_SSD storage (GB) per region has been exceeded for this project.",
        )
    }

    fn gke_gpu_quota() -> CloudError {
        e(
            403,
            "PERMISSION_DENIED",
            "forbidden",
            "Insufficient regional quota to satisfy request: resource \"NVIDIA_H100_MEGA_GPUS\": request requires '32.0' and is short '32.0'. project has a quota of '0.0' with '0.0' available. View and manage quotas at https://console.cloud.google.com/iam-admin/quotas?usage=USED&project=p.",
        )
    }

    fn stockout() -> CloudError {
        classify_status(
            None,
            "GCE_STOCKOUT",
            "",
            "[GCE_STOCKOUT]: Instance 'gke-x' creation failed: The zone 'projects/p/zones/us-central1-a' does not have enough resources available to fulfill the request.",
        )
    }

    fn denied() -> CloudError {
        e(
            403,
            "PERMISSION_DENIED",
            "forbidden",
            "Required 'compute.networks.create' permission for 'projects/p'",
        )
    }

    fn invalid(message: &str) -> CloudError {
        e(400, "INVALID_ARGUMENT", "badRequest", message)
    }

    fn in_use(message: &str) -> CloudError {
        e(
            400,
            "FAILED_PRECONDITION",
            "resourceInUseByAnotherResource",
            message,
        )
    }

    /// One case per row of [`ROWS`], in table order: the subject, the error, words the hint must
    /// carry, and words it must not.
    fn cases() -> Vec<(
        Subject,
        CloudError,
        &'static [&'static str],
        &'static [&'static str],
    )> {
        vec![
            // Quota.
            (
                filestore(),
                filestore_quota(),
                &[
                    "Filestore",
                    "BASIC_SSD",
                    "us-central1",
                    "[filestore]",
                    "capacity_gb",
                    "tier",
                    "filestore/docs/limits",
                    "quotas?project=p",
                ],
                &["node"],
            ),
            (
                gpu_pool("on-demand", None),
                gke_gpu_quota(),
                &[
                    "NVIDIA_H100_MEGA_GPUS",
                    "us-central1",
                    "32 GPUs",
                    "reservation",
                    "[[gpu_pool]] `a3mega`",
                    "`nodes`",
                    "gpu_quota",
                ],
                &[],
            ),
            (
                system_pool(),
                e(
                    403,
                    "QUOTA_EXCEEDED",
                    "quotaExceeded",
                    "Quota 'CPUS' exceeded.  Limit: 24.0 in region us-central1.",
                ),
                &["CPUS", "[system_pool]", "machine_type"],
                &["GPU"],
            ),
            (
                of(Kind::Cluster, "main"),
                e(
                    403,
                    "QUOTA_EXCEEDED",
                    "quotaExceeded",
                    "Insufficient regional quota to satisfy request: resource \"IN_USE_ADDRESSES\"",
                ),
                &["IN_USE_ADDRESSES", "kubernetes-engine/quotas"],
                &[],
            ),
            (
                of(Kind::Network, "gpu-3"),
                quota("NETWORKS"),
                &["NETWORKS", "networks list", "vpc/docs/quota"],
                &["node"],
            ),
            (
                of(Kind::Subnetwork, "gpu-3"),
                quota("SUBNETWORKS"),
                &["SUBNETWORKS", "vpc/docs/quota"],
                &["node"],
            ),
            (
                of(Kind::Firewall, "gpu-3-internal"),
                quota("FIREWALLS"),
                &["FIREWALLS", "firewall-rules list"],
                &["node"],
            ),
            (
                of(Kind::Router, "primary"),
                quota("ROUTERS"),
                &["ROUTERS", "router/quotas", "`nat`"],
                &["node"],
            ),
            (
                of(Kind::ResourcePolicy, "a3mega"),
                quota("RESOURCE_POLICIES"),
                &["RESOURCE_POLICIES", "compact"],
                &["node"],
            ),
            (
                of(Kind::Repository, "images"),
                e(
                    429,
                    "RESOURCE_EXHAUSTED",
                    "quotaExceeded",
                    "Quota exceeded: repositories per project",
                ),
                &["Artifact Registry", "artifact-registry/quotas"],
                &["node"],
            ),
            (
                of(Kind::Bucket, "data"),
                e(
                    403,
                    "",
                    "quotaExceeded",
                    "The project exceeded the quota for buckets.",
                ),
                &["bucket", "storage/quotas"],
                &["node"],
            ),
            (
                Subject::default(),
                quota("NVIDIA_H100_GPUS"),
                &["NVIDIA_H100_GPUS", "gpu_quota", "iam-admin/quotas"],
                &["node count"],
            ),
            // Rate limits that outlasted the retries.
            (
                of(Kind::Bucket, "data"),
                e(
                    429,
                    "",
                    "rateLimitExceeded",
                    "The project exceeded the rate limit for creating and deleting buckets.",
                ),
                &["2 seconds", "storage/quotas"],
                &[],
            ),
            (
                of(Kind::Repository, "images"),
                e(
                    429,
                    "RESOURCE_EXHAUSTED",
                    "rateLimitExceeded",
                    "Quota exceeded for quota metric 'Repository create requests' and limit 'Repository create requests per minute per project'",
                ),
                &["2 seconds", "artifact-registry/quotas"],
                &[],
            ),
            (
                of(Kind::Network, "gpu-0"),
                e(
                    429,
                    "RESOURCE_EXHAUSTED",
                    "rateLimitExceeded",
                    "Rate Limit Exceeded",
                ),
                &["rate limit", "apply again"],
                &[],
            ),
            // Stockouts.
            (
                gpu_pool("on-demand", None),
                stockout(),
                &[
                    "us-central1-a",
                    "a3-megagpu-8g",
                    "reservation",
                    "flex-start",
                    "zone",
                    "troubleshooting-resource-availability",
                ],
                &["request more"],
            ),
            (
                system_pool(),
                stockout(),
                &["[system_pool]", "machine_type"],
                &["flex-start"],
            ),
            (
                filestore(),
                e(
                    429,
                    "RESOURCE_EXHAUSTED",
                    "",
                    "The zone does not have enough resources available to fulfill the request. Try a different zone, or try again later.",
                ),
                &["Filestore", "BASIC_SSD", "tier"],
                &["node"],
            ),
            (
                Subject::default(),
                stockout(),
                &["reservation", "another zone"],
                &[],
            ),
            // Permissions and disabled APIs.
            (
                of(Kind::Network, "gpu-0"),
                e(
                    403,
                    "PERMISSION_DENIED",
                    "SERVICE_DISABLED",
                    "Compute Engine API has not been used in project 123 before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/compute.googleapis.com/overview?project=123 then retry.",
                ),
                &["gcloud services enable compute.googleapis.com --project p"],
                &["roles/"],
            ),
            (
                of(Kind::Subnetwork, "gpu-0"),
                denied(),
                &[
                    "roles/compute.networkAdmin",
                    "gcloud auth application-default login",
                ],
                &[],
            ),
            (
                of(Kind::Firewall, "gpu-0-internal"),
                denied(),
                &["roles/compute.securityAdmin"],
                &[],
            ),
            (
                of(Kind::ResourcePolicy, "a3mega"),
                denied(),
                &["compute.resourcePolicies", "roles/compute.admin"],
                &[],
            ),
            (
                gpu_pool("on-demand", None),
                denied(),
                &["roles/container.admin", "roles/iam.serviceAccountUser"],
                &[],
            ),
            (filestore(), denied(), &["roles/file.editor"], &[]),
            (
                of(Kind::Repository, "images"),
                denied(),
                &["roles/artifactregistry.admin"],
                &[],
            ),
            (
                of(Kind::Bucket, "data"),
                e(
                    403,
                    "",
                    "forbidden",
                    "a3@p.iam.gserviceaccount.com does not have storage.buckets.create access",
                ),
                &["roles/storage.admin"],
                &[],
            ),
            (
                Subject::default(),
                denied(),
                &["roles/", "gcloud auth application-default login"],
                &[],
            ),
            // Invalid arguments: the blueprint field.
            (
                filestore(),
                invalid("capacity_gb must be at least 2560 for tier BASIC_SSD"),
                &["`capacity_gb`", "[filestore]"],
                &[],
            ),
            (
                gpu_pool("reservation", Some("h100s")),
                invalid("Reservation 'h100s' is not compatible with machine type"),
                &["`reservation`", "[[gpu_pool]] `a3mega`"],
                &[],
            ),
            (
                system_pool(),
                invalid("Invalid value for field 'machineType'"),
                &["[system_pool]", "`machine_type`"],
                &[],
            ),
            (
                of(Kind::Cluster, "main"),
                invalid("Master version \"1.20\" is unsupported."),
                &["`version`", "[cluster]"],
                &[],
            ),
            (
                of(Kind::Subnetwork, "gpu-1"),
                invalid(
                    "Invalid IPCidrRange: 192.168.1.0/24 conflicts with existing subnetwork 'x'",
                ),
                &["[network]", "gpu_range"],
                &[],
            ),
            (
                of(Kind::Network, "primary"),
                invalid("Invalid value for field 'resource.mtu': '9001'"),
                &["`gpu_mtu`", "[network]"],
                &[],
            ),
            (
                of(Kind::Router, "primary"),
                invalid("Invalid value for field 'resource.nats[0]'"),
                &["`nat`", "[network]"],
                &[],
            ),
            (
                of(Kind::Firewall, "primary-internal"),
                invalid("Invalid value for field 'resource.sourceRanges[0]'"),
                &["[network]"],
                &[],
            ),
            (
                of(Kind::ResourcePolicy, "a3mega"),
                invalid("Invalid value for field 'resource.groupPlacementPolicy'"),
                &["`placement`", "`a3mega`"],
                &[],
            ),
            (
                of(Kind::Repository, "images"),
                invalid("Invalid repository format"),
                &["[[artifact_registry]] `images`", "`format`"],
                &[],
            ),
            (
                of(Kind::Bucket, "data"),
                invalid("Invalid bucket name: 'Data'"),
                &["[[bucket]] `data`", "`name`"],
                &[],
            ),
            // Still in use.
            // The gcloud filter names the network as the cloud knows it (`a3mega-gpunet-1`),
            // not by its blueprint address (`gpu-1`), which would list nothing.
            (
                Subject::of(&target(
                    Kind::Network,
                    "gpu-1",
                    "projects/p/global/networks/a3mega-gpunet-1",
                    json!({"name": "a3mega-gpunet-1"}),
                )),
                in_use(
                    "The network resource 'projects/p/global/networks/a3mega-gpunet-1' is already being used by 'projects/p/global/firewalls/k8s-fw-x'",
                ),
                &["k8s-fw", "--filter=network:a3mega-gpunet-1 ", "destroy"],
                &["network:gpu-1"],
            ),
            (
                of(Kind::Subnetwork, "primary"),
                in_use(
                    "The subnetwork resource is already being used by 'projects/p/regions/us-central1/routers/r'",
                ),
                &["NAT", "cluster"],
                &[],
            ),
            (
                of(Kind::ResourcePolicy, "a3mega"),
                in_use("The resource_policy resource is already being used by 'instances/gke-x'"),
                &["placement policy", "pool"],
                &[],
            ),
            (
                of(Kind::Bucket, "data"),
                e(
                    409,
                    "",
                    "conflict",
                    "The bucket you tried to delete is not empty.",
                ),
                &["gs://data", "force_destroy"],
                &[],
            ),
            (
                of(Kind::Filestore, "shared"),
                in_use("The instance is already being used by a backup"),
                &["another resource", "first"],
                &[],
            ),
            // The rest.
            (
                gpu_pool("reservation", Some("h100s")),
                e(
                    404,
                    "NOT_FOUND",
                    "notFound",
                    "The resource 'projects/p/zones/us-central1-a/reservations/h100s' was not found",
                ),
                &["`reservation`", "reservations list"],
                &[],
            ),
            (
                of(Kind::Subnetwork, "gpu-0"),
                e(
                    404,
                    "NOT_FOUND",
                    "notFound",
                    "The resource 'projects/p/global/networks/x' was not found",
                ),
                &["a3ctl plan"],
                &[],
            ),
            (
                of(Kind::Bucket, "data"),
                e(
                    412,
                    "FAILED_PRECONDITION",
                    "conditionNotMet",
                    "Precondition Failed",
                ),
                &["a3ctl plan", "apply"],
                &[],
            ),
            (
                gpu_pool("on-demand", None),
                e(
                    400,
                    "FAILED_PRECONDITION",
                    "failedPrecondition",
                    "Cluster is running incompatible operation operation-1.",
                ),
                &[
                    "one operation per cluster",
                    "container operations list --region us-central1",
                ],
                &[],
            ),
            (
                of(Kind::Filestore, "shared"),
                e(503, "UNAVAILABLE", "backendError", "Backend Error"),
                &["apply again"],
                &[],
            ),
        ]
    }

    #[test]
    fn every_row_answers_its_kind_and_case() {
        let cases = cases();
        assert_eq!(cases.len(), ROWS.len(), "one case per row");
        for (i, (subject, error, must, must_not)) in cases.iter().enumerate() {
            let case = case_of(error);
            let row = ROWS
                .iter()
                .position(|r| r.case == case && r.on.matches(subject));
            assert_eq!(
                row,
                Some(i),
                "case {i}: {:?} {case:?}: {}",
                subject.kind,
                error.message
            );
            let text = hint(subject, error).unwrap();
            for word in *must {
                assert!(text.contains(word), "case {i}: {word:?} not in {text:?}");
            }
            for word in *must_not {
                assert!(
                    !text.to_lowercase().contains(&word.to_lowercase()),
                    "case {i}: {word:?} in {text:?}"
                );
            }
        }
    }

    #[test]
    fn a_filestore_quota_error_speaks_of_filestore_not_node_counts() {
        // The defect as filed: the hint said "... or reduce the node count".
        let error = refine(&filestore(), filestore_quota());
        assert_eq!(error.class, ErrorClass::Quota);
        let text = error.hint.unwrap();
        assert!(text.contains("Filestore"), "{text}");
        assert!(!text.to_lowercase().contains("node"), "{text}");
        // Even the kind-less hint (before the provider names the resource) no longer does.
        let bare = filestore_quota().hint.unwrap();
        assert!(!bare.to_lowercase().contains("node count"), "{bare}");
    }

    #[test]
    fn a_gpu_pool_hint_follows_its_capacity_mode() {
        let quota = |capacity| {
            let error = e(403, "QUOTA_EXCEEDED", "quotaExceeded", "Insufficient quota");
            hint(&gpu_pool(capacity, None), &error).unwrap()
        };
        // No metric in the message: the pool's own, preemptible for Spot and flex-start.
        assert!(quota("on-demand").contains("NVIDIA_H100_MEGA_GPUS in us-central1"));
        assert!(quota("spot").contains("PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS"));
        assert!(quota("flex-start").contains("PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS"));
        let reserved = hint(&gpu_pool("reservation", Some("h100s")), &stockout()).unwrap();
        assert!(
            reserved.contains("reservation `h100s`")
                && reserved.contains("reservations describe h100s"),
            "{reserved}"
        );
        let flex = hint(&gpu_pool("flex-start", None), &stockout()).unwrap();
        assert!(
            flex.contains("flex-start") && !flex.contains("`capacity = \"flex-start\"`"),
            "{flex}"
        );
        let high = Subject {
            accelerator: Some("nvidia-h100-80gb".into()),
            ..gpu_pool("on-demand", None)
        };
        assert_eq!(gpu_metric(&high), "NVIDIA_H100_GPUS");
    }

    #[test]
    fn the_provider_replaces_generic_hints_and_keeps_an_adapters_own() {
        // A quota: the kind-less hint gives way to the resource's.
        let refined = refine(&of(Kind::Network, "gpu-3"), quota("NETWORKS"));
        assert!(refined.hint.unwrap().contains("VPC network quota"));
        // An adapter's own hint for a case the table only fills stays.
        let own = in_use("not empty").with_hint("the adapter knows better");
        assert_eq!(
            refine(&of(Kind::Bucket, "b"), own).hint.unwrap(),
            "the adapter knows better"
        );
        // Kubernetes objects keep the hints of the Kubernetes classifier.
        let kube = denied().with_hint("kube's own");
        assert_eq!(
            refine(&Subject::kind(Kind::Kubernetes), kube).hint.unwrap(),
            "kube's own"
        );
        // An operation polled after a restart: its API's kind, when the API has one.
        let polled = refine(&Subject::of_api(Api::Filestore), filestore_quota());
        assert!(polled.hint.unwrap().contains("Filestore"));
        let compute = refine(&Subject::of_api(Api::Compute), quota("FIREWALLS"));
        assert!(compute.hint.unwrap().contains("FIREWALLS"));
    }

    #[test]
    fn quota_metrics_and_places_are_read_from_messages() {
        assert_eq!(
            quota_metric("Quota 'NETWORKS' exceeded.").as_deref(),
            Some("NETWORKS")
        );
        assert_eq!(
            quota_metric("the project's quota 'CPUS' exceeded").as_deref(),
            Some("CPUS")
        );
        assert_eq!(
            quota_metric("resource \"NVIDIA_H100_GPUS\": request requires '8.0'").as_deref(),
            Some("NVIDIA_H100_GPUS")
        );
        assert_eq!(quota_metric("Quota limit for BASIC_SSD storage (GB)"), None);
        assert_eq!(region_of("us-central1-a"), "us-central1");
        assert_eq!(region_of("us-central1"), "us-central1");
        assert_eq!(region_of("europe-west4-b"), "europe-west4");
        assert_eq!(
            project_in("visiting https://x/apis/api/file.googleapis.com/overview?project=123 then")
                .as_deref(),
            Some("123")
        );
    }
}
