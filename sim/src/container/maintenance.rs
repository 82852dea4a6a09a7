//! Maintenance policies (`Cluster.maintenancePolicy`): their checks, on cluster create and
//! `clusters.setMaintenancePolicy`, and when they let an automatic upgrade run
//! ([`super::auto_upgrade`]). Pure functions of the policy, the versions and the time.
//!
//! The shape is container v1's (`MaintenancePolicy`, `MaintenanceWindow`, `TimeWindow`,
//! `RecurringTimeWindow`, `DailyMaintenanceWindow`, `MaintenanceExclusionOptions` in
//! <https://container.googleapis.com/$discovery/rest?version=v1>). `ClusterUpdate` has no
//! `desiredMaintenancePolicy`: a policy is set on create or with `setMaintenancePolicy` only.
//!
//! The rules, where they come from, and which texts are GKE's:
//!
//! - **A recurring window leaves at least 48 hours of maintenance availability in every 32-day
//!   rolling window, counting only contiguous availability of at least four hours.**
//!   <https://cloud.google.com/kubernetes-engine/docs/how-to/maintenance-windows-and-exclusions>
//!   ("Considerations when configuring a maintenance window"). GKE's answer,
//!   `400 maintenance policy would go longer than 32d without 48h maintenance availability`, is
//!   quoted from real `Error 400` outputs in public repositories' troubleshooting notes (found
//!   by text search; verbatim).
//! - **The recurrence is an RFC 5545 RRULE; FREQ=SECONDLY, MINUTELY and HOURLY are not
//!   supported** (the `RecurringTimeWindow.recurrence` description in the discovery document,
//!   and gcloud's `--maintenance-window-recurrence` help). The simulator reads FREQ (DAILY,
//!   WEEKLY, MONTHLY), INTERVAL, BYDAY (with an ordinal for MONTHLY), BYMONTHDAY and BYSETPOS,
//!   and refuses other parts (a simulator boundary).
//! - **A daily window starts at `HH:MM` GMT and lasts four hours** (`DailyMaintenanceWindow`:
//!   its `duration` is output only); GKE answers `duration: PT4H0M0S`.
//! - **At most 20 exclusions per cluster** (GKE's limit as the terraform-provider-google change
//!   that raised `maintenance_exclusion`'s MaxItems to 20 quotes it, hashicorp/terraform-provider-google#15279).
//! - **An exclusion ends after it starts** (`TimeWindow.endTime`: "should take place after the
//!   start time"; gcloud's `--add-maintenance-exclusion-end` help).
//! - **The scope defaults to NO_UPGRADES, and a NO_UPGRADES exclusion lasts at most 30 days**
//!   (`MaintenanceExclusionOptions.scope` in the discovery document for the default; the 30 days
//!   from GKE's maintenance-exclusions documentation, as a public Terraform sample for GKE
//!   exclusions repeats it: "NO_UPGRADES exclusions are limited to 30 days", found by text
//!   search).
//! - **`endTimeBehavior: UNTIL_END_OF_SUPPORT` only with the NO_MINOR_UPGRADES or
//!   NO_MINOR_OR_NODE_UPGRADES scopes**, and its end is the end of support of the cluster's
//!   minor, following the minor when it changes (the enum's description in the discovery
//!   document; GoogleCloudPlatform/cluster-toolkit#4989).
//! - **No exclusion ends after the end of support of the cluster's minor** (GKE's
//!   maintenance-exclusions documentation; the simulator's reading, not checked against a stored
//!   copy of the page). End-of-support dates are the world file's (`[gke] end_of_support`), else
//!   14 months after time zero ([`super::server_config::DEFAULT_SUPPORT_DAYS`]).
//! - **`resourceVersion`** is a fingerprint of the stored policy; a request that carries one
//!   must carry the current one (the field's description in the discovery document).
//!
//! Only the first rule's text is a verified capture. The others are the simulator's own wording
//! (no public capture of GKE's was found), all 400 `INVALID_ARGUMENT`/`badRequest` but the
//! resource-version mismatch, 400 `FAILED_PRECONDITION`.
//!
//! When a policy lets an automatic upgrade run (GKE's concepts page, "Scope of maintenance to
//! exclude"): inside the window when one is set, and outside every active exclusion whose scope
//! covers it — NO_UPGRADES covers everything, NO_MINOR_UPGRADES minor upgrades of the control
//! plane and of nodes, NO_MINOR_OR_NODE_UPGRADES minor upgrades and every node upgrade (only
//! control-plane patches run).

use super::bad_request;
use super::server_config::Schedule;
use super::skew::Version;
use crate::error::{GcpError, GcpResult};
use crate::world::World;
use chrono::{DateTime, Datelike, Duration, NaiveDate, SecondsFormat, TimeZone, Utc, Weekday};
use serde_json::{Value, json};

/// GKE's limit of exclusions per cluster.
pub const MAX_EXCLUSIONS: usize = 20;
/// The longest NO_UPGRADES exclusion.
pub const MAX_NO_UPGRADES_DAYS: i64 = 30;
const ROLLING_DAYS: i64 = 32;
const NEEDED_HOURS: i64 = 48;
const CONTIGUOUS_HOURS: i64 = 4;
const DAILY_HOURS: i64 = 4;

/// When support of each minor ends, as the world has it.
#[derive(Debug, Clone)]
pub struct Support {
    pub schedule: Schedule,
    pub epoch: DateTime<Utc>,
}

impl Support {
    pub fn of(world: &World) -> Support {
        Support {
            schedule: world.container.schedule.clone().unwrap_or_default(),
            epoch: world.epoch,
        }
    }

    /// The end of support of the minor of `version` (a build).
    pub fn end_of(&self, version: &str) -> DateTime<Utc> {
        let minor = Version::parse(version)
            .map(|v| format!("{}.{}", v.major, v.minor))
            .unwrap_or_default();
        self.schedule.end_of_support(&minor, self.epoch)
    }
}

/// What an upgrade changes, for exclusion scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upgrade {
    MasterPatch,
    MasterMinor,
    NodePatch,
    NodeMinor,
}

/// An exclusion's scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    NoUpgrades,
    NoMinorUpgrades,
    NoMinorOrNodeUpgrades,
}

impl Scope {
    fn parse(value: &Value) -> GcpResult<Scope> {
        match value.as_str() {
            None | Some("NO_UPGRADES") => Ok(Scope::NoUpgrades),
            Some("NO_MINOR_UPGRADES") => Ok(Scope::NoMinorUpgrades),
            Some("NO_MINOR_OR_NODE_UPGRADES") => Ok(Scope::NoMinorOrNodeUpgrades),
            Some(other) => Err(bad_request(format!(
                "Invalid maintenance exclusion scope \"{other}\"."
            ))),
        }
    }

    /// Whether an exclusion of this scope holds `upgrade` back.
    pub fn covers(self, upgrade: Upgrade) -> bool {
        match self {
            Scope::NoUpgrades => true,
            Scope::NoMinorUpgrades => matches!(upgrade, Upgrade::MasterMinor | Upgrade::NodeMinor),
            Scope::NoMinorOrNodeUpgrades => upgrade != Upgrade::MasterPatch,
        }
    }
}

/// RRULE frequencies the simulator reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freq {
    Daily,
    Weekly,
    Monthly,
}

/// A parsed RRULE.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub freq: Freq,
    pub interval: u32,
    /// `(ordinal, weekday)`: `SA` is `(None, Sat)`, `1SA` `(Some(1), Sat)`, `-1SU` `(Some(-1), Sun)`.
    pub by_day: Vec<(Option<i32>, Weekday)>,
    pub by_month_day: Vec<i32>,
    pub by_set_pos: Vec<i32>,
}

fn rrule_error(text: &str, why: &str) -> GcpError {
    bad_request(format!(
        "Invalid maintenance window recurrence \"{text}\": {why}."
    ))
}

/// Parses an RRULE (`FREQ=WEEKLY;BYDAY=SA,SU`, an `RRULE:` prefix allowed).
pub fn parse_rrule(text: &str) -> GcpResult<Rule> {
    let body = text.trim().strip_prefix("RRULE:").unwrap_or(text.trim());
    let mut freq = None;
    let mut rule = Rule {
        freq: Freq::Daily,
        interval: 1,
        by_day: vec![],
        by_month_day: vec![],
        by_set_pos: vec![],
    };
    for part in body.split(';').filter(|p| !p.is_empty()) {
        let Some((key, value)) = part.split_once('=') else {
            return Err(rrule_error(text, &format!("\"{part}\" is not NAME=VALUE")));
        };
        match key.to_ascii_uppercase().as_str() {
            "FREQ" => {
                freq = Some(match value.to_ascii_uppercase().as_str() {
                    "DAILY" => Freq::Daily,
                    "WEEKLY" => Freq::Weekly,
                    "MONTHLY" => Freq::Monthly,
                    "SECONDLY" | "MINUTELY" | "HOURLY" => {
                        return Err(rrule_error(text, &format!("FREQ={value} is not supported")));
                    }
                    _ => return Err(rrule_error(text, &format!("unknown FREQ \"{value}\""))),
                })
            }
            "INTERVAL" => {
                rule.interval = value
                    .parse()
                    .ok()
                    .filter(|n| *n >= 1)
                    .ok_or_else(|| rrule_error(text, "INTERVAL must be a positive integer"))?;
            }
            "BYDAY" => {
                for day in value.split(',') {
                    rule.by_day.push(parse_byday(day).ok_or_else(|| {
                        rrule_error(text, &format!("\"{day}\" is not a BYDAY value"))
                    })?);
                }
            }
            "BYMONTHDAY" => {
                for day in value.split(',') {
                    let n: i32 = day
                        .parse()
                        .ok()
                        .filter(|n: &i32| *n != 0 && n.abs() <= 31)
                        .ok_or_else(|| {
                            rrule_error(text, &format!("\"{day}\" is not a BYMONTHDAY value"))
                        })?;
                    rule.by_month_day.push(n);
                }
            }
            "BYSETPOS" => {
                for pos in value.split(',') {
                    let n: i32 = pos
                        .parse()
                        .ok()
                        .filter(|n: &i32| *n != 0 && n.abs() <= 31)
                        .ok_or_else(|| {
                            rrule_error(text, &format!("\"{pos}\" is not a BYSETPOS value"))
                        })?;
                    rule.by_set_pos.push(n);
                }
            }
            other => {
                return Err(rrule_error(
                    text,
                    &format!("{other} is not supported by the simulator"),
                ));
            }
        }
    }
    rule.freq = freq.ok_or_else(|| rrule_error(text, "FREQ is required"))?;
    if rule.freq != Freq::Monthly
        && (!rule.by_month_day.is_empty()
            || !rule.by_set_pos.is_empty()
            || rule.by_day.iter().any(|(n, _)| n.is_some()))
    {
        return Err(rrule_error(
            text,
            "BYMONTHDAY, BYSETPOS and ordinal BYDAY values need FREQ=MONTHLY",
        ));
    }
    if rule.freq == Freq::Daily && !rule.by_day.is_empty() {
        return Err(rrule_error(text, "BYDAY needs FREQ=WEEKLY or FREQ=MONTHLY"));
    }
    Ok(rule)
}

fn parse_byday(text: &str) -> Option<(Option<i32>, Weekday)> {
    let text = text.trim().to_ascii_uppercase();
    if text.len() < 2 || !text.is_ascii() {
        return None;
    }
    let (ordinal, day) = text.split_at(text.len() - 2);
    let weekday = match day {
        "MO" => Weekday::Mon,
        "TU" => Weekday::Tue,
        "WE" => Weekday::Wed,
        "TH" => Weekday::Thu,
        "FR" => Weekday::Fri,
        "SA" => Weekday::Sat,
        "SU" => Weekday::Sun,
        _ => return None,
    };
    let ordinal = match ordinal {
        "" => None,
        n => Some(n.parse::<i32>().ok().filter(|n| *n != 0 && n.abs() <= 5)?),
    };
    Some((ordinal, weekday))
}

fn months(date: NaiveDate) -> i64 {
    i64::from(date.year()) * 12 + i64::from(date.month0())
}

fn days_in_month(date: NaiveDate) -> u32 {
    let (y, m) = (date.year(), date.month());
    let next = if m == 12 {
        NaiveDate::from_ymd_opt(y + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(y, m + 1, 1)
    };
    next.and_then(|n| n.pred_opt()).map_or(28, |d| d.day())
}

impl Rule {
    /// Whether an occurrence starts on `date`, for a window first starting on `first`.
    pub fn occurs_on(&self, first: NaiveDate, date: NaiveDate) -> bool {
        if date < first {
            return false;
        }
        let interval = i64::from(self.interval);
        match self.freq {
            Freq::Daily => (date - first).num_days() % interval == 0,
            Freq::Weekly => {
                let monday =
                    |d: NaiveDate| d - Duration::days(d.weekday().num_days_from_monday().into());
                let weeks = (monday(date) - monday(first)).num_days() / 7;
                let day_ok = if self.by_day.is_empty() {
                    date.weekday() == first.weekday()
                } else {
                    self.by_day.iter().any(|(_, w)| *w == date.weekday())
                };
                weeks % interval == 0 && day_ok
            }
            Freq::Monthly => {
                if (months(date) - months(first)) % interval != 0 {
                    return false;
                }
                let last = days_in_month(date) as i32;
                let candidates: Vec<u32> = (1..=last as u32)
                    .filter(|d| {
                        let Some(day) = NaiveDate::from_ymd_opt(date.year(), date.month(), *d)
                        else {
                            return false;
                        };
                        self.monthly_match(first, day, last)
                    })
                    .collect();
                let chosen: Vec<u32> = if self.by_set_pos.is_empty() {
                    candidates
                } else {
                    self.by_set_pos
                        .iter()
                        .filter_map(|p| {
                            let n = candidates.len() as i32;
                            let index = if *p > 0 { p - 1 } else { n + p };
                            (0..n).contains(&index).then(|| candidates[index as usize])
                        })
                        .collect()
                };
                chosen.contains(&date.day())
            }
        }
    }

    fn monthly_match(&self, first: NaiveDate, day: NaiveDate, last: i32) -> bool {
        let d = day.day() as i32;
        if !self.by_month_day.is_empty() {
            return self
                .by_month_day
                .iter()
                .any(|n| if *n > 0 { *n == d } else { last + 1 + n == d });
        }
        if !self.by_day.is_empty() {
            return self.by_day.iter().any(|(ordinal, w)| {
                day.weekday() == *w
                    && match ordinal {
                        None => true,
                        Some(n) if *n > 0 => (d - 1) / 7 + 1 == *n,
                        Some(n) => (last - d) / 7 + 1 == -n,
                    }
            });
        }
        d == first.day() as i32
    }
}

/// A maintenance window: occurrences of `duration` starting at `first`'s time of day on every
/// date the rule gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub first: DateTime<Utc>,
    pub duration: Duration,
    pub rule: Rule,
}

impl Window {
    /// The occurrence starting on `date`, if any.
    fn occurrence_on(&self, date: NaiveDate) -> Option<DateTime<Utc>> {
        if !self.rule.occurs_on(self.first.date_naive(), date) {
            return None;
        }
        Some(Utc.from_utc_datetime(&date.and_time(self.first.time())))
    }

    /// Whether maintenance may run at `t`.
    pub fn open_at(&self, t: DateTime<Utc>) -> bool {
        let back = self.duration.num_days() + 1;
        (0..=back).any(|k| {
            self.occurrence_on(t.date_naive() - Duration::days(k))
                .is_some_and(|s| s <= t && t < s + self.duration)
        })
    }

    /// Occurrence starts in `(after, until]` (at most 1,000).
    pub fn starts_between(&self, after: DateTime<Utc>, until: DateTime<Utc>) -> Vec<DateTime<Utc>> {
        let mut out = vec![];
        let mut date = after.date_naive();
        while date <= until.date_naive() && out.len() < 1000 {
            if let Some(s) = self.occurrence_on(date)
                && s > after
                && s <= until
            {
                out.push(s);
            }
            match date.succ_opt() {
                Some(next) => date = next,
                None => break,
            }
        }
        out
    }

    /// Whether every 32-day rolling window has 48 hours of contiguous availability of at least
    /// four hours, from the first occurrence on.
    pub fn enough_availability(&self) -> bool {
        let horizon = Duration::days(3 * ROLLING_DAYS);
        let start = self.first - Duration::milliseconds(1);
        let mut merged: Vec<(DateTime<Utc>, DateTime<Utc>)> = vec![];
        for s in self.starts_between(start, self.first + horizon) {
            let e = s + self.duration;
            match merged.last_mut() {
                Some((_, last_end)) if s <= *last_end => *last_end = (*last_end).max(e),
                _ => merged.push((s, e)),
            }
        }
        let counted: Vec<_> = merged
            .into_iter()
            .filter(|(s, e)| *e - *s >= Duration::hours(CONTIGUOUS_HOURS))
            .collect();
        let positions = std::iter::once(self.first)
            .chain(counted.iter().map(|(_, e)| *e))
            .filter(|w| *w <= self.first + Duration::days(2 * ROLLING_DAYS));
        for w in positions {
            let end = w + Duration::days(ROLLING_DAYS);
            let available: Duration = counted
                .iter()
                .map(|(s, e)| ((*e).min(end) - (*s).max(w)).max(Duration::zero()))
                .fold(Duration::zero(), |a, b| a + b);
            if available < Duration::hours(NEEDED_HOURS) {
                return false;
            }
        }
        true
    }
}

/// An exclusion as it applies.
#[derive(Debug, Clone, PartialEq)]
pub struct Exclusion {
    pub name: String,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub scope: Scope,
}

/// A stored policy, read for evaluation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Policy {
    pub window: Option<Window>,
    pub exclusions: Vec<Exclusion>,
}

impl Policy {
    /// Whether `upgrade` may run at `t`.
    pub fn allows(&self, upgrade: Upgrade, t: DateTime<Utc>) -> bool {
        self.window.as_ref().is_none_or(|w| w.open_at(t))
            && !self
                .exclusions
                .iter()
                .any(|x| x.start <= t && t < x.end && x.scope.covers(upgrade))
    }

    /// The instants in `(after, until]` at which what the policy allows may change: window
    /// openings and exclusion ends and starts.
    pub fn changes_between(
        &self,
        after: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Vec<DateTime<Utc>> {
        let mut out = self
            .window
            .as_ref()
            .map(|w| w.starts_between(after, until))
            .unwrap_or_default();
        for x in &self.exclusions {
            for t in [x.start, x.end] {
                if t > after && t <= until {
                    out.push(t);
                }
            }
        }
        out
    }
}

fn parse_time(text: &Value, what: &str) -> GcpResult<DateTime<Utc>> {
    let raw = text.as_str().unwrap_or("");
    DateTime::parse_from_rfc3339(raw)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| {
            bad_request(format!(
                "Invalid {what} \"{raw}\": must be an RFC 3339 time."
            ))
        })
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

fn daily_start(text: &str) -> Option<(u32, u32)> {
    let (h, m) = text.split_once(':')?;
    if h.len() != 2 || m.len() != 2 {
        return None;
    }
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60).then_some((h, m))
}

/// Reads the window of a stored (checked) policy.
fn window_of(window: &Value) -> Option<Window> {
    if let Some(start) = window["dailyMaintenanceWindow"]["startTime"].as_str() {
        let (h, m) = daily_start(start)?;
        let first = Utc.with_ymd_and_hms(1970, 1, 1, h, m, 0).single()?;
        return Some(Window {
            first,
            duration: Duration::hours(DAILY_HOURS),
            rule: parse_rrule("FREQ=DAILY").ok()?,
        });
    }
    let recurring = &window["recurringWindow"];
    if recurring.is_object() {
        let start = parse_time(&recurring["window"]["startTime"], "").ok()?;
        let end = parse_time(&recurring["window"]["endTime"], "").ok()?;
        let rule = parse_rrule(recurring["recurrence"].as_str().unwrap_or("")).ok()?;
        return Some(Window {
            first: start,
            duration: end - start,
            rule,
        });
    }
    None
}

/// The policy stored on a cluster, for evaluation; `support` and the cluster's `master`
/// version give the end of UNTIL_END_OF_SUPPORT exclusions.
pub fn policy_of(stored: &Value, master: &str, support: &Support) -> Policy {
    let window = &stored["window"];
    let exclusions = window["maintenanceExclusions"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, x)| {
            let options = &x["maintenanceExclusionOptions"];
            let start = parse_time(&x["startTime"], "").ok()?;
            let end = if options["endTimeBehavior"] == json!("UNTIL_END_OF_SUPPORT") {
                support.end_of(master)
            } else {
                parse_time(&x["endTime"], "").ok()?
            };
            Some(Exclusion {
                name: name.clone(),
                start,
                end,
                scope: Scope::parse(&options["scope"]).ok()?,
            })
        })
        .collect();
    Policy {
        window: window_of(window),
        exclusions,
    }
}

/// The stored policy of a cluster whose control plane moves to `master`, when it has
/// UNTIL_END_OF_SUPPORT exclusions: their `endTime` follows the new minor's end of support (and
/// the `resourceVersion` changes). `None` when nothing changes.
pub fn follow_minor(stored: &Value, master: &str, support: &Support) -> Option<Value> {
    let mut policy = stored.clone();
    let end = json!(rfc3339(support.end_of(master)));
    let mut changed = false;
    let exclusions = policy["window"]["maintenanceExclusions"].as_object_mut()?;
    for x in exclusions.values_mut() {
        if x["maintenanceExclusionOptions"]["endTimeBehavior"] == json!("UNTIL_END_OF_SUPPORT")
            && x.is_object()
            && x["endTime"] != end
        {
            x["endTime"] = end.clone();
            changed = true;
        }
    }
    if !changed {
        return None;
    }
    if let Some(obj) = policy.as_object_mut() {
        obj.remove("resourceVersion");
    }
    let version = super::fingerprint(&policy.to_string());
    policy["resourceVersion"] = json!(version);
    Some(policy)
}

/// Checks a `resourceVersion` a request carries against the stored policy's.
pub fn check_resource_version(given: &Value, stored: &Value) -> GcpResult<()> {
    let Some(version) = given["resourceVersion"].as_str().filter(|v| !v.is_empty()) else {
        return Ok(());
    };
    let current = stored["resourceVersion"].as_str().unwrap_or("");
    if version != current {
        return Err(GcpError::failed_precondition(format!(
            "Maintenance policy resource version \"{version}\" does not match the current \
             version \"{current}\"; get the cluster and retry with its maintenancePolicy."
        )));
    }
    Ok(())
}

/// Checks a policy for a cluster whose control plane runs `master`, and returns it as GKE
/// stores it: times in UTC, the daily window's `duration`, exclusion scopes filled in, an
/// UNTIL_END_OF_SUPPORT exclusion's end set to the end of support, a new `resourceVersion`.
pub fn check_policy(given: &Value, master: &str, support: &Support) -> GcpResult<Value> {
    let mut policy = given.clone();
    if !policy.is_object() {
        policy = json!({});
    }
    if let Some(obj) = policy.as_object_mut() {
        obj.remove("resourceVersion");
    }
    let window = &mut policy["window"];
    if window.is_object() {
        check_window(window)?;
        check_exclusions(window, master, support)?;
    } else if let Some(obj) = policy.as_object_mut() {
        obj.remove("window");
    }
    let version = super::fingerprint(&policy.to_string());
    policy["resourceVersion"] = json!(version);
    Ok(policy)
}

fn check_window(window: &mut Value) -> GcpResult<()> {
    let daily = !window["dailyMaintenanceWindow"].is_null();
    let recurring = !window["recurringWindow"].is_null();
    if !window["recurringMaintenanceWindow"].is_null() {
        return Err(bad_request(
            "recurringMaintenanceWindow is not supported by the simulator; use recurringWindow.",
        ));
    }
    if daily && recurring {
        return Err(bad_request(
            "Only one of dailyMaintenanceWindow and recurringWindow may be set.",
        ));
    }
    if daily {
        let start = window["dailyMaintenanceWindow"]["startTime"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if daily_start(&start).is_none() {
            return Err(bad_request(format!(
                "Invalid daily maintenance window start time \"{start}\": must be \"HH:MM\" GMT."
            )));
        }
        window["dailyMaintenanceWindow"] = json!({"startTime": start, "duration": "PT4H0M0S"});
    }
    if recurring {
        let r = &mut window["recurringWindow"];
        let start = parse_time(&r["window"]["startTime"], "recurring window start time")?;
        let end = parse_time(&r["window"]["endTime"], "recurring window end time")?;
        if end <= start {
            return Err(bad_request(
                "The recurring window's end time must be after its start time.",
            ));
        }
        let text = r["recurrence"].as_str().unwrap_or("").to_string();
        let rule = parse_rrule(&text)?;
        let candidate = Window {
            first: start,
            duration: end - start,
            rule,
        };
        if !candidate.enough_availability() {
            return Err(bad_request(
                "maintenance policy would go longer than 32d without 48h maintenance availability",
            ));
        }
        r["window"]["startTime"] = json!(rfc3339(start));
        r["window"]["endTime"] = json!(rfc3339(end));
    }
    Ok(())
}

fn check_exclusions(window: &mut Value, master: &str, support: &Support) -> GcpResult<()> {
    let Some(exclusions) = window["maintenanceExclusions"].as_object_mut() else {
        return Ok(());
    };
    if exclusions.len() > MAX_EXCLUSIONS {
        return Err(bad_request(format!(
            "A cluster can have at most {MAX_EXCLUSIONS} maintenance exclusions; got {}.",
            exclusions.len()
        )));
    }
    let end_of_support = support.end_of(master);
    let minor = Version::parse(master)
        .map(|v| format!("{}.{}", v.major, v.minor))
        .unwrap_or_else(|| master.to_string());
    for (name, x) in exclusions.iter_mut() {
        if !x.is_object()
            || !(x["maintenanceExclusionOptions"].is_object()
                || x["maintenanceExclusionOptions"].is_null())
        {
            return Err(bad_request(format!(
                "Invalid maintenance exclusion \"{name}\": expected a TimeWindow."
            )));
        }
        let options = &x["maintenanceExclusionOptions"];
        let scope = Scope::parse(&options["scope"])?;
        let until_eos = match options["endTimeBehavior"].as_str() {
            None | Some("END_TIME_BEHAVIOR_UNSPECIFIED") => false,
            Some("UNTIL_END_OF_SUPPORT") => true,
            Some(other) => {
                return Err(bad_request(format!(
                    "Invalid maintenance exclusion end time behavior \"{other}\"."
                )));
            }
        };
        if until_eos && scope == Scope::NoUpgrades {
            return Err(bad_request(format!(
                "Maintenance exclusion \"{name}\": end time behavior UNTIL_END_OF_SUPPORT needs \
                 the scope NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES."
            )));
        }
        let start = parse_time(&x["startTime"], "maintenance exclusion start time")?;
        let end = if until_eos {
            end_of_support
        } else {
            parse_time(&x["endTime"], "maintenance exclusion end time")?
        };
        if end <= start {
            return Err(bad_request(format!(
                "Maintenance exclusion \"{name}\" must end after it starts."
            )));
        }
        if scope == Scope::NoUpgrades && end - start > Duration::days(MAX_NO_UPGRADES_DAYS) {
            return Err(bad_request(format!(
                "Maintenance exclusion \"{name}\" of scope NO_UPGRADES cannot be longer than \
                 {MAX_NO_UPGRADES_DAYS} days."
            )));
        }
        if end > end_of_support {
            return Err(bad_request(format!(
                "Maintenance exclusion \"{name}\" ends at {}, after the end of support of \
                 version {minor} at {}.",
                rfc3339(end),
                rfc3339(end_of_support)
            )));
        }
        x["startTime"] = json!(rfc3339(start));
        x["endTime"] = json!(rfc3339(end));
        let scope_name = match scope {
            Scope::NoUpgrades => "NO_UPGRADES",
            Scope::NoMinorUpgrades => "NO_MINOR_UPGRADES",
            Scope::NoMinorOrNodeUpgrades => "NO_MINOR_OR_NODE_UPGRADES",
        };
        x["maintenanceExclusionOptions"]["scope"] = json!(scope_name);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    fn support() -> Support {
        Support {
            schedule: Schedule::default(),
            epoch: t("2026-03-02T00:00:00Z"),
        }
    }

    fn recurring(start: &str, end: &str, rule: &str) -> Value {
        json!({"window": {"recurringWindow": {
            "window": {"startTime": start, "endTime": end}, "recurrence": rule}}})
    }

    #[test]
    fn rrules_parse_and_refuse_what_gke_does_not_support() {
        let rule = parse_rrule("FREQ=WEEKLY;BYDAY=SA,SU").unwrap();
        assert_eq!(rule.freq, Freq::Weekly);
        assert_eq!(
            rule.by_day,
            vec![(None, Weekday::Sat), (None, Weekday::Sun)]
        );
        assert!(parse_rrule("FREQ=MONTHLY;BYSETPOS=1;BYDAY=SA,SU").is_ok());
        let err = parse_rrule("FREQ=HOURLY").unwrap_err();
        assert_eq!(
            err.message,
            "Invalid maintenance window recurrence \"FREQ=HOURLY\": FREQ=HOURLY is not supported."
        );
        assert!(parse_rrule("BYDAY=SA").is_err());
        assert!(parse_rrule("FREQ=WEEKLY;BYDAY=XX").is_err());
        assert!(parse_rrule("FREQ=WEEKLY;INTERVAL=0").is_err());
        assert!(parse_rrule("FREQ=DAILY;COUNT=3").is_err());
        assert!(parse_rrule("FREQ=WEEKLY;BYDAY=aéb").is_err());
    }

    #[test]
    fn weekly_windows_open_on_their_days_only() {
        // 2026-03-07 is a Saturday.
        let w = Window {
            first: t("2026-03-07T02:00:00Z"),
            duration: Duration::hours(8),
            rule: parse_rrule("FREQ=WEEKLY;BYDAY=SA,SU").unwrap(),
        };
        assert!(w.open_at(t("2026-03-07T02:00:00Z")));
        assert!(w.open_at(t("2026-03-08T09:59:00Z")));
        assert!(!w.open_at(t("2026-03-08T10:00:00Z")));
        assert!(!w.open_at(t("2026-03-09T03:00:00Z")));
        assert!(w.open_at(t("2026-03-14T03:00:00Z")));
        // Never before the first occurrence.
        assert!(!w.open_at(t("2026-03-01T03:00:00Z")));
        assert_eq!(
            w.starts_between(t("2026-03-07T02:00:00Z"), t("2026-03-15T00:00:00Z")),
            vec![t("2026-03-08T02:00:00Z"), t("2026-03-14T02:00:00Z")]
        );
        // A window spanning midnight is open after it.
        let night = Window {
            first: t("2026-03-02T22:00:00Z"),
            duration: Duration::hours(6),
            rule: parse_rrule("FREQ=DAILY").unwrap(),
        };
        assert!(night.open_at(t("2026-03-05T03:00:00Z")));
        assert!(!night.open_at(t("2026-03-05T05:00:00Z")));
    }

    #[test]
    fn monthly_rules_pick_their_days() {
        let first = NaiveDate::from_ymd_opt(2026, 3, 1).unwrap();
        let d = |m, day| NaiveDate::from_ymd_opt(2026, m, day).unwrap();
        let first_weekend_day = parse_rrule("FREQ=MONTHLY;BYSETPOS=1;BYDAY=SA,SU").unwrap();
        // March 2026 starts on a Sunday; April on a Wednesday (the 4th is a Saturday).
        assert!(first_weekend_day.occurs_on(first, d(3, 1)));
        assert!(!first_weekend_day.occurs_on(first, d(3, 7)));
        assert!(first_weekend_day.occurs_on(first, d(4, 4)));
        let last_sunday = parse_rrule("FREQ=MONTHLY;BYDAY=-1SU").unwrap();
        assert!(last_sunday.occurs_on(first, d(3, 29)));
        assert!(!last_sunday.occurs_on(first, d(3, 22)));
        let fifteenth = parse_rrule("FREQ=MONTHLY;BYMONTHDAY=15").unwrap();
        assert!(fifteenth.occurs_on(first, d(4, 15)));
    }

    #[test]
    fn a_window_needs_48_hours_in_every_32_days() {
        let s = support();
        let master = "1.33.5-gke.1080000";
        // Four hours on one day a week: 16–20 hours in 32 days.
        let thin = recurring(
            "2026-03-07T02:00:00Z",
            "2026-03-07T06:00:00Z",
            "FREQ=WEEKLY;BYDAY=SA",
        );
        assert_eq!(
            check_policy(&thin, master, &s).unwrap_err().message,
            "maintenance policy would go longer than 32d without 48h maintenance availability"
        );
        // Eight hours on Saturdays and Sundays: 64–80 hours.
        let weekend = recurring(
            "2026-03-07T02:00:00Z",
            "2026-03-07T10:00:00Z",
            "FREQ=WEEKLY;BYDAY=SA,SU",
        );
        assert!(check_policy(&weekend, master, &s).is_ok());
        // Three hours a day is 96 hours, but no piece reaches four hours.
        let short = recurring("2026-03-02T01:00:00Z", "2026-03-02T04:00:00Z", "FREQ=DAILY");
        assert!(check_policy(&short, master, &s).is_err());
        let daily = json!({"window": {"dailyMaintenanceWindow": {"startTime": "03:00"}}});
        let stored = check_policy(&daily, master, &s).unwrap();
        assert_eq!(
            stored["window"]["dailyMaintenanceWindow"]["duration"],
            "PT4H0M0S"
        );
        assert!(
            stored["resourceVersion"]
                .as_str()
                .is_some_and(|v| v.len() == 8)
        );
        let bad = json!({"window": {"dailyMaintenanceWindow": {"startTime": "25:00"}}});
        assert!(check_policy(&bad, master, &s).is_err());
    }

    #[test]
    fn exclusions_follow_gkes_limits() {
        let s = support();
        let master = "1.33.5-gke.1080000";
        let with = |x: Value| json!({"window": {"maintenanceExclusions": {"x": x}}});
        let long =
            with(json!({"startTime": "2026-03-02T00:00:00Z", "endTime": "2026-04-02T00:00:01Z"}));
        assert_eq!(
            check_policy(&long, master, &s).unwrap_err().message,
            "Maintenance exclusion \"x\" of scope NO_UPGRADES cannot be longer than 30 days."
        );
        let minor = with(
            json!({"startTime": "2026-03-02T00:00:00Z", "endTime": "2026-06-02T00:00:00Z",
            "maintenanceExclusionOptions": {"scope": "NO_MINOR_UPGRADES"}}),
        );
        assert!(check_policy(&minor, master, &s).is_ok());
        let backwards =
            with(json!({"startTime": "2026-03-02T00:00:00Z", "endTime": "2026-03-01T00:00:00Z"}));
        assert!(
            check_policy(&backwards, master, &s)
                .unwrap_err()
                .message
                .contains("must end after it starts")
        );
        let eos = with(json!({"startTime": "2026-03-02T00:00:00+00:00",
            "maintenanceExclusionOptions": {"scope": "NO_MINOR_OR_NODE_UPGRADES", "endTimeBehavior": "UNTIL_END_OF_SUPPORT"}}));
        let stored = check_policy(&eos, master, &s).unwrap();
        let x = &stored["window"]["maintenanceExclusions"]["x"];
        assert_eq!(x["startTime"], "2026-03-02T00:00:00Z");
        assert_eq!(x["endTime"], json!(rfc3339(s.end_of(master))));
        // The end follows the minor when the control plane moves.
        let mut later = s.clone();
        later
            .schedule
            .end_of_support
            .insert("1.34".into(), "2027-02-28T00:00:00Z".into());
        let moved = follow_minor(&stored, "1.34.1-gke.1829001", &later).expect("changed");
        assert_eq!(
            moved["window"]["maintenanceExclusions"]["x"]["endTime"],
            "2027-02-28T00:00:00Z"
        );
        assert_ne!(moved["resourceVersion"], stored["resourceVersion"]);
        assert_eq!(follow_minor(&stored, master, &s), None);
        assert_eq!(follow_minor(&json!({}), master, &s), None);
        let eos_all = with(json!({"startTime": "2026-03-02T00:00:00Z",
            "maintenanceExclusionOptions": {"endTimeBehavior": "UNTIL_END_OF_SUPPORT"}}));
        assert!(
            check_policy(&eos_all, master, &s)
                .unwrap_err()
                .message
                .contains("UNTIL_END_OF_SUPPORT needs")
        );
        let past = with(
            json!({"startTime": "2027-03-02T00:00:00Z", "endTime": "2027-06-02T00:00:00Z",
            "maintenanceExclusionOptions": {"scope": "NO_MINOR_UPGRADES"}}),
        );
        assert!(
            check_policy(&past, master, &s)
                .unwrap_err()
                .message
                .contains("after the end of support of version 1.33")
        );
        let many: serde_json::Map<String, Value> = (0..21)
            .map(|i| {
                (
                    format!("x{i}"),
                    json!({"startTime": "2026-03-02T00:00:00Z", "endTime": "2026-03-03T00:00:00Z"}),
                )
            })
            .collect();
        let odd = with(
            json!({"startTime": "2026-03-02T00:00:00Z", "endTime": "2026-03-03T00:00:00Z",
            "maintenanceExclusionOptions": "NO_UPGRADES"}),
        );
        assert!(check_policy(&odd, master, &s).is_err());
        assert!(check_policy(&with(json!(5)), master, &s).is_err());
        assert!(check_policy(&json!({"window": "x"}), master, &s).is_ok());
        let many = json!({"window": {"maintenanceExclusions": many}});
        assert_eq!(
            check_policy(&many, master, &s).unwrap_err().message,
            "A cluster can have at most 20 maintenance exclusions; got 21."
        );
    }

    #[test]
    fn scopes_hold_back_what_they_cover() {
        use Upgrade::*;
        assert!(
            [MasterPatch, MasterMinor, NodePatch, NodeMinor]
                .iter()
                .all(|u| Scope::NoUpgrades.covers(*u))
        );
        assert!(
            !Scope::NoMinorUpgrades.covers(MasterPatch)
                && !Scope::NoMinorUpgrades.covers(NodePatch)
        );
        assert!(
            Scope::NoMinorUpgrades.covers(MasterMinor) && Scope::NoMinorUpgrades.covers(NodeMinor)
        );
        assert!(!Scope::NoMinorOrNodeUpgrades.covers(MasterPatch));
        assert!(
            Scope::NoMinorOrNodeUpgrades.covers(NodePatch)
                && Scope::NoMinorOrNodeUpgrades.covers(MasterMinor)
        );
        let s = support();
        let stored = json!({"window": {
            "dailyMaintenanceWindow": {"startTime": "02:00"},
            "maintenanceExclusions": {"freeze": {"startTime": "2026-03-02T00:00:00Z", "endTime": "2026-03-10T00:00:00Z",
                "maintenanceExclusionOptions": {"scope": "NO_MINOR_OR_NODE_UPGRADES"}}}}});
        let policy = policy_of(&stored, "1.33.5-gke.1080000", &s);
        assert!(policy.allows(MasterPatch, t("2026-03-03T03:00:00Z")));
        assert!(!policy.allows(MasterMinor, t("2026-03-03T03:00:00Z")));
        assert!(
            !policy.allows(MasterPatch, t("2026-03-03T07:00:00Z")),
            "outside the window"
        );
        assert!(policy.allows(MasterMinor, t("2026-03-10T03:00:00Z")));
        assert_eq!(
            policy.changes_between(t("2026-03-09T12:00:00Z"), t("2026-03-10T12:00:00Z")),
            vec![t("2026-03-10T02:00:00Z"), t("2026-03-10T00:00:00Z")]
        );
    }
}
