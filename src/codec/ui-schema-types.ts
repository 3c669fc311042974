/**
 * The tool UI vocabulary (`ui_schema`, version "1"), written by hand.
 *
 * Mirrors `schemas/ui-schema.json`, which is the source of truth front ends implement; the
 * types generated from it into `src/generated/ui-schema.ts` are structurally the same, so a
 * value of one type is assignable to the other. Change both together.
 */

export type UiTone = 'success' | 'warning' | 'danger' | 'info' | 'neutral';

export type UiTextStyle = 'body' | 'muted' | 'emphasis' | 'code';

/** One renderable component, discriminated by `type`. */
export type UiComponent =
  | UiCard
  | UiList
  | UiStack
  | UiField
  | UiDatetimeRange
  | UiStatusBadge
  | UiText
  | UiActions;

/** The root of a compiled tool UI. */
export interface UiSchema {
  version: '1';
  title?: string;
  component: UiComponent;
}

/** A bordered block with a heading and child components rendered top to bottom. */
export interface UiCard {
  type: 'card';
  title: string;
  subtitle?: string;
  children: UiComponent[];
}

/** An ordered list of components; `empty_text` is shown when `items` is empty. */
export interface UiList {
  type: 'list';
  items: UiComponent[];
  empty_text?: string;
}

/** Child components rendered top to bottom without chrome. */
export interface UiStack {
  type: 'stack';
  children: UiComponent[];
}

/** A labelled value. */
export interface UiField {
  type: 'field';
  label: string;
  value: string;
}

/** A time span; instants are ISO-8601 strings as the action returned them. */
export interface UiDatetimeRange {
  type: 'datetime_range';
  label?: string;
  start_at: string;
  end_at: string;
  timezone?: string;
}

/** A short outcome label coloured by `tone`. */
export interface UiStatusBadge {
  type: 'status_badge';
  label: string;
  tone: UiTone;
}

/** A paragraph of plain text (never markup). */
export interface UiText {
  type: 'text';
  text: string;
  style?: UiTextStyle;
}

/** Suggested follow-up calls a front end may offer as buttons; choosing one grants nothing. */
export interface UiActions {
  type: 'actions';
  items: UiAction[];
}

/** One suggested `project_cli` call. */
export interface UiAction {
  label: string;
  kind: 'tool_call';
  module: string;
  method: string;
  input: { [k: string]: unknown };
}
