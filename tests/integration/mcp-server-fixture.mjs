// A protected MCP server for the end-to-end tests, built on the official TypeScript SDK's
// server side: streamable HTTP at /mcp, RFC 9728 metadata at
// /.well-known/oauth-protected-resource/mcp, and bearer-token checks with `jose` against
// Portcullis' /keys — what any third-party MCP server would do. Tools: whoami (scope
// demo:read) and write_note (scope demo:write).
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { z } from 'zod';

export async function startMcpServer({ baseUrl }) {
  const server = http.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const state = { url: `${origin}/mcp`, issuer: undefined, scopes: ['demo:read', 'demo:write'], seen: [] };
  const prmUrl = `${origin}/.well-known/oauth-protected-resource/mcp`;
  const jwks = createRemoteJWKSet(new URL(baseUrl + '/keys'));

  const challenge = (res, status, extra, body) => {
    const parts = [`resource_metadata="${prmUrl}"`, ...extra];
    res.writeHead(status, { 'content-type': 'application/json', 'www-authenticate': `Bearer ${parts.join(', ')}` });
    res.end(JSON.stringify(body ?? { error: 'invalid_token' }));
  };

  server.on('request', async (req, res) => {
    state.seen.push(`${req.method} ${req.url}`);
    if (req.url === '/.well-known/oauth-protected-resource/mcp' || req.url === '/.well-known/oauth-protected-resource') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ resource: state.url, authorization_servers: [state.issuer], bearer_methods_supported: ['header'], scopes_supported: state.scopes }));
      return;
    }
    if (!req.url.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    const auth = req.headers.authorization ?? '';
    if (!auth.startsWith('Bearer ')) return challenge(res, 401, ['scope="demo:read"']);
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(auth.slice(7), jwks, { issuer: state.issuer, audience: state.url, typ: 'at+jwt', algorithms: ['RS256'], clockTolerance: 60 }));
    } catch {
      return challenge(res, 401, ['error="invalid_token"', 'scope="demo:read"']);
    }
    const granted = (claims.scope ?? '').split(' ');
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    // Step-up: a tool call whose scope is missing gets 403 insufficient_scope.
    const needs = body?.method === 'tools/call' ? { whoami: 'demo:read', write_note: 'demo:write' }[body.params?.name] : undefined;
    if (needs && !granted.includes(needs)) {
      return challenge(res, 403, ['error="insufficient_scope"', `scope="${[...new Set([...granted, needs])].join(' ')}"`],
        { error: 'insufficient_scope', error_description: `Required scope: ${needs}` });
    }
    const mcp = new McpServer({ name: 'portcullis-test-mcp', version: '1.0.0' });
    mcp.tool('whoami', 'Who is calling', async () => ({ content: [{ type: 'text', text: JSON.stringify({ sub: claims.sub, client_id: claims.client_id, scope: claims.scope }) }] }));
    mcp.tool('write_note', 'Write a note', { text: z.string() }, async ({ text }) => ({ content: [{ type: 'text', text: `saved: ${text}` }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => { transport.close(); mcp.close(); });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });

  return { state, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}
