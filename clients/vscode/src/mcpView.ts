/**
 * "Agent: Show MCP Servers": `agent.mcpStatus`'s answer as the lines of an output channel, in the words
 * of `agent-ls doctor`'s MCP section (`mcp_client/status.py` `text_lines`): a line per server with its
 * state and detail, its command line or URL, the end of its stderr when it failed, then its tools (with
 * their estimated schema tokens), resources and prompts. The server connects and measures; this renders.
 *
 * Pure: no `vscode` import.
 */

import type { McpStatusResult } from './protocol';

/** What the command says when no MCP server is configured and no MCP file had a problem. */
export const NO_MCP_SERVERS =
  'No MCP server is configured for this workspace: add .mcp.json at its root, or mcp.json in your ' +
  'agent-ls config directory (docs/mcp.md).';

/** Lines of stderr shown for a failed server; resources and prompts shown per server. */
const STDERR_LINES = 5;
const LISTED = 20;

function count(value: number): string {
  return value.toLocaleString('en-US');
}

/** The channel's lines, in the server's order; empty when there is nothing to show (`NO_MCP_SERVERS`). */
export function mcpStatusLines(result: McpStatusResult): string[] {
  const lines = result.problems.map((problem) => `problem: ${problem}`);
  for (const server of result.servers) {
    lines.push(`${server.name} (${server.scope}, ${server.transport}): ${server.state}${server.detail ? `: ${server.detail}` : ''}`);
    lines.push(`  ${server.target}`);
    if (server.state === 'failed' && server.stderrTail) {
      lines.push(...server.stderrTail.split('\n').slice(-STDERR_LINES).map((line) => `  stderr: ${line}`));
    }
    if (server.tools.length > 0) {
      const how = server.deferred ? 'deferred (names only)' : 'sent with every request';
      lines.push(`  ${server.tools.length} tools, ~${count(server.schemaTokens)} schema tokens, ${how}:`);
      for (const tool of server.tools) {
        const hints = [tool.readOnly ? 'read-only' : '', tool.destructive ? 'destructive' : ''].filter(Boolean);
        lines.push(`    ${tool.name}${hints.length ? ` [${hints.join(', ')}]` : ''} ~${count(tool.schemaTokens)} tokens`);
      }
    }
    lines.push(...server.resources.slice(0, LISTED).map((resource) => `  resource ${resource.uri} ${resource.name}`));
    lines.push(...server.prompts.slice(0, LISTED).map((prompt) => `  prompt ${prompt.name}: ${prompt.description}`));
  }
  return lines;
}
