//! a3ctl: provision GKE clusters for A3 High / A3 Mega GPU training from one declarative blueprint.
//!
//! The pipeline, as types: `Blueprint → ResourceGraph → Plan → Executor → State`.

pub mod apply;
pub mod cloud;
pub mod plan;
pub mod resource;
pub mod state;
