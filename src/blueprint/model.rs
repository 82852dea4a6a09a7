//! The validated blueprint: plain data with every default applied, and no spans.
//!
//! [`super::validate`] produces it from the spanned [`super::schema`] tree; later stages (the
//! resource graph, the planner) consume it and may assume every rule in `docs/blueprint.md`
//! holds. Serde derives let the state file embed the blueprint it was applied from.

use std::path::PathBuf;

use ipnet::Ipv4Net;
use serde::{Deserialize, Serialize};

use super::families::{GpuDirect, MachineFamily, NetworkMode};
use super::versions::VersionSpec;

/// A validated blueprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blueprint {
    /// Deployment name: the GKE cluster name and the prefix of every resource name.
    pub name: String,
    /// GCP project id.
    pub project: String,
    /// Region of the cluster, its subnets, buckets and repositories.
    pub region: String,
    /// Default zone: GPU pools, the system pool and zonal Filestore live here.
    pub zone: String,
    /// Enable the Google APIs the deployment calls before anything else (never disabled).
    #[serde(default)]
    pub enable_services: bool,
    /// The machine family shared by every GPU pool.
    pub family: MachineFamily,
    pub network: Network,
    pub cluster: Cluster,
    pub system_pool: SystemPool,
    /// At least one.
    pub gpu_pools: Vec<GpuPool>,
    pub filestore: Option<Filestore>,
    pub artifact_registries: Vec<ArtifactRegistry>,
    pub buckets: Vec<Bucket>,
    pub software: Software,
    #[serde(default)]
    pub identity: Identity,
    pub state: StateBackend,
    /// The Kueue queues teams use (`[[queue]]`); none: one queue for every GPU (`[software.kueue]
    /// queue`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<Queue>,
    /// The Kueue WorkloadPriorityClasses jobs select with the `kueue.x-k8s.io/priority-class`
    /// label (`[[priority]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub priorities: Vec<Priority>,
}

/// Who the nodes and the workloads are to Google Cloud (`[identity]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Identity {
    pub node_account: NodeAccount,
    /// Project roles of the nodes' account (a3ctl grants them only to an account it creates).
    pub node_roles: Vec<String>,
    /// Kubernetes service accounts whose pods read and write the mounted buckets.
    pub workloads: Vec<Workload>,
}

/// The nodes' service account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeAccount {
    /// Created and granted `node_roles` by a3ctl: `ACCOUNT_ID@PROJECT.iam.gserviceaccount.com`.
    Create { account_id: String },
    /// An existing account, used as it is.
    Existing { email: String },
}

impl Default for NodeAccount {
    /// The Compute Engine default account, for blueprints saved before `[identity]` existed.
    fn default() -> Self {
        NodeAccount::Existing {
            email: "default".into(),
        }
    }
}

impl NodeAccount {
    /// The email node pools name (`default` for the Compute Engine default account).
    pub fn email(&self, project: &str) -> String {
        match self {
            NodeAccount::Create { account_id } => {
                crate::resource::kinds::service_account::email(account_id, project)
            }
            NodeAccount::Existing { email } => email.clone(),
        }
    }
}

/// A Kubernetes service account (`namespace/name`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workload {
    pub namespace: String,
    pub name: String,
}

/// Address ranges and VPC settings. `gpu_subnets` always has one entry per GPU NIC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Network {
    /// Primary subnet (node IPs).
    pub primary_subnet: Ipv4Net,
    /// Pods secondary range on the primary subnet.
    pub pods: Ipv4Net,
    /// Services secondary range on the primary subnet.
    pub services: Ipv4Net,
    /// Range the GPU subnets were carved from (informational when `gpu_subnets` was explicit).
    pub gpu_range: Ipv4Net,
    /// Prefix length of each carved GPU subnet.
    pub gpu_subnet_prefix: u8,
    /// Who creates the GPU networks: a3ctl (`explicit`) or GKE (`managed`, A3 Ultra and A4).
    #[serde(default = "explicit")]
    pub mode: NetworkMode,
    /// The GPU subnets a3ctl creates, in order: one per gVNIC GPU VPC (4 for A3 High, 8 for A3
    /// Mega, 1 for A3 Ultra and A4), then the RDMA VPC's subnets (8 for A3 Ultra and A4). Empty
    /// in managed mode.
    pub gpu_subnets: Vec<Ipv4Net>,
    /// MTU of every GPU VPC (8244 for TCPX/TCPXO, 8896 for RDMA).
    pub gpu_mtu: u32,
    /// An allow-internal firewall rule on every gVNIC GPU VPC (a RoCE VPC never has one).
    #[serde(default = "yes")]
    pub gpu_firewall: bool,
    /// MTU of the primary VPC.
    pub primary_mtu: u32,
    /// Cloud Router + Cloud NAT on the primary VPC.
    pub nat: bool,
    /// The /28 of the GKE control plane's private endpoint.
    pub master_ipv4_cidr: Ipv4Net,
    /// The number the first GPU VPC's cloud name ends with (`<name>-gpunet-<n>`): 1, as Google's
    /// guides and the in-cluster names (`vpc1`, `eth1`) count. Not a blueprint key: 0 for a
    /// deployment an earlier a3ctl created with names from 0, read from its state
    /// ([`crate::state::State::gpu_name_base`]), so its plan stays empty.
    pub gpu_name_base: usize,
}

fn explicit() -> NetworkMode {
    NetworkMode::Explicit
}

fn yes() -> bool {
    true
}

impl Network {
    /// The cloud name of the `i`-th GPU VPC (0-based position): `<name>-gpunet-<i + base>`.
    pub fn gpu_vpc_name(&self, deployment: &str, i: usize) -> String {
        format!("{deployment}-gpunet-{}", i + self.gpu_name_base)
    }
}

/// GKE release channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReleaseChannel {
    Rapid,
    Regular,
    Stable,
    Extended,
}

impl ReleaseChannel {
    pub const NAMES: [&'static str; 4] = ["rapid", "regular", "stable", "extended"];

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "rapid" => Some(Self::Rapid),
            "regular" => Some(Self::Regular),
            "stable" => Some(Self::Stable),
            "extended" => Some(Self::Extended),
            _ => None,
        }
    }

    /// The GKE API enum value.
    pub fn api_value(self) -> &'static str {
        match self {
            Self::Rapid => "RAPID",
            Self::Regular => "REGULAR",
            Self::Stable => "STABLE",
            Self::Extended => "EXTENDED",
        }
    }
}

/// GKE cluster settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    pub release_channel: ReleaseChannel,
    /// Requested version; resolved against GKE's serverConfig by a later stage.
    pub version: VersionSpec,
    pub private_nodes: bool,
    /// Master authorized networks; empty means the feature is off (the endpoint is reachable
    /// from anywhere, still behind IAM).
    pub authorized_networks: Vec<AuthorizedNetwork>,
    /// `deletion_protection` as written; `None` when the key is absent, which means on
    /// ([`Cluster::deletion_protection`]) except in the sandbox.
    pub deletion_protection: Option<bool>,
    pub prevent_destroy: bool,
    /// The maintenance policy a3ctl manages (`[cluster.maintenance]`, or the GPU default);
    /// `None`: not managed (a deployment whose state predates the setting and whose blueprint
    /// does not declare it; see `commands::session`).
    #[serde(default)]
    pub maintenance: Option<Maintenance>,
}

/// `[cluster.maintenance]` with its defaults applied. Times are RFC 3339 in UTC
/// (`2026-01-03T02:00:00Z`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Maintenance {
    /// The recurring window in which GKE may carry out automatic maintenance; `None`: any time.
    pub window: Option<MaintenanceWindow>,
    /// The exclusions, the GPU default first (unless `default_exclusion = false`).
    pub exclusions: Vec<MaintenanceExclusion>,
    /// Whether the blueprint has the table (an older deployment without it is left as it is).
    pub declared: bool,
}

/// GKE's `recurringWindow`: the first occurrence and how it repeats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaintenanceWindow {
    pub start: String,
    pub end: String,
    /// An RFC 5545 RRULE (`FREQ=WEEKLY;BYDAY=SA,SU`).
    pub recurrence: String,
}

/// A maintenance exclusion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaintenanceExclusion {
    pub name: String,
    pub scope: ExclusionScope,
    /// `None`: when it is applied (only with `until_end_of_support`).
    pub start: Option<String>,
    /// `None` with `until_end_of_support` (GKE sets it to the version's end of support).
    pub end: Option<String>,
    pub until_end_of_support: bool,
}

/// What an exclusion holds back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExclusionScope {
    NoUpgrades,
    NoMinorUpgrades,
    NoMinorOrNodeUpgrades,
}

impl ExclusionScope {
    pub const NAMES: [&'static str; 3] = [
        "no_upgrades",
        "no_minor_upgrades",
        "no_minor_or_node_upgrades",
    ];

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "no_upgrades" => Some(Self::NoUpgrades),
            "no_minor_upgrades" => Some(Self::NoMinorUpgrades),
            "no_minor_or_node_upgrades" => Some(Self::NoMinorOrNodeUpgrades),
            _ => None,
        }
    }

    /// The GKE API enum value (`maintenanceExclusionOptions.scope`).
    pub fn api_value(self) -> &'static str {
        match self {
            Self::NoUpgrades => "NO_UPGRADES",
            Self::NoMinorUpgrades => "NO_MINOR_UPGRADES",
            Self::NoMinorOrNodeUpgrades => "NO_MINOR_OR_NODE_UPGRADES",
        }
    }
}

/// How GKE upgrades a node pool's nodes (`[gpu_pool.upgrade]`, `[system_pool.upgrade]`), with
/// the defaults for the pool's capacity applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Upgrade {
    pub strategy: UpgradeStrategy,
    /// Extra nodes created during a surge upgrade.
    pub max_surge: u32,
    /// Nodes that may be down at once during a surge upgrade.
    pub max_unavailable: u32,
    /// Only with the blue-green strategy.
    pub blue_green: Option<BlueGreen>,
    /// Whether the blueprint has the table (an older deployment without it is left as it is).
    pub declared: bool,
}

/// The surge or blue-green strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpgradeStrategy {
    Surge,
    BlueGreen,
}

impl UpgradeStrategy {
    pub const NAMES: [&'static str; 2] = ["surge", "blue-green"];

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "surge" => Some(Self::Surge),
            "blue-green" => Some(Self::BlueGreen),
            _ => None,
        }
    }

    /// The GKE API enum value (`upgradeSettings.strategy`).
    pub fn api_value(self) -> &'static str {
        match self {
            Self::Surge => "SURGE",
            Self::BlueGreen => "BLUE_GREEN",
        }
    }
}

/// Blue-green batches: how many nodes are drained at a time and how long to wait.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlueGreen {
    /// Nodes per batch (exclusive with `batch_percent`).
    pub batch_nodes: Option<u32>,
    /// Percent of the pool per batch.
    pub batch_percent: Option<u32>,
    pub batch_soak_secs: u64,
    pub pool_soak_secs: u64,
}

impl Cluster {
    /// Whether a3ctl refuses to delete or replace the cluster and its Filestore instance, and
    /// turns on Filestore's own `deletionProtectionEnabled`: on unless the blueprint says
    /// `deletion_protection = false`. GKE's API has no such setting; like the Terraform provider's
    /// `deletion_protection` of `google_container_cluster`, it is a3ctl's own, kept in state.
    pub fn deletion_protection(&self) -> bool {
        self.deletion_protection.unwrap_or(true)
    }
}

/// One master authorized network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorizedNetwork {
    pub cidr: Ipv4Net,
    pub name: Option<String>,
}

/// The CPU pool for system and controller workloads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemPool {
    pub name: String,
    pub machine_type: String,
    pub nodes: u32,
    /// `None`: not managed (see [`Cluster::maintenance`]).
    #[serde(default)]
    pub upgrade: Option<Upgrade>,
    /// The pool's GKE version; `None` follows the control plane's (`[cluster] version`).
    #[serde(default)]
    pub version: Option<VersionSpec>,
}

/// How a GPU pool gets its capacity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Capacity {
    /// A specific reservation, optionally one block of it.
    Reservation {
        reservation: String,
        block: Option<String>,
    },
    OnDemand,
    Spot,
    /// Dynamic Workload Scheduler flex-start; the pool may start at 0 nodes.
    FlexStart,
}

impl Capacity {
    pub const NAMES: [&'static str; 4] = ["reservation", "on-demand", "spot", "flex-start"];
}

/// Node placement of a GPU pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// COMPACT placement policy (single zone).
    Compact,
    None,
}

/// One GPU node pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuPool {
    pub name: String,
    pub family: MachineFamily,
    /// Zones of the pool; exactly one with compact placement. Defaults to the blueprint's zone.
    pub zones: Vec<String>,
    /// Static node count.
    pub nodes: u32,
    pub capacity: Capacity,
    pub placement: Placement,
    pub prevent_destroy: bool,
    /// `None`: not managed (see [`Cluster::maintenance`]).
    #[serde(default)]
    pub upgrade: Option<Upgrade>,
    /// The pool's GKE version; `None` follows the control plane's (`[cluster] version`).
    #[serde(default)]
    pub version: Option<VersionSpec>,
}

impl GpuPool {
    /// The GCE machine type.
    pub fn machine_type(&self) -> &'static str {
        self.family.machine_type()
    }

    /// GPUs in the pool at its declared size.
    pub fn gpus(&self) -> u32 {
        self.nodes * self.family.gpus_per_node()
    }
}

/// Filestore service tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FilestoreTier {
    BasicHdd,
    BasicSsd,
    HighScaleSsd,
    Zonal,
    Regional,
    Enterprise,
}

impl FilestoreTier {
    pub const NAMES: [&'static str; 6] = [
        "BASIC_HDD",
        "BASIC_SSD",
        "HIGH_SCALE_SSD",
        "ZONAL",
        "REGIONAL",
        "ENTERPRISE",
    ];

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "BASIC_HDD" => Some(Self::BasicHdd),
            "BASIC_SSD" => Some(Self::BasicSsd),
            "HIGH_SCALE_SSD" => Some(Self::HighScaleSsd),
            "ZONAL" => Some(Self::Zonal),
            "REGIONAL" => Some(Self::Regional),
            "ENTERPRISE" => Some(Self::Enterprise),
            _ => None,
        }
    }

    /// The API enum value.
    pub fn api_value(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// Allowed capacity in GiB, inclusive.
    pub fn capacity_range(self) -> (u32, u32) {
        match self {
            Self::BasicHdd => (1024, 65433),
            Self::BasicSsd => (2560, 65433),
            Self::HighScaleSsd => (10240, 102400),
            Self::Zonal | Self::Regional => (1024, 102400),
            Self::Enterprise => (1024, 10240),
        }
    }

    /// Whether the instance lives in a region rather than a zone.
    pub fn is_regional(self) -> bool {
        matches!(self, Self::Regional | Self::Enterprise)
    }
}

/// A Filestore instance mounted by workloads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filestore {
    pub tier: FilestoreTier,
    pub capacity_gb: u32,
    pub share: String,
    /// The blueprint's zone, or its region for REGIONAL and ENTERPRISE.
    pub location: String,
    pub prevent_destroy: bool,
}

/// Artifact Registry repository format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RepositoryFormat {
    Docker,
    Python,
    Npm,
    Maven,
    Apt,
    Yum,
    Go,
    Generic,
}

impl RepositoryFormat {
    pub const NAMES: [&'static str; 8] = [
        "docker", "python", "npm", "maven", "apt", "yum", "go", "generic",
    ];

    pub fn parse(text: &str) -> Option<Self> {
        const ALL: [RepositoryFormat; 8] = [
            RepositoryFormat::Docker,
            RepositoryFormat::Python,
            RepositoryFormat::Npm,
            RepositoryFormat::Maven,
            RepositoryFormat::Apt,
            RepositoryFormat::Yum,
            RepositoryFormat::Go,
            RepositoryFormat::Generic,
        ];
        Self::NAMES
            .iter()
            .position(|name| *name == text)
            .map(|i| ALL[i])
    }

    /// The API enum value (`DOCKER` ...).
    pub fn api_value(self) -> String {
        Self::NAMES[self as usize].to_ascii_uppercase()
    }
}

/// An Artifact Registry repository in the blueprint's region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRegistry {
    pub name: String,
    pub format: RepositoryFormat,
    pub location: String,
}

/// Cloud Storage class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum StorageClass {
    Standard,
    Nearline,
    Coldline,
    Archive,
}

impl StorageClass {
    pub const NAMES: [&'static str; 4] = ["STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE"];

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "STANDARD" => Some(Self::Standard),
            "NEARLINE" => Some(Self::Nearline),
            "COLDLINE" => Some(Self::Coldline),
            "ARCHIVE" => Some(Self::Archive),
            _ => None,
        }
    }

    pub fn api_value(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// A Cloud Storage bucket (uniform bucket-level access is always on).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    pub name: String,
    /// Always the blueprint's region.
    pub location: String,
    pub storage_class: StorageClass,
    pub hierarchical_namespace: bool,
    pub force_destroy: bool,
    pub prevent_destroy: bool,
    /// Mounted in pods with GCS FUSE; any mounted bucket turns on the GCS FUSE CSI add-on.
    pub mount: bool,
}

/// How the NVIDIA driver gets onto GPU nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverMode {
    /// GKE installs its default driver for the node version.
    Default,
    /// GKE installs the latest driver for the node version.
    Latest,
    /// GKE installs nothing; a3ctl applies the COS driver-installer DaemonSet.
    Daemonset,
}

impl DriverMode {
    pub const NAMES: [&'static str; 3] = ["default", "latest", "daemonset"];

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "default" => Some(Self::Default),
            "latest" => Some(Self::Latest),
            "daemonset" => Some(Self::Daemonset),
            _ => None,
        }
    }
}

/// The GPUDirect software tuple in use, copied from [`super::presets::STACKS`] (and possibly
/// overridden when `force_stack` is set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackVersions {
    pub id: String,
    pub gpudirect: GpuDirect,
    pub plugin_image: String,
    pub plugin_tag: String,
    /// The RxDM sidecar image and tag (TCPX, TCPXO); `None` for gIB (RDMA).
    pub rxdm: Option<Rxdm>,
    pub nccl: Option<String>,
    /// True when the tuple is not a tested row of the table.
    pub forced: bool,
}

/// The RxDM (`tcpgpudmarxd`) sidecar of a TCPX/TCPXO stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rxdm {
    pub image: String,
    pub tag: String,
}

/// Where the Kueue manifest comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "location")]
pub enum ManifestSource {
    Url(String),
    /// A local file (air-gapped installs), relative paths are relative to the working directory.
    Path(PathBuf),
}

/// Kueue installation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kueue {
    pub enabled: bool,
    pub version: String,
    pub manifest: ManifestSource,
    /// Lowercase hex SHA-256 the manifest must match.
    pub sha256: Option<String>,
    /// Name of the LocalQueue (and ClusterQueue) created for the GPU pools.
    pub queue: String,
}

/// One team's Kueue queue (`[[queue]]`): a ClusterQueue and a LocalQueue of the same name in
/// `namespace`, with a share of one GPU pool's GPUs ([`super::queues`] has the rules).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queue {
    pub name: String,
    /// The LocalQueue's namespace (created when it is not `default`).
    pub namespace: String,
    /// The Kueue cohort whose members borrow each other's unused quota.
    pub cohort: Option<String>,
    /// The GPU pool (and so the ResourceFlavor) the quota is of.
    pub pool: String,
    /// Nominal `nvidia.com/gpu` quota; over a pool's queues these add up to the pool's GPUs.
    pub gpus: u32,
    /// Most GPUs it may borrow from its cohort (none: no limit).
    pub borrowing_limit: Option<u32>,
    /// Most of its GPUs its cohort may borrow (none: all of its unused ones).
    pub lending_limit: Option<u32>,
    /// Nominal `cpu` and `memory` quotas (Kubernetes quantities), when the queue limits them.
    pub cpu: Option<String>,
    pub memory: Option<String>,
}

/// One Kueue WorkloadPriorityClass (`[[priority]]`, rules in [`super::priorities`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Priority {
    /// The class's name, which jobs put in their `kueue.x-k8s.io/priority-class` label.
    pub name: String,
    /// The priority a Workload of the class gets: higher is admitted first.
    pub value: i32,
    /// When to use the class, for the people submitting jobs.
    pub description: Option<String>,
}

/// JobSet installation (kubernetes-sigs/jobset): the API the GPU recipes submit training jobs
/// with, installed from its release manifests like Kueue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSet {
    pub enabled: bool,
    pub version: String,
    pub manifest: ManifestSource,
    /// Lowercase hex SHA-256 the manifest must match.
    pub sha256: Option<String>,
}

/// Cluster software a3ctl installs on top of GKE.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Software {
    pub driver: DriverMode,
    /// Install the NCCL TCPX/TCPXO stack (installer DaemonSet, NRI injector, Network objects).
    pub nccl: bool,
    pub stack: StackVersions,
    /// Prefix of the Kubernetes Network objects: `vpc1` .. `vpcN`.
    pub network_prefix: String,
    pub kueue: Kueue,
    pub jobset: JobSet,
}

impl Software {
    /// The Kubernetes Network object names, in GPU VPC order.
    pub fn network_names(&self, count: usize) -> Vec<String> {
        (1..=count)
            .map(|i| format!("{}{i}", self.network_prefix))
            .collect()
    }
}

/// Where state is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "backend")]
pub enum StateBackend {
    Local {
        path: PathBuf,
    },
    Gcs {
        bucket: String,
        prefix: String,
        kms_key: Option<String>,
    },
}

/// What a blueprint will create, for `a3ctl validate`'s summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub vpcs: usize,
    pub subnets: usize,
    pub node_pools: usize,
    pub gpu_nodes: u32,
    pub gpus: u32,
    pub buckets: usize,
    pub repositories: usize,
    pub filestores: usize,
}

impl Blueprint {
    /// The GPU subnets a3ctl creates, split into the gVNIC GPU VPCs' (one each) and the RDMA
    /// VPC's (A3 Ultra and A4; empty otherwise). Both are empty in managed mode.
    pub fn gpu_subnet_split(&self) -> (&[Ipv4Net], &[Ipv4Net]) {
        let subnets = &self.network.gpu_subnets;
        subnets.split_at(subnets.len().min(self.family.spec().nics.gvnic_vpcs))
    }

    /// Counts of what applying the blueprint creates.
    pub fn summary(&self) -> Summary {
        // The gVNIC GPU VPCs have a subnet each; the RDMA subnets share one VPC.
        let (gvnic, rdma) = self.gpu_subnet_split();
        let gpu_vpcs = gvnic.len() + usize::from(!rdma.is_empty());
        Summary {
            vpcs: 1 + gpu_vpcs,
            subnets: 1 + self.network.gpu_subnets.len(),
            node_pools: 1 + self.gpu_pools.len(),
            gpu_nodes: self.gpu_pools.iter().map(|pool| pool.nodes).sum(),
            gpus: self.gpu_pools.iter().map(GpuPool::gpus).sum(),
            buckets: self.buckets.len(),
            repositories: self.artifact_registries.len(),
            filestores: usize::from(self.filestore.is_some()),
        }
    }
}
