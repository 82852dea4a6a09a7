//! The serialisable state of every API, as the world holds it ([`crate::world::World`]), one
//! module per API, below every API: the types only (and what serde needs of them); what an API
//! does with its state is in the API's module, which re-exports these types under their old
//! paths (`crate::compute::Resource` is [`compute::Resource`]).
//!
//! Field names are the saved world's format: renaming one breaks old `world.json` files.

pub mod artifactregistry;
pub mod compute;
pub mod container;
pub mod filestore;
pub mod iam;
pub mod kube;
pub mod lro;
pub mod serviceusage;
pub mod storage;
