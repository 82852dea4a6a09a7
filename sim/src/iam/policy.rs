//! IAM allow policies, shared by every store that has one: projects (Resource Manager v1 and v3,
//! [`crate::resourcemanager`]), Cloud Storage buckets ([`crate::storage::iam`]) and Artifact
//! Registry repositories ([`crate::artifactregistry`]). One module decides what a
//! `setIamPolicy` may write and how a `getIamPolicy` answers; the stores only say where a policy
//! lives and which API's errors they answer with ([`Api`]).
//!
//! Shapes: `Policy`, `Binding` and `Expr` of the discovery documents (googleapis/google-api-go-client
//! `cloudresourcemanager/v1`, `cloudresourcemanager/v3`, `iam/v1` `*-api.json`;
//! `artifactregistry.v1.json` and `storage.v1.json`), and the reference
//! <https://cloud.google.com/iam/docs/reference/rest/v1/Policy>.
//!
//! **Versions** (<https://cloud.google.com/iam/docs/policies#versions>, the `version` field's
//! documentation): valid versions are 0, 1 and 3. A policy is version 3 when a binding has a
//! condition and version 1 otherwise — "if you specify version 3, but the policy has no
//! conditional role bindings, the response uses version 1" (`GetPolicyOptions`). A policy that has
//! never been written and has no bindings (a new repository's) answers only its etag, `ACAB` (the
//! answer of an empty policy; remembered from real answers, not quoted from a recorded one). A read
//! that asks for less than version 3 of a policy with conditions gets version 1 with each
//! conditional role renamed `ROLE_withcond_HASH` and the condition left out, as
//! <https://cloud.google.com/iam/docs/troubleshooting-withcond> shows
//! (`roles/iam.serviceAccountAdmin_withcond_2b17cc25d2cd9e2c54d8`); how Google computes the 20
//! hex digits is not published — the simulator hashes the condition (a guess). Reads used to be
// GUESS(iam-withcond-hash): the 20 hex digits of a `ROLE_withcond_HASH` role are a hash of the condition
//! refused instead (`Requested policy version (1) cannot be less than the existing policy version
//! (3).`, terraform-provider-google#5218, 2019); googleapis/python-storage#53 (2020) removed the
//! test of that refusal because the backend no longer raises it.
//!
//! **Writes** (`setIamPolicy`):
//! - a stale `etag` is refused: Resource Manager and Artifact Registry answer 409 `ABORTED` /
//!   `aborted` `There were concurrent policy changes. Please retry the whole read-modify-write with
//!   exponential backoff.` (the body quoted in DataBiosphere/leonardo#737; for Artifact Registry by
//!   analogy — its IAM is the same service); Cloud Storage answers 412 `conditionNotMet`
//!   `Precondition Failed` (hashicorp/terraform-provider-google#7853: `Error 412: Precondition
//!   Failed, conditionNotMet`). Etags are compared as bytes (gcloud re-encodes `bytes` fields). No
//!   etag overwrites whatever is there, as the `etag` field's documentation says.
//! - a binding with a condition needs version 3. Cloud Storage's text contains `at least 3` and a
//!   bucket without uniform bucket-level access refuses conditions first with a 412 containing
//!   `enable uniform bucket-level access` (googleapis/python-storage `tests/system/test_bucket.py`,
//!   `test_bucket_get_set_iam_policy`); the rest of both texts, and the other APIs' text, are
//!   guesses. With an etag, a version below 3 over a stored policy with conditions is refused with
// GUESS(iam-condition-version-texts): the texts refusing a conditional binding below version 3, but Cloud Storage's `at least 3` and `enable uniform bucket-level access`
//!   `Specified policy version (1) cannot be less than the existing policy version (3). For more
//!   information, please refer to https://cloud.google.com/iam/docs/policies#versions.`
//!   (hashicorp/vault-plugin-secrets-gcp#88).
//! - members (the `Binding.members` documentation): `allUsers`, `allAuthenticatedUsers`,
//!   `user:`, `serviceAccount:`, `group:` (an email address), `domain:` (a domain),
//!   `principal://iam.googleapis.com/...` and `principalSet://iam.googleapis.com/...` (a workload or
//!   workforce identity pool path, <https://cloud.google.com/iam/docs/principal-identifiers>), the
//!   `deleted:` forms, and on buckets `projectOwner:`/`projectEditor:`/`projectViewer:` a project.
//!   A member without a type is refused with `Policy members must be of the form "<type>:<value>".`
//!   (hashicorp/terraform-provider-google#4965); an unknown type gets the same answer (guess). A
// GUESS(iam-member-unknown-type): a member of an unknown type gets the answer of a member without a type
//!   `serviceAccount:` of a project's own accounts (`ID@PROJECT.iam.gserviceaccount.com`) must
//!   exist: 400 `INVALID_ARGUMENT` `Service account X does not exist.`
//!   (GoogleCloudPlatform/generative-ai#944, GoogleCloudPlatform/cdmc#50). Google-managed
//!   accounts (`NUMBER-compute@developer.gserviceaccount.com` unless deleted, service agents
//!   `service-NUMBER@*.gserviceaccount.com`, `NUMBER@cloudservices.gserviceaccount.com`,
//!   `PROJECT@appspot.gserviceaccount.com`) and the legacy Workload Identity form
//!   `PROJECT.svc.id.goog[NAMESPACE/KSA]` are taken as existing. A malformed email, domain or
//!   principal identifier is refused with a guessed text.
// GUESS(iam-member-malformed-text): the text refusing a malformed email, domain or principal identifier
//! - roles: `roles/NAME`, `projects/P/roles/NAME` or `organizations/O/roles/NAME`; anything else,
//!   and the bucket-only `roles/storage.legacy*` roles on a project or repository, are refused with
//!   `Role R is not supported for this resource.` (remembered from gcloud output; unconfirmed). A
//!   bucket takes only `roles/storage.*` and custom roles: `R is not a valid role for
//!   projects/_/buckets/B.` (the form of googleapis/google-cloud-python#4087 for objects; which
//!   roles a bucket takes is a guess). Predefined roles are not checked against a catalogue.
// GUESS(iam-bucket-roles): a bucket takes only `roles/storage.*` and custom roles
//! - projects refuse `allUsers`/`allAuthenticatedUsers` (the v1 `setIamPolicy` documentation) and
//!   a `user:` made owner who was not one (`SOLO_MUST_INVITE_OWNERS`: owners must accept an
//!   invitation): 400 `Request contains an invalid argument.` with a
//!   `google.cloudresourcemanager.v1.ProjectIamPolicyError` detail
//!   (hashicorp/terraform-provider-google#859, #4276). A write that leaves a project (the
//!   simulator's have no organization) without a `user:` owner — the owner who accepted the Terms
//!   of Service — is refused with the same text, without a detail (the rule is the v1
//!   documentation's; the answer is a guess).
// GUESS(iam-project-without-owner): a write that leaves a project without a `user:` owner gets `Request contains an invalid argument.` without a detail
//! - a binding needs a role and at least one member; a condition needs a `title` and an
//!   `expression` (texts guessed). Conditions are kept as sent and never evaluated.
// GUESS(iam-binding-texts): the texts refusing a binding without a role or members and a condition without a `title` or `expression`
//! - what is stored is normalised: bindings of the same role and condition merged, members sorted
//!   and without duplicates, bindings sorted by role — as `getIamPolicy` answers read.
//!
//! When a service account is deleted, every binding naming it becomes
//! `deleted:serviceAccount:EMAIL?uid=UNIQUE_ID` ([`mark_deleted`]), as the `Binding.members`
//! documentation describes; a new account with the same email is not granted the old roles.

use crate::error::{GcpError, GcpResult};
pub use crate::state::iam::{Binding, Policy};
use crate::world::World;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use serde_json::{Map, Value, json};

/// The etag of a policy that has never been written.
pub const EMPTY_ETAG: &str = "ACAB";

/// Where the IAM documentation sends readers about versions.
const VERSIONS_URL: &str = "https://cloud.google.com/iam/docs/policies#versions";

impl Binding {
    pub fn new(role: &str, members: &[&str]) -> Binding {
        Binding {
            role: role.to_string(),
            members: members.iter().map(|m| m.to_string()).collect(),
            condition: None,
        }
    }
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            bindings: vec![],
            etag: EMPTY_ETAG.to_string(),
            audit_configs: None,
        }
    }
}

impl Policy {
    pub fn with_bindings(bindings: Vec<Binding>, etag: String) -> Policy {
        Policy {
            bindings: normalize(bindings),
            etag,
            audit_configs: None,
        }
    }

    pub fn has_conditions(&self) -> bool {
        self.bindings.iter().any(|b| b.condition.is_some())
    }

    /// The version the policy has: 3 with conditions, 1 otherwise, 0 for a never-written empty
    /// policy.
    pub fn version(&self) -> i64 {
        if self.has_conditions() {
            3
        } else if self.bindings.is_empty() && self.etag == EMPTY_ETAG {
            0
        } else {
            1
        }
    }

    /// The policy as `getIamPolicy` answers it to a caller that asked for `requested`.
    pub fn to_json(&self, requested: i64) -> Value {
        let show = requested >= 3;
        let mut out = Map::new();
        let version = match self.version() {
            3 if !show => 1,
            v => v,
        };
        if version != 0 {
            out.insert("version".into(), json!(version));
        }
        let bindings: Vec<Value> = self
            .bindings
            .iter()
            .map(|b| {
                let mut v = json!({ "role": b.role, "members": b.members });
                if let Some(condition) = &b.condition {
                    if show {
                        v["condition"] = condition.clone();
                    } else {
                        v["role"] =
                            json!(format!("{}_withcond_{}", b.role, condition_hash(condition)));
                    }
                }
                v
            })
            .collect();
        if !bindings.is_empty() {
            out.insert("bindings".into(), Value::Array(bindings));
        }
        if let Some(audit) = &self.audit_configs {
            out.insert("auditConfigs".into(), audit.clone());
        }
        out.insert("etag".into(), json!(self.etag));
        Value::Object(out)
    }
}

/// 20 hex digits standing for a condition in a `_withcond_` role name (FNV-1a of its JSON).
fn condition_hash(condition: &Value) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut out = String::new();
    for round in 0u8..2 {
        for b in condition.to_string().bytes().chain([round]) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        out.push_str(&format!("{hash:016x}"));
    }
    out.truncate(20);
    out
}

/// A fresh etag for a policy written now: eight bytes (`BwY...`, the shape of Resource Manager's
/// etags) that change with every write.
pub fn next_etag(world: &mut World) -> String {
    let seq = world.next_seq();
    let value = (0x0706u64 << 48) | (seq & 0xffff_ffff_ffff);
    STANDARD.encode(value.to_be_bytes())
}

/// A stable etag standing for a default policy nobody wrote (derived from `key`).
pub fn stable_etag(key: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let value = (0x0705u64 << 48) | (hash & 0xffff_ffff_ffff);
    STANDARD.encode(value.to_be_bytes())
}

/// The bytes of a `bytes` field as gcloud and the client libraries send it (standard or URL-safe
/// base64, padded or not).
pub fn etag_bytes(etag: &str) -> Option<Vec<u8>> {
    [STANDARD, URL_SAFE, STANDARD_NO_PAD, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(etag.trim()).ok())
}

/// The APIs that serve policies; they differ in their error bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    ResourceManager,
    ArtifactRegistry,
    Storage,
}

impl Api {
    fn invalid(self, message: impl Into<String>) -> GcpError {
        match self {
            Api::Storage => GcpError::invalid(message),
            _ => GcpError::invalid_reason("badRequest", message),
        }
    }

    /// The answer to a write with a stale etag.
    pub fn stale(self) -> GcpError {
        match self {
            Api::Storage => GcpError::condition_not_met("Precondition Failed"),
            _ => GcpError::new(
                409,
                "ABORTED",
                "aborted",
                "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.",
            ),
        }
    }
}

/// What a policy is attached to, as far as the checks need to know.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// A project (its key).
    Project(&'a str),
    /// An Artifact Registry repository.
    Repository,
    /// A bucket: its name and whether uniform bucket-level access is on.
    Bucket { name: &'a str, uniform: bool },
}

impl Target<'_> {
    fn api(&self) -> Api {
        match self {
            Target::Project(_) => Api::ResourceManager,
            Target::Repository => Api::ArtifactRegistry,
            Target::Bucket { .. } => Api::Storage,
        }
    }
}

/// A policy as a `setIamPolicy` request carries it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Incoming {
    pub version: i64,
    pub bindings: Vec<Binding>,
    pub etag: Option<String>,
    pub audit_configs: Option<Value>,
}

fn unknown_field(name: &str, at: &str) -> GcpError {
    let at = if at.is_empty() {
        String::new()
    } else {
        format!(" at '{at}'")
    };
    GcpError::invalid_reason(
        "badRequest",
        format!("Invalid JSON payload received. Unknown name \"{name}\"{at}: Cannot find field."),
    )
}

fn bad_value(at: &str, kind: &str, value: &Value) -> GcpError {
    GcpError::invalid_reason(
        "badRequest",
        format!("Invalid value at '{at}' ({kind}), {value}"),
    )
}

/// Refuses fields of `object` not in `known` (ESF's answer to an unknown JSON name).
pub fn only_fields(object: &Value, known: &[&str], at: &str) -> GcpResult<()> {
    if let Some(map) = object.as_object()
        && let Some(name) = map.keys().find(|k| !known.contains(&k.as_str()))
    {
        return Err(unknown_field(name, at));
    }
    Ok(())
}

/// Parses the `Policy` of a request (`at` names it in errors: `policy`, or `` for Cloud Storage's
/// bare body). `strict` refuses unknown fields, as the one-platform APIs do; Cloud Storage ignores
/// them (its `kind` and `resourceId` are "ignored on input").
pub fn parse_incoming(value: &Value, at: &str, strict: bool) -> GcpResult<Incoming> {
    let join = |field: &str| {
        if at.is_empty() {
            field.to_string()
        } else {
            format!("{at}.{field}")
        }
    };
    if value.is_null() {
        return Ok(Incoming::default());
    }
    if !value.is_object() {
        return Err(bad_value(
            at,
            "type.googleapis.com/google.iam.v1.Policy",
            value,
        ));
    }
    if strict {
        only_fields(value, &["version", "bindings", "etag", "auditConfigs"], at)?;
    }
    let version = match value.get("version") {
        None | Some(Value::Null) => 0,
        Some(v) => v
            .as_i64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            .ok_or_else(|| bad_value(&join("version"), "TYPE_INT32", v))?,
    };
    let etag = match value.get("etag") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.is_empty() => None,
        Some(Value::String(s)) => {
            if etag_bytes(s).is_none() {
                return Err(GcpError::invalid_reason(
                    "badRequest",
                    format!(
                        "Invalid value at '{}' (TYPE_BYTES), Base64 decoding failed for \"{s}\"",
                        join("etag")
                    ),
                ));
            }
            Some(s.clone())
        }
        Some(v) => return Err(bad_value(&join("etag"), "TYPE_BYTES", v)),
    };
    let mut bindings = vec![];
    match value.get("bindings") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let here = join(&format!("bindings[{i}]"));
                if !item.is_object() {
                    return Err(bad_value(
                        &here,
                        "type.googleapis.com/google.iam.v1.Binding",
                        item,
                    ));
                }
                if strict {
                    only_fields(item, &["role", "members", "condition"], &here)?;
                }
                let role = match item.get("role") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => return Err(bad_value(&format!("{here}.role"), "TYPE_STRING", v)),
                };
                let members = match item.get("members") {
                    None | Some(Value::Null) => vec![],
                    Some(Value::Array(ms)) => ms
                        .iter()
                        .map(|m| {
                            m.as_str().map(str::to_string).ok_or_else(|| {
                                bad_value(&format!("{here}.members"), "TYPE_STRING", m)
                            })
                        })
                        .collect::<GcpResult<_>>()?,
                    Some(v) => {
                        return Err(bad_value(&format!("{here}.members"), "TYPE_STRING", v));
                    }
                };
                let condition = match item.get("condition") {
                    None | Some(Value::Null) => None,
                    Some(c @ Value::Object(fields)) => {
                        let cat = format!("{here}.condition");
                        if strict {
                            only_fields(
                                c,
                                &["expression", "title", "description", "location"],
                                &cat,
                            )?;
                        }
                        for (k, v) in fields {
                            if !v.is_string() && !v.is_null() {
                                return Err(bad_value(&format!("{cat}.{k}"), "TYPE_STRING", v));
                            }
                        }
                        Some(c.clone())
                    }
                    Some(v) => {
                        return Err(bad_value(
                            &format!("{here}.condition"),
                            "type.googleapis.com/google.type.Expr",
                            v,
                        ));
                    }
                };
                bindings.push(Binding {
                    role,
                    members,
                    condition,
                });
            }
        }
        Some(v) => {
            return Err(bad_value(
                &join("bindings"),
                "type.googleapis.com/google.iam.v1.Binding",
                v,
            ));
        }
    }
    let audit_configs = match value.get("auditConfigs") {
        None | Some(Value::Null) => None,
        Some(v @ Value::Array(_)) => Some(v.clone()),
        Some(v) => {
            return Err(bad_value(
                &join("auditConfigs"),
                "type.googleapis.com/google.iam.v1.AuditConfig",
                v,
            ));
        }
    };
    Ok(Incoming {
        version,
        bindings,
        etag,
        audit_configs,
    })
}

/// Checks a requested policy version (`options.requestedPolicyVersion`,
/// `optionsRequestedPolicyVersion`): 0, 1 or 3 (text guessed).
// GUESS(iam-requested-version-text): the text refusing a requested policy version other than 0, 1 or 3
pub fn requested_version(api: Api, raw: Option<&str>) -> GcpResult<i64> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(0);
    };
    match raw.parse::<i64>() {
        Ok(v @ (0 | 1 | 3)) => Ok(v),
        Ok(v) => Err(api.invalid(format!(
            "Invalid requested policy version: {v}. Valid versions are 0, 1 and 3. For more information, please refer to {VERSIONS_URL}."
        ))),
        Err(_) => Err(api.invalid(format!(
            "Invalid value at 'options.requested_policy_version' (TYPE_INT32), \"{raw}\""
        ))),
    }
}

/// The fields of `Policy` an `updateMask` may name, and the default mask
/// (`SetIamPolicyRequest.updateMask`: "bindings, etag").
pub const MASK_FIELDS: &[&str] = &["version", "bindings", "etag", "auditConfigs"];

/// Parses an `updateMask` (comma-separated, camelCase or snake_case); `None` for the default.
pub fn parse_mask(raw: Option<&str>) -> GcpResult<Vec<String>> {
    let paths: Vec<String> = raw
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            if p == "audit_configs" {
                "auditConfigs".to_string()
            } else {
                p.to_string()
            }
        })
        .collect();
    if paths.is_empty() {
        return Ok(vec!["bindings".into(), "etag".into()]);
    }
    if let Some(bad) = paths.iter().find(|p| !MASK_FIELDS.contains(&p.as_str())) {
        return Err(GcpError::invalid_reason(
            "badRequest",
            format!("Invalid update mask path \"{bad}\": it is not a field of the policy."),
        ));
    }
    Ok(paths)
}

/// Decides what a `setIamPolicy` writes over `current`: the checks of the module documentation,
/// then the normalised policy (its etag is the caller's to set).
pub fn apply_set(
    world: &World,
    target: Target,
    current: &Policy,
    incoming: Incoming,
    mask: &[String],
) -> GcpResult<Policy> {
    let api = target.api();
    let version = incoming.version;
    if ![0, 1, 3].contains(&version) {
        return Err(api.invalid(format!(
            "Invalid policy version: {version}. Valid versions are 0, 1 and 3. For more information, please refer to {VERSIONS_URL}."
        )));
    }
    if let Some(etag) = &incoming.etag
        && etag_bytes(etag) != etag_bytes(&current.etag)
    {
        return Err(api.stale());
    }
    let in_mask = |f: &str| mask.iter().any(|m| m == f);
    let bindings = if in_mask("bindings") {
        incoming.bindings
    } else {
        current.bindings.clone()
    };
    // The version rules are about the bindings a write sets; a write that keeps them (a mask
    // without `bindings`) is not held to them.
    let conditional = in_mask("bindings") && bindings.iter().any(|b| b.condition.is_some());
    if let Target::Bucket { uniform: false, .. } = target
        && conditional
    {
        return Err(GcpError::condition_not_met(
            "IAM Conditions cannot be used on this bucket: enable uniform bucket-level access on the bucket first.",
        ));
    }
    if conditional && version < 3 {
        let message = match api {
            Api::Storage => format!(
                "The policy has conditions, so its version must be at least 3 (it is {version})."
            ),
            _ => format!(
                "Conditional role bindings require policy version 3 or higher; the policy has version {version}. For more information, please refer to {VERSIONS_URL}."
            ),
        };
        return Err(api.invalid(message));
    }
    if in_mask("bindings") && incoming.etag.is_some() && current.has_conditions() && version < 3 {
        return Err(api.invalid(format!(
            "Specified policy version ({version}) cannot be less than the existing policy version (3). For more information, please refer to {VERSIONS_URL}."
        )));
    }
    check_bindings(world, target, &bindings)?;
    if let Target::Project(_) = target
        && in_mask("bindings")
    {
        check_project_rules(current, &bindings)?;
    }
    Ok(Policy {
        bindings: normalize(bindings),
        etag: current.etag.clone(),
        audit_configs: if in_mask("auditConfigs") {
            incoming.audit_configs
        } else {
            current.audit_configs.clone()
        },
    })
}

/// The checks of each binding: its role, its members (service accounts must exist), its
/// condition's `title` and `expression`.
pub fn check_bindings(world: &World, target: Target, bindings: &[Binding]) -> GcpResult<()> {
    let api = target.api();
    for binding in bindings {
        check_role(api, target, &binding.role)?;
        if binding.members.is_empty() {
            return Err(api.invalid(format!(
                "The binding for role {} has no members; every binding needs at least one principal.",
                binding.role
            )));
        }
        for member in &binding.members {
            check_member(world, target, member)?;
        }
        if let Some(condition) = &binding.condition {
            let field = |k: &str| {
                condition
                    .get(k)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .trim()
                    .to_string()
            };
            if field("expression").is_empty() {
                return Err(api.invalid(format!(
                    "The condition of the binding for role {} has no expression.",
                    binding.role
                )));
            }
            if field("title").is_empty() {
                return Err(api.invalid(format!(
                    "The condition of the binding for role {} has no title.",
                    binding.role
                )));
            }
        }
    }
    Ok(())
}

/// The project-only rules of Resource Manager's `setIamPolicy`.
fn check_project_rules(current: &Policy, bindings: &[Binding]) -> GcpResult<()> {
    let invalid =
        || GcpError::invalid_reason("badRequest", "Request contains an invalid argument.");
    if bindings
        .iter()
        .flat_map(|b| &b.members)
        .any(|m| m == "allUsers" || m == "allAuthenticatedUsers")
    {
        return Err(invalid());
    }
    let owners: Vec<&String> = current
        .bindings
        .iter()
        .filter(|b| b.role == "roles/owner" && b.condition.is_none())
        .flat_map(|b| &b.members)
        .collect();
    let uninvited: Vec<(&str, &str)> = bindings
        .iter()
        .filter(|b| b.role == "roles/owner")
        .flat_map(|b| b.members.iter().map(move |m| (b.role.as_str(), m.as_str())))
        .filter(|(_, m)| m.starts_with("user:") && !owners.iter().any(|o| o.as_str() == *m))
        .collect();
    // A project outside an organization keeps an owner who accepted the Terms of Service: a
    // user (service accounts accept nothing).
    let user_owner = |bindings: &[Binding]| {
        bindings
            .iter()
            .filter(|b| b.role == "roles/owner" && b.condition.is_none())
            .flat_map(|b| &b.members)
            .any(|m| m.starts_with("user:"))
    };
    if user_owner(&current.bindings) && !user_owner(bindings) {
        return Err(invalid());
    }
    if !uninvited.is_empty() {
        let mut error = invalid();
        for (role, member) in uninvited {
            error = error.with_detail(json!({
                "@type": "type.googleapis.com/google.cloudresourcemanager.v1.ProjectIamPolicyError",
                "type": "SOLO_MUST_INVITE_OWNERS",
                "member": member,
                "role": role,
            }));
        }
        return Err(error);
    }
    Ok(())
}

fn check_role(api: Api, target: Target, role: &str) -> GcpResult<()> {
    if role.trim().is_empty() {
        return Err(api.invalid("A role binding must name a role."));
    }
    let custom = {
        let parts: Vec<&str> = role.split('/').collect();
        parts.len() == 4
            && (parts[0] == "projects" || parts[0] == "organizations")
            && !parts[1].is_empty()
            && parts[2] == "roles"
            && !parts[3].is_empty()
    };
    let predefined = role.strip_prefix("roles/").is_some_and(|r| {
        !r.is_empty()
            && r.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_')
    });
    match target {
        Target::Bucket { name, .. } => {
            if custom || (predefined && role.starts_with("roles/storage.")) {
                Ok(())
            } else {
                Err(api.invalid(format!(
                    "{role} is not a valid role for projects/_/buckets/{name}."
                )))
            }
        }
        _ => {
            if custom || (predefined && !role.starts_with("roles/storage.legacy")) {
                Ok(())
            } else {
                Err(api.invalid(format!("Role {role} is not supported for this resource.")))
            }
        }
    }
}

/// A plausible email address: `local@domain.tld`.
pub fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && is_domain(domain)
        && !local.contains(char::is_whitespace)
}

/// A plausible domain name: dot-separated labels of letters, digits and hyphens.
pub fn is_domain(s: &str) -> bool {
    s.contains('.')
        && s.split('.').all(|label| {
            !label.is_empty()
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

fn check_member(world: &World, target: Target, member: &str) -> GcpResult<()> {
    let api = target.api();
    if member == "allUsers" || member == "allAuthenticatedUsers" {
        return Ok(());
    }
    let form = || api.invalid("Policy members must be of the form \"<type>:<value>\".");
    let Some((kind, value)) = member.split_once(':') else {
        return Err(form());
    };
    let bad = |what: &str| api.invalid(format!("Invalid principal \"{member}\": {what}."));
    match kind {
        "user" | "group" => {
            if is_email(value) {
                Ok(())
            } else {
                Err(bad("it is not an email address"))
            }
        }
        "serviceAccount" => check_service_account(world, api, value),
        "domain" => {
            if is_domain(value) {
                Ok(())
            } else {
                Err(bad("it is not a domain name"))
            }
        }
        "principal" | "principalSet" => {
            if principal_path(value).is_some() {
                Ok(())
            } else {
                Err(bad(
                    "it is not a principal identifier of https://cloud.google.com/iam/docs/principal-identifiers",
                ))
            }
        }
        "deleted" => {
            let ok = match value.split_once(':') {
                Some(("user" | "group" | "serviceAccount", rest)) => rest
                    .split_once("?uid=")
                    .is_some_and(|(email, uid)| is_email(email) && !uid.is_empty()),
                Some(("principal", rest)) => principal_path(rest).is_some(),
                _ => false,
            };
            if ok { Ok(()) } else { Err(form()) }
        }
        "projectOwner" | "projectEditor" | "projectViewer"
            if matches!(target, Target::Bucket { .. }) =>
        {
            if value.is_empty() {
                Err(form())
            } else {
                Ok(())
            }
        }
        _ => Err(form()),
    }
}

/// The path of a `principal://` or `principalSet://` identifier after `//iam.googleapis.com/`,
/// when it names a workload identity pool of a project by number
/// (`projects/NUMBER/locations/global/workloadIdentityPools/POOL/...`) or a workforce pool
/// (`locations/global/workforcePools/POOL/...`).
pub fn principal_path(value: &str) -> Option<&str> {
    let path = value.strip_prefix("//iam.googleapis.com/")?;
    let parts: Vec<&str> = path.split('/').collect();
    let workload = parts.len() >= 7
        && parts[0] == "projects"
        && !parts[1].is_empty()
        && parts[1].bytes().all(|b| b.is_ascii_digit())
        && parts[2] == "locations"
        && parts[3] == "global"
        && parts[4] == "workloadIdentityPools"
        && !parts[5].is_empty()
        && parts[6..].iter().any(|p| !p.is_empty());
    let workforce = parts.len() >= 5
        && parts[0] == "locations"
        && parts[1] == "global"
        && parts[2] == "workforcePools"
        && !parts[3].is_empty()
        && parts[4..].iter().any(|p| !p.is_empty());
    (workload || workforce).then_some(path)
}

/// Whether `email` names a service account that exists as far as a policy is concerned (see the
/// module documentation).
pub fn service_account_exists(world: &World, email: &str) -> bool {
    if super::find_account(world, email).is_some() {
        return true;
    }
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    // A user-managed account of a project: it must have been created.
    if let Some(project) = domain.strip_suffix(".iam.gserviceaccount.com")
        && !project.starts_with("gcp-sa-")
        && !local.starts_with("service-")
    {
        return false;
    }
    if domain == "developer.gserviceaccount.com" {
        return super::default_account(world, email).is_some();
    }
    true
}

fn check_service_account(world: &World, api: Api, email: &str) -> GcpResult<()> {
    // The legacy Workload Identity form `PROJECT.svc.id.goog[NAMESPACE/KSA]`.
    if let Some((pool, rest)) = email.split_once(".svc.id.goog[")
        && !pool.is_empty()
        && rest
            .strip_suffix(']')
            .and_then(|r| r.split_once('/'))
            .is_some_and(|(ns, ksa)| !ns.is_empty() && !ksa.is_empty())
    {
        return Ok(());
    }
    if !is_email(email) {
        return Err(api.invalid(format!(
            "Invalid principal \"serviceAccount:{email}\": it is not an email address."
        )));
    }
    if service_account_exists(world, email) {
        Ok(())
    } else {
        Err(api.invalid(format!("Service account {email} does not exist.")))
    }
}

/// Merges bindings of the same role and condition, sorts and dedupes members, sorts bindings by
/// role (unconditional first).
pub fn normalize(bindings: Vec<Binding>) -> Vec<Binding> {
    let mut out: Vec<Binding> = vec![];
    for b in bindings {
        match out
            .iter_mut()
            .find(|o| o.role == b.role && o.condition == b.condition)
        {
            Some(existing) => existing.members.extend(b.members),
            None => out.push(b),
        }
    }
    for b in &mut out {
        b.members.sort();
        b.members.dedup();
    }
    out.sort_by(|a, b| {
        (
            a.role.as_str(),
            a.condition.is_some(),
            a.condition.as_ref().map(Value::to_string),
        )
            .cmp(&(
                b.role.as_str(),
                b.condition.is_some(),
                b.condition.as_ref().map(Value::to_string),
            ))
    });
    out
}

/// Rewrites `serviceAccount:EMAIL` to `deleted:serviceAccount:EMAIL?uid=UID` in every stored
/// policy. Etags are left as they are.
pub fn mark_deleted(world: &mut World, email: &str, unique_id: &str) {
    let from = format!("serviceAccount:{email}");
    let to = format!("deleted:serviceAccount:{email}?uid={unique_id}");
    let rewrite = |policy: &mut Policy| {
        for binding in &mut policy.bindings {
            for member in &mut binding.members {
                if *member == from {
                    *member = to.clone();
                }
            }
        }
        let bindings = std::mem::take(&mut policy.bindings);
        policy.bindings = normalize(bindings);
    };
    for policy in world.iam.project_policies.values_mut() {
        rewrite(policy);
    }
    for bucket in world.storage.buckets.values_mut() {
        if let Some(policy) = &mut bucket.iam {
            rewrite(policy);
        }
    }
    for policy in world.artifactregistry.policies.values_mut() {
        rewrite(policy);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world() -> World {
        World::new(1, crate::clock::default_start())
    }

    fn incoming(bindings: Vec<Binding>, version: i64, etag: Option<&str>) -> Incoming {
        Incoming {
            version,
            bindings,
            etag: etag.map(str::to_string),
            audit_configs: None,
        }
    }

    fn default_mask() -> Vec<String> {
        parse_mask(None).unwrap()
    }

    #[test]
    fn versions_and_withcond_rendering() {
        let empty = Policy::default();
        assert_eq!(empty.to_json(3), json!({ "etag": "ACAB" }));
        let condition = json!({ "title": "t", "expression": "request.time < timestamp('2030-01-01T00:00:00Z')" });
        let policy = Policy::with_bindings(
            vec![
                Binding::new(
                    "roles/viewer",
                    &["user:b@example.com", "user:a@example.com"],
                ),
                Binding {
                    condition: Some(condition.clone()),
                    ..Binding::new("roles/editor", &["user:a@example.com"])
                },
            ],
            "BwYAAAAAAAE=".into(),
        );
        let v3 = policy.to_json(3);
        assert_eq!(v3["version"], 3);
        assert_eq!(v3["bindings"][0]["role"], "roles/editor");
        assert_eq!(v3["bindings"][0]["condition"], condition);
        assert_eq!(
            v3["bindings"][1]["members"],
            json!(["user:a@example.com", "user:b@example.com"])
        );
        let v1 = policy.to_json(1);
        assert_eq!(v1["version"], 1);
        let role = v1["bindings"][0]["role"].as_str().unwrap();
        assert!(role.starts_with("roles/editor_withcond_"), "{role}");
        assert_eq!(role.len(), "roles/editor_withcond_".len() + 20);
        assert!(v1["bindings"][0].get("condition").is_none());
    }

    #[test]
    fn etags_compare_as_bytes_and_stale_ones_are_refused() {
        let world = world();
        let current = Policy::with_bindings(vec![], "BwYAAAAAAP8=".into());
        // The URL-safe spelling of the same bytes is the same etag.
        let ok = apply_set(
            &world,
            Target::Repository,
            &current,
            incoming(
                vec![Binding::new(
                    "roles/artifactregistry.reader",
                    &["user:a@example.com"],
                )],
                1,
                Some("BwYAAAAAAP8"),
            ),
            &default_mask(),
        );
        assert!(ok.is_ok(), "{ok:?}");
        let stale = apply_set(
            &world,
            Target::Repository,
            &current,
            incoming(vec![], 1, Some("BwYAAAAAAAE=")),
            &default_mask(),
        )
        .unwrap_err();
        assert_eq!(
            (stale.code, stale.status, stale.reason.as_str()),
            (409, "ABORTED", "aborted")
        );
        let bucket = Target::Bucket {
            name: "b",
            uniform: true,
        };
        let stale = apply_set(
            &world,
            bucket,
            &current,
            incoming(vec![], 1, Some("CAE=")),
            &default_mask(),
        )
        .unwrap_err();
        assert_eq!(
            (stale.code, stale.reason.as_str(), stale.message.as_str()),
            (412, "conditionNotMet", "Precondition Failed")
        );
    }

    #[test]
    fn conditions_need_version_3_and_buckets_need_uniform_access() {
        let world = world();
        let conditional = vec![Binding {
            condition: Some(json!({ "title": "t", "expression": "true" })),
            ..Binding::new("roles/storage.objectViewer", &["user:a@example.com"])
        }];
        let current = Policy::default();
        let e = apply_set(
            &world,
            Target::Bucket {
                name: "b",
                uniform: false,
            },
            &current,
            incoming(conditional.clone(), 1, None),
            &default_mask(),
        )
        .unwrap_err();
        assert_eq!(e.code, 412);
        assert!(
            e.message.contains("enable uniform bucket-level access"),
            "{}",
            e.message
        );
        let e = apply_set(
            &world,
            Target::Bucket {
                name: "b",
                uniform: true,
            },
            &current,
            incoming(conditional.clone(), 1, None),
            &default_mask(),
        )
        .unwrap_err();
        assert_eq!(e.code, 400);
        assert!(e.message.contains("at least 3"), "{}", e.message);
        let ok = apply_set(
            &world,
            Target::Bucket {
                name: "b",
                uniform: true,
            },
            &current,
            incoming(conditional.clone(), 3, None),
            &default_mask(),
        )
        .unwrap();
        assert_eq!(ok.version(), 3);
        // With an etag, a version-1 write over a conditional policy is refused.
        let stored = Policy {
            etag: "BwYAAAAAAAI=".into(),
            ..ok
        };
        let e = apply_set(
            &world,
            Target::Repository,
            &stored,
            incoming(vec![], 1, Some("BwYAAAAAAAI=")),
            &default_mask(),
        )
        .unwrap_err();
        assert!(
            e.message.starts_with(
                "Specified policy version (1) cannot be less than the existing policy version (3)."
            ),
            "{}",
            e.message
        );
        // Without one it overwrites.
        assert!(
            apply_set(
                &world,
                Target::Repository,
                &stored,
                incoming(vec![], 1, None),
                &default_mask()
            )
            .is_ok()
        );
    }

    #[test]
    fn members_are_checked() {
        let world = world();
        let check = |member: &str| {
            apply_set(
                &world,
                Target::Repository,
                &Policy::default(),
                incoming(
                    vec![Binding::new("roles/artifactregistry.reader", &[member])],
                    1,
                    None,
                ),
                &default_mask(),
            )
        };
        for ok in [
            "allUsers",
            "user:a@example.com",
            "group:g@example.com",
            "domain:example.com",
            "serviceAccount:123456789012-compute@developer.gserviceaccount.com",
            "serviceAccount:service-123@gcp-sa-artifactregistry.iam.gserviceaccount.com",
            "serviceAccount:my-proj.svc.id.goog[default/runner]",
            "principal://iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/my-proj.svc.id.goog/subject/ns/default/sa/runner",
            "principalSet://iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/my-proj.svc.id.goog/namespace/default",
            "deleted:serviceAccount:x@p.iam.gserviceaccount.com?uid=123",
        ] {
            assert!(check(ok).is_ok(), "{ok}: {:?}", check(ok));
        }
        let e = check("alice@example.com").unwrap_err();
        assert_eq!(
            e.message,
            "Policy members must be of the form \"<type>:<value>\"."
        );
        let e = check("serviceAccount:ghost@my-proj.iam.gserviceaccount.com").unwrap_err();
        assert_eq!((e.code, e.status), (400, "INVALID_ARGUMENT"));
        assert_eq!(
            e.message,
            "Service account ghost@my-proj.iam.gserviceaccount.com does not exist."
        );
        assert!(check("user:nobody").is_err());
        assert!(check("principalSet://iam.googleapis.com/projects/my-proj/locations/global/workloadIdentityPools/p/namespace/x").is_err());
        assert!(
            check("projectOwner:my-proj").is_err(),
            "only buckets take project convenience values"
        );
    }

    #[test]
    fn project_rules() {
        let world = world();
        let current = Policy::with_bindings(
            vec![Binding::new("roles/owner", &["user:owner@example.com"])],
            "BwYAAAAAAAE=".into(),
        );
        let set = |bindings: Vec<Binding>| {
            apply_set(
                &world,
                Target::Project("p"),
                &current,
                incoming(bindings, 1, None),
                &default_mask(),
            )
        };
        let e = set(vec![Binding::new("roles/viewer", &["allUsers"])]).unwrap_err();
        assert_eq!(e.message, "Request contains an invalid argument.");
        let e = set(vec![Binding::new(
            "roles/owner",
            &["user:owner@example.com", "user:new@example.com"],
        )])
        .unwrap_err();
        assert_eq!(e.details[0]["type"], "SOLO_MUST_INVITE_OWNERS");
        assert_eq!(e.details[0]["member"], "user:new@example.com");
        assert!(
            set(vec![Binding::new(
                "roles/owner",
                &["user:owner@example.com"]
            )])
            .is_ok()
        );
        let e = set(vec![Binding::new(
            "roles/storage.legacyBucketOwner",
            &["user:a@example.com"],
        )])
        .unwrap_err();
        assert_eq!(
            e.message,
            "Role roles/storage.legacyBucketOwner is not supported for this resource."
        );
        let e = set(vec![Binding::new("roles/viewer", &[])]).unwrap_err();
        assert_eq!(e.code, 400);
        let e = set(vec![Binding::new(
            "roles/viewer",
            &["user:owner@example.com"],
        )])
        .unwrap_err();
        assert_eq!(e.message, "Request contains an invalid argument.");
        assert!(e.details.is_empty());
    }

    #[test]
    fn masks_keep_what_they_do_not_name() {
        let world = world();
        let mut current = Policy::with_bindings(
            vec![Binding::new("roles/viewer", &["user:a@example.com"])],
            "BwYAAAAAAAE=".into(),
        );
        current.audit_configs = Some(json!([{ "service": "allServices" }]));
        let new = apply_set(
            &world,
            Target::Project("p"),
            &current,
            incoming(vec![], 1, None),
            &default_mask(),
        )
        .unwrap();
        assert!(new.bindings.is_empty());
        assert_eq!(new.audit_configs, current.audit_configs);
        let mask = parse_mask(Some("auditConfigs")).unwrap();
        let new = apply_set(
            &world,
            Target::Project("p"),
            &current,
            incoming(vec![], 1, None),
            &mask,
        )
        .unwrap();
        assert_eq!(new.bindings, current.bindings);
        assert_eq!(new.audit_configs, None);
        assert!(parse_mask(Some("bindings,owner")).is_err());
    }

    #[test]
    fn bindings_are_normalised() {
        let out = normalize(vec![
            Binding::new("roles/viewer", &["user:b@example.com"]),
            Binding::new("roles/editor", &["user:a@example.com"]),
            Binding::new(
                "roles/viewer",
                &["user:a@example.com", "user:b@example.com"],
            ),
        ]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].role, "roles/editor");
        assert_eq!(
            out[1].members,
            vec!["user:a@example.com", "user:b@example.com"]
        );
    }

    #[test]
    fn requests_are_parsed_strictly() {
        let e = parse_incoming(
            &json!({ "bindings": [{ "role": "roles/viewer", "member": ["x"] }] }),
            "policy",
            true,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "Invalid JSON payload received. Unknown name \"member\" at 'policy.bindings[0]': Cannot find field."
        );
        let e = parse_incoming(&json!({ "etag": "!!" }), "policy", true).unwrap_err();
        assert!(
            e.message
                .starts_with("Invalid value at 'policy.etag' (TYPE_BYTES)"),
            "{}",
            e.message
        );
        let ok = parse_incoming(
            &json!({ "kind": "storage#policy", "bindings": [] }),
            "",
            false,
        )
        .unwrap();
        assert_eq!(ok, Incoming::default());
        assert_eq!(
            requested_version(Api::ResourceManager, Some("3")).unwrap(),
            3
        );
        assert!(requested_version(Api::ResourceManager, Some("2")).is_err());
    }
}
