//! Cloud Routers (`projects/p/regions/r/routers`) with their Cloud NAT gateways in `nats[]`:
//! insert, get, list, aggregated list, patch, update (PUT), delete. `gcloud compute routers nats
//! create` reads the router and PATCHes it with the new `nats[]`.

use super::collection::{Collection, Hooks, Placement, Quota, Target};
use super::{
    Kind, array_field, check_name, invalid_field, link, referenced_network, relative_path,
    required_field, str_field, subnetwork_path,
};
use crate::error::GcpResult;
use crate::shared::Ctx;
use crate::world::World;
use serde_json::{Map, Value, json};

/// The `routers` collection.
pub static COLLECTION: Collection = Collection {
    name: "Router",
    word: "router",
    segment: "routers",
    in_use_word: "router",
    placement: Placement::Regional,
    quota: Quota {
        metric: "ROUTERS",
        limit: 20.0,
        limit_name: "ROUTERS-per-project",
        regional: false,
    },
    build: insert,
    hooks: Hooks {
        patch: Some(patch),
        update: Some(update),
        ..Hooks::NONE
    },
};

pub const KIND: Kind = Kind(COLLECTION.name);

/// Validates the NAT gateways of a router in `region` on `network_link` and fills the defaults
/// Compute adds.
fn check_nats(
    world: &World,
    project: &str,
    region: &str,
    network_link: &str,
    nats: &[Value],
) -> GcpResult<Vec<Value>> {
    let mut names: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (i, nat) in nats.iter().enumerate() {
        let field = |f: &str| format!("resource.nats[{i}].{f}");
        let name = str_field(nat, "name").ok_or_else(|| required_field(&field("name")))?;
        check_name(&field("name"), name)?;
        if names.iter().any(|n| n == name) {
            return Err(invalid_field(
                &field("name"),
                name,
                "NAT names must be unique within a router.",
            ));
        }
        names.push(name.to_string());
        let mut nat = nat.clone();
        let nat_type = str_field(&nat, "type").unwrap_or("PUBLIC").to_string();
        nat["type"] = json!(nat_type);
        let ranges = str_field(&nat, "sourceSubnetworkIpRangesToNat")
            .ok_or_else(|| required_field(&field("sourceSubnetworkIpRangesToNat")))?
            .to_string();
        match ranges.as_str() {
            "ALL_SUBNETWORKS_ALL_IP_RANGES" | "ALL_SUBNETWORKS_ALL_PRIMARY_IP_RANGES" => {
                if !array_field(&nat, "subnetworks").is_empty() {
                    return Err(invalid_field(
                        &field("subnetworks"),
                        "",
                        &format!(
                            "Subnetworks must not be specified when sourceSubnetworkIpRangesToNat is {ranges}."
                        ),
                    ));
                }
            }
            "LIST_OF_SUBNETWORKS" => {
                let subnets = array_field(&nat, "subnetworks");
                if subnets.is_empty() {
                    return Err(required_field(&field("subnetworks")));
                }
                let mut normalized = Vec::new();
                for (j, subnet) in subnets.iter().enumerate() {
                    let reference = str_field(subnet, "name").unwrap_or("");
                    let path = subnetwork_path(project, region, reference);
                    let found = path.as_deref().and_then(|p| world.compute.visible(p));
                    let Some(found) = found.filter(|s| {
                        str_field(&s.body, "network") == Some(network_link)
                            && str_field(&s.body, "region").map(super::last_segment) == Some(region)
                    }) else {
                        return Err(invalid_field(
                            &format!("resource.nats[{i}].subnetworks[{j}].name"),
                            reference,
                            "The referenced subnetwork resource cannot be found in the router's network and region.",
                        ));
                    };
                    let mut subnet = subnet.clone();
                    subnet["name"] = found.body["selfLink"].clone();
                    if subnet.get("sourceIpRangesToNat").is_none() {
                        subnet["sourceIpRangesToNat"] = json!(["ALL_IP_RANGES"]);
                    }
                    normalized.push(subnet);
                }
                nat["subnetworks"] = Value::Array(normalized);
            }
            other => {
                return Err(invalid_field(
                    &field("sourceSubnetworkIpRangesToNat"),
                    other,
                    "",
                ));
            }
        }
        if nat_type == "PUBLIC" {
            let option = str_field(&nat, "natIpAllocateOption")
                .ok_or_else(|| required_field(&field("natIpAllocateOption")))?
                .to_string();
            let ips = array_field(&nat, "natIps");
            match option.as_str() {
                "AUTO_ONLY" if !ips.is_empty() => {
                    return Err(invalid_field(
                        &field("natIps"),
                        "",
                        "NAT IPs must not be specified when natIpAllocateOption is AUTO_ONLY.",
                    ));
                }
                "AUTO_ONLY" => {
                    if nat.get("autoNetworkTier").is_none() {
                        nat["autoNetworkTier"] = json!("PREMIUM");
                    }
                }
                "MANUAL_ONLY" if ips.is_empty() => {
                    return Err(required_field(&field("natIps")));
                }
                "MANUAL_ONLY" => {}
                other => return Err(invalid_field(&field("natIpAllocateOption"), other, "")),
            }
        }
        if nat.get("endpointTypes").is_none() {
            nat["endpointTypes"] = json!(["ENDPOINT_TYPE_VM"]);
        }
        if nat.get("enableEndpointIndependentMapping").is_none() {
            nat["enableEndpointIndependentMapping"] = json!(false);
        }
        out.push(nat);
    }
    Ok(out)
}

/// Validates the client-settable fields and returns the stored router.
#[allow(clippy::too_many_arguments)]
fn build_router(
    world: &World,
    project: &str,
    region: &str,
    name: &str,
    id: &str,
    created: &str,
    network_link: &str,
    spec: &Map<String, Value>,
) -> GcpResult<Value> {
    let spec_value = Value::Object(spec.clone());
    let mut body = json!({
        "kind": "compute#router",
        "id": id,
        "creationTimestamp": created,
        "name": name,
    });
    if let Some(description) = spec.get("description").filter(|d| !d.is_null()) {
        body["description"] = description.clone();
    }
    body["region"] = json!(link(&format!("projects/{project}/regions/{region}")));
    body["network"] = json!(network_link);
    if let Some(bgp) = spec.get("bgp").filter(|b| !b.is_null()) {
        if let Some(asn) = bgp.get("asn").and_then(Value::as_i64)
            && !(64512..=65534).contains(&asn)
            && !(4_200_000_000..=4_294_967_294).contains(&asn)
        {
            return Err(invalid_field(
                "resource.bgp.asn",
                &asn.to_string(),
                "The ASN must be a private ASN (64512-65534 or 4200000000-4294967294).",
            ));
        }
        body["bgp"] = bgp.clone();
    }
    for key in ["bgpPeers", "interfaces"] {
        let list = array_field(&spec_value, key);
        if !list.is_empty() {
            body[key] = Value::Array(list.to_vec());
        }
    }
    let nats = check_nats(
        world,
        project,
        region,
        network_link,
        array_field(&spec_value, "nats"),
    )?;
    if !nats.is_empty() {
        body["nats"] = Value::Array(nats);
    }
    body["selfLink"] = json!(link(&format!(
        "projects/{project}/regions/{region}/routers/{name}"
    )));
    body["encryptedInterconnectRouter"] = json!(
        spec.get("encryptedInterconnectRouter")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    );
    Ok(body)
}

fn insert(
    world: &mut World,
    cx: &Ctx,
    target: &Target,
    spec: &Map<String, Value>,
) -> GcpResult<Value> {
    let network_ref = spec
        .get("network")
        .and_then(Value::as_str)
        .ok_or_else(|| required_field("resource.network"))?;
    let network = referenced_network(&world.compute, &target.project, network_ref)?;
    super::network_profiles::check_router(world, &network)?;
    let id = world.numeric_id();
    let created = world.compute_timestamp(cx.now);
    build_router(
        world,
        &target.project,
        target.region(),
        &target.name,
        &id,
        &created,
        &link(&network),
        spec,
    )
}

/// PATCH merges top-level fields (a given `nats[]` replaces the old list).
fn patch(
    world: &mut World,
    _cx: &Ctx,
    target: &Target,
    current: Value,
    body: Map<String, Value>,
) -> GcpResult<Value> {
    change(world, target, current, body, true)
}

/// PUT replaces them all.
fn update(
    world: &mut World,
    _cx: &Ctx,
    target: &Target,
    current: Value,
    body: Map<String, Value>,
) -> GcpResult<Value> {
    change(world, target, current, body, false)
}

/// The router a PATCH (`merge`) or PUT leaves. The network of a router cannot change.
fn change(
    world: &World,
    target: &Target,
    current_body: Value,
    body: Map<String, Value>,
    merge: bool,
) -> GcpResult<Value> {
    let project = target.project.as_str();
    let network_link = str_field(&current_body, "network")
        .unwrap_or("")
        .to_string();
    if let Some(given) = body.get("network").and_then(Value::as_str)
        && relative_path(given) != relative_path(&network_link)
        && super::network_path(project, given).as_deref() != relative_path(&network_link)
    {
        return Err(invalid_field(
            "resource.network",
            given,
            "The network of a router cannot be changed.",
        ));
    }
    let mut spec = Map::new();
    if merge {
        for key in [
            "description",
            "bgp",
            "bgpPeers",
            "interfaces",
            "nats",
            "encryptedInterconnectRouter",
        ] {
            if let Some(value) = current_body.get(key) {
                spec.insert(key.to_string(), value.clone());
            }
        }
    }
    for (key, value) in body {
        spec.insert(key, value);
    }
    let id = str_field(&current_body, "id").unwrap_or("").to_string();
    let created = str_field(&current_body, "creationTimestamp")
        .unwrap_or("")
        .to_string();
    build_router(
        world,
        project,
        target.region(),
        &target.name,
        &id,
        &created,
        &network_link,
        &spec,
    )
}
