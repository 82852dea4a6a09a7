//! Which methods Google serves, from their discovery documents: a request that reaches no route
//! of the simulator answers 501 `UNIMPLEMENTED` ("not simulated") when Google's API has a method
//! at that path, and Google's 404 ("The requested URL <code>…</code> was not found on this
//! server.") when it has none ([`crate::server`]'s fallback).
//!
//! The table (`discovery/methods.txt`, one `id METHOD /path` a line, `{}` for a path parameter) is
//! generated from the discovery documents of the APIs that publish one in this repository's
//! reference set — Compute v1 (<https://compute.googleapis.com/$discovery/rest?version=v1>), GKE
//! v1 (<https://container.googleapis.com/$discovery/rest?version=v1>), Filestore v1, Artifact
//! Registry v1 and Cloud Storage v1 (same address, each API's host) — each method's `flatPath`
//! (else `path`) under the simulator's prefix of the API. The test
//! `the_table_is_generated_from_the_discovery_documents` regenerates it from the documents and
//! compares (`A3CTL_REGENERATE_DISCOVERY=1` rewrites it). The methods of the APIs whose discovery
//! documents are not in the set are added by hand from their REST references, for the paths the
//! simulator serves: Service Usage v1
//! (<https://cloud.google.com/service-usage/docs/reference/rest>), IAM v1's service accounts and
//! their keys (<https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts>) and
//! Resource Manager's projects, v1 and v3
//! (<https://cloud.google.com/resource-manager/reference/rest/v1/projects>, `…/v3/projects`).
//!
//! The same answers hold on a path the simulator does serve, for a method its route does not:
//! axum's empty 405 (the router's `method_not_allowed_fallback`) and a handler's refusal of a
//! custom verb ([`GcpError::unrouted`], replaced in [`crate::server`]'s front door) become 501
//! when Google lists the method there (`DELETE` on a node's VM is `compute.instances.delete`) and
//! Google's 404 when it does not (`PUT` on a Compute network, `DELETE` on a GKE operation).
// GUESS(unlisted-method-404): a method Google does not list at a path it serves gets the same 404 "The requested URL … was not found on this server." as an unknown URL, not 405
//! Google's front end routes a request by its method and path together (AIP-127,
//! <https://google.aip.dev/127>: each method is one HTTP verb and URI template), so a verb it does
//! not map finds no method; that its answer is then the unknown URL's 404 rather than a 405 is
//! the simulator's guess (the only published 405 captures, "The request method `POST` is
//! inappropriate for the URL `/`", are of sites' roots, not of API paths).
//!
//! The answer's shape is a guess: Google publishes no body for a method a server does not
//! implement; this one is the canonical `UNIMPLEMENTED` error (<https://google.aip.dev/193>) with
//! reason `notImplemented`.

use crate::error::GcpError;

pub mod schema;

/// The generated table: `id METHOD /path` per line.
const TABLE: &str = include_str!("discovery/methods.txt");

/// Service Usage v1 (`services.*`, `operations.*`), from its REST reference.
const SERVICE_USAGE: &str = "\
serviceusage.services.batchEnable POST /serviceusage/v1/projects/{}/services:batchEnable
serviceusage.services.batchGet GET /serviceusage/v1/projects/{}/services:batchGet
serviceusage.services.disable POST /serviceusage/v1/projects/{}/services/{}:disable
serviceusage.services.enable POST /serviceusage/v1/projects/{}/services/{}:enable
serviceusage.services.get GET /serviceusage/v1/projects/{}/services/{}
serviceusage.services.list GET /serviceusage/v1/projects/{}/services
serviceusage.operations.get GET /serviceusage/v1/operations/{}
serviceusage.operations.list GET /serviceusage/v1/operations
";

/// IAM v1's service accounts and keys, from its REST reference.
const IAM: &str = "\
iam.projects.serviceAccounts.create POST /iam/v1/projects/{}/serviceAccounts
iam.projects.serviceAccounts.delete DELETE /iam/v1/projects/{}/serviceAccounts/{}
iam.projects.serviceAccounts.disable POST /iam/v1/projects/{}/serviceAccounts/{}:disable
iam.projects.serviceAccounts.enable POST /iam/v1/projects/{}/serviceAccounts/{}:enable
iam.projects.serviceAccounts.get GET /iam/v1/projects/{}/serviceAccounts/{}
iam.projects.serviceAccounts.getIamPolicy POST /iam/v1/projects/{}/serviceAccounts/{}:getIamPolicy
iam.projects.serviceAccounts.list GET /iam/v1/projects/{}/serviceAccounts
iam.projects.serviceAccounts.patch PATCH /iam/v1/projects/{}/serviceAccounts/{}
iam.projects.serviceAccounts.setIamPolicy POST /iam/v1/projects/{}/serviceAccounts/{}:setIamPolicy
iam.projects.serviceAccounts.signBlob POST /iam/v1/projects/{}/serviceAccounts/{}:signBlob
iam.projects.serviceAccounts.signJwt POST /iam/v1/projects/{}/serviceAccounts/{}:signJwt
iam.projects.serviceAccounts.testIamPermissions POST /iam/v1/projects/{}/serviceAccounts/{}:testIamPermissions
iam.projects.serviceAccounts.undelete POST /iam/v1/projects/{}/serviceAccounts/{}:undelete
iam.projects.serviceAccounts.update PUT /iam/v1/projects/{}/serviceAccounts/{}
iam.projects.serviceAccounts.keys.create POST /iam/v1/projects/{}/serviceAccounts/{}/keys
iam.projects.serviceAccounts.keys.delete DELETE /iam/v1/projects/{}/serviceAccounts/{}/keys/{}
iam.projects.serviceAccounts.keys.disable POST /iam/v1/projects/{}/serviceAccounts/{}/keys/{}:disable
iam.projects.serviceAccounts.keys.enable POST /iam/v1/projects/{}/serviceAccounts/{}/keys/{}:enable
iam.projects.serviceAccounts.keys.get GET /iam/v1/projects/{}/serviceAccounts/{}/keys/{}
iam.projects.serviceAccounts.keys.list GET /iam/v1/projects/{}/serviceAccounts/{}/keys
iam.projects.serviceAccounts.keys.patch PATCH /iam/v1/projects/{}/serviceAccounts/{}/keys/{}
iam.projects.serviceAccounts.keys.upload POST /iam/v1/projects/{}/serviceAccounts/{}/keys:upload
";

/// Resource Manager's projects, v1 and v3, from its REST reference.
const RESOURCE_MANAGER: &str = "\
cloudresourcemanager.projects.clearOrgPolicy POST /cloudresourcemanager/v1/projects/{}:clearOrgPolicy
cloudresourcemanager.projects.create POST /cloudresourcemanager/v1/projects
cloudresourcemanager.projects.delete DELETE /cloudresourcemanager/v1/projects/{}
cloudresourcemanager.projects.get GET /cloudresourcemanager/v1/projects/{}
cloudresourcemanager.projects.getAncestry POST /cloudresourcemanager/v1/projects/{}:getAncestry
cloudresourcemanager.projects.getEffectiveOrgPolicy POST /cloudresourcemanager/v1/projects/{}:getEffectiveOrgPolicy
cloudresourcemanager.projects.getIamPolicy POST /cloudresourcemanager/v1/projects/{}:getIamPolicy
cloudresourcemanager.projects.getOrgPolicy POST /cloudresourcemanager/v1/projects/{}:getOrgPolicy
cloudresourcemanager.projects.list GET /cloudresourcemanager/v1/projects
cloudresourcemanager.projects.listAvailableOrgPolicyConstraints POST /cloudresourcemanager/v1/projects/{}:listAvailableOrgPolicyConstraints
cloudresourcemanager.projects.listOrgPolicies POST /cloudresourcemanager/v1/projects/{}:listOrgPolicies
cloudresourcemanager.projects.setIamPolicy POST /cloudresourcemanager/v1/projects/{}:setIamPolicy
cloudresourcemanager.projects.setOrgPolicy POST /cloudresourcemanager/v1/projects/{}:setOrgPolicy
cloudresourcemanager.projects.testIamPermissions POST /cloudresourcemanager/v1/projects/{}:testIamPermissions
cloudresourcemanager.projects.undelete POST /cloudresourcemanager/v1/projects/{}:undelete
cloudresourcemanager.projects.update PUT /cloudresourcemanager/v1/projects/{}
cloudresourcemanager.projects.create POST /cloudresourcemanager/v3/projects
cloudresourcemanager.projects.delete DELETE /cloudresourcemanager/v3/projects/{}
cloudresourcemanager.projects.get GET /cloudresourcemanager/v3/projects/{}
cloudresourcemanager.projects.getIamPolicy POST /cloudresourcemanager/v3/projects/{}:getIamPolicy
cloudresourcemanager.projects.list GET /cloudresourcemanager/v3/projects
cloudresourcemanager.projects.move POST /cloudresourcemanager/v3/projects/{}:move
cloudresourcemanager.projects.patch PATCH /cloudresourcemanager/v3/projects/{}
cloudresourcemanager.projects.search GET /cloudresourcemanager/v3/projects:search
cloudresourcemanager.projects.setIamPolicy POST /cloudresourcemanager/v3/projects/{}:setIamPolicy
cloudresourcemanager.projects.testIamPermissions POST /cloudresourcemanager/v3/projects/{}:testIamPermissions
cloudresourcemanager.projects.undelete POST /cloudresourcemanager/v3/projects/{}:undelete
";

/// Whether one template segment matches one path segment: a literal, `{}` (any non-empty
/// segment) or `{}:verb` (a name, then the verb). Returns its weight (literals weigh more), or
/// `None`.
fn segment(template: &str, given: &str) -> Option<u32> {
    if template == "{}" {
        return (!given.is_empty()).then_some(1);
    }
    if let Some(verb) = template.strip_prefix("{}:") {
        return given
            .strip_suffix(verb)
            .and_then(|name| name.strip_suffix(':'))
            .filter(|name| !name.is_empty())
            .map(|_| 2);
    }
    (template == given).then_some(3)
}

/// The id of the method Google serves for `method` on `path` (a path on the simulator,
/// `/compute/v1/projects/p/zones/z/instances`), if any; the most literal match wins.
pub fn method_for(method: &str, path: &str) -> Option<&'static str> {
    let given: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    TABLE
        .lines()
        .chain(SERVICE_USAGE.lines())
        .chain(IAM.lines())
        .chain(RESOURCE_MANAGER.lines())
        .filter_map(|line| {
            let mut parts = line.split(' ');
            let (id, verb, template) = (parts.next()?, parts.next()?, parts.next()?);
            if verb != method {
                return None;
            }
            let template: Vec<&str> = template.split('/').collect();
            if template.len() != given.len() {
                return None;
            }
            let weight = template
                .iter()
                .zip(&given)
                .map(|(t, g)| segment(t, g))
                .sum::<Option<u32>>()?;
            Some((weight, id))
        })
        .max_by_key(|(weight, _)| *weight)
        .map(|(_, id)| id)
}

/// The answer to a request no route of the simulator serves: 501 for a method Google has, 404
/// for a URL Google does not serve.
pub fn unserved(method: &str, path: &str) -> GcpError {
    match method_for(method, path) {
        Some(id) => GcpError::new(
            501,
            "UNIMPLEMENTED",
            "notImplemented",
            format!(
                "Method {id} ({method} {path}) is part of Google's API but is not simulated by a3ctl-sim."
            ),
        ),
        None => GcpError::not_found(format!(
            "The requested URL {path} was not found on this server."
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::path::Path;

    /// Each discovery document of the reference set and the simulator's prefix for its paths.
    const DOCUMENTS: &[(&str, &str)] = &[
        ("compute.v1.json", "/compute/v1/"),
        ("container.v1.json", "/container/"),
        ("file.v1.json", "/file/"),
        ("artifactregistry.v1.json", "/artifactregistry/"),
        ("storage.v1.json", "/storage/v1/"),
    ];

    fn collect(resource: &Value, prefix: &str, out: &mut Vec<String>) {
        if let Some(methods) = resource["methods"].as_object() {
            for method in methods.values() {
                let path = method["flatPath"]
                    .as_str()
                    .or_else(|| method["path"].as_str())
                    .unwrap_or_default();
                let template: Vec<String> = path
                    .split('/')
                    .map(|seg| match seg.find('{') {
                        Some(0) => match seg.find('}') {
                            Some(end) => format!("{{}}{}", &seg[end + 1..]),
                            None => seg.to_string(),
                        },
                        _ => seg.to_string(),
                    })
                    .collect();
                out.push(format!(
                    "{} {} {prefix}{}",
                    method["id"].as_str().unwrap_or_default(),
                    method["httpMethod"].as_str().unwrap_or_default(),
                    template.join("/")
                ));
            }
        }
        if let Some(resources) = resource["resources"].as_object() {
            for child in resources.values() {
                collect(child, prefix, out);
            }
        }
    }

    #[test]
    fn the_table_is_generated_from_the_discovery_documents() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference/discovery");
        if !dir.is_dir() {
            eprintln!("{} is absent: the table is not compared", dir.display());
            return;
        }
        let mut lines = Vec::new();
        for (file, prefix) in DOCUMENTS {
            let text = std::fs::read_to_string(dir.join(file)).expect("discovery document");
            let document: Value = serde_json::from_str(&text).expect("JSON");
            collect(&document, prefix, &mut lines);
        }
        lines.sort();
        let generated = lines.join("\n") + "\n";
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/discovery/methods.txt");
        if std::env::var_os("A3CTL_REGENERATE_DISCOVERY").is_some() {
            std::fs::write(&path, &generated).expect("write the table");
        }
        assert!(
            generated == TABLE,
            "src/discovery/methods.txt differs from the discovery documents: rerun with A3CTL_REGENERATE_DISCOVERY=1"
        );
    }

    #[test]
    fn methods_are_found_by_their_paths() {
        assert_eq!(
            method_for("GET", "/compute/v1/projects/p/zones/z/instances"),
            Some("compute.instances.list")
        );
        assert_eq!(
            method_for(
                "GET",
                "/compute/v1/projects/p/regions/r/routers/x/getRouterStatus"
            ),
            Some("compute.routers.getRouterStatus")
        );
        assert_eq!(
            method_for(
                "POST",
                "/container/v1/projects/p/locations/l/clusters/c:completeControlPlaneUpgrade"
            ),
            Some("container.projects.locations.clusters.completeControlPlaneUpgrade")
        );
        assert_eq!(
            method_for("GET", "/serviceusage/v1/projects/p/services:batchGet"),
            Some("serviceusage.services.batchGet")
        );
        assert_eq!(
            method_for("GET", "/artifactregistry/v1/projects/p/locations/us"),
            Some("artifactregistry.projects.locations.get")
        );
        assert_eq!(
            method_for(
                "POST",
                "/iam/v1/projects/p/serviceAccounts/a@p.iam.gserviceaccount.com:disable"
            ),
            Some("iam.projects.serviceAccounts.disable")
        );
        assert_eq!(
            method_for("POST", "/cloudresourcemanager/v3/projects/p:move"),
            Some("cloudresourcemanager.projects.move")
        );
        assert_eq!(
            method_for("PUT", "/compute/v1/projects/p/global/networks/n"),
            None
        );
        assert_eq!(method_for("GET", "/compute/v1/projects/p/nonsense"), None);
        assert_eq!(
            method_for("DELETE", "/compute/v1/projects/p/zones/z/instances"),
            None
        );
    }
}
