/** What a test that speaks MCP over HTTP with raw `fetch` sends (no SDK client). */

/** The Accept and Content-Type a Streamable HTTP client sends with every POST. */
export const MCP_ACCEPT = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A 2025-11-25 `initialize` request: opens a sessionful MCP session. */
export const MCP_INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
