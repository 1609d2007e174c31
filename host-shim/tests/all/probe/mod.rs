//! The shim's guarantees, proven with the misbehaving probe guest (`tests/probe-guest`).
//! These tests build nothing: they need the probe's wasm, built with
//! `cargo build -p probe-guest --target wasm32-wasip2 --profile component`.

mod harness;

mod cache;
mod cli;
mod database;
mod files;
mod http;
mod limits;
mod logs;
