//! Operations: what operators read and check. Reports (status, intent-test, eval, configuration
//! checks) and the audit of the public/private boundary of the configuration.

pub mod boundary_audit;
pub mod reports;
