import type { z } from 'zod';
import type { InputIssue } from '../protocol/tool.js';

export type { InputIssue };

type Issue = z.core.$ZodIssue;
type Path = ReadonlyArray<PropertyKey>;

/**
 * zod issues as a short, stable list the model can act on. `prefix` places
 * a part checked on its own (a batch item) at its path in the whole input.
 */
export function describeIssues(error: z.ZodError, prefix: Path = []): InputIssue[] {
  return error.issues.flatMap((i) => describe(i, prefix));
}

/** `items[3].start_at`: the path as a person writes it, from the input's root. */
function formatPath(path: Path): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : out === '' ? String(seg) : `.${String(seg)}`;
  return out || '(input)';
}

const FORMATS: Record<string, string> = {
  date: 'date (YYYY-MM-DD)',
  datetime: 'date-time with an offset (e.g. 2026-04-21T10:00:00+08:00)',
};

function describe(issue: Issue, prefix: Path): InputIssue[] {
  const path = [...prefix, ...issue.path];
  switch (issue.code) {
    case 'invalid_union': {
      // A union that failed in every branch: report the branch that came
      // closest (fewest issues), with that branch's own paths and messages.
      // Schemas whose branches are told apart by shape pick the branch
      // themselves (calendar.create) and never get here.
      if (issue.errors.length > 0) {
        const best = issue.errors.reduce((a, b) => (b.length < a.length ? b : a));
        return best.flatMap((i) => describe(i, path));
      }
      const options = (issue as { options?: unknown[] }).options;
      if (options) {
        const expected = options.map((o) => JSON.stringify(o)).join(' | ');
        return [{ path: formatPath(path), message: `must be one of ${expected}`, expected }];
      }
      return [{ path: formatPath(path), message: issue.message }];
    }
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({ path: formatPath([...path, key]), message: 'unknown field: this object accepts only the fields in input_schema' }));
    case 'invalid_type': {
      // zod leaves the input out of issues; its message still says what it received.
      const received = /received (\w+)$/.exec(issue.message)?.[1];
      const message = received === 'undefined' ? `required (${issue.expected})` : `expected ${issue.expected}${received ? `, got ${received}` : ''}`;
      return [{ path: formatPath(path), message, expected: issue.expected }];
    }
    case 'invalid_format': {
      const expected = FORMATS[issue.format] ?? issue.format;
      // A message the schema chose (see time.ts) says it best; zod's default ("Invalid ISO date") does not.
      const message = /^Invalid /.test(issue.message) ? `expected a ${expected}` : issue.message;
      return [{ path: formatPath(path), message, expected }];
    }
    case 'invalid_value': {
      const expected = issue.values.map((v) => JSON.stringify(v)).join(' | ');
      return [{ path: formatPath(path), message: `must be ${issue.values.length > 1 ? 'one of ' : ''}${expected}`, expected }];
    }
    default:
      return [{ path: formatPath(path), message: issue.message }];
  }
}
