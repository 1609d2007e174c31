//! Expert packages, the runtime fields and the conformance fixes: what the loaded package carries
//! for the runtime (execution, delivery, learning, trigger and process fields, with the package's
//! defaults and each process's overrides), the checks on those fields, and how package text reaches
//! the prompt and the registry.

mod conformance_loading;
mod conformance_rows;
mod conformance_text;
mod runtime_checks;
mod runtime_fields;
mod support;
mod time_zones;
