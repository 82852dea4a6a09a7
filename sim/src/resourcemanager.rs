//! Cloud Resource Manager (`/cloudresourcemanager/...`): the IAM policy of projects, served at v1
//! and v3 from one store ([`crate::iam::State::project_policies`]).
//!
//! | method | path |
//! |---|---|
//! | `projects.getIamPolicy` (v1) | `POST /cloudresourcemanager/v1/projects/{p}:getIamPolicy` `{"options": {"requestedPolicyVersion": 3}}` |
//! | `projects.setIamPolicy` (v1) | `POST /cloudresourcemanager/v1/projects/{p}:setIamPolicy` `{"policy": {...}, "updateMask": "bindings,etag"}` |
//! | `projects.getIamPolicy` (v3) | `POST /cloudresourcemanager/v3/projects/{p}:getIamPolicy` |
//! | `projects.setIamPolicy` (v3) | `POST /cloudresourcemanager/v3/projects/{p}:setIamPolicy` |
//! | `projects.get` (v1) | `GET /cloudresourcemanager/v1/projects/{p}` |
//! | `projects.get` (v3) | `GET /cloudresourcemanager/v3/projects/{p}` |
//!
//! `projects.get` answers the implicit project: v3 `Project` (`name` `projects/NUMBER`,
//! `projectId`, `state` `ACTIVE`, `displayName` = the id, `etag`), v1 `Project` (`projectNumber`
//! as an int64 string, `projectId`, `lifecycleState` `ACTIVE`, `name` = the id) — the fields of the
//! discovery documents' `Project` schemas the simulator can fill; no parent, labels or times. It is
//! how a client learns a project's number (`gcloud projects describe P`).
//!
//! Paths and request shapes are those of the discovery documents (googleapis/google-api-go-client
//! `cloudresourcemanager/v1/cloudresourcemanager-api.json`: `v1/projects/{resource}:getIamPolicy`;
//! `cloudresourcemanager/v3/cloudresourcemanager-api.json`: `v3/{+resource}:getIamPolicy` with
//! `resource` matching `^projects/[^/]+$`). gcloud 528's `gcloud projects get-iam-policy`,
//! `add-iam-policy-binding` and `remove-iam-policy-binding` call v1 (`projects_util.
//! DEFAULT_API_VERSION = 'v1'`) and always send version 3; google-cloud-resourcemanager-v3 calls
//! v3. `{p}` is a project id or number in both versions, as Resource Manager resolves either; a
//! segment that is neither is answered 403 `PERMISSION_DENIED` `The caller does not have
//! permission` (Resource Manager's answer for a project it cannot show; guessed for this case).
// GUESS(resourcemanager-bad-project): a project segment that is neither an id nor a number is 403 `The caller does not have permission`
//!
//! Projects are implicit, so every project has a policy: until someone writes it, `roles/owner`
//! for `user:sim-owner@example.com` and `roles/editor` for the project's Compute Engine default
//! service account ([`crate::iam::default_project_policy`]), with a stable etag. What a write may
//! contain, the etag and version rules and their errors are [`crate::iam::policy`]'s; the
//! project-only rules (no `allUsers`, owners must be invited) are there too. `updateMask` is
//! honoured (default `bindings,etag`, as `SetIamPolicyRequest` documents): `auditConfigs` outside
//! the mask are kept. Unknown JSON names are refused as ESF refuses them.
//!
//! Every request goes through Service Usage: `cloudresourcemanager.googleapis.com` must be enabled
//! for the project.

use crate::error::{GcpError, GcpResult};
use crate::http;
use crate::iam::{self, policy};
use crate::shared::Shared;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State as AxumState};
use axum::response::Response;
use axum::routing::post;
use serde_json::Value;
use std::sync::Arc;

/// Routes of this API (full paths, including the simulator's prefix).
pub fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/cloudresourcemanager/v1/projects/{resource}",
            post(method).get(get_v1),
        )
        .route(
            "/cloudresourcemanager/v3/projects/{resource}",
            post(method).get(get_v3),
        )
}

/// The id and number of the project `segment` names (403 as for any project it cannot show).
fn project_of(shared: &Shared, segment: &str) -> GcpResult<(String, String)> {
    if !plausible_project(segment) {
        return Err(GcpError::new(
            403,
            "PERMISSION_DENIED",
            "forbidden",
            "The caller does not have permission",
        ));
    }
    shared.read_world(|world, _| {
        let id = iam::project_key(world, segment);
        let number = world.project_number(&id);
        Ok((id, number))
    })
}

/// `GET v3/projects/{p}`.
async fn get_v3(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(project): Path<String>,
) -> GcpResult<Response> {
    let (id, number) = project_of(&shared, &project)?;
    Ok(http::json(serde_json::json!({
        "name": format!("projects/{number}"),
        "projectId": id,
        "state": "ACTIVE",
        "displayName": id,
        "etag": format!("W/\"{number}\""),
    })))
}

/// `GET v1/projects/{p}`.
async fn get_v1(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(project): Path<String>,
) -> GcpResult<Response> {
    let (id, number) = project_of(&shared, &project)?;
    Ok(http::json(serde_json::json!({
        "projectNumber": number,
        "projectId": id,
        "lifecycleState": "ACTIVE",
        "name": id,
    })))
}

/// A project id (6 to 30 lowercase letters, digits or hyphens, a letter first) or number.
fn plausible_project(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    let number = !bytes.is_empty() && bytes.iter().all(u8::is_ascii_digit);
    let id = (6..=30).contains(&bytes.len())
        && bytes[0].is_ascii_lowercase()
        && bytes[bytes.len() - 1] != b'-'
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-');
    number || id
}

/// `POST .../projects/{p}:getIamPolicy|:setIamPolicy` (axum sees `{resource}` as `p:method`).
async fn method(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(resource): Path<String>,
    body: Bytes,
) -> GcpResult<Response> {
    let Some((project, verb)) = resource.split_once(':') else {
        return Err(GcpError::unrouted());
    };
    let body = http::parse_json(&body)?;
    if !matches!(verb, "getIamPolicy" | "setIamPolicy") {
        return Err(GcpError::unrouted());
    }
    if !plausible_project(project) {
        return Err(GcpError::new(
            403,
            "PERMISSION_DENIED",
            "forbidden",
            "The caller does not have permission",
        ));
    }
    match verb {
        "getIamPolicy" => get_policy(&shared, project, &body),
        _ => set_policy(&shared, project, &body),
    }
}

fn get_policy(shared: &Shared, project: &str, body: &Value) -> GcpResult<Response> {
    policy::only_fields(body, &["options"], "")?;
    let requested = match body.get("options") {
        None | Some(Value::Null) => None,
        Some(options) => {
            policy::only_fields(options, &["requestedPolicyVersion"], "options")?;
            options.get("requestedPolicyVersion").map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        }
    };
    let requested = policy::requested_version(policy::Api::ResourceManager, requested.as_deref())?;
    shared.read_world(|world, _| {
        let key = iam::project_key(world, project);
        Ok(http::json(
            iam::project_policy(world, &key).to_json(requested),
        ))
    })
}

fn set_policy(shared: &Shared, project: &str, body: &Value) -> GcpResult<Response> {
    policy::only_fields(body, &["policy", "updateMask"], "")?;
    let Some(sent) = body.get("policy").filter(|p| !p.is_null()) else {
        return Err(GcpError::invalid_reason(
            "badRequest",
            "The request must carry the policy to set.",
        ));
    };
    let incoming = policy::parse_incoming(sent, "policy", true)?;
    let mask = match body.get("updateMask") {
        None | Some(Value::Null) => policy::parse_mask(None)?,
        Some(Value::String(m)) => policy::parse_mask(Some(m))?,
        Some(v) => {
            return Err(GcpError::invalid_reason(
                "badRequest",
                format!(
                    "Invalid value at 'update_mask' (type.googleapis.com/google.protobuf.FieldMask), {v}"
                ),
            ));
        }
    };
    let version = incoming.version;
    shared.with_world(|world, _| {
        let key = iam::project_key(world, project);
        let current = iam::project_policy(world, &key);
        let mut new = policy::apply_set(
            world,
            policy::Target::Project(&key),
            &current,
            incoming,
            &mask,
        )?;
        new.etag = policy::next_etag(world);
        let answer = new.to_json(version);
        world.iam.project_policies.insert(key, new);
        Ok(http::json(answer))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_segments() {
        assert!(plausible_project("my-project"));
        assert!(plausible_project("123456789012"));
        assert!(!plausible_project("My_Project"));
        assert!(!plausible_project("abc"));
    }
}
