//! Request bodies checked against the discovery documents' schemas, before any handler runs:
//! an unknown field, a value of the wrong JSON type or an unknown enum name is refused with the
//! 400 of the method's API ([`check`], the middleware [`crate::server::router`] puts in front of
//! every route). Responses are checked against the same schemas by the simulator's tests
//! ([`response_violations`]).
//!
//! The schemas (`schemas.txt`) are a generated subset of the discovery documents of
//! [`super`]'s table — only the schemas reachable from the request and response bodies of the
//! methods the simulator serves — one line a schema, a field as `name=type` (`s` string, `i32`
//! `u32` `i64` `u64` `f32` `f64` `b`, `*` any value, `@Name` a schema, `[T` a list, `{T` a map,
//! `e:A,B` an enum; inline objects are named `Parent.field`), and one line a served method with
//! its request and response schema. The test `the_subset_is_generated_from_the_discovery_documents`
//! finds the served methods by asking the router for every method of the table (one that is not
//! served answers 501 or 405), regenerates the subset and compares
//! (`A3CTL_REGENERATE_DISCOVERY=1` rewrites it).
//!
//! What is refused, and how:
//! - GKE (container v1), Filestore and Artifact Registry are proto-based APIs behind Google's
//!   JSON front end (ESF), which maps JSON onto the request message with the proto3 JSON rules
//!   (<https://protobuf.dev/programming-guides/json/>): a field by its JSON (lowerCamelCase) name
//!   or its proto name; `null` for any field is its default; 64-bit integers as strings or
//!   numbers, 32-bit ones as numbers or strings; floats as numbers or strings (`NaN`,
//!   `Infinity`); enums by name or by number. A field the message lacks is 400
//!   `INVALID_ARGUMENT` `Invalid JSON payload received. Unknown name "x" at 'cluster.node_config':
//!   Cannot find field.`, a wrong value `Invalid value at 'cluster.initial_node_count'
//!   (TYPE_INT32), "abc"`, each with a `google.rpc.BadRequest` field violation (`field` is the
//!   path, absent at the top), several joined by new lines — captures in
//!   <https://github.com/danny-avila/LibreChat/issues/11761> and
//!   <https://github.com/badrisnarayanan/antigravity-claude-proxy/issues/70> (the same front end
//!   in front of another Google API) and
//!   <https://github.com/kubeflow/pipelines/issues/2211> (`Unknown name "softwareConfig" at
//!   'cluster'` for a field put at the top of a body that is the request's `cluster`). A list
//!   for a field that is not repeated: `Proto field is not repeating, cannot start list.`
//!   (<https://github.com/ansible/ansible/issues/50252>). Paths are proto names
//!   (`function_declarations[45].parameters`, in the captures): a body that is the whole request
//!   (GKE's `CreateClusterRequest`, a schema named `…Request`) starts at the top, a body that is
//!   one resource starts at that field, named after the resource as AIP-133 and AIP-134 name it
//!   (<https://google.aip.dev/133>: Filestore's `instance`, Artifact Registry's `repository`).
//!   The reason in `errors[]` is each API's `badRequest`.
//! - Compute Engine is served by the same front end (its errors name methods such as
//!   `compute.v1.RegionsService.List`: <https://github.com/trailofbits/algo/issues/14854>), and its
//!   request messages hold the body in `<resource>_resource` (`network_resource`,
//!   googleapis/googleapis@google/cloud/compute/v1/compute.proto). No capture of its answer to an
//!   unknown field was found: that it is the proto APIs' answer with reason `invalid` is a guess.
//!   Enums are strings in Compute's protos, so a number is a wrong value.
//! - Cloud Storage's JSON API is not behind ESF; that it refuses unknown fields and wrong values
//!   with the same texts, reason `invalid`, camelCase names only, is a guess.
//!
//! Output-only fields are accepted and left to the handlers (AIP-203: the server ignores them).
//! Which texts are guessed: a wrong value for a message, a list or a map field, an object for a
//! scalar field, and an unknown enum name (`(TYPE_ENUM)`, as [`crate::enums`] words it).

// GUESS(compute-unknown-fields): Compute refuses an unknown field or wrong value with the proto APIs' texts at `<resource>_resource`, reason `invalid`
// GUESS(storage-unknown-fields): Cloud Storage refuses an unknown field or wrong value with the proto APIs' texts (camelCase names only), reason `invalid`
// GUESS(esf-value-texts): the texts refusing a scalar for a message, list or map field, an object for a scalar field, and an unknown enum name (`TYPE_ENUM`, the name bare)

use crate::error::GcpError;
use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::LazyLock;

/// The generated subset.
const SUBSET: &str = include_str!("schemas.txt");

/// A field's type.
#[derive(Debug, Clone, PartialEq)]
enum Type {
    String,
    Int32,
    Uint32,
    Int64,
    Uint64,
    Float,
    Double,
    Bool,
    Any,
    Message(&'static str),
    List(Box<Type>),
    Map(Box<Type>),
    Enum(Vec<&'static str>),
}

impl Type {
    fn parse(text: &'static str) -> Option<Type> {
        Some(match text {
            "s" => Type::String,
            "i32" => Type::Int32,
            "u32" => Type::Uint32,
            "i64" => Type::Int64,
            "u64" => Type::Uint64,
            "f32" => Type::Float,
            "f64" => Type::Double,
            "b" => Type::Bool,
            "*" => Type::Any,
            _ => {
                if let Some(name) = text.strip_prefix('@') {
                    Type::Message(name)
                } else if let Some(item) = text.strip_prefix('[') {
                    Type::List(Box::new(Type::parse(item)?))
                } else if let Some(value) = text.strip_prefix('{') {
                    Type::Map(Box::new(Type::parse(value)?))
                } else if let Some(values) = text.strip_prefix("e:") {
                    Type::Enum(values.split(',').collect())
                } else {
                    return None;
                }
            }
        })
    }

    /// The proto kind ESF names in `Invalid value at '…' (KIND), …`.
    fn kind(&self, api: &Api) -> String {
        match self {
            Type::String => "TYPE_STRING".into(),
            Type::Int32 => "TYPE_INT32".into(),
            Type::Uint32 => "TYPE_UINT32".into(),
            Type::Int64 => "TYPE_INT64".into(),
            Type::Uint64 => "TYPE_UINT64".into(),
            Type::Float => "TYPE_FLOAT".into(),
            Type::Double => "TYPE_DOUBLE".into(),
            Type::Bool => "TYPE_BOOL".into(),
            Type::Enum(_) => "TYPE_ENUM".into(),
            Type::Message(name) => format!("type.googleapis.com/{}.{name}", api.package),
            Type::Any | Type::List(_) | Type::Map(_) => "TYPE_MESSAGE".into(),
        }
    }
}

/// One served method's bodies.
#[derive(Debug, Clone, Copy)]
struct Method {
    request: Option<&'static str>,
    response: Option<&'static str>,
}

/// The parsed subset: schemas by `api` and name, served methods by id.
struct Subset {
    schemas: HashMap<(&'static str, &'static str), Vec<(&'static str, Type)>>,
    methods: HashMap<&'static str, Method>,
}

static PARSED: LazyLock<Subset> = LazyLock::new(|| parse(SUBSET));

fn parse(text: &'static str) -> Subset {
    let mut subset = Subset {
        schemas: HashMap::new(),
        methods: HashMap::new(),
    };
    for line in text.lines() {
        let mut parts = line.split(' ');
        match parts.next() {
            Some("M") => {
                let (Some(id), Some(request), Some(response)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                let named = |s: &'static str| (s != "-").then_some(s);
                subset.methods.insert(
                    id,
                    Method {
                        request: named(request),
                        response: named(response),
                    },
                );
            }
            Some("S") => {
                let (Some(api), Some(name)) = (parts.next(), parts.next()) else {
                    continue;
                };
                let fields = parts
                    .filter_map(|field| {
                        let (name, ty) = field.split_once('=')?;
                        Some((name, Type::parse(ty)?))
                    })
                    .collect();
                subset.schemas.insert((api, name), fields);
            }
            _ => {}
        }
    }
    subset
}

/// How an API's front end reads a body and words its refusals.
#[derive(Debug, Clone, Copy)]
struct Api {
    name: &'static str,
    /// The proto package of its messages.
    package: &'static str,
    /// `errors[].reason` of its 400s.
    reason: &'static str,
    /// Whether proto names (`node_config`) are accepted.
    proto: bool,
    /// Whether an enum may be given by its number.
    enum_numbers: bool,
}

fn api_of(method_id: &str) -> Option<Api> {
    let name = method_id.split('.').next()?;
    let (name, package, reason, proto, enum_numbers) = match name {
        "container" => ("container", "google.container.v1", "badRequest", true, true),
        "file" => (
            "file",
            "google.cloud.filestore.v1",
            "badRequest",
            true,
            true,
        ),
        "artifactregistry" => (
            "artifactregistry",
            "google.devtools.artifactregistry.v1",
            "badRequest",
            true,
            true,
        ),
        "compute" => ("compute", "google.cloud.compute.v1", "invalid", true, false),
        "storage" => ("storage", "google.storage.v1", "invalid", false, false),
        _ => return None,
    };
    Some(Api {
        name,
        package,
        reason,
        proto,
        enum_numbers,
    })
}

/// `nodeConfig` → `node_config`; `IPProtocol` → `i_p_protocol`.
fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Where a body starts in the request message: nowhere for a whole request (`…Request`),
/// `<resource>_resource` in Compute, the resource's own field elsewhere; Cloud Storage's paths
/// start at the body.
fn body_path(api: &Api, schema: &str) -> String {
    match api.name {
        "storage" => String::new(),
        "compute" => format!("{}_resource", snake(schema)),
        _ if schema.ends_with("Request") => String::new(),
        _ => snake(schema),
    }
}

/// One refusal: the path it is at (none at the top) and its text.
#[derive(Debug, Clone, PartialEq)]
struct Violation {
    field: Option<String>,
    description: String,
}

/// Walks `value` as a `ty` at `path`, collecting violations.
struct Walker<'a> {
    subset: &'a Subset,
    api: Api,
    /// Whether an enum name must be one the document lists (requests; not responses).
    check_enum_names: bool,
    out: Vec<Violation>,
}

impl Walker<'_> {
    fn unknown(&mut self, name: &str, at: &str, why: &str) {
        let description = if at.is_empty() {
            format!("Invalid JSON payload received. Unknown name \"{name}\": {why}")
        } else {
            format!("Invalid JSON payload received. Unknown name \"{name}\" at '{at}': {why}")
        };
        self.out.push(Violation {
            field: (!at.is_empty()).then(|| at.to_string()),
            description,
        });
    }

    fn invalid(&mut self, ty: &Type, at: &str, value: &Value) {
        // An enum's name is written bare, as [`crate::enums`] writes it; other values as JSON.
        let shown = match (ty, value) {
            (Type::Enum(_), Value::String(name)) => name.clone(),
            _ => value.to_string(),
        };
        self.out.push(Violation {
            field: Some(at.to_string()),
            description: format!("Invalid value at '{at}' ({}), {shown}", ty.kind(&self.api)),
        });
    }

    /// Checks the fields of an object of schema `name` at `at`.
    fn message(&mut self, name: &'static str, at: &str, object: &serde_json::Map<String, Value>) {
        let Some(fields) = self.subset.schemas.get(&(self.api.name, name)) else {
            return;
        };
        for (key, value) in object {
            let field = fields.iter().find(|(field, _)| {
                field == key || (self.api.proto && snake(field) == key.as_str())
            });
            let Some((field, ty)) = field else {
                self.unknown(key, at, "Cannot find field.");
                continue;
            };
            let proto_name = if self.api.name == "storage" {
                field.to_string()
            } else {
                snake(field)
            };
            let path = if at.is_empty() {
                proto_name
            } else {
                format!("{at}.{proto_name}")
            };
            if value.is_array() && !matches!(ty, Type::List(_) | Type::Any) {
                self.unknown(key, at, "Proto field is not repeating, cannot start list.");
                continue;
            }
            self.value(ty, &path, value);
        }
    }

    fn value(&mut self, ty: &Type, at: &str, value: &Value) {
        if value.is_null() {
            return;
        }
        let proto = self.api.proto;
        let ok = match (ty, value) {
            (Type::Any, _) => true,
            (Type::String, Value::String(_)) => true,
            (Type::Bool, Value::Bool(_)) => true,
            (Type::Int32, v) => integer(v, proto).is_some_and(|n| i32::try_from(n).is_ok()),
            (Type::Uint32, v) => integer(v, proto).is_some_and(|n| u32::try_from(n).is_ok()),
            (Type::Int64, v) => integer(v, true).is_some_and(|n| i64::try_from(n).is_ok()),
            (Type::Uint64, v) => integer(v, true).is_some_and(|n| u64::try_from(n).is_ok()),
            (Type::Float | Type::Double, Value::Number(_)) => true,
            (Type::Float | Type::Double, Value::String(s)) => {
                matches!(s.as_str(), "NaN" | "Infinity" | "-Infinity") || s.parse::<f64>().is_ok()
            }
            // A response may carry a name newer than the document (proto3 keeps unknown enum
            // values; Compute's quota metrics do, see `crate::quotas`).
            (Type::Enum(values), Value::String(s)) => {
                !self.check_enum_names || values.contains(&s.as_str())
            }
            (Type::Enum(_), Value::Number(n)) => self.api.enum_numbers && n.is_i64(),
            (Type::Message(name), Value::Object(object)) => {
                self.message(name, at, object);
                true
            }
            (Type::List(item), Value::Array(items)) => {
                for (i, v) in items.iter().enumerate() {
                    self.value(item, &format!("{at}[{i}]"), v);
                }
                true
            }
            (Type::Map(item), Value::Object(entries)) => {
                for (k, v) in entries {
                    self.value(item, &format!("{at}[{k}]"), v);
                }
                true
            }
            _ => false,
        };
        if !ok {
            self.invalid(ty, at, value);
        }
    }
}

/// An integer from a JSON number, or from a decimal string where `strings` allows it.
fn integer(value: &Value, strings: bool) -> Option<i128> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 1e19)
                    .map(|f| f as i128)
            }),
        Value::String(s) if strings => s.parse::<i128>().ok(),
        _ => None,
    }
}

/// The refusal of `method_id`'s request body `body`, if it breaks the method's request schema;
/// `None` for a body that fits, or a method served with no request schema.
pub fn check_request(method_id: &str, body: &Value) -> Option<GcpError> {
    let subset = &*PARSED;
    let api = api_of(method_id)?;
    let schema = subset.methods.get(method_id)?.request?;
    let object = body.as_object()?;
    let mut walker = Walker {
        subset,
        api,
        check_enum_names: true,
        out: Vec::new(),
    };
    walker.message(schema, &body_path(&api, schema), object);
    if walker.out.is_empty() {
        return None;
    }
    let message = walker
        .out
        .iter()
        .map(|v| v.description.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let violations: Vec<Value> = walker
        .out
        .iter()
        .map(|v| match &v.field {
            Some(field) => json!({"field": field, "description": v.description}),
            None => json!({"description": v.description}),
        })
        .collect();
    Some(
        GcpError::invalid_reason(api.reason, message).with_detail(json!({
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": violations,
        })),
    )
}

/// What in `body`, a response of `method_id`, its response schema does not have (unknown
/// fields, wrong types; an enum name the document does not list is accepted, as clients keep
/// names newer than their document), as texts; empty for a method without one. For tests.
pub fn response_violations(method_id: &str, body: &Value) -> Vec<String> {
    let subset = &*PARSED;
    let (
        Some(api),
        Some(Method {
            response: Some(schema),
            ..
        }),
    ) = (api_of(method_id), subset.methods.get(method_id).copied())
    else {
        return Vec::new();
    };
    // A response is what the server writes: camelCase names, enums by name.
    let api = Api {
        proto: false,
        enum_numbers: false,
        ..api
    };
    let mut walker = Walker {
        subset,
        api,
        check_enum_names: false,
        out: Vec::new(),
    };
    walker.value(&Type::Message(schema), "", body);
    walker.out.into_iter().map(|v| v.description).collect()
}

/// The served methods whose bodies are checked, as `(id, HTTP method, path template)` with
/// `{}` for each name, in the table's order.
pub fn checked_methods() -> Vec<(&'static str, &'static str, &'static str)> {
    super::TABLE
        .lines()
        .filter_map(|line| {
            let mut parts = line.split(' ');
            let (id, verb, template) = (parts.next()?, parts.next()?, parts.next()?);
            PARSED.methods.get(id)?.request?;
            Some((id, verb, template))
        })
        .collect()
}

/// The middleware: a request to a served method with a request schema has its JSON body checked
/// before any handler runs. A body that is not JSON, or not an object, is left to the handler.
pub async fn check(req: Request, next: Next) -> Response {
    let method = req.method().as_str().to_string();
    let Some(id) = super::method_for(&method, req.uri().path()) else {
        return next.run(req).await;
    };
    if PARSED.methods.get(id).and_then(|m| m.request).is_none() {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 << 20).await else {
        return GcpError::invalid("Request body too large.").into_response();
    };
    if let Ok(value) = serde_json::from_slice::<Value>(&bytes)
        && let Some(refusal) = check_request(id, &value)
    {
        return refusal.into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

#[cfg(test)]
pub(crate) mod tests;
