//! `graphiti-standin [flags]`: the Graphiti stand-in on 127.0.0.1 (see `--help`).

use graphiti_standin::{Behaviour, BusySearch, EpisodeLookups, GraphitiCore, Options, StandIn, parse_fault_flag};
use std::io::Write;
use std::process::exit;
use std::time::Duration;

const USAGE: &str = "usage: graphiti-standin [flags]
  --port N                  port on 127.0.0.1 (default 8000; 0 picks a free one)
  --seed FILE               nodes and facts to serve (JSON, see seed/demo.json)
  --legacy-node-search      an MCP server before v1.0.0 (search_memory_nodes)
  --ingest-delay-ms N       an episode is visible no sooner than N ms after it was accepted
  --ingest-ms N             ingesting one episode takes N ms, one at a time per queue
                            (MCP: one queue per group; REST: one queue)
  --latency-ms N            every answer N ms later
  --accept-ms-per-queued N  POST /messages answers N ms later per episode queued (stored at once)
  --accept-max-ms N         at most this much later
  --slow-add-memory         MCP add_memory is slowed the same way
  --episodes-as-facts       every ingested episode is also a fact of its group (its whole text)
  --busy-search-ms MIN..MAX searches while episodes are queued take MIN..MAX ms (range scaled by
                            the queue length up to 6 queued)
  --busy-search-seed N      the seed of that spread (default 0)
  --episode-lookups MODE    neo4j (default), falkordb, falkordb-0.29 or falkordb-legacy:
                            which episodes get_episodes and GET /episodes see
  --graphiti-core VERSION   0.31.2 (default) or 0.31.1: what MCP delete_episode removes and
                            rewrites (0.31.2 rebuilds the summaries the episode fed)
  --fault SPEC              start with a fault: NAME, NAME:MS (slow:500) or the control
                            endpoint's JSON ({\"steps\": [...]})
  --control-port N          also serve /__standin/ on this port (stays up while down; 0 = free)
Control endpoint (loopback): POST /__standin/fault, GET /__standin/fault, GET /__standin/episodes,
GET /__standin/sends, POST /__standin/delivery {\"expected\": [...]}, GET /__standin/status";

fn die(msg: &str) -> ! {
    eprintln!("graphiti-standin: {msg}\n{USAGE}");
    exit(2);
}

fn millis(flag: &str, text: &str) -> Duration {
    Duration::from_millis(text.parse().unwrap_or_else(|_| die(&format!("{flag}: \"{text}\" is not a number of ms"))))
}

fn busy_search(text: &str) -> BusySearch {
    let Some((min, max)) = text.split_once("..") else {
        die(&format!("--busy-search-ms: \"{text}\" is not MIN..MAX (e.g. 300..5300)"));
    };
    let (min, max) = (millis("--busy-search-ms", min), millis("--busy-search-ms", max));
    if min > max {
        die(&format!("--busy-search-ms: MIN is above MAX in \"{text}\""));
    }
    BusySearch { min, max, seed: 0 }
}

fn lookups(text: &str) -> EpisodeLookups {
    match text {
        "neo4j" => EpisodeLookups::Neo4j,
        "falkordb" => EpisodeLookups::FalkorDb,
        "falkordb-0.29" => EpisodeLookups::FalkorDb029,
        "falkordb-legacy" => EpisodeLookups::FalkorDbLegacy,
        other => {
            die(&format!("--episode-lookups: \"{other}\" is not neo4j, falkordb, falkordb-0.29 or falkordb-legacy"))
        }
    }
}

fn main() {
    let mut options = Options { port: 8000, ..Options::default() };
    let mut behaviour = Behaviour::default();
    let (mut seed, mut fault, mut control_port, mut busy_seed) = (None, None, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| die(&format!("{flag} needs a value")));
        match flag.as_str() {
            "--port" => options.port = value().parse().unwrap_or_else(|_| die("--port: not a port")),
            "--seed" => seed = Some(value()),
            "--legacy-node-search" => options.legacy_node_search = true,
            "--ingest-delay-ms" => options.ingest_delay = millis(&flag, &value()),
            "--ingest-ms" => behaviour.ingest = millis(&flag, &value()),
            "--latency-ms" => behaviour.latency = millis(&flag, &value()),
            "--accept-ms-per-queued" => behaviour.accept_per_queued = millis(&flag, &value()),
            "--accept-max-ms" => behaviour.accept_max = Some(millis(&flag, &value())),
            "--slow-add-memory" => behaviour.slow_add_memory = true,
            "--episodes-as-facts" => behaviour.episodes_as_facts = true,
            "--busy-search-ms" => behaviour.busy_search = Some(busy_search(&value())),
            "--busy-search-seed" => {
                busy_seed = Some(value().parse().unwrap_or_else(|_| die("--busy-search-seed: not a number")));
            }
            "--episode-lookups" => behaviour.episode_lookups = lookups(&value()),
            "--graphiti-core" => {
                behaviour.graphiti_core = match value().as_str() {
                    "0.31.1" => GraphitiCore::V0_31_1,
                    "0.31.2" => GraphitiCore::V0_31_2,
                    other => die(&format!("--graphiti-core: {other:?} is not 0.31.1 or 0.31.2")),
                }
            }
            "--fault" => fault = Some(parse_fault_flag(&value()).unwrap_or_else(|e| die(&format!("--fault: {e}")))),
            "--control-port" => {
                control_port = Some(value().parse().unwrap_or_else(|_| die("--control-port: not a port")));
            }
            "-h" | "--help" => return println!("{USAGE}"),
            other => die(&format!("unknown argument {other}")),
        }
    }
    match (&mut behaviour.busy_search, busy_seed) {
        (Some(busy), Some(seed)) => busy.seed = seed,
        (None, Some(_)) => die("--busy-search-seed needs --busy-search-ms"),
        _ => {}
    }
    let standin = StandIn::start(options).unwrap_or_else(|e| die(&format!("cannot listen: {e}")));
    standin.set_behaviour(behaviour);
    if let Some(path) = seed {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| die(&format!("{path}: {e}")));
        standin.seed_json(&text).unwrap_or_else(|e| die(&format!("{path}: {e}")));
    }
    let control = control_port.map(|p| standin.listen_control(p).unwrap_or_else(|e| die(&format!("control: {e}"))));
    if let Some(steps) = fault {
        standin.set_faults(steps).unwrap_or_else(|e| die(&format!("--fault: {e}")));
    }
    // One line per URL: scripts take the first `listening on` URL as the server's.
    println!("graphiti-standin listening on {}", standin.url());
    if let Some(port) = control {
        println!("graphiti-standin control on port {port} (/__standin/)");
    }
    let _ = std::io::stdout().flush();
    loop {
        std::thread::park(); // serve until killed
    }
}
