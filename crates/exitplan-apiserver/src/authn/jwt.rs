//! The server's service account signing key and compact JWS (JWT) signing
//! and verification with it: ES256 (ECDSA P-256, SHA-256), as
//! kube-apiserver signs with an EC `--service-account-signing-key-file`
//! (`pkg/serviceaccount/jwt.go`). The header is `{"alg":"ES256","kid":…}`,
//! the key id upstream's (`keyIDFromPublicKey`: base64url of the SHA-256 of
//! the DER public key). The private key is kept in a 0600 PEM file next to
//! the server's other key material and is never logged.

use std::path::Path;

use ring::rand::SystemRandom;
use ring::signature::{
    self, ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair,
};
use rustls::pki_types::PrivatePkcs8KeyDer;
use rustls::pki_types::pem::PemObject;
use serde::Deserialize;

use crate::kubeconfig::{base64, write_private};

/// The name of the key file in a data directory (kubeadm's name).
pub const KEY_FILE: &str = "sa.key";

/// The only signature algorithm issued and accepted.
pub const ALGORITHM: &str = "ES256";

/// The DER `SubjectPublicKeyInfo` prefix of an uncompressed P-256 point
/// (id-ecPublicKey, prime256v1, then the BIT STRING header).
const P256_SPKI_PREFIX: &[u8] = &[
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// Why a key could not be made, loaded or used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The key material is not a P-256 PKCS#8 key.
    #[error("the service account key is not an ECDSA P-256 PKCS#8 key: {0}")]
    Rejected(String),
    /// The PEM could not be parsed.
    #[error("bad PEM in the service account key: {0}")]
    Pem(String),
    /// The OS random source or the signer failed.
    #[error("signing failed")]
    Crypto,
    /// Reading or writing the key file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Why a token failed verification.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// Not a compact JWS of ours: wrong shape, bad base64, bad header, an
    /// algorithm other than ES256. Upstream's authenticator answers "not
    /// mine" (no error) for these.
    #[error("not a service account token")]
    Malformed,
    /// The signature does not verify with the server's key (go-jose's text).
    #[error("go-jose/go-jose: error in cryptographic primitive")]
    Signature,
}

/// The server's service account token signing key.
pub struct SigningKey {
    pair: EcdsaKeyPair,
    /// The uncompressed public point.
    public: Vec<u8>,
    kid: String,
    /// The encoded header (`{"alg":"ES256","kid":…}`).
    header: String,
    rng: SystemRandom,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the private key.
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A new random key (in-memory servers make one each).
    pub fn generate() -> Result<SigningKey, KeyError> {
        Self::from_pkcs8(Self::generate_pkcs8()?.as_ref())
    }

    fn generate_pkcs8() -> Result<ring::pkcs8::Document, KeyError> {
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .map_err(|_| KeyError::Crypto)
    }

    /// The key of a PKCS#8 DER document.
    pub fn from_pkcs8(der: &[u8]) -> Result<SigningKey, KeyError> {
        let rng = SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng)
            .map_err(|e| KeyError::Rejected(e.to_string()))?;
        let public = pair.public_key().as_ref().to_vec();
        let mut spki = P256_SPKI_PREFIX.to_vec();
        spki.extend_from_slice(&public);
        let kid = base64url(ring::digest::digest(&ring::digest::SHA256, &spki).as_ref());
        let header = base64url(
            serde_json::json!({"alg": ALGORITHM, "kid": kid})
                .to_string()
                .as_bytes(),
        );
        Ok(SigningKey {
            pair,
            public,
            kid,
            header,
            rng,
        })
    }

    /// The key of a `-----BEGIN PRIVATE KEY-----` PEM text.
    pub fn from_pem(pem: &str) -> Result<SigningKey, KeyError> {
        let der = PrivatePkcs8KeyDer::from_pem_slice(pem.as_bytes())
            .map_err(|e| KeyError::Pem(e.to_string()))?;
        Self::from_pkcs8(der.secret_pkcs8_der())
    }

    /// The key in `dir`/[`KEY_FILE`], made (and written 0600) if missing.
    pub fn load_or_create(dir: &Path) -> Result<SigningKey, KeyError> {
        let path = dir.join(KEY_FILE);
        match std::fs::read_to_string(&path) {
            Ok(pem) => return Self::from_pem(&pem),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        let doc = Self::generate_pkcs8()?;
        write_private(&path, &pem_of(doc.as_ref()))?;
        tracing::info!(path = %path.display(), "created a service account signing key");
        Self::from_pkcs8(doc.as_ref())
    }

    /// The key id (`kid` header).
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// A compact JWS of `payload` (the claims' JSON) signed with this key.
    pub fn sign(&self, payload: &[u8]) -> Result<String, KeyError> {
        let mut token = format!("{}.{}", self.header, base64url(payload));
        let sig = self
            .pair
            .sign(&self.rng, token.as_bytes())
            .map_err(|_| KeyError::Crypto)?;
        token.push('.');
        token.push_str(&base64url(sig.as_ref()));
        Ok(token)
    }

    /// The payload of `token` if it is an ES256 compact JWS signed by this
    /// key (a `kid`, when present, must be this key's).
    pub fn verify(&self, token: &str) -> Result<Vec<u8>, VerifyError> {
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(sig), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(VerifyError::Malformed);
        };
        #[derive(Deserialize)]
        struct Header {
            alg: String,
            #[serde(default)]
            kid: Option<String>,
        }
        let head: Header = base64url_decode(header)
            .and_then(|h| serde_json::from_slice(&h).ok())
            .ok_or(VerifyError::Malformed)?;
        if head.alg != ALGORITHM {
            return Err(VerifyError::Malformed);
        }
        let claims = base64url_decode(payload).ok_or(VerifyError::Malformed)?;
        let sig = base64url_decode(sig).ok_or(VerifyError::Malformed)?;
        if head.kid.as_deref().is_some_and(|k| k != self.kid) {
            return Err(VerifyError::Signature);
        }
        let signed = &token[..header.len() + 1 + payload.len()];
        signature::UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &self.public)
            .verify(signed.as_bytes(), &sig)
            .map_err(|_| VerifyError::Signature)?;
        Ok(claims)
    }
}

/// A PKCS#8 DER key as PEM.
fn pem_of(der: &[u8]) -> String {
    let b64 = base64(der);
    let mut out = String::from("-----BEGIN PRIVATE KEY-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str("-----END PRIVATE KEY-----\n");
    out
}

/// Base64url without padding (JWS segments).
pub fn base64url(bytes: &[u8]) -> String {
    base64(bytes)
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

/// Decodes base64url without padding (Go's `RawURLEncoding`, strict: no
/// padding, no other characters, no non-zero trailing bits).
pub fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    fn value(c: u8) -> Option<u32> {
        Some(u32::from(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        }))
    }
    let bytes = text.as_bytes();
    if bytes.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            n |= value(*c)? << (18 - 6 * i);
        }
        let produced = chunk.len() - 1;
        let mask = match produced {
            1 => 0xFFFF,
            2 => 0xFF,
            _ => 0,
        };
        if n & mask != 0 {
            return None;
        }
        for i in 0..produced {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_round_trips_and_is_strict() {
        assert_eq!(base64url(b"\xfb\xff"), "-_8");
        assert_eq!(base64url(b"{}"), "e30");
        for data in [&b""[..], b"a", b"ab", b"abc", b"abcd", b"\xfb\xff\xfe\x00"] {
            assert_eq!(
                base64url_decode(&base64url(data)).as_deref(),
                Some(data),
                "{data:?}"
            );
        }
        for bad in ["e30=", "e+0", "e/0", "a", "e31", "e3 0"] {
            assert_eq!(base64url_decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn signs_and_verifies_and_rejects_tampering() {
        let key = SigningKey::generate().expect("key");
        let token = key.sign(br#"{"sub":"x"}"#).expect("sign");
        assert_eq!(key.verify(&token).as_deref(), Ok(&br#"{"sub":"x"}"#[..]));
        let parts: Vec<&str> = token.split('.').collect();
        let header = String::from_utf8(base64url_decode(parts[0]).expect("header")).expect("utf8");
        assert_eq!(
            header,
            format!(r#"{{"alg":"ES256","kid":"{}"}}"#, key.kid())
        );
        // Another payload under the same signature.
        let forged = format!("{}.{}.{}", parts[0], base64url(br#"{"sub":"y"}"#), parts[2]);
        assert_eq!(key.verify(&forged), Err(VerifyError::Signature));
        // Another key's signature.
        let other = SigningKey::generate().expect("key");
        assert_eq!(
            key.verify(&other.sign(b"{}").expect("sign")),
            Err(VerifyError::Signature)
        );
        // alg none, wrong shapes, garbage.
        let none = format!("{}.{}.", base64url(br#"{"alg":"none"}"#), parts[1]);
        for bad in [
            none.as_str(),
            "",
            "a.b",
            "a.b.c.d",
            "!!.e30.e30",
            &token[1..],
        ] {
            assert!(key.verify(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn key_file_is_private_and_reloads() {
        let dir = std::env::temp_dir().join(format!("exitplan-sa-key-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let made = SigningKey::load_or_create(&dir).expect("create");
        let again = SigningKey::load_or_create(&dir).expect("load");
        assert_eq!(made.kid(), again.kid());
        let token = made.sign(b"{}").expect("sign");
        assert!(again.verify(&token).is_ok());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join(KEY_FILE))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(!format!("{made:?}").contains("PRIVATE"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
