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
