//! The namespace deleter's decisions — kube-controller-manager's
//! `pkg/controller/namespace/deletion` (`namespaced_resources_deleter.go`,
//! `status_condition_utils.go`) without its IO:
//!
//! ```text
//! DELETE ns ──► deletionTimestamp, phase Terminating
//! deleter:  every namespaced resource's content deleted ──► assess_resource
//!           ──► ContentReport ──► deletion_status (phase + conditions) ──► /status
//!           ──► report.done() ──► finalize(spec.finalizers, "kubernetes") ──► /finalize
//!           ──► no finalizer left (spec and metadata) ──► the namespace is removed
//! ```

use std::collections::BTreeMap;
use std::fmt;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Namespace, NamespaceCondition, NamespaceStatus};

use super::namespace::PHASE_TERMINATING;

/// `NamespaceDeletionDiscoveryFailure`.
pub const DISCOVERY_FAILURE: &str = "NamespaceDeletionDiscoveryFailure";
/// `NamespaceDeletionGroupVersionParsingFailure`.
pub const GROUP_VERSION_PARSING_FAILURE: &str = "NamespaceDeletionGroupVersionParsingFailure";
/// `NamespaceDeletionContentFailure`.
pub const CONTENT_FAILURE: &str = "NamespaceDeletionContentFailure";
/// `NamespaceContentRemaining`.
pub const CONTENT_REMAINING: &str = "NamespaceContentRemaining";
/// `NamespaceFinalizersRemaining`.
pub const FINALIZERS_REMAINING: &str = "NamespaceFinalizersRemaining";

/// The condition types the deleter maintains, in the order it writes them
/// (`conditionTypes`).
pub const CONDITION_TYPES: [&str; 5] = [
    DISCOVERY_FAILURE,
    GROUP_VERSION_PARSING_FAILURE,
    CONTENT_FAILURE,
    CONTENT_REMAINING,
    FINALIZERS_REMAINING,
];

/// The seconds the deleter allows finalizers on remaining content
/// (`finalizerEstimateSeconds`).
pub const FINALIZER_ESTIMATE_SECONDS: i64 = 15;

/// `(reason, message)` of a condition type when nothing failed
/// (`okReasons`, `okMessages`).
fn ok_condition(condition_type: &str) -> (&'static str, &'static str) {
    match condition_type {
        DISCOVERY_FAILURE => (
            "ResourcesDiscovered",
            "All resources successfully discovered",
        ),
        GROUP_VERSION_PARSING_FAILURE => (
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
        ),
        CONTENT_FAILURE => (
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization",
        ),
        CONTENT_REMAINING => ("ContentRemoved", "All content successfully removed"),
        FINALIZERS_REMAINING => (
            "ContentHasNoFinalizers",
            "All content-preserving finalizers finished",
        ),
        _ => ("", ""),
    }
}

/// A resource the deleter works through (`schema.GroupVersionResource`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupVersionResource {
    /// API group (`""` for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
}

impl GroupVersionResource {
    /// The resource of `group`/`version`.
    pub fn new(group: &str, version: &str, resource: &str) -> Self {
        GroupVersionResource {
            group: group.to_owned(),
            version: version.to_owned(),
            resource: resource.to_owned(),
        }
    }
}

/// Go's `GroupVersionResource.String()`: `apps/v1, Resource=deployments`.
impl fmt::Display for GroupVersionResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}, Resource={}",
            self.group, self.version, self.resource
        )
    }
}

/// What is left of one resource after its content was deleted
/// (`gvrDeletionMetadata`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceRemaining {
    /// Seconds to wait before looking again (0: no estimate).
    pub estimate_seconds: i64,
    /// Objects still listed.
    pub remaining: usize,
    /// How many of them each finalizer holds.
    pub finalizers: BTreeMap<String, usize>,
}

/// The tail of `deleteAllContentForGroupVersionResource`: given the
/// finalizers of each object of `gvr` still listed in `namespace` after the
/// delete, and the graceful-termination `estimate` (seconds), what remains
/// and the error when objects remain that nothing explains (no estimate, no
/// finalizer).
pub fn assess_resource(
    namespace: &str,
    gvr: &GroupVersionResource,
    items: &[Vec<String>],
    estimate: i64,
) -> (ResourceRemaining, Option<String>) {
    if items.is_empty() {
        return (ResourceRemaining::default(), None);
    }
    let mut finalizers: BTreeMap<String, usize> = BTreeMap::new();
    for f in items.iter().flatten() {
        *finalizers.entry(f.clone()).or_default() += 1;
    }
    let remaining = items.len();
    if estimate != 0 {
        return (
            ResourceRemaining {
                estimate_seconds: estimate,
                remaining,
                finalizers,
            },
            None,
        );
    }
    if !finalizers.is_empty() {
        return (
            ResourceRemaining {
                estimate_seconds: FINALIZER_ESTIMATE_SECONDS,
                remaining,
                finalizers,
            },
            None,
        );
    }
    (
        ResourceRemaining {
            estimate_seconds: estimate,
            remaining,
            finalizers,
        },
        Some(format!(
            "unexpected items still remain in namespace: {namespace} for gvr: {gvr}"
        )),
    )
}

/// One pass of the deleter over a namespace's content (`deleteAllContent`):
/// the failures and what remains.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContentReport {
    /// Discovery failed (the condition's message).
    pub discovery_error: Option<String>,
    /// Some group versions did not parse (the condition's message).
    pub group_version_error: Option<String>,
    /// Errors deleting or listing some resources' content.
    pub content_errors: Vec<String>,
    /// The longest wait any resource asks for (seconds).
    pub estimate_seconds: i64,
    /// Objects remaining by resource (`gvrToNumRemaining`).
    pub remaining: BTreeMap<GroupVersionResource, usize>,
    /// Objects remaining by finalizer (`finalizersToNumRemaining`).
    pub finalizers: BTreeMap<String, usize>,
}

impl ContentReport {
    /// Adds one resource's outcome ([`assess_resource`], or an error of its
    /// delete or list).
    pub fn add(
        &mut self,
        gvr: &GroupVersionResource,
        remaining: &ResourceRemaining,
        error: Option<String>,
    ) {
        if let Some(e) = error {
            self.content_errors.push(e);
        }
        self.estimate_seconds = self.estimate_seconds.max(remaining.estimate_seconds);
        if remaining.remaining > 0 {
            self.remaining.insert(gvr.clone(), remaining.remaining);
            for (f, n) in remaining.finalizers.iter().filter(|(_, n)| **n > 0) {
                *self.finalizers.entry(f.clone()).or_default() += n;
            }
        }
    }

    /// Whether the content is gone and nothing failed: the deleter removes
    /// its finalizer (`Delete` finalizes only when `deleteAllContent`
    /// returns no error and no estimate).
    pub fn done(&self) -> bool {
        self.estimate_seconds == 0
            && self.discovery_error.is_none()
            && self.group_version_error.is_none()
            && self.content_errors.is_empty()
    }

    /// The failing conditions of this pass (`ProcessDiscoverResourcesErr`,
    /// `ProcessGroupVersionErr`, `ProcessContentTotals` and the content
    /// failure `Update` adds), stamped `now`.
    pub fn conditions(&self, now: Timestamp) -> Vec<NamespaceCondition> {
        let mut out = Vec::new();
        if let Some(m) = &self.discovery_error {
            out.push(condition(DISCOVERY_FAILURE, "DiscoveryFailed", m, now));
        }
        if let Some(m) = &self.group_version_error {
            out.push(condition(
                GROUP_VERSION_PARSING_FAILURE,
                "GroupVersionParsingFailed",
                m,
                now,
            ));
        }
        if !self.remaining.is_empty() {
            let mut parts: Vec<String> = self
                .remaining
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(gvr, n)| {
                    format!("{}.{} has {n} resource instances", gvr.resource, gvr.group)
                })
                .collect();
            parts.sort();
            out.push(condition(
                CONTENT_REMAINING,
                "SomeResourcesRemain",
                &format!("Some resources are remaining: {}", parts.join(", ")),
                now,
            ));
        }
        if !self.finalizers.is_empty() {
            let mut parts: Vec<String> = self
                .finalizers
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(f, n)| format!("{f} in {n} resource instances"))
                .collect();
            parts.sort();
            out.push(condition(
                FINALIZERS_REMAINING,
                "SomeFinalizersRemain",
                &format!(
                    "Some content in the namespace has finalizers remaining: {}",
                    parts.join(", ")
                ),
                now,
            ));
        }
        if !self.content_errors.is_empty() {
            let mut msgs = self.content_errors.clone();
            msgs.sort();
            out.push(condition(
                CONTENT_FAILURE,
                "ContentDeletionFailed",
                &format!(
                    "Failed to delete all resource types, {} remaining: {}",
                    msgs.len(),
                    msgs.join(", ")
                ),
                now,
            ));
        }
        out
    }
}

fn condition(ty: &str, reason: &str, message: &str, now: Timestamp) -> NamespaceCondition {
    NamespaceCondition {
        type_: ty.to_owned(),
        status: "True".to_owned(),
        reason: Some(reason.to_owned()),
        message: Some(message.to_owned()),
        last_transition_time: Some(crate::time::mtime(now)),
    }
}

/// `newSuccessfulCondition`.
pub fn successful_condition(condition_type: &str, now: Timestamp) -> NamespaceCondition {
    let (reason, message) = ok_condition(condition_type);
    NamespaceCondition {
        type_: condition_type.to_owned(),
        status: "False".to_owned(),
        reason: Some(reason.to_owned()),
        message: Some(message.to_owned()),
        last_transition_time: Some(crate::time::mtime(now)),
    }
}

/// `updateConditions`: every deleter condition type set from `new` (its
/// success variant when `new` has none); other conditions and the order of
/// existing ones kept; a changed status moves `lastTransitionTime` to
/// `now`. Returns whether anything changed.
pub fn update_conditions(
    status: &mut NamespaceStatus,
    new: &[NamespaceCondition],
    now: Timestamp,
) -> bool {
    let mut changed = false;
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    for ty in CONDITION_TYPES {
        let wanted = new
            .iter()
            .find(|c| c.type_ == ty)
            .cloned()
            .unwrap_or_else(|| successful_condition(ty, now));
        match conditions.iter_mut().find(|c| c.type_ == ty) {
            None => {
                conditions.push(wanted);
                changed = true;
            }
            Some(old)
                if old.status != wanted.status
                    || old.message != wanted.message
                    || old.reason != wanted.reason =>
            {
                if old.status != wanted.status {
                    old.last_transition_time = Some(crate::time::mtime(now));
                }
                old.status = wanted.status;
                old.reason = wanted.reason;
                old.message = wanted.message;
                changed = true;
            }
            Some(_) => {}
        }
    }
    changed
}

/// The status the deleter writes after a pass: phase `Terminating`
/// (`updateNamespaceStatusFunc`) and the conditions of `report`; `None`
/// when nothing changes.
pub fn deletion_status(
    status: Option<&NamespaceStatus>,
    report: &ContentReport,
    now: Timestamp,
) -> Option<NamespaceStatus> {
    let mut next = status.cloned().unwrap_or_default();
    let mut changed = false;
    if next.phase.as_deref() != Some(PHASE_TERMINATING) {
        next.phase = Some(PHASE_TERMINATING.to_owned());
        changed = true;
    }
    changed |= update_conditions(&mut next, &report.conditions(now), now);
    changed.then_some(next)
}

/// `finalized`: no `spec.finalizers` left.
pub fn finalized(ns: &Namespace) -> bool {
    spec_finalizers(ns).is_empty()
}

/// The namespace's `spec.finalizers`.
pub fn spec_finalizers(ns: &Namespace) -> &[String] {
    ns.spec
        .as_ref()
        .and_then(|s| s.finalizers.as_deref())
        .unwrap_or_default()
}

/// Whether the deleter has work on `ns`: it is being deleted and not yet
/// finalized (`Delete` returns early otherwise).
pub fn needs_deletion(ns: &Namespace) -> bool {
    ns.metadata.deletion_timestamp.is_some() && !finalized(ns)
}

/// `finalizeNamespace`: the finalizers without `token`, sorted and
/// deduplicated (a set's `List()`).
pub fn finalize(finalizers: &[String], token: &str) -> Vec<String> {
    let mut out: Vec<String> = finalizers.iter().filter(|f| *f != token).cloned().collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::NamespaceSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn now() -> Timestamp {
        "2026-01-01T00:00:00Z".parse().expect("time")
    }

    fn later() -> Timestamp {
        "2026-01-01T00:01:00Z".parse().expect("time")
    }

    fn bare(ty: &str, status: &str) -> NamespaceCondition {
        NamespaceCondition {
            type_: ty.to_owned(),
            status: status.to_owned(),
            ..NamespaceCondition::default()
        }
    }

    fn failing(ty: &str, reason: &str, message: &str) -> NamespaceCondition {
        NamespaceCondition {
            type_: ty.to_owned(),
            status: "True".to_owned(),
            reason: Some(reason.to_owned()),
            message: Some(message.to_owned()),
            last_transition_time: None,
        }
    }

    fn ok(ty: &str) -> NamespaceCondition {
        successful_condition(ty, now())
    }

    /// `(type, status, reason, message)`: transition times compared apart.
    fn shape(c: &[NamespaceCondition]) -> Vec<(String, String, Option<String>, Option<String>)> {
        c.iter()
            .map(|c| {
                (
                    c.type_.clone(),
                    c.status.clone(),
                    c.reason.clone(),
                    c.message.clone(),
                )
            })
            .collect()
    }

    /// `(name, new conditions, starting conditions, expected conditions)`.
    type ConditionsCase = (
        &'static str,
        Vec<NamespaceCondition>,
        Vec<NamespaceCondition>,
        Vec<NamespaceCondition>,
    );

    /// `(name, remaining by resource, remaining by finalizer, conditions)`.
    type TotalsCase = (
        &'static str,
        Vec<(GroupVersionResource, usize)>,
        Vec<(&'static str, usize)>,
        Vec<NamespaceCondition>,
    );

    /// Upstream's `TestUpdateConditions`.
    #[test]
    fn update_conditions_table() {
        let gv_failure = failing(GROUP_VERSION_PARSING_FAILURE, "foo", "bar");
        let cases: Vec<ConditionsCase> = vec![
            (
                "leave unknown",
                vec![],
                vec![bare("unknown", "True")],
                vec![
                    bare("unknown", "True"),
                    ok(DISCOVERY_FAILURE),
                    ok(GROUP_VERSION_PARSING_FAILURE),
                    ok(CONTENT_FAILURE),
                    ok(CONTENT_REMAINING),
                    ok(FINALIZERS_REMAINING),
                ],
            ),
            (
                "replace with success",
                vec![],
                vec![bare(DISCOVERY_FAILURE, "True")],
                vec![
                    ok(DISCOVERY_FAILURE),
                    ok(GROUP_VERSION_PARSING_FAILURE),
                    ok(CONTENT_FAILURE),
                    ok(CONTENT_REMAINING),
                    ok(FINALIZERS_REMAINING),
                ],
            ),
            (
                "leave different order",
                vec![],
                vec![
                    bare(GROUP_VERSION_PARSING_FAILURE, "True"),
                    bare(DISCOVERY_FAILURE, "True"),
                ],
                vec![
                    ok(GROUP_VERSION_PARSING_FAILURE),
                    ok(DISCOVERY_FAILURE),
                    ok(CONTENT_FAILURE),
                    ok(CONTENT_REMAINING),
                    ok(FINALIZERS_REMAINING),
                ],
            ),
            (
                "overwrite with failure",
                vec![gv_failure.clone()],
                vec![
                    bare(GROUP_VERSION_PARSING_FAILURE, "False"),
                    bare(DISCOVERY_FAILURE, "True"),
                ],
                vec![
                    gv_failure.clone(),
                    ok(DISCOVERY_FAILURE),
                    ok(CONTENT_FAILURE),
                    ok(CONTENT_REMAINING),
                    ok(FINALIZERS_REMAINING),
                ],
            ),
            (
                "write new failure",
                vec![gv_failure.clone()],
                vec![bare(DISCOVERY_FAILURE, "True")],
                vec![
                    ok(DISCOVERY_FAILURE),
                    gv_failure,
                    ok(CONTENT_FAILURE),
                    ok(CONTENT_REMAINING),
                    ok(FINALIZERS_REMAINING),
                ],
            ),
        ];
        for (name, new, starting, expected) in cases {
            let mut status = NamespaceStatus {
                conditions: Some(starting),
                ..NamespaceStatus::default()
            };
            assert!(update_conditions(&mut status, &new, now()), "{name}");
            assert_eq!(
                shape(status.conditions.as_deref().unwrap_or_default()),
                shape(&expected),
                "{name}"
            );
        }
    }

    #[test]
    fn update_conditions_moves_transition_time_only_on_status_change() {
        let mut status = NamespaceStatus::default();
        let remaining = vec![condition(
            CONTENT_REMAINING,
            "SomeResourcesRemain",
            "a",
            now(),
        )];
        assert!(update_conditions(&mut status, &remaining, now()));
        assert!(
            !update_conditions(&mut status, &remaining, later()),
            "same conditions: no change"
        );
        let other = vec![condition(
            CONTENT_REMAINING,
            "SomeResourcesRemain",
            "b",
            later(),
        )];
        assert!(update_conditions(&mut status, &other, later()));
        let find = |s: &NamespaceStatus, ty: &str| {
            s.conditions
                .iter()
                .flatten()
                .find(|c| c.type_ == ty)
                .cloned()
                .expect("condition")
        };
        assert_eq!(
            find(&status, CONTENT_REMAINING).last_transition_time,
            Some(crate::time::mtime(now())),
            "message changed, status did not"
        );
        assert!(update_conditions(&mut status, &[], later()));
        let c = find(&status, CONTENT_REMAINING);
        assert_eq!(c.status, "False");
        assert_eq!(c.last_transition_time, Some(crate::time::mtime(later())));
    }

    fn gvr(group: &str, resource: &str) -> GroupVersionResource {
        GroupVersionResource::new(group, "v1", resource)
    }

    /// Upstream's `TestProcessContentTotals`.
    #[test]
    fn content_totals_table() {
        let cases: Vec<TotalsCase> = vec![
            ("nothing", vec![], vec![], vec![]),
            (
                "just remaining",
                vec![
                    (gvr("apps.k8s.io", "daemonsets"), 5),
                    (gvr("apps.k8s.io", "deployments"), 5),
                ],
                vec![],
                vec![failing(
                    CONTENT_REMAINING,
                    "SomeResourcesRemain",
                    "Some resources are remaining: daemonsets.apps.k8s.io has 5 resource instances, deployments.apps.k8s.io has 5 resource instances",
                )],
            ),
            (
                "just finalizers",
                vec![],
                vec![("service-catalog", 6), ("kubedb", 5)],
                vec![failing(
                    FINALIZERS_REMAINING,
                    "SomeFinalizersRemain",
                    "Some content in the namespace has finalizers remaining: kubedb in 5 resource instances, service-catalog in 6 resource instances",
                )],
            ),
            (
                "both",
                vec![
                    (gvr("apps.k8s.io", "daemonsets"), 5),
                    (gvr("apps.k8s.io", "deployments"), 5),
                ],
                vec![("service-catalog", 6), ("kubedb", 5)],
                vec![
                    failing(
                        CONTENT_REMAINING,
                        "SomeResourcesRemain",
                        "Some resources are remaining: daemonsets.apps.k8s.io has 5 resource instances, deployments.apps.k8s.io has 5 resource instances",
                    ),
                    failing(
                        FINALIZERS_REMAINING,
                        "SomeFinalizersRemain",
                        "Some content in the namespace has finalizers remaining: kubedb in 5 resource instances, service-catalog in 6 resource instances",
                    ),
                ],
            ),
        ];
        for (name, remaining, finalizers, expected) in cases {
            let report = ContentReport {
                remaining: remaining.into_iter().collect(),
                finalizers: finalizers
                    .into_iter()
                    .map(|(f, n)| (f.to_owned(), n))
                    .collect(),
                ..ContentReport::default()
            };
            assert_eq!(shape(&report.conditions(now())), shape(&expected), "{name}");
        }
    }

    #[test]
    fn assess_resource_cases() {
        let pods = gvr("", "pods");
        let (r, e) = assess_resource("ns", &pods, &[], 0);
        assert_eq!((r, e), (ResourceRemaining::default(), None), "all gone");

        let (r, e) = assess_resource("ns", &pods, &[vec!["example.com/f".to_owned()], vec![]], 0);
        assert_eq!(e, None);
        assert_eq!(r.remaining, 2);
        assert_eq!(r.estimate_seconds, FINALIZER_ESTIMATE_SECONDS);
        assert_eq!(r.finalizers.get("example.com/f"), Some(&1));

        let (r, e) = assess_resource("ns", &pods, &[vec![]], 30);
        assert_eq!(
            (r.estimate_seconds, r.remaining, e),
            (30, 1, None),
            "graceful"
        );

        let (r, e) = assess_resource("ns", &pods, &[vec![]], 0);
        assert_eq!(r.remaining, 1);
        assert_eq!(
            e.as_deref(),
            Some("unexpected items still remain in namespace: ns for gvr: /v1, Resource=pods")
        );
    }

    #[test]
    fn report_of_a_pod_held_by_a_finalizer() {
        let pods = gvr("", "pods");
        let mut report = ContentReport::default();
        let (r, e) = assess_resource("ns", &pods, &[vec!["example.com/f".to_owned()]], 0);
        report.add(&pods, &r, e);
        report.add(&gvr("", "configmaps"), &ResourceRemaining::default(), None);
        assert!(!report.done());
        let status = deletion_status(None, &report, now()).expect("changed");
        assert_eq!(status.phase.as_deref(), Some("Terminating"));
        assert_eq!(
            shape(status.conditions.as_deref().unwrap_or_default()),
            shape(&[
                ok(DISCOVERY_FAILURE),
                ok(GROUP_VERSION_PARSING_FAILURE),
                ok(CONTENT_FAILURE),
                failing(
                    CONTENT_REMAINING,
                    "SomeResourcesRemain",
                    "Some resources are remaining: pods. has 1 resource instances"
                ),
                failing(
                    FINALIZERS_REMAINING,
                    "SomeFinalizersRemain",
                    "Some content in the namespace has finalizers remaining: example.com/f in 1 resource instances"
                ),
            ])
        );
        assert_eq!(deletion_status(Some(&status), &report, later()), None);
    }

    #[test]
    fn content_errors_make_one_condition() {
        let report = ContentReport {
            content_errors: vec!["b failed".into(), "a failed".into()],
            ..ContentReport::default()
        };
        assert!(!report.done());
        assert_eq!(
            shape(&report.conditions(now())),
            shape(&[failing(
                CONTENT_FAILURE,
                "ContentDeletionFailed",
                "Failed to delete all resource types, 2 remaining: a failed, b failed"
            )])
        );
    }

    fn namespace(deleting: bool, finalizers: &[&str]) -> Namespace {
        Namespace {
            metadata: ObjectMeta {
                name: Some("test".into()),
                deletion_timestamp: deleting.then(|| crate::time::mtime(now())),
                ..ObjectMeta::default()
            },
            spec: Some(NamespaceSpec {
                finalizers: Some(finalizers.iter().map(|f| (*f).to_owned()).collect()),
            }),
            ..Namespace::default()
        }
    }

    /// Upstream's `TestFinalized`, `TestFinalizeNamespaceFunc`, and the
    /// scenarios of `testSyncNamespaceThatIsTerminating` /
    /// `TestSyncNamespaceThatIsActive`: which namespaces the deleter works on.
    #[test]
    fn finalize_and_scenarios() {
        assert!(!finalized(&namespace(true, &["a", "b"])));
        assert!(finalized(&namespace(true, &[])));
        assert_eq!(
            finalize(&["kubernetes".into(), "other".into()], "kubernetes"),
            vec!["other"]
        );
        assert_eq!(
            finalize(
                &["z".into(), "kubernetes".into(), "a".into(), "z".into()],
                "kubernetes"
            ),
            vec!["a", "z"]
        );
        let cases = [
            ("pending-finalize", namespace(true, &["kubernetes"]), true),
            ("complete-finalize", namespace(true, &[]), false),
            ("active", namespace(false, &["kubernetes"]), false),
            (
                "foreign finalizer only",
                namespace(true, &["example.com/x"]),
                true,
            ),
        ];
        for (name, ns, wanted) in cases {
            assert_eq!(needs_deletion(&ns), wanted, "{name}");
        }
        // `groupVersionResourceErr-finalize`: a discovery error is reported
        // and keeps the finalizer.
        let report = ContentReport {
            discovery_error: Some("test error".into()),
            ..ContentReport::default()
        };
        assert!(!report.done());
        let status = deletion_status(None, &report, now()).expect("changed");
        let discovery = status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == DISCOVERY_FAILURE)
            .expect("condition");
        assert_eq!(
            (
                discovery.status.as_str(),
                discovery.reason.as_deref(),
                discovery.message.as_deref()
            ),
            ("True", Some("DiscoveryFailed"), Some("test error"))
        );
        assert!(ContentReport::default().done());
    }
}
