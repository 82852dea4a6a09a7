//! VPC firewall rules. Every field a3ctl manages besides name, network and direction changes with
//! one PATCH.

use super::{ComputeAdapter, Loc, found, gax, last_segment, text, to_json, to_model};
use crate::cloud::{CloudResult, Target, UpdateStep};
use crate::resource::Observed;
use google_cloud_compute_v1::model::{self, Firewall};
use serde_json::{Map, Value, json};

/// `[{protocol, ports?}]` → `[{IPProtocol, ports?}]`.
fn allowed_body(spec: &Value) -> Value {
    let rules: Vec<Value> = spec["allowed"]
        .as_array()
        .map(|rules| {
            rules
                .iter()
                .map(|r| {
                    let mut rule = json!({"IPProtocol": r["protocol"]});
                    if let Some(ports) = r.get("ports").filter(|p| !p.is_null()) {
                        rule["ports"] = ports.clone();
                    }
                    rule
                })
                .collect()
        })
        .unwrap_or_default();
    Value::Array(rules)
}

fn source_ranges(spec: &Value) -> Value {
    spec.get("source_ranges").cloned().unwrap_or(json!([]))
}

fn firewall_body(loc: &Loc, spec: &Value) -> Value {
    json!({
        "name": spec["name"],
        "description": spec["description"],
        "network": loc.network_ref(spec["network"].as_str().unwrap_or_default()),
        "direction": spec["direction"],
        "priority": spec["priority"],
        "allowed": allowed_body(spec),
        "sourceRanges": source_ranges(spec),
    })
}

/// Live firewall → spec fields (`allowed` as `[{protocol, ports?}]`, `source_ranges` sorted) and
/// outputs.
pub(crate) fn project_firewall(live: &Value) -> Observed {
    let allowed: Vec<Value> = live["allowed"]
        .as_array()
        .map(|rules| {
            rules
                .iter()
                .map(|r| {
                    let mut rule = json!({"protocol": r["IPProtocol"]});
                    if let Some(ports) = r["ports"].as_array().filter(|p| !p.is_empty()) {
                        rule["ports"] = Value::Array(ports.clone());
                    }
                    rule
                })
                .collect()
        })
        .unwrap_or_default();
    let mut ranges: Vec<String> = live["sourceRanges"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    ranges.sort();
    Observed {
        spec: json!({
            "name": live["name"],
            "network": last_segment(&text(live, "network")),
            "direction": live["direction"].as_str().unwrap_or("INGRESS"),
            "description": text(live, "description"),
            "priority": live["priority"].as_i64().unwrap_or(1000),
            "allowed": allowed,
            "source_ranges": ranges,
        }),
        outputs: json!({
            "self_link": live["selfLink"],
            "id": live["id"],
        }),
    }
}

impl ComputeAdapter {
    pub(super) async fn read_firewall(&self, loc: &Loc) -> CloudResult<Option<Observed>> {
        let live = found(
            self.firewalls
                .get()
                .set_project(&loc.project)
                .set_firewall(&loc.name)
                .send()
                .await,
        )?;
        Ok(live.map(|f| project_firewall(&to_json(&f))))
    }

    pub(super) async fn create_firewall(
        &self,
        loc: &Loc,
        target: &Target,
        request_id: String,
    ) -> CloudResult<model::Operation> {
        let body: Firewall = to_model(firewall_body(loc, &target.spec))?;
        gax(self
            .firewalls
            .insert()
            .set_project(&loc.project)
            .set_body(body)
            .set_request_id(request_id)
            .send()
            .await)
    }

    pub(super) async fn update_firewall(
        &self,
        loc: &Loc,
        target: &Target,
        step: &UpdateStep,
        request_id: String,
    ) -> CloudResult<model::Operation> {
        let spec = &target.spec;
        let mut body = Map::new();
        for field in &step.fields {
            let (key, value) = match field.as_str() {
                "description" => ("description", spec["description"].clone()),
                "priority" => ("priority", spec["priority"].clone()),
                "allowed" => ("allowed", allowed_body(spec)),
                "source_ranges" => ("sourceRanges", source_ranges(spec)),
                _ => continue,
            };
            body.insert(key.into(), value);
        }
        let body: Firewall = to_model(Value::Object(body))?;
        gax(self
            .firewalls
            .patch()
            .set_project(&loc.project)
            .set_firewall(&loc.name)
            .set_body(body)
            .set_request_id(request_id)
            .send()
            .await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_rules_round_trip_through_the_api_shape() {
        let spec = json!({"allowed": [{"protocol": "icmp"}, {"protocol": "tcp", "ports": ["0-65535"]}],
                          "source_ranges": ["b", "a"]});
        let live = json!({"allowed": allowed_body(&spec), "sourceRanges": ["b", "a"],
                          "network": "https://x/projects/p/global/networks/n"});
        let o = project_firewall(&live);
        assert_eq!(o.spec["allowed"], spec["allowed"]);
        assert_eq!(o.spec["source_ranges"], json!(["a", "b"]));
        assert_eq!(o.spec["network"], "n");
    }
}
