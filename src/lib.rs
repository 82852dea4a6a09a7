//! a3ctl provisions Google Kubernetes Engine clusters for large GPU training on A3 High
//! (`a3-highgpu-8g`), A3 Mega (`a3-megagpu-8g`), A3 Ultra (`a3-ultragpu-8g`) and A4
//! (`a4-highgpu-8g`) machines from one declarative TOML blueprint.
//!
//! The pipeline, as types: a [`blueprint::Blueprint`] (what the user declares, validated with
//! every default applied) is expanded into a resource graph ([`graph`]), diffed against
//! [`state`] into a [`plan`], and the plan is carried out by the [`apply`] executor through the
//! [`cloud`] adapters, which records state after every step.

pub mod apply;
pub mod blueprint;
pub mod cli;
pub mod cloud;
pub mod commands;
pub mod env_vars;
pub mod files;
pub mod graph;
pub mod logging;
pub mod plan;
pub mod resource;
pub mod state;
pub mod ui;
pub mod verify;
