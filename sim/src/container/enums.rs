//! Proto enum values of GKE (container v1) with their numbers in `google.container.v1`, as the
//! `google-cloud-container-v1` crate (1.15) encodes them. The paths that use them are in
//! [`super::enum_tables`].
//!
//! A few names appear in the discovery document but not yet in the crate (`SPECIFIC` GPU driver
//! version, the `MIGRATE_TO_*` datapath providers, the `MICROVM` sandbox type); their numbers are
//! inferred from the declaration order, which matches the proto numbers for every other value of
//! those enums.

/// `AdditionalIPRangesConfig.Status`.
pub const ADDITIONAL_IP_RANGES_CONFIG_STATUS: &[(i64, &str)] =
    &[(0, "STATUS_UNSPECIFIED"), (1, "ACTIVE"), (2, "DRAINING")];

/// `AdvancedDatapathObservabilityConfig.RelayMode`.
pub const ADVANCED_DATAPATH_OBSERVABILITY_CONFIG_RELAY_MODE: &[(i64, &str)] = &[
    (0, "RELAY_MODE_UNSPECIFIED"),
    (1, "DISABLED"),
    (3, "INTERNAL_VPC_LB"),
    (4, "EXTERNAL_LB"),
];

/// `AdvancedMachineFeatures.PerformanceMonitoringUnit`.
pub const ADVANCED_MACHINE_FEATURES_PERFORMANCE_MONITORING_UNIT: &[(i64, &str)] = &[
    (0, "PERFORMANCE_MONITORING_UNIT_UNSPECIFIED"),
    (1, "ARCHITECTURAL"),
    (2, "STANDARD"),
    (3, "ENHANCED"),
];

/// `AnonymousAuthenticationConfig.Mode`.
pub const ANONYMOUS_AUTHENTICATION_CONFIG_MODE: &[(i64, &str)] =
    &[(0, "MODE_UNSPECIFIED"), (1, "ENABLED"), (2, "LIMITED")];

/// `AutoMonitoringConfig.Scope`.
pub const AUTO_MONITORING_CONFIG_SCOPE: &[(i64, &str)] =
    &[(0, "SCOPE_UNSPECIFIED"), (1, "ALL"), (2, "NONE")];

/// `BinaryAuthorization.EvaluationMode`.
pub const BINARY_AUTHORIZATION_EVALUATION_MODE: &[(i64, &str)] = &[
    (0, "EVALUATION_MODE_UNSPECIFIED"),
    (1, "DISABLED"),
    (2, "PROJECT_SINGLETON_POLICY_ENFORCE"),
];

/// `CloudRunConfig.LoadBalancerType`.
pub const CLOUD_RUN_CONFIG_LOAD_BALANCER_TYPE: &[(i64, &str)] = &[
    (0, "LOAD_BALANCER_TYPE_UNSPECIFIED"),
    (1, "LOAD_BALANCER_TYPE_EXTERNAL"),
    (2, "LOAD_BALANCER_TYPE_INTERNAL"),
];

/// `Cluster.Status`.
pub const CLUSTER_STATUS: &[(i64, &str)] = &[
    (0, "STATUS_UNSPECIFIED"),
    (1, "PROVISIONING"),
    (2, "RUNNING"),
    (3, "RECONCILING"),
    (4, "STOPPING"),
    (5, "ERROR"),
    (6, "DEGRADED"),
];

/// `ClusterAutoscaling.AutopilotGeneralProfile`.
pub const CLUSTER_AUTOSCALING_AUTOPILOT_GENERAL_PROFILE: &[(i64, &str)] = &[
    (0, "AUTOPILOT_GENERAL_PROFILE_UNSPECIFIED"),
    (1, "NO_PERFORMANCE"),
    (2, "NONE"),
];

/// `ClusterAutoscaling.AutoscalingProfile`.
pub const CLUSTER_AUTOSCALING_AUTOSCALING_PROFILE: &[(i64, &str)] = &[
    (0, "PROFILE_UNSPECIFIED"),
    (1, "OPTIMIZE_UTILIZATION"),
    (2, "BALANCED"),
];

/// `CompliancePostureConfig.Mode`.
pub const COMPLIANCE_POSTURE_CONFIG_MODE: &[(i64, &str)] =
    &[(0, "MODE_UNSPECIFIED"), (1, "DISABLED"), (2, "ENABLED")];

/// `ConfidentialNodes.ConfidentialInstanceType`.
pub const CONFIDENTIAL_NODES_CONFIDENTIAL_INSTANCE_TYPE: &[(i64, &str)] = &[
    (0, "CONFIDENTIAL_INSTANCE_TYPE_UNSPECIFIED"),
    (1, "SEV"),
    (2, "SEV_SNP"),
    (3, "TDX"),
];

/// `ContainerdConfig.RegistryHostConfig.HostCapability`.
pub const CONTAINERD_CONFIG_REGISTRY_HOST_CONFIG_HOST_CAPABILITY: &[(i64, &str)] = &[
    (0, "HOST_CAPABILITY_UNSPECIFIED"),
    (1, "HOST_CAPABILITY_PULL"),
    (2, "HOST_CAPABILITY_RESOLVE"),
    (3, "HOST_CAPABILITY_PUSH"),
];

/// `ControlPlaneEgress.Mode`.
pub const CONTROL_PLANE_EGRESS_MODE: &[(i64, &str)] = &[
    (0, "MODE_UNSPECIFIED"),
    (1, "VIA_CONTROL_PLANE"),
    (2, "NONE"),
];

/// `DNSConfig.DNSScope`.
pub const DNS_CONFIG_DNS_SCOPE: &[(i64, &str)] = &[
    (0, "DNS_SCOPE_UNSPECIFIED"),
    (1, "CLUSTER_SCOPE"),
    (2, "VPC_SCOPE"),
];

/// `DNSConfig.Provider`.
pub const DNS_CONFIG_PROVIDER: &[(i64, &str)] = &[
    (0, "PROVIDER_UNSPECIFIED"),
    (1, "PLATFORM_DEFAULT"),
    (2, "CLOUD_DNS"),
    (3, "KUBE_DNS"),
];

/// `DatabaseEncryption.CurrentState`.
pub const DATABASE_ENCRYPTION_CURRENT_STATE: &[(i64, &str)] = &[
    (0, "CURRENT_STATE_UNSPECIFIED"),
    (2, "CURRENT_STATE_DECRYPTED"),
    (3, "CURRENT_STATE_ENCRYPTION_PENDING"),
    (4, "CURRENT_STATE_ENCRYPTION_ERROR"),
    (5, "CURRENT_STATE_DECRYPTION_PENDING"),
    (6, "CURRENT_STATE_DECRYPTION_ERROR"),
    (7, "CURRENT_STATE_ENCRYPTED"),
    (8, "CURRENT_STATE_ALL_OBJECTS_ENCRYPTION_ENABLED"),
    (9, "CURRENT_STATE_ALL_OBJECTS_ENCRYPTION_PENDING"),
    (10, "CURRENT_STATE_ALL_OBJECTS_ENCRYPTION_ERROR"),
];

/// `DatabaseEncryption.State`.
pub const DATABASE_ENCRYPTION_STATE: &[(i64, &str)] = &[
    (0, "UNKNOWN"),
    (1, "ENCRYPTED"),
    (2, "DECRYPTED"),
    (3, "ALL_OBJECTS_ENCRYPTION_ENABLED"),
];

/// `DatapathProvider`.
pub const DATAPATH_PROVIDER: &[(i64, &str)] = &[
    (0, "DATAPATH_PROVIDER_UNSPECIFIED"),
    (1, "LEGACY_DATAPATH"),
    (2, "ADVANCED_DATAPATH"),
    (3, "MIGRATE_TO_ADVANCED_DATAPATH"),
    (4, "MIGRATE_TO_LEGACY_DATAPATH"),
];

/// `DataplaneV2Config.ScalabilityMode`.
pub const DATAPLANE_V2_CONFIG_SCALABILITY_MODE: &[(i64, &str)] = &[
    (0, "SCALABILITY_MODE_UNSPECIFIED"),
    (3, "DISABLED"),
    (4, "SCALE_OPTIMIZED"),
];

/// `EnterpriseConfig.ClusterTier`.
pub const ENTERPRISE_CONFIG_CLUSTER_TIER: &[(i64, &str)] = &[
    (0, "CLUSTER_TIER_UNSPECIFIED"),
    (1, "STANDARD"),
    (2, "ENTERPRISE"),
];

/// `Fleet.MembershipType`.
pub const FLEET_MEMBERSHIP_TYPE: &[(i64, &str)] =
    &[(0, "MEMBERSHIP_TYPE_UNSPECIFIED"), (1, "LIGHTWEIGHT")];

/// `GPUDirectConfig.GPUDirectStrategy`.
pub const GPU_DIRECT_CONFIG_GPU_DIRECT_STRATEGY: &[(i64, &str)] =
    &[(0, "GPU_DIRECT_STRATEGY_UNSPECIFIED"), (2, "RDMA")];

/// `GPUDriverInstallationConfig.GPUDriverVersion`.
pub const GPU_DRIVER_INSTALLATION_CONFIG_GPU_DRIVER_VERSION: &[(i64, &str)] = &[
    (0, "GPU_DRIVER_VERSION_UNSPECIFIED"),
    (1, "INSTALLATION_DISABLED"),
    (2, "DEFAULT"),
    (3, "LATEST"),
    (4, "SPECIFIC"),
];

/// `GPUSharingConfig.GPUSharingStrategy`.
pub const GPU_SHARING_CONFIG_GPU_SHARING_STRATEGY: &[(i64, &str)] = &[
    (0, "GPU_SHARING_STRATEGY_UNSPECIFIED"),
    (1, "TIME_SHARING"),
    (2, "MPS"),
];

/// `GatewayAPIConfig.Channel`.
pub const GATEWAY_API_CONFIG_CHANNEL: &[(i64, &str)] = &[
    (0, "CHANNEL_UNSPECIFIED"),
    (1, "CHANNEL_DISABLED"),
    (3, "CHANNEL_EXPERIMENTAL"),
    (4, "CHANNEL_STANDARD"),
];

/// `GkeAutoUpgradeConfig.PatchMode`.
pub const GKE_AUTO_UPGRADE_CONFIG_PATCH_MODE: &[(i64, &str)] =
    &[(0, "PATCH_MODE_UNSPECIFIED"), (1, "ACCELERATED")];

/// `IPv6AccessType`.
pub const IPV6_ACCESS_TYPE: &[(i64, &str)] = &[
    (0, "IPV6_ACCESS_TYPE_UNSPECIFIED"),
    (1, "INTERNAL"),
    (2, "EXTERNAL"),
];

/// `InTransitEncryptionConfig`.
pub const IN_TRANSIT_ENCRYPTION_CONFIG: &[(i64, &str)] = &[
    (0, "IN_TRANSIT_ENCRYPTION_CONFIG_UNSPECIFIED"),
    (1, "IN_TRANSIT_ENCRYPTION_DISABLED"),
    (2, "IN_TRANSIT_ENCRYPTION_INTER_NODE_TRANSPARENT"),
];

/// `LinuxNodeConfig.CgroupMode`.
pub const LINUX_NODE_CONFIG_CGROUP_MODE: &[(i64, &str)] = &[
    (0, "CGROUP_MODE_UNSPECIFIED"),
    (1, "CGROUP_MODE_V1"),
    (2, "CGROUP_MODE_V2"),
];

/// `LinuxNodeConfig.NodeKernelModuleLoading.Policy`.
pub const LINUX_NODE_CONFIG_NODE_KERNEL_MODULE_LOADING_POLICY: &[(i64, &str)] = &[
    (0, "POLICY_UNSPECIFIED"),
    (1, "ENFORCE_SIGNED_MODULES"),
    (2, "DO_NOT_ENFORCE_SIGNED_MODULES"),
];

/// `LinuxNodeConfig.TransparentHugepageDefrag`.
pub const LINUX_NODE_CONFIG_TRANSPARENT_HUGEPAGE_DEFRAG: &[(i64, &str)] = &[
    (0, "TRANSPARENT_HUGEPAGE_DEFRAG_UNSPECIFIED"),
    (1, "TRANSPARENT_HUGEPAGE_DEFRAG_ALWAYS"),
    (2, "TRANSPARENT_HUGEPAGE_DEFRAG_DEFER"),
    (3, "TRANSPARENT_HUGEPAGE_DEFRAG_DEFER_WITH_MADVISE"),
    (4, "TRANSPARENT_HUGEPAGE_DEFRAG_MADVISE"),
    (5, "TRANSPARENT_HUGEPAGE_DEFRAG_NEVER"),
];

/// `LinuxNodeConfig.TransparentHugepageEnabled`.
pub const LINUX_NODE_CONFIG_TRANSPARENT_HUGEPAGE_ENABLED: &[(i64, &str)] = &[
    (0, "TRANSPARENT_HUGEPAGE_ENABLED_UNSPECIFIED"),
    (1, "TRANSPARENT_HUGEPAGE_ENABLED_ALWAYS"),
    (2, "TRANSPARENT_HUGEPAGE_ENABLED_MADVISE"),
    (3, "TRANSPARENT_HUGEPAGE_ENABLED_NEVER"),
];

/// `LoggingComponentConfig.Component`.
pub const LOGGING_COMPONENT_CONFIG_COMPONENT: &[(i64, &str)] = &[
    (0, "COMPONENT_UNSPECIFIED"),
    (1, "SYSTEM_COMPONENTS"),
    (2, "WORKLOADS"),
    (3, "APISERVER"),
    (4, "SCHEDULER"),
    (5, "CONTROLLER_MANAGER"),
    (7, "KCP_SSHD"),
    (8, "KCP_CONNECTION"),
    (9, "KCP_HPA"),
    (10, "KCP_VPA"),
];

/// `LoggingVariantConfig.Variant`.
pub const LOGGING_VARIANT_CONFIG_VARIANT: &[(i64, &str)] = &[
    (0, "VARIANT_UNSPECIFIED"),
    (1, "DEFAULT"),
    (2, "MAX_THROUGHPUT"),
];

/// `MaintenanceExclusionOptions.EndTimeBehavior`.
pub const MAINTENANCE_EXCLUSION_OPTIONS_END_TIME_BEHAVIOR: &[(i64, &str)] = &[
    (0, "END_TIME_BEHAVIOR_UNSPECIFIED"),
    (1, "UNTIL_END_OF_SUPPORT"),
];

/// `MaintenanceExclusionOptions.Scope`.
pub const MAINTENANCE_EXCLUSION_OPTIONS_SCOPE: &[(i64, &str)] = &[
    (0, "NO_UPGRADES"),
    (1, "NO_MINOR_UPGRADES"),
    (2, "NO_MINOR_OR_NODE_UPGRADES"),
];

/// `ManagedOpenTelemetryConfig.Scope`.
pub const MANAGED_OPEN_TELEMETRY_CONFIG_SCOPE: &[(i64, &str)] = &[
    (0, "SCOPE_UNSPECIFIED"),
    (1, "NONE"),
    (2, "COLLECTION_AND_INSTRUMENTATION_COMPONENTS"),
];

/// `MonitoringComponentConfig.Component`.
pub const MONITORING_COMPONENT_CONFIG_COMPONENT: &[(i64, &str)] = &[
    (0, "COMPONENT_UNSPECIFIED"),
    (1, "SYSTEM_COMPONENTS"),
    (3, "APISERVER"),
    (4, "SCHEDULER"),
    (5, "CONTROLLER_MANAGER"),
    (7, "STORAGE"),
    (8, "HPA"),
    (9, "POD"),
    (10, "DAEMONSET"),
    (11, "DEPLOYMENT"),
    (12, "STATEFULSET"),
    (13, "CADVISOR"),
    (14, "KUBELET"),
    (15, "DCGM"),
    (16, "JOBSET"),
];

/// `NetworkPolicy.Provider`.
pub const NETWORK_POLICY_PROVIDER: &[(i64, &str)] = &[(0, "PROVIDER_UNSPECIFIED"), (1, "CALICO")];

/// `NetworkTierConfig.NetworkTier`.
pub const NETWORK_TIER_CONFIG_NETWORK_TIER: &[(i64, &str)] = &[
    (0, "NETWORK_TIER_UNSPECIFIED"),
    (1, "NETWORK_TIER_DEFAULT"),
    (2, "NETWORK_TIER_PREMIUM"),
    (3, "NETWORK_TIER_STANDARD"),
];

/// `NodeConfig.EffectiveCgroupMode`.
pub const NODE_CONFIG_EFFECTIVE_CGROUP_MODE: &[(i64, &str)] = &[
    (0, "EFFECTIVE_CGROUP_MODE_UNSPECIFIED"),
    (1, "EFFECTIVE_CGROUP_MODE_V1"),
    (2, "EFFECTIVE_CGROUP_MODE_V2"),
];

/// `NodeConfig.LocalSsdEncryptionMode`.
pub const NODE_CONFIG_LOCAL_SSD_ENCRYPTION_MODE: &[(i64, &str)] = &[
    (0, "LOCAL_SSD_ENCRYPTION_MODE_UNSPECIFIED"),
    (1, "STANDARD_ENCRYPTION"),
    (2, "EPHEMERAL_KEY_ENCRYPTION"),
];

/// `NodeCreationConfig.Mode`.
pub const NODE_CREATION_CONFIG_MODE: &[(i64, &str)] = &[
    (0, "MODE_UNSPECIFIED"),
    (1, "VIA_KUBELET"),
    (2, "VIA_CONTROL_PLANE"),
];

/// `NodeNetworkConfig.NetworkPerformanceConfig.Tier`.
pub const NODE_NETWORK_CONFIG_NETWORK_PERFORMANCE_CONFIG_TIER: &[(i64, &str)] =
    &[(0, "TIER_UNSPECIFIED"), (1, "TIER_1")];

/// `NodePool.PlacementPolicy.Type`.
pub const NODE_POOL_PLACEMENT_POLICY_TYPE: &[(i64, &str)] =
    &[(0, "TYPE_UNSPECIFIED"), (1, "COMPACT")];

/// `NodePool.Status`.
pub const NODE_POOL_STATUS: &[(i64, &str)] = &[
    (0, "STATUS_UNSPECIFIED"),
    (1, "PROVISIONING"),
    (2, "RUNNING"),
    (3, "RUNNING_WITH_ERROR"),
    (4, "RECONCILING"),
    (5, "STOPPING"),
    (6, "ERROR"),
];

/// `NodePool.UpdateInfo.BlueGreenInfo.Phase`.
pub const NODE_POOL_UPDATE_INFO_BLUE_GREEN_INFO_PHASE: &[(i64, &str)] = &[
    (0, "PHASE_UNSPECIFIED"),
    (1, "UPDATE_STARTED"),
    (2, "CREATING_GREEN_POOL"),
    (3, "CORDONING_BLUE_POOL"),
    (4, "DRAINING_BLUE_POOL"),
    (5, "NODE_POOL_SOAKING"),
    (6, "DELETING_BLUE_POOL"),
    (7, "ROLLBACK_STARTED"),
];

/// `NodePoolAutoscaling.LocationPolicy`.
pub const NODE_POOL_AUTOSCALING_LOCATION_POLICY: &[(i64, &str)] = &[
    (0, "LOCATION_POLICY_UNSPECIFIED"),
    (1, "BALANCED"),
    (2, "ANY"),
];

/// `NodePoolUpdateStrategy`.
pub const NODE_POOL_UPDATE_STRATEGY: &[(i64, &str)] = &[
    (0, "NODE_POOL_UPDATE_STRATEGY_UNSPECIFIED"),
    (2, "BLUE_GREEN"),
    (3, "SURGE"),
    (5, "SHORT_LIVED"),
];

/// `NodeTaint.Effect`.
pub const NODE_TAINT_EFFECT: &[(i64, &str)] = &[
    (0, "EFFECT_UNSPECIFIED"),
    (1, "NO_SCHEDULE"),
    (2, "PREFER_NO_SCHEDULE"),
    (3, "NO_EXECUTE"),
];

/// `NotificationConfig.EventType`.
pub const NOTIFICATION_CONFIG_EVENT_TYPE: &[(i64, &str)] = &[
    (0, "EVENT_TYPE_UNSPECIFIED"),
    (1, "UPGRADE_AVAILABLE_EVENT"),
    (2, "UPGRADE_EVENT"),
    (3, "SECURITY_BULLETIN_EVENT"),
    (4, "UPGRADE_INFO_EVENT"),
];

/// `Operation.Status`.
pub const OPERATION_STATUS: &[(i64, &str)] = &[
    (0, "STATUS_UNSPECIFIED"),
    (1, "PENDING"),
    (2, "RUNNING"),
    (3, "DONE"),
    (4, "ABORTING"),
];

/// `Operation.Type`.
pub const OPERATION_TYPE: &[(i64, &str)] = &[
    (0, "TYPE_UNSPECIFIED"),
    (1, "CREATE_CLUSTER"),
    (2, "DELETE_CLUSTER"),
    (3, "UPGRADE_MASTER"),
    (4, "UPGRADE_NODES"),
    (5, "REPAIR_CLUSTER"),
    (6, "UPDATE_CLUSTER"),
    (7, "CREATE_NODE_POOL"),
    (8, "DELETE_NODE_POOL"),
    (9, "SET_NODE_POOL_MANAGEMENT"),
    (10, "AUTO_REPAIR_NODES"),
    (11, "AUTO_UPGRADE_NODES"),
    (12, "SET_LABELS"),
    (13, "SET_MASTER_AUTH"),
    (14, "SET_NODE_POOL_SIZE"),
    (15, "SET_NETWORK_POLICY"),
    (16, "SET_MAINTENANCE_POLICY"),
    (18, "RESIZE_CLUSTER"),
    (19, "FLEET_FEATURE_UPGRADE"),
];

/// `PodAutoscaling.HPAProfile`.
pub const POD_AUTOSCALING_HPA_PROFILE: &[(i64, &str)] = &[
    (0, "HPA_PROFILE_UNSPECIFIED"),
    (1, "NONE"),
    (2, "PERFORMANCE"),
];

/// `PrivateIPv6GoogleAccess`.
pub const PRIVATE_IPV6_GOOGLE_ACCESS: &[(i64, &str)] = &[
    (0, "PRIVATE_IPV6_GOOGLE_ACCESS_UNSPECIFIED"),
    (1, "PRIVATE_IPV6_GOOGLE_ACCESS_DISABLED"),
    (2, "PRIVATE_IPV6_GOOGLE_ACCESS_TO_GOOGLE"),
    (3, "PRIVATE_IPV6_GOOGLE_ACCESS_BIDIRECTIONAL"),
];

/// `ReleaseChannel.Channel`.
pub const RELEASE_CHANNEL_CHANNEL: &[(i64, &str)] = &[
    (0, "UNSPECIFIED"),
    (1, "RAPID"),
    (2, "REGULAR"),
    (3, "STABLE"),
    (4, "EXTENDED"),
];

/// `ReservationAffinity.Type`.
pub const RESERVATION_AFFINITY_TYPE: &[(i64, &str)] = &[
    (0, "UNSPECIFIED"),
    (1, "NO_RESERVATION"),
    (2, "ANY_RESERVATION"),
    (3, "SPECIFIC_RESERVATION"),
    (4, "ANY_RESERVATION_THEN_FAIL"),
];

/// `SandboxConfig.Type`.
pub const SANDBOX_CONFIG_TYPE: &[(i64, &str)] =
    &[(0, "UNSPECIFIED"), (1, "GVISOR"), (2, "MICROVM")];

/// `SecondaryBootDisk.Mode`.
pub const SECONDARY_BOOT_DISK_MODE: &[(i64, &str)] =
    &[(0, "MODE_UNSPECIFIED"), (1, "CONTAINER_IMAGE_CACHE")];

/// `SecurityPostureConfig.Mode`.
pub const SECURITY_POSTURE_CONFIG_MODE: &[(i64, &str)] = &[
    (0, "MODE_UNSPECIFIED"),
    (1, "DISABLED"),
    (2, "BASIC"),
    (3, "ENTERPRISE"),
];

/// `SecurityPostureConfig.VulnerabilityMode`.
pub const SECURITY_POSTURE_CONFIG_VULNERABILITY_MODE: &[(i64, &str)] = &[
    (0, "VULNERABILITY_MODE_UNSPECIFIED"),
    (1, "VULNERABILITY_DISABLED"),
    (2, "VULNERABILITY_BASIC"),
    (3, "VULNERABILITY_ENTERPRISE"),
];

/// `SetMasterAuthRequest.Action`.
pub const SET_MASTER_AUTH_REQUEST_ACTION: &[(i64, &str)] = &[
    (0, "UNKNOWN"),
    (1, "SET_PASSWORD"),
    (2, "GENERATE_PASSWORD"),
    (3, "SET_USERNAME"),
];

/// `SoleTenantConfig.NodeAffinity.Operator`.
pub const SOLE_TENANT_CONFIG_NODE_AFFINITY_OPERATOR: &[(i64, &str)] =
    &[(0, "OPERATOR_UNSPECIFIED"), (1, "IN"), (2, "NOT_IN")];

/// `StackType`.
pub const STACK_TYPE: &[(i64, &str)] =
    &[(0, "STACK_TYPE_UNSPECIFIED"), (1, "IPV4"), (2, "IPV4_IPV6")];

/// `StatusCondition.Code`.
pub const STATUS_CONDITION_CODE: &[(i64, &str)] = &[
    (0, "UNKNOWN"),
    (1, "GCE_STOCKOUT"),
    (2, "GKE_SERVICE_ACCOUNT_DELETED"),
    (3, "GCE_QUOTA_EXCEEDED"),
    (4, "SET_BY_OPERATOR"),
    (7, "CLOUD_KMS_KEY_ERROR"),
    (9, "CA_EXPIRING"),
    (10, "NODE_SERVICE_ACCOUNT_MISSING_PERMISSIONS"),
    (11, "CLOUD_KMS_KEY_DESTROYED"),
];

/// `TaintConfig.ArchitectureTaintBehavior`.
pub const TAINT_CONFIG_ARCHITECTURE_TAINT_BEHAVIOR: &[(i64, &str)] = &[
    (0, "ARCHITECTURE_TAINT_BEHAVIOR_UNSPECIFIED"),
    (1, "NONE"),
    (2, "ARM"),
];

/// `WindowsNodeConfig.OSVersion`.
pub const WINDOWS_NODE_CONFIG_OS_VERSION: &[(i64, &str)] = &[
    (0, "OS_VERSION_UNSPECIFIED"),
    (1, "OS_VERSION_LTSC2019"),
    (2, "OS_VERSION_LTSC2022"),
];

/// `WorkloadMetadataConfig.Mode`.
pub const WORKLOAD_METADATA_CONFIG_MODE: &[(i64, &str)] = &[
    (0, "MODE_UNSPECIFIED"),
    (1, "GCE_METADATA"),
    (2, "GKE_METADATA"),
];

/// `google.rpc.Code`.
pub const GOOGLE_RPC_CODE: &[(i64, &str)] = &[
    (0, "OK"),
    (1, "CANCELLED"),
    (2, "UNKNOWN"),
    (3, "INVALID_ARGUMENT"),
    (4, "DEADLINE_EXCEEDED"),
    (5, "NOT_FOUND"),
    (6, "ALREADY_EXISTS"),
    (7, "PERMISSION_DENIED"),
    (8, "RESOURCE_EXHAUSTED"),
    (9, "FAILED_PRECONDITION"),
    (10, "ABORTED"),
    (11, "OUT_OF_RANGE"),
    (12, "UNIMPLEMENTED"),
    (13, "INTERNAL"),
    (14, "UNAVAILABLE"),
    (15, "DATA_LOSS"),
    (16, "UNAUTHENTICATED"),
];

#[cfg(test)]
mod tests {
    use super::super::enum_tables::*;
    use crate::enums::EnumTable;
    use serde_json::Value;
    use std::collections::BTreeSet;

    /// The discovery document, which sits next to the repository (`../shared/reference`; one
    /// level further up from a git worktree under `wt/`).
    fn discovery() -> Value {
        let manifest = env!("CARGO_MANIFEST_DIR");
        let text = ["../..", "../../.."]
            .iter()
            .map(|up| format!("{manifest}/{up}/shared/reference/discovery/container.v1.json"))
            .find_map(|path| std::fs::read_to_string(path).ok())
            .expect("discovery document next to the repo");
        serde_json::from_str(&text).expect("valid JSON")
    }

    /// The enum names the discovery document gives the field at `path` under `schema`.
    fn discovery_enum(doc: &Value, schema: &str, path: &str) -> Vec<String> {
        let schemas = &doc["schemas"];
        let mut current = schema.to_string();
        let segments: Vec<&str> = path.split('.').collect();
        for (i, segment) in segments.iter().enumerate() {
            let (name, list) = match segment.strip_suffix("[]") {
                Some(n) => (n, true),
                None => (*segment, false),
            };
            let (name, map) = match name.strip_suffix("{}") {
                Some(n) => (n, true),
                None => (name, false),
            };
            let mut property = schemas[&current]["properties"][name].clone();
            assert!(!property.is_null(), "{schema}.{path}: no property {name}");
            if list {
                property = property["items"].clone();
            }
            if map {
                property = property["additionalProperties"].clone();
            }
            if i + 1 == segments.len() {
                return property["enum"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{schema}.{path} is not an enum"))
                    .iter()
                    .map(|v| v.as_str().unwrap().to_string())
                    .collect();
            }
            current = property["$ref"].as_str().unwrap().to_string();
        }
        unreachable!()
    }

    #[test]
    fn table_names_match_the_discovery_document() {
        let doc = discovery();
        let tables: &[(&str, EnumTable)] = &[
            ("Cluster", CLUSTER),
            ("NodePool", NODE_POOL),
            ("Operation", OPERATION),
            ("ServerConfig", SERVER_CONFIG),
            ("UpdateClusterRequest", UPDATE_CLUSTER_REQUEST),
            ("UpdateNodePoolRequest", UPDATE_NODE_POOL_REQUEST),
            (
                "SetNodePoolAutoscalingRequest",
                SET_NODE_POOL_AUTOSCALING_REQUEST,
            ),
            ("SetAddonsConfigRequest", SET_ADDONS_CONFIG_REQUEST),
            (
                "SetMaintenancePolicyRequest",
                SET_MAINTENANCE_POLICY_REQUEST,
            ),
            ("SetNetworkPolicyRequest", SET_NETWORK_POLICY_REQUEST),
            ("SetMasterAuthRequest", SET_MASTER_AUTH_REQUEST),
        ];
        let mut checked = 0;
        for (schema, table) in tables {
            for field in *table {
                let expected: BTreeSet<String> = discovery_enum(&doc, schema, field.path)
                    .into_iter()
                    .collect();
                let ours: BTreeSet<String> =
                    field.values.iter().map(|(_, n)| n.to_string()).collect();
                assert_eq!(ours, expected, "{schema}.{}", field.path);
                let numbers: BTreeSet<i64> = field.values.iter().map(|(n, _)| *n).collect();
                assert_eq!(numbers.len(), field.values.len(), "{schema}.{}", field.path);
                checked += 1;
            }
        }
        assert!(checked > 200, "{checked}");
        // The fields this simulator reasons about are all covered.
        for path in [
            "status",
            "networkConfig.datapathProvider",
            "releaseChannel.channel",
            "nodePools[].status",
            "nodePools[].config.taints[].effect",
            "nodePools[].config.reservationAffinity.consumeReservationType",
            "nodePools[].config.accelerators[].gpuDriverInstallationConfig.gpuDriverVersion",
            "nodePools[].config.workloadMetadataConfig.mode",
            "nodePools[].placementPolicy.type",
            "nodePools[].upgradeSettings.strategy",
            "nodePools[].autoscaling.locationPolicy",
            "networkConfig.privateIpv6GoogleAccess",
            "conditions[].code",
        ] {
            assert!(CLUSTER.iter().any(|f| f.path == path), "{path}");
        }
        for path in ["status", "operationType", "nodepoolConditions[].code"] {
            assert!(OPERATION.iter().any(|f| f.path == path), "{path}");
        }
    }

    #[test]
    fn numbers_follow_the_proto() {
        let find = |table: EnumTable, path: &str| {
            table
                .iter()
                .find(|f| f.path == path)
                .map(|f| f.values)
                .unwrap()
        };
        let status = find(CLUSTER, "status");
        assert!(status.contains(&(2, "RUNNING")) && status.contains(&(6, "DEGRADED")));
        let op = find(OPERATION, "operationType");
        assert!(op.contains(&(14, "SET_NODE_POOL_SIZE")) && op.contains(&(18, "RESIZE_CLUSTER")));
        let strategy = find(NODE_POOL, "upgradeSettings.strategy");
        assert!(strategy.contains(&(3, "SURGE")) && strategy.contains(&(2, "BLUE_GREEN")));
    }
}
