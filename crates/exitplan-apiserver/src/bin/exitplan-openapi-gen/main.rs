//! Regenerates `src/discovery/openapi/definitions.json`: the OpenAPI schemas
//! of every served kind, from k8s-openapi's `schemars` implementations, with
//! the list and map merge strategies k8s-openapi encodes (`DeepMerge`)
//! written back as `x-kubernetes-*` extensions.
//!
//! ```text
//! cargo run -p exitplan-apiserver --features openapi-gen --bin exitplan-openapi-gen \
//!     > crates/exitplan-apiserver/src/discovery/openapi/definitions.json
//! ```
//!
//! The feature compiles k8s-openapi's schemas (minutes of build time), so
//! the server itself embeds the generated file instead.

mod probe;

use std::io::Write as _;

use k8s_openapi::api::{batch, coordination, core, events, lifecycle, policy};
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::schemars::generate::SchemaSettings;
use serde_json::{Value, json};

use probe::{Root, merge_as};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut generator = SchemaSettings::openapi3().into_generator();
    macro_rules! schemas {
        ($($t:ty),* $(,)?) => { $( generator.subschema_for::<$t>(); )* };
    }
    schemas!(
        core::v1::Pod,
        core::v1::Node,
        core::v1::Namespace,
        core::v1::Event,
        core::v1::Binding,
        events::v1::Event,
        batch::v1::Job,
        policy::v1::PodDisruptionBudget,
        policy::v1::Eviction,
        coordination::v1::Lease,
        lifecycle::v1alpha1::EvictionRequest,
        lifecycle::v1alpha1::Eviction,
        meta::ListMeta,
        meta::DeleteOptions,
        meta::Status,
        meta::Patch,
        meta::WatchEvent<()>,
    );
    let mut definitions: serde_json::Map<String, Value> = generator.take_definitions(true);

    let roots: &[Root] = &[
        ("io.k8s.api.core.v1.Pod", merge_as::<core::v1::Pod>),
        ("io.k8s.api.core.v1.Node", merge_as::<core::v1::Node>),
        (
            "io.k8s.api.core.v1.Namespace",
            merge_as::<core::v1::Namespace>,
        ),
        ("io.k8s.api.core.v1.Event", merge_as::<core::v1::Event>),
        ("io.k8s.api.events.v1.Event", merge_as::<events::v1::Event>),
        ("io.k8s.api.batch.v1.Job", merge_as::<batch::v1::Job>),
        (
            "io.k8s.api.policy.v1.PodDisruptionBudget",
            merge_as::<policy::v1::PodDisruptionBudget>,
        ),
        (
            "io.k8s.api.coordination.v1.Lease",
            merge_as::<coordination::v1::Lease>,
        ),
        (
            "io.k8s.api.lifecycle.v1alpha1.EvictionRequest",
            merge_as::<lifecycle::v1alpha1::EvictionRequest>,
        ),
        (
            "io.k8s.api.lifecycle.v1alpha1.Eviction",
            merge_as::<lifecycle::v1alpha1::Eviction>,
        ),
    ];
    let report = probe::annotate(&mut definitions, roots);
    for line in report {
        eprintln!("{line}");
    }

    let doc = json!({
        "source": "k8s-openapi 0.29 (feature v1_37) schemars schemas; list/map strategies from its DeepMerge impls",
        "definitions": definitions,
    });
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &doc)?;
    writeln!(out)?;
    Ok(())
}
