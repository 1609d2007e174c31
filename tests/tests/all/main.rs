//! The workspace tests that run the real plugin.wasm in the host shim (or the CLI built with it), as
//! one test binary: one link of wasmtime for all of them. The fault suite (`tests/faults.rs`) runs
//! apart, with a harness of its own.

mod boundary_audit;
mod backed_off_ticks;
mod capture_sync;
mod cli_grammar;
mod component;
mod config_faults;
mod config_loads;
mod docs_commands;
mod docs_conformance;
mod expert_runs;
mod expert_runs_cli;
mod expert_runs_commands;
mod expert_runs_dry_run;
mod expert_runs_common;
mod expert_runs_faults;
mod expert_runs_policy;
mod expert_runs_privacy;
mod experts;
mod experts_approval;
mod experts_common;
mod experts_tool_search;
mod falkordb_connection;
mod graphiti;
mod https_recall;
mod memory_control;
mod memory_forget;
mod memory_forget_falkordb;
mod memory_forget_trust;
mod memory_import;
mod transcript_import;
mod recall_under_load;
mod redaction;
mod relevance;
mod routing_cases;
mod send_lock_holder;
mod sticky_turns;
mod unconfirmed_doubts;
