/**
 * The commands that open the daemon's store or serve it, behind one `import()`
 * in cli.ts: one split point keeps the bundle in a few large chunks (each chunk
 * is a module Node resolves, reads and links on every start), where an
 * `import()` per command would cut it into many small ones.
 */
export { serve } from './serve.js';
export { devCredential } from '../auth/dev-credential.js';
export { addAutomationJob } from '../sessions/automation-jobs.js';
