//! The command line: parsed ([`args`]), a shim opened for it ([`open`]), the subcommand run
//! ([`run`](mod@run), [`turn`]) and its answers printed ([`output`]).

mod args;
mod experts;
mod input_files;
mod moment;
mod open;
mod output;
mod run;
mod turn;

pub(crate) use args::Cli;
pub(crate) use run::run;
