import type { z } from 'zod';

export interface InputIssue {
  path: string;
  message: string;
}

/** zod issues as a short, stable list the model can act on. */
export function describeIssues(error: z.ZodError): InputIssue[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(input)', message: i.message }));
}
