//! `GPU pools replaced:` the section of a plan that says, for each GPU node pool it replaces, how
//! it moves ([`crate::plan::moves`]: create before destroy, in batches, delete first, or
//! refused), how many GPUs are at risk, in which order, for about how long (the means of the
//! typical durations, [`crate::resource::durations`], which the simulator's realistic latency
//! profile shares), and whether the new pool's
//! capacity is confirmed: GPUs are scarce.

use super::Printer;
use crate::plan::{GpuReplacement, Plan};
use std::fmt::Write;

/// The section (empty when the plan replaces no GPU pool).
pub fn render(printer: &Printer, plan: &Plan) -> String {
    let replacements = plan.gpu_replacements();
    let mut out = String::new();
    if replacements.is_empty() {
        return out;
    }
    let _ = writeln!(out, "{}", printer.bold("GPU pools replaced:"));
    for r in &replacements {
        render_one(&mut out, r);
    }
    out.push('\n');
    out
}

fn render_one(out: &mut String, r: &GpuReplacement) {
    use crate::plan::moves::Strategy;
    let nodes = if r.nodes == 1 {
        "1 node".to_string()
    } else {
        format!("{} nodes", r.nodes)
    };
    let per_node = format!("{} × {}", r.gpus_per_node, r.gpu_type);
    let machine = if r.machine_type_before == r.machine_type_after {
        String::new()
    } else {
        format!(
            "; the new pool is {} (was {})",
            r.machine_type_after, r.machine_type_before
        )
    };
    let new_name = r
        .new_id
        .as_deref()
        .and_then(|id| id.rsplit('/').next())
        .unwrap_or("");
    let create = minutes("container.nodePool.create.gpu");
    match r.strategy {
        Strategy::CreateBeforeDestroy => {
            let _ = writeln!(
                out,
                "  {}: 0 GPUs at risk ({nodes} × {per_node} keep running until the new pool's are Ready)",
                r.addr
            );
            let _ = writeln!(
                out,
                "    strategy: create before destroy: create the new pool `{new_name}`, wait for its create DONE and its nodes Ready, then delete the old pool{machine}"
            );
            let _ = writeln!(
                out,
                "    for about {create}, the new pool's create, with both pools running"
            );
        }
        Strategy::Batched { batch_size } => {
            let rounds = r.nodes.div_ceil(batch_size.max(1));
            let _ = writeln!(
                out,
                "  {}: {} GPUs at risk at a time ({batch_size} node(s) per zone between the pools, of {nodes} × {per_node})",
                r.addr, r.gpus_at_risk
            );
            let _ = writeln!(
                out,
                "    strategy: in batches of {batch_size} node(s): create the new pool `{new_name}` with {batch_size}, then shrink the old pool by {batch_size} and grow the new one by {batch_size} until it has them all, then delete the old pool{machine}"
            );
            let _ = writeln!(
                out,
                "    for about {} ({rounds} rounds of a shrink and a grow after the create)",
                crate::apply::estimate::human(
                    mean("container.nodePool.create.gpu")
                        + rounds as f64
                            * (mean("container.nodePool.setSize")
                                + mean("container.nodePool.setSize.gpu"))
                )
            );
        }
        Strategy::DeleteFirst | Strategy::Refused => {
            let _ = writeln!(
                out,
                "  {}: {} GPUs at risk ({nodes} × {per_node}) from the old pool's delete until the new pool's nodes are up",
                r.addr, r.gpus_down
            );
            let what = if r.capacity == "refused" {
                "refused: preflight refused the new pool (see Preflight above)"
            } else if r.strategy == Strategy::Refused {
                "refused: no room beside the old pool and no --delete-first (see the error below)"
            } else {
                "delete first, then create (a pool's name is held by one pool at a time)"
            };
            let _ = writeln!(out, "    order: {what}{machine}");
            let _ = writeln!(
                out,
                "    for about {}, the old pool's delete and the new pool's create",
                crate::apply::estimate::human(
                    mean("container.nodePool.delete") + mean("container.nodePool.create.gpu")
                )
            );
        }
    }
    let capacity = match r.capacity {
        "refused" => {
            "not confirmed: preflight refused the new pool (see Preflight above), so nothing is deleted"
                .to_string()
        }
        "unknown" => {
            "not confirmed: a check of the new pool could not be made (see Preflight above)".into()
        }
        "not_checked" => "not checked (--skip-preflight)".into(),
        _ if r.strategy == crate::plan::moves::Strategy::Refused => match r.reservation.first() {
            Some(room) => format!(
                "not confirmed: reservation {} ({}) has {} free VM(s) now and the new pool needs {} beside the old one, so nothing is deleted",
                room.reservation, room.zone, room.free_now, room.needed
            ),
            None => "not confirmed, so nothing is deleted".into(),
        },
        _ if r.only_after_delete => {
            let room = r
                .reservation
                .iter()
                .find(|room| room.only_after_delete())
                .map(|room| {
                    format!(
                        "reservation {} ({}) has {} free VM(s) now and the new pool needs {}",
                        room.reservation, room.zone, room.free_now, room.needed
                    )
                })
                .unwrap_or_default();
            format!(
                "confirmed by preflight, but only because the old pool frees it: {room}; the VMs come back only from the delete, and the GPUs stay down if anything else takes them first"
            )
        }
        _ => match r.reservation.first() {
            Some(room) => format!(
                "confirmed by preflight (reservation {} ({}) has {} free VM(s) now, the new pool needs {})",
                room.reservation, room.zone, room.free_now, room.needed
            ),
            // On demand or spot: quotas are all preflight can confirm.
            None if r.strategy == crate::plan::moves::Strategy::CreateBeforeDestroy => "confirmed by preflight for quotas only (both pools counted at once); whether the zone has the VMs is known only at the create, and a stockout leaves the old pool as it is"
                .into(),
            None => "confirmed by preflight for quotas only (the old pool's delete frees its share first); whether the zone has the VMs is known only at the create, and a stockout leaves the GPUs down"
                .into(),
        },
    };
    let _ = writeln!(out, "    capacity for the new pool: {capacity}");
}

/// The mean typical duration of an operation, in seconds.
fn mean(key: &str) -> f64 {
    crate::resource::durations::mean(key).unwrap_or(0.0)
}

fn minutes(key: &str) -> String {
    crate::apply::estimate::human(mean(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::preflight::{Check, Preflight, ReplacementRoom};
    use crate::plan::{Action, Change, PLAN_FORMAT};
    use crate::resource::{Addr, Kind};
    use serde_json::json;

    const PLAIN: Printer = Printer {
        color: false,
        bars: false,
        quiet: false,
    };

    fn pool(capacity: &str) -> serde_json::Value {
        json!({
            "cluster": "c", "location": "us-central1", "name": "a3mega", "machine_type": "a3-megagpu-8g",
            "locations": ["us-central1-a"], "node_count": 32,
            "accelerator": {"type": "nvidia-h100-mega-80gb", "count": 8, "driver": "LATEST"},
            "additional_networks": [], "placement_policy": null,
            "reservation": {"name": "res", "block": null}, "capacity": capacity,
            "local_ssd_count": 0, "labels": {}, "taints": [], "gvnic": true,
            "image_type": "COS_CONTAINERD", "disk_size_gb": 200, "auto_repair": true,
            "auto_upgrade": true,
        })
    }

    fn plan(capacity: &str, preflight: Option<Preflight>) -> Plan {
        Plan {
            format: PLAN_FORMAT,
            blueprint: "bp".into(),
            lineage: String::new(),
            serial: 0,
            destroy: false,
            changes: vec![Change {
                addr: Addr::new(Kind::NodePool, "a3mega"),
                action: Action::Replace,
                id: "projects/p/locations/us-central1/clusters/c/nodePools/a3mega".into(),
                before: Some(pool(capacity)),
                after: Some(pool(capacity)),
                diffs: vec![],
                reason: None,
                dependencies: vec![],
                lifecycle: Default::default(),
            }],
            drift: vec![],
            versions: vec![],
            adoptions: vec![],
            preflight,
            notes: vec![],
            moves: vec![],
        }
    }

    fn room(free_now: u64) -> ReplacementRoom {
        ReplacementRoom {
            pool: Addr::new(Kind::NodePool, "a3mega"),
            reservation: "res".into(),
            zone: "us-central1-a".into(),
            free_now,
            freed_first: 32,
            needed: 32,
        }
    }

    fn capacity_line(plan: &Plan) -> String {
        let text = render(&PLAIN, plan);
        text.lines()
            .find_map(|l| l.strip_prefix("    capacity for the new pool: "))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string()
    }

    #[test]
    fn each_strategy_says_gpus_at_risk_order_and_time() {
        use crate::plan::moves::{PoolMove, Strategy};
        let with = |strategy| {
            let mut p = plan("reservation", None);
            p.moves = vec![PoolMove {
                pool: Addr::new(Kind::NodePool, "a3mega"),
                strategy,
                old_id: "projects/p/locations/us-central1/clusters/c/nodePools/a3mega".into(),
                new_id: "projects/p/locations/us-central1/clusters/c/nodePools/a3mega-2".into(),
                nodes_per_zone: 32,
                zones: 1,
                gpus_per_node: 8,
                free_now: None,
                continued: false,
            }];
            render(&PLAIN, &p)
        };
        let both = with(Strategy::CreateBeforeDestroy);
        assert!(both.contains("  node_pool.a3mega: 0 GPUs at risk (32 nodes × 8 × nvidia-h100-mega-80gb keep running until the new pool's are Ready)\n"), "{both}");
        assert!(both.contains("    strategy: create before destroy: create the new pool `a3mega-2`, wait for its create DONE and its nodes Ready, then delete the old pool\n"), "{both}");
        assert!(
            both.contains("    for about 10 min, the new pool's create, with both pools running\n"),
            "{both}"
        );
        let batched = with(Strategy::Batched { batch_size: 2 });
        assert!(batched.contains("  node_pool.a3mega: 16 GPUs at risk at a time (2 node(s) per zone between the pools"), "{batched}");
        assert!(
            batched.contains(
                "    strategy: in batches of 2 node(s): create the new pool `a3mega-2` with 2"
            ),
            "{batched}"
        );
        assert!(
            batched.contains("(16 rounds of a shrink and a grow after the create)"),
            "{batched}"
        );
        let first = with(Strategy::DeleteFirst);
        assert!(
            first.contains("    order: delete first, then create"),
            "{first}"
        );
        let refused = with(Strategy::Refused);
        assert!(
            refused
                .contains("    order: refused: no room beside the old pool and no --delete-first"),
            "{refused}"
        );
    }

    #[test]
    fn each_capacity_of_a_replaced_gpu_pool_is_said() {
        let text = render(&PLAIN, &plan("reservation", None));
        // Without a move chosen (a plan made before moves), the pool is deleted first.
        assert!(text.starts_with("GPU pools replaced:\n  node_pool.a3mega: 256 GPUs at risk (32 nodes × 8 × nvidia-h100-mega-80gb)"), "{text}");
        assert_eq!(
            capacity_line(&plan("reservation", None)),
            "not checked (--skip-preflight)"
        );

        // A reservation with room for the new pool beside the old one.
        let roomy = Preflight {
            checks: vec![],
            replacements: vec![room(32)],
        };
        assert_eq!(
            capacity_line(&plan("reservation", Some(roomy))),
            "confirmed by preflight (reservation res (us-central1-a) has 32 free VM(s) now, the new pool needs 32)"
        );
        let full = Preflight {
            checks: vec![],
            replacements: vec![room(0)],
        };
        let replaced = plan("reservation", Some(full));
        assert!(capacity_line(&replaced).starts_with("confirmed by preflight, but only because the old pool frees it: reservation res (us-central1-a) has 0 free VM(s) now and the new pool needs 32"));
        assert!(replaced.gpu_replacements()[0].only_after_delete);

        // A check of the pool that could not be made, or failed.
        let check = |ok: bool, unknown: bool| Check {
            subject: "reservation res (us-central1-a)".into(),
            for_resources: vec![Addr::new(Kind::NodePool, "a3mega")],
            ok,
            need: String::new(),
            available: String::new(),
            problem: None,
            fix: None,
            unknown,
            warning: false,
            sandbox_provided: false,
        };
        let unknown = Preflight {
            checks: vec![check(false, true)],
            replacements: vec![room(0)],
        };
        assert!(
            capacity_line(&plan("reservation", Some(unknown)))
                .starts_with("not confirmed: a check of the new pool could not be made")
        );
        // Compute not yet readable: no check names the pool, and none could be made.
        let mut compute = check(false, true);
        compute.for_resources.clear();
        let unread = Preflight {
            checks: vec![compute],
            replacements: vec![],
        };
        assert!(capacity_line(&plan("reservation", Some(unread))).starts_with("not confirmed"));
        let refused = Preflight {
            checks: vec![check(false, false)],
            replacements: vec![room(0)],
        };
        let refused = plan("reservation", Some(refused));
        assert!(capacity_line(&refused).ends_with("so nothing is deleted"));
        assert!(!refused.gpu_replacements()[0].only_after_delete);

        // On demand: quotas only.
        assert!(
            capacity_line(&plan("on-demand", Some(Preflight::default())))
                .starts_with("confirmed by preflight for quotas only")
        );
    }
}
