//! One cluster's object store: every object as JSON under `group/resource/namespace/name`, the
//! cluster-wide resourceVersion counter, and the log of changes that watches replay.
//!
//! Every change goes through [`Store::put`] or [`Store::remove`], which bump the resourceVersion
//! and append a watch event, so changes made by handlers and by controllers in `tick` are seen by
//! watchers alike. The event log is not persisted: after a restart, watches from an older
//! resourceVersion get `410 Expired` and relist, as they would after an etcd compaction.

use crate::clock::SimTime;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};

/// How many change events a cluster keeps for watches.
const EVENT_LOG_CAPACITY: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, as a watch delivers it.
#[derive(Debug, Clone)]
pub struct Event {
    pub resource_version: u64,
    pub kind: EventType,
    pub group: String,
    pub resource: String,
    pub namespace: String,
    pub object: Value,
}

/// The recent changes, oldest first.
#[derive(Debug, Clone, Default)]
pub struct EventLog {
    /// The resourceVersion just before the oldest retained event; `None` until first used.
    pub base: Option<u64>,
    pub events: VecDeque<Event>,
}

/// `group/resource/namespace/name` (namespace empty for cluster-scoped objects).
pub fn object_key(group: &str, resource: &str, namespace: &str, name: &str) -> String {
    format!("{group}/{resource}/{namespace}/{name}")
}

/// The parts of an object key.
pub fn split_key(key: &str) -> Option<(&str, &str, &str, &str)> {
    let mut parts = key.splitn(4, '/');
    Some((parts.next()?, parts.next()?, parts.next()?, parts.next()?))
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Store {
    /// The last resourceVersion handed out.
    pub resource_version: u64,
    pub objects: BTreeMap<String, Value>,
    /// Seed of the uid generator (set when the cluster is provisioned).
    pub uid_seed: u64,
    pub uid_counter: u64,
    /// When each object's current generation was written: what rollout delays count from (for
    /// pods, which have no generation, when they were created).
    pub generation_since: BTreeMap<String, (i64, SimTime)>,
    #[serde(skip)]
    pub log: EventLog,
    /// `group/resource` → the resourceVersion of its last put or remove (not persisted: a loaded
    /// store has none, and a controller comparing them redoes its pass).
    #[serde(skip)]
    pub revs: BTreeMap<String, u64>,
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Store {
    pub fn new(uid_seed: u64) -> Store {
        Store {
            uid_seed,
            ..Store::default()
        }
    }

    /// A fresh, deterministic UUID (version 4 layout).
    pub fn next_uid(&mut self) -> String {
        self.uid_counter += 1;
        let a = splitmix(self.uid_seed ^ self.uid_counter.wrapping_mul(2));
        let b = splitmix(self.uid_seed ^ self.uid_counter.wrapping_mul(2).wrapping_add(1));
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            ((b >> 48) & 0x3fff) | 0x8000,
            b & 0xffff_ffff_ffff
        )
    }

    pub fn get(&self, group: &str, resource: &str, namespace: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(&object_key(group, resource, namespace, name))
    }

    /// Objects of one resource, in one namespace or (None) in all, ordered by namespace and name.
    pub fn list(&self, group: &str, resource: &str, namespace: Option<&str>) -> Vec<&Value> {
        let prefix = match namespace {
            Some(ns) => format!("{group}/{resource}/{ns}/"),
            None => format!("{group}/{resource}/"),
        };
        self.objects
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(_, v)| v)
            .collect()
    }

    /// Keys of one resource's objects (all namespaces).
    pub fn keys(&self, group: &str, resource: &str) -> Vec<String> {
        let prefix = format!("{group}/{resource}/");
        self.objects
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, _)| k.clone())
            .collect()
    }

    fn log_event(&mut self, kind: EventType, key: &str, object: Value) {
        if self.log.base.is_none() {
            self.log.base = Some(self.resource_version.saturating_sub(1));
        }
        let Some((group, resource, namespace, _)) = split_key(key) else {
            return;
        };
        self.log.events.push_back(Event {
            resource_version: self.resource_version,
            kind,
            group: group.into(),
            resource: resource.into(),
            namespace: namespace.into(),
            object,
        });
        while self.log.events.len() > EVENT_LOG_CAPACITY {
            if let Some(old) = self.log.events.pop_front() {
                self.log.base = Some(old.resource_version);
            }
        }
    }

    fn touch(&mut self, group: &str, resource: &str) {
        self.revs
            .insert(format!("{group}/{resource}"), self.resource_version);
    }

    /// The resourceVersion of the last change to any object of one resource (0: none since the
    /// store was made or loaded).
    pub fn rev(&self, group: &str, resource: &str) -> u64 {
        self.revs
            .get(&format!("{group}/{resource}"))
            .copied()
            .unwrap_or(0)
    }

    /// Stores `object` (metadata already filled in) with a new resourceVersion; returns it.
    pub fn put(
        &mut self,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
        mut object: Value,
    ) -> Value {
        let key = object_key(group, resource, namespace, name);
        self.resource_version += 1;
        self.touch(group, resource);
        object["metadata"]["resourceVersion"] = Value::String(self.resource_version.to_string());
        let kind = if self.objects.contains_key(&key) {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.objects.insert(key.clone(), object.clone());
        self.log_event(kind, &key, object.clone());
        object
    }

    /// Removes an object; returns it as last seen (with the deletion's resourceVersion).
    pub fn remove(
        &mut self,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Option<Value> {
        let key = object_key(group, resource, namespace, name);
        let mut object = self.objects.remove(&key)?;
        self.generation_since.remove(&key);
        self.resource_version += 1;
        self.touch(group, resource);
        object["metadata"]["resourceVersion"] = Value::String(self.resource_version.to_string());
        self.log_event(EventType::Deleted, &key, object.clone());
        Some(object)
    }

    /// The events after `resource_version`, or `Err(oldest)` when they are no longer retained.
    pub fn events_after(&self, resource_version: u64) -> Result<Vec<Event>, u64> {
        let base = self.log.base.unwrap_or(self.resource_version);
        if resource_version < base {
            return Err(base + 1);
        }
        Ok(self
            .log
            .events
            .iter()
            .filter(|e| e.resource_version > resource_version)
            .cloned()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn puts_and_removes_bump_the_resource_version_and_log_events() {
        let mut store = Store::new(7);
        let a = store.put(
            "",
            "configmaps",
            "default",
            "a",
            json!({"metadata": {"name": "a"}}),
        );
        assert_eq!(a["metadata"]["resourceVersion"], "1");
        store.put(
            "",
            "configmaps",
            "default",
            "a",
            json!({"metadata": {"name": "a"}}),
        );
        let gone = store.remove("", "configmaps", "default", "a").unwrap();
        assert_eq!(gone["metadata"]["resourceVersion"], "3");
        let events = store.events_after(1).unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].kind, EventType::Modified);
        assert_eq!(events[1].kind, EventType::Deleted);
        assert_ne!(store.next_uid(), store.next_uid());
    }
}
