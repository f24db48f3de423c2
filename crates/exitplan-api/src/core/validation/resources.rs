//! Resource requirements (`ValidateContainerResourceRequirements`): resource
//! names, quantities, requests ≤ limits, hugepages and resource claims.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;

use super::quantity::Quantity;
use super::strings::validate_dns1123_label;
use crate::field::{Error, ErrorList, Path};
use crate::formats;

/// `isNegativeErrorMsg`.
pub const IS_NEGATIVE: &str = "must be greater than or equal to 0";

const STANDARD_CONTAINER: &[&str] = &["cpu", "memory", "ephemeral-storage"];
const STANDARD: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];
const INTEGER: &[&str] = &[
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

/// `IsHugePageResourceName`.
pub fn is_huge_page(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// `IsNativeResource`: unprefixed or in the `kubernetes.io` domain.
pub fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `IsExtendedResourceName`: a valid, prefixed, non-native name.
pub fn is_extended(name: &str) -> bool {
    if is_native(name) || name.starts_with("requests.") {
        return false;
    }
    formats::is_qualified_name(&format!("requests.{name}")).is_empty()
}

/// `IsOvercommitAllowed`: native and not hugepages.
pub fn is_overcommit_allowed(name: &str) -> bool {
    is_native(name) && !is_huge_page(name)
}

fn is_standard(name: &str) -> bool {
    STANDARD.contains(&name) || is_huge_page(name) || name.starts_with("requests.hugepages-")
}

/// `validateResourceName`: a qualified name; unprefixed names are standard.
pub fn validate_resource_name(name: &str, path: &Path) -> ErrorList {
    let errs: ErrorList = formats::is_qualified_name(name)
        .into_iter()
        .map(|m| Error::invalid(path, name, m))
        .collect();
    if !errs.is_empty() {
        return errs;
    }
    if !name.contains('/') && !is_standard(name) {
        return ErrorList(vec![Error::invalid(
            path,
            name,
            "must be a standard resource type or fully qualified",
        )]);
    }
    errs
}

/// `validateContainerResourceName`.
pub fn validate_container_resource_name(name: &str, path: &Path) -> ErrorList {
    let mut errs = validate_resource_name(name, path);
    if !name.contains('/') {
        if !(STANDARD_CONTAINER.contains(&name) || is_huge_page(name)) {
            errs.push(Error::invalid(
                path,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !is_native(name) && !is_extended(name) {
        errs.push(Error::invalid(
            path,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
    errs
}

/// A quantity that failed to parse; reported as upstream's decode error.
pub fn parse(q: &WireQuantity) -> Option<Quantity> {
    Quantity::parse(q.0.trim()).ok()
}

/// `ValidateResourceQuantityValue`: not negative; whole for integer resources.
pub fn validate_quantity_value(name: &str, q: &Quantity, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if q.is_negative() {
        errs.push(Error::invalid(path, q.to_string(), IS_NEGATIVE));
    }
    if (INTEGER.contains(&name) || is_extended(name)) && !q.is_integer() {
        errs.push(Error::invalid(path, q.to_string(), "must be an integer"));
    }
    errs
}

fn huge_page_size(name: &str) -> Option<Quantity> {
    Quantity::parse(name.strip_prefix("hugepages-")?).ok()
}

fn validate_huge_page_value(name: &str, q: &Quantity, path: &Path) -> ErrorList {
    let Some(size) = huge_page_size(name) else {
        return ErrorList::new();
    };
    match size.value() {
        Some(bytes) if bytes > 0 && !q.is_multiple_of(bytes) => ErrorList(vec![Error::invalid(
            path,
            q.to_string(),
            format!("{q} is not positive integer multiple of {name}"),
        )]),
        _ => ErrorList::new(),
    }
}

fn parsed(list: Option<&BTreeMap<String, WireQuantity>>) -> Vec<(&str, Option<Quantity>)> {
    list.into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), parse(v)))
        .collect()
}

/// Which resource names a requirements block accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// A container's (`validateContainerResourceName`).
    Container,
    /// The pod-level `spec.resources` (`validatePodResourceName`).
    Pod,
}

/// `SupportedPodLevelResources` as upstream lists them.
pub const POD_LEVEL_RESOURCES: &[&str] = &["cpu", "hugepages-", "memory"];

/// `IsSupportedPodLevelResource`: cpu, memory and hugepages.
pub fn is_supported_pod_level(name: &str) -> bool {
    name == "cpu" || name == "memory" || is_huge_page(name)
}

/// `validatePodResourceName`: a valid resource name the pod level supports.
pub fn validate_pod_resource_name(name: &str, path: &Path) -> ErrorList {
    let errs = validate_resource_name(name, path);
    if !errs.is_empty() {
        return errs;
    }
    if !is_supported_pod_level(name) {
        return ErrorList(vec![Error::not_supported(path, name, POD_LEVEL_RESOURCES)]);
    }
    errs
}

fn validate_name(rule: NameRule, name: &str, path: &Path) -> ErrorList {
    match rule {
        NameRule::Container => validate_container_resource_name(name, path),
        NameRule::Pod => validate_pod_resource_name(name, path),
    }
}

/// `ValidateContainerResourceRequirements`, with the pod's declared claim
/// names.
pub fn validate_resource_requirements(
    req: Option<&ResourceRequirements>,
    claim_names: &BTreeSet<String>,
    path: &Path,
) -> ErrorList {
    validate_requirements(req, NameRule::Container, claim_names, path)
}

/// `validateResourceRequirements`: names per `rule`, quantities, requests ≤
/// limits (equal for resources that cannot be overcommitted), hugepages
/// and claims.
pub fn validate_requirements(
    req: Option<&ResourceRequirements>,
    rule: NameRule,
    claim_names: &BTreeSet<String>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(req) = req else {
        return errs;
    };
    let lim_path = path.child("limits");
    let req_path = path.child("requests");
    let limits = parsed(req.limits.as_ref());
    let (mut lim_cpu_mem, mut req_cpu_mem, mut lim_huge, mut req_huge) =
        (false, false, false, false);
    for (name, q) in &limits {
        let p = lim_path.key(name);
        errs.append(validate_name(rule, name, &p));
        let Some(q) = q else { continue };
        errs.append(validate_quantity_value(name, q, &p));
        if is_huge_page(name) {
            lim_huge = true;
            errs.append(validate_huge_page_value(name, q, &p));
        }
        if *name == "cpu" || *name == "memory" {
            lim_cpu_mem = true;
        }
    }
    for (name, q) in parsed(req.requests.as_ref()) {
        let p = req_path.key(name);
        errs.append(validate_name(rule, name, &p));
        let Some(q) = q else { continue };
        errs.append(validate_quantity_value(name, &q, &p));
        match limits.iter().find(|(n, _)| *n == name) {
            Some((_, Some(limit))) => {
                if q != *limit && !is_overcommit_allowed(name) {
                    errs.push(Error::invalid(
                        &req_path,
                        q.to_string(),
                        format!("must be equal to {name} limit of {limit}"),
                    ));
                } else if q > *limit {
                    errs.push(Error::invalid(
                        &req_path,
                        q.to_string(),
                        format!("must be less than or equal to {name} limit of {limit}"),
                    ));
                }
            }
            Some((_, None)) => {}
            None if !is_overcommit_allowed(name) => errs.push(Error::required(
                &lim_path,
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
        if is_huge_page(name) {
            req_huge = true;
            errs.append(validate_huge_page_value(name, &q, &p));
        }
        if name == "cpu" || name == "memory" {
            req_cpu_mem = true;
        }
    }
    if !lim_cpu_mem && !req_cpu_mem && (req_huge || lim_huge) {
        errs.push(Error::forbidden(path, "HugePages require cpu or memory"));
    }
    errs.append(validate_claim_names(
        req,
        claim_names,
        &path.child("claims"),
    ));
    errs
}

/// `validateResourceClaimNames`: each claim (or claim request) names a pod
/// resource claim, once.
fn validate_claim_names(
    req: &ResourceRequirements,
    claim_names: &BTreeSet<String>,
    path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for (i, claim) in req.claims.iter().flatten().enumerate() {
        let p = path.index(i);
        let name = claim.name.as_str();
        if name.is_empty() {
            errs.push(Error::required(&p, ""));
            continue;
        }
        if seen.contains(name) {
            // Every request of that claim is already referenced.
            errs.push(Error::duplicate(&p, name));
        } else {
            let request = claim.request.as_deref().unwrap_or_default();
            let mut key = name.to_owned();
            if !request.is_empty() {
                errs.append(validate_dns1123_label(&p.child("request"), request));
                key = format!("{name}/{request}");
            }
            if seen.contains(&key) {
                errs.push(Error::duplicate(&p, key.as_str()));
            } else if request.is_empty() {
                // A whole claim overlaps every request of it already named.
                for k in &seen {
                    if k.split_once('/').is_some_and(|(n, _)| n == name) {
                        errs.push(Error::duplicate(&p, name));
                    }
                }
            }
            seen.insert(key);
        }
        if !claim_names.contains(name) {
            let mut e = Error::not_found(&p, name);
            e.detail = if claim_names.is_empty() {
                "must be one of the names in pod.spec.resourceClaims which is empty".into()
            } else {
                format!(
                    "must be one of the names in pod.spec.resourceClaims: {}",
                    claim_names
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            errs.push(e);
        }
    }
    errs
}

/// Every quantity of a resource list that does not parse, with its key.
pub fn unparsable(
    list: Option<&BTreeMap<String, WireQuantity>>,
) -> impl Iterator<Item = (&str, &'static str)> {
    list.into_iter()
        .flatten()
        .filter_map(|(k, v)| Quantity::parse(&v.0).err().map(|e| (k.as_str(), e)))
}
