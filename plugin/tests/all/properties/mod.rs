//! Property-based tests over the product logic (proptest): capture stripping, routing, configuration
//! parsing, Graphiti answer parsing and spool replay. Each property states what a user would notice
//! if it broke: text lost or leaked into memory, a different pack for the same turn, a panic instead
//! of an error naming the file, a turn never delivered or stored twice without cause.
//!
//! Budget: every property runs a fixed number of cases set in code (`PROPTEST_CASES` overrides it for
//! a longer exploration run). Each run draws a fresh seed and prints it; a failure prints the seed and
//! the shrunk input, and `PROPTEST_RNG_SEED=<seed>` replays the same cases. Nothing is written to the
//! source tree (failure persistence is off): a real failure found here is kept as a plain unit test.

mod answers;
mod capture;
mod config;
mod fake_graphiti;
mod planned_http;
mod routing;
mod spool;
mod support;
