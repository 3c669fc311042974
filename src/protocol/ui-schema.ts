/**
 * The tool UI vocabulary (`ui_schema`, version "1"): what `tool/result`
 * notifications and the `ui` history view carry, and what front ends render.
 * Every component is a plain object discriminated by `type`; `component`
 * nests recursively through `children` and `items`.
 */
import { z } from 'zod';
import { named } from './registry.js';

const ui = <T extends z.ZodType>(id: string, title: string, schema: T, description?: string): T =>
  named('ui-schema', id, schema, description, title);

export const UiTone = ui('tone', 'UiTone', z.enum(['success', 'warning', 'danger', 'info', 'neutral']));
export const UiTextStyle = ui('text_style', 'UiTextStyle', z.enum(['body', 'muted', 'emphasis', 'code']));

export const UiAction = ui(
  'action',
  'UiAction',
  z.strictObject({
    label: z.string(),
    kind: z.literal('tool_call'),
    module: z.string(),
    method: z.string(),
    input: z.record(z.string(), z.unknown()).describe('The `input` object of the suggested call.'),
  }),
);

export const UiCard = ui(
  'card',
  'UiCard',
  z.strictObject({
    type: z.literal('card'),
    title: z.string(),
    subtitle: z.string().optional(),
    get children(): z.ZodArray<typeof UiComponent> {
      return z.array(UiComponent);
    },
  }),
  'A bordered block with a heading and child components rendered top to bottom.',
);

export const UiList = ui(
  'list',
  'UiList',
  z.strictObject({
    type: z.literal('list'),
    get items(): z.ZodArray<typeof UiComponent> {
      return z.array(UiComponent);
    },
    empty_text: z.string().optional(),
  }),
  'An ordered list of components; `empty_text` is shown when `items` is empty.',
);

export const UiStack = ui(
  'stack',
  'UiStack',
  z.strictObject({
    type: z.literal('stack'),
    get children(): z.ZodArray<typeof UiComponent> {
      return z.array(UiComponent);
    },
  }),
  'Child components rendered top to bottom without chrome.',
);

export const UiField = ui(
  'field',
  'UiField',
  z.strictObject({ type: z.literal('field'), label: z.string(), value: z.string() }),
  'A labelled value.',
);

export const UiDatetimeRange = ui(
  'datetime_range',
  'UiDatetimeRange',
  z.strictObject({
    type: z.literal('datetime_range'),
    label: z.string().optional(),
    start_at: z.string(),
    end_at: z.string(),
    timezone: z.string().optional(),
  }),
  'A time span. `start_at` and `end_at` are ISO-8601 date-times as the action returned them; `timezone` (IANA name) is a display preference.',
);

export const UiStatusBadge = ui(
  'status_badge',
  'UiStatusBadge',
  z.strictObject({ type: z.literal('status_badge'), label: z.string(), tone: UiTone }),
  'A short outcome label coloured by `tone`.',
);

export const UiText = ui(
  'text',
  'UiText',
  z.strictObject({ type: z.literal('text'), text: z.string(), style: UiTextStyle.optional() }),
  'A paragraph of plain text (never markup).',
);

export const UiActions = ui(
  'actions',
  'UiActions',
  z.strictObject({ type: z.literal('actions'), items: z.array(UiAction) }),
  'Suggested follow-up calls a front end may offer as buttons. Choosing one makes an ordinary `project_cli` call with these args; it grants nothing.',
);

export const UiComponent = ui(
  'component',
  'UiComponent',
  z.discriminatedUnion('type', [UiCard, UiList, UiStack, UiField, UiDatetimeRange, UiStatusBadge, UiText, UiActions]),
  'One renderable component, discriminated by `type`.',
);

export const UiSchema = ui(
  'UiSchema',
  'UiSchema',
  z.strictObject({
    version: z.literal('1').describe('Vocabulary version. A front end that does not know the version should fall back to the message text.'),
    title: z.string().optional().describe('Short heading for the whole tool result.'),
    component: UiComponent,
  }),
  'A renderable tool UI, version 1. Carried as `ui_schema` by `tool/result` notifications and by tool messages in the `ui` history view. Front ends render `component` recursively; every component is a plain object discriminated by `type`.',
);

export type UiTone = z.infer<typeof UiTone>;
export type UiTextStyle = z.infer<typeof UiTextStyle>;
export type UiAction = z.infer<typeof UiAction>;
export type UiCard = z.infer<typeof UiCard>;
export type UiList = z.infer<typeof UiList>;
export type UiStack = z.infer<typeof UiStack>;
export type UiField = z.infer<typeof UiField>;
export type UiDatetimeRange = z.infer<typeof UiDatetimeRange>;
export type UiStatusBadge = z.infer<typeof UiStatusBadge>;
export type UiText = z.infer<typeof UiText>;
export type UiActions = z.infer<typeof UiActions>;
export type UiComponent = z.infer<typeof UiComponent>;
export type UiSchema = z.infer<typeof UiSchema>;
