//! The native core's integration tests, as one test binary: delivery, the example configuration, the
//! expert fixtures and the openexperts package rules, and the properties (proptest).

mod delivery;
mod example_config;
mod experts;
mod experts_package;
mod properties;
