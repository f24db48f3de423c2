//! Pod-level resources (`spec.resources`, feature `PodLevelResources`: beta
//! and on by default since 1.34, still beta in 1.35, so always validated
//! here): `validatePodResources` and `validatePodResourceConsistency`.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, PodSpec, ResourceRequirements};

use super::quantity::Quantity;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;

use super::resources::{NameRule, is_huge_page, parse, validate_requirements};
use crate::field::{Error, ErrorList, Path};

type Totals = BTreeMap<String, Quantity>;

/// Which list of a container's requirements is summed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// `resources.requests`.
    Requests,
    /// `resources.limits`.
    Limits,
}

fn quantities(c: &Container, side: Side) -> impl Iterator<Item = (&str, Quantity)> {
    c.resources
        .as_ref()
        .and_then(|r| match side {
            Side::Requests => r.requests.as_ref(),
            Side::Limits => r.limits.as_ref(),
        })
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| parse(v).map(|q| (k.as_str(), q)))
}

fn add(into: &mut Totals, name: &str, q: &Quantity) {
    let sum = match into.get(name) {
        Some(have) => have.checked_add(q).unwrap_or(*have),
        None => *q,
    };
    into.insert(name.to_owned(), sum);
}

fn add_all(into: &mut Totals, from: &Totals) {
    for (name, q) in from {
        add(into, name, q);
    }
}

fn max_all(into: &mut Totals, from: &Totals) {
    for (name, q) in from {
        if into.get(name).is_none_or(|have| q > have) {
            into.insert(name.clone(), *q);
        }
    }
}

fn totals(c: &Container, side: Side) -> Totals {
    let mut t = Totals::new();
    for (name, q) in quantities(c, side) {
        add(&mut t, name, &q);
    }
    t
}

/// `resourcehelper.AggregateContainerRequests` (or `…Limits`): the
/// regular containers' quantities plus the sidecars' (restartable init
/// containers), or the largest need of one init container running next to
/// the sidecars started before it, whichever is larger per resource.
pub fn aggregate_containers(spec: &PodSpec, side: Side) -> Totals {
    let mut reqs = Totals::new();
    for c in &spec.containers {
        add_all(&mut reqs, &totals(c, side));
    }
    let mut sidecars = Totals::new();
    let mut init_max = Totals::new();
    for c in spec.init_containers.iter().flatten() {
        let own = totals(c, side);
        let need = if c.restart_policy.as_deref() == Some("Always") {
            add_all(&mut reqs, &own);
            add_all(&mut sidecars, &own);
            sidecars.clone()
        } else {
            let mut need = own;
            add_all(&mut need, &sidecars);
            need
        };
        max_all(&mut init_max, &need);
    }
    max_all(&mut reqs, &init_max);
    reqs
}

/// `validatePodResourceConsistency`: each pod-level request covers the
/// containers' aggregate request of that resource, each pod-level
/// hugepages limit their aggregate limit, and no container limit exceeds
/// the pod's. A resource without a pod-level value is not compared (as in
/// 1.34+; 1.32's alpha compared it against zero).
fn validate_consistency(spec: &PodSpec, pod: &ResourceRequirements, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    let declared = |list: Option<&BTreeMap<String, _>>, name: &str| {
        list.and_then(|l: &BTreeMap<String, WireQuantity>| l.get(name))
            .and_then(parse)
    };
    for (name, total) in aggregate_containers(spec, Side::Requests) {
        let Some(want) = declared(pod.requests.as_ref(), &name) else {
            continue;
        };
        if total > want {
            errs.push(Error::invalid(
                &path.child("requests").key(&name),
                want.to_string(),
                format!("must be greater than or equal to aggregate container requests of {total}"),
            ));
        }
    }
    for (name, total) in aggregate_containers(spec, Side::Limits) {
        if !is_huge_page(&name) {
            continue;
        }
        let Some(limit) = declared(pod.limits.as_ref(), &name) else {
            continue;
        };
        if total > limit {
            errs.push(Error::invalid(
                &path.child("limits").key(&name),
                limit.to_string(),
                format!("must be greater than or equal to aggregate container limits of {total}"),
            ));
        }
    }
    let pod_limits = pod.limits.as_ref();
    for (i, c) in spec.containers.iter().enumerate() {
        let limits = c.resources.as_ref().and_then(|r| r.limits.as_ref());
        for (name, limit) in limits.into_iter().flatten() {
            let Some(pod_limit) = pod_limits.and_then(|l| l.get(name)).and_then(parse) else {
                continue;
            };
            let Some(limit) = parse(limit) else { continue };
            if limit > pod_limit {
                errs.push(Error::invalid(
                    &path.child("containers").index(i).key(name).child("limits"),
                    limit.to_string(),
                    format!("must be less than or equal to pod limits of {pod_limit}"),
                ));
            }
        }
    }
    errs
}

/// `validatePodResources` at `path` (`spec.resources`): no claims at pod
/// level, valid requirements with pod-level resource names, and
/// consistency with the containers.
pub fn validate_pod_resources(
    spec: &PodSpec,
    claim_names: &BTreeSet<String>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(res) = &spec.resources else {
        return errs;
    };
    if res.claims.is_some() {
        errs.push(Error::forbidden(
            &path.child("claims"),
            "claims cannot be set for Resources at pod-level",
        ));
    }
    errs.append(validate_requirements(
        Some(res),
        NameRule::Pod,
        claim_names,
        path,
    ));
    errs.append(validate_consistency(spec, res, path));
    errs
}
