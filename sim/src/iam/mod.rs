//! Identity and Access Management v1 (`/iam/v1/...`): service accounts.
//!
//! Methods, paths and shapes follow the v1 REST reference
//! (<https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts>) and its discovery
//! document (googleapis/google-api-go-client `iam/v1/iam-api.json`):
//!
//! | method | path |
//! |---|---|
//! | `projects.serviceAccounts.create` | `POST /iam/v1/projects/{p}/serviceAccounts` `{"accountId", "serviceAccount": {"displayName", "description"}}` |
//! | `projects.serviceAccounts.get` | `GET /iam/v1/projects/{p}/serviceAccounts/{email or uniqueId}` |
//! | `projects.serviceAccounts.list` | `GET /iam/v1/projects/{p}/serviceAccounts?pageSize=N&pageToken=T` |
//! | `projects.serviceAccounts.delete` | `DELETE /iam/v1/projects/{p}/serviceAccounts/{email or uniqueId}` |
//!
//! `{p}` is a project id, a project number, or `-` ("infer the project from the account"). Keys,
//! disable/enable, patch, undelete and the accounts' own IAM policies are not served.
//!
//! **ServiceAccount**: `name` (`projects/PROJECT_ID/serviceAccounts/EMAIL`, with the project id
//! even when the request said `-`), `projectId`, `uniqueId` (21 digits), `email`
//! (`ACCOUNT_ID@PROJECT_ID.iam.gserviceaccount.com`), `displayName` and `description` when set,
//! `etag` and `oauth2ClientId` (the unique id) — the fields of a recorded create and get in
//! GoogleCloudPlatform/k8s-config-connector `mockgcp/mockiam/testdata/serviceaccount/crud/_http.log`.
//! The etag is deprecated ("Do not use"); every account carries `MDEwMjE5MjA=`, the value real
//! accounts show (remembered, not confirmed from a recorded answer). Delete answers `{}`.
//!
//! **The Compute Engine default service account**, `NUMBER-compute@developer.gserviceaccount.com`
//! (display name `Compute Engine default service account`), exists for every project: get finds
//! it, list shows it, a policy may name it, and delete removes it (Google creates it when the
//! Compute Engine API is enabled; the simulator does not wait for that).
//!
//! **Errors** (sources; the rest guessed):
//! - account id 6–30 characters, `[a-z]([-a-z0-9]*[a-z0-9])` (`CreateServiceAccountRequest`): a
//!   wrong length is 400 `INVALID_ARGUMENT` `The account ID "X" does not have a length between 6
//!   and 30.` with a `DebugInfo` detail of the same text (gcloud output in google/litmus#107);
//!   other characters are 400 `X does not match [a-z][a-z\d\-]*[a-z\d].` (the body in
//!   GoogleCloudPlatform/cloud-code-intellij#2062). The length is checked first (guess). A missing
// GUESS(iam-account-id-length-first): an account id's length is checked before its characters
//!   id, and `displayName` over 100 or `description` over 256 bytes (the limits of the `ServiceAccount`
//!   schema), have guessed texts;
// GUESS(iam-account-field-texts): the texts refusing a missing account id, a `displayName` over 100 and a `description` over 256 bytes
//! - an id already used in the project: 409 `ALREADY_EXISTS` / `alreadyExists` `Service account
//!   ID already exists within project projects/P.` with a `ResourceInfo` detail naming
//!   `projects/P/serviceAccounts/EMAIL` (the body in java-docs-samples#3605 and
//!   GoogleCloudPlatform/marketing-analytics-jumpstart#200);
//! - get or delete of an email that has no account: 404 `NOT_FOUND` `Unknown service account`
//!   (what `gcloud iam service-accounts describe` prints, in many public scripts); of a unique id:
//!   404 `Service account projects/-/serviceAccounts/ID does not exist.`, the requested name echoed
//!   (GoogleCloudPlatform/python-docs-samples#10243). With `-` and an email outside Google's
//!   service-account domains the project cannot be inferred, and the discovery document says the
//!   answer is 403 instead of 404: `Permission 'iam.serviceAccounts.get' denied on resource (or it
//!   may not exist).` with an `ErrorInfo` `IAM_PERMISSION_DENIED` (the shape of the
//!   `getAccessToken` refusal in google-github-actions/auth#340; guessed for get and delete);
// GUESS(iam-account-foreign-email): get and delete of `-` with an email outside Google's service-account domains answer 403 as `getAccessToken` does
//! - unknown JSON names in a create: ESF's `Invalid JSON payload received. Unknown name "x":
//!   Cannot find field.`
//!
//! Every request goes through Service Usage: `iam.googleapis.com` must be enabled for the
//! project of the path (for `-`, the project of the account's email).
//!
//! Accounts are part of the world and persisted with it; worlds saved before they existed load
//! without any.
//!
//! The policies of projects, buckets and repositories share [`policy`]; [`eval`] answers whether a
//! principal holds a role on a resource ([`grants`], [`has_role`], [`has_any_role`]).

pub mod eval;
pub mod policy;

use crate::error::{GcpError, GcpResult};
use crate::http::{self, Query};
use crate::shared::Shared;
pub use crate::state::iam::{ServiceAccount, State};
use crate::world::World;
pub use crate::world::compute_default_email;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State as AxumState};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};
use std::sync::Arc;

pub use eval::{
    Grant, KubernetesServiceAccount, Principal, Resource, bucket_policy, grants, has_any_role,
    has_role, uniform,
};
pub use policy::{Binding, Policy};

/// The (deprecated) etag every service account shows.
pub const ACCOUNT_ETAG: &str = "MDEwMjE5MjA=";
/// The display name of the Compute Engine default service account.
pub const COMPUTE_DEFAULT_NAME: &str = "Compute Engine default service account";
/// Default and largest page of `serviceAccounts.list` (the discovery document: "The default is
/// 20, and the maximum is 100").
pub const DEFAULT_PAGE: usize = 20;
pub const MAX_PAGE: usize = 100;

/// How `serviceAccounts.list` pages ([`crate::paging`]): [`DEFAULT_PAGE`], a larger size than
/// [`MAX_PAGE`] coerced to it (AIP-158).
const PAGING: crate::paging::Rules = crate::paging::Rules {
    size_param: "pageSize",
    default: DEFAULT_PAGE,
    max: MAX_PAGE,
    too_large: None,
    bad_size: |raw| {
        bad_request(format!(
            "Invalid value at 'page_size' (TYPE_INT32), \"{raw}\""
        ))
    },
    bad_token: |token| bad_request(format!("Invalid page token \"{token}\".")),
};

impl ServiceAccount {
    /// The resource as the API answers it.
    pub fn to_json(&self) -> Value {
        let mut out = json!({
            "name": format!("projects/{}/serviceAccounts/{}", self.project, self.email),
            "projectId": self.project,
            "uniqueId": self.unique_id,
            "email": self.email,
        });
        if !self.display_name.is_empty() {
            out["displayName"] = json!(self.display_name);
        }
        if !self.description.is_empty() {
            out["description"] = json!(self.description);
        }
        out["etag"] = json!(ACCOUNT_ETAG);
        out["oauth2ClientId"] = json!(self.unique_id);
        out
    }
}

/// The owner of every project's default policy.
pub const DEFAULT_OWNER: &str = "user:sim-owner@example.com";

/// The key of the project a path segment names: a project id as it is, a number as the id of the
/// project it belongs to when one is known (configured, or seen by Service Usage, IAM, Cloud
/// Storage or Artifact Registry), else the number itself.
pub fn project_key(world: &World, segment: &str) -> String {
    let key = world.resolve_project(segment);
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_digit()) {
        return key;
    }
    project_id_for_number(world, &key).unwrap_or(key)
}

/// The id of a known project whose number is `number`.
pub fn project_id_for_number(world: &World, number: &str) -> Option<String> {
    if let Some(id) = world.configured_project(number) {
        return Some(id.to_string());
    }
    let repo_projects = world
        .artifactregistry
        .repositories
        .keys()
        .filter_map(|name| name.strip_prefix("projects/")?.split('/').next());
    let candidates = world
        .serviceusage
        .projects
        .keys()
        .chain(world.serviceusage.last_used.keys())
        .map(String::as_str)
        .chain(world.iam.accounts.values().map(|a| a.project.as_str()))
        .chain(world.iam.project_policies.keys().map(String::as_str))
        .chain(world.storage.buckets.values().map(|b| b.project.as_str()))
        .chain(repo_projects);
    candidates
        .filter(|c| !c.is_empty() && !c.bytes().all(|b| b.is_ascii_digit()))
        .find(|c| world.project_number(c) == number)
        .map(str::to_string)
}

/// A project's policy before anyone writes it: `roles/owner` for [`DEFAULT_OWNER`] and
/// `roles/editor` for the Compute Engine default service account (Google grants it Editor when it
/// creates it, unless an organization policy prevents that:
/// <https://cloud.google.com/compute/docs/access/service-accounts#default_service_account>).
pub fn default_project_policy(world: &World, key: &str) -> Policy {
    let mut bindings = vec![Binding::new("roles/owner", &[DEFAULT_OWNER])];
    let compute = compute_default_email(world, key);
    if default_account(world, &compute).is_some() {
        bindings.push(Binding::new(
            "roles/editor",
            &[&format!("serviceAccount:{compute}")],
        ));
    }
    Policy::with_bindings(
        bindings,
        policy::stable_etag(&format!("projects/{}", world.project_number(key))),
    )
}

/// The policy of a project (its key) now.
pub fn project_policy(world: &World, key: &str) -> Policy {
    world
        .iam
        .project_policies
        .get(key)
        .cloned()
        .unwrap_or_else(|| default_project_policy(world, key))
}

/// A 21-digit unique id, starting with 1, from a seed.
fn unique_id_from(seed: u64) -> String {
    let mut value = seed;
    let mut digits = String::from("1");
    for _ in 0..20 {
        value = value
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        digits.push(char::from(b'0' + ((value >> 33) % 10) as u8));
    }
    digits
}

fn fnv(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The user-managed account with this email, if it exists.
pub fn find_account<'a>(world: &'a World, email: &str) -> Option<&'a ServiceAccount> {
    world.iam.accounts.get(email)
}

/// The Compute Engine default service account an email names, unless it was deleted. Its project
/// is the project whose number the email carries (the number itself when no project id is known
/// for it).
pub fn default_account(world: &World, email: &str) -> Option<ServiceAccount> {
    let number = email
        .strip_suffix("-compute@developer.gserviceaccount.com")
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))?;
    if world.iam.deleted_defaults.contains(email) {
        return None;
    }
    let project = project_key(world, number);
    Some(ServiceAccount {
        project,
        email: email.to_string(),
        unique_id: unique_id_from(fnv(email)),
        display_name: COMPUTE_DEFAULT_NAME.to_string(),
        description: String::new(),
    })
}

/// The project an account email belongs to, when it can be told from the email alone: the
/// project of `ID@PROJECT.iam.gserviceaccount.com` or of a Compute Engine default account.
pub fn project_of_email(email: &str) -> Option<String> {
    let (local, domain) = email.split_once('@')?;
    if let Some(project) = domain.strip_suffix(".iam.gserviceaccount.com")
        && !project.is_empty()
        && !project.starts_with("gcp-sa-")
    {
        return Some(project.to_string());
    }
    if domain == "developer.gserviceaccount.com" {
        return local
            .strip_suffix("-compute")
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .map(str::to_string);
    }
    None
}

/// Every account of a project (its key): the user-managed ones and the Compute Engine default,
/// sorted by email.
pub fn accounts_of(world: &World, project: &str) -> Vec<ServiceAccount> {
    let mut out: Vec<ServiceAccount> = world
        .iam
        .accounts
        .values()
        .filter(|a| a.project == project)
        .cloned()
        .collect();
    if let Some(default) = default_account(world, &compute_default_email(world, project)) {
        out.push(default);
    }
    out.sort_by(|a, b| a.email.cmp(&b.email));
    out
}

/// Routes of this API (full paths, including the simulator's prefix).
pub fn router() -> Router<Arc<Shared>> {
    let base = "/iam/v1/projects/{project}/serviceAccounts";
    Router::new().route(base, get(list).post(create)).route(
        &format!("{base}/{{account}}"),
        get(get_account).delete(delete_account).post(account_method),
    )
}

/// This API's part of the admin inventory.
pub fn inventory(world: &World) -> Value {
    json!({
        "serviceAccounts": world.iam.accounts.values().map(ServiceAccount::to_json).collect::<Vec<_>>(),
        "deletedDefaultServiceAccounts": world.iam.deleted_defaults,
        "projectPolicies": world
            .iam
            .project_policies
            .iter()
            .map(|(project, policy)| (project.clone(), policy.to_json(3)))
            .collect::<serde_json::Map<_, _>>(),
    })
}

fn bad_request(message: impl Into<String>) -> GcpError {
    GcpError::invalid_reason("badRequest", message)
}

fn debug_info(error: GcpError) -> GcpError {
    let detail = error.message.clone();
    error.with_detail(json!({
        "@type": "type.googleapis.com/google.rpc.DebugInfo",
        "detail": detail,
    }))
}

/// Checks an account id: 6 to 30 characters, then `[a-z]([-a-z0-9]*[a-z0-9])`.
pub fn check_account_id(id: &str) -> GcpResult<()> {
    if id.is_empty() {
        return Err(bad_request("The account ID must be specified."));
    }
    let len = id.chars().count();
    if !(6..=30).contains(&len) {
        return Err(debug_info(bad_request(format!(
            "The account ID \"{id}\" does not have a length between 6 and 30."
        ))));
    }
    let bytes = id.as_bytes();
    let ok = bytes[0].is_ascii_lowercase()
        && bytes[bytes.len() - 1] != b'-'
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-');
    if !ok {
        return Err(debug_info(bad_request(format!(
            "{id} does not match [a-z][a-z\\d\\-]*[a-z\\d]."
        ))));
    }
    Ok(())
}

/// The limits of `displayName` (100 bytes) and `description` (256 bytes).
pub fn check_account_text(display_name: &str, description: &str) -> GcpResult<()> {
    if display_name.len() > 100 {
        return Err(bad_request(
            "The display name of a service account cannot exceed 100 bytes.",
        ));
    }
    if description.len() > 256 {
        return Err(bad_request(
            "The description of a service account cannot exceed 256 bytes.",
        ));
    }
    Ok(())
}

fn string_field(value: &Value, key: &str, at: &str) -> GcpResult<String> {
    match value.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v) => Err(bad_request(format!(
            "Invalid value at '{at}' (TYPE_STRING), {v}"
        ))),
    }
}

fn unknown_names(value: &Value, known: &[&str], at: &str) -> GcpResult<()> {
    if let Some(map) = value.as_object()
        && let Some(name) = map.keys().find(|k| !known.contains(&k.as_str()))
    {
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" at '{at}'")
        };
        return Err(bad_request(format!(
            "Invalid JSON payload received. Unknown name \"{name}\"{at}: Cannot find field."
        )));
    }
    Ok(())
}

async fn create(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(project): Path<String>,
    body: Bytes,
) -> GcpResult<Response> {
    let body = http::parse_json(&body)?;
    unknown_names(&body, &["accountId", "serviceAccount"], "")?;
    let account_id = string_field(&body, "accountId", "account_id")?;
    let spec = body.get("serviceAccount").cloned().unwrap_or(Value::Null);
    if !spec.is_null() && !spec.is_object() {
        return Err(bad_request(format!(
            "Invalid value at 'service_account' (type.googleapis.com/google.iam.admin.v1.ServiceAccount), {spec}"
        )));
    }
    unknown_names(
        &spec,
        &[
            "name",
            "projectId",
            "uniqueId",
            "email",
            "displayName",
            "etag",
            "description",
            "oauth2ClientId",
            "disabled",
        ],
        "service_account",
    )?;
    let display_name = string_field(&spec, "displayName", "service_account.display_name")?;
    let description = string_field(&spec, "description", "service_account.description")?;
    if project == "-" {
        return Err(bad_request(
            "The project must be named by its id or number to create a service account in it.",
        ));
    }
    check_account_id(&account_id)?;
    check_account_text(&display_name, &description)?;
    shared.with_world(|world, _| {
        let project = project_key(world, &project);
        let account = insert_account(world, &project, &account_id, display_name, description)?;
        Ok(http::json(account.to_json()))
    })
}

/// Creates account `account_id` in project `project` (its key), checked as `create` checks it
/// after the account id: 409 if the project has it already.
pub fn insert_account(
    world: &mut World,
    project: &str,
    account_id: &str,
    display_name: String,
    description: String,
) -> GcpResult<ServiceAccount> {
    let email = format!("{account_id}@{project}.iam.gserviceaccount.com");
    if world.iam.accounts.contains_key(&email) {
        return Err(GcpError::already_exists(format!(
            "Service account {account_id} already exists within project projects/{project}."
        ))
        .with_detail(json!({
            "@type": "type.googleapis.com/google.rpc.ResourceInfo",
            "resourceName": format!("projects/{project}/serviceAccounts/{email}"),
        })));
    }
    let seq = world.next_seq();
    let unique_id = unique_id_from(fnv(&email) ^ seq ^ world.seed.rotate_left(17));
    let account = ServiceAccount {
        project: project.to_string(),
        email: email.clone(),
        unique_id,
        display_name,
        description,
    };
    world.iam.accounts.insert(email, account.clone());
    Ok(account)
}

/// Where a get or delete looks: the account segment of the path and its project segment.
enum Lookup {
    Email(String),
    UniqueId(String),
}

fn lookup(account: &str, name: &str) -> GcpResult<Lookup> {
    if !account.is_empty() && account.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(Lookup::UniqueId(account.to_string()));
    }
    if account.contains('@') && !account.contains(':') {
        return Ok(Lookup::Email(account.to_string()));
    }
    Err(bad_request(format!(
        "Invalid service account name {name}: the account must be an email address or a unique id."
    )))
}

/// Finds the account a get or delete names, or the error Google answers.
fn resolve_account(
    world: &World,
    project: &str,
    account: &str,
    permission: &str,
) -> GcpResult<ServiceAccount> {
    let name = format!("projects/{project}/serviceAccounts/{account}");
    let wanted = if project == "-" {
        None
    } else {
        Some(project_key(world, project))
    };
    let in_project = |a: &ServiceAccount| match &wanted {
        None => true,
        Some(p) => a.project == *p || world.project_number(&a.project) == world.project_number(p),
    };
    match lookup(account, &name)? {
        Lookup::Email(email) => {
            let found = find_account(world, &email)
                .cloned()
                .or_else(|| default_account(world, &email))
                .map(|mut a| {
                    // A default account found through its project keeps that project's id.
                    if let Some(p) = &wanted
                        && world.project_number(p) == world.project_number(&a.project)
                    {
                        a.project = p.clone();
                    }
                    a
                })
                .filter(in_project);
            match found {
                Some(a) => Ok(a),
                None if project == "-" && project_of_email(&email).is_none() => Err(GcpError::new(
                    403,
                    "PERMISSION_DENIED",
                    "forbidden",
                    format!("Permission '{permission}' denied on resource (or it may not exist)."),
                )
                .with_detail(json!({
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "IAM_PERMISSION_DENIED",
                    "domain": "iam.googleapis.com",
                    "metadata": { "permission": permission },
                }))),
                None => Err(GcpError::not_found("Unknown service account")),
            }
        }
        Lookup::UniqueId(id) => {
            let mut candidates: Vec<ServiceAccount> =
                world.iam.accounts.values().cloned().collect();
            if let Some(p) = &wanted
                && let Some(default) = default_account(world, &compute_default_email(world, p))
            {
                candidates.push(ServiceAccount {
                    project: p.clone(),
                    ..default
                });
            }
            candidates
                .into_iter()
                .find(|a| a.unique_id == id && in_project(a))
                .ok_or_else(|| {
                    GcpError::not_found(format!("Service account {name} does not exist."))
                })
        }
    }
}

async fn get_account(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, account)): Path<(String, String)>,
) -> GcpResult<Response> {
    if account.contains(':') && !account.contains('@') {
        return Err(GcpError::unrouted());
    }
    shared.read_world(|world, _| {
        resolve_account(world, &project, &account, "iam.serviceAccounts.get")
            .map(|a| http::json(a.to_json()))
    })
}

async fn delete_account(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, account)): Path<(String, String)>,
) -> GcpResult<Response> {
    shared.with_world(|world, _| {
        let found = resolve_account(world, &project, &account, "iam.serviceAccounts.delete")?;
        // The project's policy names the default account until then: keep what it says.
        let key = found.project.clone();
        if !world.iam.project_policies.contains_key(&key) {
            let current = default_project_policy(world, &key);
            world.iam.project_policies.insert(key, current);
        }
        if world.iam.accounts.remove(&found.email).is_none() {
            world.iam.deleted_defaults.insert(found.email.clone());
        }
        policy::mark_deleted(world, &found.email, &found.unique_id);
        Ok(http::json(json!({})))
    })
}

/// `POST .../serviceAccounts/{account}:method`: none of the account methods (keys, disable,
/// enable, signing, IAM policies) is served.
async fn account_method() -> GcpError {
    GcpError::unrouted()
}

async fn list(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(project): Path<String>,
    query: Query,
) -> GcpResult<Response> {
    if project == "-" {
        return Err(bad_request(
            "The project must be named by its id or number to list its service accounts.",
        ));
    }
    shared.read_world(|world, _| {
        let project = project_key(world, &project);
        let all: Vec<(String, Value)> = accounts_of(world, &project)
            .iter()
            .map(|account| (account.email.clone(), account.to_json()))
            .collect();
        let mut out = json!({});
        let page = crate::paging::page(&PAGING, &query, crate::paging::cap(&shared), all)?;
        if !page.items.is_empty() {
            out["accounts"] = Value::Array(page.items);
        }
        if let Some(next) = page.next {
            out["nextPageToken"] = json!(next);
        }
        Ok(http::json(out))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_ids_follow_the_rule_with_googles_texts() {
        assert!(check_account_id("a3-runner").is_ok());
        assert!(check_account_id("abcdef").is_ok());
        let e = check_account_id("abc").unwrap_err();
        assert_eq!(
            e.message,
            "The account ID \"abc\" does not have a length between 6 and 30."
        );
        assert_eq!(
            e.details[0]["@type"],
            "type.googleapis.com/google.rpc.DebugInfo"
        );
        assert!(check_account_id(&"a".repeat(31)).is_err());
        let e = check_account_id("Runner-1").unwrap_err();
        assert_eq!(
            e.message,
            "Runner-1 does not match [a-z][a-z\\d\\-]*[a-z\\d]."
        );
        assert!(check_account_id("runner-").is_err());
        assert!(check_account_id("1runner").is_err());
        assert!(check_account_id("run_ner").is_err());
    }

    #[test]
    fn unique_ids_have_21_digits() {
        for seed in [0, 1, u64::MAX] {
            let id = unique_id_from(seed);
            assert_eq!(id.len(), 21);
            assert!(id.starts_with('1') && id.bytes().all(|b| b.is_ascii_digit()));
        }
    }

    #[test]
    fn emails_name_their_project() {
        assert_eq!(
            project_of_email("runner@my-proj.iam.gserviceaccount.com").as_deref(),
            Some("my-proj")
        );
        assert_eq!(
            project_of_email("123-compute@developer.gserviceaccount.com").as_deref(),
            Some("123")
        );
        assert_eq!(project_of_email("someone@example.com"), None);
        assert_eq!(
            project_of_email("service-1@gcp-sa-artifactregistry.iam.gserviceaccount.com"),
            None
        );
    }

    #[test]
    fn every_project_has_a_compute_default_account() {
        let mut world = World::new(1, crate::clock::default_start());
        let email = compute_default_email(&world, "sim-proj");
        let account = default_account(&world, &email).expect("exists");
        assert_eq!(account.display_name, COMPUTE_DEFAULT_NAME);
        assert_eq!(account.unique_id.len(), 21);
        assert_eq!(accounts_of(&world, "sim-proj").len(), 1);
        world.iam.deleted_defaults.insert(email.clone());
        assert!(default_account(&world, &email).is_none());
        assert!(accounts_of(&world, "sim-proj").is_empty());
    }

    #[test]
    fn worlds_saved_before_iam_load_without_accounts() {
        let world = World::new(1, crate::clock::default_start());
        let mut saved = serde_json::to_value(&world).unwrap();
        saved.as_object_mut().unwrap().remove("iam");
        let loaded: World = serde_json::from_value(saved).unwrap();
        assert!(loaded.iam.accounts.is_empty());
    }
}
