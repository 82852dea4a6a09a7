//! Which JSON paths of each GKE message hold enums (see [`crate::enums`] for the path syntax),
//! generated from the discovery document's schemas. Fields whose enum is not in the
//! `google-cloud-container-v1` crate yet (kernel command-line overrides, the node-config update
//! mode, the autoprovisioning permission check) are left out: they are stored and answered as
//! names.

use super::enums::*;
use crate::enums::{EnumField, EnumTable};

const fn field(path: &'static str, values: &'static [(i64, &'static str)]) -> EnumField {
    EnumField { path, values }
}

/// Enum fields of `Cluster`.
pub const CLUSTER: EnumTable = &[
    field(
        "addonsConfig.cloudRunConfig.loadBalancerType",
        CLOUD_RUN_CONFIG_LOAD_BALANCER_TYPE,
    ),
    field(
        "anonymousAuthenticationConfig.mode",
        ANONYMOUS_AUTHENTICATION_CONFIG_MODE,
    ),
    field(
        "autoscaling.autopilotGeneralProfile",
        CLUSTER_AUTOSCALING_AUTOPILOT_GENERAL_PROFILE,
    ),
    field(
        "autoscaling.autoprovisioningNodePoolDefaults.upgradeSettings.strategy",
        NODE_POOL_UPDATE_STRATEGY,
    ),
    field(
        "autoscaling.autoscalingProfile",
        CLUSTER_AUTOSCALING_AUTOSCALING_PROFILE,
    ),
    field(
        "binaryAuthorization.evaluationMode",
        BINARY_AUTHORIZATION_EVALUATION_MODE,
    ),
    field(
        "compliancePostureConfig.mode",
        COMPLIANCE_POSTURE_CONFIG_MODE,
    ),
    field("conditions[].canonicalCode", GOOGLE_RPC_CODE),
    field("conditions[].code", STATUS_CONDITION_CODE),
    field(
        "confidentialNodes.confidentialInstanceType",
        CONFIDENTIAL_NODES_CONFIDENTIAL_INSTANCE_TYPE,
    ),
    field("controlPlaneEgress.mode", CONTROL_PLANE_EGRESS_MODE),
    field(
        "databaseEncryption.currentState",
        DATABASE_ENCRYPTION_CURRENT_STATE,
    ),
    field("databaseEncryption.state", DATABASE_ENCRYPTION_STATE),
    field(
        "enterpriseConfig.clusterTier",
        ENTERPRISE_CONFIG_CLUSTER_TIER,
    ),
    field(
        "enterpriseConfig.desiredTier",
        ENTERPRISE_CONFIG_CLUSTER_TIER,
    ),
    field("fleet.membershipType", FLEET_MEMBERSHIP_TYPE),
    field(
        "gkeAutoUpgradeConfig.patchMode",
        GKE_AUTO_UPGRADE_CONFIG_PATCH_MODE,
    ),
    field(
        "ipAllocationPolicy.additionalIpRangesConfigs[].status",
        ADDITIONAL_IP_RANGES_CONFIG_STATUS,
    ),
    field("ipAllocationPolicy.ipv6AccessType", IPV6_ACCESS_TYPE),
    field(
        "ipAllocationPolicy.networkTierConfig.networkTier",
        NETWORK_TIER_CONFIG_NETWORK_TIER,
    ),
    field("ipAllocationPolicy.stackType", STACK_TYPE),
    field(
        "loggingConfig.componentConfig.enableComponents[]",
        LOGGING_COMPONENT_CONFIG_COMPONENT,
    ),
    field(
        "maintenancePolicy.window.recurringWindow.window.maintenanceExclusionOptions.endTimeBehavior",
        MAINTENANCE_EXCLUSION_OPTIONS_END_TIME_BEHAVIOR,
    ),
    field(
        "maintenancePolicy.window.recurringWindow.window.maintenanceExclusionOptions.scope",
        MAINTENANCE_EXCLUSION_OPTIONS_SCOPE,
    ),
    // Exclusions are a map of name → TimeWindow (`maintenanceExclusions`), which the generator
    // does not follow.
    field(
        "maintenancePolicy.window.maintenanceExclusions{}.maintenanceExclusionOptions.endTimeBehavior",
        MAINTENANCE_EXCLUSION_OPTIONS_END_TIME_BEHAVIOR,
    ),
    field(
        "maintenancePolicy.window.maintenanceExclusions{}.maintenanceExclusionOptions.scope",
        MAINTENANCE_EXCLUSION_OPTIONS_SCOPE,
    ),
    field(
        "managedOpentelemetryConfig.scope",
        MANAGED_OPEN_TELEMETRY_CONFIG_SCOPE,
    ),
    field(
        "monitoringConfig.advancedDatapathObservabilityConfig.relayMode",
        ADVANCED_DATAPATH_OBSERVABILITY_CONFIG_RELAY_MODE,
    ),
    field(
        "monitoringConfig.componentConfig.enableComponents[]",
        MONITORING_COMPONENT_CONFIG_COMPONENT,
    ),
    field(
        "monitoringConfig.managedPrometheusConfig.autoMonitoringConfig.scope",
        AUTO_MONITORING_CONFIG_SCOPE,
    ),
    field("networkConfig.datapathProvider", DATAPATH_PROVIDER),
    field(
        "networkConfig.dataplaneV2Config.scalabilityMode",
        DATAPLANE_V2_CONFIG_SCALABILITY_MODE,
    ),
    field("networkConfig.dnsConfig.clusterDns", DNS_CONFIG_PROVIDER),
    field(
        "networkConfig.dnsConfig.clusterDnsScope",
        DNS_CONFIG_DNS_SCOPE,
    ),
    field(
        "networkConfig.gatewayApiConfig.channel",
        GATEWAY_API_CONFIG_CHANNEL,
    ),
    field(
        "networkConfig.inTransitEncryptionConfig",
        IN_TRANSIT_ENCRYPTION_CONFIG,
    ),
    field(
        "networkConfig.networkPerformanceConfig.totalEgressBandwidthTier",
        NODE_NETWORK_CONFIG_NETWORK_PERFORMANCE_CONFIG_TIER,
    ),
    field(
        "networkConfig.privateIpv6GoogleAccess",
        PRIVATE_IPV6_GOOGLE_ACCESS,
    ),
    field("networkPolicy.provider", NETWORK_POLICY_PROVIDER),
    field(
        "nodeConfig.accelerators[].gpuDriverInstallationConfig.gpuDriverVersion",
        GPU_DRIVER_INSTALLATION_CONFIG_GPU_DRIVER_VERSION,
    ),
    field(
        "nodeConfig.accelerators[].gpuSharingConfig.gpuSharingStrategy",
        GPU_SHARING_CONFIG_GPU_SHARING_STRATEGY,
    ),
    field(
        "nodeConfig.advancedMachineFeatures.performanceMonitoringUnit",
        ADVANCED_MACHINE_FEATURES_PERFORMANCE_MONITORING_UNIT,
    ),
    field(
        "nodeConfig.confidentialNodes.confidentialInstanceType",
        CONFIDENTIAL_NODES_CONFIDENTIAL_INSTANCE_TYPE,
    ),
    field(
        "nodeConfig.containerdConfig.registryHosts[].hosts[].capabilities[]",
        CONTAINERD_CONFIG_REGISTRY_HOST_CONFIG_HOST_CAPABILITY,
    ),
    field(
        "nodeConfig.effectiveCgroupMode",
        NODE_CONFIG_EFFECTIVE_CGROUP_MODE,
    ),
    field(
        "nodeConfig.gpuDirectConfig.gpuDirectStrategy",
        GPU_DIRECT_CONFIG_GPU_DIRECT_STRATEGY,
    ),
    field(
        "nodeConfig.linuxNodeConfig.cgroupMode",
        LINUX_NODE_CONFIG_CGROUP_MODE,
    ),
    field(
        "nodeConfig.linuxNodeConfig.nodeKernelModuleLoading.policy",
        LINUX_NODE_CONFIG_NODE_KERNEL_MODULE_LOADING_POLICY,
    ),
    field(
        "nodeConfig.linuxNodeConfig.transparentHugepageDefrag",
        LINUX_NODE_CONFIG_TRANSPARENT_HUGEPAGE_DEFRAG,
    ),
    field(
        "nodeConfig.linuxNodeConfig.transparentHugepageEnabled",
        LINUX_NODE_CONFIG_TRANSPARENT_HUGEPAGE_ENABLED,
    ),
    field(
        "nodeConfig.localSsdEncryptionMode",
        NODE_CONFIG_LOCAL_SSD_ENCRYPTION_MODE,
    ),
    field(
        "nodeConfig.loggingConfig.variantConfig.variant",
        LOGGING_VARIANT_CONFIG_VARIANT,
    ),
    field(
        "nodeConfig.reservationAffinity.consumeReservationType",
        RESERVATION_AFFINITY_TYPE,
    ),
    field("nodeConfig.sandboxConfig.type", SANDBOX_CONFIG_TYPE),
    field(
        "nodeConfig.secondaryBootDisks[].mode",
        SECONDARY_BOOT_DISK_MODE,
    ),
    field(
        "nodeConfig.soleTenantConfig.nodeAffinities[].operator",
        SOLE_TENANT_CONFIG_NODE_AFFINITY_OPERATOR,
    ),
    field(
        "nodeConfig.taintConfig.architectureTaintBehavior",
        TAINT_CONFIG_ARCHITECTURE_TAINT_BEHAVIOR,
    ),
    field("nodeConfig.taints[].effect", NODE_TAINT_EFFECT),
    field(
        "nodeConfig.windowsNodeConfig.osVersion",
        WINDOWS_NODE_CONFIG_OS_VERSION,
    ),
    field(
        "nodeConfig.workloadMetadataConfig.mode",
        WORKLOAD_METADATA_CONFIG_MODE,
    ),
    field(
        "nodeCreationConfig.nodeCreationMode",
        NODE_CREATION_CONFIG_MODE,
    ),
    field(
        "nodePoolAutoConfig.linuxNodeConfig.cgroupMode",
        LINUX_NODE_CONFIG_CGROUP_MODE,
    ),
    field(
        "nodePoolAutoConfig.linuxNodeConfig.nodeKernelModuleLoading.policy",
        LINUX_NODE_CONFIG_NODE_KERNEL_MODULE_LOADING_POLICY,
    ),
    field(
        "nodePoolAutoConfig.linuxNodeConfig.transparentHugepageDefrag",
        LINUX_NODE_CONFIG_TRANSPARENT_HUGEPAGE_DEFRAG,
    ),
    field(
        "nodePoolAutoConfig.linuxNodeConfig.transparentHugepageEnabled",
        LINUX_NODE_CONFIG_TRANSPARENT_HUGEPAGE_ENABLED,
    ),
    field(
        "nodePoolDefaults.nodeConfigDefaults.containerdConfig.registryHosts[].hosts[].capabilities[]",
        CONTAINERD_CONFIG_REGISTRY_HOST_CONFIG_HOST_CAPABILITY,
    ),
    field(
        "nodePoolDefaults.nodeConfigDefaults.loggingConfig.variantConfig.variant",
        LOGGING_VARIANT_CONFIG_VARIANT,
    ),
    field(
        "nodePools[].autoscaling.locationPolicy",
        NODE_POOL_AUTOSCALING_LOCATION_POLICY,
    ),
    field("nodePools[].conditions[].canonicalCode", GOOGLE_RPC_CODE),
    field("nodePools[].conditions[].code", STATUS_CONDITION_CODE),
    field(
        "nodePools[].config.accelerators[].gpuDriverInstallationConfig.gpuDriverVersion",
        GPU_DRIVER_INSTALLATION_CONFIG_GPU_DRIVER_VERSION,
    ),
    field(
        "nodePools[].config.accelerators[].gpuSharingConfig.gpuSharingStrategy",
        GPU_SHARING_CONFIG_GPU_SHARING_STRATEGY,
    ),
    field(
        "nodePools[].config.advancedMachineFeatures.performanceMonitoringUnit",
        ADVANCED_MACHINE_FEATURES_PERFORMANCE_MONITORING_UNIT,
    ),
    field(
        "nodePools[].config.confidentialNodes.confidentialInstanceType",
        CONFIDENTIAL_NODES_CONFIDENTIAL_INSTANCE_TYPE,
    ),
    field(
        "nodePools[].config.containerdConfig.registryHosts[].hosts[].capabilities[]",
        CONTAINERD_CONFIG_REGISTRY_HOST_CONFIG_HOST_CAPABILITY,
    ),
    field(
        "nodePools[].config.effectiveCgroupMode",
        NODE_CONFIG_EFFECTIVE_CGROUP_MODE,
    ),
    field(
        "nodePools[].config.gpuDirectConfig.gpuDirectStrategy",
        GPU_DIRECT_CONFIG_GPU_DIRECT_STRATEGY,
    ),
    field(
        "nodePools[].config.linuxNodeConfig.cgroupMode",
        LINUX_NODE_CONFIG_CGROUP_MODE,
    ),
    field(
        "nodePools[].config.linuxNodeConfig.nodeKernelModuleLoading.policy",
        LINUX_NODE_CONFIG_NODE_KERNEL_MODULE_LOADING_POLICY,
    ),
    field(
        "nodePools[].config.linuxNodeConfig.transparentHugepageDefrag",
        LINUX_NODE_CONFIG_TRANSPARENT_HUGEPAGE_DEFRAG,
    ),
    field(
        "nodePools[].config.linuxNodeConfig.transparentHugepageEnabled",
        LINUX_NODE_CONFIG_TRANSPARENT_HUGEPAGE_ENABLED,
    ),
    field(
        "nodePools[].config.localSsdEncryptionMode",
        NODE_CONFIG_LOCAL_SSD_ENCRYPTION_MODE,
    ),
    field(
        "nodePools[].config.loggingConfig.variantConfig.variant",
        LOGGING_VARIANT_CONFIG_VARIANT,
    ),
    field(
        "nodePools[].config.reservationAffinity.consumeReservationType",
        RESERVATION_AFFINITY_TYPE,
    ),
    field("nodePools[].config.sandboxConfig.type", SANDBOX_CONFIG_TYPE),
    field(
        "nodePools[].config.secondaryBootDisks[].mode",
        SECONDARY_BOOT_DISK_MODE,
    ),
    field(
        "nodePools[].config.soleTenantConfig.nodeAffinities[].operator",
        SOLE_TENANT_CONFIG_NODE_AFFINITY_OPERATOR,
    ),
    field(
        "nodePools[].config.taintConfig.architectureTaintBehavior",
        TAINT_CONFIG_ARCHITECTURE_TAINT_BEHAVIOR,
    ),
    field("nodePools[].config.taints[].effect", NODE_TAINT_EFFECT),
    field(
        "nodePools[].config.windowsNodeConfig.osVersion",
        WINDOWS_NODE_CONFIG_OS_VERSION,
    ),
    field(
        "nodePools[].config.workloadMetadataConfig.mode",
        WORKLOAD_METADATA_CONFIG_MODE,
    ),
    field(
        "nodePools[].networkConfig.datapathProvider",
        DATAPATH_PROVIDER,
    ),
    field(
        "nodePools[].networkConfig.networkPerformanceConfig.totalEgressBandwidthTier",
        NODE_NETWORK_CONFIG_NETWORK_PERFORMANCE_CONFIG_TIER,
    ),
    field(
        "nodePools[].networkConfig.networkTierConfig.networkTier",
        NETWORK_TIER_CONFIG_NETWORK_TIER,
    ),
    field(
        "nodePools[].placementPolicy.type",
        NODE_POOL_PLACEMENT_POLICY_TYPE,
    ),
    field("nodePools[].status", NODE_POOL_STATUS),
    field(
        "nodePools[].updateInfo.blueGreenInfo.phase",
        NODE_POOL_UPDATE_INFO_BLUE_GREEN_INFO_PHASE,
    ),
    field(
        "nodePools[].upgradeSettings.strategy",
        NODE_POOL_UPDATE_STRATEGY,
    ),
    field(
        "notificationConfig.pubsub.filter.eventType[]",
        NOTIFICATION_CONFIG_EVENT_TYPE,
    ),
    field("podAutoscaling.hpaProfile", POD_AUTOSCALING_HPA_PROFILE),
    field("releaseChannel.channel", RELEASE_CHANNEL_CHANNEL),
    field("securityPostureConfig.mode", SECURITY_POSTURE_CONFIG_MODE),
    field(
        "securityPostureConfig.vulnerabilityMode",
        SECURITY_POSTURE_CONFIG_VULNERABILITY_MODE,
    ),
    field("status", CLUSTER_STATUS),
];

/// Enum fields of `NodePool`.
pub const NODE_POOL: EnumTable = &[
    field(
        "autoscaling.locationPolicy",
        NODE_POOL_AUTOSCALING_LOCATION_POLICY,
    ),
    field("conditions[].canonicalCode", GOOGLE_RPC_CODE),
    field("conditions[].code", STATUS_CONDITION_CODE),
    field(
        "config.accelerators[].gpuDriverInstallationConfig.gpuDriverVersion",
        GPU_DRIVER_INSTALLATION_CONFIG_GPU_DRIVER_VERSION,
    ),
    field(
        "config.accelerators[].gpuSharingConfig.gpuSharingStrategy",
        GPU_SHARING_CONFIG_GPU_SHARING_STRATEGY,
    ),
    field(
        "config.advancedMachineFeatures.performanceMonitoringUnit",
        ADVANCED_MACHINE_FEATURES_PERFORMANCE_MONITORING_UNIT,
    ),
    field(
        "config.confidentialNodes.confidentialInstanceType",
        CONFIDENTIAL_NODES_CONFIDENTIAL_INSTANCE_TYPE,
    ),
    field(
        "config.containerdConfig.registryHosts[].hosts[].capabilities[]",
        CONTAINERD_CONFIG_REGISTRY_HOST_CONFIG_HOST_CAPABILITY,
    ),
    field(
        "config.effectiveCgroupMode",
        NODE_CONFIG_EFFECTIVE_CGROUP_MODE,
    ),
    field(
        "config.gpuDirectConfig.gpuDirectStrategy",
        GPU_DIRECT_CONFIG_GPU_DIRECT_STRATEGY,
    ),
    field(
        "config.linuxNodeConfig.cgroupMode",
        LINUX_NODE_CONFIG_CGROUP_MODE,
    ),
    field(
        "config.linuxNodeConfig.nodeKernelModuleLoading.policy",
        LINUX_NODE_CONFIG_NODE_KERNEL_MODULE_LOADING_POLICY,
    ),
    field(
        "config.linuxNodeConfig.transparentHugepageDefrag",
        LINUX_NODE_CONFIG_TRANSPARENT_HUGEPAGE_DEFRAG,
    ),
    field(
        "config.linuxNodeConfig.transparentHugepageEnabled",
        LINUX_NODE_CONFIG_TRANSPARENT_HUGEPAGE_ENABLED,
    ),
    field(
        "config.localSsdEncryptionMode",
        NODE_CONFIG_LOCAL_SSD_ENCRYPTION_MODE,
    ),
    field(
        "config.loggingConfig.variantConfig.variant",
        LOGGING_VARIANT_CONFIG_VARIANT,
    ),
    field(
        "config.reservationAffinity.consumeReservationType",
        RESERVATION_AFFINITY_TYPE,
    ),
    field("config.sandboxConfig.type", SANDBOX_CONFIG_TYPE),
    field("config.secondaryBootDisks[].mode", SECONDARY_BOOT_DISK_MODE),
    field(
        "config.soleTenantConfig.nodeAffinities[].operator",
        SOLE_TENANT_CONFIG_NODE_AFFINITY_OPERATOR,
    ),
    field(
        "config.taintConfig.architectureTaintBehavior",
        TAINT_CONFIG_ARCHITECTURE_TAINT_BEHAVIOR,
    ),
    field("config.taints[].effect", NODE_TAINT_EFFECT),
    field(
        "config.windowsNodeConfig.osVersion",
        WINDOWS_NODE_CONFIG_OS_VERSION,
    ),
    field(
        "config.workloadMetadataConfig.mode",
        WORKLOAD_METADATA_CONFIG_MODE,
    ),
    field("networkConfig.datapathProvider", DATAPATH_PROVIDER),
    field(
        "networkConfig.networkPerformanceConfig.totalEgressBandwidthTier",
        NODE_NETWORK_CONFIG_NETWORK_PERFORMANCE_CONFIG_TIER,
    ),
    field(
        "networkConfig.networkTierConfig.networkTier",
        NETWORK_TIER_CONFIG_NETWORK_TIER,
    ),
    field("placementPolicy.type", NODE_POOL_PLACEMENT_POLICY_TYPE),
    field("status", NODE_POOL_STATUS),
    field(
        "updateInfo.blueGreenInfo.phase",
        NODE_POOL_UPDATE_INFO_BLUE_GREEN_INFO_PHASE,
    ),
    field("upgradeSettings.strategy", NODE_POOL_UPDATE_STRATEGY),
];

/// Enum fields of `Operation`.
pub const OPERATION: EnumTable = &[
    field("clusterConditions[].canonicalCode", GOOGLE_RPC_CODE),
    field("clusterConditions[].code", STATUS_CONDITION_CODE),
    field("nodepoolConditions[].canonicalCode", GOOGLE_RPC_CODE),
    field("nodepoolConditions[].code", STATUS_CONDITION_CODE),
    field("operationType", OPERATION_TYPE),
    field("progress.status", OPERATION_STATUS),
    field("status", OPERATION_STATUS),
];

/// Enum fields of `ServerConfig`.
pub const SERVER_CONFIG: EnumTable = &[field("channels[].channel", RELEASE_CHANNEL_CHANNEL)];

/// Enum fields of `UpdateClusterRequest`.
pub const UPDATE_CLUSTER_REQUEST: EnumTable = &[
    field(
        "update.desiredAdditionalIpRangesConfig.additionalIpRangesConfigs[].status",
        ADDITIONAL_IP_RANGES_CONFIG_STATUS,
    ),
    field(
        "update.desiredAddonsConfig.cloudRunConfig.loadBalancerType",
        CLOUD_RUN_CONFIG_LOAD_BALANCER_TYPE,
    ),
    field(
        "update.desiredAnonymousAuthenticationConfig.mode",
        ANONYMOUS_AUTHENTICATION_CONFIG_MODE,
    ),
    field(
        "update.desiredBinaryAuthorization.evaluationMode",
        BINARY_AUTHORIZATION_EVALUATION_MODE,
    ),
    field(
        "update.desiredClusterAutoscaling.autopilotGeneralProfile",
        CLUSTER_AUTOSCALING_AUTOPILOT_GENERAL_PROFILE,
    ),
    field(
        "update.desiredClusterAutoscaling.autoprovisioningNodePoolDefaults.upgradeSettings.strategy",
        NODE_POOL_UPDATE_STRATEGY,
    ),
    field(
        "update.desiredClusterAutoscaling.autoscalingProfile",
        CLUSTER_AUTOSCALING_AUTOSCALING_PROFILE,
    ),
    field(
        "update.desiredCompliancePostureConfig.mode",
        COMPLIANCE_POSTURE_CONFIG_MODE,
    ),
    field(
        "update.desiredContainerdConfig.registryHosts[].hosts[].capabilities[]",
        CONTAINERD_CONFIG_REGISTRY_HOST_CONFIG_HOST_CAPABILITY,
    ),
    field(
        "update.desiredControlPlaneEgress.mode",
        CONTROL_PLANE_EGRESS_MODE,
    ),
    field(
        "update.desiredDatabaseEncryption.currentState",
        DATABASE_ENCRYPTION_CURRENT_STATE,
    ),
    field(
        "update.desiredDatabaseEncryption.state",
        DATABASE_ENCRYPTION_STATE,
    ),
    field("update.desiredDatapathProvider", DATAPATH_PROVIDER),
    field("update.desiredDnsConfig.clusterDns", DNS_CONFIG_PROVIDER),
    field(
        "update.desiredDnsConfig.clusterDnsScope",
        DNS_CONFIG_DNS_SCOPE,
    ),
    field(
        "update.desiredEnterpriseConfig.desiredTier",
        ENTERPRISE_CONFIG_CLUSTER_TIER,
    ),
    field("update.desiredFleet.membershipType", FLEET_MEMBERSHIP_TYPE),
    field(
        "update.desiredGatewayApiConfig.channel",
        GATEWAY_API_CONFIG_CHANNEL,
    ),
    field(
        "update.desiredInTransitEncryptionConfig",
        IN_TRANSIT_ENCRYPTION_CONFIG,
    ),
    field(
        "update.desiredLoggingConfig.componentConfig.enableComponents[]",
        LOGGING_COMPONENT_CONFIG_COMPONENT,
    ),
    field(
        "update.desiredManagedOpentelemetryConfig.scope",
        MANAGED_OPEN_TELEMETRY_CONFIG_SCOPE,
    ),
    field(
        "update.desiredMonitoringConfig.advancedDatapathObservabilityConfig.relayMode",
        ADVANCED_DATAPATH_OBSERVABILITY_CONFIG_RELAY_MODE,
    ),
    field(
        "update.desiredMonitoringConfig.componentConfig.enableComponents[]",
        MONITORING_COMPONENT_CONFIG_COMPONENT,
    ),
    field(
        "update.desiredMonitoringConfig.managedPrometheusConfig.autoMonitoringConfig.scope",
        AUTO_MONITORING_CONFIG_SCOPE,
    ),
    field(
        "update.desiredNetworkPerformanceConfig.totalEgressBandwidthTier",
        NODE_NETWORK_CONFIG_NETWORK_PERFORMANCE_CONFIG_TIER,
    ),
    field(
        "update.desiredNetworkTierConfig.networkTier",
        NETWORK_TIER_CONFIG_NETWORK_TIER,
    ),
    field(
        "update.desiredNodeCreationConfig.nodeCreationMode",
        NODE_CREATION_CONFIG_MODE,
    ),
    field(
        "update.desiredNodePoolAutoConfigLinuxNodeConfig.cgroupMode",
        LINUX_NODE_CONFIG_CGROUP_MODE,
    ),
    field(
        "update.desiredNodePoolAutoConfigLinuxNodeConfig.nodeKernelModuleLoading.policy",
        LINUX_NODE_CONFIG_NODE_KERNEL_MODULE_LOADING_POLICY,
    ),
    field(
        "update.desiredNodePoolAutoConfigLinuxNodeConfig.transparentHugepageDefrag",
        LINUX_NODE_CONFIG_TRANSPARENT_HUGEPAGE_DEFRAG,
    ),
    field(
        "update.desiredNodePoolAutoConfigLinuxNodeConfig.transparentHugepageEnabled",
        LINUX_NODE_CONFIG_TRANSPARENT_HUGEPAGE_ENABLED,
    ),
    field(
        "update.desiredNodePoolAutoscaling.locationPolicy",
        NODE_POOL_AUTOSCALING_LOCATION_POLICY,
    ),
    field(
        "update.desiredNodePoolLoggingConfig.variantConfig.variant",
        LOGGING_VARIANT_CONFIG_VARIANT,
    ),
    field(
        "update.desiredNotificationConfig.pubsub.filter.eventType[]",
        NOTIFICATION_CONFIG_EVENT_TYPE,
    ),
    field(
        "update.desiredPodAutoscaling.hpaProfile",
        POD_AUTOSCALING_HPA_PROFILE,
    ),
    field(
        "update.desiredPrivateIpv6GoogleAccess",
        PRIVATE_IPV6_GOOGLE_ACCESS,
    ),
    field(
        "update.desiredReleaseChannel.channel",
        RELEASE_CHANNEL_CHANNEL,
    ),
    field(
        "update.desiredSecurityPostureConfig.mode",
        SECURITY_POSTURE_CONFIG_MODE,
    ),
    field(
        "update.desiredSecurityPostureConfig.vulnerabilityMode",
        SECURITY_POSTURE_CONFIG_VULNERABILITY_MODE,
    ),
    field("update.desiredStackType", STACK_TYPE),
    field(
        "update.gkeAutoUpgradeConfig.patchMode",
        GKE_AUTO_UPGRADE_CONFIG_PATCH_MODE,
    ),
];

/// Enum fields of `UpdateNodePoolRequest`.
pub const UPDATE_NODE_POOL_REQUEST: EnumTable = &[
    field(
        "accelerators[].gpuDriverInstallationConfig.gpuDriverVersion",
        GPU_DRIVER_INSTALLATION_CONFIG_GPU_DRIVER_VERSION,
    ),
    field(
        "accelerators[].gpuSharingConfig.gpuSharingStrategy",
        GPU_SHARING_CONFIG_GPU_SHARING_STRATEGY,
    ),
    field(
        "confidentialNodes.confidentialInstanceType",
        CONFIDENTIAL_NODES_CONFIDENTIAL_INSTANCE_TYPE,
    ),
    field(
        "containerdConfig.registryHosts[].hosts[].capabilities[]",
        CONTAINERD_CONFIG_REGISTRY_HOST_CONFIG_HOST_CAPABILITY,
    ),
    field("linuxNodeConfig.cgroupMode", LINUX_NODE_CONFIG_CGROUP_MODE),
    field(
        "linuxNodeConfig.nodeKernelModuleLoading.policy",
        LINUX_NODE_CONFIG_NODE_KERNEL_MODULE_LOADING_POLICY,
    ),
    field(
        "linuxNodeConfig.transparentHugepageDefrag",
        LINUX_NODE_CONFIG_TRANSPARENT_HUGEPAGE_DEFRAG,
    ),
    field(
        "linuxNodeConfig.transparentHugepageEnabled",
        LINUX_NODE_CONFIG_TRANSPARENT_HUGEPAGE_ENABLED,
    ),
    field(
        "loggingConfig.variantConfig.variant",
        LOGGING_VARIANT_CONFIG_VARIANT,
    ),
    field("nodeNetworkConfig.datapathProvider", DATAPATH_PROVIDER),
    field(
        "nodeNetworkConfig.networkPerformanceConfig.totalEgressBandwidthTier",
        NODE_NETWORK_CONFIG_NETWORK_PERFORMANCE_CONFIG_TIER,
    ),
    field(
        "nodeNetworkConfig.networkTierConfig.networkTier",
        NETWORK_TIER_CONFIG_NETWORK_TIER,
    ),
    field(
        "taintConfig.architectureTaintBehavior",
        TAINT_CONFIG_ARCHITECTURE_TAINT_BEHAVIOR,
    ),
    field("taints.taints[].effect", NODE_TAINT_EFFECT),
    field("upgradeSettings.strategy", NODE_POOL_UPDATE_STRATEGY),
    field(
        "windowsNodeConfig.osVersion",
        WINDOWS_NODE_CONFIG_OS_VERSION,
    ),
    field("workloadMetadataConfig.mode", WORKLOAD_METADATA_CONFIG_MODE),
];

/// Enum fields of `SetNodePoolAutoscalingRequest`.
pub const SET_NODE_POOL_AUTOSCALING_REQUEST: EnumTable = &[field(
    "autoscaling.locationPolicy",
    NODE_POOL_AUTOSCALING_LOCATION_POLICY,
)];

/// Enum fields of `SetAddonsConfigRequest`.
pub const SET_ADDONS_CONFIG_REQUEST: EnumTable = &[field(
    "addonsConfig.cloudRunConfig.loadBalancerType",
    CLOUD_RUN_CONFIG_LOAD_BALANCER_TYPE,
)];

/// Enum fields of `SetMaintenancePolicyRequest`.
pub const SET_MAINTENANCE_POLICY_REQUEST: EnumTable = &[
    field(
        "maintenancePolicy.window.recurringWindow.window.maintenanceExclusionOptions.endTimeBehavior",
        MAINTENANCE_EXCLUSION_OPTIONS_END_TIME_BEHAVIOR,
    ),
    field(
        "maintenancePolicy.window.recurringWindow.window.maintenanceExclusionOptions.scope",
        MAINTENANCE_EXCLUSION_OPTIONS_SCOPE,
    ),
    // Exclusions are a map of name → TimeWindow (`maintenanceExclusions`), which the generator
    // does not follow.
    field(
        "maintenancePolicy.window.maintenanceExclusions{}.maintenanceExclusionOptions.endTimeBehavior",
        MAINTENANCE_EXCLUSION_OPTIONS_END_TIME_BEHAVIOR,
    ),
    field(
        "maintenancePolicy.window.maintenanceExclusions{}.maintenanceExclusionOptions.scope",
        MAINTENANCE_EXCLUSION_OPTIONS_SCOPE,
    ),
];

/// Enum fields of `SetNetworkPolicyRequest`.
pub const SET_NETWORK_POLICY_REQUEST: EnumTable =
    &[field("networkPolicy.provider", NETWORK_POLICY_PROVIDER)];

/// Enum fields of `SetMasterAuthRequest`.
pub const SET_MASTER_AUTH_REQUEST: EnumTable = &[field("action", SET_MASTER_AUTH_REQUEST_ACTION)];

/// `UpdateMasterRequest` has no enum fields.
pub const UPDATE_MASTER_REQUEST: EnumTable = &[];

/// `SetLoggingServiceRequest` has no enum fields.
pub const SET_LOGGING_SERVICE_REQUEST: EnumTable = &[];

/// `SetMonitoringServiceRequest` has no enum fields.
pub const SET_MONITORING_SERVICE_REQUEST: EnumTable = &[];

/// `SetLocationsRequest` has no enum fields.
pub const SET_LOCATIONS_REQUEST: EnumTable = &[];

/// `SetLabelsRequest` has no enum fields.
pub const SET_LABELS_REQUEST: EnumTable = &[];

/// `SetLegacyAbacRequest` has no enum fields.
pub const SET_LEGACY_ABAC_REQUEST: EnumTable = &[];

/// `SetNodePoolManagementRequest` has no enum fields.
pub const SET_NODE_POOL_MANAGEMENT_REQUEST: EnumTable = &[];

/// `SetNodePoolSizeRequest` has no enum fields.
pub const SET_NODE_POOL_SIZE_REQUEST: EnumTable = &[];
