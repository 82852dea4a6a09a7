//! a3ctl's integration tests, one binary (each test binary links the Google clients; one link
//! instead of thirty). Modules are grouped by what they drive: `adapters_*` an adapter against the
//! in-process simulator, the others the real `a3ctl` binary (`common::TestContext`), `chaos` and
//! `converge` the engine under faults and interruptions (`trials`), `layers` the source itself.

mod common;
mod trials;

mod adapters_compute;
mod adapters_container;
mod adapters_filestore;
mod adapters_kube;
mod adapters_storage;
mod adopt;
mod apply;
mod bodies;
mod capacity;
mod chaos;
mod cli;
mod compat;
mod converge;
mod docs_facts;
mod durations;
mod endpoints;
mod files;
mod guards;
mod guide;
mod hints;
mod identity;
mod init;
mod jobset;
mod kubeconfig;
mod kueue;
mod kueue_pool_label;
mod layers;
mod lifecycle;
mod maintenance;
mod moves;
mod paging;
mod pool_size;
mod preflight;
mod priorities;
mod protection;
mod rdma;
mod sandbox_room;
mod sandbox_serve;
mod sandbox_world;
mod saved_plan;
mod services;
mod show_output;
mod snapshots;
mod software;
mod state;
mod state_commands;
mod state_dir;
mod system_pool;
mod targeting;
mod team_queues;
mod upgrades;
mod validate;
mod validation;
mod verify;
mod verify_queues;
