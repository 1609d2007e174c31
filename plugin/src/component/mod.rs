//! WIT glue: maps the `graphiti:openclaw` exports onto [`crate::Engine`] and its types onto the WIT records,
//! one module per exported interface. No decisions here.

mod bindings;
mod commands;
mod context;
mod expert_runs;
mod hooks;
mod instance;

/// The component: its three exported interfaces are implemented in `hooks`, `commands` and
/// `expert_runs`.
struct Component;

bindings::export!(Component with_types_in bindings);
