//! Edits of a state by hand (`a3ctl state rm`, `state mv`, imports): each checks what would make
//! the state lie, changes the records, and counts as one save ([`State::touch`]).

use super::{PendingAction, Record, State};
use crate::resource::{Addr, Kind};

/// Why an edit was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EditError {
    /// An interrupted apply left an operation on it: the next apply must finish it first.
    #[error("`{addr}` has an unfinished {action:?} operation recorded by an interrupted apply")]
    Pending { addr: Addr, action: PendingAction },
    #[error("`{0}` is not in state")]
    NotRecorded(Addr),
    /// A record keeps its kind.
    #[error("a {from} cannot become a {to}")]
    KindChange { from: Kind, to: Kind },
    #[error("`{0}` is already in state")]
    Taken(Addr),
}

impl State {
    /// Marks the state as written by this a3ctl once more: the serial grows by one.
    pub fn touch(&mut self) {
        self.serial += 1;
        self.a3ctl_version = env!("CARGO_PKG_VERSION").to_string();
    }

    /// Fails if an operation on `addr` is journaled.
    pub fn refuse_pending(&self, addr: &Addr) -> Result<(), EditError> {
        match self.pending_for(addr) {
            Some(p) => Err(EditError::Pending {
                addr: addr.clone(),
                action: p.action,
            }),
            None => Ok(()),
        }
    }

    /// Forgets the record of `addr` (the resource itself stays in the cloud).
    pub fn remove_record(&mut self, addr: &Addr) -> Result<Record, EditError> {
        self.refuse_pending(addr)?;
        let record = self
            .resources
            .remove(addr)
            .ok_or_else(|| EditError::NotRecorded(addr.clone()))?;
        self.touch();
        Ok(record)
    }

    /// Renames `from` to `to`: the record, every dependency on it, and the journal's.
    pub fn move_record(&mut self, from: &Addr, to: &Addr) -> Result<(), EditError> {
        if to.kind != from.kind {
            return Err(EditError::KindChange {
                from: from.kind,
                to: to.kind,
            });
        }
        if self.resources.contains_key(to) {
            return Err(EditError::Taken(to.clone()));
        }
        self.refuse_pending(from)?;
        let record = self
            .resources
            .remove(from)
            .ok_or_else(|| EditError::NotRecorded(from.clone()))?;
        self.resources.insert(to.clone(), record);
        let rename = |deps: &mut Vec<Addr>| {
            for d in deps.iter_mut().filter(|d| *d == from) {
                *d = to.clone();
            }
        };
        self.resources
            .values_mut()
            .for_each(|r| rename(&mut r.dependencies));
        self.pending
            .iter_mut()
            .for_each(|p| rename(&mut p.dependencies));
        self.touch();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::PendingOperation;
    use serde_json::json;

    fn record(dependencies: Vec<Addr>) -> Record {
        Record {
            kind: Kind::Network,
            id: "projects/p/global/networks/n".into(),
            spec: json!({}),
            outputs: json!({}),
            dependencies,
            tainted: false,
            lifecycle: Default::default(),
            updated_at: "2026-11-21T00:00:00Z".into(),
        }
    }

    #[test]
    fn a_move_renames_the_record_and_every_reference_to_it() {
        let (a, b, c) = (
            Addr::new(Kind::Network, "a"),
            Addr::new(Kind::Network, "b"),
            Addr::new(Kind::Subnetwork, "c"),
        );
        let d = Addr::new(Kind::Subnetwork, "d");
        let mut state = State::new("x", "l".into());
        state.resources.insert(a.clone(), record(vec![]));
        state.resources.insert(c.clone(), record(vec![a.clone()]));
        state.set_pending(PendingOperation {
            addr: d.clone(),
            action: PendingAction::Create,
            id: "d".into(),
            operation: None,
            spec: json!({}),
            dependencies: vec![a.clone()],
            lifecycle: Default::default(),
            started_at: "t".into(),
        });
        let serial = state.serial;
        state.move_record(&a, &b).unwrap();
        assert_eq!(state.serial, serial + 1);
        assert!(!state.resources.contains_key(&a) && state.resources.contains_key(&b));
        assert_eq!(state.resources[&c].dependencies, vec![b.clone()]);
        assert_eq!(state.pending[0].dependencies, vec![b.clone()]);

        // Refusals change nothing.
        assert_eq!(
            state.move_record(&b, &c),
            Err(EditError::KindChange {
                from: Kind::Network,
                to: Kind::Subnetwork
            })
        );
        state.resources.insert(a.clone(), record(vec![]));
        assert_eq!(state.move_record(&b, &a), Err(EditError::Taken(a.clone())));
        assert_eq!(
            state.remove_record(&d),
            Err(EditError::Pending {
                addr: d.clone(),
                action: PendingAction::Create
            })
        );
        assert_eq!(
            state.remove_record(&Addr::new(Kind::Network, "zz")),
            Err(EditError::NotRecorded(Addr::new(Kind::Network, "zz")))
        );
        assert_eq!(state.serial, serial + 1);
        assert!(state.remove_record(&c).is_ok());
        assert_eq!(state.serial, serial + 2);
    }
}
