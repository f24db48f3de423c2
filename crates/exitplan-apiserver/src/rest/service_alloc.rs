//! ClusterIP and NodePort allocation for Services at the REST edge: the
//! pure allocator (`exitplan_api::core::service_alloc`) fed with the stored
//! Services, run before admission as kube-apiserver's Service REST does.
//! Writes of Services are serialized by [`State::service_writes`] so two
//! creates never pick the same address.

use exitplan_api::core::service_alloc::{AllocationError, ServiceAllocator, ServiceRanges};
use k8s_openapi::api::core::v1::Service;
use serde_json::Value;

use super::errors::{ApiError, internal, invalid};
use super::state::State;
use crate::registry::ResourceDef;

/// Whether `def` is core/v1 Services (the only allocating resource).
pub fn allocates(def: &ResourceDef) -> bool {
    def.group.is_empty() && def.plural == "services"
}

fn allocator(state: &State, def: &ResourceDef, skip: Option<&str>) -> ServiceAllocator {
    let (stored, _) = state.store.list(&def.prefix(None));
    let services: Vec<Service> = stored
        .iter()
        .filter(|s| Some(s.key.as_str()) != skip)
        .filter_map(|s| s.value().ok())
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect();
    ServiceAllocator::from_services(ServiceRanges::default(), &services)
}

fn error(e: AllocationError) -> ApiError {
    match e {
        AllocationError::Invalid(i) => invalid(&i),
        AllocationError::Internal(m) => internal(m),
    }
}

fn typed(obj: &Value) -> Option<Service> {
    serde_json::from_value(obj.clone()).ok()
}

/// Allocates the addresses of a new Service in `obj` (a body that does not
/// decode is left to admission, which reports it).
pub fn on_create(state: &State, def: &ResourceDef, obj: &mut Value) -> Result<(), ApiError> {
    let Some(mut svc) = typed(obj) else {
        return Ok(());
    };
    allocator(state, def, None)
        .allocate_service(&mut svc)
        .map_err(error)?;
    *obj = serde_json::to_value(&svc).map_err(internal)?;
    Ok(())
}

/// Keeps, allocates or releases the addresses of an updated Service.
pub fn on_update(
    state: &State,
    def: &ResourceDef,
    key: &str,
    new: &mut Value,
    old: &Value,
) -> Result<(), ApiError> {
    let (Some(mut svc), Some(old)) = (typed(new), typed(old)) else {
        return Ok(());
    };
    allocator(state, def, Some(key))
        .allocate_service_update(&mut svc, &old)
        .map_err(error)?;
    *new = serde_json::to_value(&svc).map_err(internal)?;
    Ok(())
}
