//! TLS for the local server. client-go (kubectl) sends a kubeconfig's
//! credentials only to `https://` servers (`clientcmd` reads user auth only
//! when `IsConfigTransportTLS`), so a token-protected server must speak
//! TLS. [`LocalCa`] is a private CA and a serving certificate for the local
//! addresses, made at first start and kept in the data directory; the
//! kubeconfig carries the CA. Connections are served by [`crate::serving`].

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Why TLS material could not be made or loaded.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// Generating a key or certificate failed.
    #[error("certificate generation failed: {0}")]
    Generate(#[from] rcgen::Error),
    /// rustls rejected the material.
    #[error("TLS configuration failed: {0}")]
    Config(#[from] rustls::Error),
    /// PEM could not be parsed.
    #[error("bad PEM in {file}: {why}")]
    Pem {
        /// The file.
        file: String,
        /// The parser's message.
        why: String,
    },
    /// Reading or writing the files failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// A private CA and the serving certificate it signed, PEM encoded.
#[derive(Clone, Debug)]
pub struct LocalCa {
    /// The CA certificate (what clients trust).
    pub ca_pem: String,
    /// The serving certificate.
    pub cert_pem: String,
    /// The serving certificate's private key.
    pub key_pem: String,
}

/// The names a local server's certificate covers: loopback names plus `extra`.
pub fn local_names(extra: Option<IpAddr>) -> Vec<String> {
    let mut names = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    if let Some(ip) = extra.filter(|ip| !ip.is_unspecified()) {
        let ip = ip.to_string();
        if !names.contains(&ip) {
            names.push(ip);
        }
    }
    names
}

impl LocalCa {
    /// A new CA and a serving certificate for `names` (IP addresses or DNS names).
    pub fn generate(names: &[String]) -> Result<LocalCa, TlsError> {
        let ca_key = KeyPair::generate()?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "exitplan local CA");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca_params.self_signed(&ca_key)?;
        let issuer = Issuer::new(ca_params, ca_key);
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(names.to_vec())?;
        params
            .distinguished_name
            .push(DnType::CommonName, "exitplan-apiserver");
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let cert = params.signed_by(&key, &issuer)?;
        Ok(LocalCa {
            ca_pem: ca_cert.pem(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// The material in `dir` (`ca.crt`, `server.crt`, `server.key`), made
    /// for `names` if missing.
    pub fn load_or_create(dir: &Path, names: &[String]) -> Result<LocalCa, TlsError> {
        let (ca, cert, key) = (
            dir.join("ca.crt"),
            dir.join("server.crt"),
            dir.join("server.key"),
        );
        if ca.exists() && cert.exists() && key.exists() {
            return Ok(LocalCa {
                ca_pem: std::fs::read_to_string(ca)?,
                cert_pem: std::fs::read_to_string(cert)?,
                key_pem: std::fs::read_to_string(key)?,
            });
        }
        let made = LocalCa::generate(names)?;
        crate::kubeconfig::write_private(&ca, &made.ca_pem)?;
        crate::kubeconfig::write_private(&cert, &made.cert_pem)?;
        crate::kubeconfig::write_private(&key, &made.key_pem)?;
        tracing::info!(dir = %dir.display(), ?names, "created a local CA and serving certificate");
        Ok(made)
    }

    /// The rustls server configuration (HTTP/1.1 over TLS 1.2/1.3).
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, TlsError> {
        let pem = |file: &str, why: rustls::pki_types::pem::Error| TlsError::Pem {
            file: file.to_owned(),
            why: why.to_string(),
        };
        let certs = CertificateDer::pem_slice_iter(self.cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| pem("server.crt", e))?;
        let key = PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes())
            .map_err(|e| pem("server.key", e))?;
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_material_makes_a_server_config() {
        let ca = LocalCa::generate(&local_names(None)).expect("generate");
        assert!(ca.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(ca.key_pem.contains("PRIVATE KEY"));
        ca.server_config().expect("config");
    }
}
