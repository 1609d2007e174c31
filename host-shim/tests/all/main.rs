//! The host shim's integration tests, as one test binary: the CLI as a user runs it, the state
//! directory's locks, the compiled-component cache's trust checks, special files, and the shim's
//! guarantees proven with the misbehaving probe guest (`probe/`).

mod cache_trust;
mod cli_dirs;
mod cli_inputs;
mod cli_locks;
mod locks_and_sending;
mod probe;
mod special_files;
mod state_lock;
mod support;
