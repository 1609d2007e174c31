//! YAML and JSON documents as users write them: nesting capped before parsing, and parse errors
//! located by line and field. Configuration and expert packages read their files through these;
//! `experts bind` writes `bindings.yaml` back through [`yaml_writer`].

pub mod errors;
pub mod libyaml;
pub mod nesting;
pub mod yaml;
pub mod yaml_writer;
