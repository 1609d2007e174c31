//! YAML and JSON documents as users write them: nesting capped before parsing, and parse errors
//! located by line and field. Configuration and expert packages read their files through these;
//! `experts bind` writes `bindings.yaml` back with serde_norway's serializer.

pub mod errors;
pub mod libyaml;
pub mod nesting;
pub mod yaml;
