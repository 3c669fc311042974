/**
 * Preloaded into a spawned daemon (`NODE_OPTIONS=--import=<this file's URL>`,
 * with MODULE_LOG naming a file): registers module hooks that append every ES
 * module URL the process resolves to that file, one per line — which files a
 * run really loads (the daemon's bundle or dist/src), seen from outside.
 */
import { register } from 'node:module';

if (process.env.MODULE_LOG) register('./module-log-hooks.js', import.meta.url, { data: { file: process.env.MODULE_LOG } });
