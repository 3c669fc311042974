/**
 * Every wire shape is declared once, in src/protocol (zod, types by z.infer). This test parses
 * every TypeScript source outside src/protocol (src/ and test/) with the TypeScript compiler and
 * fails on a declaration that has the shape of a wire shape:
 *
 * - an interface or a type literal whose property names are those of an object of the protocol
 *   (a `$defs` shape of schemas/*.json, or an object nested in one, such as a share's invite);
 * - a zod `z.object` / `z.strictObject` / `z.looseObject` with those keys;
 * - a string-literal union or a `z.enum([...])` with the values of a protocol enum;
 * - a copy of a protocol constant (the tool's name, the bearer token limit, the `Id` schema).
 *
 * The shapes are read from schemas/*.json, which `npm run gen` writes from src/protocol (and
 * protocol-generated.test.ts keeps up to date). Objects with a single property (`{ event }`,
 * `{ items }`) and enums of one value are too generic to tell a copy from a coincidence, so they
 * are not matched. The exceptions below are each a declaration that only looks like a wire shape.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from '../../helpers/repo.js';

/** `path:shape` → why the declarations there that look like that wire shape are not copies of it. */
const EXCEPTIONS: Readonly<Record<string, string>> = {
  'src/cli-router/credential.ts:TOOL_NAME':
    "the credential's JWT audience (`aud`), a claim of its own that happens to be spelled as the tool's name",
  'src/rpc/message-shape.ts:CalendarBatchItem':
    "a JSON-RPC error `{code, message}` the framing layer answers with, not a batch item's tool error",
  'test/helpers/raw-stdio.ts:CalendarBatchItem':
    "a JSON-RPC error `{code, message}` read off a raw stdio stream, not a batch item's tool error",
  'test/e2e/mcp-stdio-limits.test.ts:CalendarBatchItem':
    "a JSON-RPC error `{code, message}` read off the MCP stdio stream, not a batch item's tool error",
  'test/e2e/mcp-tasks.test.ts:CalendarBatchItem':
    "a JSON-RPC error `{code, message}` read off a raw MCP connection, not a batch item's tool error",
  'test/unit/mcp/mcp-inprocess.test.ts:CalendarBatchItem':
    "a JSON-RPC error `{code, message}` read off the in-process MCP stdio stream, not a batch item's tool error",
  'src/store/store.ts:calendar':
    "the store's insert fields for an event, what its repository writes once calendar.create's input is parsed (schemas/action-inputs.json publishes the inputs under their action names, calendar.*)",
  'test/fuzz/invariants.ts:RpcError':
    'the fuzzer checks replies it does not trust: every field is `unknown` until the invariant has looked at it',
};

interface WireShape {
  /** `$defs` id, with the path inside it for a nested object (`CalendarShareData.invites[]`). */
  name: string;
  kind: 'object' | 'enum';
  /** Sorted property names (object) or values (enum), joined by `,`. */
  key: string;
}

function wireShapes(): WireShape[] {
  const shapes: WireShape[] = [];
  const dir = join(REPO_ROOT, 'schemas');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const doc = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { $defs?: Record<string, unknown> };
    for (const [id, schema] of Object.entries(doc.$defs ?? {})) collect(schema, id, shapes);
  }
  return shapes;
}

function collect(node: unknown, name: string, out: WireShape[]): void {
  if (Array.isArray(node)) {
    node.forEach((n, i) => collect(n, `${name}|${i}`, out));
    return;
  }
  if (!node || typeof node !== 'object') return;
  const n = node as Record<string, unknown>;
  if (n['properties'] && typeof n['properties'] === 'object') {
    const keys = Object.keys(n['properties']);
    if (keys.length > 1) out.push({ name, kind: 'object', key: keys.sort().join(',') });
    for (const [k, v] of Object.entries(n['properties'])) collect(v, `${name}.${k}`, out);
  }
  if (Array.isArray(n['enum']) && n['enum'].length > 1 && n['enum'].every((v) => typeof v === 'string')) {
    out.push({ name, kind: 'enum', key: [...(n['enum'] as string[])].sort().join(',') });
  }
  for (const k of ['items', 'anyOf', 'oneOf', 'allOf', 'additionalProperties']) if (k in n) collect(n[k], k === 'items' ? `${name}[]` : name, out);
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return tsFiles(path);
    return d.name.endsWith('.ts') && !d.name.endsWith('.d.ts') ? [path] : [];
  });
}

interface Found {
  line: number;
  what: string;
  kind: 'object' | 'enum' | 'constant';
  key: string;
}

const ZOD_OBJECTS = new Set(['object', 'strictObject', 'looseObject']);
/** Protocol constants, as their copies would be written (`const X = <value>`) → the name to import. */
const CONSTANTS: ReadonlyArray<[string, string]> = [
  ["'project_cli'", 'TOOL_NAME'],
  ['16384', 'MAX_BEARER_TOKEN_LENGTH'],
  ['16_384', 'MAX_BEARER_TOKEN_LENGTH'],
  ['z.string().min(1).max(200)', 'Id'],
];

const nameOf = (n: ts.PropertyName | ts.BindingName | undefined): string | undefined =>
  n && (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isNumericLiteral(n)) ? n.text : undefined;

/** The property names of an object type or object literal; undefined when one cannot be told (a spread, a computed key). */
function keysOf(members: readonly (ts.TypeElement | ts.ObjectLiteralElementLike)[]): string | undefined {
  const keys: string[] = [];
  for (const m of members) {
    const name = ts.isPropertySignature(m) || ts.isPropertyAssignment(m) || ts.isShorthandPropertyAssignment(m) || ts.isMethodSignature(m) ? nameOf(m.name) : undefined;
    if (name === undefined) return undefined;
    keys.push(name);
  }
  return keys.length > 1 ? keys.sort().join(',') : undefined;
}

/**
 * Whether a type node is part of a declared type (an interface or a type alias), which others can
 * import and so copy a shape. A type written in place (a cast of a parsed reply, a parameter) is a
 * test's or a function's local view, not a declaration of the shape.
 */
function inDeclaredType(node: ts.Node): boolean {
  for (let n = node.parent; n && !ts.isSourceFile(n); n = n.parent) {
    if (ts.isInterfaceDeclaration(n) || ts.isTypeAliasDeclaration(n)) return true;
    if (ts.isStatement(n) || ts.isExpression(n) || ts.isParameter(n) || ts.isPropertyDeclaration(n)) return false;
  }
  return false;
}

function declarationsIn(file: string, text = readFileSync(file, 'utf8')): Found[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Found[] = [];
  const at = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isInterfaceDeclaration(node)) {
      const key = keysOf(node.members);
      if (key) found.push({ line: at(node), what: `interface ${node.name.text}`, kind: 'object', key });
    } else if (ts.isTypeLiteralNode(node) && inDeclaredType(node)) {
      const key = keysOf(node.members);
      if (key) found.push({ line: at(node), what: 'an object type', kind: 'object', key });
    } else if (ts.isUnionTypeNode(node) && inDeclaredType(node)) {
      const values = node.types.map((t) => (ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal) ? t.literal.text : undefined));
      if (values.length > 1 && values.every((v) => v !== undefined)) found.push({ line: at(node), what: 'a string-literal union', kind: 'enum', key: (values as string[]).sort().join(',') });
    } else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && ts.isIdentifier(node.expression.expression) && node.expression.expression.text === 'z') {
      const method = node.expression.name.text;
      const [arg] = node.arguments;
      if (ZOD_OBJECTS.has(method) && arg && ts.isObjectLiteralExpression(arg)) {
        const key = keysOf(arg.properties);
        if (key) found.push({ line: at(node), what: `a zod ${method}`, kind: 'object', key });
      } else if (method === 'enum' && arg && ts.isArrayLiteralExpression(arg)) {
        const values = arg.elements.map((e) => (ts.isStringLiteral(e) ? e.text : undefined));
        if (values.length > 1 && values.every((v) => v !== undefined)) found.push({ line: at(node), what: 'a zod enum', kind: 'enum', key: (values as string[]).sort().join(',') });
      }
    } else if (ts.isVariableDeclaration(node) && node.initializer) {
      const init = node.initializer.getText(source).replace(/\s+/g, '');
      const constant = CONSTANTS.find(([value]) => value === init);
      if (constant) found.push({ line: at(node), what: `const ${nameOf(node.name) ?? '…'}`, kind: 'constant', key: constant[1] });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The `$defs` id a shape's name starts with (`CalendarShareData.invites[]` → `CalendarShareData`). */
const rootOf = (name: string) => name.split(/[.|[]/)[0]!;

/** What a declaration in `file` copies, as `path:line: …` lines (exceptions left out). */
function copiesIn(file: string, shapes: readonly WireShape[], text?: string): string[] {
  const path = relative(REPO_ROOT, file);
  const out: string[] = [];
  for (const d of declarationsIn(file, text)) {
    const matches = d.kind === 'constant' ? [d.key] : shapes.filter((s) => s.kind === d.kind && s.key === d.key).map((s) => s.name);
    const copied = matches.filter((m) => !(`${path}:${rootOf(m)}` in EXCEPTIONS));
    if (copied.length > 0) out.push(`${path}:${d.line}: ${d.what} is a copy of ${copied.join(' / ')}`);
  }
  return out;
}

const PROTOCOL = join(REPO_ROOT, 'src', 'protocol');
const sources = () => [...tsFiles(join(REPO_ROOT, 'src')), ...tsFiles(join(REPO_ROOT, 'test'))].filter((f) => !f.startsWith(PROTOCOL));

test('no wire shape is declared outside src/protocol (parsed: interfaces, object types, zod schemas, enums, constants)', () => {
  const shapes = wireShapes();
  assert.ok(shapes.length > 50, `the protocol's shapes are read from schemas/ (${shapes.length})`);
  const files = sources();
  assert.ok(files.length > 100, 'the scan sees the code base');
  const found = files.flatMap((f) => copiesIn(f, shapes));
  assert.deepEqual(found, [], `import these from src/protocol instead (or list a true exception, with its reason):\n${found.join('\n')}`);
});

test('every exception still names a declaration the scan finds', () => {
  const shapes = wireShapes();
  for (const key of Object.keys(EXCEPTIONS)) {
    const [path, shape] = key.split(':') as [string, string];
    const hits = declarationsIn(join(REPO_ROOT, path)).filter((d) =>
      d.kind === 'constant' ? d.key === shape : shapes.some((s) => s.kind === d.kind && s.key === d.key && rootOf(s.name) === shape),
    );
    assert.ok(hits.length > 0, `${key} is listed as an exception but declares no copy of ${shape}: remove it from the list`);
  }
});

test('the scan finds a copy of each kind (a re-declared shape fails this suite)', () => {
  const shapes = wireShapes();
  const copy = [
    "import { z } from 'zod';",
    'export interface Memory { key: string; content: string; updated_at: string }',
    'type Invite = { invite: { invite_id: string; event_id: string; status: InviteStatus } };',
    "type InviteStatus = 'pending' | 'accepted' | 'rejected';",
    'const Contact = z.strictObject({ user_id: z.string(), name: z.string().nullable(), phone: z.string().nullable() });',
    "const Status = z.enum(['success', 'failure', 'partial']);",
    "const TOOL_NAME = 'project_cli';",
    'const MAX_TOKEN = 16384;',
    'const Id = z.string().min(1).max(200);',
  ].join('\n');
  const found = copiesIn(join(REPO_ROOT, 'src', 'copy.ts'), shapes, copy).map((line) => line.replace(/^[^:]+:\d+: /, ''));
  assert.deepEqual(found, [
    'interface Memory is a copy of Memory',
    'an object type is a copy of CalendarInviteData.invite',
    'a string-literal union is a copy of InviteStatus',
    'a zod strictObject is a copy of Contact',
    'a zod enum is a copy of ToolStatus',
    'const TOOL_NAME is a copy of TOOL_NAME',
    'const MAX_TOKEN is a copy of MAX_BEARER_TOKEN_LENGTH',
    'const Id is a copy of Id',
  ]);
});
