//! `POST pods/<name>/eviction`: drives the pure state machine
//! `exitplan_api::policy::eviction_subresource` against the store — pod and
//! PDB reads, the PDB status write (`disruptionsAllowed` spent), the
//! `DisruptionTarget` pod condition and the delete — and answers with its
//! `Status` (201, 429 with `Retry-After`, 500 for several PDBs, …).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use exitplan_api::policy::eviction_subresource::{
    self as machine, Action, Answer, EvictionRequest, Outcome, Step,
};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::delete::delete_object;
use super::errors::{ApiError, bad_request, internal, status_json};
use super::meta::{field_manager, meta_mut};
use super::state::{Call, State};
use super::update::{Update, update_object};
use crate::registry::{ResourceDef, find};

fn typed<T: DeserializeOwned>(value: Value) -> Result<T, ApiError> {
    serde_json::from_value(value).map_err(internal)
}

fn defs() -> Result<(&'static ResourceDef, &'static ResourceDef), ApiError> {
    let pods = find("", "v1", "pods").ok_or_else(|| internal("pods are not served"))?;
    let pdbs = find("policy", "v1", "poddisruptionbudgets")
        .ok_or_else(|| internal("poddisruptionbudgets are not served"))?;
    Ok((pods, pdbs))
}

fn failed(e: ApiError) -> Outcome {
    let status = *e.status;
    match status.reason.as_deref() {
        Some("Conflict") => Outcome::Conflict(status),
        Some("NotFound") => Outcome::NotFound(status),
        _ => Outcome::Failed(status),
    }
}

fn read<T: DeserializeOwned>(
    state: &State,
    def: &ResourceDef,
    ns: &str,
    name: &str,
) -> Result<T, ApiError> {
    let (_, value) = super::get::current(state, def, Some(ns), name)?;
    typed(value)
}

async fn write_status<T: serde::Serialize + DeserializeOwned>(
    state: &State,
    def: &ResourceDef,
    object: &T,
    expected_rv: &str,
    manager: &str,
) -> Result<T, ApiError> {
    let mut new = serde_json::to_value(object).map_err(internal)?;
    let ns = super::meta::meta_str(&new, "namespace")
        .unwrap_or_default()
        .to_owned();
    let name = super::meta::meta_str(&new, "name")
        .unwrap_or_default()
        .to_owned();
    if let Some(meta) = meta_mut(&mut new) {
        meta.insert("resourceVersion".into(), expected_rv.into());
    }
    let current = state
        .store
        .get(&def.key(Some(&ns), &name))
        .ok_or_else(|| super::errors::not_found(def.group, def.plural, &name))?;
    let updated = update_object(
        state,
        Update {
            def,
            current,
            old: None,
            new,
            subresource: Some("status"),
            manager,
            dry_run: false,
            record: true,
            caller: None,
        },
    )
    .await?;
    typed(updated.into_object(def)?)
}

async fn perform(state: &State, action: &Action, manager: &str) -> Result<Outcome, ApiError> {
    let (pods, pdbs) = defs()?;
    Ok(match action {
        Action::GetPod { namespace, name } => match read::<Pod>(state, pods, namespace, name) {
            Ok(p) => Outcome::Pod(Box::new(p)),
            Err(e) => failed(e),
        },
        Action::GetPdb { namespace, name } => {
            match read::<PodDisruptionBudget>(state, pdbs, namespace, name) {
                Ok(p) => Outcome::Pdb(Box::new(p)),
                Err(e) => failed(e),
            }
        }
        Action::UpdatePdbStatus {
            pdb,
            expected_resource_version,
        } => match write_status(
            state,
            pdbs,
            pdb.as_ref(),
            expected_resource_version,
            manager,
        )
        .await
        {
            Ok(p) => Outcome::Pdb(Box::new(p)),
            Err(e) => failed(e),
        },
        Action::UpdatePodStatus {
            pod,
            expected_resource_version,
        } => match write_status(
            state,
            pods,
            pod.as_ref(),
            expected_resource_version,
            manager,
        )
        .await
        {
            Ok(p) => Outcome::Pod(Box::new(p)),
            Err(e) => failed(e),
        },
        Action::DeletePod {
            namespace,
            name,
            options,
        } => match delete_object(state, pods, Some(namespace), name, options).await {
            Ok(_) => Outcome::Deleted,
            Err(e) => failed(e),
        },
    })
}

fn answer(a: Answer) -> Response {
    let code = StatusCode::from_u16(a.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = serde_json::to_vec(&status_json(&a.status)).unwrap_or_default();
    let mut resp = (code, body).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(s) = a.retry_after_seconds
        && let Ok(v) = HeaderValue::from_str(&s.to_string())
    {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
    resp
}

/// `POST pods/<name>/eviction`.
pub async fn evict(call: &Call) -> Result<Response, ApiError> {
    // A POST to a subresource goes through upstream's create handler, which
    // validates its `CreateOptions` before reading the body.
    call.query.validate_write_options("CreateOptions")?;
    let (pods, pdbs) = defs()?;
    let mut body: Value = serde_json::from_slice(&call.body)
        .map_err(|e| bad_request(format!("couldn't get version/kind; json parse error: {e}")))?;
    let caller = crate::webhook::caller(call);
    super::binding::admit_subresource_create(
        call,
        crate::webhook::Gvn::new("policy", "v1", "Eviction"),
        "eviction",
        &mut body,
        &caller,
    )
    .await?;
    let eviction = machine::options::decode_body(body).map_err(|e| bad_request(e.to_string()))?;
    let namespace = call.namespace.clone().unwrap_or_default();
    let request = EvictionRequest {
        namespace: namespace.clone(),
        url_name: call.name().to_owned(),
        eviction,
        dry_run: call.query.all("dryRun"),
    };
    let state = &call.state;
    let pod: Option<Pod> = match read::<Pod>(state, pods, &namespace, call.name()) {
        Ok(p) => Some(p),
        Err(e) if e.code() == 404 => None,
        Err(e) => return Err(e),
    };
    let (items, _) = state.store.list(&pdbs.prefix(Some(&namespace)));
    let budgets = items
        .iter()
        .map(|o| {
            o.value()
                .map_err(ApiError::from)
                .and_then(typed::<PodDisruptionBudget>)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let manager = field_manager(&call.query, &call.headers);
    let mut step = machine::begin(&request, pod.as_ref(), &budgets, state.clock.now());
    loop {
        match step {
            Step::Done(a) => {
                tracing::info!(namespace = %namespace, pod = call.name(), code = a.code, "eviction answered");
                return Ok(super::fieldvalidation::warn(answer(a), &caller.warnings()));
            }
            Step::Perform(pending) => {
                if let Some(delay) = pending.delay()
                    && let Ok(d) = std::time::Duration::try_from(delay)
                {
                    tokio::time::sleep(d).await;
                }
                let outcome = perform(state, pending.action(), &manager).await?;
                step = pending.resume(outcome, state.clock.now());
            }
        }
    }
}
