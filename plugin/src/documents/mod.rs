//! YAML and JSON documents as users write them: nesting capped before parsing, and parse errors
//! located by line and field. Configuration and expert packages read their files through these.

pub mod common_yaml;
pub mod errors;
pub mod nesting;
