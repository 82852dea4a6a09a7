//! A plan as text, in Terraform's grammar (`+ ~ - -/+`, `# forces replacement`,
//! `Plan: X to add, Y to change, Z to destroy.`), or as JSON for machines.

use super::Printer;
use super::{fold, value_tree};
use crate::plan::preflight::Preflight;
use crate::plan::{Action, Change, Drift, FieldDiff, Plan};
use crate::resource::{Addr, Kind};
use serde_json::{Value, json};
use std::fmt::Write;

/// The human view of a plan, with alike resources folded (see [`fold`]).
pub fn render(printer: &Printer, plan: &Plan) -> String {
    render_with(printer, plan, false)
}

/// The human view of a plan; `verbose` shows every resource in full instead of folding alike
/// ones.
pub fn render_with(printer: &Printer, plan: &Plan, verbose: bool) -> String {
    let mut out = String::new();
    if !plan.versions.is_empty() && !plan.is_empty() {
        let _ = writeln!(out, "{}", printer.bold("Version stack:"));
        let width = plan
            .versions
            .iter()
            .map(|(c, _)| c.len())
            .max()
            .unwrap_or(0);
        for (component, version) in &plan.versions {
            let _ = writeln!(out, "  {component:<width$}  {version}");
        }
        out.push('\n');
    }
    for note in &plan.notes {
        let _ = writeln!(out, "{} {note}\n", printer.bold("Note:"));
    }
    let upgrade = plan.upgrade_order();
    if !upgrade.is_empty() {
        let _ = writeln!(out, "{}", printer.bold("Upgrade order:"));
        for (i, step) in upgrade.iter().enumerate() {
            let _ = writeln!(
                out,
                "  {}. {}: {} ({})",
                i + 1,
                step.addr,
                step.what,
                step.why
            );
        }
        out.push('\n');
    }
    if let Some(preflight) = plan.preflight.as_ref().filter(|p| !p.checks.is_empty()) {
        render_preflight(printer, &mut out, preflight);
    }
    if !plan.drift.is_empty() {
        let _ = writeln!(
            out,
            "{}\n",
            printer.bold("Objects have changed outside of a3ctl:")
        );
        for drift in &plan.drift {
            render_drift(printer, &mut out, drift);
        }
        out.push('\n');
    }
    if !plan.adoptions.is_empty() {
        let _ = writeln!(
            out,
            "{}\n",
            printer.bold(
                "These resources already exist and are adopted instead of created (applying the plan records them in state; nothing is created):"
            )
        );
        for a in &plan.adoptions {
            let _ = writeln!(
                out,
                "  {}: adopted existing {}",
                printer.bold(&a.addr.to_string()),
                a.id
            );
        }
        out.push('\n');
    }
    if plan.actions().next().is_none() {
        let text = if plan.adoptions.is_empty() {
            "No changes. Your infrastructure matches the blueprint.".to_string()
        } else {
            format!(
                "No changes. The adopted resources match the blueprint; applying records {} resource(s) in state.",
                plan.adoptions.len()
            )
        };
        let _ = writeln!(out, "{}", printer.bold(&text));
        if !plan.adoptions.is_empty() {
            out.push_str(&summary_line(printer, plan));
        }
        return out;
    }
    let _ = writeln!(
        out,
        "Resource actions are indicated with the following symbols:"
    );
    // `(action, forgotten)` of each change.
    let actions: Vec<(Action, bool)> = plan
        .actions()
        .map(|c| (c.action, c.lifecycle.keep_on_destroy))
        .collect();
    for (action, forgotten, glyph, text) in [
        (Action::Create, false, "+", "create"),
        (Action::Update, false, "~", "update in-place"),
        (
            Action::Replace,
            false,
            "-/+",
            "destroy and then create replacement",
        ),
        (Action::Delete, false, "-", "destroy"),
        (Action::Delete, true, ".", "forget (left in the cloud)"),
    ] {
        if actions
            .iter()
            .any(|(a, f)| *a == action && (action != Action::Delete || *f == forgotten))
        {
            let _ = writeln!(out, "  {} {text}", printer.glyph(glyph));
        }
    }
    let _ = writeln!(out, "\na3ctl will perform the following actions:\n");
    let changes: Vec<&Change> = plan.actions().collect();
    let entries = if verbose {
        changes.iter().map(|c| fold::Entry::Full(c)).collect()
    } else {
        fold::fold(&changes)
    };
    let mut folded = 0;
    let mut rdma_said = false;
    for entry in &entries {
        match entry {
            fold::Entry::Full(change) => {
                let aside = (!rdma_said && first_rdma(&change.addr)).then_some(RDMA_FROM_0);
                rdma_said |= aside.is_some();
                render_change(printer, &mut out, change, aside);
            }
            fold::Entry::More {
                like,
                rest,
                differences,
            } => {
                folded += rest.len();
                render_more(printer, &mut out, like, rest, differences);
            }
        }
    }
    if folded > 0 {
        let _ = writeln!(
            out,
            "{folded} resources are folded into the one they are like; `--verbose` shows each in full.\n"
        );
    }
    render_upgrades(printer, &mut out, plan);
    out.push_str(&super::gpu_replacements::render(printer, plan));
    out.push_str(&summary_line(printer, plan));
    out
}

/// `Upgrades:` what the plan sets about GKE's upgrades, for the cluster and pools it creates or
/// whose maintenance policy, upgrade settings or version it changes: the maintenance window and
/// exclusions, and per pool how many nodes are replaced at a time, how many batches that is and
/// an estimate of how long a node upgrade takes.
fn render_upgrades(printer: &Printer, out: &mut String, plan: &Plan) {
    use crate::resource::kinds::cluster::MaintenancePolicy;
    use crate::resource::kinds::node_pool::NodePoolSpec;
    // What a plan changes about upgrades: a new resource's settings are listed with it, so a
    // create plan has no `Upgrades:` section.
    let touches = |c: &Change, fields: &[&str]| {
        c.action == Action::Replace || c.diffs.iter().any(|d| fields.iter().any(|f| d.field == *f))
    };
    let mut lines = Vec::new();
    for change in plan.actions() {
        let Some(after) = &change.after else { continue };
        match change.addr.kind {
            Kind::Cluster if touches(change, &["maintenance_policy"]) => {
                let Some(policy) = after
                    .get("maintenance_policy")
                    .filter(|p| !p.is_null())
                    .and_then(|p| serde_json::from_value::<MaintenancePolicy>(p.clone()).ok())
                else {
                    continue;
                };
                lines.push(format!("{}:", printer.bold(&change.addr.to_string())));
                lines.push(match &policy.window {
                    Some(w) => format!(
                        "  window: {} to {} (UTC), repeating {}",
                        w.start, w.end, w.recurrence
                    ),
                    None => {
                        "  window: none (GKE may upgrade at any time no exclusion covers)".into()
                    }
                });
                if policy.exclusions.is_empty() {
                    lines.push("  exclusions: none".into());
                }
                for (name, e) in &policy.exclusions {
                    let from = e.start.as_deref().unwrap_or("when applied");
                    let to = if e.until_end_of_support {
                        "until the version's end of support"
                    } else {
                        e.end.as_deref().unwrap_or("?")
                    };
                    let to = if e.until_end_of_support {
                        to.to_string()
                    } else {
                        format!("to {to}")
                    };
                    lines.push(format!("  exclusion {name}: {} from {from} {to}", e.scope));
                }
            }
            Kind::NodePool if touches(change, &["upgrade_settings", "version"]) => {
                let Ok(spec) = serde_json::from_value::<NodePoolSpec>(after.clone()) else {
                    continue;
                };
                let Some(settings) = &spec.upgrade_settings else {
                    continue;
                };
                let zones = spec.locations.len().max(1) as u64;
                let (at_once, batches) = settings.batches(spec.node_count);
                let batches = batches * zones;
                let nodes = spec.node_count * zones;
                let how = match &settings.blue_green {
                    Some(bg) if settings.strategy == "BLUE_GREEN" => format!(
                        "blue-green, {} first (the whole pool again), then {} drained at a time, {}s between batches, the old pool kept {}s",
                        count(nodes, "new node"),
                        count(at_once, "old node"),
                        bg.batch_soak_seconds,
                        bg.pool_soak_seconds
                    ),
                    _ => format!(
                        "surge, {} at a time per zone ({} extra, {} down)",
                        count(at_once, "node"),
                        settings.max_surge,
                        settings.max_unavailable
                    ),
                };
                lines.push(format!(
                    "{}: {how}: {} in {}, about {} (estimate)",
                    printer.bold(&change.addr.to_string()),
                    count(nodes, "node"),
                    count(batches, "batch"),
                    crate::apply::estimate::human(batches as f64 * per_batch_secs())
                ));
            }
            _ => {}
        }
    }
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", printer.bold("Upgrades:"));
    for line in lines {
        let _ = writeln!(out, "  {line}");
    }
    let _ = writeln!(
        out,
        "  (a node upgrade's estimate: {} per batch, the mean of the simulator's `container.nodePool.update`; GKE's own time varies with drains and image pulls)\n",
        crate::apply::estimate::human(per_batch_secs())
    );
}

/// `1 node`, `32 nodes`, `1 batch`, `4 batches`.
fn count(n: u64, what: &str) -> String {
    match (n, what.ends_with("ch")) {
        (1, _) => format!("1 {what}"),
        (_, true) => format!("{n} {what}es"),
        _ => format!("{n} {what}s"),
    }
}

/// Seconds one batch of a node upgrade takes: the mean typical `container.nodePool.update`
/// ([`crate::resource::durations`]), the figure the simulator uses for a node pool update.
fn per_batch_secs() -> f64 {
    crate::resource::durations::mean("container.nodePool.update").unwrap_or(180.0)
}

/// The human view of a refresh-only plan: what changed outside a3ctl, and what accepting it does.
pub fn render_refresh_only(printer: &Printer, drift: &[Drift]) -> String {
    let mut out = String::new();
    if drift.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            printer.bold("No changes. The state matches the cloud: nothing changed outside a3ctl.")
        );
        return out;
    }
    let _ = writeln!(
        out,
        "{}\n",
        printer.bold("Objects have changed outside of a3ctl:")
    );
    for d in drift {
        render_drift(printer, &mut out, d);
    }
    let gone = drift.iter().filter(|d| d.gone).count();
    let _ = writeln!(
        out,
        "\nThis is a refresh-only plan: applying it (`a3ctl apply --refresh-only`) records these live values in state{} and changes no cloud resource. To make the cloud match the blueprint instead, run `a3ctl plan`.",
        if gone > 0 {
            format!(" and forgets the {gone} deleted resource(s)")
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        out,
        "{} {} changed outside a3ctl, {gone} deleted.",
        printer.bold("Refresh:"),
        drift.len() - gone
    );
    out
}

/// The machine view of a refresh-only plan.
pub fn json_refresh_only(blueprint: &str, lineage: &str, serial: u64, drift: &[Drift]) -> Value {
    json!({
        "format_version": "1",
        "refresh_only": true,
        "blueprint": blueprint,
        "lineage": lineage,
        "serial": serial,
        "resource_drift": drift,
    })
}

/// `Preflight:` and one line per check: ✓, ✗, ? (could not be checked) or ! (a warning), what it
/// is (`, sandbox-provided` when the sandbox made it), need and available; a failed, unknown or
/// warning check adds its problem and fix.
fn render_preflight(printer: &Printer, out: &mut String, preflight: &Preflight) {
    let _ = writeln!(out, "{}", printer.bold("Preflight:"));
    for check in &preflight.checks {
        let mark = if check.unknown {
            "?".to_string()
        } else if check.warning {
            "!".to_string()
        } else {
            printer.check_mark(check.ok)
        };
        let _ = writeln!(
            out,
            "  {mark} {}{}: need {}, available {}",
            check.subject,
            if check.sandbox_provided {
                ", sandbox-provided"
            } else {
                ""
            },
            check.need,
            check.available
        );
        if let Some(problem) = &check.problem {
            let _ = writeln!(out, "      {problem}");
        }
        if let Some(fix) = &check.fix {
            let _ = writeln!(out, "      fix: {fix}");
        }
    }
    out.push('\n');
}

/// The plan in one line, for `-q`: `No changes. ...` or `Plan: X to add, ...`.
pub fn brief(printer: &Printer, plan: &Plan) -> String {
    if plan.actions().next().is_none() && plan.adoptions.is_empty() {
        "No changes. Your infrastructure matches the blueprint.\n".to_string()
    } else {
        summary_line(printer, plan)
    }
}

/// `Plan: X to add, Y to change, Z to destroy.`
pub fn summary_line(printer: &Printer, plan: &Plan) -> String {
    let s = plan.summary();
    let adopt = match plan.adoptions.len() {
        0 => String::new(),
        n => format!(" {n} to adopt,"),
    };
    let forget = match s.forget {
        0 => String::new(),
        n => format!(" ({n} to forget, left in the cloud)"),
    };
    format!(
        "{}{adopt} {} to add, {} to change, {} to destroy{forget}.\n",
        printer.bold("Plan:"),
        s.add,
        s.change,
        s.destroy
    )
}

fn render_drift(printer: &Printer, out: &mut String, drift: &Drift) {
    if drift.gone {
        let _ = writeln!(
            out,
            "  # {} has been deleted",
            printer.bold(&drift.addr.to_string())
        );
        return;
    }
    let _ = writeln!(
        out,
        "  # {} has changed",
        printer.bold(&drift.addr.to_string())
    );
    render_diffs(printer, out, &drift.addr, &drift.diffs, None, None);
}

/// Said once, under the first RDMA subnet or Network the plan shows: their numbers start at 0
/// where the gVNIC ones start at 1, as Google's recipes name them (GoogleCloudPlatform/
/// cluster-toolkit `examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml`, `examples/gke-a4/gke-a4.yaml`:
/// subnets `…-rdma-sub-0`.. and Networks `rdma-0`.. beside `gpunet-1`/`vpc1`), so their
/// manifests and NCCL settings apply unchanged (docs/blueprint.md says the same).
pub const RDMA_FROM_0: &str = "(RDMA networks count from 0, `rdma-0` .. `rdma-7`, where the gVNIC ones count from 1: the names Google's A3 Ultra and A4 recipes use)";

/// Whether `addr` is the first of the RDMA subnets or their Kubernetes objects (`subnetwork.rdma-0`,
/// `k8s.network/-/rdma-0`).
fn first_rdma(addr: &crate::resource::Addr) -> bool {
    addr.name == "rdma-0" || addr.name.ends_with("/rdma-0")
}

/// One change: its headline, why (unless a destroy), an `aside` said under the headline, its
/// address and id, and its fields.
fn render_change(printer: &Printer, out: &mut String, change: &Change, aside: Option<&str>) {
    let addr = printer.bold(&change.addr.to_string());
    let headline = match change.action {
        Action::Create => "will be created",
        Action::Update => "will be updated in-place",
        Action::Replace => "must be replaced",
        Action::Delete if change.lifecycle.keep_on_destroy => {
            "will be forgotten, not destroyed: it stays in the cloud (a3ctl never disables an API)"
        }
        Action::Delete => "will be destroyed",
        Action::NoOp => return,
    };
    let _ = writeln!(out, "  # {addr} {headline}");
    // Under a destroy every resource goes "because destroy": the plan's header says it once.
    if let Some(reason) = change.reason.as_ref().filter(|r| r.as_str() != "destroy") {
        let _ = writeln!(out, "  # (because {reason})");
    }
    if let Some(aside) = aside {
        let _ = writeln!(out, "  # {aside}");
    }
    let _ = writeln!(
        out,
        "  {} {} ({})",
        printer.glyph(glyph(change)),
        change.addr,
        value_tree::with_project_number(&change.id)
    );
    match change.action {
        Action::Create => {
            if let Some(Value::Object(mut after)) = change.after.as_ref().map(value_tree::redacted)
            {
                after.retain(|field, value| !value.is_null() && !internal(change.addr.kind, field));
                let width = after.keys().map(String::len).max().unwrap_or(0);
                for (field, value) in &after {
                    match value_tree::inline(value, true) {
                        Some(text) => {
                            let _ = writeln!(
                                out,
                                "      {} {field:width$} = {text}",
                                printer.glyph("+")
                            );
                        }
                        None => {
                            let indicator = value_tree::block_indicator(value)
                                .map(|i| format!(" {i}"))
                                .unwrap_or_default();
                            let _ = writeln!(
                                out,
                                "      {} {field:width$} ={indicator}",
                                printer.glyph("+")
                            );
                            push_lines(out, &value_tree::lines(value, 10));
                        }
                    }
                }
            }
        }
        Action::Update | Action::Replace => {
            render_diffs(
                printer,
                out,
                &change.addr,
                &change.diffs,
                change.before.as_ref(),
                change.after.as_ref(),
            );
        }
        Action::Delete | Action::NoOp => {}
    }
    out.push('\n');
}

/// Fields a spec keeps for a3ctl's own bookkeeping, not settings of the cloud: left out of a
/// create's listing (a change to one still shows, as the drift it is). The cluster's
/// `bootstrap_pool` (whether GKE's required first pool is still there) and `gpudirect_family`
/// (which GPUDirect stack its objects follow); an object's `ready` (the condition the apply waits
/// for) and a release's `missing` (its objects found absent, to reinstall).
fn internal(kind: Kind, field: &str) -> bool {
    match kind {
        Kind::Cluster => matches!(field, "bootstrap_pool" | "gpudirect_family"),
        Kind::Kubernetes => matches!(field, "ready" | "missing"),
        _ => false,
    }
}

fn glyph(change: &Change) -> &'static str {
    match change.action {
        Action::Delete if change.lifecycle.keep_on_destroy => ".",
        action => action.glyph(),
    }
}

fn push_lines(out: &mut String, lines: &[String]) {
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
}

/// `~ path = old -> new` per changed path; a value that does not fit on a line (an object, a
/// script) is drawn below its path as an `old:` and a `new:` tree, a changed script line by line.
/// A sensitive path (see [`value_tree::redacted`]) shows neither value; without the specs (drift),
/// a Secret's data and every env value count as sensitive.
fn render_diffs(
    printer: &Printer,
    out: &mut String,
    addr: &Addr,
    diffs: &[FieldDiff],
    before: Option<&Value>,
    after: Option<&Value>,
) {
    let width = diffs.iter().map(|d| d.field.len()).max().unwrap_or(0);
    let secret = addr.kind == Kind::Kubernetes && addr.name.starts_with("secret/");
    let sensitive = |path: &str| {
        if before.is_none() && after.is_none() {
            return value_tree::is_sensitive_path(secret, path);
        }
        value_tree::in_secret_data(secret, path)
            || [before, after]
                .into_iter()
                .flatten()
                .any(|spec| value_tree::is_sensitive(spec, path))
    };
    for d in diffs {
        let forces = if d.forces_replacement {
            " # forces replacement"
        } else {
            ""
        };
        let glyph = printer.glyph("~");
        if sensitive(&d.field) {
            let _ = writeln!(
                out,
                "      {glyph} {:width$} = {} -> {}{forces}",
                d.field,
                value_tree::SENSITIVE_TEXT,
                value_tree::SENSITIVE_TEXT
            );
            continue;
        }
        // An added or removed env entry carries its name along: redacted like a spec.
        let d = FieldDiff {
            before: value_tree::redacted(&d.before),
            after: value_tree::redacted(&d.after),
            ..d.clone()
        };
        let one_line = |v: &Value| match v {
            Value::Null => Some("(none)".to_string()),
            other => value_tree::inline(other, true),
        };
        if let (Some(old), Some(new)) = (one_line(&d.before), one_line(&d.after)) {
            let _ = writeln!(
                out,
                "      {glyph} {:width$} = {old} -> {new}{forces}",
                d.field
            );
            continue;
        }
        if let Some(lines) = value_tree::line_diff(&d.before, &d.after) {
            let indicator = value_tree::block_indicator(&d.after).unwrap_or("|");
            let _ = writeln!(out, "      {glyph} {} = {indicator}{forces}", d.field);
            for (mark, line) in lines {
                let mark = match mark {
                    ' ' => " ".to_string(),
                    m => printer.glyph(&m.to_string()),
                };
                let _ = writeln!(out, "{}", format!("          {mark} {line}").trim_end());
            }
            continue;
        }
        let _ = writeln!(out, "      {glyph} {}{forces}", d.field);
        for (label, value) in [("old", &d.before), ("new", &d.after)] {
            match one_line(value) {
                Some(text) => {
                    let _ = writeln!(out, "          {label}: {text}");
                }
                None => {
                    let indicator = value_tree::block_indicator(value)
                        .map(|i| format!(" {i}"))
                        .unwrap_or_default();
                    let _ = writeln!(out, "          {label}:{indicator}");
                    push_lines(out, &value_tree::lines(value, 12));
                }
            }
        }
    }
}

/// The line that stands for the members of a group after its first (see [`fold`]):
/// `+ 7 more firewalls like firewall.gpu-0: firewall.gpu-1 … firewall.gpu-7 (differences: name)`.
fn render_more(
    printer: &Printer,
    out: &mut String,
    like: &Change,
    rest: &[&Change],
    differences: &[String],
) {
    let same = match like.action {
        Action::Update | Action::Replace => " with the same changes",
        _ => "",
    };
    let differences = if differences.is_empty() {
        " (no field differs)".to_string()
    } else {
        format!(" (differences: {})", differences.join(", "))
    };
    let _ = writeln!(
        out,
        "  {} {} more {} like {}{same}: {}{differences}\n",
        printer.glyph(glyph(like)),
        rest.len(),
        plural(like),
        like.addr,
        fold::members(rest)
    );
}

/// What a group's members are called: `firewalls`, `node pools`, `Network objects`.
fn plural(change: &Change) -> String {
    if change.addr.kind == crate::resource::Kind::Kubernetes {
        let spec = change.after.as_ref().or(change.before.as_ref());
        if let Some(kind) = spec
            .and_then(|s| s.get("object"))
            .and_then(|o| o.get("kind"))
            .and_then(Value::as_str)
        {
            return format!("{kind} objects");
        }
        return "Kubernetes objects".into();
    }
    let name = change.addr.kind.as_str().replace('_', " ");
    match name.strip_suffix('y') {
        Some(stem) => format!("{stem}ies"),
        None => format!("{name}s"),
    }
}

/// The machine view: the plan itself plus its summary and a format version.
pub fn json(plan: &Plan) -> Value {
    let s = plan.summary();
    let mut value = json!({
        "format_version": "1",
        "blueprint": plan.blueprint,
        "lineage": plan.lineage,
        "serial": plan.serial,
        "destroy": plan.destroy,
        "summary": { "adopt": plan.adoptions.len(), "add": s.add, "change": s.change, "destroy": s.destroy, "forget": s.forget },
        "resource_changes": plan.changes.iter().map(|c| json!({
            "address": c.addr.to_string(),
            "id": c.id,
            "action": c.action,
            "before": c.before,
            "after": c.after,
            "diffs": c.diffs,
            "reason": c.reason,
        })).collect::<Vec<_>>(),
        "resource_drift": plan.drift,
        "versions": plan.versions.iter().map(|(c, v)| json!({"component": c, "version": v})).collect::<Vec<_>>(),
        "adoptions": plan.adoptions.iter().map(|a| json!({
            "address": a.addr.to_string(),
            "id": a.id,
            "live": a.spec,
        })).collect::<Vec<_>>(),
        "preflight": plan.preflight,
        "notes": plan.notes,
        "upgrade_order": plan.upgrade_order(),
    });
    // Only in plans that replace a GPU pool.
    let replacements = plan.gpu_replacements();
    if !replacements.is_empty() {
        value["gpu_replacements"] = json!(replacements);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{FieldDiff, PLAN_FORMAT};
    use crate::resource::{Addr, Kind, Lifecycle};

    fn plan(changes: Vec<Change>) -> Plan {
        Plan {
            format: PLAN_FORMAT,
            blueprint: "bp".into(),
            lineage: "l".into(),
            serial: 1,
            destroy: false,
            changes,
            drift: vec![],
            versions: vec![],
            adoptions: vec![],
            preflight: None,
            notes: vec![],
            moves: vec![],
        }
    }

    #[test]
    fn replacement_names_the_field_that_forces_it() {
        let change = Change {
            addr: Addr::new(Kind::NodePool, "a3mega"),
            action: Action::Replace,
            id: "projects/p/locations/r/clusters/c/nodePools/a3mega".into(),
            before: None,
            after: None,
            diffs: vec![FieldDiff {
                field: "machine_type".into(),
                before: json!("a3-highgpu-8g"),
                after: json!("a3-megagpu-8g"),
                forces_replacement: true,
            }],
            reason: None,
            dependencies: vec![],
            lifecycle: Lifecycle::default(),
        };
        let printer = Printer {
            color: false,
            bars: false,
            quiet: false,
        };
        let text = render(&printer, &plan(vec![change]));
        assert!(
            text.contains("# node_pool.a3mega must be replaced"),
            "{text}"
        );
        assert!(text.contains("-/+ node_pool.a3mega"), "{text}");
        assert!(
            text.contains(
                "machine_type = \"a3-highgpu-8g\" -> \"a3-megagpu-8g\" # forces replacement"
            ),
            "{text}"
        );
        assert!(
            text.ends_with("Plan: 1 to add, 0 to change, 1 to destroy.\n"),
            "{text}"
        );
    }

    fn printer() -> Printer {
        Printer {
            color: false,
            bars: false,
            quiet: false,
        }
    }

    fn k8s(name: &str, action: Action, object: Value) -> Change {
        Change {
            addr: Addr::new(Kind::Kubernetes, name),
            action,
            id: format!("k8s/{name}"),
            before: None,
            after: Some(json!({"cluster": "c", "object": object})),
            diffs: vec![],
            reason: None,
            dependencies: vec![],
            lifecycle: Lifecycle::default(),
        }
    }

    #[test]
    fn a_created_kubernetes_object_reads_as_a_tree_with_its_script_whole() {
        let script = format!("set -e\n{}\necho done\n", "x".repeat(200));
        let change = k8s(
            "daemonset/kube-system/installer",
            Action::Create,
            json!({
                "kind": "DaemonSet",
                "metadata": {"name": "installer", "namespace": "kube-system"},
                "spec": {"containers": [{"name": "i", "command": ["sh", "-c", script]}]},
            }),
        );
        let text = render(&printer(), &plan(vec![change]));
        let expected = format!(
            "  + k8s.daemonset/kube-system/installer (k8s/daemonset/kube-system/installer)
      + cluster = \"c\"
      + object  =
          kind: \"DaemonSet\"
          metadata:
            name: \"installer\"
            namespace: \"kube-system\"
          spec:
            containers:
              - name: \"i\"
                command:
                  - \"sh\"
                  - \"-c\"
                  - |
                    set -e
                    {}
                    echo done
",
            "x".repeat(200)
        );
        assert!(text.contains(&expected), "{text}");
        assert!(!text.contains("..."), "{text}");
    }

    #[test]
    fn an_update_shows_only_the_changed_paths_and_a_script_line_by_line() {
        let mut change = k8s("configmap/-/env", Action::Update, json!({}));
        change.diffs = vec![
            FieldDiff {
                field: "object.data.replicas".into(),
                before: json!("1"),
                after: json!("2"),
                forces_replacement: false,
            },
            FieldDiff {
                field: "object.data[\"env.sh\"]".into(),
                before: json!("export A=1\nexport B=2\n"),
                after: json!("export A=1\nexport B=3\n"),
                forces_replacement: false,
            },
        ];
        let text = render(&printer(), &plan(vec![change]));
        assert!(
            text.contains(
                "      ~ object.data.replicas  = \"1\" -> \"2\"
      ~ object.data[\"env.sh\"] = |
            export A=1
          - export B=2
          + export B=3
"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_secret_s_data_is_never_shown() {
        let mut change = k8s(
            "secret/default/db",
            Action::Create,
            json!({"kind": "Secret", "data": {"password": "aHVudGVyMg=="}}),
        );
        let text = render(&printer(), &plan(vec![change.clone()]));
        assert!(text.contains("password: (sensitive value)"), "{text}");
        assert!(!text.contains("aHVudGVyMg=="), "{text}");
        change.action = Action::Update;
        change.before = change.after.clone();
        change.diffs = vec![FieldDiff {
            field: "object.data.password".into(),
            before: json!("aHVudGVyMg=="),
            after: json!("c2VjcmV0"),
            forces_replacement: false,
        }];
        let text = render(&printer(), &plan(vec![change]));
        assert!(
            text.contains("~ object.data.password = (sensitive value) -> (sensitive value)"),
            "{text}"
        );
        assert!(!text.contains("c2VjcmV0"), "{text}");
    }

    #[test]
    fn drift_never_shows_a_secret_or_an_env_value() {
        let drift = Drift {
            addr: Addr::new(Kind::Kubernetes, "secret/default/db"),
            gone: false,
            diffs: vec![
                FieldDiff {
                    field: "object.data.password".into(),
                    before: json!("aHVudGVyMg=="),
                    after: json!("c2VjcmV0"),
                    forces_replacement: false,
                },
                FieldDiff {
                    field: "object.spec.containers[0].env[0].value".into(),
                    before: json!("hunter2"),
                    after: json!("hunter3"),
                    forces_replacement: false,
                },
                FieldDiff {
                    field: "object.spec.containers[0].env[1]".into(),
                    before: Value::Null,
                    after: json!({"name": "API_TOKEN", "value": "t0ken"}),
                    forces_replacement: false,
                },
            ],
        };
        let text = render_refresh_only(&printer(), &[drift]);
        for secret in ["aHVudGVyMg==", "c2VjcmV0", "hunter2", "hunter3", "t0ken"] {
            assert!(!text.contains(secret), "{text}");
        }
        assert!(
            text.contains(
                "object.data.password                   = (sensitive value) -> (sensitive value)"
            ),
            "{text}"
        );
        assert!(text.contains("API_TOKEN"), "{text}");
    }

    #[test]
    fn alike_resources_fold_unless_verbose() {
        let changes: Vec<Change> = (0..3)
            .map(|i| Change {
                addr: Addr::new(Kind::Network, format!("gpu-{i}")),
                action: Action::Create,
                id: format!("projects/p/global/networks/n-{i}"),
                before: None,
                after: Some(json!({"name": format!("n-{i}"), "mtu": 8244})),
                diffs: vec![],
                reason: None,
                dependencies: vec![],
                lifecycle: Lifecycle::default(),
            })
            .collect();
        let p = plan(changes);
        let text = render(&printer(), &p);
        assert!(
            text.contains(
                "  + network.gpu-0 (projects/p/global/networks/n-0)
      + name = \"n-0\"
      + mtu  = 8244

  + 2 more networks like network.gpu-0: network.gpu-1, network.gpu-2 (differences: name)

2 resources are folded into the one they are like; `--verbose` shows each in full.

Plan: 3 to add, 0 to change, 0 to destroy.
"
            ),
            "{text}"
        );
        let full = render_with(&printer(), &p, true);
        assert!(
            full.contains("  + network.gpu-2 (projects/p/global/networks/n-2)"),
            "{full}"
        );
        assert!(!full.contains("more networks"), "{full}");
        assert_eq!(json(&p)["resource_changes"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn empty_plan_says_no_changes() {
        let printer = Printer {
            color: false,
            bars: false,
            quiet: false,
        };
        assert!(
            render(&printer, &plan(vec![]))
                .contains("No changes. Your infrastructure matches the blueprint.")
        );
    }

    #[test]
    fn adoptions_are_listed_and_counted() {
        let printer = Printer {
            color: false,
            bars: false,
            quiet: false,
        };
        let mut p = plan(vec![]);
        p.adoptions.push(crate::plan::Adoption {
            addr: Addr::new(Kind::Network, "primary"),
            id: "projects/p/global/networks/n".into(),
            spec: json!({}),
            outputs: json!({}),
            dependencies: vec![],
            lifecycle: Lifecycle::default(),
        });
        assert!(!p.is_empty());
        let text = render(&printer, &p);
        assert!(
            text.contains("  network.primary: adopted existing projects/p/global/networks/n\n"),
            "{text}"
        );
        assert!(
            text.contains("The adopted resources match the blueprint"),
            "{text}"
        );
        assert!(
            text.ends_with("Plan: 1 to adopt, 0 to add, 0 to change, 0 to destroy.\n"),
            "{text}"
        );
        assert_eq!(json(&p)["summary"]["adopt"], 1);
    }
}
