/**
 * The official AG-UI client (`@ag-ui/client`) as a front end uses it to
 * follow a thread: an agent whose `connect()` reads the SSE stream through
 * the client's own HTTP transport and SSE parser, so every event goes through
 * its compatibility boundary, event enforcement, verifier and message
 * reducer — exactly what a front end built on it would see.
 */
import {
  AbstractAgent,
  runHttpRequest,
  transformHttpEventStream,
  verifyEvents,
  type AgentSubscriber,
  type BaseEvent,
  type Message,
} from '@ag-ui/client';
import type { Observable } from 'rxjs';

/** An agent that only follows: `connectAgent()` opens the stream, the reducer rebuilds `messages`. */
export class ThreadFollower extends AbstractAgent {
  constructor(
    private readonly open: () => Promise<Response>,
    threadId: string,
  ) {
    super({ threadId });
  }

  run(): Observable<BaseEvent> {
    throw new Error('a thread follower does not start runs');
  }

  protected override connect(): Observable<BaseEvent> {
    return transformHttpEventStream(runHttpRequest(this.open));
  }
}

export interface Followed {
  /** Every event the reducer applied, after the client's enforcement (unknown fields stripped). */
  events: BaseEvent[];
  /** What the client's enforcement warned about (each stripped path). */
  warnings: string[];
  messages: Message[];
}

/**
 * Runs `connectAgent()` until the stream ends, or until `runs` RUN_FINISHED
 * events arrived (then the agent detaches, as a front end leaving a live
 * stream would). Rejects when the client rejects the stream (the verifier
 * fails the run).
 */
export async function follow(agent: ThreadFollower, opts: { runs?: number; onRunFinished?: (n: number) => void } = {}): Promise<Followed> {
  const events: BaseEvent[] = [];
  const warnings: string[] = [];
  let finished = 0;
  const subscriber: AgentSubscriber = {
    onEvent: ({ event }) => void events.push(event),
    onRunFinishedEvent: () => {
      finished += 1;
      opts.onRunFinished?.(finished);
      if (opts.runs !== undefined && finished >= opts.runs) setImmediate(() => void agent.detachActiveRun());
    },
  };
  const warn = console.warn;
  const error = console.error;
  console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(' '));
  console.error = (...args: unknown[]) => void warnings.push(args.map(String).join(' '));
  try {
    await agent.connectAgent({}, subscriber);
  } finally {
    console.warn = warn;
    console.error = error;
  }
  return { events, warnings, messages: agent.messages };
}

/** A recorded SSE body as the Response the client's transport reads. */
export function sseResponse(body: string): Response {
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

/** Runs the client's event verifier alone over a recorded SSE body; resolves with the events, rejects with its error. */
export async function verifySse(body: string): Promise<BaseEvent[]> {
  const out: BaseEvent[] = [];
  await verifyEvents()(transformHttpEventStream(runHttpRequest(async () => sseResponse(body)))).forEach((e) => void out.push(e));
  return out;
}
