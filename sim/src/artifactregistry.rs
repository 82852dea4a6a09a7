//! Artifact Registry v1 (`/artifactregistry/v1/...`): repositories and their operations.
//!
//! Create and delete are `google.longrunning` operations (latency keys
//! `artifactregistry.repository.create|delete`); the repository appears when its create finishes
//! and disappears when its delete finishes. Patch is synchronous, as in the real API. Requests are
//! checked for the repository id rules, a location that is a region of [`crate::geo`] or one of
//! the multi-regions `us`, `europe`, `asia`, a required format, duplicates (409) and missing
//! repositories (404). Enums are accepted as names or proto numbers.
//!
//! **IAM** (the discovery document's `repositories.getIamPolicy`, a `GET
//! .../repositories/{r}:getIamPolicy?options.requestedPolicyVersion=3`, and `setIamPolicy`, a
//! `POST .../repositories/{r}:setIamPolicy` with `{"policy": {...}}`): each repository has a
//! policy, empty (`{"etag": "ACAB"}`) until someone sets one, gone with the repository. The rules
//! and errors of a write are [`crate::iam::policy`]'s; a stale etag is 409 `ABORTED` as for
//! projects (Artifact Registry's IAM is the common IAM service; not confirmed from a recorded
//! answer). `updateMask`, which the discovery document leaves out but `google.iam.v1.
//! SetIamPolicyRequest` has, is honoured as Resource Manager honours it. `testIamPermissions` is
//! not served.

use crate::aip151;
use crate::enums::{self, EnumField, EnumTable};
use crate::error::{GcpError, GcpResult};
use crate::faults::{FaultAction, NamedFault};
use crate::geo;
use crate::http::{self, Query};
use crate::iam::policy::{self as iam_policy};
use crate::lro::{self, LroApi, Operations};
use crate::shared::Ctx;
use crate::shared::Shared;
pub use crate::state::artifactregistry::{Pending, State};
use crate::world::World;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State as AxumState};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};
use std::sync::Arc;

/// Multi-region locations Artifact Registry accepts besides regions.
pub const MULTI_REGIONS: &[&str] = &["us", "europe", "asia"];

const FORMAT: &[(i64, &str)] = &[
    (0, "FORMAT_UNSPECIFIED"),
    (1, "DOCKER"),
    (2, "MAVEN"),
    (3, "NPM"),
    (5, "APT"),
    (6, "YUM"),
    (8, "PYTHON"),
    (9, "KFP"),
    (10, "GO"),
    (11, "GENERIC"),
    // Listed by the discovery document, not by the crate: numbers assumed.
    (12, "GOOGET"),
    (13, "RUBY"),
    (14, "CONDA"),
];

const MODE: &[(i64, &str)] = &[
    (0, "MODE_UNSPECIFIED"),
    (1, "STANDARD_REPOSITORY"),
    (2, "VIRTUAL_REPOSITORY"),
    (3, "REMOTE_REPOSITORY"),
    // Listed by the discovery document, not by the crate: numbers assumed.
    (4, "AOSS_REPOSITORY"),
    (5, "ASSURED_OSS_REPOSITORY"),
];

/// Enum fields of `google.devtools.artifactregistry.v1.Repository`, with the proto numbers of
/// the `google-cloud-artifactregistry-v1` crate.
pub const REPOSITORY_ENUMS: EnumTable = &[
    EnumField {
        path: "format",
        values: FORMAT,
    },
    EnumField {
        path: "mode",
        values: MODE,
    },
    EnumField {
        path: "mavenConfig.versionPolicy",
        values: &[
            (0, "VERSION_POLICY_UNSPECIFIED"),
            (1, "RELEASE"),
            (2, "SNAPSHOT"),
        ],
    },
    EnumField {
        path: "vulnerabilityScanningConfig.enablementConfig",
        values: &[
            (0, "ENABLEMENT_CONFIG_UNSPECIFIED"),
            (1, "INHERITED"),
            (2, "DISABLED"),
        ],
    },
    EnumField {
        path: "vulnerabilityScanningConfig.enablementState",
        values: &[
            (0, "ENABLEMENT_STATE_UNSPECIFIED"),
            (1, "SCANNING_UNSUPPORTED"),
            (2, "SCANNING_DISABLED"),
            (3, "SCANNING_ACTIVE"),
        ],
    },
];

/// How `repositories.list` pages: "Maximum page size is 1,000" (the discovery document's
/// `pageSize`); the default when none is asked for is not published (1,000: a guess).
const PAGING: crate::paging::Rules = crate::paging::aip158(1000, 1000);

const LIST_ENUMS: EnumTable = &[
    EnumField {
        path: "repositories[].format",
        values: FORMAT,
    },
    EnumField {
        path: "repositories[].mode",
        values: MODE,
    },
];

/// Type URLs of Artifact Registry operations.
pub const LRO: LroApi = LroApi {
    metadata_type: "type.googleapis.com/google.devtools.artifactregistry.v1.OperationMetadata",
    resource_type: "type.googleapis.com/google.devtools.artifactregistry.v1.Repository",
    detailed_metadata: false,
    resource_enums: REPOSITORY_ENUMS,
};

/// Routes of this API (full paths, including the simulator's prefix).
pub fn router() -> Router<Arc<Shared>> {
    let base = "/artifactregistry/v1/projects/{project}/locations/{location}";
    Router::new()
        .route(
            &format!("{base}/repositories"),
            get(list_repositories).post(create_repository),
        )
        .route(
            &format!("{base}/repositories/{{repository}}"),
            get(get_repository)
                .patch(patch_repository)
                .delete(delete_repository)
                .post(repository_method),
        )
        .merge(aip151::routes::<Api>(base, aip151::Methods::GetAndCancel))
}

/// Artifact Registry's operations, served by [`aip151`].
pub struct Api;

impl aip151::Service for Api {
    const LRO: LroApi = LRO;
    fn operations(world: &World) -> &Operations {
        &world.artifactregistry.operations
    }
    fn operations_mut(world: &mut World) -> &mut Operations {
        &mut world.artifactregistry.operations
    }
}

/// Finishes due operations; returns true if anything changed.
pub fn tick(world: &mut World, cx: &Ctx) -> bool {
    let due = world.artifactregistry.operations.due(cx.now);
    let now_text = world.rfc3339(cx.now);
    for name in &due {
        let pending = world.artifactregistry.pending.remove(name);
        let state = &mut world.artifactregistry;
        let Some(op) = state.operations.by_name.get_mut(name) else {
            continue;
        };
        match pending {
            Some(Pending::Create {
                repository,
                error: None,
            }) => {
                let mut repository = repository;
                repository["updateTime"] = json!(now_text);
                state
                    .repositories
                    .insert(op.target.clone(), repository.clone());
                op.succeed(cx.now, Some(repository));
            }
            Some(Pending::Create {
                error: Some((code, message)),
                ..
            }) => op.fail(cx.now, code, message),
            Some(Pending::Delete) | None => {
                state.repositories.remove(&op.target);
                state.policies.remove(&op.target);
                op.succeed(cx.now, None);
            }
        }
    }
    !due.is_empty()
}

/// This API's part of the admin inventory.
pub fn inventory(world: &World) -> Value {
    json!({
        "repositories": world.artifactregistry.repositories.values().collect::<Vec<_>>(),
        "operations": aip151::inventory::<Api>(world),
    })
}

fn not_found() -> GcpError {
    GcpError::not_found("Requested entity was not found.")
}

fn invalid(message: impl Into<String>) -> GcpError {
    GcpError::invalid_reason("badRequest", message)
}

/// Repository ids: 1-63 characters, a lowercase letter first, then lowercase letters, digits
/// or hyphens, ending with a letter or digit.
pub fn valid_repository_id(id: &str) -> bool {
    http::valid_name(id, 63)
}

fn check_location(location: &str) -> GcpResult<()> {
    if geo::region_exists(location) || MULTI_REGIONS.contains(&location) {
        return Ok(());
    }
    Err(invalid(format!(
        "Invalid location \"{location}\": the location must be a Google Cloud region or one of the multi-regions us, europe, asia."
    )))
}

fn registry_uri(location: &str, project: &str, id: &str, format: &str) -> Option<String> {
    let host = match format {
        "DOCKER" => "docker",
        "MAVEN" => "maven",
        "NPM" => "npm",
        "PYTHON" => "python",
        "APT" => "apt",
        "YUM" => "yum",
        "GO" => "go",
        "KFP" => "kfp",
        "GENERIC" => "generic",
        _ => return None,
    };
    Some(format!("{location}-{host}.pkg.dev/{project}/{id}"))
}

fn fault_error(action: FaultAction) -> Result<Option<(i32, String)>, GcpError> {
    match action {
        FaultAction::Named(NamedFault::QuotaExceeded) => Err(GcpError::new(
            429,
            "RESOURCE_EXHAUSTED",
            "rateLimitExceeded",
            "Quota exceeded for quota metric 'Repository create requests' and limit 'Repository create requests per minute per project' of service 'artifactregistry.googleapis.com'.",
        )),
        FaultAction::Named(NamedFault::Stockout | NamedFault::OperationError) => Ok(Some((
            lro::rpc_code("INTERNAL"),
            "Internal error encountered.".to_string(),
        ))),
        // Drops never reach the modules ([`crate::world::Ctx::scripted_fault`]).
        FaultAction::Named(NamedFault::DropBefore | NamedFault::DropAfter) => Ok(None),
        FaultAction::Http {
            status,
            reason,
            message,
        } => Err(GcpError::new(
            status,
            lro::status_for_http(status),
            reason,
            message,
        )),
    }
}

fn render_operation(world: &World, name: &str, ints: bool) -> Response {
    aip151::render::<Api>(world, name, ints)
}

async fn create_repository(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location)): Path<(String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let mut repository = http::parse_json(&body)?;
    enums::normalize(&mut repository, REPOSITORY_ENUMS, "repository")?;
    let id = query.get("repositoryId").unwrap_or("").to_string();
    if id.is_empty() {
        return Err(invalid("Repository id must be specified."));
    }
    if !valid_repository_id(&id) {
        return Err(invalid(format!(
            "Invalid repository id \"{id}\": repository ids must be 1 to 63 characters long, start with a lowercase letter, contain only lowercase letters, numbers and hyphens, and end with a letter or number."
        )));
    }
    check_location(&location)?;
    let format = repository
        .get("format")
        .and_then(Value::as_str)
        .filter(|f| *f != "FORMAT_UNSPECIFIED")
        .ok_or_else(|| invalid("Repository format must be specified."))?
        .to_string();
    let ints = query.enum_ints();
    shared.with_world(|world, cx| {
        let parent = format!("projects/{project}/locations/{location}");
        let name = format!("{parent}/repositories/{id}");
        if world.artifactregistry.repositories.contains_key(&name)
            || pending_create(&world.artifactregistry, &name)
        {
            return Err(GcpError::already_exists("the repository already exists"));
        }
        let error = match cx.scripted_fault("artifactregistry.repository", "create") {
            Some(action) => fault_error(action)?,
            None => None,
        };
        repository["name"] = json!(name);
        if repository
            .get("mode")
            .is_none_or(|m| m.is_null() || m == "MODE_UNSPECIFIED")
        {
            repository["mode"] = json!("STANDARD_REPOSITORY");
        }
        repository["createTime"] = json!(world.rfc3339(cx.now));
        repository["updateTime"] = json!(world.rfc3339(cx.now));
        if let Some(uri) = registry_uri(&location, &project, &id, &format) {
            repository["registryUri"] = json!(uri);
        }
        if format == "DOCKER" && repository.get("vulnerabilityScanningConfig").is_none() {
            repository["vulnerabilityScanningConfig"] = json!({
                "enablementConfig": "INHERITED",
                "enablementState": "SCANNING_DISABLED",
                "enablementStateReason": "API containerscanning.googleapis.com is not enabled.",
            });
        }
        let duration = world.duration_ms(cx, "artifactregistry.repository.create");
        let op = lro::new_operation(world, cx, &parent, &name, "create", duration);
        let op_name = world.artifactregistry.operations.insert(op);
        world
            .artifactregistry
            .pending
            .insert(op_name.clone(), Pending::Create { repository, error });
        Ok(render_operation(world, &op_name, ints))
    })
}

fn pending_create(state: &State, name: &str) -> bool {
    state.pending.iter().any(|(op, p)| {
        matches!(p, Pending::Create { error: None, .. })
            && state
                .operations
                .by_name
                .get(op)
                .is_some_and(|o| o.target == name)
    })
}

async fn get_repository(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location, repository)): Path<(String, String, String)>,
    query: Query,
) -> GcpResult<Response> {
    if let Some((repository, verb)) = repository.split_once(':') {
        let name = format!("projects/{project}/locations/{location}/repositories/{repository}");
        return match verb {
            "getIamPolicy" => get_iam_policy(&shared, &name, &query),
            _ => Err(GcpError::unrouted()),
        };
    }
    let name = format!("projects/{project}/locations/{location}/repositories/{repository}");
    shared.read_world(|world, _| {
        let value = world
            .artifactregistry
            .repositories
            .get(&name)
            .ok_or_else(not_found)?;
        Ok(http::proto_json(value.clone(), REPOSITORY_ENUMS, &query))
    })
}

async fn list_repositories(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    check_location(&location)?;
    let prefix = format!("projects/{project}/locations/{location}/repositories/");
    shared.read_world(|world, _| {
        let items: Vec<(String, Value)> = world
            .artifactregistry
            .repositories
            .iter()
            .filter(|(name, _)| name.starts_with(&prefix))
            .map(|(name, v)| (name.clone(), v.clone()))
            .collect();
        let page = crate::paging::page(&PAGING, &query, crate::paging::cap(&shared), items)?;
        let mut out = json!({});
        if !page.items.is_empty() {
            out["repositories"] = Value::Array(page.items);
        }
        if let Some(next) = page.next {
            out["nextPageToken"] = json!(next);
        }
        Ok(http::proto_json(out, LIST_ENUMS, &query))
    })
}

fn get_iam_policy(shared: &Shared, name: &str, query: &Query) -> GcpResult<Response> {
    let requested = iam_policy::requested_version(
        iam_policy::Api::ArtifactRegistry,
        query.get("options.requestedPolicyVersion"),
    )?;
    shared.read_world(|world, _| {
        if !world.artifactregistry.repositories.contains_key(name) {
            return Err(not_found());
        }
        let policy = world
            .artifactregistry
            .policies
            .get(name)
            .cloned()
            .unwrap_or_default();
        Ok(http::json(policy.to_json(requested)))
    })
}

/// `POST .../repositories/{r}:setIamPolicy` (axum sees `{repository}` as `r:setIamPolicy`).
async fn repository_method(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location, repository)): Path<(String, String, String)>,
    body: Bytes,
) -> GcpResult<Response> {
    let Some((repository, "setIamPolicy")) = repository.split_once(':') else {
        return Err(GcpError::unrouted());
    };
    let body = http::parse_json(&body)?;
    iam_policy::only_fields(&body, &["policy", "updateMask"], "")?;
    let Some(sent) = body.get("policy").filter(|p| !p.is_null()) else {
        return Err(invalid("The request must carry the policy to set."));
    };
    let incoming = iam_policy::parse_incoming(sent, "policy", true)?;
    let mask = iam_policy::parse_mask(body.get("updateMask").and_then(Value::as_str))?;
    let version = incoming.version;
    let name = format!("projects/{project}/locations/{location}/repositories/{repository}");
    shared.with_world(|world, _| {
        if !world.artifactregistry.repositories.contains_key(&name) {
            return Err(not_found());
        }
        let current = world
            .artifactregistry
            .policies
            .get(&name)
            .cloned()
            .unwrap_or_default();
        let mut new = iam_policy::apply_set(
            world,
            iam_policy::Target::Repository,
            &current,
            incoming,
            &mask,
        )?;
        new.etag = iam_policy::next_etag(world);
        let answer = new.to_json(version);
        world.artifactregistry.policies.insert(name, new);
        Ok(http::json(answer))
    })
}

/// Fields `UpdateRepository` may change.
const UPDATABLE: &[&str] = &[
    "description",
    "labels",
    "dockerConfig",
    "mavenConfig",
    "cleanupPolicies",
    "cleanupPolicyDryRun",
    "virtualRepositoryConfig",
    "remoteRepositoryConfig",
    "vulnerabilityScanningConfig",
    "platformLogsConfig",
];

async fn patch_repository(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location, repository)): Path<(String, String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let mut patch = http::parse_json(&body)?;
    enums::normalize(&mut patch, REPOSITORY_ENUMS, "repository")?;
    let mut paths = lro::mask_paths(query.get("updateMask").unwrap_or(""));
    if paths.is_empty() {
        // Without a mask, every updatable field present in the body is replaced.
        paths = UPDATABLE
            .iter()
            .filter(|f| patch.get(**f).is_some())
            .map(|f| f.to_string())
            .collect();
    }
    if let Some(bad) = paths.iter().find(|p| {
        !UPDATABLE
            .iter()
            .any(|u| *p == u || p.starts_with(&format!("{u}.")))
    }) {
        return Err(invalid(format!(
            "Invalid update_mask path \"{bad}\": the field cannot be updated."
        )));
    }
    let name = format!("projects/{project}/locations/{location}/repositories/{repository}");
    shared.with_world(|world, cx| {
        let current = world
            .artifactregistry
            .repositories
            .get(&name)
            .cloned()
            .ok_or_else(not_found)?;
        if let Some(action) = cx.scripted_fault("artifactregistry.repository", "update")
            && let Some((code, message)) = fault_error(action)?
        {
            let status = if code == lro::rpc_code("INTERNAL") {
                "INTERNAL"
            } else {
                "UNKNOWN"
            };
            return Err(GcpError::new(500, status, "internalError", message));
        }
        let mut updated = current;
        lro::apply_mask(&mut updated, &patch, &paths);
        updated["updateTime"] = json!(world.rfc3339(cx.now));
        world
            .artifactregistry
            .repositories
            .insert(name.clone(), updated.clone());
        Ok(http::proto_json(updated, REPOSITORY_ENUMS, &query))
    })
}

async fn delete_repository(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location, repository)): Path<(String, String, String)>,
    query: Query,
) -> GcpResult<Response> {
    let name = format!("projects/{project}/locations/{location}/repositories/{repository}");
    let ints = query.enum_ints();
    shared.with_world(|world, cx| {
        if !world.artifactregistry.repositories.contains_key(&name) {
            return Err(not_found());
        }
        let parent = format!("projects/{project}/locations/{location}");
        let error = match cx.scripted_fault("artifactregistry.repository", "delete") {
            Some(action) => fault_error(action)?,
            None => None,
        };
        let duration = world.duration_ms(cx, "artifactregistry.repository.delete");
        let mut op = lro::new_operation(world, cx, &parent, &name, "delete", duration);
        if let Some((code, message)) = error {
            op.fail(cx.now, code, message);
            let op_name = world.artifactregistry.operations.insert(op);
            return Ok(render_operation(world, &op_name, ints));
        }
        let op_name = world.artifactregistry.operations.insert(op);
        world
            .artifactregistry
            .pending
            .insert(op_name.clone(), Pending::Delete);
        Ok(render_operation(world, &op_name, ints))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_ids_and_locations() {
        assert!(valid_repository_id("a3-images"));
        assert!(!valid_repository_id("A3"));
        assert!(!valid_repository_id("images-"));
        assert!(!valid_repository_id("9images"));
        assert!(check_location("us-central1").is_ok());
        assert!(check_location("europe").is_ok());
        assert!(check_location("us-central1-a").is_err());
        assert_eq!(
            registry_uri("us-central1", "p", "r", "DOCKER").as_deref(),
            Some("us-central1-docker.pkg.dev/p/r")
        );
    }
}
