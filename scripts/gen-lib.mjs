// The generation core of `npm run gen`, shared by the script and by the test that checks the
// committed files are up to date. From the protocol module's zod registry it produces:
//   schemas/<file>.json   JSON Schema draft 2020-12, one file per concern, each shape a $defs entry
//   protocol/index.d.ts   host-facing types, generated from those JSON Schemas by json-schema-to-typescript
//   protocol/index.js     the runtime half of `toolgate/protocol`: method names, constants, the schemas
//   schemas/action-inputs.json  each action's input schema, exactly what INVALID_ACTION_INPUT carries
// A host needs neither zod nor our source to use them.
import { compile } from 'json-schema-to-typescript';

const BASE = 'https://toolgate.dev/schemas/';
const MARK = 'toolgate-ref:';

/** Each file's root: one shape inlined at the root, a union of shapes, or none (only $defs). */
const FILES = {
  'tool-call': {
    title: 'ToolCallWire',
    description:
      'The shapes of one project_cli call on the wire and in storage: the tool/invoke result, the tool/result notification and the stored ToolAgentOutput. Version 1. Generated from src/protocol by npm run gen.',
    anyOf: ['ToolResponse', 'ToolResultNotification', 'ToolAgentOutput'],
  },
  'ui-schema': { root: 'UiSchema' },
  protocol: {
    title: 'ToolgateProtocol',
    description:
      'Params and results of every JSON-RPC method of the toolgate protocol, version 1 (see protocol/index.js for the method table). Generated from src/protocol by npm run gen.',
  },
  actions: {
    title: 'ToolgateActions',
    description: 'The data each action returns in a tool result (result.data), by action. Generated from src/protocol by npm run gen.',
  },
  'cli-output': { root: 'CliDocument' },
  config: { root: 'ConfigFile' },
};

const json = (value) => `${JSON.stringify(value, null, 2)}\n`;

/** Rewrites zod's cross-document references into `file.json#/$defs/Id` (or `#/$defs/Id` in the same file). */
function relink(node, file, fileOf) {
  if (Array.isArray(node)) return node.map((n) => relink(n, file, fileOf));
  if (!node || typeof node !== 'object') return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith(MARK)) {
      const id = v.slice(MARK.length);
      const target = fileOf.get(id);
      if (!target) throw new Error(`reference to unregistered shape ${id}`);
      const path = FILES[target].root === id ? '' : `#/$defs/${id}`;
      out[k] = target === file ? path || '#' : `${target}.json${path}`;
    } else out[k] = relink(v, file, fileOf);
  }
  return out;
}

/** `{ [file]: schemaDocument }` from the protocol module. */
export function buildSchemas(protocol) {
  const toJSONSchema = protocol.toJSONSchema;
  const docs = toJSONSchema(protocol.protocolRegistry, {
    target: 'draft-2020-12',
    metadata: protocol.protocolRegistry,
    uri: (id) => `${MARK}${id}`,
  }).schemas;
  const fileOf = protocol.schemaFileOf;
  const out = {};
  for (const [file, spec] of Object.entries(FILES)) {
    const ids = [...fileOf.entries()].filter(([, f]) => f === file).map(([id]) => id);
    const defs = {};
    for (const id of ids) {
      const { $schema, $id, id: _id, ...body } = docs[id];
      defs[id] = relink(body, file, fileOf);
    }
    const doc = { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: `${BASE}${file}.json` };
    if (spec.root) {
      const { [spec.root]: root, ...rest } = defs;
      Object.assign(doc, root);
      if (Object.keys(rest).length > 0) doc.$defs = rest;
    } else {
      doc.title = spec.title;
      doc.description = spec.description;
      if (spec.anyOf) doc.anyOf = spec.anyOf.map((id) => ({ $ref: `#/$defs/${id}` }));
      doc.$defs = defs;
    }
    out[file] = doc;
  }
  return out;
}

/** One schema holding every shape under its id, references made local, for json-schema-to-typescript. */
function mergedForTypes(schemas) {
  const defs = {};
  const local = (node) => {
    if (Array.isArray(node)) return node.map(local);
    if (!node || typeof node !== 'object') return node;
    const out = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref') {
        const [file, path] = v.split('#');
        const f = file ? file.replace(/\.json$/, '') : undefined;
        out[k] = path ? `#${path}` : `#/$defs/${FILES[f].root}`;
      } else if (k !== '$defs') out[k] = local(v);
    }
    return out;
  };
  for (const [file, doc] of Object.entries(schemas)) {
    const withFile = (node) => JSON.parse(JSON.stringify(node).replaceAll('"$ref":"#"', `"$ref":"${file}.json"`).replaceAll('"$ref":"#/', `"$ref":"${file}.json#/`));
    for (const [id, def] of Object.entries(doc.$defs ?? {})) defs[id] = local(withFile(def));
    const root = FILES[file].root;
    if (root) {
      const { $schema, $id, $defs, ...body } = doc;
      defs[root] = local(withFile(body));
    }
  }
  return { title: 'ToolgateWire', type: 'object', additionalProperties: false, properties: {}, $defs: defs };
}

/** The host-facing `.d.ts` of `toolgate/protocol`. */
export async function buildTypes(schemas, protocol) {
  const types = await compile(mergedForTypes(schemas), 'ToolgateWire', {
    bannerComment: '',
    additionalProperties: false,
    unreachableDefinitions: true,
    format: true,
    strictIndexSignatures: false,
    // zod's `.length(1)` arrays stay arrays, as their inferred types are.
    ignoreMinAndMaxItems: true,
  });
  const requests = Object.entries(protocol.REQUESTS)
    .map(([m, s]) => `  ${JSON.stringify(m)}: { params: ${s.paramsId ? title(schemas, s.paramsId) : 'null | undefined'}; result: ${title(schemas, s.resultId)} };`)
    .join('\n');
  const notifications = Object.entries(protocol.NOTIFICATIONS)
    .map(([m, s]) => `  ${JSON.stringify(m)}: { params: ${s.paramsId ? title(schemas, s.paramsId) : 'undefined'} };`)
    .join('\n');
  return [
    '/* Generated from schemas/*.json by npm run gen (scripts/gen-lib.mjs). Do not edit. */',
    '/* The toolgate wire protocol for TypeScript hosts: no zod, no toolgate source needed. */',
    '',
    types
      .replace(/^export interface ToolgateWire \{\}\n\n?/m, '')
      // json-schema-to-typescript's note on each merged definition says nothing to a host.
      .replace(/^ \* This interface was referenced by `ToolgateWire`'s JSON-Schema\n \* via the `definition` "[^"]+"\.\n/gm, '')
      .replace(/^ \*\n \*\//gm, ' */')
      .replace(/^\/\*\*\n \*\/\n/gm, ''),
    '/** Every request: its params and result. */',
    'export interface Requests {',
    requests,
    '}',
    '',
    '/** Every notification and its params (`tool/result` from the daemon, `exit` from the client). */',
    'export interface Notifications {',
    notifications,
    '}',
    '',
    'export type RequestMethod = keyof Requests;',
    'export type NotificationMethod = keyof Notifications;',
    '',
    'export declare const PROTOCOL_VERSION: "1";',
    'export declare const TOOL_NAME: "project_cli";',
    `export declare const TOOL_ERROR_CODES: readonly ToolErrorCode[];`,
    `export declare const RpcErrorCode: { ${Object.entries(protocol.RpcErrorCode).map(([k, v]) => `readonly ${k}: ${v}`).join('; ')} };`,
    'export declare const BATCH_MAX_ITEMS: number;',
    '/** The method table: each method\'s params and result shape ids, and the schema file holding them. */',
    'export declare const METHODS: { readonly [M in RequestMethod]: { readonly params: string | null; readonly result: string } };',
    'export declare const NOTIFICATIONS: { readonly [M in NotificationMethod]: { readonly params: string | null } };',
    '/** Which schema file declares each shape id (`schemas/<file>.json#/$defs/<id>`, or the file\'s root). */',
    'export declare const SCHEMA_FILE_OF: { readonly [id: string]: string };',
    '/** The JSON Schemas of schemas/, by file name without `.json`. */',
    'export declare const schemas: { readonly [file: string]: object };',
    '',
  ].join('\n');
}

function title(schemas, id) {
  for (const doc of Object.values(schemas)) {
    if (doc.$defs?.[id]) return doc.$defs[id].title ?? id;
  }
  for (const [file, spec] of Object.entries(FILES)) if (spec.root === id) return schemas[file].title ?? id;
  throw new Error(`no shape ${id}`);
}

/** The runtime half of `toolgate/protocol`: plain JavaScript, reading the JSON Schemas beside it. */
export function buildRuntime(protocol) {
  const methods = Object.fromEntries(Object.entries(protocol.REQUESTS).map(([m, s]) => [m, { params: s.paramsId, result: s.resultId }]));
  const notifications = Object.fromEntries(Object.entries(protocol.NOTIFICATIONS).map(([m, s]) => [m, { params: s.paramsId }]));
  const fileOf = Object.fromEntries([...protocol.schemaFileOf.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return [
    '// Generated from src/protocol by npm run gen (scripts/gen-lib.mjs). Do not edit.',
    '// The runtime half of `toolgate/protocol`: method names, constants and the JSON Schemas.',
    "import { readFileSync } from 'node:fs';",
    '',
    `export const PROTOCOL_VERSION = ${JSON.stringify(protocol.PROTOCOL_VERSION)};`,
    `export const TOOL_NAME = ${JSON.stringify(protocol.TOOL_NAME)};`,
    `export const TOOL_ERROR_CODES = Object.freeze(${JSON.stringify(protocol.TOOL_ERROR_CODES)});`,
    `export const RpcErrorCode = Object.freeze(${JSON.stringify(protocol.RpcErrorCode)});`,
    `export const BATCH_MAX_ITEMS = ${protocol.BATCH_MAX_ITEMS};`,
    `export const METHODS = Object.freeze(${JSON.stringify(methods, null, 2)});`,
    `export const NOTIFICATIONS = Object.freeze(${JSON.stringify(notifications, null, 2)});`,
    `export const SCHEMA_FILE_OF = Object.freeze(${JSON.stringify(fileOf, null, 2)});`,
    `const FILES = ${JSON.stringify(Object.keys(FILES))};`,
    'export const schemas = Object.freeze(',
    "  Object.fromEntries(FILES.map((f) => [f, JSON.parse(readFileSync(new URL(`../schemas/${f}.json`, import.meta.url), 'utf8'))])),",
    ');',
    '',
  ].join('\n');
}

/**
 * The input schema of every action, keyed `module.method`, as `error.input_schema` of
 * INVALID_ACTION_INPUT shows it to the model: the same computation as
 * `inputJsonSchema` in src/cli-router/registry.ts (a unit test holds the two equal) —
 * JSON Schema of the input as accepted (`io: "input"`), a `pattern` dropped beside a `format`.
 */
export function buildActionInputs(protocol) {
  const concise = (node) => {
    if (Array.isArray(node)) return node.map(concise);
    if (!node || typeof node !== 'object') return node;
    const out = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' && 'format' in node) continue;
      out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, concise(v)])) : concise(value);
    }
    return out;
  };
  const defs = {};
  for (const name of protocol.ACTION_NAMES) {
    const spec = protocol.ACTIONS[name];
    const { $schema: _dialect, ...full } = protocol.toJSONSchema((spec.describedBy ?? spec.input)(), { io: 'input', unrepresentable: 'any' });
    defs[name] = concise(full);
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${BASE}action-inputs.json`,
    title: 'ToolgateActionInputs',
    description:
      'The input of each action (args.input of a project_cli call), keyed module.method: exactly the schema an INVALID_ACTION_INPUT error carries in error.input_schema. Generated from the action table (src/protocol/action-table.ts) by npm run gen.',
    $defs: defs,
  };
}

/** Every generated file, path (relative to the repository root) → content. */
export async function generateAll(protocol) {
  const schemas = buildSchemas(protocol);
  const files = {};
  for (const [file, doc] of Object.entries(schemas)) files[`schemas/${file}.json`] = json(doc);
  files['schemas/action-inputs.json'] = json(buildActionInputs(protocol));
  files['protocol/index.d.ts'] = await buildTypes(schemas, protocol);
  files['protocol/index.js'] = buildRuntime(protocol);
  return files;
}
