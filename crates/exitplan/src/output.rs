//! Printing results in kubectl's formats.

use serde::Serialize;

use crate::kinds::Admitted;

/// An output format (`-o`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Human-readable text.
    Text,
    /// JSON, as the API server would send it.
    Json,
    /// YAML, as kubectl prints it.
    Yaml,
}

/// Prints `value` as JSON or YAML.
pub fn print_structured<T: Serialize>(value: &T, format: Format) {
    let text = match format {
        Format::Yaml => serde_saphyr::to_string(value).unwrap_or_default(),
        _ => serde_json::to_string_pretty(value)
            .map(|s| s + "\n")
            .unwrap_or_default(),
    };
    print!("{text}");
}

/// Prints an admission result: `valid` / one error per line, or the object /
/// 422 Status for structured formats.
pub fn print_admission(admitted: &Admitted, format: Format) {
    match (admitted, format) {
        (Ok(_), Format::Text) => println!("valid"),
        (Err(invalid), Format::Text) => {
            for e in invalid.errors.iter() {
                println!("{e}");
            }
        }
        (Ok(obj), f) => print_structured(obj, f),
        (Err(invalid), f) => print_structured(&status_json(invalid), f),
    }
}

/// The 422 body with `kind`/`apiVersion` set, as the API server sends it.
fn status_json(invalid: &exitplan_api::status::InvalidError) -> serde_json::Value {
    let mut v = serde_json::to_value(invalid.to_status()).unwrap_or_default();
    if let Some(map) = v.as_object_mut() {
        map.insert("kind".into(), "Status".into());
        map.insert("apiVersion".into(), "v1".into());
    }
    v
}
