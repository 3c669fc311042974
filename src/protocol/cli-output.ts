/**
 * `project-cli`'s stdout: exactly one JSON document per run.
 */
import { z } from 'zod';
import { named } from './registry.js';
import { ToolError } from './tool.js';

export const CliSuccess = named(
  'cli-output',
  'CliSuccess',
  z.strictObject({ ok: z.literal(true), module: z.string(), method: z.string(), data: z.unknown() }),
);

export const CliFailure = named(
  'cli-output',
  'CliFailure',
  z.strictObject({ ok: z.literal(false), module: z.string().nullable(), method: z.string().nullable(), error: ToolError }),
  'module/method are null when argv did not name an action.',
);

export const CliDocument = named(
  'cli-output',
  'CliDocument',
  z.discriminatedUnion('ok', [CliSuccess, CliFailure]),
  'The one JSON document project-cli prints on stdout.',
);

export type CliSuccess = z.infer<typeof CliSuccess>;
export type CliFailure = z.infer<typeof CliFailure>;
export type CliDocument = z.infer<typeof CliDocument>;
