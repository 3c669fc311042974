/**
 * The SDK's server with task-augmented `tools/call` (contract section 18).
 *
 * `@modelcontextprotocol/server` 2.x carries the task wire vocabulary but no
 * task runtime, and the `tools/call` handler it wraps admits a CallToolResult
 * only (typescript-sdk #2189). `_wrapHandler` is the SDK's documented seam
 * for role-specific request handling: TaskServer uses it to answer a
 * `tools/call` that asks for a task with a CreateTaskResult, while the very
 * handler the SDK wrapped — validation, projection, everything an ordinary
 * call goes through — runs the call on behind the task. Every other
 * request, and every `tools/call` that asks for no task, is the SDK's own.
 * The `tasks/*` methods themselves are registered through the SDK's
 * custom-method form (mcp-tasks.ts).
 */
import { McpServer, Server, type Implementation, type JSONRPCRequest, type Result, type ServerContext, type ServerOptions } from '@modelcontextprotocol/server';

export type RequestHandler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/** The first revision whose tasks are the `io.modelcontextprotocol/tasks` extension. */
const MODERN_REVISION = '2026-07-28';

/** What decides and starts task-augmented calls (mcp-tasks.ts). */
export interface TaskCalls {
  /** Whether this `tools/call` asks for a task (2025-11-25: `params.task`; 2026-07-28: the client declared the extension). */
  requested(request: JSONRPCRequest, ctx: ServerContext, modern: boolean): boolean;
  /**
   * Runs the call through `run` behind a task: resolves with the
   * CreateTaskResult once any daemon can report the task — or with the
   * call's own answer when it ended without one to report.
   */
  start(request: JSONRPCRequest, ctx: ServerContext, modern: boolean, run: RequestHandler): Promise<Result>;
}

export class TaskServer extends Server {
  private taskCalls: TaskCalls | undefined;

  /** From now on task-augmented `tools/call` requests go to `calls` (call before connecting). */
  serveTasks(calls: TaskCalls): void {
    this.taskCalls = calls;
  }

  /** Whether this instance serves 2026-07-28 or later (tasks as an extension), rather than a 2025 revision. */
  servesModernEra(): boolean {
    const version = this._negotiatedProtocolVersion;
    return version !== undefined && version >= MODERN_REVISION;
  }

  protected override _wrapHandler(method: string, handler: RequestHandler): RequestHandler {
    const wrapped = super._wrapHandler(method, handler);
    if (method !== 'tools/call') return wrapped;
    return (request, ctx) => {
      const calls = this.taskCalls;
      const modern = this.servesModernEra();
      return calls?.requested(request, ctx, modern) ? calls.start(request, ctx, modern, wrapped) : wrapped(request, ctx);
    };
  }
}

/**
 * An McpServer standing on a TaskServer. The base class builds its own
 * Server and offers no way to pass another, so it is built here without
 * options (it then installs no handler on that one) and this server
 * replaces it before anything registers: tools, resources and prompts
 * registered on this McpServer land on the TaskServer, capabilities and all.
 */
export class TaskMcpServer extends McpServer {
  declare readonly server: TaskServer;

  constructor(info: Implementation, options: ServerOptions) {
    super(info);
    this.server = new TaskServer(info, options);
  }
}
