//! graphiti-openclaw: the plugin's whole logic, built as a WASI 0.2 component (`wasm32-wasip2`) and,
//! for tests and benchmarks, as a native library.
//!
//! The modules are plain Rust; `component` (wasm only) maps the WIT contract in `wit/` onto [`Engine`].

pub mod api;
pub mod boundary_audit;
pub mod capture;
pub mod config;
pub mod config_in_force;
pub mod decision;
pub mod delivery;
pub mod documents;
pub mod engine;
pub mod expert_install;
pub mod expert_runs;
pub mod expert_sessions;
pub mod experts;
pub mod files;
pub mod graphiti;
pub mod group_id;
pub mod locks;
pub mod mcp_session;
pub mod packs;
pub mod recall;
pub mod recall_cache;
pub mod relevance;
pub mod reports;
pub mod routing;
pub mod sorting;
pub mod spare_files;
pub mod spool;
pub mod state;
pub mod stats;
pub mod text;
pub mod time;
pub mod turns;

pub use engine::Engine;

#[cfg(target_arch = "wasm32")]
mod component;
