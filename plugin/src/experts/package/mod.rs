//! An expert package as loaded (spec §2–§11) and phase 1 of validation: the manifest, every component
//! file, frontmatter, the per-file rules, and then cross-references and learnings (`validate`).
//!
//! The way through: `load` reads the manifest (`files`, `formats`), checks it (`manifest`, `triggers`,
//! `runtime`, `policy_settings`, each value through `values`), reads the components (`components`,
//! `frontmatter`, `process`, `tool_file`), runs `validate`, and builds the `model`'s [`Package`].

mod components;
mod files;
mod formats;
mod frontmatter;
mod load;
mod manifest;
mod model;
mod policy_settings;
mod process;
mod runtime;
mod tool_file;
mod triggers;
mod unloaded;
mod validate;
mod values;

pub use files::{ReadError, clean_relative, read_text};
pub use load::{PackageLoad, load_package, load_package_checking_zones};
pub use manifest::{is_name_char, is_safe_name};
pub use model::{
    Backoff, Concurrency, Delivery, DeliveryFormat, Document, Execution, Function, Knowledge,
    KnowledgeKind, Learning, LoadLimits, MANIFEST_FILE, OnFailure, Operation, Package, Process,
    Retry, SessionMode, SlaBreach, StateFile, StateScope, Tool, Trigger, ZoneCheck,
    split_operation,
};
pub use values::{looks_like_time_zone, parse_payload_path};

#[cfg(test)]
mod tests;
