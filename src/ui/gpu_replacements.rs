//! `GPU pools replaced:` the section of a plan that says, for each GPU node pool it replaces, how
//! many GPUs go down, in which order, and whether the new pool's capacity is confirmed: a
//! replacement deletes the old pool first, and GPUs are scarce.

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
    let _ = writeln!(
        out,
        "  {}: {} GPUs down ({} × {} {}) from the old pool's delete until the new pool's nodes are up",
        r.addr,
        r.gpus_down,
        if r.nodes == 1 {
            "1 node".to_string()
        } else {
            format!("{} nodes", r.nodes)
        },
        r.gpus_per_node,
        r.gpu_type
    );
    let machine = if r.machine_type_before == r.machine_type_after {
        String::new()
    } else {
        format!(
            "; the new pool is {} (was {})",
            r.machine_type_after, r.machine_type_before
        )
    };
    let _ = writeln!(
        out,
        "    order: delete first, then create (a pool's name is held by one pool at a time){machine}"
    );
    let capacity = match r.capacity {
        "refused" => {
            "not confirmed: preflight refused the new pool (see Preflight above), so nothing is deleted"
                .to_string()
        }
        "unknown" => {
            "not confirmed: a check of the new pool could not be made (see Preflight above)".into()
        }
        "not_checked" => "not checked (--skip-preflight)".into(),
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
            None => "confirmed by preflight for quotas only (the old pool's delete frees its share first); whether the zone has the VMs is known only at the create, and a stockout leaves the GPUs down"
                .into(),
        },
    };
    let _ = writeln!(out, "    capacity for the new pool: {capacity}");
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
    fn each_capacity_of_a_replaced_gpu_pool_is_said() {
        let text = render(&PLAIN, &plan("reservation", None));
        assert!(text.starts_with("GPU pools replaced:\n  node_pool.a3mega: 256 GPUs down (32 nodes × 8 nvidia-h100-mega-80gb)"), "{text}");
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
