//! `[identity]`: the nodes' service account and its project roles, and the Kubernetes service
//! accounts of the workloads that mount buckets.
//!
//! Without `[identity]`, nodes run as the Compute Engine default account and a3ctl grants nothing
//! (what blueprints written before the table meant). With it, the defaults follow Google's
//! hardening advice: nodes run as a dedicated account rather than the
//! Compute Engine default one (which often has Editor, or nothing at all where an organisation
//! policy disables automatic grants), holding only `roles/container.defaultNodeServiceAccount`,
//! the role GKE documents for a least-privilege node account
//! (<https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa>).
//! Image pulls get `roles/artifactregistry.reader` on each of the blueprint's repositories, not
//! on the project.

use super::decode::Sp;
use super::error::{Finding, Findings};
use super::model::{Identity, NodeAccount, Workload};
use super::schema::RawIdentity;
use super::validate::Ctx;

/// The project roles of a node account a3ctl creates, unless `node_roles` says otherwise.
pub const DEFAULT_NODE_ROLES: &[&str] = &["roles/container.defaultNodeServiceAccount"];

/// The workloads that mount buckets, unless `workloads` says otherwise.
pub const DEFAULT_WORKLOADS: &[&str] = &["default/default"];

/// IAM's account id rule: 6–30 characters, a lowercase letter first, then lowercase letters,
/// digits and hyphens, not ending with a hyphen
/// (<https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts/create>).
fn account_id_ok(id: &str) -> Result<(), String> {
    let len = id.chars().count();
    if !(6..=30).contains(&len) {
        return Err(format!("{len} characters; an account id has 6 to 30"));
    }
    let first = id.chars().next().unwrap_or('-');
    if !first.is_ascii_lowercase() {
        return Err("it must start with a lowercase letter".into());
    }
    if id.ends_with('-') {
        return Err("it must not end with a hyphen".into());
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(format!(
            "`{c}` is not allowed (lowercase letters, digits, hyphens)"
        ));
    }
    Ok(())
}

/// A Kubernetes name (RFC 1123 label): 1–63 lowercase letters, digits and hyphens, alphanumeric at
/// both ends.
fn label_ok(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 63
        && label
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

/// A predefined (`roles/X`) or custom (`projects/P/roles/X`, `organizations/N/roles/X`) role.
fn role_ok(role: &str) -> bool {
    let parts: Vec<&str> = role.split('/').collect();
    let word = |w: &str| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
    };
    match parts.as_slice() {
        ["roles", r] => word(r),
        ["projects" | "organizations", owner, "roles", r] => !owner.is_empty() && word(r),
        _ => false,
    }
}

fn bad(f: &mut Findings, value: &Sp<String>, message: String, label: &str, help: &str) {
    f.push(Finding::new(value.span.clone(), message, label).help(help));
}

pub(crate) fn identity(raw: &RawIdentity, ctx: &mut Ctx) -> Option<Identity> {
    // Without the table, what blueprints meant before it existed: nodes run as the Compute
    // Engine default account and nothing is granted (so that an older deployment does not
    // replace its node pools to change their account).
    if !raw.present {
        return Some(Identity::default());
    }
    let name = ctx.name.clone();
    let f = &mut ctx.f;
    let before = f.0.len();
    let node_account = match &raw.node_service_account {
        None => NodeAccount::Create {
            account_id: format!("{}-nodes", name.as_deref()?),
        },
        Some(v) if v.value == "default" || v.value.contains('@') => {
            if v.value != "default" && !v.value.ends_with(".gserviceaccount.com") {
                bad(
                    f,
                    v,
                    format!("`{}` is not a service account email", v.value),
                    "not a service account",
                    "an existing account is `NAME@PROJECT.iam.gserviceaccount.com`; an account id (no `@`) makes a3ctl create one",
                );
            }
            NodeAccount::Existing {
                email: v.value.clone(),
            }
        }
        Some(v) => {
            if let Err(reason) = account_id_ok(&v.value) {
                bad(
                    f,
                    v,
                    format!("`{}` is not a valid service account id: {reason}", v.value),
                    "invalid account id",
                    "6 to 30 lowercase letters, digits and hyphens, starting with a letter; or the email of an existing account",
                );
            }
            NodeAccount::Create {
                account_id: v.value.clone(),
            }
        }
    };
    let node_roles = match &raw.node_roles {
        None => DEFAULT_NODE_ROLES.iter().map(|r| r.to_string()).collect(),
        Some(list) => {
            for role in &list.value {
                if !role_ok(&role.value) {
                    bad(
                        f,
                        role,
                        format!("`{}` is not an IAM role", role.value),
                        "not a role",
                        "a predefined role is `roles/NAME` (`roles/logging.logWriter`); a custom one `projects/PROJECT/roles/NAME`",
                    );
                }
            }
            if let (NodeAccount::Existing { .. }, Some(first)) = (&node_account, list.value.first())
            {
                bad(
                    f,
                    first,
                    "`node_roles` only applies to a node account a3ctl creates".into(),
                    "not granted to an existing account",
                    "grant roles to an existing account yourself, or name an account id for a3ctl to create",
                );
            }
            list.value.iter().map(|r| r.value.clone()).collect()
        }
    };
    let given: Vec<Sp<String>> = match &raw.workloads {
        None => DEFAULT_WORKLOADS
            .iter()
            .map(|w| Sp::new(w.to_string(), 0..0))
            .collect(),
        Some(list) => list.value.clone(),
    };
    let mut workloads: Vec<Workload> = Vec::new();
    for w in &given {
        match w.value.split_once('/') {
            Some((ns, ksa)) if label_ok(ns) && label_ok(ksa) => {
                let workload = Workload {
                    namespace: ns.into(),
                    name: ksa.into(),
                };
                if workloads.contains(&workload) {
                    bad(
                        f,
                        w,
                        format!("`{}` is listed twice in `workloads`", w.value),
                        "listed twice",
                        "remove one",
                    );
                }
                workloads.push(workload);
            }
            _ => bad(
                f,
                w,
                format!(
                    "`{}` is not a Kubernetes service account `NAMESPACE/NAME`",
                    w.value
                ),
                "not NAMESPACE/NAME",
                "for example `default/default` or `training/trainer` (lowercase letters, digits, hyphens)",
            ),
        }
    }
    (f.0.len() == before).then_some(Identity {
        node_account,
        node_roles,
        workloads,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_ids_roles_and_labels_follow_googles_rules() {
        assert!(account_id_ok("a3mega-nodes").is_ok());
        assert!(account_id_ok("short").unwrap_err().contains("6 to 30"));
        assert!(account_id_ok("1abcdef").is_err());
        assert!(account_id_ok("abcdef-").is_err());
        assert!(account_id_ok("abc_def").unwrap_err().contains("`_`"));
        assert!(role_ok("roles/container.defaultNodeServiceAccount"));
        assert!(role_ok("projects/p/roles/myRole"));
        assert!(!role_ok("container.admin"));
        assert!(!role_ok("roles/"));
        assert!(label_ok("default") && !label_ok("Default") && !label_ok("-x"));
    }
}
