//! The command line: parsed (`host_shim::cli_grammar`), a shim opened for it ([`open`]), the subcommand run
//! ([`run`](mod@run), [`turn`]) and its answers printed ([`output`]).

mod experts;
mod input_files;
mod moment;
mod open;
mod output;
mod run;
mod turn;

pub(crate) use host_shim::cli_grammar::Cli;
pub(crate) use run::run;
