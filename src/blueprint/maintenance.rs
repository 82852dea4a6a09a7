//! Day-two rules: the cluster's maintenance policy (`[cluster.maintenance]`) and each pool's
//! upgrade strategy (`[gpu_pool.upgrade]`, `[system_pool.upgrade]`).
//!
//! What GKE refuses and can be known offline, from "Maintenance windows and exclusions"
//! (<https://cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions>)
//! and "Configure maintenance windows and exclusions"
//! (<https://cloud.google.com/kubernetes-engine/docs/how-to/maintenance-windows-and-exclusions>):
//! - a recurring window must leave at least 48 hours of maintenance availability in any rolling
//!   32 days, and only contiguous stretches of at least 4 hours count;
//! - its recurrence is an RFC 5545 RRULE (a3ctl understands `FREQ=DAILY` and `FREQ=WEEKLY` with
//!   `BYDAY` and `INTERVAL`, what GKE's guides use);
//! - an exclusion of scope "no upgrades" lasts at most 30 days; "no minor upgrades" and "no minor
//!   or node upgrades" may last until the version's end of support, which is what
//!   `endTimeBehavior: UNTIL_END_OF_SUPPORT` asks for (terraform-provider-google,
//!   `resource_container_cluster.go`, `exclusion_options.end_time_behavior`, only with those two
//!   scopes);
//! - an exclusion ends after it starts, and its name is a key of the cluster's
//!   `maintenanceExclusions` map, so names are unique.
//!
//! Upgrade strategies, from "Configure node upgrade strategies"
//! (<https://cloud.google.com/kubernetes-engine/docs/how-to/node-pool-upgrade-strategies>): a
//! surge upgrade with `maxSurge = 0` and `maxUnavailable = 0` is refused (it could never
//! replace a node); blue-green drains the old nodes in batches (`batchNodeCount` or
//! `batchPercentage` in (0, 1]) after creating the whole new pool.

use chrono::{DateTime, Utc};

use super::decode::Sp;
use super::error::{Finding, Findings};
use super::model::{
    BlueGreen, ExclusionScope, Maintenance, MaintenanceExclusion, MaintenanceWindow, Upgrade,
    UpgradeStrategy,
};
use super::schema::{RawMaintenance, RawUpgrade};
use super::validate::{choice, int_in};

/// The name of the exclusion a3ctl adds to every cluster unless `default_exclusion = false`.
pub const DEFAULT_EXCLUSION: &str = "a3ctl-no-minor-or-node-upgrades";
/// GKE's rule: hours of availability a window must leave in any rolling 32 days.
const MIN_HOURS: u64 = 48;
const ROLLING_DAYS: u64 = 32;
/// Only contiguous stretches of at least this many hours count towards [`MIN_HOURS`].
const MIN_STRETCH_HOURS: u64 = 4;
/// The longest "no upgrades" exclusion GKE accepts.
const MAX_NO_UPGRADES_DAYS: i64 = 30;
const DOCS: &str =
    "https://cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions";

/// The GPU default: no minor or node upgrades until the version's end of support, starting when
/// the policy is applied.
pub fn default_exclusion() -> MaintenanceExclusion {
    MaintenanceExclusion {
        name: DEFAULT_EXCLUSION.into(),
        scope: ExclusionScope::NoMinorOrNodeUpgrades,
        start: None,
        end: None,
        until_end_of_support: true,
    }
}

/// `2026-01-03T02:00:00Z`: how a3ctl writes every time it compares.
pub fn utc(time: &DateTime<Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// An RFC 3339 date-time with an offset, in UTC.
pub fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// `value` read with `parse`, or a finding at it: "`KEY` `VALUE` is not WHAT", with `label` and
/// how to write one (`example`, the value after `KEY = `).
fn read<T>(
    f: &mut Findings,
    value: &Sp<String>,
    key: &str,
    parse: impl Fn(&str) -> Option<T>,
    (what, label, how, example): (&str, &str, &str, &str),
) -> Option<T> {
    let parsed = parse(value.as_str());
    if parsed.is_none() {
        f.push(
            Finding::new(
                value.span.clone(),
                format!("`{key}` `{}` is not {what}", value.value),
                label,
            )
            .help(format!("{how}: {key} = {example}")),
        );
    }
    parsed
}

fn time(f: &mut Findings, value: &Sp<String>, key: &str) -> Option<DateTime<Utc>> {
    let words = (
        "an RFC 3339 date-time",
        "not a date-time with an offset",
        "write a date, a time and a UTC offset",
        "2026-01-03T02:00:00Z",
    );
    read(f, value, key, parse_time, words)
}

/// `8h`, `4h30m`, `90m`, `45s`, `2d`: a duration in seconds; `None` for anything else.
pub fn parse_duration(text: &str) -> Option<u64> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    let mut digits = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            'd' => 86_400,
            'h' => 3_600,
            'm' => 60,
            's' => 1,
            _ => return None,
        };
        let n: u64 = digits.parse().ok()?;
        digits.clear();
        total = total.checked_add(n.checked_mul(unit)?)?;
    }
    digits.is_empty().then_some(total)
}

fn duration(f: &mut Findings, value: &Sp<String>, key: &str) -> Option<u64> {
    let words = (
        "a duration",
        "not a duration",
        "write whole numbers with units d, h, m or s",
        "\"4h30m\"",
    );
    read(f, value, key, parse_duration, words)
}

/// A recurrence a3ctl can count: every `interval` days, or on `days` (0 = Monday) every
/// `interval` weeks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rrule {
    pub weekly: bool,
    pub interval: u64,
    /// Weekdays (0 = Monday); empty: every day (daily) or the start's weekday (weekly).
    pub days: Vec<u8>,
}

const DAYS: [&str; 7] = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];

/// Parses an RRULE of the subset GKE's guides use; the error says what is wrong.
pub fn parse_rrule(text: &str) -> Result<Rrule, String> {
    let mut freq = None;
    let mut interval = None;
    let mut days: Option<Vec<u8>> = None;
    for part in text.trim().split(';').filter(|p| !p.is_empty()) {
        let Some((key, value)) = part.split_once('=') else {
            return Err(format!("`{part}` is not KEY=VALUE"));
        };
        match key {
            "FREQ" if freq.is_none() => {
                freq = Some(match value {
                    "DAILY" => false,
                    "WEEKLY" => true,
                    other => {
                        return Err(format!(
                            "FREQ={other} is not supported; use FREQ=DAILY or FREQ=WEEKLY"
                        ));
                    }
                })
            }
            "INTERVAL" if interval.is_none() => {
                interval = Some(
                    value
                        .parse::<u64>()
                        .ok()
                        .filter(|n| (1..=365).contains(n))
                        .ok_or_else(|| format!("INTERVAL={value} is not a number from 1 to 365"))?,
                )
            }
            "BYDAY" if days.is_none() => {
                let mut list = Vec::new();
                for day in value.split(',') {
                    let index = DAYS.iter().position(|d| *d == day).ok_or_else(|| {
                        format!("`{day}` in BYDAY is not one of MO, TU, WE, TH, FR, SA, SU")
                    })?;
                    if !list.contains(&(index as u8)) {
                        list.push(index as u8);
                    }
                }
                days = Some(list);
            }
            "FREQ" | "INTERVAL" | "BYDAY" => return Err(format!("{key} is given twice")),
            other => {
                return Err(format!(
                    "`{other}` is not supported; use FREQ, INTERVAL and BYDAY"
                ));
            }
        }
    }
    let Some(weekly) = freq else {
        return Err("it has no FREQ".into());
    };
    Ok(Rrule {
        weekly,
        interval: interval.unwrap_or(1),
        days: days.unwrap_or_default(),
    })
}

impl Rrule {
    /// Occurrences in the worst 32 days.
    pub fn occurrences_in_rolling_window(&self) -> u64 {
        let per_period = if self.days.is_empty() {
            1
        } else {
            self.days.len() as u64
        };
        match (self.weekly, self.days.is_empty()) {
            // Daily with BYDAY: those weekdays, every `interval` weeks in effect.
            (false, true) => ROLLING_DAYS / self.interval,
            _ => per_period * (ROLLING_DAYS / (7 * self.interval)),
        }
    }
}

/// Hours of availability a window of `seconds` repeating as `rule` leaves in the worst 32 days
/// (stretches under 4 hours do not count).
pub fn hours_in_rolling_window(rule: &Rrule, seconds: u64) -> u64 {
    if seconds < MIN_STRETCH_HOURS * 3600 {
        return 0;
    }
    (rule.occurrences_in_rolling_window().saturating_mul(seconds) / 3600).min(ROLLING_DAYS * 24)
}

pub(crate) fn maintenance(raw: Option<&RawMaintenance>, f: &mut Findings) -> Option<Maintenance> {
    let Some(raw) = raw else {
        return Some(Maintenance {
            window: None,
            exclusions: vec![default_exclusion()],
            declared: false,
        });
    };
    let mut ok = true;
    let window = match &raw.window {
        None => None,
        Some(w) => {
            let start = w.start.as_ref().and_then(|s| time(f, s, "start"));
            let rule = w.recurrence.as_ref().and_then(|r| match parse_rrule(r.as_str()) {
                Ok(rule) => Some(rule),
                Err(reason) => {
                    f.push(
                        Finding::new(
                            r.span.clone(),
                            format!("`recurrence` `{}` is not a recurrence GKE accepts: {reason}", r.value),
                            "not an RRULE",
                        )
                        .help("write an RFC 5545 RRULE such as \"FREQ=WEEKLY;BYDAY=SA,SU\" or \"FREQ=DAILY\""),
                    );
                    None
                }
            });
            let seconds = match (&w.end, &w.duration) {
                (Some(_), Some(d)) => {
                    f.push(
                        Finding::new(
                            d.span.clone(),
                            "The maintenance window has both `end` and `duration`",
                            "give one",
                        )
                        .help("remove `duration` or `end`: the window's length is one of them"),
                    );
                    None
                }
                (None, None) => {
                    f.push(
                        Finding::new(w.anchor.clone(), "The maintenance window has neither `end` nor `duration`", "how long?")
                            .help("add `duration = \"8h\"` (or the end of the first occurrence, `end = 2026-01-03T10:00:00Z`)"),
                    );
                    None
                }
                (None, Some(d)) => duration(f, d, "duration").and_then(|secs| {
                    if secs > 366 * 86_400 {
                        // a3ctl's own bound (a window repeats; one longer than a year means
                        // nothing), which also keeps the end a representable date.
                        f.push(
                            Finding::new(
                                d.span.clone(),
                                "The maintenance window lasts more than a year",
                                "too long",
                            )
                            .help("give the length of one occurrence, e.g. duration = \"8h\""),
                        );
                        None
                    } else if secs == 0 {
                        f.push(
                            Finding::new(
                                d.span.clone(),
                                "The maintenance window lasts no time",
                                "zero",
                            )
                            .help("give a duration of at least 4h"),
                        );
                        None
                    } else {
                        Some(secs)
                    }
                }),
                (Some(end), None) => {
                    let end_time = time(f, end, "end");
                    match (start, end_time) {
                        (Some(s), Some(e)) if e <= s => {
                            f.push(
                                Finding::new(end.span.clone(), "The maintenance window ends before it starts", "not after `start`")
                                    .help("set `end` after `start` (the end of the window's first occurrence), or use `duration = \"8h\"`"),
                            );
                            None
                        }
                        (Some(s), Some(e)) => Some((e - s).num_seconds() as u64),
                        _ => None,
                    }
                }
            };
            if let (Some(rule), Some(secs), Some(recurrence)) = (&rule, seconds, &w.recurrence) {
                let hours = hours_in_rolling_window(rule, secs);
                if hours < MIN_HOURS {
                    let short = secs < MIN_STRETCH_HOURS * 3600;
                    let span = w.duration.as_ref().or(w.end.as_ref()).unwrap_or(recurrence);
                    f.push(
                        Finding::new(
                            span.span.clone(),
                            if short {
                                "The maintenance window is shorter than 4 hours: GKE counts only stretches of at least 4 hours towards the 48 hours it needs in 32 days".to_string()
                            } else {
                                format!("The maintenance window leaves {hours} hours in 32 days; GKE needs at least {MIN_HOURS}")
                            },
                            "too little maintenance time",
                        )
                        .also(recurrence.span.clone(), "repeats like this")
                        .help(format!("lengthen the window or repeat it more often: e.g. duration = \"8h\" with recurrence = \"FREQ=WEEKLY;BYDAY=SA,SU\" leaves 64 hours ({DOCS})")),
                    );
                    ok = false;
                }
            }
            match (start, seconds, &w.recurrence) {
                (Some(s), Some(secs), Some(r)) if rule.is_some() => Some(MaintenanceWindow {
                    start: utc(&s),
                    end: utc(&(s + chrono::Duration::seconds(secs as i64))),
                    recurrence: r.value.trim().to_string(),
                }),
                _ => {
                    ok = false;
                    None
                }
            }
        }
    };
    let with_default = raw.default_exclusion.as_ref().is_none_or(|v| v.value);
    let mut exclusions = Vec::new();
    if with_default {
        exclusions.push(default_exclusion());
    }
    let mut names: Vec<&Sp<String>> = Vec::new();
    for e in &raw.exclusions {
        let name = e.name.as_ref();
        if let Some(name) = name {
            if name.value.trim().is_empty() {
                f.push(
                    Finding::new(name.span.clone(), "An exclusion's `name` is empty", "empty")
                        .help("name it, e.g. name = \"launch-week\""),
                );
                ok = false;
            } else if let Some(first) = names.iter().find(|n| n.value == name.value) {
                f.push(
                    Finding::new(
                        name.span.clone(),
                        format!("Two maintenance exclusions are named `{}`", name.value),
                        "duplicate name",
                    )
                    .also(first.span.clone(), "first defined here")
                    .help("exclusion names are keys of the cluster's exclusions: rename one"),
                );
                ok = false;
            } else if with_default && name.value == DEFAULT_EXCLUSION {
                f.push(
                    Finding::new(name.span.clone(), format!("`{DEFAULT_EXCLUSION}` is the name of a3ctl's default exclusion"), "reserved name")
                        .help("rename this exclusion, or set `default_exclusion = false` to replace the default with it"),
                );
                ok = false;
            }
            names.push(name);
        }
        let scope = match &e.scope {
            None => Some(ExclusionScope::NoUpgrades),
            Some(s) => choice(f, s, "scope", &ExclusionScope::NAMES, ExclusionScope::parse),
        };
        let start = e.start.as_ref().and_then(|s| time(f, s, "start"));
        let end = e.end.as_ref().and_then(|s| time(f, s, "end"));
        let until = e.until_end_of_support.as_ref().filter(|u| u.value);
        let label = name.map(|n| format!("`{}`", n.value)).unwrap_or_default();
        match (&e.end, until) {
            (Some(_), Some(u)) => {
                f.push(
                    Finding::new(u.span.clone(), format!("Exclusion {label} has both `end` and `until_end_of_support`"), "give one")
                        .help("remove `end` (GKE ends the exclusion at the version's end of support) or `until_end_of_support`"),
                );
                ok = false;
            }
            (None, None) => {
                f.push(
                    Finding::new(e.anchor.clone(), format!("Exclusion {label} has no end"), "no `end`")
                        .help("add `end = 2026-03-08T00:00:00Z`, or `until_end_of_support = true` with scope \"no_minor_upgrades\" or \"no_minor_or_node_upgrades\""),
                );
                ok = false;
            }
            _ => {}
        }
        if let (Some(u), Some(ExclusionScope::NoUpgrades)) = (until, scope) {
            let mut finding = Finding::new(u.span.clone(), format!("Exclusion {label} cannot last until end of support with scope `no_upgrades`"), "not with no_upgrades")
                .help(format!("GKE lets only \"no_minor_upgrades\" and \"no_minor_or_node_upgrades\" last until end of support; set one of them as `scope`, or give `end` at most {MAX_NO_UPGRADES_DAYS} days after `start`"));
            if let Some(s) = &e.scope {
                finding = finding.also(s.span.clone(), "scope set here");
            }
            f.push(finding);
            ok = false;
        }
        if e.end.is_some() && e.start.is_none() {
            f.push(
                Finding::new(e.anchor.clone(), format!("Exclusion {label} has an `end` but no `start`"), "no `start`")
                    .help("add `start = 2026-03-01T00:00:00Z` (only an exclusion until end of support may start when it is applied)"),
            );
            ok = false;
        }
        if let (Some(s), Some(t), Some(end_value)) = (start, end, &e.end) {
            if t <= s {
                f.push(
                    Finding::new(
                        end_value.span.clone(),
                        format!("Exclusion {label} ends before it starts"),
                        "not after `start`",
                    )
                    .help("set `end` after `start`"),
                );
                ok = false;
            } else if scope == Some(ExclusionScope::NoUpgrades)
                && t - s > chrono::Duration::days(MAX_NO_UPGRADES_DAYS)
            {
                f.push(
                    Finding::new(end_value.span.clone(), format!("Exclusion {label} of scope `no_upgrades` lasts {} days; GKE allows at most {MAX_NO_UPGRADES_DAYS}", ((t - s).num_hours() + 23) / 24), "longer than 30 days")
                        .help(format!("end it by {} or use scope = \"no_minor_or_node_upgrades\", which may last until end of support ({DOCS})", utc(&(s + chrono::Duration::days(MAX_NO_UPGRADES_DAYS))))),
                );
                ok = false;
            }
        }
        if e.start.is_some() && start.is_none() || e.end.is_some() && end.is_none() {
            ok = false;
        }
        if let (Some(name), Some(scope)) = (name, scope) {
            exclusions.push(MaintenanceExclusion {
                name: name.value.clone(),
                scope,
                start: start.as_ref().map(utc),
                end: end.as_ref().map(utc),
                until_end_of_support: until.is_some(),
            });
        } else {
            ok = false;
        }
    }
    ok.then_some(Maintenance {
        window,
        exclusions,
        declared: true,
    })
}

/// The upgrade settings of a pool; `reservation`: it consumes a reservation, which rarely has
/// spare VMs, so surge defaults to 0 extra nodes and 1 unavailable.
pub(crate) fn upgrade(
    raw: Option<&RawUpgrade>,
    reservation: bool,
    f: &mut Findings,
) -> Option<Upgrade> {
    let (default_surge, default_unavailable) = if reservation { (0, 1) } else { (1, 0) };
    let Some(raw) = raw else {
        return Some(Upgrade {
            strategy: UpgradeStrategy::Surge,
            max_surge: default_surge,
            max_unavailable: default_unavailable,
            blue_green: None,
            declared: false,
        });
    };
    let mut ok = true;
    let strategy = match &raw.strategy {
        None => Some(UpgradeStrategy::Surge),
        Some(s) => choice(
            f,
            s,
            "strategy",
            &UpgradeStrategy::NAMES,
            UpgradeStrategy::parse,
        ),
    };
    let blue_green_keys = [
        (
            "batch_nodes",
            raw.batch_nodes.as_ref().map(|v| v.span.clone()),
        ),
        (
            "batch_percent",
            raw.batch_percent.as_ref().map(|v| v.span.clone()),
        ),
        (
            "batch_soak",
            raw.batch_soak.as_ref().map(|v| v.span.clone()),
        ),
        ("pool_soak", raw.pool_soak.as_ref().map(|v| v.span.clone())),
    ];
    let surge_keys = [
        ("max_surge", raw.max_surge.as_ref().map(|v| v.span.clone())),
        (
            "max_unavailable",
            raw.max_unavailable.as_ref().map(|v| v.span.clone()),
        ),
    ];
    let (wrong, other) = match strategy {
        Some(UpgradeStrategy::Surge) => (&blue_green_keys[..], "blue-green"),
        Some(UpgradeStrategy::BlueGreen) => (&surge_keys[..], "surge"),
        None => (&[][..], ""),
    };
    for (key, span) in wrong {
        if let Some(span) = span {
            f.push(
                Finding::new(
                    span.clone(),
                    format!("`{key}` is a setting of the {other} strategy"),
                    format!("only with strategy = \"{other}\""),
                )
                .help(format!("remove `{key}`, or set strategy = \"{other}\"")),
            );
            ok = false;
        }
    }
    let limit = "GKE counts surge nodes per zone; at most 1000, the size of a pool's zone";
    let max_surge = match &raw.max_surge {
        None => Some(default_surge),
        Some(v) => int_in(f, v, "max_surge", 0, 1000, limit),
    };
    let max_unavailable = match &raw.max_unavailable {
        None => Some(default_unavailable),
        Some(v) => int_in(f, v, "max_unavailable", 0, 1000, limit),
    };
    if strategy == Some(UpgradeStrategy::Surge)
        && max_surge == Some(0)
        && max_unavailable == Some(0)
    {
        let at = match (&raw.max_surge, &raw.max_unavailable) {
            (Some(s), Some(u)) => {
                if s.span.start > u.span.start {
                    s.span.clone()
                } else {
                    u.span.clone()
                }
            }
            (Some(s), None) => s.span.clone(),
            (None, Some(u)) => u.span.clone(),
            (None, None) => raw.anchor.clone(),
        };
        f.push(
            Finding::new(at, "`max_surge` and `max_unavailable` are both 0: GKE refuses a surge upgrade that can neither add a node nor take one down", "both zero")
                .help(if reservation {
                    "set `max_unavailable = 1` (one node down at a time, no extra VM from the reservation)"
                } else {
                    "set `max_surge = 1` (one extra node at a time) or `max_unavailable = 1` (one node down at a time)"
                }),
        );
        ok = false;
    }
    let blue_green = if strategy == Some(UpgradeStrategy::BlueGreen) {
        if let (Some(_), Some(p)) = (&raw.batch_nodes, &raw.batch_percent) {
            f.push(
                Finding::new(
                    p.span.clone(),
                    "`batch_nodes` and `batch_percent` are both set",
                    "give one",
                )
                .help("a batch is a number of nodes or a percent of the pool: remove one"),
            );
            ok = false;
        }
        let batch_nodes = raw.batch_nodes.as_ref().map(|v| {
            int_in(
                f,
                v,
                "batch_nodes",
                1,
                1000,
                "nodes drained per batch, at least 1",
            )
        });
        let batch_percent = raw.batch_percent.as_ref().map(|v| {
            int_in(
                f,
                v,
                "batch_percent",
                1,
                100,
                "GKE's batchPercentage is in (0, 1]: 1 to 100 percent",
            )
        });
        let batch_soak = raw
            .batch_soak
            .as_ref()
            .map(|v| duration(f, v, "batch_soak"));
        let pool_soak = raw.pool_soak.as_ref().map(|v| duration(f, v, "pool_soak"));
        match (batch_nodes, batch_percent, batch_soak, pool_soak) {
            (Some(None), _, _, _)
            | (_, Some(None), _, _)
            | (_, _, Some(None), _)
            | (_, _, _, Some(None)) => {
                ok = false;
                None
            }
            (nodes, percent, batch_soak, pool_soak) => {
                let percent = percent.flatten();
                Some(BlueGreen {
                    batch_nodes: nodes
                        .flatten()
                        .or(if percent.is_none() { Some(1) } else { None }),
                    batch_percent: percent,
                    batch_soak_secs: batch_soak.flatten().unwrap_or(0),
                    pool_soak_secs: pool_soak.flatten().unwrap_or(3600),
                })
            }
        }
    } else {
        None
    };
    let (strategy, max_surge, max_unavailable) = (strategy?, max_surge?, max_unavailable?);
    ok.then_some(match strategy {
        UpgradeStrategy::Surge => Upgrade {
            strategy,
            max_surge,
            max_unavailable,
            blue_green: None,
            declared: true,
        },
        // Surge numbers do not apply to blue-green: GKE's own defaults are kept out of the spec.
        UpgradeStrategy::BlueGreen => Upgrade {
            strategy,
            max_surge: default_surge,
            max_unavailable: default_unavailable,
            blue_green,
            declared: true,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::testing::{BASE, one_problem, problems, with};
    use crate::blueprint::{UpgradeStrategy, parse};

    /// `[cluster.maintenance.<table>]` (or the table itself with `table = ""`) at line 6, `lines`
    /// from line 7.
    fn table(table: &str, lines: &str) -> String {
        BASE.replace("[[gpu_pool]]", &format!("{table}\n{lines}\n\n[[gpu_pool]]"))
    }

    fn window(lines: &str) -> String {
        table("[cluster.maintenance.window]", lines)
    }

    fn exclusion(lines: &str) -> String {
        table("[[cluster.maintenance.exclusion]]", lines)
    }

    #[test]
    fn a_gpu_cluster_defaults_to_no_minor_or_node_upgrades_until_end_of_support() {
        let bp = parse(BASE, "t").unwrap();
        let m = bp.cluster.maintenance.unwrap();
        assert_eq!(m.exclusions, [default_exclusion()]);
        assert_eq!(
            m.exclusions[0].scope.api_value(),
            "NO_MINOR_OR_NODE_UPGRADES"
        );
        assert!(m.window.is_none() && !m.declared);
        let off = table("[cluster.maintenance]", "default_exclusion = false");
        let m = parse(&off, "t").unwrap().cluster.maintenance.unwrap();
        assert!(m.exclusions.is_empty() && m.declared);
    }

    #[test]
    fn a_window_and_exclusions_are_read_in_utc() {
        let text = format!(
            "{}\n[[cluster.maintenance.exclusion]]\nname = \"launch\"\nstart = \"2026-03-01T01:00:00+01:00\"\nend = 2026-03-08T00:00:00Z\n",
            window("start = 2026-01-03T02:00:00Z\nduration = \"8h\"\nrecurrence = \"FREQ=WEEKLY;BYDAY=SA,SU\"")
                .replace("\n[[gpu_pool]]\nname = \"a3mega\"\nmachine_type = \"a3-megagpu-8g\"\nnodes = 2\n", "")
        ) + "\n[[gpu_pool]]\nname = \"a3mega\"\nmachine_type = \"a3-megagpu-8g\"\nnodes = 2\n";
        let m = parse(&text, "t").unwrap().cluster.maintenance.unwrap();
        let w = m.window.unwrap();
        assert_eq!(
            (w.start.as_str(), w.end.as_str()),
            ("2026-01-03T02:00:00Z", "2026-01-03T10:00:00Z")
        );
        assert_eq!(m.exclusions.len(), 2);
        let launch = &m.exclusions[1];
        assert_eq!(launch.start.as_deref(), Some("2026-03-01T00:00:00Z"));
        assert_eq!(launch.scope, ExclusionScope::NoUpgrades);
        // `end` instead of `duration`.
        let m = parse(&window("start = 2026-01-03T02:00:00Z\nend = 2026-01-03T06:00:00Z\nrecurrence = \"FREQ=DAILY\""), "t").unwrap();
        assert_eq!(
            m.cluster.maintenance.unwrap().window.unwrap().end,
            "2026-01-03T06:00:00Z"
        );
    }

    #[test]
    fn rrules_are_parsed_and_counted() {
        let weekend = parse_rrule("FREQ=WEEKLY;BYDAY=SA,SU").unwrap();
        assert_eq!(hours_in_rolling_window(&weekend, 8 * 3600), 64);
        assert_eq!(
            hours_in_rolling_window(&parse_rrule("FREQ=DAILY").unwrap(), 4 * 3600),
            128
        );
        assert_eq!(
            hours_in_rolling_window(&parse_rrule("FREQ=DAILY").unwrap(), 3 * 3600),
            0
        );
        assert_eq!(
            hours_in_rolling_window(&parse_rrule("FREQ=WEEKLY;INTERVAL=2").unwrap(), 24 * 3600),
            48
        );
        for (bad, why) in [
            ("FREQ=HOURLY", "FREQ=HOURLY is not supported"),
            ("BYDAY=SA", "it has no FREQ"),
            ("FREQ=WEEKLY;BYDAY=SAT", "`SAT` in BYDAY"),
            ("FREQ=DAILY;FREQ=DAILY", "FREQ is given twice"),
            ("FREQ=DAILY;COUNT=3", "`COUNT` is not supported"),
            ("FREQ=DAILY;INTERVAL=0", "INTERVAL=0"),
            ("WEEKLY", "not KEY=VALUE"),
        ] {
            let err = parse_rrule(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
        assert_eq!(parse_duration("4h30m"), Some(16200));
        assert_eq!(parse_duration("2d"), Some(172800));
        for bad in ["", "4", "h", "4x", "-1h", "99999999999999999999h"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn window_rules_point_at_the_key() {
        let p = one_problem(
            &window(
                "start = 2026-01-03T02:00:00Z\nduration = \"8h\"\nrecurrence = \"FREQ=HOURLY\"",
            ),
            "`recurrence` `FREQ=HOURLY` is not a recurrence GKE accepts: FREQ=HOURLY is not supported; use FREQ=DAILY or FREQ=WEEKLY",
            9,
            14,
        );
        assert!(p.help.unwrap().contains("FREQ=WEEKLY;BYDAY=SA,SU"));
        let p = one_problem(
            &window(
                "start = 2026-01-03T02:00:00Z\nduration = \"8h\"\nrecurrence = \"FREQ=WEEKLY;BYDAY=SA\"",
            ),
            "The maintenance window leaves 32 hours in 32 days; GKE needs at least 48",
            8,
            12,
        );
        assert!(p.help.unwrap().contains("leaves 64 hours"));
        one_problem(
            &window("start = 2026-01-03T02:00:00Z\nduration = \"3h\"\nrecurrence = \"FREQ=DAILY\""),
            "The maintenance window is shorter than 4 hours",
            8,
            12,
        );
        one_problem(
            &window(
                "start = 2026-01-03T02:00:00Z\nend = 2026-01-03T01:00:00Z\nrecurrence = \"FREQ=DAILY\"",
            ),
            "The maintenance window ends before it starts",
            8,
            7,
        );
        one_problem(
            &window(
                "start = 2026-01-03T02:00:00Z\nend = 2026-01-03T10:00:00Z\nduration = \"8h\"\nrecurrence = \"FREQ=DAILY\"",
            ),
            "The maintenance window has both `end` and `duration`",
            9,
            12,
        );
        one_problem(
            &window("start = 2026-01-03T02:00:00Z\nrecurrence = \"FREQ=DAILY\""),
            "The maintenance window has neither `end` nor `duration`",
            6,
            22,
        );
        let problem = one_problem(
            &window("start = \"Saturday 2am\"\nduration = \"8h\"\nrecurrence = \"FREQ=DAILY\""),
            "`start` `Saturday 2am` is not an RFC 3339 date-time",
            7,
            9,
        );
        assert_eq!(
            problem.help.as_deref(),
            Some("write a date, a time and a UTC offset: start = 2026-01-03T02:00:00Z")
        );
        one_problem(
            &window("start = 2026-01-03T02:00:00\nduration = \"8h\"\nrecurrence = \"FREQ=DAILY\""),
            "`start` `2026-01-03T02:00:00` is not an RFC 3339 date-time",
            7,
            9,
        );
        let problem = one_problem(
            &window(
                "start = 2026-01-03T02:00:00Z\nduration = \"eight hours\"\nrecurrence = \"FREQ=DAILY\"",
            ),
            "`duration` `eight hours` is not a duration",
            8,
            12,
        );
        assert_eq!(
            problem.help.as_deref(),
            Some("write whole numbers with units d, h, m or s: duration = \"4h30m\"")
        );
        one_problem(
            &window(
                "start = 9999-12-31T02:00:00Z\nduration = \"99999999999d\"\nrecurrence = \"FREQ=DAILY\"",
            ),
            "The maintenance window lasts more than a year",
            8,
            12,
        );
        one_problem(
            &window("start = 2026-01-03T02:00:00Z\nduration = \"0h\"\nrecurrence = \"FREQ=DAILY\""),
            "The maintenance window lasts no time",
            8,
            12,
        );
        one_problem(
            &window("start = 2026-01-03T02:00:00Z\nduration = \"8h\""),
            "Missing required key `recurrence` in [cluster.maintenance.window]",
            6,
            22,
        );
    }

    #[test]
    fn exclusion_rules_point_at_the_key() {
        let p = one_problem(
            &exclusion(
                "name = \"launch\"\nstart = 2026-03-01T00:00:00Z\nend = 2026-04-01T00:00:00Z",
            ),
            "Exclusion `launch` of scope `no_upgrades` lasts 31 days; GKE allows at most 30",
            9,
            7,
        );
        assert!(p.help.unwrap().contains("end it by 2026-03-31T00:00:00Z"));
        // Thirty days exactly is allowed; a longer scope may last longer.
        assert!(
            problems(&exclusion(
                "name = \"launch\"\nstart = 2026-03-01T00:00:00Z\nend = 2026-03-31T00:00:00Z"
            ))
            .is_empty()
        );
        assert!(problems(&exclusion("name = \"q2\"\nstart = 2026-03-01T00:00:00Z\nend = 2026-06-01T00:00:00Z\nscope = \"no_minor_upgrades\"")).is_empty());
        one_problem(
            &exclusion(
                "name = \"launch\"\nstart = 2026-03-01T00:00:00Z\nend = 2026-02-01T00:00:00Z",
            ),
            "Exclusion `launch` ends before it starts",
            9,
            7,
        );
        let p = one_problem(
            &exclusion("name = \"run\"\nuntil_end_of_support = true\nscope = \"no_upgrades\""),
            "Exclusion `run` cannot last until end of support with scope `no_upgrades`",
            8,
            24,
        );
        assert!(p.help.unwrap().contains("no_minor_or_node_upgrades"));
        // GKE's default scope is no_upgrades: the same rule without a scope.
        one_problem(
            &exclusion("name = \"run\"\nuntil_end_of_support = true"),
            "cannot last until end of support with scope `no_upgrades`",
            8,
            24,
        );
        assert!(
            problems(&exclusion(
                "name = \"run\"\nuntil_end_of_support = true\nscope = \"no_minor_upgrades\""
            ))
            .is_empty()
        );
        one_problem(
            &exclusion(
                "name = \"run\"\nend = 2026-03-01T00:00:00Z\nstart = 2026-02-01T00:00:00Z\nuntil_end_of_support = true\nscope = \"no_minor_upgrades\"",
            ),
            "Exclusion `run` has both `end` and `until_end_of_support`",
            10,
            24,
        );
        one_problem(
            &exclusion("name = \"run\"\nstart = 2026-02-01T00:00:00Z"),
            "Exclusion `run` has no end",
            6,
            1,
        );
        one_problem(
            &exclusion("name = \"run\"\nend = 2026-02-01T00:00:00Z"),
            "Exclusion `run` has an `end` but no `start`",
            6,
            1,
        );
        one_problem(
            &exclusion("name = \"run\"\nuntil_end_of_support = true\nscope = \"no_minor\""),
            "`scope` must be `no_upgrades`, `no_minor_upgrades` or `no_minor_or_node_upgrades`, found `no_minor`",
            9,
            9,
        );
        one_problem(
            &exclusion("name = \"\"\nuntil_end_of_support = true\nscope = \"no_minor_upgrades\""),
            "An exclusion's `name` is empty",
            7,
            8,
        );
        one_problem(
            &exclusion(&format!(
                "name = \"{DEFAULT_EXCLUSION}\"\nuntil_end_of_support = true\nscope = \"no_minor_upgrades\""
            )),
            "is the name of a3ctl's default exclusion",
            7,
            8,
        );
        let two = exclusion(
            "name = \"run\"\nuntil_end_of_support = true\nscope = \"no_minor_upgrades\"\n\n[[cluster.maintenance.exclusion]]\nname = \"run\"\nuntil_end_of_support = true\nscope = \"no_minor_upgrades\"",
        );
        let p = one_problem(&two, "Two maintenance exclusions are named `run`", 12, 8);
        assert_eq!(
            p.help.as_deref(),
            Some("exclusion names are keys of the cluster's exclusions: rename one")
        );
        one_problem(
            &table("[cluster.maintenance]", "windows = {}"),
            "Unknown key `windows` in [cluster.maintenance]",
            7,
            1,
        );
    }

    fn pool_upgrade(pool_extra: &str, lines: &str) -> String {
        with(&format!("{pool_extra}\n[gpu_pool.upgrade]\n{lines}\n"))
    }

    const RESERVED: &str = "capacity = \"reservation\"\nreservation = \"res\"\n";

    #[test]
    fn upgrade_settings_default_by_capacity() {
        let upgrade = |text: &str| {
            parse(text, "t").unwrap().gpu_pools[0]
                .upgrade
                .clone()
                .unwrap()
        };
        let on_demand = upgrade(BASE);
        assert_eq!((on_demand.max_surge, on_demand.max_unavailable), (1, 0));
        let reserved = upgrade(&with(RESERVED));
        assert_eq!((reserved.max_surge, reserved.max_unavailable), (0, 1));
        assert!(!reserved.declared);
        // The user's numbers win; the other keeps its default.
        let more = upgrade(&pool_upgrade(RESERVED, "max_surge = 2"));
        assert_eq!((more.max_surge, more.max_unavailable), (2, 1));
        assert!(more.declared);
        let bg = upgrade(&pool_upgrade(
            "",
            "strategy = \"blue-green\"\nbatch_percent = 25\nbatch_soak = \"10m\"",
        ));
        assert_eq!(bg.strategy, UpgradeStrategy::BlueGreen);
        let settings = bg.blue_green.unwrap();
        assert_eq!(
            (settings.batch_nodes, settings.batch_percent),
            (None, Some(25))
        );
        assert_eq!(
            (settings.batch_soak_secs, settings.pool_soak_secs),
            (600, 3600)
        );
        let system = parse(&with("\n[system_pool.upgrade]\nmax_surge = 3\n"), "t")
            .unwrap()
            .system_pool
            .upgrade
            .unwrap();
        assert_eq!((system.max_surge, system.max_unavailable), (3, 0));
    }

    #[test]
    fn upgrade_rules_point_at_the_key() {
        // BASE's pool ends on line 9; the table's header is on line 11.
        let p = one_problem(
            &pool_upgrade("", "max_surge = 0\nmax_unavailable = 0"),
            "`max_surge` and `max_unavailable` are both 0",
            13,
            19,
        );
        assert!(p.help.unwrap().contains("max_surge = 1"));
        // On a reservation, max_unavailable defaults to 1: setting it to 0 leaves nothing.
        let p = one_problem(
            &pool_upgrade(RESERVED, "max_unavailable = 0"),
            "are both 0",
            14,
            19,
        );
        assert!(p.help.unwrap().contains("no extra VM from the reservation"));
        one_problem(
            &pool_upgrade("", "max_surge = 1001"),
            "`max_surge` must be between 0 and 1000, found 1001",
            12,
            13,
        );
        one_problem(
            &pool_upgrade("", "strategy = \"bluegreen\""),
            "`strategy` must be `surge` or `blue-green`, found `bluegreen`",
            12,
            12,
        );
        one_problem(
            &pool_upgrade("", "batch_nodes = 2"),
            "`batch_nodes` is a setting of the blue-green strategy",
            12,
            15,
        );
        one_problem(
            &pool_upgrade("", "strategy = \"blue-green\"\nmax_surge = 2"),
            "`max_surge` is a setting of the surge strategy",
            13,
            13,
        );
        one_problem(
            &pool_upgrade(
                "",
                "strategy = \"blue-green\"\nbatch_nodes = 2\nbatch_percent = 50",
            ),
            "`batch_nodes` and `batch_percent` are both set",
            14,
            17,
        );
        one_problem(
            &pool_upgrade("", "strategy = \"blue-green\"\nbatch_percent = 0"),
            "`batch_percent` must be between 1 and 100, found 0",
            13,
            17,
        );
        one_problem(
            &pool_upgrade("", "strategy = \"blue-green\"\npool_soak = \"an hour\""),
            "`pool_soak` `an hour` is not a duration",
            13,
            13,
        );
        one_problem(
            &with("\n[system_pool.upgrade]\nmax_surge = 0\nmax_unavailable = 0\n"),
            "are both 0",
            13,
            19,
        );
    }
}
