//! # exitplan-runtime
//!
//! The controllers of exitplan as kube-rs clients: the same code runs against
//! the embedded API server (in-process, under tokio's paused clock in tests and
//! `exitplan simulate`) and against any real Kubernetes API server.
//!
//! ```text
//!   watch (kube-runtime watcher) ─► informer cache + indexes ─► handlers ─► work queue
//!                                                                            │
//!        API writes ◄── apply plan ◄── exitplan-control decision(obj, related, now) ◄┘
//! ```
//!
//! * [`queue`] — work queues: de-duplicated keys, delayed and rate-limited adds.
//! * [`informer`] — watch-fed caches with indexes and old/new change events.
//! * [`keyed_lock`] — async mutexes per key.
//! * [`context`] — the client, the clock and the shared informers.
//! * [`identity`] — each component's ServiceAccount and least-privilege role.
//! * [`runtime`] — composing components into a running system.
//! * [`controllers`] — evictionrequest-controller, imperative evictor,
//!   disruption controller, garbage collector, Job controller.
//! * [`cluster`] — the simulated scheduler and nodes.
//! * [`metrics`] — the controllers' Prometheus metrics (§9).

pub mod cluster;
pub mod context;
pub mod controllers;
pub mod identity;
pub mod informer;
pub mod keyed_lock;
pub mod leader;
pub mod metrics;
pub mod queue;
pub mod runtime;
