//! Generated names from the seed: the simulation's client gives every
//! create with `metadata.generateName` (and no name) a name before it reaches
//! the embedded API server, `<prefix><5 characters>` drawn from the
//! scenario's seed, the prefix and how many names that prefix had. The
//! server would draw the suffix at random: a Job's pods would be called
//! differently in every run. A Job controller creates its pods one after
//! another, so its pods get the same names in every run of one seed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{Method, Request, header};
use serde_json::Value;
use tower::ServiceExt as _;

/// Characters of a generated suffix (upstream `utilrand.String`'s: no
/// vowels, no confusable digits).
const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Length of the suffix.
const SUFFIX_LEN: usize = 5;
/// Longest prefix kept (`names.MaxGeneratedNameLength`: 63 − 5).
const MAX_PREFIX: usize = 58;
/// Largest request body rewritten (bigger ones pass as they are).
const MAX_BODY: usize = 8 << 20;

/// Names drawn so far.
#[derive(Debug, Default)]
pub struct Names {
    seed: u64,
    /// Names handed out per prefix.
    counts: BTreeMap<String, u64>,
    used: BTreeSet<String>,
}

impl Names {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Names {
        Names {
            seed,
            ..Names::default()
        }
    }

    /// The next name for `prefix` (truncated to 58 characters): the same
    /// sequence for the same seed and prefix, never one handed out before.
    pub fn next(&mut self, prefix: &str) -> String {
        let prefix: String = prefix.chars().take(MAX_PREFIX).collect();
        loop {
            let n = self.counts.entry(prefix.clone()).or_default();
            *n += 1;
            let mut x = splitmix(self.seed ^ fnv(&prefix) ^ splitmix(*n));
            let mut name = prefix.clone();
            for _ in 0..SUFFIX_LEN {
                let i = usize::try_from(x % ALPHANUMS.len() as u64).unwrap_or(0);
                name.push(char::from(ALPHANUMS[i]));
                x /= ALPHANUMS.len() as u64;
            }
            if self.used.insert(name.clone()) {
                return name;
            }
        }
    }

    /// `body` (a JSON object to create) with `metadata.name` set from its
    /// `generateName` when it has no name; `None` when it needs nothing.
    fn name_object(&mut self, body: &[u8]) -> Option<Vec<u8>> {
        let mut obj: Value = serde_json::from_slice(body).ok()?;
        let meta = obj.get_mut("metadata")?.as_object_mut()?;
        if meta
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty())
        {
            return None;
        }
        let prefix = meta
            .get("generateName")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())?
            .to_owned();
        meta.insert("name".into(), Value::String(self.next(&prefix)));
        serde_json::to_vec(&obj).ok()
    }
}

/// A kube client on `router` whose creates get seeded names ([`Names`]).
pub fn client(router: axum::Router, seed: u64) -> kube::Client {
    let names = Arc::new(Mutex::new(Names::new(seed)));
    let service = tower::service_fn(move |req: Request<kube::client::Body>| {
        let router = router.clone();
        let names = names.clone();
        async move {
            let req = name_request(req, &names).await;
            router.oneshot(req).await
        }
    });
    kube::Client::new(service, "default")
}

/// A POST of a JSON object with `generateName` gets its name here; every
/// other request passes unchanged.
async fn name_request(req: Request<kube::client::Body>, names: &Mutex<Names>) -> Request<Body> {
    let (mut parts, body) = req.into_parts();
    let body = Body::new(body);
    let json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if parts.method != Method::POST || !json {
        return Request::from_parts(parts, body);
    }
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        // Unreadable or too big: let the server answer an empty body.
        Err(_) => return Request::from_parts(parts, Body::empty()),
    };
    let named = names.lock().ok().and_then(|mut n| n.name_object(&bytes));
    match named {
        Some(new) => {
            parts
                .headers
                .insert(header::CONTENT_LENGTH, new.len().into());
            Request::from_parts(parts, Body::from(new))
        }
        None => Request::from_parts(parts, Body::from(bytes)),
    }
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_seed_and_prefix() {
        let mut a = Names::new(1);
        let mut b = Names::new(1);
        let first: Vec<String> = (0..3).map(|_| a.next("plain-")).collect();
        let again: Vec<String> = (0..3).map(|_| b.next("plain-")).collect();
        assert_eq!(first, again);
        assert!(
            first
                .iter()
                .all(|n| n.len() == "plain-".len() + 5 && n.starts_with("plain-"))
        );
        assert_eq!(first.iter().collect::<BTreeSet<_>>().len(), 3);
        assert_ne!(Names::new(2).next("plain-"), first[0]);
        assert_eq!(Names::new(1).next(&"x".repeat(70)).len(), 63);
    }

    #[test]
    fn only_unnamed_objects_with_generate_name_are_named() {
        let mut n = Names::new(1);
        let named = n
            .name_object(br#"{"metadata":{"generateName":"plain-"}}"#)
            .expect("named");
        let v: Value = serde_json::from_slice(&named).expect("json");
        assert_eq!(v["metadata"]["name"], Names::new(1).next("plain-"));
        assert_eq!(v["metadata"]["generateName"], "plain-");
        assert!(
            n.name_object(br#"{"metadata":{"name":"x","generateName":"plain-"}}"#)
                .is_none()
        );
        assert!(n.name_object(br#"{"metadata":{"name":"x"}}"#).is_none());
        assert!(n.name_object(b"not json").is_none());
    }
}
