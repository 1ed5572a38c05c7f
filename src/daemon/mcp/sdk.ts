/**
 * The MCP SDK parts the server uses, in one module loaded on the first MCP session (server.ts `sdk()`):
 * the SDK with its schema and validation dependencies weighs about 14 MB of memory, which a daemon whose
 * MCP routes are never called should not carry (issue 33 item 2).
 */
export { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
export { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
export {
  CallToolRequestSchema,
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
