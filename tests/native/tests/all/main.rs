//! The workspace tests that need no component, as one test binary: the routing case tables run
//! natively, the import graph of `plugin/src`, and the checks that read sources and documentation.

mod comments;
mod docs;
mod docs_truths;
mod error_branches;
mod fast_tier;
mod lint_wrapper;
mod module_graph;
mod routing_cases;
