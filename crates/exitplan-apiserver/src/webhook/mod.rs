//! Admission webhooks: the mutating and validating webhooks of the stored
//! `MutatingWebhookConfiguration`s and `ValidatingWebhookConfiguration`s,
//! called as kube-apiserver calls them
//! (`staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook`).
//!
//! ```text
//! write ──► mutate (mutating webhooks, by configuration name then order;
//!    │              JSONPatch answers applied; IfNeeded reinvocation)
//!    ├──► the registry's admission (defaulting, strategy, validation)
//!    └──► validate (validating webhooks, sequentially) ──► storage
//! ```
//!
//! * [`config`] — the configurations from the store, cached until they change.
//! * [`matcher`] — which webhooks a request selects (rules, selectors).
//! * [`conditions`] — `matchConditions` (CEL).
//! * [`review`] — the AdmissionReview v1 request and the checks of its answer.
//! * [`client`] — HTTPS to `url` or to a `service` resolved through its
//!   Endpoints; TLS verified with `caBundle`.
//! * [`dispatch`] — the call order, `failurePolicy`, patches, errors.

pub mod client;
pub mod conditions;
pub mod config;
pub mod dispatch;
pub mod matcher;
pub mod review;

use std::sync::Mutex;

use exitplan_authz::UserInfo;
use serde_json::Value;

pub use config::Webhooks;
pub use dispatch::{mutate, validate};

/// An admission operation (`admission.Operation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// `CREATE`.
    Create,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
    /// `CONNECT`.
    Connect,
}

impl Operation {
    /// The name in rules and AdmissionReviews (`CREATE`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }

    /// The kind of the options object sent with the operation.
    pub fn options_kind(self) -> &'static str {
        match self {
            Operation::Create => "CreateOptions",
            Operation::Update => "UpdateOptions",
            Operation::Delete => "DeleteOptions",
            Operation::Connect => "",
        }
    }
}

/// A group, version and name: the kind (`GroupVersionKind`) or the resource
/// (`GroupVersionResource`) of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gvn {
    /// API group (`""` for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind or resource (plural).
    pub name: String,
}

impl Gvn {
    /// A group, version and name.
    pub fn new(group: &str, version: &str, name: &str) -> Gvn {
        Gvn {
            group: group.to_owned(),
            version: version.to_owned(),
            name: name.to_owned(),
        }
    }
}

/// What the webhooks are told about one request (upstream's
/// `admission.Attributes`, less the objects, which the callers pass).
#[derive(Clone, Debug)]
pub struct Attributes<'a> {
    /// The operation.
    pub operation: Operation,
    /// The kind of the object admitted (`Scale` for `deployments/scale`).
    pub kind: Gvn,
    /// The resource addressed.
    pub resource: Gvn,
    /// The subresource addressed (`""`: none).
    pub subresource: &'a str,
    /// The object's name (may be empty on a create with `generateName`).
    pub name: &'a str,
    /// The namespace (`""` for cluster-scoped objects; a Namespace's own name).
    pub namespace: &'a str,
    /// The previous object (UPDATE, DELETE).
    pub old_object: Option<&'a Value>,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// The operation's options (`CreateOptions`, `UpdateOptions`,
    /// `DeleteOptions`), without `kind`/`apiVersion`.
    pub options: Value,
    /// Who asks.
    pub user: &'a UserInfo,
}

impl<'a> Attributes<'a> {
    /// The attributes of a write to `def` (kind and resource of `def`).
    pub fn of(
        def: &crate::registry::ResourceDef,
        operation: Operation,
        subresource: &'a str,
        name: &'a str,
        namespace: &'a str,
        user: &'a UserInfo,
    ) -> Attributes<'a> {
        Attributes {
            operation,
            kind: Gvn::new(def.group, def.version, def.kind),
            resource: Gvn::new(def.group, def.version, def.plural),
            subresource,
            name,
            namespace,
            old_object: None,
            dry_run: false,
            options: Value::Object(Default::default()),
            user,
        }
    }
}

/// The request on whose behalf webhooks are called: its user, and the
/// warnings the webhooks return (sent as `Warning` headers).
#[derive(Debug, Default)]
pub struct Caller {
    /// The request's user.
    pub user: UserInfo,
    warnings: Mutex<Vec<String>>,
}

impl Caller {
    /// A caller acting as `user`.
    pub fn new(user: UserInfo) -> Caller {
        Caller {
            user,
            warnings: Mutex::default(),
        }
    }

    /// Records a webhook's warning.
    pub fn warn(&self, warning: String) {
        if let Ok(mut w) = self.warnings.lock() {
            w.push(warning);
        }
    }

    /// The warnings recorded so far.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lock().map(|w| w.clone()).unwrap_or_default()
    }
}

/// The user a request is admitted as: its authenticated user (after
/// impersonation).
pub fn request_user(call: &crate::rest::state::Call) -> UserInfo {
    (*call.user).clone()
}

/// The caller of a request ([`request_user`]).
pub fn caller(call: &crate::rest::state::Call) -> Caller {
    Caller::new(request_user(call))
}

/// The options of a create or update as the webhooks see them
/// (`fieldManager`, `dryRun`).
pub fn write_options(manager: &str, dry_run: bool) -> Value {
    let mut o = serde_json::Map::new();
    if dry_run {
        o.insert("dryRun".into(), serde_json::json!(["All"]));
    }
    if !manager.is_empty() {
        o.insert("fieldManager".into(), manager.into());
    }
    Value::Object(o)
}

/// The namespace a request on `def` is admitted in: a Namespace's own name,
/// else the object's namespace.
pub fn admission_namespace<'a>(
    def: &crate::registry::ResourceDef,
    namespace: &'a str,
    name: &'a str,
) -> &'a str {
    if def.group.is_empty() && def.kind == "Namespace" {
        name
    } else {
        namespace
    }
}
