//! The operations service of an AIP-151 API (Filestore, Artifact Registry), served once for
//! every API that keeps [`Operations`]: `GET .../operations/{operation}` and `POST
//! .../operations/{operation}:cancel`, plus `operations.list` and `operations.delete` where the
//! API has them (<https://google.aip.dev/151>; the methods per API are those of its discovery
//! document: Artifact Registry v1 has `get` and `cancel`, Filestore v1 all four).
//!
//! An API declares itself with [`Service`] (its type URLs and where its operations live in the
//! world) and mounts [`routes`]; its create, patch and delete handlers answer with [`render`].

use crate::error::{GcpError, GcpResult};
use crate::http::{self, Query};
use crate::lro::{LroApi, Operations};
use crate::shared::Shared;
use crate::world::World;
use axum::Router;
use axum::extract::{Path, State as AxumState};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};
use std::sync::Arc;

/// An API whose operations this module serves.
pub trait Service: Send + Sync + 'static {
    /// Type URLs of its operations.
    const LRO: LroApi;
    fn operations(world: &World) -> &Operations;
    fn operations_mut(world: &mut World) -> &mut Operations;
}

/// Which methods of `google.longrunning.Operations` an API serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Methods {
    /// `get` (and `cancel`).
    GetAndCancel,
    /// `get`, `cancel`, `list` and `delete`.
    All,
}

/// The routes under `base` (`/<api>/v1/projects/{project}/locations/{location}`).
pub fn routes<S: Service>(base: &str, methods: Methods) -> Router<Arc<Shared>> {
    let one = format!("{base}/operations/{{operation}}");
    let router = Router::new();
    match methods {
        Methods::GetAndCancel => router.route(&one, get(get_operation::<S>).post(cancel::<S>)),
        Methods::All => router
            .route(&format!("{base}/operations"), get(list::<S>))
            .route(
                &one,
                get(get_operation::<S>)
                    .delete(delete::<S>)
                    .post(cancel::<S>),
            ),
    }
}

/// The operation `name` as the API answers it (`null` when unknown).
pub fn render<S: Service>(world: &World, name: &str, ints: bool) -> Response {
    let value = S::operations(world)
        .by_name
        .get(name)
        .map(|o| o.to_json(world, &S::LRO, ints))
        .unwrap_or(Value::Null);
    http::json(value)
}

/// Every operation, for the admin inventory.
pub fn inventory<S: Service>(world: &World) -> Vec<Value> {
    S::operations(world)
        .by_name
        .values()
        .map(|o| o.to_json(world, &S::LRO, false))
        .collect()
}

fn name(project: &str, location: &str, operation: &str) -> String {
    format!("projects/{project}/locations/{location}/operations/{operation}")
}

async fn get_operation<S: Service>(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location, operation)): Path<(String, String, String)>,
    query: Query,
) -> GcpResult<Response> {
    let name = name(&project, &location, &operation);
    shared.read_world(|world, _| {
        let op = S::operations(world).get(&name)?;
        Ok(http::json(op.to_json(world, &S::LRO, query.enum_ints())))
    })
}

async fn list<S: Service>(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    let parent = format!("projects/{project}/locations/{location}");
    let cap = crate::paging::cap(&shared);
    shared.read_world(|world, _| {
        S::operations(world)
            .list(world, &S::LRO, &parent, &query, cap)
            .map(http::json)
    })
}

async fn delete<S: Service>(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location, operation)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    let name = name(&project, &location, &operation);
    shared.with_world(|world, _| {
        S::operations_mut(world).delete(&name)?;
        Ok(http::json(json!({})))
    })
}

/// `POST .../operations/{operation}:cancel` (axum sees `{operation}` as `<id>:cancel`).
async fn cancel<S: Service>(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location, operation)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    let Some(operation) = operation.strip_suffix(":cancel") else {
        return Err(GcpError::unrouted());
    };
    let name = name(&project, &location, operation);
    shared.with_world(|world, _| {
        S::operations_mut(world).cancel(&name)?;
        Ok(http::json(json!({})))
    })
}
