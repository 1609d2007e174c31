// `openclaw graphiti setup`'s reading of the Graphiti URL and transport a user types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { graphitiTarget } from '../src/setup-cli.js';

test('the transport follows the URL unless named, and a URL Graphiti cannot be at is refused', () => {
  assert.deepEqual(graphitiTarget('http://localhost:8000/mcp'), { url: 'http://localhost:8000/mcp', transport: 'mcp' });
  assert.deepEqual(graphitiTarget('https://graphiti.example/mcp/'), { url: 'https://graphiti.example/mcp/', transport: 'mcp' });
  assert.deepEqual(graphitiTarget('http://localhost:8000'), { url: 'http://localhost:8000', transport: 'rest' });
  assert.deepEqual(graphitiTarget('http://localhost:8000', 'mcp'), { url: 'http://localhost:8000', transport: 'mcp' });
  assert.match(graphitiTarget('localhost:8000').error, /over http or https/);
  assert.match(graphitiTarget('not a url').error, /is not a URL/);
  assert.match(graphitiTarget('ftp://host/mcp').error, /over http or https/);
  assert.match(graphitiTarget('http://localhost:8000', 'grpc').error, /mcp \(the MCP server\) or rest/);
});
