// A stdio MCP server for the end-to-end tests: serves the tools named on its command line (each takes
// any object) and appends every call it executes to $FAKE_MCP_CALLS as one JSON line
// ({ server, tool, arguments }). Newline-delimited JSON-RPC, as MCP's stdio transport.
//
// Usage: node fake-mcp-server.js <server-name> <tool>...

import fs from 'node:fs';
import readline from 'node:readline';

const [server = 'fake-mcp', ...tools] = process.argv.slice(2);
const callsFile = process.env.FAKE_MCP_CALLS;

function send(message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
}

function answer(request) {
  switch (request.method) {
    case 'initialize':
      return {
        protocolVersion: request.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: server, version: '1.0.0' },
      };
    case 'ping':
      return {};
    case 'tools/list':
      return {
        tools: tools.map((name) => ({
          name,
          description: `${name} (test tool of ${server})`,
          inputSchema: { type: 'object', additionalProperties: true },
        })),
      };
    case 'tools/call': {
      const { name, arguments: args = {} } = request.params ?? {};
      if (!tools.includes(name)) throw Object.assign(new Error(`unknown tool ${name}`), { code: -32602 });
      if (callsFile) fs.appendFileSync(callsFile, `${JSON.stringify({ server, tool: name, arguments: args })}\n`);
      return { content: [{ type: 'text', text: `${name} done for ${JSON.stringify(args)}` }] };
    }
    default:
      throw Object.assign(new Error(`method not found: ${request.method}`), { code: -32601 });
  }
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.trim()) return;
  const request = JSON.parse(line);
  if (request.id === undefined) return; // a notification
  try {
    send({ id: request.id, result: answer(request) });
  } catch (error) {
    send({ id: request.id, error: { code: error.code ?? -32603, message: error.message } });
  }
});
