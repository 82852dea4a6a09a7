//! Network profiles (`projects/p/global/networkProfiles`): the Google-managed, read-only
//! `networkProfiles.get` and `networkProfiles.list` of Compute v1
//! (<https://cloud.google.com/compute/docs/reference/rest/v1/networkProfiles>), and what a
//! network's `networkProfile` allows — used by [`super::networks`], [`super::subnetworks`],
//! [`super::firewalls`] and the GKE side through the `pub` helpers below.
//!
//! **Which profiles exist.** One RoCE profile `<zone>-vpc-roce` per zone that offers an RDMA
//! machine type (A3 Ultra, A4: [`geo::rdma_zones`]), as Google documents: "The resource name of an
//! RoCE network profile has the following format ZONE-vpc-roce" and RDMA network profiles "are
//! available in the same zones as their supported machine types"
//! (<https://cloud.google.com/vpc/docs/rdma-network-profiles>). Every project sees the same
//! profiles under its own path. Google also has `<zone>-vpc-falcon` (H4D, IRDMA NICs),
//! `<zone>-vpc-roce-metal` (A4X Max bare metal) and the ULL and regional-VPC profile types of the
//! schema's `profileType`; the simulator has none of those machines and serves none of those
//! profiles (their names and zones could not be confirmed from public output).
//!
//! **What a RoCE profile says.** `location {name: <zone>, scope: ZONE}`, `profileType
//! {networkType: RDMA, rdmaSubtype: ROCE}` and `features` built from the documented
//! specifications of RoCE VPC networks (same page, and "Cloud NGFW for RoCE VPC networks",
//! <https://cloud.google.com/firewall/docs/firewall-for-roce>): MRDMA NICs only, several of them in
//! one network (an A3 Ultra or A4 VM puts its eight MRDMA NICs in eight subnets of one RoCE
//! network, as Cluster Toolkit's `gpu-rdma-vpc` module does); IPv4-only private subnets; no VPC
//! firewall rules, only regional network firewall policies of type `RDMA_ROCE_POLICY`; no alias
//! ranges, auto-mode subnets, external IPs, Private Google Access, Cloud Router, Cloud NAT, VPN,
//! Interconnect, peering, PSC, load balancing or packet mirroring. A real profile's `features`
//! could not be read from any public output, so fields the documentation does not settle
//! (`allowMultiNicInSameSubnetwork`, `allowSameNetworkUnicast`, `allowStaticRoutes`,
//! `allowSubInterfaces`, `allowNcc`, `allowNetworkMigration`, `allowAddressCreation`,
//! `addressPurposes`, `unicast`, `multicast`, `predefined*`) are left out rather than guessed, and
//! `description` is the simulator's own text.
//!
//! **What the simulator enforces** (the texts are the simulator's own: Google's could not be
//! found): the profile of a network insert must exist; a RoCE network cannot be auto mode; its MTU
//! defaults to 8896 ("For VPC networks with an RDMA network profile, the default MTU value is
//! 8896", <https://cloud.google.com/firewall/docs/create-manage-roce-vpcs>); the profile cannot
//! change after creation; VPC firewall rules on it are refused; its subnetworks must be IPv4-only,
//! without secondary ranges, in the region of the profile's zone; Cloud Routers on it are refused.
//! The GKE side checks a node pool's zone against [`network_zone`].

use super::{link, list_body, not_found, relative_path};
use crate::error::GcpResult;
use crate::geo;
use crate::http::{self, Query};
use crate::shared::Shared;
use crate::world::World;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};
use std::sync::Arc;

/// The suffix of a RoCE profile's name after its zone.
pub const ROCE_SUFFIX: &str = "-vpc-roce";

pub fn router() -> Router<Arc<Shared>> {
    let p = "/compute/v1/projects/{project}/global/networkProfiles";
    Router::new()
        .route(p, get(list_profiles))
        .route(&format!("{p}/{{name}}"), get(get_profile))
}

/// The names of every profile, in list order (the zones' order in [`geo::REGIONS`]).
pub fn names() -> Vec<String> {
    geo::rdma_zones()
        .into_iter()
        .map(|zone| format!("{zone}{ROCE_SUFFIX}"))
        .collect()
}

/// The zone a network profile is bound to: `profile` is a name (`us-central1-b-vpc-roce`), a
/// relative path or a URL; None when no such profile exists.
pub fn zone_of(profile: &str) -> Option<&'static str> {
    let name = profile_name(profile)?;
    let zone = name.strip_suffix(ROCE_SUFFIX)?;
    geo::rdma_zones().into_iter().find(|z| *z == zone)
}

/// The profile name a reference names, if it is well formed: a bare name, a
/// `projects/p/global/networkProfiles/x` path or a URL of one. Whether it exists is [`zone_of`]'s
/// question.
fn profile_name(reference: &str) -> Option<&str> {
    if let Some(path) = relative_path(reference) {
        return match path.split('/').collect::<Vec<_>>().as_slice() {
            ["projects", _, "global", "networkProfiles", name] if !name.is_empty() => Some(name),
            _ => None,
        };
    }
    match reference.split('/').collect::<Vec<_>>().as_slice() {
        ["global", "networkProfiles", name] | [name] if !name.is_empty() => Some(name),
        _ => None,
    }
}

/// The canonical URL of the existing profile a network insert names, as Google stores it in
/// `Network.networkProfile` (full URL in `project`'s path, whatever form was given); None when the
/// reference names no profile.
pub fn canonical(project: &str, reference: &str) -> Option<String> {
    let name = profile_name(reference)?;
    zone_of(name)?;
    let owner = relative_path(reference)
        .and_then(|path| path.split('/').nth(1))
        .unwrap_or(project);
    Some(link(&format!(
        "projects/{owner}/global/networkProfiles/{name}"
    )))
}

/// The `networkProfile` of network `network` (a name, path or URL) in `project`, if the network
/// exists and has one: the profile's canonical URL.
pub fn network_profile_of(world: &World, project: &str, network: &str) -> Option<String> {
    let path = super::network_path(project, network)?;
    world
        .compute
        .visible(&path)
        .and_then(|r| r.body.get("networkProfile"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// The zone network `network` of `project` is bound to by its network profile (None: the network
/// does not exist or has no zonal profile). Instances with a NIC in it, and so GKE nodes with an
/// additional network on it, must be in this zone.
pub fn network_zone(world: &World, project: &str, network: &str) -> Option<&'static str> {
    network_profile_of(world, project, network).and_then(|p| zone_of(&p))
}

/// The NIC types a profile accepts (`MRDMA` for a RoCE profile).
pub fn interface_types(profile: &str) -> &'static [&'static str] {
    if zone_of(profile).is_some() {
        &["MRDMA"]
    } else {
        &[]
    }
}

/// The value of feature `feature` (`allowVpcFirewallRules` ...) of the profile, if it sets it.
pub fn feature(profile: &str, feature: &str) -> Option<String> {
    let zone = zone_of(profile)?;
    roce_features(zone)
        .get(feature)
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// The profile URL of the stored network at `network_path` (a relative path), if it has one.
fn profile_at(world: &World, network_path: &str) -> Option<String> {
    world
        .compute
        .resources
        .get(network_path)
        .and_then(|r| r.body.get("networkProfile"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// A VPC firewall rule may be created on the network at `network_path` (a relative path) unless
/// its profile blocks VPC firewall rules (RoCE networks take only regional network firewall
/// policies of type `RDMA_ROCE_POLICY`).
pub fn check_firewall(world: &World, network_path: &str) -> GcpResult<()> {
    let Some(profile) = profile_at(world, network_path) else {
        return Ok(());
    };
    if feature(&profile, "allowVpcFirewallRules").as_deref() == Some("VPC_FIREWALL_RULES_BLOCKED") {
        return Err(super::invalid_field(
            "resource.network",
            &link(network_path),
            &format!(
                "VPC firewall rules are not supported in network '{network_path}' with network profile '{}'. Use a regional network firewall policy of type RDMA_ROCE_POLICY instead.",
                super::last_segment(&profile)
            ),
        ));
    }
    Ok(())
}

/// A Cloud Router may be created on the network at `network_path` unless its profile blocks
/// Cloud Routers.
pub fn check_router(world: &World, network_path: &str) -> GcpResult<()> {
    let Some(profile) = profile_at(world, network_path) else {
        return Ok(());
    };
    if feature(&profile, "allowCloudRouter").as_deref() == Some("CLOUD_ROUTER_BLOCKED") {
        return Err(super::invalid_field(
            "resource.network",
            &link(network_path),
            &format!(
                "Cloud Router is not supported in network '{network_path}' with network profile '{}'.",
                super::last_segment(&profile)
            ),
        ));
    }
    Ok(())
}

/// A subnetwork in `region` with request `body` may be created on the network at `network_path`:
/// with a zonal profile, only in the region of the profile's zone, IPv4 only, without secondary
/// ranges (alias IP ranges are blocked) and without Private Google Access.
pub fn check_subnetwork(
    world: &World,
    network_path: &str,
    region: &str,
    body: &serde_json::Map<String, Value>,
) -> GcpResult<()> {
    let Some(profile) = profile_at(world, network_path) else {
        return Ok(());
    };
    let Some(zone) = zone_of(&profile) else {
        return Ok(());
    };
    let name = super::last_segment(&profile);
    let profile_region = geo::region_of_zone(zone).unwrap_or("");
    if region != profile_region {
        return Err(super::invalid_field(
            "resource.region",
            region,
            &format!(
                "Subnetworks of network '{network_path}' must be in region '{profile_region}', the region of zone '{zone}' of its network profile '{name}'."
            ),
        ));
    }
    let stack = body
        .get("stackType")
        .and_then(Value::as_str)
        .unwrap_or("IPV4_ONLY");
    if stack != "IPV4_ONLY" {
        return Err(super::invalid_field(
            "resource.stackType",
            stack,
            &format!("Network profile '{name}' supports only IPV4_ONLY subnetworks."),
        ));
    }
    if !super::array_field(&Value::Object(body.clone()), "secondaryIpRanges").is_empty() {
        return Err(super::invalid_field(
            "resource.secondaryIpRanges",
            "",
            &format!("Network profile '{name}' does not allow alias IP ranges."),
        ));
    }
    if body.get("privateIpGoogleAccess").and_then(Value::as_bool) == Some(true) {
        return Err(super::invalid_field(
            "resource.privateIpGoogleAccess",
            "true",
            &format!("Network profile '{name}' does not allow Private Google Access."),
        ));
    }
    Ok(())
}

/// The documented feature set of a RoCE profile (see the module doc for what is left out).
fn roce_features(_zone: &str) -> Value {
    json!({
        "allowAliasIpRanges": "ALIAS_IP_RANGES_BLOCKED",
        "allowAutoModeSubnet": "AUTO_MODE_SUBNET_BLOCKED",
        "allowClassDFirewalls": "CLASS_D_FIREWALLS_BLOCKED",
        "allowCloudNat": "CLOUD_NAT_BLOCKED",
        "allowCloudRouter": "CLOUD_ROUTER_BLOCKED",
        "allowDefaultNicAttachment": "DEFAULT_NIC_ATTACHMENT_BLOCKED",
        "allowExternalIpAccess": "EXTERNAL_IP_ACCESS_BLOCKED",
        "allowFirewallPolicy": "FIREWALL_POLICY_ALLOWED",
        "allowInterconnect": "INTERCONNECT_BLOCKED",
        "allowIpForwarding": "IP_FORWARDING_BLOCKED",
        "allowLoadBalancing": "LOAD_BALANCING_BLOCKED",
        "allowMultiNicInSameNetwork": "MULTI_NIC_IN_SAME_NETWORK_ALLOWED",
        "allowMulticast": "MULTICAST_BLOCKED",
        "allowPacketMirroring": "PACKET_MIRRORING_BLOCKED",
        "allowPrivateGoogleAccess": "PRIVATE_GOOGLE_ACCESS_BLOCKED",
        "allowPsc": "PSC_BLOCKED",
        "allowSubnetworkCreation": "SUBNETWORK_CREATION_ALLOWED",
        "allowVpcFirewallRules": "VPC_FIREWALL_RULES_BLOCKED",
        "allowVpcPeering": "VPC_PEERING_BLOCKED",
        "allowVpn": "VPN_BLOCKED",
        "firewallPolicyTypes": ["RDMA_ROCE_POLICY"],
        "interfaceTypes": ["MRDMA"],
        "subnetPurposes": ["SUBNET_PURPOSE_PRIVATE"],
        "subnetStackTypes": ["SUBNET_STACK_TYPE_IPV4_ONLY"],
        "subnetworkPurposes": ["PRIVATE"],
        "subnetworkStackTypes": ["IPV4_ONLY"],
    })
}

/// The `NetworkProfile` resource `name` as `project` sees it.
fn render(project: &str, name: &str, zone: &str) -> Value {
    let id = stable_id(name);
    json!({
        "kind": "compute#networkProfile",
        "id": id,
        "creationTimestamp": "2024-10-01T00:00:00.000-07:00",
        "name": name,
        "description": format!("RDMA over Converged Ethernet (RoCE) network profile for zone {zone}"),
        "selfLink": link(&format!("projects/{project}/global/networkProfiles/{name}")),
        "selfLinkWithId": link(&format!("projects/{project}/global/networkProfiles/{id}")),
        "location": {"name": zone, "scope": "ZONE"},
        "profileType": {"networkType": "RDMA", "rdmaSubtype": "ROCE"},
        "features": roce_features(zone),
    })
}

/// A stable numeric id derived from `text` (uint64 as a decimal string).
fn stable_id(text: &str) -> String {
    let mut hash: u64 = 0x6e65_7470_726f_6631;
    for b in text.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash.to_string()
}

/// `networkProfiles.get`: by name, or by the numeric id of its `selfLinkWithId`.
async fn get_profile(Path((project, name)): Path<(String, String)>) -> GcpResult<Response> {
    let found = names()
        .into_iter()
        .find(|n| *n == name || stable_id(n) == name);
    match found.as_deref().and_then(|n| zone_of(n).map(|z| (n, z))) {
        Some((n, zone)) => Ok(http::json(render(&project, n, zone))),
        None => Err(not_found(&format!(
            "projects/{project}/global/networkProfiles/{name}"
        ))),
    }
}

/// `networkProfiles.list`: every profile in name order, paged by `maxResults` and `pageToken`
/// ([`super::page`]). `filter` is not evaluated by the server, as for the simulator's other
/// Compute lists; gcloud applies `--filter` itself.
async fn list_profiles(
    State(shared): State<Arc<Shared>>,
    Path(project): Path<String>,
    query: Query,
) -> GcpResult<Response> {
    let mut all: Vec<(String, &'static str)> = names()
        .into_iter()
        .filter_map(|n| zone_of(&n).map(|zone| (n, zone)))
        .collect();
    all.sort();
    let named = all
        .into_iter()
        .map(|(n, zone)| (n.clone(), (n, zone)))
        .collect();
    let page = super::page(named, &query, crate::paging::cap(&shared))?;
    let next = page.next;
    let items = page
        .items
        .iter()
        .map(|(n, zone)| render(&project, n, zone))
        .collect();
    let collection = format!("projects/{project}/global/networkProfiles");
    let mut body = list_body("compute#networkProfileList", &collection, items);
    if let Some(next) = next {
        body["nextPageToken"] = json!(next);
    }
    Ok(http::json(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roce_profiles_follow_the_rdma_zones() {
        let names = names();
        assert!(names.contains(&"us-central1-b-vpc-roce".to_string()));
        assert!(names.contains(&"us-west3-c-vpc-roce".to_string()));
        assert!(!names.contains(&"us-central1-a-vpc-roce".to_string()));
        assert_eq!(zone_of("us-central1-b-vpc-roce"), Some("us-central1-b"));
        assert_eq!(
            zone_of(
                "https://www.googleapis.com/compute/v1/projects/p/global/networkProfiles/europe-west4-b-vpc-roce"
            ),
            Some("europe-west4-b")
        );
        assert_eq!(
            zone_of("projects/p/global/networkProfiles/us-east4-b-vpc-roce"),
            Some("us-east4-b")
        );
        assert_eq!(zone_of("us-central1-a-vpc-roce"), None);
        assert_eq!(
            zone_of("projects/p/global/networks/us-central1-b-vpc-roce"),
            None
        );
        assert_eq!(
            canonical("p", "http://127.0.0.1:1/compute/v1/projects/q/global/networkProfiles/us-central1-b-vpc-roce"),
            Some("https://www.googleapis.com/compute/v1/projects/q/global/networkProfiles/us-central1-b-vpc-roce".into())
        );
        assert_eq!(
            canonical("p", "us-central1-b-vpc-roce"),
            Some("https://www.googleapis.com/compute/v1/projects/p/global/networkProfiles/us-central1-b-vpc-roce".into())
        );
        assert_eq!(canonical("p", "nope-vpc-roce"), None);
        assert_eq!(
            feature("us-central1-b-vpc-roce", "allowVpcFirewallRules").as_deref(),
            Some("VPC_FIREWALL_RULES_BLOCKED")
        );
        assert_eq!(interface_types("us-central1-b-vpc-roce"), ["MRDMA"]);
    }

    #[test]
    fn a_networks_zone_comes_from_its_profile() {
        use crate::compute::{Life, Resource, networks};
        let mut world = World::new(1, crate::clock::default_start());
        let mut add = |name: &str, body: Value| {
            world.compute.resources.insert(
                format!("projects/p/global/networks/{name}"),
                Resource {
                    kind: networks::KIND,
                    state: Life::Ready,
                    body,
                    auto_created: false,
                },
            );
        };
        add(
            "roce",
            json!({"name": "roce", "networkProfile": link("projects/p/global/networkProfiles/us-central1-b-vpc-roce")}),
        );
        add("plain", json!({"name": "plain"}));
        assert_eq!(network_zone(&world, "p", "roce"), Some("us-central1-b"));
        assert_eq!(
            network_zone(&world, "p", &link("projects/p/global/networks/roce")),
            Some("us-central1-b")
        );
        assert_eq!(
            network_profile_of(&world, "p", "global/networks/roce").as_deref(),
            Some(
                "https://www.googleapis.com/compute/v1/projects/p/global/networkProfiles/us-central1-b-vpc-roce"
            )
        );
        assert_eq!(network_zone(&world, "p", "plain"), None);
        assert_eq!(network_zone(&world, "p", "missing"), None);
        assert_eq!(network_zone(&world, "q", "roce"), None);
    }
}
