/** Module hooks of bench/no-telemetry/register.ts: `telemetry/tool-call.js` → ./tool-call-stub.js when asked. */
let stub = false;

export function initialize(data: { stub: boolean }): void {
  stub = data.stub;
}

interface Resolved {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}

const STUB = new URL('./tool-call-stub.js', import.meta.url).href;

export async function resolve(specifier: string, context: unknown, next: (s: string, c: unknown) => Promise<Resolved>): Promise<Resolved> {
  const resolved = await next(specifier, context);
  if (stub && resolved.url.endsWith('/dist/src/telemetry/tool-call.js')) return { url: STUB, format: 'module', shortCircuit: true };
  return resolved;
}
