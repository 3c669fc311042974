/**
 * The names toolgate's MCP Apps surface is known by (contract section 19), declared once for
 * the server (src/mcp/mcp-apps.ts) and the app that runs inside a host (src/inspector/mcp-app.ts).
 * Plain constants: the browser bundle takes them without anything else of the protocol.
 */

/** The app resource `project_cli` names in `_meta.ui.resourceUri`. */
export const TOOL_CARD_URI = 'ui://toolgate/tool-card.html';

/** Where a `tools/call` result of an action with a UI carries its compiled `ui_schema`. */
export const UI_SCHEMA_META_KEY = 'toolgate/ui_schema';
