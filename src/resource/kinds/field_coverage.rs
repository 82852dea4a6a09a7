//! Each kind's `FIELDS` list exactly the top-level fields its spec serializes: a field missing
//! from the table would never be diffed (a change to it planned nothing), and an entry without a
//! spec field could never differ.
//!
//! Each sample is a struct literal with every `Option` set and every skippable field filled, so
//! serde skips nothing and a field added to a spec does not compile here until its sample has it.

use super::*;
use crate::resource::spec::Field;
use std::collections::{BTreeMap, BTreeSet};

/// Where `fields` and the top-level keys of `samples` (specs of kind `kind`) part: each key no
/// entry names, and each entry that no sample has.
pub(super) fn mismatches(kind: &str, fields: &[Field], samples: &[Value]) -> Vec<String> {
    let mut keys = BTreeSet::new();
    for sample in samples {
        let Value::Object(map) = sample else {
            return vec![format!("a {kind} spec is not a JSON object: {sample}")];
        };
        keys.extend(map.keys().map(String::as_str));
    }
    let declared: BTreeSet<&str> = fields.iter().map(|f| f.name).collect();
    let mut out: Vec<String> = keys
        .difference(&declared)
        .map(|key| {
            format!(
                "{kind}: the spec serializes `{key}`, which its FIELDS do not list (never diffed)"
            )
        })
        .collect();
    out.extend(
        declared.difference(&keys).map(|name| {
            format!("{kind}: FIELDS lists `{name}`, which its spec does not serialize")
        }),
    );
    for name in &declared {
        if fields.iter().filter(|f| f.name == *name).count() > 1 {
            out.push(format!("{kind}: FIELDS lists `{name}` twice"));
        }
    }
    out
}

/// Representative specs of `kind`, every field present.
fn samples(kind: Kind) -> Vec<Value> {
    let s = |text: &str| text.to_string();
    let labels = || Labels::from([(s("a3ctl-blueprint"), s("bp"))]);
    match kind {
        Kind::Network => vec![to_spec(&network::NetworkSpec {
            name: s("n"),
            description: s("d"),
            auto_create_subnetworks: false,
            mtu: 8244,
            routing_mode: s("REGIONAL"),
            network_profile: Some(s("projects/p/global/networkProfiles/z-vpc-roce")),
        })],
        Kind::Subnetwork => vec![to_spec(&subnetwork::SubnetworkSpec {
            name: s("s"),
            network: s("n"),
            region: s("r"),
            description: s("d"),
            ip_cidr_range: s("10.0.0.0/24"),
            secondary_ranges: vec![subnetwork::SecondaryRange {
                name: s("pods"),
                cidr: s("10.4.0.0/14"),
            }],
            private_ip_google_access: true,
        })],
        Kind::Firewall => vec![to_spec(&firewall::FirewallSpec {
            name: s("f"),
            network: s("n"),
            direction: s("INGRESS"),
            description: s("d"),
            priority: 1000,
            allowed: vec![firewall::Rule {
                protocol: s("tcp"),
                ports: Some(vec![s("22")]),
            }],
            source_ranges: vec![s("0.0.0.0/0")],
        })],
        Kind::Router => vec![to_spec(&router::RouterSpec {
            name: s("r"),
            network: s("n"),
            region: s("r"),
            description: s("d"),
            nat: Some(router::Nat {
                name: s("nat"),
                ip_allocation: s("AUTO_ONLY"),
                source_ranges: s("ALL_SUBNETWORKS_ALL_IP_RANGES"),
            }),
        })],
        Kind::ResourcePolicy => vec![to_spec(&resource_policy::ResourcePolicySpec {
            name: s("p"),
            region: s("r"),
            collocation: s("COLLOCATED"),
            description: s("d"),
        })],
        Kind::Cluster => vec![to_spec(&cluster::ClusterSpec {
            name: s("c"),
            location: s("us-central1"),
            network: s("n"),
            subnetwork: s("s"),
            pods_range: s("pods"),
            services_range: s("services"),
            datapath_provider: s("ADVANCED_DATAPATH"),
            multi_networking: true,
            release_channel: s("REGULAR"),
            version: s("1.33"),
            private_nodes: true,
            master_ipv4_cidr: Some(s("172.16.0.32/28")),
            authorized_networks: vec![cluster::AuthorizedNetwork {
                cidr: s("0.0.0.0/0"),
                name: s("anywhere"),
            }],
            labels: labels(),
            filestore_csi: true,
            gcsfuse_csi: true,
            workload_pool: s("p.svc.id.goog"),
            bootstrap_pool: cluster::BootstrapPool::Removed,
            gpudirect_family: Some(s("a3-megagpu-8g")),
            managed_gpu_networking: true,
            deletion_protection: true,
            maintenance_policy: Some(cluster::MaintenancePolicy::default()),
        })],
        Kind::NodePool => vec![to_spec(&node_pool::NodePoolSpec {
            cluster: s("c"),
            location: s("us-central1"),
            name: s("gpu"),
            machine_type: s("a3-megagpu-8g"),
            locations: vec![s("us-central1-a")],
            node_count: 2,
            accelerator: Some(node_pool::Accelerator {
                kind: s("nvidia-h100-mega-80gb"),
                count: 8,
                driver: s("LATEST"),
            }),
            additional_networks: vec![node_pool::AdditionalNetwork {
                network: s("n"),
                subnetwork: s("s"),
            }],
            placement_policy: Some(s("p")),
            reservation: Some(node_pool::Reservation {
                name: s("r"),
                block: Some(s("b")),
            }),
            capacity: s("reservation"),
            local_ssd_count: 16,
            labels: labels(),
            taints: vec![node_pool::Taint {
                key: s("nvidia.com/gpu"),
                value: s("present"),
                effect: s("NO_SCHEDULE"),
            }],
            gvnic: true,
            image_type: s("COS_CONTAINERD"),
            disk_size_gb: 200,
            auto_repair: true,
            auto_upgrade: true,
            service_account: s("default"),
            upgrade_settings: Some(node_pool::UpgradeSettings {
                strategy: s("SURGE"),
                max_surge: 1,
                max_unavailable: 0,
                blue_green: None,
            }),
            version: s("1.33"),
            accelerator_network_profile: Some(s("auto")),
            node_labels: BTreeMap::from([(s("a3ctl.dev/pool"), s("gpu"))]),
        })],
        Kind::Filestore => vec![to_spec(&filestore::FilestoreSpec {
            name: s("f"),
            location: s("us-central1-a"),
            tier: s("BASIC_SSD"),
            capacity_gb: 2560,
            share: s("share"),
            network: s("n"),
            labels: labels(),
            deletion_protection: true,
        })],
        Kind::Repository => vec![to_spec(&repository::RepositorySpec {
            name: s("r"),
            location: s("us"),
            format: s("DOCKER"),
            description: s("d"),
            labels: labels(),
        })],
        Kind::Bucket => vec![to_spec(&bucket::BucketSpec {
            name: s("b"),
            location: s("US-CENTRAL1"),
            storage_class: s("STANDARD"),
            uniform_access: true,
            hierarchical_namespace: true,
            versioning: true,
            labels: labels(),
        })],
        Kind::Kubernetes => vec![
            to_spec(&kubernetes::ObjectSpec {
                cluster: s("c"),
                object: serde_json::from_value(serde_json::json!({
                    "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"},
                }))
                .unwrap(),
                ready: Some(s("queue_active")),
            }),
            to_spec(&kubernetes::ReleaseSpec {
                cluster: s("c"),
                release: kubernetes::Release {
                    name: s("kueue"),
                    version: s("v0.17.1"),
                    manifest: kubernetes::ManifestRef {
                        kind: s("url"),
                        location: s("https://example.com/kueue.yaml"),
                    },
                    sha256: Some(s("00")),
                    requires: vec![],
                },
                missing: vec![s("Deployment/kueue-system/kueue-controller-manager")],
                ready: Some(s("queue_active")),
            }),
        ],
        Kind::Reservation => vec![to_spec(&reservation::ReservationSpec {
            name: s("r"),
            zone: s("us-central1-a"),
            machine_type: s("a3-megagpu-8g"),
            count: 2,
            accelerators: vec![reservation::ReservedAccelerator {
                kind: s("nvidia-h100-mega-80gb"),
                count: 8,
            }],
            local_ssds: 16,
            specific_reservation_required: true,
            deployment_type: s("DENSE"),
            share_type: s("LOCAL"),
        })],
        Kind::Service => vec![to_spec(&service::ServiceSpec {
            name: s("compute.googleapis.com"),
            enabled: true,
        })],
        Kind::Region | Kind::Project => vec![to_spec(&quotas::QuotasSpec {
            name: s("us-central1"),
            quotas: BTreeMap::from([(
                s("CPUS"),
                quotas::Quota {
                    limit: 24.0,
                    usage: 8.0,
                },
            )]),
        })],
        Kind::MachineType => vec![to_spec(&quotas::MachineTypeSpec {
            name: s("a3-megagpu-8g"),
            guest_cpus: 208,
            accelerators: vec![(s("nvidia-h100-mega-80gb"), 8)],
        })],
        Kind::GpuFamilyQuota => vec![to_spec(&quotas::GpuFamilyQuotaSpec {
            region: s("us-central1"),
            family: s("NVIDIA_H100_MEGA"),
            limit: Some(16),
            usage: 8,
            reserved: 0,
        })],
        Kind::GkeVersions => vec![to_spec(&gke_versions::GkeVersionsSpec {
            location: s("us-central1"),
            channels: BTreeMap::from([(s("REGULAR"), gke_versions::ChannelVersions::default())]),
            unspecified: gke_versions::ChannelVersions::default(),
        })],
        Kind::ServiceAccount => vec![to_spec(&service_account::ServiceAccountSpec {
            account_id: s("a3ctl-nodes"),
            display_name: s("nodes"),
            description: s("d"),
        })],
        Kind::IamMember => vec![to_spec(&iam_member::IamMemberSpec {
            resource: s("projects/p"),
            role: s("roles/logging.logWriter"),
            member: s("serviceAccount:a@p.iam.gserviceaccount.com"),
        })],
    }
}

#[test]
fn every_kind_lists_exactly_the_fields_its_spec_serializes() {
    let problems: Vec<String> = KINDS
        .iter()
        .flat_map(|info| mismatches(info.name, info.fields, &samples(info.kind)))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_planted_mismatch_is_named_with_its_kind_and_field() {
    let info = network::INFO;
    let mut spec = samples(Kind::Network).remove(0);
    assert!(mismatches(info.name, info.fields, std::slice::from_ref(&spec)).is_empty());
    // A spec field the table forgot.
    spec["bgp_asn"] = Value::from(64512);
    assert_eq!(
        mismatches(info.name, info.fields, std::slice::from_ref(&spec)),
        ["network: the spec serializes `bgp_asn`, which its FIELDS do not list (never diffed)"]
    );
    // A table entry the spec does not have.
    spec.as_object_mut().unwrap().remove("bgp_asn");
    spec.as_object_mut().unwrap().remove("mtu");
    assert_eq!(
        mismatches(info.name, info.fields, &[spec.clone()]),
        ["network: FIELDS lists `mtu`, which its spec does not serialize"]
    );
    // A name listed twice.
    let twice = [info.fields, &info.fields[..1]].concat();
    let spec = samples(Kind::Network).remove(0);
    assert_eq!(
        mismatches(info.name, &twice, &[spec]),
        ["network: FIELDS lists `name` twice"]
    );
}
