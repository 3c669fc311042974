/**
 * The toolgate protocol: every wire message declared once as a zod schema
 * with its method name, TypeScript types by `z.infer`. `schemas/*.json` are
 * generated from this module (`npm run gen`); hosts that want neither zod nor
 * this source use those and the `.d.ts` generated from them.
 */
export * from './json.js';
export * from './ui-schema.js';
export * from './tool.js';
export * from './methods.js';
export * from './errors.js';
export * from './actions.js';
export * from './action-table.js';
export { MAX_BEARER_TOKEN_LENGTH } from './limits.js';
export * from './cli-output.js';
export * from './config.js';
export { protocolRegistry, schemaFileOf, type SchemaFile } from './registry.js';
