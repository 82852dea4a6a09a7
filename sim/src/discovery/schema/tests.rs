use super::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each discovery document of the reference set and its API's name (a method id's first word).
const DOCUMENTS: &[(&str, &str)] = &[
    ("compute.v1.json", "compute"),
    ("container.v1.json", "container"),
    ("file.v1.json", "file"),
    ("artifactregistry.v1.json", "artifactregistry"),
    ("storage.v1.json", "storage"),
];

/// Every method of a discovery resource tree.
fn methods<'a>(resource: &'a Value, out: &mut Vec<&'a Value>) {
    if let Some(methods) = resource["methods"].as_object() {
        out.extend(methods.values());
    }
    if let Some(resources) = resource["resources"].as_object() {
        for child in resources.values() {
            methods(child, out);
        }
    }
}

/// Encodes schemas of one document as the subset's lines.
struct Encoder<'a> {
    api: &'a str,
    document: &'a Value,
    pending: Vec<String>,
    lines: BTreeMap<String, String>,
}

impl Encoder<'_> {
    fn reach(&mut self, name: &str) {
        if !self.lines.contains_key(name) && !self.pending.iter().any(|p| p == name) {
            self.pending.push(name.to_string());
        }
    }

    fn drain(&mut self) {
        while let Some(name) = self.pending.pop() {
            if self.lines.contains_key(&name) {
                continue;
            }
            let schema = self.document["schemas"][&name].clone();
            assert!(schema.is_object(), "{}: no schema {name}", self.api);
            self.object(&name, &schema);
        }
    }

    /// Writes the line of an object schema `name`.
    fn object(&mut self, name: &str, schema: &Value) {
        // Reserve the name first: a schema may refer to itself.
        self.lines.insert(name.to_string(), String::new());
        let mut line = format!("S {} {name}", self.api);
        if let Some(properties) = schema["properties"].as_object() {
            for (field, property) in properties {
                let ty = self.ty(&format!("{name}.{field}"), property);
                line.push_str(&format!(" {field}={ty}"));
            }
        }
        self.lines.insert(name.to_string(), line);
    }

    fn ty(&mut self, inline: &str, property: &Value) -> String {
        if let Some(name) = property["$ref"].as_str() {
            self.reach(name);
            return format!("@{name}");
        }
        let format = property["format"].as_str().unwrap_or("");
        match property["type"].as_str().unwrap_or("") {
            "string" => match property["enum"].as_array() {
                Some(values) => {
                    let values: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
                    assert!(
                        values.iter().all(|v| !v.contains([',', ' ', '='])),
                        "{inline}: an enum value the format cannot hold"
                    );
                    format!("e:{}", values.join(","))
                }
                None => match format {
                    "int64" => "i64".into(),
                    "uint64" => "u64".into(),
                    _ => "s".into(),
                },
            },
            "integer" => match format {
                "uint32" => "u32".into(),
                _ => "i32".into(),
            },
            "number" => match format {
                "float" => "f32".into(),
                _ => "f64".into(),
            },
            "boolean" => "b".into(),
            "array" => format!("[{}", self.ty(inline, &property["items"])),
            "object" if property["properties"].is_object() => {
                self.object(inline, property);
                format!("@{inline}")
            }
            "object" if property["additionalProperties"].is_object() => {
                format!("{{{}", self.ty(inline, &property["additionalProperties"]))
            }
            // `any`, `google.protobuf.Any`, and objects of any shape.
            _ => "*".into(),
        }
    }
}

/// The subset for the methods in `served`, from the documents in `dir`.
fn generate(dir: &Path, served: &BTreeSet<String>) -> String {
    let mut out = String::from(
        "# Generated from the discovery documents by sim/src/discovery/schema/tests.rs \
         (A3CTL_REGENERATE_DISCOVERY=1): the schemas of the methods the simulator serves.\n",
    );
    let mut method_lines = Vec::new();
    let mut schema_lines = Vec::new();
    for (file, api) in DOCUMENTS {
        let text = std::fs::read_to_string(dir.join(file)).expect("discovery document");
        let document: Value = serde_json::from_str(&text).expect("JSON");
        let mut all = Vec::new();
        methods(&document, &mut all);
        let mut encoder = Encoder {
            api,
            document: &document,
            pending: Vec::new(),
            lines: BTreeMap::new(),
        };
        for method in all {
            let id = method["id"].as_str().unwrap_or_default();
            if !served.contains(id) {
                continue;
            }
            let request = method["request"]["$ref"].as_str();
            let response = method["response"]["$ref"].as_str();
            for name in request.iter().chain(response.iter()) {
                encoder.reach(name);
            }
            method_lines.push(format!(
                "M {id} {} {}",
                request.unwrap_or("-"),
                response.unwrap_or("-")
            ));
        }
        encoder.drain();
        schema_lines.extend(encoder.lines.into_values());
    }
    method_lines.sort();
    for line in method_lines.into_iter().chain(schema_lines) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The methods of the table the simulator serves: each is asked for once, with `x` for every
/// name (`{}`) and an empty body; one that is not served answers 501 (not simulated) or 405
/// (a path served for other verbs).
async fn served_methods(router: axum::Router) -> BTreeSet<String> {
    use tower::ServiceExt;
    let mut served = BTreeSet::new();
    for line in super::super::TABLE.lines() {
        let mut parts = line.split(' ');
        let (Some(id), Some(verb), Some(template)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let path = template.replace("{}", "x");
        let request = axum::http::Request::builder()
            .method(verb)
            .uri(&path)
            .header("content-type", "application/json")
            .body(Body::from("{}"))
            .expect("request");
        let answer = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            router.clone().oneshot(request),
        )
        .await;
        let status = match answer {
            Ok(Ok(response)) => response.status().as_u16(),
            // An answer that does not come is a handler that runs: served.
            _ => 200,
        };
        if status != 501 && status != 405 {
            served.insert(id.to_string());
        }
    }
    served
}

/// The subset of the discovery documents' schemas (`schemas.txt`) is generated from the documents
/// and the methods `router` (the simulator's, [`crate::server::router`]) serves: run by the
/// server's tests, where the router is.
pub(crate) async fn the_subset_is_generated_from_the_discovery_documents(router: axum::Router) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference/discovery");
    if !dir.is_dir() {
        eprintln!("{} is absent: the subset is not compared", dir.display());
        return;
    }
    let served = served_methods(router).await;
    let generated = generate(&dir, &served);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/discovery/schemas.txt");
    if std::env::var_os("A3CTL_REGENERATE_DISCOVERY").is_some() {
        std::fs::write(&path, &generated).expect("write the subset");
    }
    assert!(
        generated == SUBSET,
        "src/discovery/schemas.txt differs from the discovery documents and the served methods: \
         rerun with A3CTL_REGENERATE_DISCOVERY=1"
    );
}

#[test]
fn every_schema_a_field_names_is_in_the_subset() {
    let subset = &*PARSED;
    fn names(ty: &Type, out: &mut Vec<&'static str>) {
        match ty {
            Type::Message(name) => out.push(name),
            Type::List(item) | Type::Map(item) => names(item, out),
            _ => {}
        }
    }
    for ((api, schema), fields) in &subset.schemas {
        for (field, ty) in fields {
            let mut refs = Vec::new();
            names(ty, &mut refs);
            for name in refs {
                assert!(
                    subset.schemas.contains_key(&(*api, name)),
                    "{api}.{schema}.{field} names {name}, which the subset lacks"
                );
            }
        }
    }
    for (id, method) in &subset.methods {
        let api = id.split('.').next().unwrap_or_default();
        for name in method.request.iter().chain(method.response.iter()) {
            assert!(subset.schemas.contains_key(&(api, *name)), "{id}: {name}");
        }
    }
}

fn refusal(id: &str, body: Value) -> GcpError {
    check_request(id, &body).unwrap_or_else(|| panic!("{id} accepted {body}"))
}

#[test]
fn gke_refuses_unknown_names_where_they_are() {
    let id = "container.projects.locations.clusters.create";
    let error = refusal(id, json!({"cluster": {"name": "c", "nodeConfg": {}}}));
    assert_eq!(error.code, 400);
    assert_eq!(error.status, "INVALID_ARGUMENT");
    assert_eq!(error.reason, "badRequest");
    assert_eq!(
        error.message,
        "Invalid JSON payload received. Unknown name \"nodeConfg\" at 'cluster': Cannot find field."
    );
    assert_eq!(
        error.details[0],
        json!({
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": [{"field": "cluster", "description": error.message}],
        })
    );
    let top = refusal(id, json!({"clustr": {}}));
    assert_eq!(
        top.message,
        "Invalid JSON payload received. Unknown name \"clustr\": Cannot find field."
    );
    assert_eq!(top.details[0]["fieldViolations"][0].get("field"), None);
    let deep = refusal(
        id,
        json!({"cluster": {"nodePools": [{"name": "a"}, {"config": {"machineTyp": "x"}}]}}),
    );
    assert_eq!(
        deep.message,
        "Invalid JSON payload received. Unknown name \"machineTyp\" at 'cluster.node_pools[1].config': Cannot find field."
    );
}

#[test]
fn gke_takes_proto_names_numbers_as_strings_and_enum_numbers() {
    let id = "container.projects.locations.clusters.create";
    for body in [
        json!({"cluster": {"initial_node_count": 3, "node_config": {"disk_size_gb": "100"}}}),
        json!({"cluster": {"initialNodeCount": "3", "releaseChannel": {"channel": 2}}}),
        json!({"cluster": {"releaseChannel": {"channel": "REGULAR"}, "resourceLabels": {"a": "b"}}}),
        json!({"cluster": {"name": null, "nodePools": null}}),
    ] {
        assert_eq!(check_request(id, &body), None, "{body}");
    }
}

#[test]
fn gke_refuses_wrong_values_and_unknown_enum_names() {
    let id = "container.projects.locations.clusters.create";
    let error = refusal(id, json!({"cluster": {"initialNodeCount": "abc"}}));
    assert_eq!(
        error.message,
        "Invalid value at 'cluster.initial_node_count' (TYPE_INT32), \"abc\""
    );
    assert_eq!(
        error.details[0]["fieldViolations"][0]["field"],
        "cluster.initial_node_count"
    );
    let error = refusal(
        id,
        json!({"cluster": {"releaseChannel": {"channel": "SOMETIMES"}}}),
    );
    assert_eq!(
        error.message,
        "Invalid value at 'cluster.release_channel.channel' (TYPE_ENUM), SOMETIMES"
    );
    let error = refusal(id, json!({"cluster": {"enableKubernetesAlpha": "yes"}}));
    assert_eq!(
        error.message,
        "Invalid value at 'cluster.enable_kubernetes_alpha' (TYPE_BOOL), \"yes\""
    );
    let error = refusal(id, json!({"cluster": {"locations": "us-central1-a"}}));
    assert_eq!(
        error.message,
        "Invalid value at 'cluster.locations' (TYPE_MESSAGE), \"us-central1-a\""
    );
    let error = refusal(id, json!({"cluster": {"nodeConfig": [1]}}));
    assert_eq!(
        error.message,
        "Invalid JSON payload received. Unknown name \"nodeConfig\" at 'cluster': Proto field is not repeating, cannot start list."
    );
    // Every violation is reported, in body order.
    let error = refusal(
        id,
        json!({"cluster": {"a": 1, "initialNodeCount": true}, "b": 2}),
    );
    assert_eq!(
        error.details[0]["fieldViolations"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(error.message.lines().count(), 3);
}

#[test]
fn resources_in_bodies_start_at_their_field() {
    let error = refusal(
        "file.projects.locations.instances.create",
        json!({"tier": "BASIC_SSD", "capacityGb": 1}),
    );
    assert_eq!(
        error.message,
        "Invalid JSON payload received. Unknown name \"capacityGb\" at 'instance': Cannot find field."
    );
    let error = refusal(
        "artifactregistry.projects.locations.repositories.create",
        json!({"format": "DOCKERS"}),
    );
    assert_eq!(
        error.message,
        "Invalid value at 'repository.format' (TYPE_ENUM), DOCKERS"
    );
    let error = refusal(
        "compute.networks.insert",
        json!({"name": "n", "autoCreateSubnetwork": false}),
    );
    assert_eq!(error.reason, "invalid");
    assert_eq!(
        error.message,
        "Invalid JSON payload received. Unknown name \"autoCreateSubnetwork\" at 'network_resource': Cannot find field."
    );
    // Compute's enums are strings: a number is a wrong value.
    let error = refusal(
        "compute.networks.insert",
        json!({"name": "n", "routingConfig": {"routingMode": 1}}),
    );
    assert_eq!(
        error.message,
        "Invalid value at 'network_resource.routing_config.routing_mode' (TYPE_ENUM), 1"
    );
    let error = refusal(
        "storage.buckets.insert",
        json!({"name": "b", "storageClas": "STANDARD"}),
    );
    assert_eq!(error.reason, "invalid");
    assert_eq!(
        error.message,
        "Invalid JSON payload received. Unknown name \"storageClas\": Cannot find field."
    );
}

#[test]
fn methods_without_a_request_schema_are_not_checked() {
    assert_eq!(
        check_request("compute.networks.get", &json!({"anything": 1})),
        None
    );
    assert_eq!(
        check_request("compute.networks.nonsense", &json!({"a": 1})),
        None
    );
}

#[test]
fn responses_are_checked_as_the_server_writes_them() {
    assert!(
        response_violations(
            "compute.networks.get",
            &json!({"name": "n", "kind": "compute#network", "subnetworks": ["a"]})
        )
        .is_empty()
    );
    assert_eq!(
        response_violations(
            "compute.networks.get",
            &json!({"name": "n", "color": "red"})
        ),
        vec!["Invalid JSON payload received. Unknown name \"color\": Cannot find field."]
    );
}
