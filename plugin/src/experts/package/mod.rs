//! An expert package as loaded (spec §2–§11) and phase 1 of validation: the manifest, every component
//! file, frontmatter, the per-file rules, and then cross-references and learnings (`validate`).
//!
//! The way through: `load` reads the manifest (`files`, `formats`), checks it (`manifest`,
//! `settings`), reads the components (`components`, `frontmatter`), runs `validate`, and builds the
//! `model`'s [`Package`].

mod components;
mod files;
mod formats;
mod frontmatter;
mod load;
mod manifest;
mod model;
mod settings;
mod validate;

pub use files::{ReadError, clean_relative, read_text};
pub use load::{PackageLoad, load_package};
pub use manifest::is_safe_name;
pub use model::{
    Concurrency, Document, Function, Knowledge, KnowledgeKind, LoadLimits, MANIFEST_FILE,
    Operation, Package, Process, StateFile, StateScope, Tool, Trigger, split_operation,
};

#[cfg(test)]
mod tests;
