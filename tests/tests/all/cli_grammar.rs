//! `graphiti-openclaw` has exactly the commands `docs/cli-grammar.json` gives it (both CLIs' and its
//! own), and the earlier names it lists as aliases resolve to the commands they name. The OpenClaw
//! package's test holds `openclaw graphiti` to the same list.

use clap::CommandFactory;
use graphiti_openclaw_tests::workspace;
use host_shim::cli_grammar::Cli;
use serde_json::Value;
use std::collections::BTreeSet;

fn grammar() -> Value {
    let path = workspace().join("docs/cli-grammar.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn names(value: &Value) -> BTreeSet<String> {
    match value {
        Value::Array(items) => items.iter().map(|v| v.as_str().unwrap().to_string()).collect(),
        Value::Object(map) => map.keys().cloned().collect(),
        other => panic!("not a list of commands: {other}"),
    }
}

/// Every visible command path of `command`, as "experts list" (clap's own `help` left out).
fn visible_paths(command: &clap::Command, prefix: &str, out: &mut BTreeSet<String>) {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        let path = format!("{prefix}{}", sub.get_name());
        visible_paths(sub, &format!("{path} "), out);
        out.insert(path);
    }
}

/// The other names the CLI takes: the paths under a hidden command, and each command's aliases.
fn alias_paths(command: &clap::Command, prefix: &str, hidden: bool, out: &mut BTreeSet<String>) {
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        let path = format!("{prefix}{}", sub.get_name());
        let hidden_here = hidden || sub.is_hide_set();
        if hidden_here && sub.get_subcommands().next().is_none() {
            out.insert(path.clone());
        }
        for alias in sub.get_all_aliases() {
            out.insert(format!("{prefix}{alias}"));
        }
        alias_paths(sub, &format!("{path} "), hidden_here, out);
    }
}

/// The command a path of names (aliases included) resolves to.
fn resolve<'a>(command: &'a clap::Command, path: &str) -> &'a clap::Command {
    path.split(' ').fold(command, |at, name| {
        at.find_subcommand(name).unwrap_or_else(|| panic!("no command {path:?}"))
    })
}

fn arg_ids(command: &clap::Command) -> Vec<String> {
    command.get_arguments().map(|a| a.get_id().to_string()).collect()
}

#[test]
fn graphiti_openclaw_has_exactly_the_commands_the_grammar_gives_it() {
    let grammar = grammar();
    let listed: BTreeSet<String> = names(&grammar["both"])
        .union(&names(&grammar["only_graphiti_openclaw"]))
        .cloned()
        .collect();
    let mut registered = BTreeSet::new();
    visible_paths(&Cli::command(), "", &mut registered);
    let missing: Vec<_> = listed.difference(&registered).collect();
    let unlisted: Vec<_> = registered.difference(&listed).collect();
    assert!(
        missing.is_empty() && unlisted.is_empty(),
        "docs/cli-grammar.json gives graphiti-openclaw {missing:?}, which it lacks; it has \
         {unlisted:?}, which the list does not give it"
    );
}

#[test]
fn each_earlier_name_is_an_alias_of_the_command_it_names() {
    let grammar = grammar();
    let aliases = grammar["aliases_graphiti_openclaw"].as_object().unwrap();
    let mut taken = BTreeSet::new();
    alias_paths(&Cli::command(), "", false, &mut taken);
    assert_eq!(taken, aliases.keys().cloned().collect::<BTreeSet<_>>());
    let cli = Cli::command();
    for (alias, target) in aliases {
        let (old, new) = (resolve(&cli, alias), resolve(&cli, target.as_str().unwrap()));
        assert_eq!(old.get_name(), new.get_name(), "{alias} is not {target}");
        assert_eq!(arg_ids(old), arg_ids(new), "{alias} takes other arguments than {target}");
    }
}

#[test]
fn a_command_the_list_does_not_give_is_seen() {
    let planted = Cli::command().subcommand(clap::Command::new("planted"));
    let mut registered = BTreeSet::new();
    visible_paths(&planted, "", &mut registered);
    assert!(registered.contains("planted"));
    let mut hidden = BTreeSet::new();
    alias_paths(&planted.subcommand(clap::Command::new("old").hide(true)), "", false, &mut hidden);
    assert!(hidden.contains("old"), "{hidden:?}");
}
