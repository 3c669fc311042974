/**
 * The tool UI vocabulary (`ui_schema`, version "1"). `schemas/ui-schema.json`
 * is the source of truth front ends implement; these types are generated from
 * it at build time (scripts/gen-types.mjs), so the compiler cannot drift from it.
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
} from '../generated/ui-schema.js';
