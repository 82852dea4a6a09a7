//! Who may call a cluster's Kubernetes API server.
//!
//! A request must carry a bearer token, as on GKE; without one the server answers 401
//! `Unauthorized`, as kube-apiserver does. Two kinds of token are accepted:
//!
//! - the cluster's own static token ([`cluster_token`]), which a plain kubeconfig can carry (no
//!   exec plugin, no Google login). It is derived from the cluster's CA key with HMAC-SHA-256, so
//!   it is never stored anywhere (the world file holds the CA key already, readable by its owner
//!   only), it stays the same across restarts, and a cluster made again gets a new one;
//! - a "Google access token": the token [`crate::SimConfig::kube_token`] names, or, when none is
//!   named, any other non-empty token (the simulator does not model Google's OAuth, so every token
//!   stands for some authenticated Google identity).

use super::tls::ClusterCerts;
use sha2::{Digest, Sha256};
use std::path::Path;

/// What a plain kubeconfig needs to reach one cluster.
#[derive(Debug, Clone)]
pub struct Access {
    /// `127.0.0.1:PORT`.
    pub endpoint: String,
    /// PEM of the cluster's CA.
    pub ca_pem: String,
    /// The cluster's static bearer token ([`cluster_token`]).
    pub token: String,
}

/// The static bearer token of the cluster `key` (`projects/P/locations/L/clusters/C`):
/// `a3sim-` and the hex HMAC-SHA-256 (RFC 2104) of the key under the cluster's CA key.
pub fn cluster_token(certs: &ClusterCerts, key: &str) -> String {
    let mac = hmac_sha256(certs.ca_key_pem.as_bytes(), key.as_bytes());
    let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
    format!("a3sim-{hex}")
}

fn hmac_sha256(secret: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut key = [0u8; BLOCK];
    if secret.len() > BLOCK {
        key[..32].copy_from_slice(&Sha256::digest(secret));
    } else {
        key[..secret.len()].copy_from_slice(secret);
    }
    let pad = |byte: u8| key.map(|k| k ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// Compares two tokens in time independent of where they differ.
pub fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Whether a request carrying `token` (its bearer token, if any) may call the cluster whose
/// static token is `own` (None when the cluster is gone), given the configured Google token.
pub fn authorized(token: Option<&str>, own: Option<&str>, google: Option<&str>) -> bool {
    let Some(token) = token.filter(|t| !t.is_empty()) else {
        return false;
    };
    own.is_some_and(|own| same_token(own, token))
        || google.is_none_or(|google| same_token(google, token))
}

/// The access to cluster `key` of the world saved in `world_file` (see [`crate::persist`]), read
/// without starting anything; `Ok(None)` when the file or the cluster does not exist.
pub fn access_from_file(world_file: &Path, key: &str) -> Result<Option<Access>, String> {
    let text = match std::fs::read(world_file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read `{}`: {e}", world_file.display())),
    };
    let world: serde_json::Value = serde_json::from_slice(&text)
        .map_err(|e| format!("`{}` is not a simulator world: {e}", world_file.display()))?;
    let Some(cluster) = world["kube"]["clusters"].get(key) else {
        return Ok(None);
    };
    let cluster: super::KubeCluster = serde_json::from_value(cluster.clone()).map_err(|e| {
        format!(
            "`{}` holds an unreadable cluster `{key}`: {e}",
            world_file.display()
        )
    })?;
    Ok(Some(Access {
        token: cluster_token(&cluster.certs, key),
        endpoint: cluster.endpoint,
        ca_pem: cluster.certs.ca_cert_pem,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_test_case_2() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn who_is_let_in() {
        let own = Some("a3sim-1");
        assert!(!authorized(None, own, None));
        assert!(!authorized(Some(""), own, None));
        assert!(authorized(Some("a3sim-1"), own, Some("g")));
        assert!(authorized(Some("g"), own, Some("g")));
        assert!(!authorized(Some("wrong"), own, Some("g")));
        assert!(!authorized(Some("a3sim-1"), None, Some("g")));
        // No Google token configured: any token stands for a Google identity.
        assert!(authorized(Some("anything"), own, None));
    }
}
