//! graphiti-openclaw: the plugin's whole logic, built as a WASI 0.2 component (`wasm32-wasip2`) and,
//! for tests and benchmarks, as a native library.
//!
//! The modules are plain Rust, grouped by concern: `memory` (recall, capture, and what users and
//! operators control of what is remembered), `routing` (intent rules, packs, composition), `experts`
//! (packages, prompts, the gate, runs), with `config` for the files they are read from, `ops` for
//! what operators read, and `platform` below them all. `engine` composes them; `component` (wasm
//! only) maps the WIT contract in `wit/` onto [`Engine`].

pub mod config;
pub mod engine;
pub mod experts;
pub mod memory;
pub mod ops;
pub mod platform;
pub mod routing;

pub use engine::Engine;

#[cfg(target_arch = "wasm32")]
mod component;
