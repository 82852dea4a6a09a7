//! The blueprint as written: which tables and keys exist and their TOML types, with spans.
//!
//! [`decode`] turns the spanned TOML tree into [`RawBlueprint`], reporting unknown keys, wrong
//! types and missing required keys through [`super::decode::Table`]. Values stay as written
//! (strings are not yet parsed into enums or CIDRs) so that [`super::validate`] can point at
//! them; defaults are applied there too.

use super::decode::{Sp, Table};
use super::error::{Findings, Span};

pub(crate) const ROOT_KEYS: &[&str] = &[
    "name",
    "project",
    "region",
    "zone",
    "enable_services",
    "network",
    "cluster",
    "system_pool",
    "gpu_pool",
    "filestore",
    "artifact_registry",
    "bucket",
    "software",
    "identity",
    "state",
    "queue",
    "priority",
];
const NETWORK_KEYS: &[&str] = &[
    "primary_subnet",
    "pods",
    "services",
    "gpu_range",
    "gpu_subnet_prefix",
    "gpu_subnets",
    "gpu_mtu",
    "primary_mtu",
    "nat",
    "master_ipv4_cidr",
    "network_mode",
    "gpu_firewall",
];
const CLUSTER_KEYS: &[&str] = &[
    "release_channel",
    "version",
    "private_nodes",
    "authorized_networks",
    "deletion_protection",
    "prevent_destroy",
    "maintenance",
];
const MAINTENANCE_KEYS: &[&str] = &["default_exclusion", "window", "exclusion"];
const WINDOW_KEYS: &[&str] = &["start", "end", "duration", "recurrence"];
const EXCLUSION_KEYS: &[&str] = &["name", "start", "end", "until_end_of_support", "scope"];
const UPGRADE_KEYS: &[&str] = &[
    "strategy",
    "max_surge",
    "max_unavailable",
    "batch_nodes",
    "batch_percent",
    "batch_soak",
    "pool_soak",
];
const AUTHORIZED_NETWORK_KEYS: &[&str] = &["cidr", "name"];
const SYSTEM_POOL_KEYS: &[&str] = &["name", "machine_type", "nodes", "version", "upgrade"];
const GPU_POOL_KEYS: &[&str] = &[
    "name",
    "machine_type",
    "nodes",
    "zones",
    "capacity",
    "reservation",
    "reservation_block",
    "placement",
    "host_maintenance",
    "prevent_destroy",
    "version",
    "upgrade",
];
const FILESTORE_KEYS: &[&str] = &["tier", "capacity_gb", "share", "prevent_destroy"];
const ARTIFACT_REGISTRY_KEYS: &[&str] = &["name", "format"];
const BUCKET_KEYS: &[&str] = &[
    "name",
    "location",
    "storage_class",
    "hierarchical_namespace",
    "force_destroy",
    "prevent_destroy",
    "mount",
];
const SOFTWARE_KEYS: &[&str] = &[
    "driver",
    "nccl",
    "stack",
    "force_stack",
    "plugin_tag",
    "rxdm_tag",
    "network_prefix",
    "kueue",
    "jobset",
];
const KUEUE_KEYS: &[&str] = &["enabled", "version", "manifest", "sha256", "queue"];
const JOBSET_KEYS: &[&str] = &["enabled", "version", "manifest", "sha256"];
const IDENTITY_KEYS: &[&str] = &["node_service_account", "node_roles", "workloads"];
const STATE_KEYS: &[&str] = &["backend", "path", "bucket", "prefix", "kms_key"];

pub(crate) type Str = Option<Sp<String>>;
pub(crate) type Int = Option<Sp<i64>>;
pub(crate) type Bool = Option<Sp<bool>>;

#[derive(Debug, Default)]
pub(crate) struct RawBlueprint {
    pub name: Str,
    pub project: Str,
    pub region: Str,
    pub zone: Str,
    pub enable_services: Bool,
    pub network: RawNetwork,
    pub cluster: RawCluster,
    pub system_pool: RawSystemPool,
    /// Span of the `gpu_pool` key, or the file start when there is none.
    pub gpu_pool_anchor: Span,
    /// `gpu_pool` exists but is not an array (already reported as a type problem).
    pub gpu_pool_malformed: bool,
    pub gpu_pools: Vec<RawGpuPool>,
    pub filestore: Option<RawFilestore>,
    pub artifact_registries: Vec<RawArtifactRegistry>,
    pub buckets: Vec<RawBucket>,
    pub software: RawSoftware,
    pub identity: RawIdentity,
    pub state: RawState,
    /// `[[queue]]`: the Kueue queues teams use ([`super::queues`]).
    pub queues: Vec<RawQueue>,
    /// `[[priority]]`: the Kueue WorkloadPriorityClasses teams' jobs select
    /// ([`super::priorities`]).
    pub priorities: Vec<RawPriority>,
}

#[derive(Debug, Default)]
pub(crate) struct RawIdentity {
    /// `[identity]` is in the blueprint.
    pub present: bool,
    pub node_service_account: Str,
    pub node_roles: Option<Sp<Vec<Sp<String>>>>,
    pub workloads: Option<Sp<Vec<Sp<String>>>>,
}

#[derive(Debug, Default)]
pub(crate) struct RawNetwork {
    pub primary_subnet: Str,
    pub pods: Str,
    pub services: Str,
    pub gpu_range: Str,
    pub gpu_subnet_prefix: Int,
    pub gpu_subnets: Option<Sp<Vec<Sp<String>>>>,
    pub gpu_mtu: Int,
    pub primary_mtu: Int,
    pub nat: Bool,
    pub master_ipv4_cidr: Str,
    pub network_mode: Str,
    pub gpu_firewall: Bool,
}

#[derive(Debug, Default)]
pub(crate) struct RawCluster {
    pub release_channel: Str,
    pub version: Str,
    pub private_nodes: Bool,
    pub authorized_networks: Vec<RawAuthorizedNetwork>,
    pub deletion_protection: Bool,
    pub prevent_destroy: Bool,
    /// `[cluster.maintenance]`, when present.
    pub maintenance: Option<RawMaintenance>,
}

/// `[cluster.maintenance]`.
#[derive(Debug, Default)]
pub(crate) struct RawMaintenance {
    pub default_exclusion: Bool,
    pub window: Option<RawWindow>,
    pub exclusions: Vec<RawExclusion>,
}

/// `[cluster.maintenance.window]`: times are RFC 3339 text (a TOML date-time or a string).
#[derive(Debug, Default)]
pub(crate) struct RawWindow {
    pub anchor: Span,
    pub start: Str,
    pub end: Str,
    pub duration: Str,
    pub recurrence: Str,
}

/// One `[[cluster.maintenance.exclusion]]`.
#[derive(Debug, Default)]
pub(crate) struct RawExclusion {
    pub anchor: Span,
    pub name: Str,
    pub start: Str,
    pub end: Str,
    pub until_end_of_support: Bool,
    pub scope: Str,
}

/// `[gpu_pool.upgrade]` / `[system_pool.upgrade]`.
#[derive(Debug, Default)]
pub(crate) struct RawUpgrade {
    pub anchor: Span,
    pub strategy: Str,
    pub max_surge: Int,
    pub max_unavailable: Int,
    pub batch_nodes: Int,
    pub batch_percent: Int,
    pub batch_soak: Str,
    pub pool_soak: Str,
}

#[derive(Debug, Default)]
pub(crate) struct RawAuthorizedNetwork {
    pub cidr: Str,
    pub name: Str,
}

#[derive(Debug, Default)]
pub(crate) struct RawSystemPool {
    pub name: Str,
    pub machine_type: Str,
    pub nodes: Int,
    pub upgrade: Option<RawUpgrade>,
    pub version: Str,
}

#[derive(Debug, Default)]
pub(crate) struct RawGpuPool {
    /// Where problems about the pool as a whole are reported.
    pub anchor: Span,
    pub index: usize,
    pub name: Str,
    pub machine_type: Str,
    pub nodes: Int,
    pub zones: Option<Sp<Vec<Sp<String>>>>,
    pub capacity: Str,
    pub reservation: Str,
    pub reservation_block: Str,
    pub placement: Str,
    pub host_maintenance: Str,
    pub prevent_destroy: Bool,
    pub upgrade: Option<RawUpgrade>,
    pub version: Str,
}

#[derive(Debug, Default)]
pub(crate) struct RawFilestore {
    pub tier: Str,
    pub capacity_gb: Int,
    pub share: Str,
    pub prevent_destroy: Bool,
}

#[derive(Debug, Default)]
pub(crate) struct RawArtifactRegistry {
    pub name: Str,
    pub format: Str,
}

#[derive(Debug, Default)]
pub(crate) struct RawBucket {
    pub name: Str,
    pub location: Str,
    pub storage_class: Str,
    pub hierarchical_namespace: Bool,
    pub force_destroy: Bool,
    pub prevent_destroy: Bool,
    pub mount: Bool,
}

#[derive(Debug, Default)]
pub(crate) struct RawSoftware {
    pub driver: Str,
    pub nccl: Bool,
    pub stack: Str,
    pub force_stack: Bool,
    pub plugin_tag: Str,
    pub rxdm_tag: Str,
    pub network_prefix: Str,
    pub kueue: RawKueue,
    pub jobset: RawJobSet,
}

/// `[software.jobset]`: a release installed from its manifests, like Kueue's.
#[derive(Debug, Default)]
pub(crate) struct RawJobSet {
    pub enabled: Bool,
    pub version: Str,
    pub manifest: Str,
    pub sha256: Str,
}

#[derive(Debug, Default)]
pub(crate) struct RawKueue {
    pub enabled: Bool,
    pub version: Str,
    pub manifest: Str,
    pub sha256: Str,
    pub queue: Str,
}

#[derive(Debug, Default)]
pub(crate) struct RawState {
    pub anchor: Span,
    pub backend: Str,
    pub path: Str,
    pub bucket: Str,
    pub prefix: Str,
    pub kms_key: Str,
}

/// Reads the whole tree, reporting shape problems into `f`.
pub(crate) fn decode(root: &Table<'_, '_>, f: &mut Findings) -> RawBlueprint {
    root.check_keys(ROOT_KEYS, f);
    let mut raw = RawBlueprint {
        name: root.req_str("name", "\"a3mega\"", f),
        project: root.req_str("project", "\"my-project\"", f),
        region: root.req_str("region", "\"us-central1\"", f),
        zone: root.req_str("zone", "\"us-central1-a\"", f),
        enable_services: root.bool("enable_services", f),
        gpu_pool_anchor: root.key_span("gpu_pool").unwrap_or(0..0),
        gpu_pool_malformed: root.has("gpu_pool") && !root.is_array("gpu_pool"),
        ..RawBlueprint::default()
    };

    if let Some(t) = root.table("network", "[network]".into(), f) {
        t.check_keys(NETWORK_KEYS, f);
        raw.network = RawNetwork {
            primary_subnet: t.str("primary_subnet", f),
            pods: t.str("pods", f),
            services: t.str("services", f),
            gpu_range: t.str("gpu_range", f),
            gpu_subnet_prefix: t.int("gpu_subnet_prefix", f),
            gpu_subnets: t.str_array("gpu_subnets", f),
            gpu_mtu: t.int("gpu_mtu", f),
            primary_mtu: t.int("primary_mtu", f),
            nat: t.bool("nat", f),
            master_ipv4_cidr: t.str("master_ipv4_cidr", f),
            network_mode: t.str("network_mode", f),
            gpu_firewall: t.bool("gpu_firewall", f),
        };
    }

    if let Some(t) = root.table("cluster", "[cluster]".into(), f) {
        t.check_keys(CLUSTER_KEYS, f);
        raw.cluster = RawCluster {
            release_channel: t.str("release_channel", f),
            version: t.str("version", f),
            private_nodes: t.bool("private_nodes", f),
            authorized_networks: t
                .tables(
                    "authorized_networks",
                    "an entry of `authorized_networks`",
                    f,
                )
                .iter()
                .map(|n| {
                    n.check_keys(AUTHORIZED_NETWORK_KEYS, f);
                    RawAuthorizedNetwork {
                        cidr: n.req_str("cidr", "\"203.0.113.0/24\"", f),
                        name: n.str("name", f),
                    }
                })
                .collect(),
            deletion_protection: t.bool("deletion_protection", f),
            prevent_destroy: t.bool("prevent_destroy", f),
            maintenance: t
                .table("maintenance", "[cluster.maintenance]".into(), f)
                .map(|m| maintenance(&m, f)),
        };
    }

    if let Some(t) = root.table("system_pool", "[system_pool]".into(), f) {
        t.check_keys(SYSTEM_POOL_KEYS, f);
        raw.system_pool = RawSystemPool {
            name: t.str("name", f),
            machine_type: t.str("machine_type", f),
            nodes: t.int("nodes", f),
            upgrade: t
                .table("upgrade", "[system_pool.upgrade]".into(), f)
                .map(|u| upgrade(&u, f)),
            version: t.str("version", f),
        };
    }

    for (index, t) in root
        .tables("gpu_pool", "[[gpu_pool]]", f)
        .iter()
        .enumerate()
    {
        t.check_keys(GPU_POOL_KEYS, f);
        raw.gpu_pools.push(RawGpuPool {
            anchor: t.anchor(),
            index,
            name: t.str("name", f),
            machine_type: t.req_str("machine_type", "\"a3-megagpu-8g\"", f),
            nodes: t.req_int("nodes", "4", f),
            zones: t.str_array("zones", f),
            capacity: t.str("capacity", f),
            reservation: t.str("reservation", f),
            reservation_block: t.str("reservation_block", f),
            placement: t.str("placement", f),
            host_maintenance: t.str("host_maintenance", f),
            prevent_destroy: t.bool("prevent_destroy", f),
            upgrade: t
                .table("upgrade", format!("the `upgrade` table of {}", t.name), f)
                .map(|u| upgrade(&u, f)),
            version: t.str("version", f),
        });
    }

    if let Some(t) = root.table("filestore", "[filestore]".into(), f) {
        t.check_keys(FILESTORE_KEYS, f);
        raw.filestore = Some(RawFilestore {
            tier: t.str("tier", f),
            capacity_gb: t.int("capacity_gb", f),
            share: t.str("share", f),
            prevent_destroy: t.bool("prevent_destroy", f),
        });
    }

    for t in root.tables("artifact_registry", "[[artifact_registry]]", f) {
        t.check_keys(ARTIFACT_REGISTRY_KEYS, f);
        raw.artifact_registries.push(RawArtifactRegistry {
            name: t.req_str("name", "\"training\"", f),
            format: t.str("format", f),
        });
    }

    for t in root.tables("bucket", "[[bucket]]", f) {
        t.check_keys(BUCKET_KEYS, f);
        raw.buckets.push(RawBucket {
            name: t.req_str("name", "\"my-project-a3mega-ckpt\"", f),
            location: t.str("location", f),
            storage_class: t.str("storage_class", f),
            hierarchical_namespace: t.bool("hierarchical_namespace", f),
            force_destroy: t.bool("force_destroy", f),
            prevent_destroy: t.bool("prevent_destroy", f),
            mount: t.bool("mount", f),
        });
    }

    if let Some(t) = root.table("software", "[software]".into(), f) {
        t.check_keys(SOFTWARE_KEYS, f);
        let mut software = RawSoftware {
            driver: t.str("driver", f),
            nccl: t.bool("nccl", f),
            stack: t.str("stack", f),
            force_stack: t.bool("force_stack", f),
            plugin_tag: t.str("plugin_tag", f),
            rxdm_tag: t.str("rxdm_tag", f),
            network_prefix: t.str("network_prefix", f),
            kueue: RawKueue::default(),
            jobset: RawJobSet::default(),
        };
        if let Some(k) = t.table("kueue", "[software.kueue]".into(), f) {
            k.check_keys(KUEUE_KEYS, f);
            software.kueue = RawKueue {
                enabled: k.bool("enabled", f),
                version: k.str("version", f),
                manifest: k.str("manifest", f),
                sha256: k.str("sha256", f),
                queue: k.str("queue", f),
            };
        }
        if let Some(j) = t.table("jobset", "[software.jobset]".into(), f) {
            j.check_keys(JOBSET_KEYS, f);
            software.jobset = RawJobSet {
                enabled: j.bool("enabled", f),
                version: j.str("version", f),
                manifest: j.str("manifest", f),
                sha256: j.str("sha256", f),
            };
        }
        raw.software = software;
    }

    if let Some(t) = root.table("identity", "[identity]".into(), f) {
        t.check_keys(IDENTITY_KEYS, f);
        raw.identity = RawIdentity {
            present: true,
            node_service_account: t.str("node_service_account", f),
            node_roles: t.str_array("node_roles", f),
            workloads: t.str_array("workloads", f),
        };
    }

    if let Some(t) = root.table("state", "[state]".into(), f) {
        t.check_keys(STATE_KEYS, f);
        raw.state = RawState {
            anchor: t.anchor(),
            backend: t.str("backend", f),
            path: t.str("path", f),
            bucket: t.str("bucket", f),
            prefix: t.str("prefix", f),
            kms_key: t.str("kms_key", f),
        };
    }

    raw.queues = queues(root, f);
    raw.priorities = priorities(root, f);

    raw
}

const QUEUE_KEYS: &[&str] = &[
    "name",
    "namespace",
    "cohort",
    "pool",
    "gpus",
    "borrowing_limit",
    "lending_limit",
    "cpu",
    "memory",
];

/// One `[[queue]]`.
#[derive(Debug, Default)]
pub(crate) struct RawQueue {
    pub anchor: Span,
    pub name: Str,
    pub namespace: Str,
    pub cohort: Str,
    pub pool: Str,
    pub gpus: Int,
    pub borrowing_limit: Int,
    pub lending_limit: Int,
    pub cpu: Str,
    pub memory: Str,
}

fn queues(root: &Table<'_, '_>, f: &mut Findings) -> Vec<RawQueue> {
    root.tables("queue", "[[queue]]", f)
        .iter()
        .map(|t| {
            t.check_keys(QUEUE_KEYS, f);
            RawQueue {
                anchor: t.anchor(),
                name: t.req_str("name", "\"team-a\"", f),
                namespace: t.str("namespace", f),
                cohort: t.str("cohort", f),
                pool: t.str("pool", f),
                gpus: t.req_int("gpus", "64", f),
                borrowing_limit: t.int("borrowing_limit", f),
                lending_limit: t.int("lending_limit", f),
                cpu: t.str("cpu", f),
                memory: t.str("memory", f),
            }
        })
        .collect()
}

const PRIORITY_KEYS: &[&str] = &["name", "value", "description"];

/// One `[[priority]]`.
#[derive(Debug, Default)]
pub(crate) struct RawPriority {
    pub anchor: Span,
    pub name: Str,
    pub value: Int,
    pub description: Str,
}

fn priorities(root: &Table<'_, '_>, f: &mut Findings) -> Vec<RawPriority> {
    root.tables("priority", "[[priority]]", f)
        .iter()
        .map(|t| {
            t.check_keys(PRIORITY_KEYS, f);
            RawPriority {
                anchor: t.anchor(),
                name: t.req_str("name", "\"production\"", f),
                value: t.req_int("value", "1000", f),
                description: t.str("description", f),
            }
        })
        .collect()
}

fn maintenance(t: &Table<'_, '_>, f: &mut Findings) -> RawMaintenance {
    t.check_keys(MAINTENANCE_KEYS, f);
    RawMaintenance {
        default_exclusion: t.bool("default_exclusion", f),
        window: t
            .table("window", "[cluster.maintenance.window]".into(), f)
            .map(|w| {
                w.check_keys(WINDOW_KEYS, f);
                RawWindow {
                    anchor: w.anchor(),
                    start: w.req_time("start", "2026-01-03T02:00:00Z", f),
                    end: w.time("end", f),
                    duration: w.str("duration", f),
                    recurrence: w.req_str("recurrence", "\"FREQ=WEEKLY;BYDAY=SA,SU\"", f),
                }
            }),
        exclusions: t
            .tables("exclusion", "[[cluster.maintenance.exclusion]]", f)
            .iter()
            .map(|e| {
                e.check_keys(EXCLUSION_KEYS, f);
                RawExclusion {
                    anchor: e.anchor(),
                    name: e.req_str("name", "\"launch-week\"", f),
                    start: e.time("start", f),
                    end: e.time("end", f),
                    until_end_of_support: e.bool("until_end_of_support", f),
                    scope: e.str("scope", f),
                }
            })
            .collect(),
    }
}

fn upgrade(t: &Table<'_, '_>, f: &mut Findings) -> RawUpgrade {
    t.check_keys(UPGRADE_KEYS, f);
    RawUpgrade {
        anchor: t.anchor(),
        strategy: t.str("strategy", f),
        max_surge: t.int("max_surge", f),
        max_unavailable: t.int("max_unavailable", f),
        batch_nodes: t.int("batch_nodes", f),
        batch_percent: t.int("batch_percent", f),
        batch_soak: t.str("batch_soak", f),
        pool_soak: t.str("pool_soak", f),
    }
}
