//! `graphiti-standin [--port 8000] [--seed FILE] [--ingest-delay-ms N] [--legacy-node-search]`

use graphiti_standin::{Options, StandIn};
use std::io::Write;
use std::process::exit;
use std::time::Duration;

const USAGE: &str = "usage: graphiti-standin [--port 8000] [--seed FILE] [--ingest-delay-ms N] [--legacy-node-search]";

fn die(msg: &str) -> ! {
    eprintln!("graphiti-standin: {msg}\n{USAGE}");
    exit(2);
}

fn main() {
    let mut options = Options { port: 8000, ..Options::default() };
    let mut seed = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| die(&format!("{flag} needs a value")));
        match flag.as_str() {
            "--port" => options.port = value().parse().unwrap_or_else(|_| die("--port: not a port")),
            "--seed" => seed = Some(value()),
            "--ingest-delay-ms" => {
                let ms = value().parse().unwrap_or_else(|_| die("--ingest-delay-ms: not a number"));
                options.ingest_delay = Duration::from_millis(ms);
            }
            "--legacy-node-search" => options.legacy_node_search = true,
            "-h" | "--help" => return println!("{USAGE}"),
            other => die(&format!("unknown argument {other}")),
        }
    }
    let standin = StandIn::start(options).unwrap_or_else(|e| die(&format!("cannot listen: {e}")));
    if let Some(path) = seed {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| die(&format!("{path}: {e}")));
        standin.seed_json(&text).unwrap_or_else(|e| die(&format!("{path}: {e}")));
    }
    println!("graphiti-standin listening on {}", standin.url());
    let _ = std::io::stdout().flush();
    loop {
        std::thread::park(); // serve until killed
    }
}
