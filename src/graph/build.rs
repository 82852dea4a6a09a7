//! Blueprint → resources, as an ordered list of named steps. Each step says why it sits where it
//! does; the graph's edges come from each resource's `dependencies`.
//!
//! Names are deterministic, derived from the blueprint `name` (`<name>-net`, `<name>-gpunet-3`,
//! ...; GPU NICs count from 1 in addresses, cloud names and the cluster alike), so a plan made twice names the same objects and a re-run after a crash finds them again.
//! Everything that takes labels carries `a3ctl-blueprint=<name>`; Compute resources, which take no
//! labels, carry the same mark in their description. That mark is how an apply recognises its own
//! resources after a lost answer (a 409 on create is adopted only when the mark matches).
//!
//! Specs are flat JSON objects with the fields listed in [`crate::resource::spec`]; the cloud
//! adapters translate them to and from the APIs.

use crate::blueprint::{Blueprint, Capacity, DriverMode, NetworkMode, Placement};
use crate::resource::kinds::bucket::BucketSpec;
use crate::resource::kinds::cluster::{
    AuthorizedNetwork, BootstrapPool, ClusterSpec, Exclusion, MaintenancePolicy, RecurringWindow,
};
use crate::resource::kinds::filestore::FilestoreSpec;
use crate::resource::kinds::firewall::{FirewallSpec, Rule};
use crate::resource::kinds::network::NetworkSpec;
use crate::resource::kinds::node_pool::{
    Accelerator, AdditionalNetwork, BlueGreenSettings, NodePoolSpec, Reservation, UpgradeSettings,
    pool_node_labels,
};
use crate::resource::kinds::repository::RepositorySpec;
use crate::resource::kinds::resource_policy::ResourcePolicySpec;
use crate::resource::kinds::router::{Nat, RouterSpec};
use crate::resource::kinds::subnetwork::{SecondaryRange, SubnetworkSpec};
use crate::resource::kinds::to_spec;
use crate::resource::{Addr, Desired, Kind, Lifecycle};
use serde_json::Value;

/// The label key (and description mark) of everything a blueprint creates.
pub const LABEL: &str = crate::resource::spec::OWNERSHIP_LABEL;

/// The accelerator network profile of a GKE-managed GPU networking pool: the only value GKE
/// takes (`NodeNetworkConfig.acceleratorNetworkProfile`).
pub const MANAGED_PROFILE: &str = "auto";
/// The node label that turns on GKE's DRA networking driver on a managed pool's nodes
/// (cluster-toolkit `modules/compute/gke-node-pool`, xpk `core/nodepool.py`).
pub const DRA_DRIVER_LABEL: &str = "cloud.google.com/gke-networking-dra-driver";

/// The cloud name of the RDMA VPC (`<name>-rdma-net`, as Cluster Toolkit's examples name it).
pub fn rdma_network_name(bp: &Blueprint) -> String {
    format!("{}-rdma-net", bp.name)
}

/// The cloud name of the RDMA VPC's `j`-th subnet (`<name>-rdma-sub-<j>`).
pub fn rdma_subnet_name(bp: &Blueprint, j: usize) -> String {
    format!("{}-rdma-sub-{j}", bp.name)
}

/// The zone's RoCE network profile the RDMA VPC is made from (Compute's `<zone>-vpc-roce`).
pub fn roce_profile(bp: &Blueprint) -> String {
    format!(
        "projects/{}/global/networkProfiles/{}-vpc-roce",
        bp.project, bp.zone
    )
}

/// Every GPU subnet a3ctl creates, gVNIC ones first.
pub fn gpu_subnet_addrs(bp: &Blueprint) -> Vec<Addr> {
    super::software::device_networks(bp)
        .into_iter()
        .map(|n| n.subnet_addr)
        .collect()
}

/// A GPU pool's additional node networks, in NIC order: the gVNIC GPU VPCs, then the RDMA
/// subnets (each one NIC on the RDMA VPC).
fn additional_networks(bp: &Blueprint) -> Vec<AdditionalNetwork> {
    super::software::device_networks(bp)
        .into_iter()
        .map(|n| AdditionalNetwork {
            network: n.vpc,
            subnetwork: n.subnet,
        })
        .collect()
}

pub use crate::resource::mark;

/// Addresses of the resources a blueprint always has.
pub mod addr {
    use super::{Addr, Kind};
    pub fn primary_network() -> Addr {
        Addr::new(Kind::Network, "primary")
    }
    pub fn primary_subnet() -> Addr {
        Addr::new(Kind::Subnetwork, "primary")
    }
    pub fn router() -> Addr {
        Addr::new(Kind::Router, "primary")
    }
    /// The `i`-th GPU VPC (0-based position; addresses count from 1, as `vpc1` and `eth1` do).
    pub fn gpu_network(i: usize) -> Addr {
        Addr::new(Kind::Network, format!("gpu-{}", i + 1))
    }
    pub fn gpu_subnet(i: usize) -> Addr {
        Addr::new(Kind::Subnetwork, format!("gpu-{}", i + 1))
    }
    pub fn gpu_firewall(i: usize) -> Addr {
        Addr::new(Kind::Firewall, format!("gpu-{}-internal", i + 1))
    }
    /// The RDMA VPC of A3 Ultra and A4 (made from the zone's RoCE network profile).
    pub fn rdma_network() -> Addr {
        Addr::new(Kind::Network, "rdma")
    }
    /// The `j`-th subnet of the RDMA VPC (0-based, as `rdma-0` .. `rdma-7` count).
    pub fn rdma_subnet(j: usize) -> Addr {
        Addr::new(Kind::Subnetwork, format!("rdma-{j}"))
    }
    pub fn cluster() -> Addr {
        Addr::new(Kind::Cluster, "main")
    }
}

/// Expands `bp` into the resources it needs, in a dependency-respecting order.
pub fn resources(bp: &Blueprint) -> Vec<Desired> {
    let mut out = Vec::new();
    let p = &bp.project;
    let description = mark(&bp.name);
    let lifecycle = Lifecycle::default();
    let push = |out: &mut Vec<Desired>,
                addr: Addr,
                id: String,
                spec: Value,
                deps: Vec<Addr>,
                lifecycle: Lifecycle| {
        out.push(Desired {
            addr,
            id,
            spec,
            dependencies: deps,
            lifecycle,
        });
    };

    // 1. The primary VPC and its subnet with the pods and services ranges: the cluster lives here.
    let primary_net = format!("{}-net", bp.name);
    push(
        &mut out,
        addr::primary_network(),
        format!("projects/{p}/global/networks/{primary_net}"),
        to_spec(&NetworkSpec {
            name: primary_net.clone(),
            description: description.clone(),
            auto_create_subnetworks: false,
            mtu: bp.network.primary_mtu,
            routing_mode: "REGIONAL".into(),
            network_profile: None,
        }),
        vec![],
        lifecycle.clone(),
    );
    let primary_subnet = format!("{}-subnet", bp.name);
    push(
        &mut out,
        addr::primary_subnet(),
        format!(
            "projects/{p}/regions/{}/subnetworks/{primary_subnet}",
            bp.region
        ),
        to_spec(&SubnetworkSpec {
            name: primary_subnet.clone(),
            network: primary_net.clone(),
            region: bp.region.clone(),
            description: description.clone(),
            ip_cidr_range: bp.network.primary_subnet.to_string(),
            secondary_ranges: vec![
                SecondaryRange {
                    name: "pods".into(),
                    cidr: bp.network.pods.to_string(),
                },
                SecondaryRange {
                    name: "services".into(),
                    cidr: bp.network.services.to_string(),
                },
            ],
            private_ip_google_access: true,
        }),
        vec![addr::primary_network()],
        lifecycle.clone(),
    );
    // 2. Internal traffic on the primary VPC (nodes, pods and services talk to each other).
    push(
        &mut out,
        Addr::new(Kind::Firewall, "primary-internal"),
        format!("projects/{p}/global/firewalls/{primary_net}-allow-internal"),
        firewall(
            &format!("{primary_net}-allow-internal"),
            &primary_net,
            &description,
            vec![
                bp.network.primary_subnet.to_string(),
                bp.network.pods.to_string(),
                bp.network.services.to_string(),
            ],
        ),
        vec![addr::primary_network()],
        lifecycle.clone(),
    );
    // 3. Cloud Router + NAT, so private nodes can pull images. Nodes need it; the cluster does not.
    if bp.network.nat {
        let router = format!("{}-router", bp.name);
        push(
            &mut out,
            addr::router(),
            format!("projects/{p}/regions/{}/routers/{router}", bp.region),
            to_spec(&RouterSpec {
                name: router.clone(),
                network: primary_net.clone(),
                region: bp.region.clone(),
                description: description.clone(),
                nat: Some(Nat {
                    name: format!("{}-nat", bp.name),
                    ip_allocation: "AUTO_ONLY".into(),
                    source_ranges: "ALL_SUBNETWORKS_ALL_IP_RANGES".into(),
                }),
            }),
            vec![addr::primary_network()],
            lifecycle.clone(),
        );
    }
    // 4. The GPU networks (explicit mode; in managed mode GKE makes them for the pool).
    //    One VPC, subnet and internal firewall per gVNIC GPU NIC (4 for A3 High, 8 for A3 Mega,
    //    the second host NIC of A3 Ultra and A4), MTU 8244 (8896 on A3 Ultra and A4); then, for
    //    RDMA families, one VPC from the zone's RoCE network profile with a subnet per RDMA NIC
    //    and no firewall rule (Compute refuses them on it). Independent of each other and of the
    //    primary VPC: they are created in parallel.
    let (gvnic_cidrs, rdma_cidrs) = bp.gpu_subnet_split();
    for (i, cidr) in gvnic_cidrs.iter().enumerate() {
        let net = bp.network.gpu_vpc_name(&bp.name, i);
        push(
            &mut out,
            addr::gpu_network(i),
            format!("projects/{p}/global/networks/{net}"),
            to_spec(&NetworkSpec {
                name: net.clone(),
                description: description.clone(),
                auto_create_subnetworks: false,
                mtu: bp.network.gpu_mtu,
                routing_mode: "REGIONAL".into(),
                network_profile: None,
            }),
            vec![],
            lifecycle.clone(),
        );
        let subnet = format!("{net}-subnet");
        push(
            &mut out,
            addr::gpu_subnet(i),
            format!("projects/{p}/regions/{}/subnetworks/{subnet}", bp.region),
            to_spec(&SubnetworkSpec {
                name: subnet.clone(),
                network: net.clone(),
                region: bp.region.clone(),
                description: description.clone(),
                ip_cidr_range: cidr.to_string(),
                secondary_ranges: vec![],
                private_ip_google_access: false,
            }),
            vec![addr::gpu_network(i)],
            lifecycle.clone(),
        );
        if bp.network.gpu_firewall {
            push(
                &mut out,
                addr::gpu_firewall(i),
                format!("projects/{p}/global/firewalls/{net}-allow-internal"),
                firewall(
                    &format!("{net}-allow-internal"),
                    &net,
                    &description,
                    vec![cidr.to_string()],
                ),
                vec![addr::gpu_network(i)],
                lifecycle.clone(),
            );
        }
    }
    if !rdma_cidrs.is_empty() {
        let net = rdma_network_name(bp);
        push(
            &mut out,
            addr::rdma_network(),
            format!("projects/{p}/global/networks/{net}"),
            to_spec(&NetworkSpec {
                name: net.clone(),
                description: description.clone(),
                auto_create_subnetworks: false,
                mtu: bp.network.gpu_mtu,
                routing_mode: "REGIONAL".into(),
                network_profile: Some(roce_profile(bp)),
            }),
            vec![],
            lifecycle.clone(),
        );
        for (j, cidr) in rdma_cidrs.iter().enumerate() {
            let subnet = rdma_subnet_name(bp, j);
            push(
                &mut out,
                addr::rdma_subnet(j),
                format!("projects/{p}/regions/{}/subnetworks/{subnet}", bp.region),
                to_spec(&SubnetworkSpec {
                    name: subnet.clone(),
                    network: net.clone(),
                    region: bp.region.clone(),
                    description: description.clone(),
                    ip_cidr_range: cidr.to_string(),
                    secondary_ranges: vec![],
                    private_ip_google_access: false,
                }),
                vec![addr::rdma_network()],
                lifecycle.clone(),
            );
        }
    }
    // 5. A compact placement policy per GPU pool that asks for one.
    for pool in &bp.gpu_pools {
        if pool.placement == Placement::Compact {
            let name = format!("{}-{}-placement", bp.name, pool.name);
            push(
                &mut out,
                Addr::new(Kind::ResourcePolicy, pool.name.clone()),
                format!("projects/{p}/regions/{}/resourcePolicies/{name}", bp.region),
                to_spec(&ResourcePolicySpec {
                    name: name.clone(),
                    region: bp.region.clone(),
                    collocation: "COLLOCATED".into(),
                    description: description.clone(),
                }),
                vec![],
                lifecycle.clone(),
            );
        }
    }
    // 6. The cluster: Dataplane V2 and multi-networking are fixed at creation.
    let cluster = bp.name.clone();
    let cluster_id = format!("projects/{p}/locations/{}/clusters/{cluster}", bp.region);
    let authorized = bp
        .cluster
        .authorized_networks
        .iter()
        .map(|n| AuthorizedNetwork {
            cidr: n.cidr.to_string(),
            // An unnamed block has an empty display name, as GKE shows it.
            name: n.name.clone().unwrap_or_default(),
        })
        .collect();
    push(
        &mut out,
        addr::cluster(),
        cluster_id.clone(),
        to_spec(&ClusterSpec {
            name: cluster.clone(),
            location: bp.region.clone(),
            network: primary_net.clone(),
            subnetwork: primary_subnet.clone(),
            pods_range: "pods".into(),
            services_range: "services".into(),
            datapath_provider: "ADVANCED_DATAPATH".into(),
            multi_networking: true,
            release_channel: bp.cluster.release_channel.api_value().into(),
            version: bp.cluster.version.to_string(),
            private_nodes: bp.cluster.private_nodes,
            master_ipv4_cidr: bp
                .cluster
                .private_nodes
                .then(|| bp.network.master_ipv4_cidr.to_string()),
            authorized_networks: authorized,
            labels: [(LABEL.to_string(), bp.name.clone())].into_iter().collect(),
            filestore_csi: bp.filestore.is_some(),
            gcsfuse_csi: bp.buckets.iter().any(|b| b.mount),
            workload_pool: format!("{p}.svc.id.goog"),
            // The temporary pool the cluster is created with never outlives the create.
            bootstrap_pool: BootstrapPool::Removed,
            // Not diffed: lets the GKE adapter check the resolved version's GPUDirect minimum.
            gpudirect_family: Some(bp.family.machine_type().into()),
            managed_gpu_networking: bp.network.mode == NetworkMode::Managed,
            deletion_protection: bp.cluster.deletion_protection(),
            maintenance_policy: bp.cluster.maintenance.as_ref().map(maintenance_policy),
        }),
        vec![addr::primary_subnet()],
        Lifecycle {
            prevent_destroy: bp.cluster.prevent_destroy,
            ..Default::default()
        },
    );
    // 7. Node pools: after the cluster (and NAT, so nodes can pull images); they go with the
    //    cluster when it is deleted. GPU pools also need every GPU subnet and their placement.
    let with_cluster = |prevent_destroy| Lifecycle {
        prevent_destroy,
        deleted_with: Some(addr::cluster()),
        ..Default::default()
    };
    let owned_by = || [(LABEL.to_string(), bp.name.clone())].into_iter().collect();
    let mut pool_deps = vec![addr::cluster()];
    if bp.network.nat {
        pool_deps.push(addr::router());
    }
    // The nodes' service account and its roles come first: GKE refuses a pool whose account
    // does not exist, and nodes without their roles cannot write logs or pull images.
    let (identity, identity_deps) = super::identity::nodes(bp);
    out.extend(identity);
    pool_deps.extend(identity_deps);
    let service_account = bp.identity.node_account.email(p);
    push(
        &mut out,
        Addr::new(Kind::NodePool, bp.system_pool.name.clone()),
        format!("{cluster_id}/nodePools/{}", bp.system_pool.name),
        to_spec(&NodePoolSpec {
            cluster: cluster.clone(),
            location: bp.region.clone(),
            name: bp.system_pool.name.clone(),
            machine_type: bp.system_pool.machine_type.clone(),
            locations: vec![bp.zone.clone()],
            node_count: bp.system_pool.nodes.into(),
            accelerator: None,
            additional_networks: vec![],
            placement_policy: None,
            reservation: None,
            capacity: "on-demand".into(),
            local_ssd_count: 0,
            labels: owned_by(),
            taints: vec![],
            gvnic: true,
            image_type: "COS_CONTAINERD".into(),
            disk_size_gb: 100,
            auto_repair: true,
            auto_upgrade: true,
            service_account: service_account.clone(),
            upgrade_settings: bp.system_pool.upgrade.as_ref().map(upgrade_settings),
            version: bp
                .system_pool
                .version
                .unwrap_or(bp.cluster.version)
                .to_string(),
            accelerator_network_profile: None,
            node_labels: pool_node_labels(&bp.system_pool.name, []),
        }),
        pool_deps.clone(),
        with_cluster(false),
    );
    let driver = match bp.software.driver {
        DriverMode::Default => "DEFAULT",
        DriverMode::Latest => "LATEST",
        DriverMode::Daemonset => "INSTALLATION_DISABLED",
    };
    let managed = bp.network.mode == NetworkMode::Managed;
    for pool in &bp.gpu_pools {
        let mut deps = pool_deps.clone();
        deps.extend(gpu_subnet_addrs(bp));
        let additional = additional_networks(bp);
        let placement = (pool.placement == Placement::Compact).then(|| {
            deps.push(Addr::new(Kind::ResourcePolicy, pool.name.clone()));
            format!("{}-{}-placement", bp.name, pool.name)
        });
        let (capacity, reservation) = match &pool.capacity {
            Capacity::Reservation { reservation, block } => (
                "reservation",
                Some(Reservation {
                    name: reservation.clone(),
                    block: block.clone(),
                }),
            ),
            Capacity::OnDemand => ("on-demand", None),
            Capacity::Spot => ("spot", None),
            Capacity::FlexStart => ("flex-start", None),
        };
        push(
            &mut out,
            Addr::new(Kind::NodePool, pool.name.clone()),
            format!("{cluster_id}/nodePools/{}", pool.name),
            to_spec(&NodePoolSpec {
                cluster: cluster.clone(),
                location: bp.region.clone(),
                name: pool.name.clone(),
                machine_type: pool.machine_type().into(),
                locations: pool.zones.clone(),
                node_count: pool.nodes.into(),
                accelerator: Some(Accelerator {
                    kind: pool.family.accelerator_type().into(),
                    count: pool.family.gpus_per_node().into(),
                    driver: driver.into(),
                }),
                additional_networks: additional,
                placement_policy: placement,
                reservation,
                capacity: capacity.into(),
                local_ssd_count: pool.family.spec().local_ssds.into(),
                labels: owned_by(),
                taints: vec![],
                gvnic: true,
                image_type: "COS_CONTAINERD".into(),
                disk_size_gb: 200,
                auto_repair: true,
                auto_upgrade: false,
                service_account: service_account.clone(),
                upgrade_settings: pool.upgrade.as_ref().map(upgrade_settings),
                version: pool.version.unwrap_or(bp.cluster.version).to_string(),
                accelerator_network_profile: managed.then(|| MANAGED_PROFILE.to_string()),
                node_labels: pool_node_labels(
                    &pool.name,
                    managed.then(|| (DRA_DRIVER_LABEL.to_string(), "true".to_string())),
                ),
            }),
            deps,
            with_cluster(pool.prevent_destroy),
        );
    }
    // 8. Storage and registry: independent of the cluster, created alongside everything else.
    if let Some(fs) = &bp.filestore {
        let name = format!("{}-fs", bp.name);
        push(
            &mut out,
            Addr::new(Kind::Filestore, "shared"),
            format!("projects/{p}/locations/{}/instances/{name}", fs.location),
            to_spec(&FilestoreSpec {
                name: name.clone(),
                location: fs.location.clone(),
                tier: fs.tier.api_value().into(),
                capacity_gb: fs.capacity_gb.into(),
                share: fs.share.clone(),
                network: primary_net.clone(),
                labels: [(LABEL.to_string(), bp.name.clone())].into_iter().collect(),
                deletion_protection: bp.cluster.deletion_protection(),
            }),
            vec![addr::primary_network()],
            Lifecycle {
                prevent_destroy: fs.prevent_destroy,
                ..Default::default()
            },
        );
    }
    for repo in &bp.artifact_registries {
        push(
            &mut out,
            Addr::new(Kind::Repository, repo.name.clone()),
            format!(
                "projects/{p}/locations/{}/repositories/{}",
                repo.location, repo.name
            ),
            to_spec(&RepositorySpec {
                name: repo.name.clone(),
                location: repo.location.clone(),
                format: repo.format.api_value(),
                description: description.clone(),
                labels: [(LABEL.to_string(), bp.name.clone())].into_iter().collect(),
            }),
            vec![],
            lifecycle.clone(),
        );
    }
    for bucket in &bp.buckets {
        push(
            &mut out,
            Addr::new(Kind::Bucket, bucket.name.clone()),
            format!("projects/_/buckets/{}", bucket.name),
            to_spec(&BucketSpec {
                name: bucket.name.clone(),
                location: bucket.location.to_ascii_uppercase(),
                storage_class: bucket.storage_class.api_value().into(),
                uniform_access: true,
                hierarchical_namespace: bucket.hierarchical_namespace,
                versioning: false,
                labels: [(LABEL.to_string(), bp.name.clone())].into_iter().collect(),
            }),
            vec![],
            Lifecycle {
                prevent_destroy: bucket.prevent_destroy,
                force_destroy: bucket.force_destroy,
                deleted_with: None,
                keep_on_destroy: false,
            },
        );
    }
    out.extend(super::identity::grants(bp));
    // 9. Cluster software (GPU networks, NCCL stack, driver installer): Kubernetes objects as soon
    //    as the cluster answers, not waiting for node pools.
    out.extend(super::software::resources(bp, &cluster_id));
    // 0. With `enable_services`, the APIs all of the above call, enabled before anything that
    //    calls them (Terraform's `google_project_service`); never disabled, so a destroy only
    //    forgets them.
    if bp.enable_services {
        out = with_services(bp, out);
    }
    out
}

/// `resources` after one `service.<api>` per Google API they call (and Cloud Quotas, which
/// preflight reads), each resource depending on its API's.
/// The blueprint's maintenance policy as the cluster spec holds it.
fn maintenance_policy(m: &crate::blueprint::Maintenance) -> MaintenancePolicy {
    MaintenancePolicy {
        window: m.window.as_ref().map(|w| RecurringWindow {
            start: w.start.clone(),
            end: w.end.clone(),
            recurrence: w.recurrence.clone(),
        }),
        exclusions: m
            .exclusions
            .iter()
            .map(|e| {
                (
                    e.name.clone(),
                    Exclusion {
                        scope: e.scope.api_value().into(),
                        start: e.start.clone(),
                        end: e.end.clone(),
                        until_end_of_support: e.until_end_of_support,
                    },
                )
            })
            .collect(),
    }
}

/// A pool's upgrade strategy as the node pool spec holds it.
fn upgrade_settings(u: &crate::blueprint::Upgrade) -> UpgradeSettings {
    UpgradeSettings {
        strategy: u.strategy.api_value().into(),
        max_surge: u.max_surge,
        max_unavailable: u.max_unavailable,
        blue_green: u.blue_green.as_ref().map(|bg| BlueGreenSettings {
            batch_node_count: bg.batch_nodes,
            batch_percent: bg.batch_percent,
            batch_soak_seconds: bg.batch_soak_secs,
            pool_soak_seconds: bg.pool_soak_secs,
        }),
    }
}

fn with_services(bp: &Blueprint, resources: Vec<Desired>) -> Vec<Desired> {
    let mut names: Vec<&'static str> = resources
        .iter()
        .filter_map(|r| r.addr.kind.info().service)
        .chain([crate::resource::kinds::quotas::GPU_FAMILY_INFO
            .service
            .unwrap_or_default()])
        .filter(|s| !s.is_empty())
        .collect();
    names.sort_unstable();
    names.dedup();
    let addr_of = |service: &str| {
        Addr::new(
            Kind::Service,
            service
                .trim_end_matches(".googleapis.com")
                .replace('-', "_"),
        )
    };
    let mut out: Vec<Desired> = names
        .iter()
        .map(|name| Desired {
            addr: addr_of(name),
            id: format!("projects/{}/services/{name}", bp.project),
            spec: to_spec(&crate::resource::kinds::service::ServiceSpec {
                name: name.to_string(),
                enabled: true,
            }),
            dependencies: vec![],
            lifecycle: Lifecycle {
                keep_on_destroy: true,
                ..Lifecycle::default()
            },
        })
        .collect();
    for mut r in resources {
        if let Some(service) = r.addr.kind.info().service {
            r.dependencies.insert(0, addr_of(service));
        }
        out.push(r);
    }
    out
}

fn firewall(name: &str, network: &str, description: &str, mut source_ranges: Vec<String>) -> Value {
    source_ranges.sort();
    let every_port = || Some(vec!["0-65535".to_string()]);
    let rule = |protocol: &str, ports| Rule {
        protocol: protocol.into(),
        ports,
    };
    to_spec(&FirewallSpec {
        name: name.into(),
        network: network.into(),
        direction: "INGRESS".into(),
        description: description.into(),
        priority: 1000,
        allowed: vec![
            rule("icmp", None),
            rule("tcp", every_port()),
            rule("udp", every_port()),
        ],
        source_ranges,
    })
}
