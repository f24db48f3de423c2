//! HTTPS to a webhook: where (`clientConfig.url`, or `clientConfig.service`
//! resolved through its Endpoints as kube-aggregator's `ResolveEndpoint`
//! does), TLS verified with `caBundle`, a pool of HTTP/1.1 connections per
//! webhook, and failures worded as Go's HTTP client words them
//! (`Post "<url>": dial tcp …: connect: connection refused`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use k8s_openapi::api::admissionregistration::v1::WebhookClientConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;

use crate::storage::{Key, Store};

/// The largest answer read (kube-apiserver reads at most 3 MiB more than
/// the request; one bound is enough here).
const MAX_ANSWER: usize = 6 * 1024 * 1024;
/// Idle connections kept per webhook.
const MAX_IDLE: usize = 8;

/// Where one call goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The host or address to connect to.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The TLS server name checked against the certificate.
    pub server_name: String,
    /// Path and query of the request.
    pub path: String,
    /// The URL as errors show it.
    pub url: String,
}

impl Target {
    /// With `?timeout=<n>s` appended, as client-go's `Request.Timeout` does.
    pub fn with_timeout(&self, timeout: Duration) -> Target {
        let sep = if self.path.contains('?') { '&' } else { '?' };
        let q = format!("{sep}timeout={}s", timeout.as_secs());
        Target {
            path: format!("{}{q}", self.path),
            url: format!("{}{q}", self.url),
            ..self.clone()
        }
    }
}

/// Splits `https://host[:port][/path][?query]`.
pub fn parse_url(url: &str) -> Result<Target, String> {
    let rest = url
        .strip_prefix("https://")
        .ok_or_else(|| format!("unsupported URL scheme in {url:?}: expected https"))?;
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, tail) = v6
            .split_once(']')
            .ok_or_else(|| format!("invalid URL {url:?}"))?;
        (h, tail.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .map_err(|_| format!("invalid port in URL {url:?}"))?,
        None => 443,
    };
    if host.is_empty() {
        return Err(format!("invalid URL {url:?}: no host"));
    }
    let path = if path.is_empty() || path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    Ok(Target {
        host: host.to_owned(),
        port,
        server_name: host.to_owned(),
        path,
        url: url.to_owned(),
    })
}

/// Where `config` points: its `url`, or its `service` resolved through the
/// stored Service: an `ExternalName` Service is `<externalName>:<port>`
/// (upstream's `ResolveCluster`; `externalName: localhost` reaches a local
/// webhook); a ClusterIP, NodePort or LoadBalancer Service is the first
/// address of the first subset of its Endpoints with a port named as the
/// service port `port` (default 443) (`ResolveEndpoint`). The TLS server
/// name is `<service>.<namespace>.svc` either way.
pub fn resolve(store: &Store, config: &WebhookClientConfig) -> Result<Target, String> {
    if let Some(url) = &config.url {
        return parse_url(url);
    }
    let Some(svc) = &config.service else {
        return Err("neither url nor service is set".to_owned());
    };
    let port = svc.port.unwrap_or(443);
    let path = svc.path.clone().unwrap_or_default();
    let path = if path.starts_with('/') {
        path
    } else {
        format!("/{path}")
    };
    let server_name = format!("{}.{}.svc", svc.name, svc.namespace);
    let url = format!("https://{server_name}:{port}{path}");
    let read = |resource: &str| -> Result<Option<Value>, String> {
        let key = Key::new(resource, &svc.namespace, &svc.name);
        match store.current(&key) {
            Ok(Some(o)) => o.value().map(Some).map_err(|e| e.to_string()),
            Ok(None) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    };
    let service = read("services")?.ok_or_else(|| format!("service {:?} not found", svc.name))?;
    let ty = service
        .pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    if ty == "ExternalName" {
        let host = service
            .pointer("/spec/externalName")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let port = u16::try_from(port).map_err(|_| format!("invalid port {port}"))?;
        return Ok(Target {
            host: host.to_owned(),
            port,
            server_name,
            path,
            url,
        });
    }
    if !matches!(ty, "ClusterIP" | "NodePort" | "LoadBalancer") {
        return Err(format!("unsupported service type {ty:?}"));
    }
    let svc_port = service
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|p| p.get("port").and_then(Value::as_i64) == Some(i64::from(port)))
        .ok_or_else(|| format!("no service port {port} found for service {:?}", svc.name))?;
    let port_name = svc_port.get("name").and_then(Value::as_str).unwrap_or("");
    let unavailable = || format!("no endpoints available for service {:?}", svc.name);
    let endpoints =
        read("endpoints")?.ok_or_else(|| format!("endpoints {:?} not found", svc.name))?;
    for subset in endpoints
        .get("subsets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(ip) = subset.pointer("/addresses/0/ip").and_then(Value::as_str) else {
            continue;
        };
        let found = subset
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|p| p.get("name").and_then(Value::as_str).unwrap_or("") == port_name)
            .and_then(|p| p.get("port").and_then(Value::as_u64))
            .and_then(|p| u16::try_from(p).ok());
        if let Some(p) = found {
            return Ok(Target {
                host: ip.to_owned(),
                port: p,
                server_name,
                path,
                url,
            });
        }
    }
    Err(unavailable())
}

/// Why a call failed, worded as client-go's error (after `Post "<url>": `).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The deadline passed (`context deadline exceeded`).
    #[error("Post {url:?}: context deadline exceeded")]
    Timeout {
        /// The URL.
        url: String,
    },
    /// Connecting, TLS or the exchange failed.
    #[error("Post {url:?}: {why}")]
    Transport {
        /// The URL.
        url: String,
        /// Go's wording.
        why: String,
    },
}

/// The HTTPS client of one webhook: TLS configuration and idle connections.
pub struct Client {
    tls: tokio_rustls::TlsConnector,
    idle: Mutex<Vec<(String, SendRequest<Body>)>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Client")
    }
}

impl Client {
    /// A client trusting the certificates of `ca_bundle` (PEM). Without a
    /// bundle no root is trusted (there is no system trust store here).
    pub fn new(ca_bundle: Option<&[u8]>) -> Result<Client, String> {
        let mut roots = rustls::RootCertStore::empty();
        if let Some(pem) = ca_bundle.filter(|b| !b.is_empty()) {
            let mut any = false;
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|_| {
                    "unable to load root certificates: unable to parse bytes as PEM block"
                        .to_owned()
                })?;
                roots
                    .add(cert)
                    .map_err(|e| format!("unable to load root certificates: {e}"))?;
                any = true;
            }
            if !any {
                return Err(
                    "unable to load root certificates: unable to parse bytes as PEM block"
                        .to_owned(),
                );
            }
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
        Ok(Client {
            tls: tokio_rustls::TlsConnector::from(Arc::new(config)),
            idle: Mutex::new(Vec::new()),
        })
    }

    /// POSTs `body` (JSON) to `target` within `timeout`: the status code
    /// and the answer's body.
    pub async fn post(
        &self,
        target: &Target,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<(u16, Bytes), CallError> {
        match tokio::time::timeout(timeout, self.exchange(target, body)).await {
            Ok(r) => r.map_err(|why| CallError::Transport {
                url: target.url.clone(),
                why,
            }),
            Err(_) => Err(CallError::Timeout {
                url: target.url.clone(),
            }),
        }
    }

    fn pooled(&self, authority: &str) -> Option<SendRequest<Body>> {
        let mut idle = self.idle.lock().ok()?;
        while let Some(i) = idle.iter().position(|(a, _)| a == authority) {
            let (_, sender) = idle.swap_remove(i);
            if !sender.is_closed() {
                return Some(sender);
            }
        }
        None
    }

    async fn exchange(&self, target: &Target, body: Vec<u8>) -> Result<(u16, Bytes), String> {
        let authority = format!("{}:{}", target.host, target.port);
        let body = Bytes::from(body);
        let request = |body: Bytes| {
            hyper::Request::post(target.path.as_str())
                .header(hyper::header::HOST, authority.as_str())
                .header(hyper::header::CONTENT_TYPE, "application/json")
                .header(hyper::header::ACCEPT, "application/json, */*")
                .body(Body::from(body))
                .map_err(|e| e.to_string())
        };
        // A pooled connection the server closed meanwhile fails before
        // anything was read: retried once on a new connection, as Go's
        // transport retries a request on a reused connection.
        let mut pooled = self.pooled(&authority);
        if let Some(sender) = &mut pooled
            && sender.ready().await.is_err()
        {
            pooled = None;
        }
        let (sender, response) = match pooled {
            Some(mut sender) => match sender.send_request(request(body.clone())?).await {
                Ok(r) => (sender, r),
                Err(e) if e.is_closed() || e.is_incomplete_message() || e.is_canceled() => {
                    let mut fresh = self.connect(target).await?;
                    let r = fresh
                        .send_request(request(body)?)
                        .await
                        .map_err(|e| hyper_error(&e))?;
                    (fresh, r)
                }
                Err(e) => return Err(hyper_error(&e)),
            },
            None => {
                let mut fresh = self.connect(target).await?;
                let r = fresh
                    .send_request(request(body)?)
                    .await
                    .map_err(|e| hyper_error(&e))?;
                (fresh, r)
            }
        };
        let code = response.status().as_u16();
        let bytes = axum::body::to_bytes(Body::new(response.into_body()), MAX_ANSWER)
            .await
            .map_err(|e| format!("net/http: request canceled ({e})"))?;
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < MAX_IDLE
            && !sender.is_closed()
        {
            idle.push((authority, sender));
        }
        Ok((code, bytes))
    }

    async fn connect(&self, target: &Target) -> Result<SendRequest<Body>, String> {
        let addr = format!("{}:{}", target.host, target.port);
        let shown = if target.host.contains(':') {
            format!("[{}]:{}", target.host, target.port)
        } else {
            addr.clone()
        };
        let tcp = tokio::net::TcpStream::connect((target.host.as_str(), target.port))
            .await
            .map_err(|e| format!("dial tcp {shown}: {}", dial_error(&e)))?;
        let _ = tcp.set_nodelay(true);
        let name = ServerName::try_from(target.server_name.clone())
            .map_err(|e| format!("tls: invalid server name {:?}: {e}", target.server_name))?;
        let tls = self
            .tls
            .connect(name, tcp)
            .await
            .map_err(|e| tls_error(&e, &target.server_name))?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| hyper_error(&e))?;
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "webhook connection ended");
            }
        });
        Ok(sender)
    }
}

/// Go's `connect:` wording of common socket errors.
fn dial_error(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connect: connection refused".to_owned(),
        std::io::ErrorKind::TimedOut => "i/o timeout".to_owned(),
        _ => format!("connect: {e}"),
    }
}

/// A TLS handshake failure as Go's `crypto/tls` and `crypto/x509` word it.
fn tls_error(e: &std::io::Error, server_name: &str) -> String {
    use rustls::{CertificateError, Error};
    let Some(err) = e.get_ref().and_then(|i| i.downcast_ref::<Error>()) else {
        return if e.kind() == std::io::ErrorKind::UnexpectedEof {
            "EOF".to_owned()
        } else {
            format!("remote error: {e}")
        };
    };
    let x509 = match err {
        Error::InvalidCertificate(
            CertificateError::UnknownIssuer
            | CertificateError::BadSignature
            | CertificateError::UnsupportedSignatureAlgorithmContext { .. },
        ) => "x509: certificate signed by unknown authority".to_owned(),
        Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => format!("x509: certificate is not valid for {server_name}"),
        Error::InvalidCertificate(
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. },
        ) => "x509: certificate has expired or is not yet valid".to_owned(),
        Error::InvalidCertificate(other) => format!("x509: {other:?}"),
        other => return format!("remote error: tls: {other}"),
    };
    format!("tls: failed to verify certificate: {x509}")
}

fn hyper_error(e: &hyper::Error) -> String {
    if e.is_incomplete_message() || e.is_closed() {
        "EOF".to_owned()
    } else {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_as_go_parses_them() {
        let t = parse_url("https://127.0.0.1:8443/validate?x=1").expect("url");
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("127.0.0.1", 8443, "/validate?x=1")
        );
        let t = parse_url("https://hooks.example").expect("url");
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("hooks.example", 443, "/")
        );
        let t = parse_url("https://[::1]:9/p").expect("url");
        assert_eq!((t.host.as_str(), t.port), ("::1", 9));
        assert!(parse_url("http://x/").is_err());
        assert!(parse_url("https://x:port/").is_err());
        let t = parse_url("https://h:1/p")
            .expect("url")
            .with_timeout(Duration::from_secs(10));
        assert_eq!(t.url, "https://h:1/p?timeout=10s");
        assert_eq!(t.path, "/p?timeout=10s");
    }

    #[test]
    fn a_bundle_that_is_not_pem_is_refused() {
        assert_eq!(
            Client::new(Some(b"garbage")).map(|_| ()),
            Err("unable to load root certificates: unable to parse bytes as PEM block".to_owned())
        );
        assert!(Client::new(None).is_ok());
    }
}
