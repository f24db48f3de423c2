//! The kinds exitplan serves, and running a decoded document through its
//! registry strategy (`exitplan_api::strategy`) — the same admission path the
//! API server uses.

use jiff::Timestamp;
use serde::de::DeserializeOwned;
use serde_json::Value;

use exitplan_api::absent::find_absent;
use exitplan_api::batch::JobStrategy;
use exitplan_api::core::pod::PodStrategy;
use exitplan_api::lifecycle::eviction::EvictionStrategy;
use exitplan_api::lifecycle::evictionrequest::EvictionRequestStrategy;
use exitplan_api::policy::pdb::PodDisruptionBudgetStrategy;
use exitplan_api::quantities::{Quantities, first_malformed};
use exitplan_api::status::InvalidError;
use exitplan_api::strategy::{self, Context, Strategy, SystemFields, fill_system_fields};

use crate::input::{InputError, type_meta};

/// `apiVersion kind` of every supported kind, for messages.
pub const SUPPORTED: &[&str] = &[
    "lifecycle.k8s.io/v1alpha1 EvictionRequest",
    "lifecycle.k8s.io/v1alpha1 Eviction",
    "v1 Pod",
    "batch/v1 Job",
    "policy/v1 PodDisruptionBudget",
];

/// A kind exitplan validates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// lifecycle.k8s.io/v1alpha1 EvictionRequest.
    EvictionRequest,
    /// lifecycle.k8s.io/v1alpha1 Eviction.
    Eviction,
    /// v1 Pod.
    Pod,
    /// batch/v1 Job.
    Job,
    /// policy/v1 PodDisruptionBudget.
    PodDisruptionBudget,
}

impl Kind {
    /// The kind of a document, or why it has none we support.
    pub fn of(src: &str, doc: &Value) -> Result<Kind, InputError> {
        let (api_version, kind) =
            type_meta(doc).ok_or_else(|| InputError::NotAnObject(src.to_owned()))?;
        match (api_version, kind) {
            ("lifecycle.k8s.io/v1alpha1", "EvictionRequest") => Ok(Kind::EvictionRequest),
            ("lifecycle.k8s.io/v1alpha1", "Eviction") => Ok(Kind::Eviction),
            ("v1", "Pod") => Ok(Kind::Pod),
            ("batch/v1", "Job") => Ok(Kind::Job),
            ("policy/v1", "PodDisruptionBudget") => Ok(Kind::PodDisruptionBudget),
            _ => Err(InputError::Unsupported(
                src.to_owned(),
                api_version.to_owned(),
                kind.to_owned(),
            )),
        }
    }
}

/// Which write is being checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// A create.
    Create,
    /// An update of the main resource.
    Update,
    /// An update of the `/status` subresource.
    UpdateStatus,
}

/// A named input document.
pub struct Doc {
    /// Where it came from (file name or `<stdin>`).
    pub src: String,
    /// The parsed document.
    pub value: Value,
}

/// The outcome of an admission: the object as it would be stored, or the 422.
pub type Admitted = Result<Value, InvalidError>;

/// Runs `new` (and `old` for updates) through the strategy of `kind`.
pub fn admit(
    kind: Kind,
    op: Operation,
    new: Doc,
    old: Option<Doc>,
    now: Timestamp,
) -> Result<Admitted, InputError> {
    match kind {
        Kind::EvictionRequest => admit_as::<EvictionRequestStrategy>(op, new, old, now),
        Kind::Eviction => admit_as::<EvictionStrategy>(op, new, old, now),
        Kind::Pod => admit_as::<PodStrategy>(op, new, old, now),
        Kind::Job => admit_as::<JobStrategy>(op, new, old, now),
        Kind::PodDisruptionBudget => admit_as::<PodDisruptionBudgetStrategy>(op, new, old, now),
    }
}

/// Decodes a document into its typed object.
pub fn decode<T: DeserializeOwned>(doc: Doc) -> Result<T, InputError> {
    serde_json::from_value(doc.value).map_err(|e| InputError::Decode(doc.src, e.to_string()))
}

fn admit_as<S>(
    op: Operation,
    new: Doc,
    old: Option<Doc>,
    now: Timestamp,
) -> Result<Admitted, InputError>
where
    S: Strategy,
    S::Object: DeserializeOwned + serde::Serialize + Quantities,
{
    let absent = find_absent(&new.value);
    let src = new.src.clone();
    let value_key = new.value.to_string();
    let ctx = Context {
        now,
        absent: &absent,
    };
    let mut obj: S::Object = decode(new)?;
    // The API server refuses a malformed quantity while decoding.
    if let Some(e) = first_malformed(&obj) {
        return Err(InputError::Decode(src, e.to_owned()));
    }
    let old: Option<S::Object> = old.map(decode).transpose()?.map(|mut o| {
        S::default(&mut o);
        o
    });
    let verdict = match (op, old) {
        (Operation::Create, _) => {
            fill_system_fields(
                k8s_openapi::Metadata::metadata_mut(&mut obj),
                &offline_system_fields(&value_key, now),
            );
            strategy::admit_create::<S>(&mut obj, &ctx)
        }
        (Operation::Update, Some(old)) => strategy::admit_update::<S>(&mut obj, &old, &ctx),
        (Operation::UpdateStatus, Some(old)) => {
            strategy::admit_status_update::<S>(&mut obj, &old, &ctx)
        }
        (_, None) => return Err(InputError::Mismatch("an update needs --old".to_owned())),
    };
    Ok(verdict.map(|()| serde_json::to_value(&obj).unwrap_or(Value::Null)))
}

/// What the API server would assign on create, made deterministic for offline
/// use: the same input always yields the same UID and generated name, so
/// `exitplan validate -o json` output is reproducible.
fn offline_system_fields(seed: &str, now: Timestamp) -> SystemFields {
    // FNV-1a over the submitted JSON: stable across runs and platforms.
    let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for b in seed.bytes() {
        h ^= u128::from(b);
        h = h.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
    }
    let hex = format!("{h:032x}");
    // Shape it as an RFC 4122 version-4 UUID.
    let uid = format!(
        "{}-{}-4{}-{}{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        ["8", "9", "a", "b"][usize::from(hex.as_bytes()[16] % 4)],
        &hex[17..20],
        &hex[20..32]
    );
    // kube-apiserver's generateName alphabet (no vowels, no look-alikes).
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let suffix: String = hex
        .bytes()
        .take(5)
        .map(|b| char::from(ALPHABET[usize::from(b) % ALPHABET.len()]))
        .collect();
    SystemFields {
        uid,
        creation_timestamp: now,
        generated_name_suffix: suffix,
    }
}
