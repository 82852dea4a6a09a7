//! VPC networks (`projects/p/global/networks`): insert, get, list, patch, delete.
//!
//! Custom mode (`autoCreateSubnetworks: false`) creates a bare network. Auto mode creates, when
//! the insert is DONE, one subnetwork named after the network in every region of the simulated
//! geography, from the /20 blocks of 10.128.0.0/9 that Google assigns to those regions. A request
//! without `autoCreateSubnetworks` would create a legacy network, which Google no longer allows.
//!
//! `networkProfile` (full or partial URL of a [`super::network_profiles`] profile) is accepted on
//! insert only and stored as the profile's canonical URL; a RoCE network is custom mode and its
//! MTU defaults to 8896. See that module for what a profile allows and the sources.
//!
//! A network still used by a subnetwork (other than its auto-mode ones), a firewall rule, a router
//! or a VM cannot be deleted, and the refusal comes in the operation, not from the DELETE: Compute
//! accepts the call and the operation ends with `RESOURCE_IN_USE_BY_ANOTHER_RESOURCE` and "The
//! network resource '…' is already being used by '…'". Captures: Terraform's "Error waiting for
//! Deleting Network: The network resource 'projects/…/global/networks/…' is already being used by
//! '…/firewalls/…'" (GoogleCloudPlatform/terraform-google-three-tier-web-app#167,
//! GoogleCloudPlatform/terraform-ecommerce-microservices-on-gke#59, murphye/cheap-gke-cluster#8:
//! "Error waiting for" is the provider's wording for a failed operation), kops's "GCE operation
//! failed: googleapi: Error 400: The network resource … is already being used by …"
//! (kubernetes/kops#13855) and genevieve/leftovers#6 ("Operation error: The network resource …"),
//! with the operation's error code as clients test it (`RESOURCE_IN_USE_BY_ANOTHER_RESOURCE`,
//! cloudamatic/mu `modules/mu/providers/google.rb`). Which user the message names when there are
//! several is not published; the simulator names the first subnetwork, else firewall rule, else
//! router, else VM.

use super::collection::{Collection, Hooks, Placement, Quota, Target};
use super::{
    Kind, Life, Resource, invalid_field, link, network_profiles, str_field, subnetworks,
};
use crate::error::GcpResult;
use crate::geo;
use crate::shared::Ctx;
use crate::world::World;
use serde_json::{Map, Value, json};

/// The `networks` collection.
pub static COLLECTION: Collection = Collection {
    name: "Network",
    word: "network",
    segment: "networks",
    in_use_word: "network",
    placement: Placement::Global,
    quota: Quota {
        metric: "NETWORKS",
        limit: 15.0,
        limit_name: "NETWORKS-per-project",
        regional: false,
    },
    build: insert,
    hooks: Hooks {
        patch: Some(patch),
        user_of,
        in_use_fails_operation: true,
        on_ready: create_auto_subnetworks,
        on_removed,
        ..Hooks::NONE
    },
};

pub const KIND: Kind = Kind(COLLECTION.name);

/// Default and bounds of `mtu`.
pub const DEFAULT_MTU: i64 = 1460;
/// The default `mtu` of a network with an RDMA network profile.
pub const RDMA_DEFAULT_MTU: i64 = 8896;
pub const MTU_RANGE: std::ops::RangeInclusive<i64> = 1300..=8896;

/// The range auto-mode subnetworks are carved from.
pub const AUTO_MODE_RANGE: &str = "10.128.0.0/9";

/// The primary range Google gives each region's auto-mode subnetwork.
pub fn auto_mode_cidr(region: &str) -> Option<&'static str> {
    Some(match region {
        "us-central1" => "10.128.0.0/20",
        "europe-west1" => "10.132.0.0/20",
        "us-west1" => "10.138.0.0/20",
        "us-east1" => "10.142.0.0/20",
        "asia-northeast1" => "10.146.0.0/20",
        "asia-southeast1" => "10.148.0.0/20",
        "us-east4" => "10.150.0.0/20",
        "asia-south1" => "10.160.0.0/20",
        "europe-west4" => "10.164.0.0/20",
        "europe-north1" => "10.166.0.0/20",
        "us-west2" => "10.168.0.0/20",
        "us-west3" => "10.180.0.0/20",
        "us-west4" => "10.182.0.0/20",
        "asia-south2" => "10.190.0.0/20",
        "us-east5" => "10.202.0.0/20",
        "us-south1" => "10.206.0.0/20",
        _ => return None,
    })
}

fn check_mtu(body: &Map<String, Value>) -> GcpResult<Option<i64>> {
    match body.get("mtu") {
        None | Some(Value::Null) => Ok(None),
        Some(value) => {
            let mtu = value
                .as_i64()
                .or_else(|| value.as_str().and_then(|s| s.parse().ok()));
            match mtu {
                Some(mtu) if MTU_RANGE.contains(&mtu) => Ok(Some(mtu)),
                _ => Err(invalid_field(
                    "resource.mtu",
                    value
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or(value.to_string())
                        .as_str(),
                    "The MTU must be in the range [1300, 8896].",
                )),
            }
        }
    }
}

fn routing_config(body: &Map<String, Value>, current: Option<&Value>) -> GcpResult<Value> {
    let mut config = current.cloned().unwrap_or_else(
        || json!({ "routingMode": "REGIONAL", "bgpBestPathSelectionMode": "LEGACY" }),
    );
    if let Some(Value::Object(given)) = body.get("routingConfig") {
        for (key, value) in given {
            config[key] = value.clone();
        }
    }
    match str_field(&config, "routingMode") {
        Some("REGIONAL") | Some("GLOBAL") => Ok(config),
        other => Err(invalid_field(
            "resource.routingConfig.routingMode",
            other.unwrap_or(""),
            "",
        )),
    }
}

/// A VPC network: the subnet mode is required (no legacy networks), MTU and routing mode checked.
fn insert(
    world: &mut World,
    cx: &Ctx,
    target: &Target,
    body: &Map<String, Value>,
) -> GcpResult<Value> {
    let auto = match body.get("autoCreateSubnetworks") {
        Some(Value::Bool(auto)) => *auto,
        _ => {
            return Err(invalid_field(
                "resource.autoCreateSubnetworks",
                "",
                "Legacy networks are no longer supported; set autoCreateSubnetworks to create a VPC network.",
            ));
        }
    };
    if body.get("IPv4Range").is_some() {
        return Err(invalid_field(
            "resource.IPv4Range",
            str_field(&Value::Object(body.clone()), "IPv4Range").unwrap_or(""),
            "IPv4Range cannot be set on a VPC network.",
        ));
    }
    let profile = match body.get("networkProfile") {
        None | Some(Value::Null) => None,
        Some(Value::String(reference)) if reference.is_empty() => None,
        Some(Value::String(reference)) => Some(
            network_profiles::canonical(&target.project, reference).ok_or_else(|| {
                invalid_field(
                    "resource.networkProfile",
                    reference,
                    "The referenced network profile resource cannot be found.",
                )
            })?,
        ),
        Some(other) => {
            return Err(invalid_field(
                "resource.networkProfile",
                &other.to_string(),
                "",
            ));
        }
    };
    if let Some(profile) = &profile
        && auto
        && network_profiles::feature(profile, "allowAutoModeSubnet").as_deref()
            == Some("AUTO_MODE_SUBNET_BLOCKED")
    {
        return Err(invalid_field(
            "resource.autoCreateSubnetworks",
            "true",
            &format!(
                "Network profile '{}' does not allow auto mode subnetworks; create the network in custom subnet mode.",
                super::last_segment(profile)
            ),
        ));
    }
    let default_mtu = if profile.is_some() {
        RDMA_DEFAULT_MTU
    } else {
        DEFAULT_MTU
    };
    let mtu = check_mtu(body)?.unwrap_or(default_mtu);
    let routing = routing_config(body, None)?;
    let id = world.numeric_id();
    let mut network = json!({
        "kind": "compute#network",
        "id": id,
        "creationTimestamp": world.compute_timestamp(cx.now),
        "name": target.name,
    });
    if let Some(description) = body.get("description").filter(|d| !d.is_null()) {
        network["description"] = description.clone();
    }
    network["selfLink"] = json!(link(&target.path));
    network["selfLinkWithId"] = json!(link(&format!(
        "projects/{}/global/networks/{id}",
        target.project
    )));
    network["autoCreateSubnetworks"] = json!(auto);
    network["routingConfig"] = routing;
    network["mtu"] = json!(mtu);
    network["networkFirewallPolicyEnforcementOrder"] = body
        .get("networkFirewallPolicyEnforcementOrder")
        .cloned()
        .unwrap_or_else(|| json!("AFTER_CLASSIC_FIREWALL"));
    if let Some(profile) = profile {
        network["networkProfile"] = json!(profile);
    }
    Ok(network)
}

/// PATCH: `routingConfig`, `mtu`, `networkFirewallPolicyEnforcementOrder` and `description`
/// change in place; the subnet mode cannot change this way, the network profile not at all (a
/// PATCH that repeats it is accepted).
fn patch(
    _world: &mut World,
    _cx: &Ctx,
    target: &Target,
    current: Value,
    body: Map<String, Value>,
) -> GcpResult<Value> {
    let mut next = current.clone();
    if let Some(given) = body.get("networkProfile").filter(|v| !v.is_null()) {
        let given_text = given.as_str().unwrap_or("");
        let wanted = network_profiles::canonical(&target.project, given_text)
            .or_else(|| (!given_text.is_empty()).then(|| given_text.to_string()));
        if wanted.as_deref() != str_field(&current, "networkProfile") {
            return Err(invalid_field(
                "resource.networkProfile",
                given_text,
                "The network profile of a network can only be set when the network is created.",
            ));
        }
    }
    if let Some(Value::Bool(auto)) = body.get("autoCreateSubnetworks")
        && Some(*auto) != next["autoCreateSubnetworks"].as_bool()
    {
        return Err(invalid_field(
            "resource.autoCreateSubnetworks",
            &auto.to_string(),
            "Use switchToCustomMode to change the subnet mode of a network.",
        ));
    }
    if let Some(mtu) = check_mtu(&body)? {
        next["mtu"] = json!(mtu);
    }
    next["routingConfig"] = routing_config(&body, current.get("routingConfig"))?;
    for key in ["networkFirewallPolicyEnforcementOrder", "description"] {
        if let Some(value) = body.get(key).filter(|v| !v.is_null()) {
            next[key] = value.clone();
        }
    }
    Ok(next)
}

/// A network is in use by any subnetwork (other than its auto-mode ones), firewall rule, router
/// or node VM on it, looked for in that order.
fn user_of(world: &World, path: &str) -> Option<String> {
    let state = &world.compute;
    let url = link(path);
    let project_prefix = path.split("/global/").next().unwrap_or(path).to_string();
    let uses_network =
        |r: &Resource| r.body.get("network").and_then(Value::as_str) == Some(url.as_str());
    for wanted in [subnetworks::KIND, super::firewalls::KIND, super::routers::KIND] {
        let user = state
            .resources
            .range(format!("{project_prefix}/")..)
            .take_while(|(p, _)| p.starts_with(&format!("{project_prefix}/")))
            .find(|(_, r)| r.kind == wanted && !r.auto_created && uses_network(r));
        if let Some((user, _)) = user {
            return Some(user.clone());
        }
    }
    crate::instance_groups::vms(world)
        .iter()
        .find(|vm| vm.nics.iter().any(|nic| nic.network == path))
        .map(super::instances::path_of)
}

/// A deleted network takes its auto-mode subnetworks with it.
fn on_removed(world: &mut World, path: &str, _network: &Resource) {
    let url = link(path);
    world.compute.resources.retain(|_, r| {
        !(r.auto_created && r.body.get("network").and_then(Value::as_str) == Some(url.as_str()))
    });
}

/// Creates the auto-mode subnetworks of a network whose insert just finished.
pub fn create_auto_subnetworks(world: &mut World, network_path: &str) {
    let Some(network) = world.compute.resources.get(network_path) else {
        return;
    };
    if network.body["autoCreateSubnetworks"].as_bool() != Some(true) {
        return;
    }
    let name = str_field(&network.body, "name").unwrap_or("").to_string();
    let project = network_path.split('/').nth(1).unwrap_or("").to_string();
    let network_link = link(network_path);
    let now = world.compute.last_tick;
    let mut links = Vec::new();
    for (region, _) in geo::REGIONS {
        let Some(cidr) = auto_mode_cidr(region) else {
            continue;
        };
        let path = format!("projects/{project}/regions/{region}/subnetworks/{name}");
        if world.compute.resources.contains_key(&path) {
            continue;
        }
        let gateway = super::cidr::Cidr::parse(cidr)
            .map(|c| c.gateway().to_string())
            .unwrap_or_default();
        let mut subnet = json!({
            "kind": "compute#subnetwork",
            "id": world.numeric_id(),
            "creationTimestamp": world.compute_timestamp(now),
            "name": name,
            "network": network_link,
            "ipCidrRange": cidr,
            "gatewayAddress": gateway,
            "region": link(&format!("projects/{project}/regions/{region}")),
            "selfLink": link(&path),
            "privateIpGoogleAccess": false,
            "fingerprint": "",
            "stackType": "IPV4_ONLY",
            "purpose": "PRIVATE",
            "privateIpv6GoogleAccess": "DISABLE_GOOGLE_ACCESS",
        });
        subnet["fingerprint"] = json!(super::fingerprint(&subnet));
        links.push(json!(link(&path)));
        world.compute.resources.insert(
            path,
            Resource {
                kind: subnetworks::KIND,
                state: Life::Ready,
                body: subnet,
                auto_created: true,
            },
        );
    }
    if let Some(network) = world.compute.resources.get_mut(network_path)
        && !links.is_empty()
    {
        network.body["subnetworks"] = Value::Array(links);
    }
}
