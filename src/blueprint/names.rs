//! GCP and Kubernetes naming rules for the names a blueprint declares.
//!
//! Each function returns `Err(reason)` with a short sentence that the validation rules
//! (`validate.rs`) turn into a diagnostic. Length limits and why they are what they are:
//!
//! - Deployment name: at most [`DEPLOYMENT_NAME_MAX`] (20). It is the GKE cluster name (GKE
//!   allows 40) and prefixes every resource a3ctl creates. 20 leaves at least 43 characters for
//!   suffixes in 63-character Compute Engine names (`<name>-gpunet-7-subnet`) and 10 for suffixes
//!   in 30-character service account ids.
//! - Node pool name: at most [`NODE_POOL_NAME_MAX`] (40, GKE's `NodePool.name` limit), and
//!   `<cluster>-<pool>` at most [`CLUSTER_POOL_MAX`] (32). GKE builds node VM, instance group and
//!   instance template names as `gke-<cluster>-<pool>-<hash>...` within Compute Engine's 63
//!   characters and silently shortens the `<cluster>-<pool>` part when it does not fit (Cluster
//!   Toolkit's notes say templates keep 32 characters of it). a3ctl refuses names that would be
//!   shortened, so every node and instance group still names its cluster and pool in full.

/// Longest deployment name (see the module doc).
pub const DEPLOYMENT_NAME_MAX: usize = 20;
/// GKE's limit on a node pool name.
pub const NODE_POOL_NAME_MAX: usize = 40;
/// Longest `<cluster>-<pool>` that GKE keeps whole in Compute Engine object names.
pub const CLUSTER_POOL_MAX: usize = 32;

/// RFC 1035 label: a lowercase letter, then lowercase letters, digits or hyphens, not ending in
/// a hyphen, at most `max` characters. Most Compute Engine and GKE names follow it.
pub fn rfc1035(name: &str, max: usize) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".to_string());
    }
    if name.len() > max {
        return Err(format!(
            "it is {} characters long, the limit is {max}",
            name.len()
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err("it must start with a lowercase letter".to_string());
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(format!(
            "`{bad}` is not allowed; use lowercase letters, digits and hyphens"
        ));
    }
    if name.ends_with('-') {
        return Err("it must not end with a hyphen".to_string());
    }
    Ok(())
}

/// Kubernetes DNS-1123 label (queue names, Network object prefixes): lowercase letters, digits
/// and hyphens, starting and ending with a letter or digit, at most `max` characters.
pub fn dns1123_label(name: &str, max: usize) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".to_string());
    }
    if name.len() > max {
        return Err(format!(
            "it is {} characters long, the limit is {max}",
            name.len()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(format!(
            "`{bad}` is not allowed; use lowercase letters, digits and hyphens"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Err("it must start and end with a letter or digit".to_string());
    }
    Ok(())
}

/// GCP project id: 6 to 30 characters, RFC 1035 otherwise, and no `google`.
pub fn project_id(id: &str) -> Result<(), String> {
    if id.len() < 6 {
        return Err(format!(
            "it is {} characters long, project ids have 6 to 30",
            id.len()
        ));
    }
    rfc1035(id, 30)?;
    if id.contains("google") {
        return Err("project ids cannot contain `google`".to_string());
    }
    Ok(())
}

/// Cloud Storage bucket name (names without dots; dotted names need domain verification).
pub fn bucket(name: &str) -> Result<(), String> {
    if name.len() < 3 || name.len() > 63 {
        return Err(format!(
            "it is {} characters long, bucket names have 3 to 63",
            name.len()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '_'))
    {
        let why = if bad == '.' {
            " (dotted names need domain verification)"
        } else {
            ""
        };
        return Err(format!(
            "`{bad}` is not allowed{why}; use lowercase letters, digits, hyphens and underscores"
        ));
    }
    let alphanumeric = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    if !name.starts_with(alphanumeric) || !name.ends_with(alphanumeric) {
        return Err("it must start and end with a letter or digit".to_string());
    }
    if name.starts_with("goog") || name.contains("google") || name.contains("g00gle") {
        return Err("bucket names cannot start with `goog` or contain `google`".to_string());
    }
    Ok(())
}

/// Filestore file share name: a lowercase letter, then lowercase letters, digits or
/// underscores, at most 16 characters (the limit of the basic tiers, applied to every tier).
pub fn filestore_share(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 16 {
        return Err(format!(
            "it is {} characters long, share names have 1 to 16",
            name.len()
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err("it must start with a lowercase letter".to_string());
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_'))
    {
        return Err(format!(
            "`{bad}` is not allowed; use lowercase letters, digits and underscores"
        ));
    }
    Ok(())
}

/// Artifact Registry repository id: RFC 1035 style, at most 63 characters.
pub fn repository(name: &str) -> Result<(), String> {
    rfc1035(name, 63)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1035_rules() {
        assert!(rfc1035("a3mega", 20).is_ok());
        assert!(rfc1035("a", 20).is_ok());
        assert!(rfc1035("", 20).is_err());
        assert!(rfc1035("3mega", 20).is_err());
        assert!(rfc1035("a3-", 20).is_err());
        assert!(rfc1035("A3", 20).is_err());
        assert!(rfc1035("a_b", 20).is_err());
        assert!(rfc1035(&"a".repeat(21), 20).is_err());
    }

    #[test]
    fn project_id_rules() {
        assert!(project_id("my-project").is_ok());
        assert!(project_id("short").is_err());
        assert!(project_id(&format!("p{}", "x".repeat(30))).is_err());
        assert!(project_id("my-google-project").is_err());
        assert!(project_id("my-project-").is_err());
    }

    #[test]
    fn bucket_rules() {
        assert!(bucket("my-project-ckpt_1").is_ok());
        assert!(bucket("ab").is_err());
        assert!(bucket("-abc").is_err());
        assert!(bucket("abc.def").is_err());
        assert!(bucket("googles-bucket").is_err());
        assert!(bucket("my-google-bucket").is_err());
        assert!(bucket("Upper").is_err());
    }

    #[test]
    fn share_and_label_rules() {
        assert!(filestore_share("nfsshare").is_ok());
        assert!(filestore_share("nfs_share_1").is_ok());
        assert!(filestore_share("nfs-share").is_err());
        assert!(filestore_share("1share").is_err());
        assert!(filestore_share(&"a".repeat(17)).is_err());
        assert!(dns1123_label("0queue", 63).is_ok());
        assert!(dns1123_label("queue-", 63).is_err());
    }
}
