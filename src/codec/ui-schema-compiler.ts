/**
 * `ui_hints` → `ui_schema`: compiles descriptive hints into the component vocabulary of
 * `schemas/ui-schema.json` (version "1").
 *
 * Pure and deterministic: the same hints always give the same object with the same key order,
 * so `JSON.stringify` of the result is byte-stable — a live `tool/result` and a history replay of
 * the same stored hints carry identical `ui_schema`s.
 */
import type {
  BatchItemHint,
  EventHint,
  InviteStatusValue,
  UiHints,
} from './ui-hints.js';
import type { Memory } from '../protocol/actions.js';
import type { UiAction, UiCard, UiComponent, UiField, UiSchema, UiStatusBadge, UiTone } from './ui-schema-types.js';

/** Compiles hints to a `ui_schema` that validates against `schemas/ui-schema.json`. */
export function compileUiSchema(hints: UiHints): UiSchema {
  switch (hints.template) {
    case 'approval':
      return root(`Approve ${hints.action}?`, approvalCard(hints));
    case 'event_list':
      return root(plural(hints.count, 'event'), {
        type: 'list',
        items: hints.events.map((event) => eventCard(event)),
        empty_text: 'No events.',
      });
    case 'event': {
      const heading = hints.change === 'created' ? 'Event created' : 'Event updated';
      return root(heading, eventCard(hints.event, [deleteAction(hints.event.id)]));
    }
    case 'event_batch':
      return root(`Created ${hints.created} of ${plural(hints.items.length, 'event')}`, {
        type: 'stack',
        children: [
          badge(`${hints.created} created, ${hints.failed} failed`, batchTone(hints.created, hints.failed)),
          { type: 'list', items: hints.items.map(batchItemCard), empty_text: 'No items.' },
        ],
      });
    case 'event_batch_item':
      return root(
        hints.item.ok ? `Item ${hints.item.index} created` : `Item ${hints.item.index} failed`,
        batchItemCard(hints.item),
      );
    case 'event_deleted':
      return root('Event deleted', {
        type: 'card',
        title: 'Event deleted',
        children: [badge('Deleted', 'success'), field('Event ID', hints.event_id)],
      });
    case 'event_shared':
      return root('Event shared', {
        type: 'card',
        title: 'Event shared',
        subtitle: plural(hints.invites.length, 'invite'),
        children: [
          field('Event ID', hints.event_id),
          {
            type: 'list',
            items: hints.invites.map(
              (inv): UiCard => ({
                type: 'card',
                title: inv.user_id,
                children: [inviteBadge(inv.status), field('Invite ID', inv.invite_id)],
              }),
            ),
            empty_text: 'No invites.',
          },
        ],
      });
    case 'invite_status': {
      const { invite } = hints;
      const children: UiComponent[] = [
        inviteBadge(invite.status),
        field('Invite ID', invite.invite_id),
        field('Event ID', invite.event_id),
      ];
      if (invite.status === 'accepted') {
        children.push({
          type: 'actions',
          items: [toolCall('View event', 'calendar', 'read', { mode: 'event', event_id: invite.event_id })],
        });
      }
      const heading = `Invitation ${invite.status}`;
      return root(heading, { type: 'card', title: heading, children });
    }
    case 'contact_list':
      return root(plural(hints.count, 'contact'), {
        type: 'list',
        items: hints.contacts.map((c): UiCard => {
          const children: UiComponent[] = [];
          if (c.phone !== null) children.push(field('Phone', c.phone));
          children.push(field('User ID', c.user_id));
          return { type: 'card', title: c.name ?? c.phone ?? c.user_id, children };
        }),
        empty_text: 'No contacts found.',
      });
    case 'memory_saved':
      // Titled once: the schema says what happened, the card names the memory (as events are shown).
      return root('Memory saved', memoryCard(hints.memory));
  }
}

/** A memory as a card: its key as the title, then its content and when it was last written. */
function memoryCard(memory: Memory): UiCard {
  return { type: 'card', title: memory.key, children: [field('Content', memory.content), field('Updated at', memory.updated_at)] };
}

/** What approving the call changes: the thing it acts on as it is now, then the call's input. */
function approvalCard(hints: Extract<UiHints, { template: 'approval' }>): UiCard {
  const children: UiComponent[] = [badge('Awaiting approval', 'warning')];
  if (hints.event) children.push(eventCard(hints.event, [], WILL[hints.action]));
  if (hints.memory) {
    children.push({ type: 'card', title: hints.memory.key, subtitle: WILL[hints.action], children: [field('Content', hints.memory.content), field('Updated at', hints.memory.updated_at)] });
  }
  if (hints.user_ids) children.push(field('Invitees', hints.user_ids.join(', ')));
  for (const f of hints.input) children.push(field(f.name, f.value));
  children.push(field('Expires at', hints.expires_at));
  return { type: 'card', title: hints.action, subtitle: 'This exact call runs once, only if approved', children };
}

/** How the card names what the action does to the thing shown. */
const WILL: Readonly<Record<string, string>> = {
  'calendar.delete': 'Will be deleted',
  'calendar.share': 'Will be shared',
  'calendar.update': 'Will be changed',
  'memory.forget': 'Will be forgotten',
  'memory.update': 'Will be overwritten',
};

function root(title: string, component: UiComponent): UiSchema {
  return { version: '1', title, component };
}

/** An event as a card: time span, optional location/description, owner, id; then `actions`. */
function eventCard(event: EventHint, actions: UiAction[] = [], subtitle?: string): UiCard {
  const children: UiComponent[] = [{ type: 'datetime_range', start_at: event.start_at, end_at: event.end_at }];
  if (event.location !== null) children.push(field('Location', event.location));
  if (event.description !== null) children.push(field('Description', event.description));
  children.push(field('Owner', event.owner_id), field('Event ID', event.id));
  if (actions.length > 0) children.push({ type: 'actions', items: actions });
  return subtitle === undefined
    ? { type: 'card', title: event.title, children }
    : { type: 'card', title: event.title, subtitle, children };
}

function batchItemCard(item: BatchItemHint): UiCard {
  if (item.ok) return eventCard(item.event, [deleteAction(item.event.id)], `Item ${item.index}`);
  return {
    type: 'card',
    title: `Item ${item.index}`,
    children: [
      badge('Failed', 'danger'),
      field('Error', item.error.code),
      { type: 'text', text: item.error.message, style: 'muted' },
    ],
  };
}

function batchTone(created: number, failed: number): UiTone {
  if (failed === 0) return 'success';
  return created === 0 ? 'danger' : 'warning';
}

const INVITE_BADGES: Readonly<Record<InviteStatusValue, UiStatusBadge>> = {
  pending: { type: 'status_badge', label: 'Pending', tone: 'info' },
  accepted: { type: 'status_badge', label: 'Accepted', tone: 'success' },
  rejected: { type: 'status_badge', label: 'Rejected', tone: 'neutral' },
};

function inviteBadge(status: InviteStatusValue): UiStatusBadge {
  return { ...INVITE_BADGES[status] };
}

function deleteAction(eventId: string): UiAction {
  return toolCall('Delete event', 'calendar', 'delete', { event_id: eventId });
}

function toolCall(label: string, module: string, method: string, input: Record<string, unknown>): UiAction {
  return { label, kind: 'tool_call', module, method, input };
}

function badge(label: string, tone: UiTone): UiStatusBadge {
  return { type: 'status_badge', label, tone };
}

function field(label: string, value: string): UiField {
  return { type: 'field', label, value };
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
