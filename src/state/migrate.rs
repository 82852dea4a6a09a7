//! Reading states written by earlier formats.
//!
//! - Format 1 → 2: GPU NICs are numbered from 1 everywhere (Google's guides and manifests count
//!   `vpc1`…`vpc8` and `eth1`…`eth8`; GKE's `gcloud compute networks create` loops run `seq 1 8`),
//!   where format 1 numbered a3ctl's addresses from 0 (`network.gpu-0`, `subnetwork.gpu-0`,
//!   `firewall.gpu-0-internal`). The addresses move up by one; the cloud ids in the records do not
//!   change, and [`State::gpu_name_base`] tells the graph to keep naming this deployment's GPU VPCs
//!   from 0, so its plan stays empty.

use super::State;
use crate::resource::{Addr, Kind};

/// `addr` as format 2 names it (an address that format 1 and 2 name alike is returned as it is).
pub fn renumbered(addr: &Addr) -> Addr {
    let bump = |n: &str| n.parse::<usize>().ok().map(|n| (n + 1).to_string());
    let name = match addr.kind {
        Kind::Network | Kind::Subnetwork => addr
            .name
            .strip_prefix("gpu-")
            .and_then(bump)
            .map(|n| format!("gpu-{n}")),
        Kind::Firewall => addr
            .name
            .strip_prefix("gpu-")
            .and_then(|rest| rest.strip_suffix("-internal"))
            .and_then(bump)
            .map(|n| format!("gpu-{n}-internal")),
        _ => None,
    };
    match name {
        Some(name) => Addr::new(addr.kind, name),
        None => addr.clone(),
    }
}

/// Brings a state read in format `version` up to the current one.
pub fn upgrade(state: &mut State, version: u32) {
    if version < 2 {
        let resources = std::mem::take(&mut state.resources);
        state.resources = resources
            .into_iter()
            .map(|(addr, mut record)| {
                for dep in &mut record.dependencies {
                    *dep = renumbered(dep);
                }
                if let Some(with) = &mut record.lifecycle.deleted_with {
                    *with = renumbered(with);
                }
                (renumbered(&addr), record)
            })
            .collect();
        for pending in &mut state.pending {
            pending.addr = renumbered(&pending.addr);
            for dep in &mut pending.dependencies {
                *dep = renumbered(dep);
            }
            if let Some(with) = &mut pending.lifecycle.deleted_with {
                *with = renumbered(with);
            }
        }
    }
    state.version = super::FORMAT_VERSION;
}

impl State {
    /// The number the cloud name of this deployment's first GPU VPC ends with
    /// (`<name>-gpunet-<n>`): what its record of `network.gpu-1` says, when there is one.
    pub fn gpu_name_base(&self) -> Option<usize> {
        let record = self.resources.get(&Addr::new(Kind::Network, "gpu-1"))?;
        record.id.rsplit("-gpunet-").next()?.parse().ok()
    }
}

impl State {
    /// Whether the record of `addr` exists and predates `field`: it holds no value for it (an
    /// a3ctl that did not manage the field wrote it, or the blueprint left the field alone).
    pub fn predates(&self, addr: &Addr, field: &str) -> bool {
        self.resources
            .get(addr)
            .is_some_and(|r| r.spec.get(field).is_none_or(serde_json::Value::is_null))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Lifecycle, PendingAction, PendingOperation, Record};
    use serde_json::json;

    fn record(kind: Kind, id: &str, deps: &[Addr]) -> Record {
        Record {
            kind,
            id: id.into(),
            spec: json!({}),
            outputs: json!({}),
            dependencies: deps.to_vec(),
            tainted: false,
            lifecycle: Lifecycle::default(),
            updated_at: String::new(),
        }
    }

    #[test]
    fn format_1_gpu_addresses_move_up_by_one_and_keep_their_cloud_ids() {
        let net = |n: &str| Addr::new(Kind::Network, n);
        let sub = |n: &str| Addr::new(Kind::Subnetwork, n);
        let mut state = State::new("a3mega", "l".into());
        state.version = 1;
        for i in 0..8 {
            let id = format!("projects/p/global/networks/a3mega-gpunet-{i}");
            state
                .resources
                .insert(net(&format!("gpu-{i}")), record(Kind::Network, &id, &[]));
            state.resources.insert(
                sub(&format!("gpu-{i}")),
                record(
                    Kind::Subnetwork,
                    &format!("{id}-subnet"),
                    &[net(&format!("gpu-{i}"))],
                ),
            );
            state.resources.insert(
                Addr::new(Kind::Firewall, format!("gpu-{i}-internal")),
                record(Kind::Firewall, "fw", &[net(&format!("gpu-{i}"))]),
            );
        }
        let pool = Addr::new(Kind::NodePool, "gpu-0");
        state.resources.insert(
            pool.clone(),
            record(
                Kind::NodePool,
                "pool",
                &[sub("gpu-0"), sub("gpu-7"), net("primary")],
            ),
        );
        state
            .resources
            .insert(net("primary"), record(Kind::Network, "primary", &[]));
        state.pending.push(PendingOperation {
            addr: sub("gpu-3"),
            action: PendingAction::Create,
            id: "x".into(),
            operation: None,
            spec: json!({}),
            dependencies: vec![net("gpu-3")],
            lifecycle: Lifecycle::default(),
            started_at: String::new(),
        });
        assert_eq!(
            state.gpu_name_base(),
            Some(1),
            "format 1's gpu-1 is the second VPC"
        );

        upgrade(&mut state, 1);
        assert_eq!(state.version, crate::state::FORMAT_VERSION);
        assert!(!state.resources.contains_key(&net("gpu-0")));
        assert_eq!(
            state.resources[&net("gpu-1")].id,
            "projects/p/global/networks/a3mega-gpunet-0"
        );
        assert_eq!(state.resources[&sub("gpu-8")].dependencies, [net("gpu-8")]);
        assert!(
            state
                .resources
                .contains_key(&Addr::new(Kind::Firewall, "gpu-8-internal"))
        );
        // A GPU pool's own name is the user's, not an index: it stays.
        assert_eq!(
            state.resources[&pool].dependencies,
            [sub("gpu-1"), sub("gpu-8"), net("primary")]
        );
        assert!(state.resources.contains_key(&net("primary")));
        assert_eq!(state.pending[0].addr, sub("gpu-4"));
        assert_eq!(state.pending[0].dependencies, [net("gpu-4")]);
        assert_eq!(state.gpu_name_base(), Some(0));
        assert_eq!(state.resources.len(), 8 * 3 + 2);
    }

    #[test]
    fn a_current_state_is_left_alone() {
        let mut state = State::new("a3mega", "l".into());
        state.resources.insert(
            Addr::new(Kind::Network, "gpu-1"),
            record(
                Kind::Network,
                "projects/p/global/networks/a3mega-gpunet-1",
                &[],
            ),
        );
        let before = state.clone();
        upgrade(&mut state, crate::state::FORMAT_VERSION);
        assert_eq!(state, before);
        assert_eq!(state.gpu_name_base(), Some(1));
        assert_eq!(State::new("x", "l".into()).gpu_name_base(), None);
    }
}
