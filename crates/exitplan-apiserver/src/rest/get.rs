//! GET of one object (and of its `status` subresource).

use std::sync::Arc;

use axum::response::Response;
use serde_json::{Value, json};

use super::errors::{ApiError, not_found};
use super::meta::set_type;
use super::negotiate::{Output, output};
use super::respond;
use super::state::{Call, State};
use crate::discovery;
use crate::registry::ResourceDef;
use crate::storage::StoredObject;

/// The stored object `name`, or 404.
pub fn current(
    state: &State,
    def: &ResourceDef,
    namespace: Option<&str>,
    name: &str,
) -> Result<(Arc<StoredObject>, Value), ApiError> {
    let stored = state
        .store
        .get(&def.key(namespace, name))
        .ok_or_else(|| not_found(def.group, def.plural, name))?;
    let mut value = stored.value()?;
    set_type(&mut value, def);
    Ok((stored, value))
}

/// Renders one object as JSON or a one-row Table.
pub fn render(call: &Call, code: u16, object: &Value) -> Result<Response, ApiError> {
    match output(&call.headers, &call.query)? {
        Output::Json => Ok(respond::json(code, object)),
        Output::Table(include) => {
            let rv = object
                .pointer("/metadata/resourceVersion")
                .cloned()
                .unwrap_or(Value::Null);
            let table = discovery::table(
                call.def,
                std::slice::from_ref(object),
                json!({"resourceVersion": rv}),
                include,
                call.state.clock.now(),
            );
            Ok(respond::json(code, &table))
        }
    }
}

/// `GET …/<name>` and `GET …/<name>/status`.
pub async fn get(call: &Call) -> Result<Response, ApiError> {
    output(&call.headers, &call.query)?;
    let (_, object) = current(&call.state, call.def, call.ns(), call.name())?;
    render(call, 200, &object)
}
