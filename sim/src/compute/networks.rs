//! VPC networks (`projects/p/global/networks`): insert, get, list, patch, delete.
//!
//! Custom mode (`autoCreateSubnetworks: false`) creates a bare network. Auto mode creates, when
//! the insert is DONE, one subnetwork named after the network in every region of the simulated
//! geography, from the /20 blocks of 10.128.0.0/9 that Google assigns to those regions. A request
//! without `autoCreateSubnetworks` would create a legacy network, which Google no longer allows.

use super::operations::{self, Effect, Scope, Start, Verb};
use super::{
    Kind, Life, Resource, already_exists, body_name, body_object, delete_resource, get_resource,
    invalid_field, link, list_resources, not_found, not_ready, str_field,
};
use crate::error::GcpResult;
use crate::geo;
use crate::http::{self, Query};
use crate::server::Shared;
use crate::world::World;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Default and bounds of `mtu`.
pub const DEFAULT_MTU: i64 = 1460;
pub const MTU_RANGE: std::ops::RangeInclusive<i64> = 1300..=8896;

/// The range auto-mode subnetworks are carved from.
pub const AUTO_MODE_RANGE: &str = "10.128.0.0/9";

/// The primary range Google gives each region's auto-mode subnetwork.
pub fn auto_mode_cidr(region: &str) -> Option<&'static str> {
    Some(match region {
        "us-central1" => "10.128.0.0/20",
        "europe-west1" => "10.132.0.0/20",
        "us-west1" => "10.138.0.0/20",
        "asia-northeast1" => "10.146.0.0/20",
        "asia-southeast1" => "10.148.0.0/20",
        "us-east4" => "10.150.0.0/20",
        "europe-west4" => "10.164.0.0/20",
        "us-west4" => "10.182.0.0/20",
        "us-east5" => "10.202.0.0/20",
        _ => return None,
    })
}

pub fn router() -> Router<Arc<Shared>> {
    let base = "/compute/v1/projects/{project}/global/networks";
    Router::new().route(base, post(insert).get(list)).route(
        &format!("{base}/{{network}}"),
        get(get_one).delete(delete).patch(patch),
    )
}

fn path_of(project: &str, name: &str) -> String {
    format!("projects/{project}/global/networks/{name}")
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

async fn insert(
    State(shared): State<Arc<Shared>>,
    Path(project): Path<String>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let body = body_object(&body)?;
    shared.with_world(|world, cx| {
        if let Some(op) = operations::replay(world, &project, &query) {
            return Ok(http::json(op));
        }
        let name = body_name(&Value::Object(body.clone()))?;
        let path = path_of(&project, &name);
        if world.compute.resources.contains_key(&path) {
            return Err(already_exists(&path));
        }
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
        let mtu = check_mtu(&body)?.unwrap_or(DEFAULT_MTU);
        let routing = routing_config(&body, None)?;
        let id = world.numeric_id();
        let mut network = json!({
            "kind": "compute#network",
            "id": id,
            "creationTimestamp": world.compute_timestamp(cx.now),
            "name": name,
        });
        if let Some(description) = body.get("description").filter(|d| !d.is_null()) {
            network["description"] = description.clone();
        }
        network["selfLink"] = json!(link(&path));
        network["selfLinkWithId"] = json!(link(&format!("projects/{project}/global/networks/{id}")));
        network["autoCreateSubnetworks"] = json!(auto);
        network["routingConfig"] = routing;
        network["mtu"] = json!(mtu);
        network["networkFirewallPolicyEnforcementOrder"] = body
            .get("networkFirewallPolicyEnforcementOrder")
            .cloned()
            .unwrap_or_else(|| json!("AFTER_CLASSIC_FIREWALL"));
        let op = operations::start(
            world,
            cx,
            Start {
                project: &project,
                scope: Scope::Global,
                kind: Kind::Network,
                verb: Verb::Insert,
                target: path,
                target_id: id,
                effect: Effect::Create(network),
                request_id: query.get("requestId"),
            },
        )?;
        Ok(http::json(op))
    })
}

async fn get_one(
    State(shared): State<Arc<Shared>>,
    Path((project, name)): Path<(String, String)>,
) -> GcpResult<Response> {
    get_resource(&shared, &path_of(&project, &name))
}

async fn list(
    State(shared): State<Arc<Shared>>,
    Path(project): Path<String>,
) -> GcpResult<Response> {
    list_resources(
        &shared,
        Kind::Network,
        &format!("projects/{project}/global/networks"),
    )
}

async fn delete(
    State(shared): State<Arc<Shared>>,
    Path((project, name)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    delete_resource(
        &shared,
        &query,
        &project,
        Scope::Global,
        Kind::Network,
        &path_of(&project, &name),
    )
}

/// PATCH: `routingConfig`, `mtu`, `networkFirewallPolicyEnforcementOrder` and `description`
/// change in place; the subnet mode cannot change this way.
async fn patch(
    State(shared): State<Arc<Shared>>,
    Path((project, name)): Path<(String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let body = body_object(&body)?;
    shared.with_world(|world, cx| {
        if let Some(op) = operations::replay(world, &project, &query) {
            return Ok(http::json(op));
        }
        let path = path_of(&project, &name);
        let current = world
            .compute
            .visible(&path)
            .ok_or_else(|| not_found(&path))?;
        if current.state == Life::Deleting {
            return Err(not_ready(&path));
        }
        let mut next = current.body.clone();
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
        next["routingConfig"] = routing_config(&body, current.body.get("routingConfig"))?;
        for key in ["networkFirewallPolicyEnforcementOrder", "description"] {
            if let Some(value) = body.get(key).filter(|v| !v.is_null()) {
                next[key] = value.clone();
            }
        }
        let target_id = str_field(&next, "id").unwrap_or("").to_string();
        let op = operations::start(
            world,
            cx,
            Start {
                project: &project,
                scope: Scope::Global,
                kind: Kind::Network,
                verb: Verb::Patch,
                target: path,
                target_id,
                effect: Effect::Replace(next),
                request_id: query.get("requestId"),
            },
        )?;
        Ok(http::json(op))
    })
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
                kind: Kind::Subnetwork,
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
