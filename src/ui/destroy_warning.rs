//! The warning before a plan that takes a cluster (or much else) away: which project, which
//! cluster where, how many nodes and GPUs, and how many of everything else.
//!
//! It is shown for a destroy (`a3ctl destroy`, `a3ctl plan --destroy`) and for any plan that
//! deletes or replaces a GKE cluster, or deletes or replaces more than [`MANY`] resources.

use crate::plan::{Action, Change, Plan};
use crate::resource::Kind;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// More deletions than this warn even without a cluster among them.
pub const MANY: usize = 10;

/// The warning for `plan`, when it needs one.
pub fn warning(plan: &Plan) -> Option<String> {
    let gone: Vec<&Change> = plan
        .actions()
        .filter(|c| match c.action {
            Action::Delete => !c.lifecycle.keep_on_destroy,
            Action::Replace => true,
            _ => false,
        })
        .collect();
    let clusters: Vec<&Change> = gone
        .iter()
        .copied()
        .filter(|c| c.addr.kind == Kind::Cluster)
        .collect();
    if gone.is_empty() || !(plan.destroy || !clusters.is_empty() || gone.len() > MANY) {
        return None;
    }
    let project = clusters
        .iter()
        .chain(gone.iter())
        .find_map(|c| project_of(&c.id));
    let in_project = project
        .map(|p| format!(" (project {p})"))
        .unwrap_or_default();

    let mut out = String::new();
    let mut pools = Vec::new();
    let mut others: BTreeMap<Kind, usize> = BTreeMap::new();
    for c in &gone {
        match c.addr.kind {
            Kind::Cluster => {}
            Kind::NodePool => pools.push(*c),
            kind => *others.entry(kind).or_default() += 1,
        }
    }
    if clusters.is_empty() {
        let _ = write!(
            out,
            "Warning: this {} {}{in_project}",
            verb(&gone),
            count(gone.len(), ("resource", "resources"))
        );
    } else {
        let names: Vec<String> = clusters
            .iter()
            .map(|c| {
                let spec = spec_of(c);
                let name = field(spec, "name").unwrap_or(c.addr.name.as_str());
                match field(spec, "location") {
                    Some(location) => format!("{name} in {location}"),
                    None => name.to_string(),
                }
            })
            .collect();
        let _ = write!(
            out,
            "Warning: this {} GKE cluster{} {}{in_project}",
            verb(&clusters),
            if clusters.len() == 1 { "" } else { "s" },
            names.join(" and ")
        );
    }
    let mut parts = Vec::new();
    if !pools.is_empty() {
        parts.push(pools_text(&pools, !clusters.is_empty()));
    }
    for (kind, n) in &others {
        parts.push(count(*n, kind_label(*kind)));
    }
    if !clusters.is_empty() && !parts.is_empty() {
        let all = count(gone.len(), ("resource", "resources"));
        out.push_str(&wrap(&format!("with {} ({all} in all)", join(&parts))));
    } else if !parts.is_empty() {
        out.push(':');
        out.push_str(&wrap(&join(&parts)));
    }
    out.push_str(".\n  What runs on them and what they store is lost; there is no undo.\n");
    Some(out)
}

/// `destroys`, `destroys and re-creates`, or both.
fn verb(changes: &[&Change]) -> &'static str {
    let replace = changes.iter().any(|c| c.action == Action::Replace);
    let delete = changes.iter().any(|c| c.action == Action::Delete);
    match (delete, replace) {
        (false, true) => "destroys and re-creates",
        (true, true) => "destroys (or destroys and re-creates)",
        _ => "destroys",
    }
}

/// The spec a change takes away: the live one (for a delete or a replacement).
fn spec_of(change: &Change) -> Option<&Value> {
    change.before.as_ref().or(change.after.as_ref())
}

fn field<'a>(spec: Option<&'a Value>, name: &str) -> Option<&'a str> {
    spec?.get(name)?.as_str()
}

/// `my-project` of `projects/my-project/...` (not the `_` of a bucket's id).
fn project_of(id: &str) -> Option<&str> {
    let rest = id.strip_prefix("projects/")?;
    let project = rest.split('/').next()?;
    (!project.is_empty() && project != "_").then_some(project)
}

/// `its 2 node pools (34 nodes, 32 of them GPU nodes with 256 GPUs)`.
fn pools_text(pools: &[&Change], its: bool) -> String {
    let mut nodes = 0u64;
    let mut gpu_nodes = 0u64;
    let mut gpus = 0u64;
    for pool in pools {
        let spec = spec_of(pool);
        let per_zone = spec
            .and_then(|s| s.get("node_count"))
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let zones = spec
            .and_then(|s| s.get("locations"))
            .and_then(Value::as_array)
            .map_or(1, |l| l.len().max(1)) as u64;
        let n = per_zone * zones;
        nodes += n;
        if let Some(count) = spec
            .and_then(|s| s.get("accelerator"))
            .and_then(|a| a.get("count"))
            .and_then(Value::as_u64)
        {
            gpu_nodes += n;
            gpus += n * count;
        }
    }
    let head = format!(
        "{}{}",
        if its { "its " } else { "" },
        count(pools.len(), ("node pool", "node pools"))
    );
    let nodes_text = count(nodes as usize, ("node", "nodes"));
    if gpus > 0 {
        format!(
            "{head} ({nodes_text}, {} with {} in all)",
            if gpu_nodes == 1 {
                "1 of them a GPU node".to_string()
            } else {
                format!("{gpu_nodes} of them GPU nodes")
            },
            count(gpus as usize, ("GPU", "GPUs"))
        )
    } else {
        format!("{head} ({nodes_text})")
    }
}

fn count(n: usize, (one, many): (&str, &str)) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Lines of at most [`WIDTH`] characters where possible, broken only after a comma, each on a new
/// line indented by two spaces.
fn wrap(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    let chunks = text.split_inclusive(", ").flat_map(|chunk| {
        // `a and b`: also a place to break, before the `and`.
        let (head, tail) = chunk.split_once(" and ").unwrap_or((chunk, ""));
        let tail = (!tail.is_empty()).then(|| format!("and {tail}"));
        std::iter::once(head.to_string()).chain(tail)
    });
    for word in chunks {
        let word = word.trim_end();
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > WIDTH {
            out.push_str("\n  ");
            out.push_str(&line);
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str("\n  ");
        out.push_str(&line);
    }
    out
}

/// The longest line of a warning, its indentation left out.
const WIDTH: usize = 92;

/// `a, b and c`.
fn join(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// How a kind is counted in the warning.
fn kind_label(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Network => ("VPC", "VPCs"),
        Kind::Subnetwork => ("subnet", "subnets"),
        Kind::Firewall => ("firewall rule", "firewall rules"),
        Kind::Router => (
            "Cloud Router (with its NAT)",
            "Cloud Routers (with their NAT)",
        ),
        Kind::ResourcePolicy => ("placement policy", "placement policies"),
        Kind::Cluster => ("GKE cluster", "GKE clusters"),
        Kind::NodePool => ("node pool", "node pools"),
        Kind::Filestore => ("Filestore instance", "Filestore instances"),
        Kind::Repository => (
            "Artifact Registry repository",
            "Artifact Registry repositories",
        ),
        Kind::Bucket => ("Cloud Storage bucket", "Cloud Storage buckets"),
        Kind::Kubernetes => ("Kubernetes object", "Kubernetes objects"),
        Kind::ServiceAccount => ("service account", "service accounts"),
        Kind::IamMember => ("IAM grant", "IAM grants"),
        Kind::Service => ("API", "APIs"),
        _ => ("other resource", "other resources"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::PLAN_FORMAT;
    use crate::resource::{Addr, Lifecycle};
    use serde_json::json;

    fn delete(kind: Kind, name: &str, id: &str, before: Value) -> Change {
        Change {
            addr: Addr::new(kind, name),
            action: Action::Delete,
            id: id.into(),
            before: Some(before),
            after: None,
            diffs: vec![],
            reason: Some("destroy".into()),
            dependencies: vec![],
            lifecycle: Lifecycle::default(),
        }
    }

    fn plan(destroy: bool, changes: Vec<Change>) -> Plan {
        Plan {
            format: PLAN_FORMAT,
            blueprint: "bp".into(),
            lineage: "l".into(),
            serial: 1,
            destroy,
            changes,
            drift: vec![],
            versions: vec![],
            adoptions: vec![],
            preflight: None,
            notes: vec![],
            moves: vec![],
        }
    }

    fn cluster_changes() -> Vec<Change> {
        let mut changes = vec![
            delete(
                Kind::Cluster,
                "main",
                "projects/my-project/locations/us-central1/clusters/a3mega",
                json!({"name": "a3mega", "location": "us-central1"}),
            ),
            delete(
                Kind::NodePool,
                "system",
                "projects/my-project/locations/us-central1/clusters/a3mega/nodePools/system",
                json!({"node_count": 2, "locations": ["us-central1-a"], "accelerator": null}),
            ),
            delete(
                Kind::NodePool,
                "a3mega",
                "projects/my-project/locations/us-central1/clusters/a3mega/nodePools/a3mega",
                json!({"node_count": 16, "locations": ["us-central1-a", "us-central1-b"],
                       "accelerator": {"type": "nvidia-h100-mega-80gb", "count": 8}}),
            ),
            delete(Kind::Bucket, "ckpt", "projects/_/buckets/ckpt", json!({})),
        ];
        for i in 0..3 {
            changes.push(delete(
                Kind::Network,
                &format!("gpu-{i}"),
                &format!("projects/my-project/global/networks/n{i}"),
                json!({}),
            ));
        }
        changes
    }

    #[test]
    fn names_the_project_the_cluster_and_what_goes_with_it() {
        let text = warning(&plan(true, cluster_changes())).unwrap();
        assert_eq!(
            text,
            "Warning: this destroys GKE cluster a3mega in us-central1 (project my-project)\n  \
             with its 2 node pools (34 nodes, 32 of them GPU nodes with 256 GPUs in all), 3 VPCs\n  \
             and 1 Cloud Storage bucket (7 resources in all).\n  \
             What runs on them and what they store is lost; there is no undo.\n"
        );
    }

    #[test]
    fn an_apply_that_deletes_a_cluster_warns_and_a_small_one_does_not() {
        let mut p = plan(false, cluster_changes());
        assert!(warning(&p).is_some());
        p.changes.remove(0);
        assert_eq!(warning(&p), None, "6 deletions and no cluster");
        let many: Vec<Change> = (0..11)
            .map(|i| {
                delete(
                    Kind::Firewall,
                    &format!("f{i}"),
                    &format!("projects/p/global/firewalls/f{i}"),
                    json!({}),
                )
            })
            .collect();
        assert_eq!(
            warning(&plan(false, many)).unwrap(),
            "Warning: this destroys 11 resources (project p):\n  11 firewall rules.\n  \
             What runs on them and what they store is lost; there is no undo.\n"
        );
    }

    #[test]
    fn a_replaced_cluster_warns() {
        let mut changes = cluster_changes();
        changes.truncate(1);
        changes[0].action = Action::Replace;
        let text = warning(&plan(false, changes)).unwrap();
        assert!(
            text.starts_with("Warning: this destroys and re-creates GKE cluster a3mega in us-central1 (project my-project).\n  What runs"),
            "{text}"
        );
    }

    #[test]
    fn forgotten_apis_are_not_destroyed() {
        let mut api = delete(
            Kind::Service,
            "compute",
            "projects/p/services/compute.googleapis.com",
            json!({}),
        );
        api.lifecycle.keep_on_destroy = true;
        assert_eq!(warning(&plan(true, vec![api])), None);
    }
}
