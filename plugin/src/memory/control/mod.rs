//! Memory control: what a chat's user and the operator decide about what is remembered. Whether a
//! chat is remembered at all (the chats the settings keep out, `skip.channels`, `skip.chat_types`,
//! `skip.chats`: neither recalled nor captured; the chats whose user paused memory, `pause.rs` and
//! `paused.rs`), what is remembered for one (`memories/`, `chats.rs`), and taking it back:
//! forgetting (`forget/`: proposed, confirmed, followed up) and correcting (`correct.rs`).
//!
//! The engine lends a [`Context`] for each operation (the settings, the state directory, the
//! memory state, HTTP, locks, and its turn records through [`TurnRecords`]) and runs a command
//! with [`run`]; an operation that fails says why as a [`ControlError`], whose kind decides the
//! exit code.

mod chats;
mod command;
mod context;
mod correct;
mod error;
pub mod forget;
mod memories;
mod pause;
pub mod paused;
mod status;

pub use command::{Ran, run};
pub use context::{Captured, Context, RecentTurn, RecordedSession, TurnRecords, group};
pub use correct::Correction;
pub use error::ControlError;
pub use forget::follow_up_forgets;
pub use pause::capture_paused;
pub use status::status_line;
