//! The bottom layer, used by every concern and using none: the WIT records as plain Rust (`api`),
//! documents (YAML and JSON with their caps), files and locks in the state directory, text, time,
//! what looks private or secret in text (`sensitive`) and the one shared sort.

pub mod api;
pub mod documents;
pub mod files;
pub mod locks;
pub mod sensitive;
pub mod sorting;
pub mod spare_files;
pub mod text;
pub mod time;
