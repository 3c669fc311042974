/** Entry (e): a bare `node -e 0`, started the way the subprocess executor starts the CLI. */
import { spawn } from 'node:child_process';
import { childEnv } from '../env.js';
import type { Target } from '../target.js';

export function nodeStart(): Target {
  return {
    name: 'bare node -e 0',
    pid: Number.NaN,
    call: () =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ['-e', '0'], { env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
        child.stdin.end();
        child.on('error', reject);
        child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`node -e 0 exited ${code}`))));
      }),
    stop: async () => {},
  };
}
