//! Desired specs and how each of their fields may change.
//!
//! A spec is a flat JSON object whose top-level fields are listed per kind (each kind's `FIELDS`,
//! every field its spec serializes: a test holds the two together). Each field says
//! whether a change is applied in place or forces replacement — following the Terraform Google
//! provider's ForceNew knowledge (the `ForceNew` flags in hashicorp/terraform-provider-google
//! `google/services/*/resource_*.go`) — and how live values are compared to desired ones (a
//! version `1.32` is satisfied by a cluster running `1.32.9-gke.1130000`).
//! A field that is not configuration (an input of the adapter, such as the GPU family a cluster's
//! version is checked against) is listed too, as [`Compare::Never`], so that leaving a field out
//! of a kind's table is always a mistake the test names.
//!
//! Ownership marks are not configuration: the `a3ctl-blueprint` label and the description a3ctl
//! writes on Compute resources (which take no labels) only let an apply recognise its own objects
//! after a lost answer. They are never diffed, so a resource built by hand and then imported or
//! adopted does not plan a label update or, worse, a replacement for a description
//! ([`Compare::OwnershipMark`], [`Compare::LabelsExceptMark`]). A later update of the labels
//! writes the mark along with them.

use super::Kind;
use serde_json::Value;

/// The label key (and description mark) of everything a blueprint creates.
pub const OWNERSHIP_LABEL: &str = "a3ctl-blueprint";

/// How a change to a field is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Updated in place.
    InPlace,
    /// A new value means a new resource.
    ForceNew,
    /// In place when the new value extends the old one (a CIDR range that is a superset, a
    /// capacity that grows), replacement otherwise.
    GrowOnly,
    /// a3ctl's own setting, which the cloud does not hold (a cluster's `deletion_protection`):
    /// kept in state, compared with the recorded value ([`keep_local`]), changed in place without
    /// a call. Such fields are booleans, off when a record predates them.
    Local,
}

/// Puts the recorded values of `kind`'s [`Change::Local`] fields into `live`, a spec read from
/// the cloud, which cannot know them; a record without one holds `false`.
pub fn keep_local(kind: Kind, live: &mut Value, recorded: &Value) {
    for field in fields(kind).iter().filter(|f| f.change == Change::Local) {
        if let Value::Object(live) = live {
            let value = recorded
                .get(field.name)
                .cloned()
                .unwrap_or(Value::Bool(false));
            live.insert(field.name.to_string(), value);
        }
    }
}

/// Whether `spec` (a recorded or live spec, local fields kept) has a3ctl's deletion protection on.
pub fn deletion_protected(spec: &Value) -> bool {
    spec.get("deletion_protection") == Some(&Value::Bool(true))
}

/// How a live value is compared with the desired one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    Exact,
    /// Desired `1.32` matches live `1.32.9-gke.1130000`; `latest`/`default` match anything.
    VersionPrefix,
    /// Lists compared as sets.
    Unordered,
    /// Compared exactly, but reported leaf by leaf (`object.spec.replicas`): for whole
    /// documents such as Kubernetes objects.
    Deep,
    /// A description that carries a3ctl's ownership mark: never differs.
    OwnershipMark,
    /// Labels compared without the ownership label.
    LabelsExceptMark,
    /// Firewall rules `[{protocol, ports?}]`, as a set: a rule for every port (`0-65535`) is the
    /// same as a rule without ports (`--allow=tcp` and `--allow=tcp:0-65535` both appear in the
    /// guides).
    FirewallRules,
    /// Master authorized networks: compared as a set of CIDR blocks; a live block without a
    /// display name (gcloud cannot set one) matches any desired name.
    CidrBlocks,
    /// A cluster's maintenance policy, by meaning
    /// ([`crate::resource::kinds::cluster::policy_matches`]).
    MaintenancePolicy,
    /// A node pool's upgrade settings: the strategy and the numbers it uses
    /// ([`crate::resource::kinds::node_pool::upgrade_matches`]).
    UpgradeSettings,
    /// Not configuration: what the adapter or the apply reads from the desired spec (the GPU
    /// family a cluster's version is checked against, the condition an object is waited for),
    /// recorded with it and never a difference.
    Never,
}

/// A kind's field names as values: an enum declared with [`kind_fields!`], whose variants name
/// the top-level fields of the kind's spec. Update calls, patch bodies and the adapters' checks
/// take these, so a name that is not a field of the kind does not compile; the plan's
/// [`crate::resource::FieldDiff`] keeps the field's name as text (saved plans, `--json`), read
/// back with [`KindField::from_name`].
pub trait KindField: Copy + Eq + std::fmt::Debug + 'static {
    /// The kind whose spec has these fields.
    const KIND: Kind;
    /// Every field, in the order of the kind's table.
    const ALL: &'static [Self];
    /// How this field may change and compares: its entry in the kind's table.
    fn field(self) -> &'static Field;

    /// The field's name in specs, plans and state (`routing_mode`).
    fn as_str(self) -> &'static str {
        self.field().name
    }

    /// The field of this kind named `name`, if there is one.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|f| f.as_str() == name)
    }
}

/// Declares a kind's field enum, its table of [`Field`]s (one entry per variant, in order) and
/// its [`KindField`]; a variant whose name is not its field's name in CamelCase
/// (`RoutingMode` for `routing_mode`) does not compile.
///
/// ```ignore
/// kind_fields! {
///     /// The fields of [`NetworkSpec`].
///     pub enum NetworkField for Network in FIELDS {
///         Name => f("name", ForceNew),
///         Mtu => f("mtu", InPlace),
///     }
/// }
/// ```
macro_rules! kind_fields {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident for $kind:ident in $table:ident {
            $($(#[$vmeta:meta])* $variant:ident => $field:expr),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$vmeta])* $variant),+
        }

        #[doc = concat!("How each field of [`", stringify!($name), "`] may change, in its order.")]
        $vis const $table: &[$crate::resource::spec::Field] = &[$($field),+];

        impl $name {
            /// The field's name in specs, plans and state.
            pub const fn as_str(self) -> &'static str {
                $table[self as usize].name
            }
        }

        impl $crate::resource::spec::KindField for $name {
            const KIND: $crate::resource::Kind = $crate::resource::Kind::$kind;
            const ALL: &'static [Self] = &[$($name::$variant),+];
            fn field(self) -> &'static $crate::resource::spec::Field {
                &$table[self as usize]
            }
        }

        $(
            const _: () = assert!(
                $crate::resource::spec::camel_names(
                    stringify!($variant),
                    $table[$name::$variant as usize].name,
                ),
                concat!(
                    "the variant ",
                    stringify!($name),
                    "::",
                    stringify!($variant),
                    " does not name its field"
                ),
            );
        )+
    };
}
pub(crate) use kind_fields;

/// Whether `camel` is `snake` in CamelCase: `RoutingMode` for `routing_mode`, `MasterIpv4Cidr`
/// for `master_ipv4_cidr` (a const fn, for [`kind_fields!`]'s compile-time check).
pub const fn camel_names(camel: &str, snake: &str) -> bool {
    let (c, s) = (camel.as_bytes(), snake.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < c.len() {
        let b = c[i];
        if b.is_ascii_uppercase() {
            if i > 0 {
                if j >= s.len() || s[j] != b'_' {
                    return false;
                }
                j += 1;
            }
            if j >= s.len() || s[j] != b.to_ascii_lowercase() {
                return false;
            }
        } else if j >= s.len() || s[j] != b || b == b'_' {
            return false;
        }
        i += 1;
        j += 1;
    }
    j == s.len()
}

#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    pub change: Change,
    pub compare: Compare,
}

pub(crate) const fn f(name: &'static str, change: Change) -> Field {
    Field {
        name,
        change,
        compare: Compare::Exact,
    }
}

pub(crate) const fn set(name: &'static str, change: Change) -> Field {
    Field {
        name,
        change,
        compare: Compare::Unordered,
    }
}

/// The `description` a3ctl fills with its ownership mark.
pub(crate) const fn mark(change: Change) -> Field {
    Field {
        name: "description",
        change,
        compare: Compare::OwnershipMark,
    }
}

/// A field that is never diffed ([`Compare::Never`]).
pub(crate) const fn not_diffed(name: &'static str) -> Field {
    Field {
        name,
        change: InPlace,
        compare: Compare::Never,
    }
}

pub(crate) const fn labels() -> Field {
    Field {
        name: "labels",
        change: InPlace,
        compare: Compare::LabelsExceptMark,
    }
}

use Change::InPlace;

/// The fields of a kind.
pub fn fields(kind: Kind) -> &'static [Field] {
    kind.info().fields
}

/// True when `live` satisfies `desired` for this field.
pub fn matches(field: &Field, desired: &Value, live: &Value) -> bool {
    match field.compare {
        Compare::Exact | Compare::Deep => desired == live,
        Compare::Unordered => match (desired, live) {
            (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len()
                    && a.iter().all(|x| b.contains(x))
                    && b.iter().all(|x| a.contains(x))
            }
            _ => desired == live,
        },
        Compare::VersionPrefix => match (desired.as_str(), live.as_str()) {
            (Some("latest" | "default" | ""), _) => true,
            (Some(d), Some(l)) => {
                l == d
                    || l.starts_with(&format!("{d}."))
                    || l.starts_with(&format!("{d}-"))
                    || moved_ahead(d, l)
            }
            _ => desired == live,
        },
        Compare::OwnershipMark | Compare::Never => true,
        Compare::MaintenancePolicy => {
            crate::resource::kinds::cluster::policy_matches(desired, live)
        }
        Compare::UpgradeSettings => {
            crate::resource::kinds::node_pool::upgrade_matches(desired, live)
        }
        Compare::FirewallRules => {
            let rules = |v: &Value| -> Value {
                Value::Array(
                    v.as_array()
                        .into_iter()
                        .flatten()
                        .map(|rule| {
                            let mut rule = rule.clone();
                            if rule.get("ports") == Some(&serde_json::json!(["0-65535"]))
                                && let Some(map) = rule.as_object_mut()
                            {
                                map.remove("ports");
                            }
                            rule
                        })
                        .collect(),
                )
            };
            let unordered = Field {
                compare: Compare::Unordered,
                ..*field
            };
            matches(&unordered, &rules(desired), &rules(live))
        }
        Compare::LabelsExceptMark => without_mark(desired) == without_mark(live),
        Compare::CidrBlocks => match (desired.as_array(), live.as_array()) {
            (Some(d), Some(l)) => {
                let block = |v: &Value| v.get("cidr").cloned().unwrap_or(Value::Null);
                let name = |v: &Value| {
                    v.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                d.len() == l.len()
                    && l.iter().all(|live| {
                        d.iter().any(|want| {
                            block(want) == block(live)
                                && (name(live).is_empty() || name(live) == name(want))
                        })
                    })
                    && d.iter()
                        .all(|want| l.iter().any(|live| block(live) == block(want)))
            }
            _ => desired == live,
        },
    }
}

/// Labels without the ownership label (an absent map counts as empty).
fn without_mark(labels: &Value) -> Value {
    match labels {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != OWNERSHIP_LABEL)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        Value::Null => Value::Object(Default::default()),
        other => other.clone(),
    }
}

/// True when changing `field` from `before` to `after` needs a new resource.
/// The differing leaves of two documents as `(path, before, after)`, paths written from `prefix`
/// like `object.spec.containers[0].image` (keys that are not identifiers are quoted:
/// `labels["app.kubernetes.io/name"]`). Lists of different lengths differ as a whole.
pub fn leaf_diffs(prefix: &str, before: &Value, after: &Value) -> Vec<(String, Value, Value)> {
    let mut out = Vec::new();
    walk(prefix, before, after, &mut out);
    out
}

fn walk(path: &str, before: &Value, after: &Value, out: &mut Vec<(String, Value, Value)>) {
    if before == after {
        return;
    }
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let plain = !key.is_empty()
                    && key
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                let child = if plain {
                    format!("{path}.{key}")
                } else {
                    format!("{path}[{key:?}]")
                };
                walk(
                    &child,
                    b.get(key).unwrap_or(&Value::Null),
                    a.get(key).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        (Value::Array(b), Value::Array(a)) if b.len() == a.len() => {
            for (i, (x, y)) in b.iter().zip(a).enumerate() {
                walk(&format!("{path}[{i}]"), x, y, out);
            }
        }
        _ => out.push((path.to_string(), before.clone(), after.clone())),
    }
}

/// Whether `live` (a build) is on a later minor than `pin`, a minor pin (`1.32`): what a release
/// channel's upgrades do to a cluster after it was applied. GKE never moves it back down, so it
/// is not a change to plan (the plan notes it instead).
pub fn moved_ahead(pin: &str, live: &str) -> bool {
    use crate::resource::kinds::gke_versions::minor_of;
    let is_minor_pin = pin.split('.').count() == 2 && !pin.contains('-');
    is_minor_pin && matches!((minor_of(pin), minor_of(live)), (Some(p), Some(l)) if l > p)
}

pub fn forces_replacement(field: &Field, before: &Value, after: &Value) -> bool {
    match field.change {
        Change::InPlace | Change::Local => false,
        Change::ForceNew => true,
        Change::GrowOnly => !grows(before, after),
    }
}

/// A CIDR range that contains the old one with the same base address, or a number that is larger.
fn grows(before: &Value, after: &Value) -> bool {
    if let (Some(b), Some(a)) = (before.as_f64(), after.as_f64()) {
        return a >= b;
    }
    let (Some(b), Some(a)) = (before.as_str(), after.as_str()) else {
        return false;
    };
    let parse = |s: &str| -> Option<(u32, u8)> {
        let (ip, len) = s.split_once('/')?;
        let ip: std::net::Ipv4Addr = ip.parse().ok()?;
        Some((u32::from(ip), len.parse().ok().filter(|l| *l <= 32)?))
    };
    let (Some((b_ip, b_len)), Some((a_ip, a_len))) = (parse(b), parse(a)) else {
        return false;
    };
    let mask = |len: u8| if len == 0 { 0 } else { u32::MAX << (32 - len) };
    a_len <= b_len && (b_ip & mask(a_len)) == (a_ip & mask(a_len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_names_its_field_only_in_camel_case() {
        assert!(camel_names("RoutingMode", "routing_mode"));
        assert!(camel_names("MasterIpv4Cidr", "master_ipv4_cidr"));
        assert!(camel_names("Mtu", "mtu"));
        assert!(!camel_names("RoutingMode", "routingmode"));
        assert!(!camel_names("RoutingMode", "routing_mod"));
        assert!(!camel_names("RoutingMode", "routing_modes"));
        assert!(!camel_names("Mtu", "mtu_"));
        assert!(!camel_names("Mtu", "_mtu"));
        assert!(!camel_names("Mtu", "Mtu"));
    }

    #[test]
    fn a_channel_moving_past_a_minor_pin_is_not_a_difference() {
        let version = Field {
            name: "version",
            change: Change::InPlace,
            compare: Compare::VersionPrefix,
        };
        let m = |d: &str, l: &str| matches(&version, &Value::from(d), &Value::from(l));
        assert!(moved_ahead("1.32", "1.33.5-gke.1080000"));
        assert!(
            m("1.32", "1.33.5-gke.1080000"),
            "the channel moved ahead of a minor pin"
        );
        assert!(m("1.33", "1.33.5-gke.1080000"));
        // A pin of a patch or a build is the user's exact ask: what runs differs from it.
        assert!(!moved_ahead("1.32.12", "1.33.5-gke.1080000"));
        assert!(!m("1.32.12-gke.1050000", "1.33.5-gke.1080000"));
        // Behind the pin is a change to plan.
        assert!(!moved_ahead("1.34", "1.33.5-gke.1080000"));
        assert!(!m("1.34", "1.33.5-gke.1080000"));
        assert!(!moved_ahead("default", "1.33.5-gke.1080000"));
    }
    use serde_json::json;

    fn field(kind: Kind, name: &str) -> Field {
        *kind.field(name).unwrap()
    }

    #[test]
    fn subnet_expansion_is_in_place_but_shrinking_or_moving_replaces() {
        let range = field(Kind::Subnetwork, "ip_cidr_range");
        assert!(!forces_replacement(
            &range,
            &json!("10.0.0.0/24"),
            &json!("10.0.0.0/20")
        ));
        assert!(forces_replacement(
            &range,
            &json!("10.0.0.0/20"),
            &json!("10.0.0.0/24")
        ));
        assert!(forces_replacement(
            &range,
            &json!("10.0.0.0/24"),
            &json!("10.1.0.0/24")
        ));
        let capacity = field(Kind::Filestore, "capacity_gb");
        assert!(!forces_replacement(&capacity, &json!(2560), &json!(4096)));
        assert!(forces_replacement(&capacity, &json!(4096), &json!(2560)));
    }

    #[test]
    fn node_count_updates_in_place_and_machine_type_replaces() {
        assert!(!forces_replacement(
            &field(Kind::NodePool, "node_count"),
            &json!(4),
            &json!(8)
        ));
        assert!(forces_replacement(
            &field(Kind::NodePool, "machine_type"),
            &json!("a"),
            &json!("b")
        ));
    }

    #[test]
    fn versions_match_by_prefix_and_sets_ignore_order() {
        let version = field(Kind::Cluster, "version");
        assert!(matches(
            &version,
            &json!("1.32"),
            &json!("1.32.9-gke.1130000")
        ));
        // A minor pin the channel has moved past matches (issue: a version GKE's channel moved
        // ahead of a minor pin is not drift); one behind the pin does not.
        assert!(!matches(
            &version,
            &json!("1.34"),
            &json!("1.33.5-gke.1080000")
        ));
        // Prefixes end at a dot: `1.32` is not a prefix of `1.3.9` (an earlier minor, so behind).
        assert!(!matches(
            &version,
            &json!("1.32"),
            &json!("1.3.9-gke.1130000")
        ));
        assert!(matches(
            &version,
            &json!("latest"),
            &json!("1.34.1-gke.1829001")
        ));
        let ranges = field(Kind::Firewall, "source_ranges");
        assert!(matches(&ranges, &json!(["a", "b"]), &json!(["b", "a"])));
        assert!(!matches(&ranges, &json!(["a", "b"]), &json!(["a"])));
    }

    #[test]
    fn ownership_marks_never_differ_but_other_labels_do() {
        let labels = field(Kind::Cluster, "labels");
        let marked = json!({OWNERSHIP_LABEL: "bp"});
        assert!(matches(&labels, &marked, &json!({})));
        assert!(matches(&labels, &marked, &Value::Null));
        assert!(matches(
            &labels,
            &marked,
            &json!({OWNERSHIP_LABEL: "other"})
        ));
        assert!(!matches(&labels, &marked, &json!({"team": "ml"})));
        assert!(!matches(
            &labels,
            &json!({OWNERSHIP_LABEL: "bp", "team": "ml"}),
            &json!({})
        ));
        let description = field(Kind::Network, "description");
        assert!(matches(
            &description,
            &json!("Managed by a3ctl (a3ctl-blueprint=bp)"),
            &json!("")
        ));
    }

    #[test]
    fn authorized_networks_match_by_block_and_unnamed_live_blocks_match_any_name() {
        let authorized = field(Kind::Cluster, "authorized_networks");
        let want = json!([{"cidr": "0.0.0.0/0", "name": "anywhere"}]);
        assert!(matches(
            &authorized,
            &want,
            &json!([{"cidr": "0.0.0.0/0", "name": ""}])
        ));
        assert!(matches(&authorized, &want, &want));
        assert!(!matches(
            &authorized,
            &want,
            &json!([{"cidr": "0.0.0.0/0", "name": "office"}])
        ));
        assert!(!matches(
            &authorized,
            &want,
            &json!([{"cidr": "10.0.0.0/8", "name": ""}])
        ));
        assert!(!matches(&authorized, &want, &json!([])));
        let two = json!([{"cidr": "10.0.0.0/8", "name": "a"}, {"cidr": "0.0.0.0/0", "name": "b"}]);
        assert!(matches(
            &authorized,
            &two,
            &json!([{"cidr": "0.0.0.0/0", "name": ""}, {"cidr": "10.0.0.0/8", "name": ""}])
        ));
        let allowed = field(Kind::Firewall, "allowed");
        assert!(matches(
            &allowed,
            &json!([{"protocol": "icmp"}, {"protocol": "tcp", "ports": ["0-65535"]}]),
            &json!([{"protocol": "tcp"}, {"protocol": "icmp"}])
        ));
        assert!(!matches(
            &allowed,
            &json!([{"protocol": "tcp", "ports": ["0-65535"]}]),
            &json!([{"protocol": "tcp", "ports": ["22"]}])
        ));
        let ranges = field(Kind::Subnetwork, "secondary_ranges");
        assert!(matches(
            &ranges,
            &json!([{"name": "pods", "cidr": "a"}, {"name": "services", "cidr": "b"}]),
            &json!([{"name": "services", "cidr": "b"}, {"name": "pods", "cidr": "a"}])
        ));
    }
}
