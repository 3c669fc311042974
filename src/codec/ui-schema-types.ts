/**
 * The tool UI vocabulary (`ui_schema`, version "1"), declared once in
 * src/protocol/ui-schema.ts; `schemas/ui-schema.json`, which front ends
 * implement, is generated from the same declaration (`npm run gen`).
 */
export type {
  UiAction,
  UiActions,
  UiCard,
  UiComponent,
  UiDatetimeRange,
  UiField,
  UiList,
  UiSchema,
  UiStack,
  UiStatusBadge,
  UiText,
  UiTextStyle,
  UiTone,
} from '../protocol/ui-schema.js';
