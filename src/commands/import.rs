//! `a3ctl import ADDR ID BLUEPRINT`: take one existing cloud resource under the blueprint's
//! management without changing it.
//!
//! The address must be one the blueprint declares (checked before any cloud call, with a "did
//! you mean" over the graph's addresses), and the id must name the object the blueprint gives
//! that address: a3ctl derives every name from the blueprint, and a plan always acts on the
//! blueprint's identity, so importing another object under the address would point later
//! updates at the wrong one. The id may be written as gcloud prints it ([`normalise_id`]). The
//! live resource is read once through the provider and recorded, under the state lock, with its
//! live configuration as the recorded spec and the graph's dependencies and lifecycle.

use super::ExitStatus;
use super::apply::lock_state;
use super::session::Session;
use crate::apply::executor::now_rfc3339;
use crate::cli::Global;
use crate::cloud::{Settle, Target};
use crate::plan::Adoption;
use crate::plan::refresh::read;
use crate::resource::{Addr, Desired, Kind};
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use serde_json::Value;
use std::path::Path;

pub async fn run(
    global: &Global,
    printer: Printer,
    addr: &str,
    id: &str,
    blueprint: &Path,
) -> Result<ExitStatus, Failure> {
    let session = Session::open(global, printer, blueprint).await?;
    let desired = find(&session, addr)?.clone();
    let Some(id) = normalise_id(id, &desired.id) else {
        return Err(Failure::new(format!(
            "`{id}` is not the object the blueprint calls `{}`",
            desired.addr
        ))
        .cause(format!(
            "blueprint `{}` names it `{}`; a3ctl derives every name from the blueprint's `name`",
            session.blueprint.name, desired.id
        ))
        .hint(format!(
            "import it with that id (`a3ctl import {} {} BLUEPRINT`), or set the blueprint's `name` (and settings) to match the existing resources",
            desired.addr,
            desired.id,
        )));
    };
    let _lock = lock_state(
        &session.printer,
        &session.store,
        "import",
        &super::session::state_flags(global),
        blueprint,
    )?;
    let (mut state, _) = session.load_state()?;
    if let Some(record) = state.resources.get(&desired.addr) {
        return Err(Failure::new(format!(
            "`{}` is already managed: state records it as `{}`",
            desired.addr, record.id
        ))
        .hint("`a3ctl plan` shows how it differs from the blueprint; to import it again, remove it from state first"));
    }
    if state.pending_for(&desired.addr).is_some() {
        return Err(Failure::new(format!(
            "An interrupted apply is still working on `{}`",
            desired.addr
        ))
        .hint("run `a3ctl apply` to finish it first"));
    }
    if let Some(parent) = &desired.lifecycle.deleted_with
        && desired.addr.kind == Kind::Kubernetes
        && !state.resources.contains_key(parent)
    {
        return Err(Failure::new(format!(
            "`{}` lives in `{parent}`, which is not in state yet",
            desired.addr
        ))
        .hint(format!(
            "import `{parent}` first: a3ctl reaches the object through its cluster's recorded endpoint"
        )));
    }
    let target = Target {
        addr: desired.addr.clone(),
        id: id.clone(),
        spec: desired.spec.clone(),
        outputs: Value::Null,
        context: state.context(&desired.dependencies),
        lifecycle: desired.lifecycle.clone(),
    };
    let observed = read(session.provider.as_ref(), &target)
        .await
        .map_err(|e| Failure::cloud(format!("Cannot read `{id}`"), &e))?
        .ok_or_else(|| {
            Failure::new(format!("`{id}` does not exist, so there is nothing to import"))
                .hint("check the project and name (e.g. with gcloud); to create it instead, run `a3ctl apply`")
        })?;
    match session.provider.settle(&target, &observed) {
        Settle::Ready => {}
        Settle::Pending { status } => printer.info(&format!(
            "warning: `{id}` is not ready yet ({status}); it is imported as it is now"
        )),
        Settle::Failed { message } => printer.info(&format!(
            "warning: `{id}` is in a failed state ({message}); it is imported as it is now"
        )),
        Settle::Deleting { status } => printer.info(&format!(
            "warning: `{id}` is being deleted ({status}); the next plan will create it again once it is gone"
        )),
    }
    let mut observed = observed;
    // a3ctl's own settings start as the blueprint says: the cloud has no value for them.
    crate::resource::spec::keep_local(desired.addr.kind, &mut observed.spec, &desired.spec);
    // Its maintenance policy and upgrade settings stay its own unless the blueprint declares them.
    super::session::without_undeclared_defaults(
        &session.blueprint,
        &desired.addr,
        &mut observed.spec,
    );
    let adoption = Adoption {
        addr: desired.addr.clone(),
        id: id.clone(),
        spec: observed.spec,
        outputs: observed.outputs,
        dependencies: desired.dependencies.clone(),
        lifecycle: desired.lifecycle.clone(),
    };
    state
        .resources
        .insert(desired.addr.clone(), adoption.record(now_rfc3339()));
    session.save_state(&mut state)?;
    printer.err(&crate::ui::invocation::complete(&format!(
        "{} `{}` is now managed as `{}`; nothing in the cloud was changed.\n\nRun `a3ctl plan` to see how it differs from the blueprint.\n",
        printer.bold("Import successful!"),
        id,
        desired.addr,
    )));
    Ok(ExitStatus::Success)
}

/// The graph's resource at `text`, or an error with the nearest address.
fn find<'s>(session: &'s Session, text: &str) -> Result<&'s Desired, Failure> {
    let resources = session.graph.resources();
    if let Ok(addr) = text.parse::<Addr>()
        && let Some(found) = resources.iter().find(|d| d.addr == addr)
    {
        return Ok(found);
    }
    let known: Vec<String> = resources.iter().map(|d| d.addr.to_string()).collect();
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    let what = match text.parse::<Addr>() {
        Ok(_) => format!(
            "Blueprint `{}` declares no resource `{text}`",
            session.blueprint.name
        ),
        Err(e) => e.to_string(),
    };
    let list = "`a3ctl graph BLUEPRINT` lists every address".to_string();
    Err(
        Failure::new(what).hint(match crate::blueprint::did_you_mean(text, &known) {
            Some(near) => format!("did you mean `{near}`? {list}"),
            None => list,
        }),
    )
}

/// `desired` (the blueprint's identity of a resource) when `given` names the same object: the
/// identity itself, a bare name or any trailing part of the path (`a3high-net`,
/// `global/networks/a3high-net`), a URL or selfLink as gcloud prints it
/// (`https://www.googleapis.com/compute/v1/projects/...`, GKE's `.../zones/<location>/...`), or a
/// bucket as `gs://name`. `None` when it names another object.
pub fn normalise_id(given: &str, desired: &str) -> Option<String> {
    let mut path = given.trim().trim_end_matches('/');
    if let Some(i) = path.find("projects/") {
        path = &path[i..];
    } else if let Some(bucket) = path.strip_prefix("gs://") {
        path = bucket;
    } else if let Some(i) = path.find("/b/") {
        path = &path[i + 3..];
    }
    let path = if desired.contains("/locations/") {
        path.replace("/zones/", "/locations/")
    } else {
        path.to_string()
    };
    (!path.is_empty() && (path == desired || desired.ends_with(&format!("/{path}"))))
        .then(|| desired.to_string())
}

#[cfg(test)]
mod tests {
    use super::normalise_id;

    #[test]
    fn ids_are_accepted_in_the_forms_gcloud_prints() {
        let net = "projects/p/global/networks/a3high-net";
        for given in [
            net,
            "a3high-net",
            "global/networks/a3high-net",
            "https://www.googleapis.com/compute/v1/projects/p/global/networks/a3high-net",
        ] {
            assert_eq!(normalise_id(given, net).as_deref(), Some(net), "{given}");
        }
        assert_eq!(normalise_id("a3high-ne", net), None);
        assert_eq!(
            normalise_id("projects/q/global/networks/a3high-net", net),
            None
        );
        assert_eq!(normalise_id("", net), None);
        let pool = "projects/p/locations/us-central1/clusters/c/nodePools/system";
        for given in [
            "system",
            "c/nodePools/system",
            "https://container.googleapis.com/v1/projects/p/zones/us-central1/clusters/c/nodePools/system",
        ] {
            assert_eq!(normalise_id(given, pool).as_deref(), Some(pool), "{given}");
        }
        let bucket = "projects/_/buckets/ckpt";
        for given in [
            "ckpt",
            "gs://ckpt/",
            "https://storage.googleapis.com/storage/v1/b/ckpt",
        ] {
            assert_eq!(
                normalise_id(given, bucket).as_deref(),
                Some(bucket),
                "{given}"
            );
        }
    }
}
