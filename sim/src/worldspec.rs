//! The world file: a TOML description of the Google Cloud a simulator starts with — project
//! numbers, each project's enabled services, Compute quota limits, zone capacity and the stockout
//! wait, GKE's release schedule (`[gke]`, see [`crate::container::server_config::Schedule`]) and
//! the instant time zero stands for (`start_time`), and reservations that exist from the start (`a3ctl-sim --world FILE`, env
//! `A3CTL_SIM_WORLD`, or `SimConfig::world` in-process; `sim/worlds/example.toml` is a complete
//! example, `docs/simulator.md` documents it).
//!
//! ```toml
//! [[projects]]
//! id = "my-project"
//! number = "123456789012"
//! services = ["compute.googleapis.com", "container.googleapis.com"]
//!
//! [[quotas]]                      # the entries of a `--quotas` file's `[[limits]]`
//! metric = "GPUS_PER_GPU_FAMILY"
//! gpu_family = "NVIDIA_H100_MEGA"
//! region = "us-central1"
//! limit = 256
//!
//! [capacity]
//! stockout_wait_secs = 600
//! [[capacity.zones]]
//! zone = "us-central1-a"
//! machine_type = "a3-megagpu-8g"
//! on_demand = 32
//!
//! [[reservations]]
//! project = "my-project"
//! zone = "us-central1-a"
//! name = "a3-mega"
//! machine_type = "a3-megagpu-8g"
//! accelerator_type = "nvidia-h100-mega-80gb"
//! accelerator_count = 8
//! count = 32
//!
//! [[service_accounts]]
//! project = "my-project"
//! account_id = "a3-runner"
//! display_name = "A3 runner"
//!
//! [[iam]]                         # a binding of the project's IAM policy
//! project = "my-project"
//! role = "roles/artifactregistry.reader"
//! members = ["serviceAccount:a3-runner@my-project.iam.gserviceaccount.com"]
//!
//! [workloads]                     # what simulated NCCL tests report (GB/s)
//! tcp_bus_bandwidth_gbps = 2.5
//! nccl_bus_bandwidth_gbps = { "nvidia-h100-mega-80gb" = 50.1 }
//!
//! [[workloads.outcomes]]          # how other containers end (kube::controllers::outcomes)
//! command = "train.py"
//! duration_secs = 600
//! exit_code = 0
//! log = "done\n"
//! [lists]                         # a test aid: every page of every list holds at most 1 item
//! max_page_size = 1
//! ```
//!
//! Every table refuses unknown fields, so a typo is an error. [`WorldSpec::load`] names the file,
//! the line and column, and what is wrong — for TOML and type errors (toml's own message) and for
//! the simulator's checks ([`WorldSpec::check`]: project ids and numbers, services of the Service
//! Usage catalogue with their dependencies, quota metrics, regions and families, capacity zones
//! and machine types, reservations checked as Compute checks an insert, service accounts as IAM
//! checks a create, bindings as Resource Manager checks a `setIamPolicy` — roles, members, service
//! accounts that exist (the file's own or Google-managed ones), no `allUsers` — except that a
//! `user:` may be made owner: the file describes the world, it does not invite anyone).
//!
//! **What applies when.** Project numbers, quotas, capacity, `[workloads]` and `[lists]` are configuration:
//! they apply at every start, also to a world loaded from a `--persist` file. Services, reservations, service
//! accounts, IAM bindings, `start_time` and `[gke]` are state: they are seeded only into a fresh world ([`seed`]), never into one loaded from a persist
//! file (which has its own, possibly changed since). Seeded reservations are READY from the start
//! and count against quota and zone capacity like any other; one that does not fit stops the
//! start. A project number replaces the simulator's derived number everywhere a project is named
//! by number (Service Usage, Cloud Quotas, `projects.get`'s default service account, buckets'
//! `projectNumber`) and is accepted wherever a number may stand for the project.

use crate::capacity::{self, CapacityConfig, Model};
use crate::compute::{self, Life, Resource};
pub use crate::config::world::{
    ConditionSpec, IamBindingSpec, ListsSpec, ProjectSpec, ReservationSpec, ServiceAccountSpec,
    WorldSpec,
};
use crate::iam::{self, policy};
use crate::quotas::{self, QuotaConfig};
use crate::serviceusage;
use crate::shared::Ctx;
use crate::world::World;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

impl ServiceAccountSpec {
    pub fn email(&self) -> String {
        format!(
            "{}@{}.iam.gserviceaccount.com",
            self.account_id, self.project
        )
    }
}

impl IamBindingSpec {
    /// The binding as a policy holds it.
    pub fn binding(&self) -> iam::Binding {
        iam::Binding {
            role: self.role.clone(),
            members: self.members.clone(),
            condition: self.condition.as_ref().map(|c| {
                let mut expr = json!({ "title": c.title, "expression": c.expression });
                if let Some(d) = &c.description {
                    expr["description"] = json!(d);
                }
                expr
            }),
        }
    }
}

impl ReservationSpec {
    /// The Compute insert body this reservation stands for.
    pub fn insert_body(&self) -> Value {
        let mut properties = json!({ "machineType": self.machine_type });
        if self.accelerator_type.is_some() || self.accelerator_count.is_some() {
            properties["guestAccelerators"] = json!([{
                "acceleratorType": self.accelerator_type.clone().unwrap_or_default(),
                "acceleratorCount": self.accelerator_count.unwrap_or(0),
            }]);
        }
        let mut body = json!({
            "name": self.name,
            "specificReservation": {
                "count": self.count.to_string(),
                "instanceProperties": properties,
            },
            "specificReservationRequired": self.specific_required,
        });
        if let Some(deployment) = &self.deployment_type {
            body["deploymentType"] = json!(deployment);
        }
        if self.share_type.is_some() || !self.share_with.is_empty() {
            let mut share = json!({
                "shareType": self.share_type.clone().unwrap_or_else(|| "LOCAL".into()),
            });
            if !self.share_with.is_empty() {
                let map: serde_json::Map<String, Value> = self
                    .share_with
                    .iter()
                    .map(|p| (p.clone(), json!({ "projectId": p })))
                    .collect();
                share["projectMap"] = Value::Object(map);
            }
            body["shareSettings"] = share;
        }
        body
    }

    fn path(&self) -> String {
        format!(
            "projects/{}/zones/{}/reservations/{}",
            self.project, self.zone, self.name
        )
    }
}

/// Which entry of a world file a problem is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    Project(usize),
    Quota(usize),
    Capacity,
    CapacityZone(usize),
    Reservation(usize),
    ServiceAccount(usize),
    Iam(usize),
    StartTime,
    Gke,
    Release(usize),
}

/// A problem the simulator's checks find, in an entry.
struct Problem {
    entry: Entry,
    message: String,
}

impl WorldSpec {
    /// Reads and checks a world file. The error names the file, the line and column, and what is
    /// wrong: `world.toml:7:1: [[reservations]] #1 (a3-mega): Invalid value for field ...`.
    pub fn load(path: impl AsRef<Path>) -> Result<WorldSpec, String> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read world file `{}`: {e}", path.display()))?;
        WorldSpec::parse(&text, &path.display().to_string())
    }

    /// Parses and checks the text of a world file; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<WorldSpec, String> {
        let spec: WorldSpec = toml::from_str(text).map_err(|e| {
            let message = e.message().trim_end();
            match e.span() {
                Some(span) => {
                    let (line, column) = line_column(text, span.start);
                    format!("{origin}:{line}:{column}: {message}")
                }
                None => format!("{origin}: {message}"),
            }
        })?;
        if let Some(Err(problem)) = spec.workloads.as_ref().map(|w| w.check()) {
            let at = text
                .find("[workloads")
                .map(|offset| {
                    let (line, column) = line_column(text, offset);
                    format!("{origin}:{line}:{column}")
                })
                .unwrap_or_else(|| origin.to_string());
            return Err(format!("{at}: [workloads]: {problem}"));
        }
        if let Some(problem) = spec.problems().into_iter().next() {
            let at = locate(text, problem.entry)
                .map(|offset| {
                    let (line, column) = line_column(text, offset);
                    format!("{origin}:{line}:{column}")
                })
                .unwrap_or_else(|| origin.to_string());
            return Err(format!(
                "{at}: {}: {}",
                spec.label(problem.entry),
                problem.message
            ));
        }
        Ok(spec)
    }

    /// The simulator's checks of a world spec (those [`WorldSpec::parse`] runs, for a spec built in
    /// code): the first problem, naming its entry.
    pub fn check(&self) -> Result<(), String> {
        if let Some(workloads) = &self.workloads {
            workloads
                .check()
                .map_err(|problem| format!("[workloads]: {problem}"))?;
        }
        match self.problems().into_iter().next() {
            None => Ok(()),
            Some(problem) => Err(format!(
                "{}: {}",
                self.label(problem.entry),
                problem.message
            )),
        }
    }

    /// The configured project numbers, by project id.
    pub fn project_numbers(&self) -> BTreeMap<String, String> {
        self.projects
            .iter()
            .filter_map(|p| Some((p.id.clone(), p.number.clone()?)))
            .collect()
    }

    /// How an entry is named in errors: `[[projects]] #1 (my-project)`.
    fn label(&self, entry: Entry) -> String {
        match entry {
            Entry::Project(i) => format!("[[projects]] #{} ({})", i + 1, self.projects[i].id),
            Entry::Quota(i) => format!("[[quotas]] #{} ({})", i + 1, self.quotas[i].metric),
            Entry::Capacity => "[capacity]".to_string(),
            Entry::CapacityZone(i) => {
                let zones = self.capacity.as_ref().map_or(&[][..], |c| &c.zones[..]);
                let z = &zones[i];
                format!(
                    "[[capacity.zones]] #{} ({} {})",
                    i + 1,
                    z.zone,
                    z.machine_type
                )
            }
            Entry::Reservation(i) => {
                format!(
                    "[[reservations]] #{} ({})",
                    i + 1,
                    self.reservations[i].name
                )
            }
            Entry::ServiceAccount(i) => format!(
                "[[service_accounts]] #{} ({})",
                i + 1,
                self.service_accounts[i].account_id
            ),
            Entry::Iam(i) => format!("[[iam]] #{} ({})", i + 1, self.iam[i].role),
            Entry::StartTime => "start_time".to_string(),
            Entry::Gke => "[gke]".to_string(),
            Entry::Release(i) => {
                let releases = self.gke.as_ref().map_or(&[][..], |g| &g.releases[..]);
                format!("[[gke.releases]] #{} ({})", i + 1, releases[i].version)
            }
        }
    }

    fn problems(&self) -> Vec<Problem> {
        let mut out = vec![];
        let mut push = |entry, message: String| out.push(Problem { entry, message });
        let mut ids = BTreeSet::new();
        let mut numbers = BTreeSet::new();
        for (i, project) in self.projects.iter().enumerate() {
            let entry = Entry::Project(i);
            if !valid_project_id(&project.id) {
                push(
                    entry,
                    format!(
                        "project id `{}` must be 6 to 30 lowercase letters, digits or hyphens, \
                         start with a letter and not end with a hyphen",
                        project.id
                    ),
                );
            }
            if !ids.insert(project.id.as_str()) {
                push(entry, format!("project `{}` is given twice", project.id));
            }
            if let Some(number) = &project.number {
                let digits = !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit());
                if !digits || number.len() > 19 || number.starts_with('0') {
                    push(
                        entry,
                        format!(
                            "project number `{number}` must be 1 to 19 digits, not starting with 0"
                        ),
                    );
                }
                if !numbers.insert(number.as_str()) {
                    push(entry, format!("project number `{number}` is given twice"));
                }
            }
            for service in project.services.iter().flatten() {
                if serviceusage::info(service).is_none() {
                    push(
                        entry,
                        format!("unknown service `{service}` (not in the Service Usage catalogue)"),
                    );
                    continue;
                }
                let services = project.services.as_deref().unwrap_or(&[]);
                for needed in serviceusage::with_dependencies(service) {
                    if !services.iter().any(|s| s == needed) {
                        push(
                            entry,
                            format!(
                                "service `{service}` depends on `{needed}`, which is not listed"
                            ),
                        );
                    }
                }
            }
        }
        for (i, limit) in self.quotas.iter().enumerate() {
            let one = QuotaConfig {
                limits: vec![limit.clone()],
            };
            if let Err(message) = one.check() {
                push(Entry::Quota(i), message);
            }
        }
        if let Some(capacity) = &self.capacity {
            let wait = CapacityConfig {
                zones: vec![],
                ..capacity.clone()
            };
            if let Err(message) = wait.check() {
                push(Entry::Capacity, message);
            }
            for i in 0..capacity.zones.len() {
                let upto = CapacityConfig {
                    zones: capacity.zones[..=i].to_vec(),
                    ..wait.clone()
                };
                if let Err(message) = upto.check() {
                    push(Entry::CapacityZone(i), message);
                    break;
                }
            }
        }
        if let Some(start) = &self.start_time
            && chrono::DateTime::parse_from_rfc3339(start).is_err()
        {
            push(
                Entry::StartTime,
                format!("`{start}` is not an RFC 3339 time"),
            );
        }
        if let Some(gke) = &self.gke {
            for (index, message) in gke.problems() {
                push(index.map_or(Entry::Gke, Entry::Release), message);
            }
        }
        let mut paths = BTreeSet::new();
        for (i, reservation) in self.reservations.iter().enumerate() {
            let entry = Entry::Reservation(i);
            if !valid_project_id(&reservation.project) {
                push(
                    entry,
                    format!("`{}` is not a project id", reservation.project),
                );
            }
            if let Err(e) = compute::reservations::check_spec(
                &reservation.project,
                &reservation.zone,
                &reservation.name,
                &reservation.insert_body(),
            ) {
                push(entry, e.message);
            }
            if !paths.insert(reservation.path()) {
                push(
                    entry,
                    format!("reservation `{}` is given twice", reservation.path()),
                );
            }
        }
        // Service accounts and bindings are checked against a world holding the file's accounts.
        let mut world = World::new(0, chrono::DateTime::UNIX_EPOCH);
        world.project_numbers = self.project_numbers();
        for (i, account) in self.service_accounts.iter().enumerate() {
            let entry = Entry::ServiceAccount(i);
            if !valid_project_id(&account.project) {
                push(entry, format!("`{}` is not a project id", account.project));
                continue;
            }
            if let Err(e) = iam::check_account_id(&account.account_id)
                .and_then(|()| iam::check_account_text(&account.display_name, &account.description))
            {
                push(entry, e.message);
                continue;
            }
            if let Err(e) = iam::insert_account(
                &mut world,
                &account.project,
                &account.account_id,
                account.display_name.clone(),
                account.description.clone(),
            ) {
                push(entry, e.message);
            }
        }
        for (i, binding) in self.iam.iter().enumerate() {
            let entry = Entry::Iam(i);
            if !valid_project_id(&binding.project) {
                push(entry, format!("`{}` is not a project id", binding.project));
                continue;
            }
            if binding
                .members
                .iter()
                .any(|m| m == "allUsers" || m == "allAuthenticatedUsers")
            {
                push(
                    entry,
                    "a project's policy cannot grant allUsers or allAuthenticatedUsers".into(),
                );
                continue;
            }
            let target = policy::Target::Project(&binding.project);
            if let Err(e) = policy::check_bindings(&world, target, &[binding.binding()]) {
                push(entry, e.message);
            }
        }
        out
    }
}

/// Google's project id rule: 6 to 30 characters, lowercase letters, digits and hyphens, a letter
/// first, no hyphen last (<https://cloud.google.com/resource-manager/docs/creating-managing-projects>).
fn valid_project_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    (6..=30).contains(&bytes.len())
        && bytes[0].is_ascii_lowercase()
        && bytes[bytes.len() - 1] != b'-'
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

/// Where each entry starts, from a second parse that keeps spans.
#[derive(Deserialize)]
struct Spans {
    #[serde(default)]
    projects: Vec<toml::Spanned<toml::Value>>,
    #[serde(default)]
    quotas: Vec<toml::Spanned<toml::Value>>,
    #[serde(default)]
    capacity: Option<toml::Spanned<CapacitySpans>>,
    #[serde(default)]
    reservations: Vec<toml::Spanned<toml::Value>>,
    #[serde(default)]
    service_accounts: Vec<toml::Spanned<toml::Value>>,
    #[serde(default)]
    iam: Vec<toml::Spanned<toml::Value>>,
    #[serde(default)]
    gke: Option<toml::Spanned<GkeSpans>>,
}

#[derive(Deserialize)]
struct GkeSpans {
    #[serde(default)]
    releases: Vec<toml::Spanned<toml::Value>>,
}

#[derive(Deserialize)]
struct CapacitySpans {
    #[serde(default)]
    zones: Vec<toml::Spanned<toml::Value>>,
}

/// The byte offset where `entry` starts in `text`, if it can be found.
fn locate(text: &str, entry: Entry) -> Option<usize> {
    let spans: Spans = toml::from_str(text).ok()?;
    let start = |list: &[toml::Spanned<toml::Value>], i: usize| list.get(i).map(|s| s.span().start);
    match entry {
        Entry::Project(i) => start(&spans.projects, i),
        Entry::Quota(i) => start(&spans.quotas, i),
        Entry::Reservation(i) => start(&spans.reservations, i),
        Entry::ServiceAccount(i) => start(&spans.service_accounts, i),
        Entry::Iam(i) => start(&spans.iam, i),
        Entry::Capacity => spans.capacity.map(|c| c.span().start),
        Entry::CapacityZone(i) => spans
            .capacity
            .and_then(|c| c.into_inner().zones.get(i).map(|z| z.span().start)),
        Entry::StartTime => text.find("start_time"),
        Entry::Gke => spans.gke.map(|g| g.span().start),
        Entry::Release(i) => spans
            .gke
            .and_then(|g| g.into_inner().releases.get(i).map(|r| r.span().start)),
    }
}

/// Seeds a fresh world with what the spec says exists at the start: each project's enabled
/// services, the reservations, READY, checked against quota and zone capacity like an insert
/// (one that does not fit is an error), the service accounts, and the IAM bindings added to their
/// projects' default policies. Never called for a world loaded from a persist file.
pub fn seed(world: &mut World, cx: &Ctx, spec: &WorldSpec) -> Result<(), String> {
    world.container.schedule = spec.gke.clone();
    for project in &spec.projects {
        if let Some(services) = &project.services {
            let set = services.iter().cloned().collect();
            world.serviceusage.projects.insert(project.id.clone(), set);
        }
    }
    for (i, account) in spec.service_accounts.iter().enumerate() {
        iam::insert_account(
            world,
            &account.project,
            &account.account_id,
            account.display_name.clone(),
            account.description.clone(),
        )
        .map_err(|e| format!("{}: {}", spec.label(Entry::ServiceAccount(i)), e.message))?;
    }
    let mut projects: Vec<&str> = spec.iam.iter().map(|b| b.project.as_str()).collect();
    projects.sort_unstable();
    projects.dedup();
    for project in projects {
        let current = iam::project_policy(world, project);
        let mut bindings = current.bindings;
        bindings.extend(
            spec.iam
                .iter()
                .filter(|b| b.project == project)
                .map(IamBindingSpec::binding),
        );
        let mut seeded = iam::Policy::with_bindings(bindings, String::new());
        seeded.audit_configs = current.audit_configs;
        seeded.etag = policy::next_etag(world);
        world
            .iam
            .project_policies
            .insert(project.to_string(), seeded);
    }
    for (i, r) in spec.reservations.iter().enumerate() {
        let label = spec.label(Entry::Reservation(i));
        let (path, body) =
            compute::reservations::seed(world, &r.project, &r.zone, &r.name, &r.insert_body())
                .map_err(|e| format!("{label}: {}", e.message))?;
        let kind = compute::reservations::KIND;
        let demand = quotas::insert_demand(kind, &path, &body);
        if let Some(exceeded) = quotas::check(world, cx.quotas, &r.project, &demand).first() {
            return Err(format!("{label}: {}", quotas::compute_message(exceeded)));
        }
        let (machine, count) = capacity::reservation_vms(&body);
        if !capacity::fits(
            world,
            cx.capacity,
            &r.zone,
            &machine,
            Model::OnDemand,
            count,
        ) {
            let failure = capacity::compute_exhausted(&r.project, &r.zone);
            return Err(format!("{label}: {}", failure.message));
        }
        world.compute.resources.insert(
            path,
            Resource {
                kind,
                state: Life::Ready,
                body,
                auto_created: false,
            },
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<WorldSpec, String> {
        WorldSpec::parse(text, "world.toml")
    }

    #[test]
    fn the_example_world_parses() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/worlds/example.toml");
        let spec = WorldSpec::load(path).expect("the example is valid");
        assert!(!spec.projects.is_empty());
        assert!(!spec.quotas.is_empty());
        assert!(!spec.reservations.is_empty());
        let capacity = spec.capacity.as_ref().expect("capacity");
        assert!(!capacity.zones.is_empty());
        assert!(spec.check().is_ok());
        assert!(spec.reservations.iter().all(|r| r.specific_required));
        assert!(!spec.service_accounts.is_empty());
        assert!(!spec.iam.is_empty());
    }

    #[test]
    fn the_upgrades_world_parses_and_its_schedule_is_checked() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/worlds/upgrades.toml");
        let spec = WorldSpec::load(path).expect("the upgrades example is valid");
        let gke = spec.gke.as_ref().expect("[gke]");
        assert_eq!(gke.releases.len(), 2);
        assert_eq!(spec.start_time.as_deref(), Some("2026-03-02T00:00:00Z"));
        let err = parse(
            "[gke]\n[[gke.releases]]\nchannel = \"NIGHTLY\"\nversion = \"1.35\"\n\
             default_after_secs = 0\nvalid_after_secs = 5\n",
        )
        .unwrap_err();
        assert_eq!(
            err,
            "world.toml:2:1: [[gke.releases]] #1 (1.35): unknown channel `NIGHTLY` (RAPID, \
             REGULAR, STABLE or EXTENDED)"
        );
        let err = parse("start_time = \"yesterday\"\n").unwrap_err();
        assert_eq!(
            err,
            "world.toml:1:1: start_time: `yesterday` is not an RFC 3339 time"
        );
        let err = parse("[gke]\nend_of_support = { \"1.33\" = \"soon\" }\n").unwrap_err();
        assert!(
            err.contains("[gke]: end_of_support of 1.33: `soon`"),
            "{err}"
        );
        let err = parse("[gke]\nauto = true\n").unwrap_err();
        assert!(err.contains("unknown field `auto`"), "{err}");
    }

    #[test]
    fn service_accounts_and_bindings_are_checked_as_iam_checks_them() {
        let ok = "\
[[service_accounts]]
project = \"my-project\"
account_id = \"a3-runner\"

[[iam]]
project = \"my-project\"
role = \"roles/owner\"
members = [\"user:someone@example.com\", \"serviceAccount:a3-runner@my-project.iam.gserviceaccount.com\"]
";
        let spec = parse(ok).expect("valid");
        assert_eq!(
            spec.service_accounts[0].email(),
            "a3-runner@my-project.iam.gserviceaccount.com"
        );
        let err = parse("[[service_accounts]]\nproject = \"my-project\"\naccount_id = \"ab\"\n")
            .unwrap_err();
        assert_eq!(
            err,
            "world.toml:1:1: [[service_accounts]] #1 (ab): The account ID \"ab\" does not have a length between 6 and 30."
        );
        let twice = "[[service_accounts]]\nproject = \"my-project\"\naccount_id = \"a3-runner\"\n\n[[service_accounts]]\nproject = \"my-project\"\naccount_id = \"a3-runner\"\n";
        let err = parse(twice).unwrap_err();
        assert!(
            err.starts_with("world.toml:5:1: [[service_accounts]] #2 (a3-runner): Service account a3-runner already exists within project projects/my-project."),
            "{err}"
        );
        let ghost = "[[iam]]\nproject = \"my-project\"\nrole = \"roles/viewer\"\nmembers = [\"serviceAccount:ghost-acct@my-project.iam.gserviceaccount.com\"]\n";
        assert_eq!(
            parse(ghost).unwrap_err(),
            "world.toml:1:1: [[iam]] #1 (roles/viewer): Service account ghost-acct@my-project.iam.gserviceaccount.com does not exist."
        );
        let public = "[[iam]]\nproject = \"my-project\"\nrole = \"roles/viewer\"\nmembers = [\"allUsers\"]\n";
        assert!(parse(public).unwrap_err().contains("cannot grant allUsers"));
        let untyped = "[[iam]]\nproject = \"my-project\"\nrole = \"roles/viewer\"\nmembers = [\"a@example.com\"]\n";
        assert!(
            parse(untyped)
                .unwrap_err()
                .contains("Policy members must be of the form")
        );
        let extra = "[[iam]]\nproject = \"my-project\"\nrole = \"roles/viewer\"\nmember = []\n";
        assert!(
            parse(extra)
                .unwrap_err()
                .starts_with("world.toml:4:1: unknown field `member`")
        );
    }

    #[test]
    fn unknown_fields_are_errors_with_their_line() {
        let err = parse("[[projects]]\nid = \"my-project\"\nnumbr = \"1\"\n").unwrap_err();
        assert!(
            err.starts_with("world.toml:3:1: unknown field `numbr`"),
            "{err}"
        );
        let err = parse("[capacity]\nstockout_wait = 3\n").unwrap_err();
        assert!(
            err.starts_with("world.toml:2:1: unknown field `stockout_wait`"),
            "{err}"
        );
        let err = parse("[[reservation]]\nname = \"r\"\n").unwrap_err();
        assert!(
            err.starts_with("world.toml:1:3: unknown field `reservation`"),
            "{err}"
        );
    }

    #[test]
    fn bad_types_are_errors_with_their_line_and_column() {
        let text = "[[reservations]]\nproject = \"my-project\"\nzone = \"us-central1-a\"\nname = \"r\"\nmachine_type = \"e2-standard-4\"\ncount = \"two\"\n";
        let err = parse(text).unwrap_err();
        assert!(
            err.starts_with("world.toml:6:9: invalid type: string \"two\""),
            "{err}"
        );
        let err = parse("[[quotas]]\nmetric = \"CPUS\"\nlimit = true\n").unwrap_err();
        assert!(
            err.starts_with("world.toml:3:9: invalid type: boolean `true`"),
            "{err}"
        );
        let err = parse("[[projects]\nid = \"x\"\n").unwrap_err();
        assert!(err.starts_with("world.toml:1:"), "{err}");
    }

    #[test]
    fn checks_name_the_entry_and_its_line() {
        let text = "\
[[projects]]
id = \"my-project\"
number = \"123456789012\"

[[reservations]]
project = \"my-project\"
zone = \"us-central1-a\"
name = \"ok\"
machine_type = \"e2-standard-4\"
count = 1

[[reservations]]
project = \"my-project\"
zone = \"us-central1-b\"
name = \"mega\"
machine_type = \"a3-megagpu-8g\"
count = 2
";
        let err = parse(text).unwrap_err();
        assert_eq!(
            err,
            "world.toml:12:1: [[reservations]] #2 (mega): Invalid value for field \
             'resource.specificReservation.instanceProperties.machineType': 'a3-megagpu-8g'. \
             Machine type with name 'a3-megagpu-8g' does not exist in zone 'us-central1-b'."
        );
        let err = parse("[[projects]]\nid = \"Bad_Id\"\n").unwrap_err();
        assert!(
            err.starts_with("world.toml:1:1: [[projects]] #1 (Bad_Id): project id"),
            "{err}"
        );
        let err = parse("[[projects]]\nid = \"my-project\"\nnumber = \"12ab\"\n").unwrap_err();
        assert!(err.contains("project number `12ab` must be"), "{err}");
        let err =
            parse("[[projects]]\nid = \"my-project\"\nservices = [\"container.googleapis.com\"]\n")
                .unwrap_err();
        assert!(
            err.contains("service `container.googleapis.com` depends on `compute.googleapis.com`"),
            "{err}"
        );
        let err = parse("[[quotas]]\nmetric = \"CPUZ\"\nlimit = 1\n").unwrap_err();
        assert!(
            err.starts_with("world.toml:1:1: [[quotas]] #1 (CPUZ): unknown quota metric"),
            "{err}"
        );
        let err = parse(
            "[capacity]\n[[capacity.zones]]\nzone = \"us-central1-a\"\nmachine_type = \"e2-medium\"\n\n[[capacity.zones]]\nzone = \"us-central1-z\"\nmachine_type = \"e2-medium\"\n",
        )
        .unwrap_err();
        assert!(
            err.starts_with(
                "world.toml:6:1: [[capacity.zones]] #2 (us-central1-z e2-medium): unknown zone"
            ),
            "{err}"
        );
    }

    #[test]
    fn reservations_become_insert_bodies() {
        let spec = ReservationSpec {
            project: "my-project".into(),
            zone: "us-central1-a".into(),
            name: "r".into(),
            machine_type: "a3-megagpu-8g".into(),
            accelerator_type: Some("nvidia-h100-mega-80gb".into()),
            accelerator_count: Some(8),
            count: 4,
            specific_required: true,
            deployment_type: Some("DENSE".into()),
            share_type: Some("SPECIFIC_PROJECTS".into()),
            share_with: vec!["other-project".into()],
        };
        let body = spec.insert_body();
        assert_eq!(body["specificReservation"]["count"], "4");
        assert_eq!(
            body["shareSettings"]["projectMap"]["other-project"]["projectId"],
            "other-project"
        );
        assert!(
            compute::reservations::check_spec("my-project", "us-central1-a", "r", &body).is_ok()
        );
    }
}
