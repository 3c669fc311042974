/**
 * The session panel: a bearer token in, a session out — and sign-out.
 *
 * The token lives in this object only, in memory: it is never logged,
 * stored, put back in a field or shown after it was used, so reloading the
 * page forgets it (the page says so where the token is pasted). It is reused
 * only to reopen the session after a reconnect. A `#token=…` fragment (the
 * link `npm run inspector` and the demo print) is read and removed from the
 * address bar before anything else runs; a fragment never reaches a server.
 */
import { byId, el, hide, setBusy, showError, str, strArray, type Announcer } from './dom.js';
import type { RpcClient } from './rpc-client.js';
import { RpcError, describeError } from './rpc-client.js';
import type { SessionOpenResult } from './wire.js';

export interface SessionEvents {
  /** A session opened; `restoring` when it is the same token reopened after a reconnect. */
  opened(session: SessionOpenResult, restoring: boolean): void | Promise<void>;
  /** The person signed out: forget everything of the session. */
  signedOut(): void;
}

export class SessionPanel {
  /** The open session, or null. */
  session: SessionOpenResult | null = null;
  private token: string | null = null;
  private readonly form = byId<HTMLFormElement>('session-form');
  private readonly tokenInput = byId<HTMLTextAreaElement>('token-input');
  private readonly agentInput = byId<HTMLInputElement>('agent-input');
  private readonly openButton = byId<HTMLButtonElement>('open-session');
  private readonly error = byId('session-error');
  private readonly info = byId('session-info');
  private readonly user = byId('session-user');
  private readonly skills = byId('session-skills');
  private readonly actions = byId('session-actions');
  private readonly headerUser = byId('header-user');
  private readonly headerUserName = byId('header-user-name');
  private readonly signOutButton = byId<HTMLButtonElement>('header-sign-out');

  constructor(
    private readonly connection: () => RpcClient | null,
    private readonly events: SessionEvents,
    private readonly announcer: Announcer,
  ) {
    this.form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const token = this.tokenInput.value.trim();
      this.tokenInput.value = ''; // never shown again once used
      if (!token) {
        showError(this.error, 'Paste a bearer token first.');
        this.tokenInput.focus();
        return;
      }
      void this.open(token, false);
    });
    this.tokenInput.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) {
        ev.preventDefault();
        this.form.requestSubmit();
      }
    });
    this.signOutButton.addEventListener('click', () => this.signOut());
  }

  /** Takes a `#token=…` off the address bar (before anything can log the URL); keeps it for the first connection. */
  takeTokenFromFragment(loc: Location, hist: History): void {
    const hash = loc.hash.startsWith('#') ? loc.hash.slice(1) : '';
    if (!hash) return;
    const params = new URLSearchParams(hash);
    if (!params.has('token')) return;
    const token = (params.get('token') ?? '').trim();
    params.delete('token');
    const rest = params.toString();
    hist.replaceState(hist.state, '', `${loc.pathname}${loc.search}${rest ? `#${rest}` : ''}`);
    if (token) this.token = token;
  }

  /** A new connection is ready: reopen the session it had, if any. */
  async reopen(): Promise<void> {
    if (this.token) await this.open(this.token, true);
  }

  /** The connection closed: the daemon forgot the session, the token is kept to reopen it. */
  connectionLost(): void {
    const had = this.session !== null;
    this.session = null;
    this.render();
    if (had) this.announcer.say('Connection lost; the session will be reopened when the daemon is back.');
  }

  private async open(token: string, restoring: boolean): Promise<void> {
    hide(this.error);
    const rpc = this.connection();
    if (!rpc) {
      this.token = token;
      showError(this.error, 'Not connected yet: the session opens as soon as the daemon answers.');
      return;
    }
    const params: { auth: { type: 'bearer'; token: string }; agent?: string } = { auth: { type: 'bearer', token } };
    const agent = this.agentInput.value.trim();
    if (agent) params.agent = agent;
    setBusy(this.openButton, true, 'Opening…');
    try {
      const result = await rpc.request<SessionOpenResult>('session/open', params, { timeoutMs: 20_000 });
      this.token = token;
      this.session = {
        session_id: str(result?.session_id),
        user_id: str(result?.user_id),
        enabled_skills: strArray(result?.enabled_skills),
        allowed_actions: strArray(result?.allowed_actions),
      };
      this.render();
      this.announcer.say(`Session open for ${this.session.user_id}.`);
      await this.events.opened(this.session, restoring);
    } catch (err) {
      if (err instanceof RpcError && err.unauthorized) this.token = null; // refused: never retry it
      this.session = null;
      this.render(); // the token form again, so another token can be pasted
      showError(this.error, `Could not open the session: ${describeError(err)}`);
    } finally {
      setBusy(this.openButton, false);
    }
  }

  /** Forgets the token and the session; the caller drops the connection so the daemon forgets it too. */
  signOut(): void {
    if (!this.session && !this.token) return;
    this.token = null;
    this.session = null;
    this.render();
    this.announcer.say('Signed out. The token is forgotten.');
    this.events.signedOut();
    this.tokenInput.focus();
  }

  private render(): void {
    const s = this.session;
    document.body.dataset['session'] = s ? 'open' : 'none';
    this.form.hidden = s !== null;
    this.info.hidden = s === null;
    this.headerUser.hidden = s === null;
    if (!s) return;
    this.user.textContent = s.user_id;
    this.skills.replaceChildren(...chips(s.enabled_skills, 'No skills'));
    this.actions.replaceChildren(...chips(s.allowed_actions, 'No actions'));
    this.headerUserName.textContent = s.user_id;
  }
}

function chips(values: readonly string[], emptyText: string): HTMLLIElement[] {
  if (values.length === 0) return [el('li', 'chip chip-empty', emptyText)];
  return values.map((v) => {
    const li = el('li', 'chip');
    li.append(el('code', '', v));
    return li;
  });
}
