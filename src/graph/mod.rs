//! The resource graph: every resource a blueprint needs, with an edge for every real dependency.
//!
//! [`build`] expands a blueprint ([`build::resources`]); [`ResourceGraph::new`] checks the edges
//! (every dependency exists, no cycles) and orders the resources so that each comes after what it
//! depends on; [`ResourceGraph::dot`] and [`ResourceGraph::mermaid`] print it for `a3ctl graph`.

pub mod build;
pub mod identity;
pub mod jobset;
pub mod kueue;
mod kueue_queues;
pub mod outputs;
pub mod software;
pub mod volumes;

use crate::blueprint::Blueprint;
use crate::resource::{Addr, Desired};
use petgraph::algo::{tarjan_scc, toposort};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Why resources cannot form a graph.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    #[error("`{from}` depends on `{to}`, which is not part of the blueprint")]
    MissingDependency { from: Addr, to: Addr },
    #[error("dependency cycle: {}", .0.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(" → "))]
    Cycle(Vec<Addr>),
    #[error("`{0}` is declared twice")]
    Duplicate(Addr),
}

/// Resources in dependency order (each after everything it depends on).
#[derive(Debug, Clone)]
pub struct ResourceGraph {
    resources: Vec<Desired>,
}

impl ResourceGraph {
    /// The graph of a validated blueprint.
    pub fn from_blueprint(bp: &Blueprint) -> Result<ResourceGraph, GraphError> {
        ResourceGraph::new(build::resources(bp))
    }

    /// Checks `resources` and orders them.
    pub fn new(resources: Vec<Desired>) -> Result<ResourceGraph, GraphError> {
        let mut graph: DiGraph<usize, ()> = DiGraph::new();
        let mut index: BTreeMap<Addr, NodeIndex> = BTreeMap::new();
        for (i, r) in resources.iter().enumerate() {
            let node = graph.add_node(i);
            if index.insert(r.addr.clone(), node).is_some() {
                return Err(GraphError::Duplicate(r.addr.clone()));
            }
        }
        for r in &resources {
            for dep in &r.dependencies {
                let Some(&from) = index.get(dep) else {
                    return Err(GraphError::MissingDependency {
                        from: r.addr.clone(),
                        to: dep.clone(),
                    });
                };
                // Edges point from a dependency to its dependent: execution order.
                graph.add_edge(from, index[&r.addr], ());
            }
        }
        let order = match toposort(&graph, None) {
            Ok(_) => stable_order(&graph),
            Err(_) => {
                // The sort failed, so some component is a cycle; empty only if petgraph disagreed.
                let cycle = tarjan_scc(&graph)
                    .into_iter()
                    .find(|scc| scc.len() > 1 || graph.contains_edge(scc[0], scc[0]))
                    .unwrap_or_default();
                let mut addrs: Vec<Addr> = cycle
                    .iter()
                    .map(|n| resources[graph[*n]].addr.clone())
                    .collect();
                addrs.sort();
                return Err(GraphError::Cycle(addrs));
            }
        };
        let mut slots: Vec<Option<Desired>> = resources.into_iter().map(Some).collect();
        let resources = order
            .into_iter()
            .filter_map(|n| slots[graph[n]].take())
            .collect();
        Ok(ResourceGraph { resources })
    }

    pub fn resources(&self) -> &[Desired] {
        &self.resources
    }

    pub fn get(&self, addr: &Addr) -> Option<&Desired> {
        self.resources.iter().find(|r| &r.addr == addr)
    }

    /// Graphviz DOT, edges from dependency to dependent.
    pub fn dot(&self) -> String {
        let mut out = String::from(
            "digraph a3ctl {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n",
        );
        for r in &self.resources {
            let _ = writeln!(
                out,
                "  \"{}\" [label=\"{}\\n{}\"];",
                r.addr,
                r.addr,
                short_id(&r.id)
            );
        }
        for r in &self.resources {
            for dep in &r.dependencies {
                let _ = writeln!(out, "  \"{dep}\" -> \"{}\";", r.addr);
            }
        }
        out.push_str("}\n");
        out
    }

    /// A Mermaid flowchart.
    pub fn mermaid(&self) -> String {
        let id = |a: &Addr| a.to_string().replace(['.', '-', '/'], "_");
        let mut out = String::from("flowchart LR\n");
        for r in &self.resources {
            let _ = writeln!(
                out,
                "  {}[\"{}<br/>{}\"]",
                id(&r.addr),
                r.addr,
                short_id(&r.id)
            );
        }
        for r in &self.resources {
            for dep in &r.dependencies {
                let _ = writeln!(out, "  {} --> {}", id(dep), id(&r.addr));
            }
        }
        out
    }
}

/// A topological order that keeps the declaration order among resources that are ready at the
/// same time (Kahn's algorithm, smallest index first), so output is stable and readable.
fn stable_order(graph: &DiGraph<usize, ()>) -> Vec<NodeIndex> {
    use petgraph::Direction;
    use std::collections::BTreeSet;
    let mut indegree: Vec<usize> = graph
        .node_indices()
        .map(|n| graph.neighbors_directed(n, Direction::Incoming).count())
        .collect();
    let mut ready: BTreeSet<usize> = graph
        .node_indices()
        .filter(|n| indegree[n.index()] == 0)
        .map(|n| graph[n])
        .collect();
    let by_index: BTreeMap<usize, NodeIndex> =
        graph.node_indices().map(|n| (graph[n], n)).collect();
    let mut order = Vec::with_capacity(graph.node_count());
    while let Some(i) = ready.pop_first() {
        let node = by_index[&i];
        order.push(node);
        for next in graph.neighbors_directed(node, Direction::Outgoing) {
            indegree[next.index()] -= 1;
            if indegree[next.index()] == 0 {
                ready.insert(graph[next]);
            }
        }
    }
    order
}

/// The last path segment of a cloud id (the resource's own name).
fn short_id(id: &str) -> &str {
    id.rsplit('/').next().unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::testing::shipped;
    use crate::resource::{Kind, Lifecycle};
    use serde_json::json;

    fn count(g: &ResourceGraph, kind: Kind) -> usize {
        g.resources().iter().filter(|r| r.addr.kind == kind).count()
    }

    #[test]
    fn a3_mega_has_eight_gpu_vpcs_and_everything_the_recipe_needs() {
        let g = ResourceGraph::from_blueprint(&shipped("a3-mega.toml")).unwrap();
        assert_eq!(count(&g, Kind::Network), 9);
        assert_eq!(count(&g, Kind::Subnetwork), 9);
        assert_eq!(count(&g, Kind::Firewall), 9);
        assert_eq!(count(&g, Kind::Cluster), 1);
        assert_eq!(count(&g, Kind::NodePool), 2);
        let gpu_net = g.get(&build::addr::gpu_network(7)).unwrap();
        assert_eq!(gpu_net.spec["mtu"], 8244);
        let pool = g
            .resources()
            .iter()
            .find(|r| r.addr.kind == Kind::NodePool && r.spec["accelerator"].is_object())
            .unwrap();
        assert_eq!(
            pool.spec["additional_networks"].as_array().unwrap().len(),
            8
        );
        assert_eq!(pool.spec["accelerator"]["type"], "nvidia-h100-mega-80gb");
        assert_eq!(pool.spec["node_count"], 32);
        assert!(pool.dependencies.contains(&build::addr::gpu_subnet(7)));
        let cluster = g.get(&build::addr::cluster()).unwrap();
        assert_eq!(cluster.spec["datapath_provider"], "ADVANCED_DATAPATH");
        assert_eq!(cluster.spec["labels"][build::LABEL], "a3mega");
        // Dependencies come first.
        let pos = |a: &Addr| g.resources().iter().position(|r| &r.addr == a).unwrap();
        assert!(pos(&build::addr::primary_subnet()) < pos(&build::addr::cluster()));
        assert!(pos(&build::addr::cluster()) < pos(&pool.addr));
    }

    #[test]
    fn a3_high_has_four_gpu_vpcs() {
        let g = ResourceGraph::from_blueprint(&shipped("a3-high.toml")).unwrap();
        assert_eq!(count(&g, Kind::Network), 5);
        let pool = g
            .resources()
            .iter()
            .find(|r| r.spec["accelerator"].is_object())
            .unwrap();
        assert_eq!(
            pool.spec["additional_networks"].as_array().unwrap().len(),
            4
        );
        assert_eq!(pool.spec["accelerator"]["type"], "nvidia-h100-80gb");
    }

    #[test]
    fn names_are_deterministic() {
        let a = ResourceGraph::from_blueprint(&shipped("a3-mega.toml")).unwrap();
        let b = ResourceGraph::from_blueprint(&shipped("a3-mega.toml")).unwrap();
        let ids = |g: &ResourceGraph| {
            g.resources()
                .iter()
                .map(|r| r.id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&a), ids(&b));
    }

    #[test]
    fn cycles_and_missing_dependencies_are_reported() {
        let node = |name: &str, deps: &[&str]| Desired {
            addr: Addr::new(Kind::Network, name),
            id: name.into(),
            spec: json!({}),
            dependencies: deps.iter().map(|d| Addr::new(Kind::Network, *d)).collect(),
            lifecycle: Lifecycle::default(),
        };
        let err = ResourceGraph::new(vec![node("a", &["b"]), node("b", &["a"])]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "dependency cycle: `network.a` → `network.b`"
        );
        let err = ResourceGraph::new(vec![node("a", &["zz"])]).unwrap_err();
        assert!(matches!(err, GraphError::MissingDependency { .. }));
        let err = ResourceGraph::new(vec![node("a", &[]), node("a", &[])]).unwrap_err();
        assert_eq!(err, GraphError::Duplicate(Addr::new(Kind::Network, "a")));
    }

    #[test]
    fn dot_and_mermaid_list_every_edge() {
        let g = ResourceGraph::from_blueprint(&shipped("minimal.toml")).unwrap();
        let dot = g.dot();
        assert!(
            dot.contains("\"network.primary\" -> \"subnetwork.primary\""),
            "{dot}"
        );
        let mermaid = g.mermaid();
        assert!(
            mermaid.contains("network_primary --> subnetwork_primary"),
            "{mermaid}"
        );
    }
}
