//! # exitplan-apiserver
//!
//! A Kubernetes-compatible API server that real clients (kubectl, kube-rs,
//! client-python) use unchanged, durable on disk — exitplan's embedded default.
//!
//! ```text
//!  HTTP (axum) ──► authn ──► REST handlers ──► registry (per-resource rules:
//!                                  │            exitplan_api strategies, attrs)
//!                                  ▼
//!                               storage (redb, revision log, watch feed)
//! ```
//!
//! * [`clock`] — the one injected clock.
//! * [`authn`] — authentication (admin token, service account tokens) and
//!   impersonation.
//! * [`storage`] — objects, revisions, durability, watches.
//! * [`registry`] — the served resources and their admission rules.
//! * [`discovery`] — version, discovery, OpenAPI, Tables, selectors.
//! * [`rest`] — the HTTP API; [`protobuf`] — its Kubernetes protobuf
//!   transcoder (JSON is the stored form).
//! * [`server`] — [`server::Server`]: builder, router, bootstrap, serving;
//!   [`serving`] — one task per connection, with kube-apiserver's timeouts.
//! * [`kubeconfig`] — the kubeconfig `exitplan up` writes; [`tls`] — its
//!   local CA and HTTPS listener.

pub mod authn;
pub mod clock;
pub mod discovery;
pub mod kubeconfig;
pub mod protobuf;
pub mod registry;
pub mod rest;
pub mod server;
pub mod serving;
pub mod storage;
pub mod tls;
pub mod webhook;
