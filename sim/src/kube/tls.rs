//! Per-cluster certificates: a CA generated for each simulated cluster and a serving certificate
//! it signs for `127.0.0.1`, `localhost` and the in-cluster `kubernetes.default` names.
//!
//! Clients verify the server against the CA exactly as they would against GKE's
//! `masterAuth.clusterCaCertificate`; nothing here lets a client skip verification.

pub use crate::state::kube::ClusterCerts;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

/// Generates a CA named after the cluster and a serving certificate signed by it.
pub fn generate(cluster_name: &str) -> Result<ClusterCerts, rcgen::Error> {
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(
        DnType::CommonName,
        format!("{cluster_name} cluster CA (a3ctl-sim)"),
    );
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params.self_signed(&ca_key)?;

    let server_key = KeyPair::generate()?;
    let mut params = CertificateParams::new(vec![
        "localhost".to_string(),
        "kubernetes".to_string(),
        "kubernetes.default".to_string(),
        "kubernetes.default.svc".to_string(),
        "kubernetes.default.svc.cluster.local".to_string(),
    ])?;
    params
        .subject_alt_names
        .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    params
        .distinguished_name
        .push(DnType::CommonName, "kube-apiserver");
    let issuer = Issuer::new(ca_params, ca_key);
    let server_cert = params.signed_by(&server_key, &issuer)?;
    Ok(ClusterCerts {
        ca_cert_pem: ca_cert.pem(),
        ca_key_pem: issuer.key().serialize_pem(),
        server_cert_pem: server_cert.pem(),
        server_key_pem: server_key.serialize_pem(),
    })
}

/// A rustls server configuration serving the cluster's certificate (with its CA in the chain).
pub fn server_config(certs: &ClusterCerts) -> Result<Arc<rustls::ServerConfig>, std::io::Error> {
    let bad = |e: &dyn std::fmt::Display| {
        std::io::Error::other(format!("invalid cluster certificate: {e}"))
    };
    let chain: Vec<CertificateDer<'static>> = [
        certs.server_cert_pem.as_bytes(),
        certs.ca_cert_pem.as_bytes(),
    ]
    .into_iter()
    .map(|pem| CertificateDer::from_pem_slice(pem).map_err(|e| bad(&e)))
    .collect::<Result<_, _>>()?;
    let key =
        PrivateKeyDer::from_pem_slice(certs.server_key_pem.as_bytes()).map_err(|e| bad(&e))?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(&e))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| bad(&e))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
