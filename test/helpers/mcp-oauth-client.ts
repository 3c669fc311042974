/**
 * The client side of the MCP authorization flow, as a remote MCP host runs
 * it, with the official TypeScript client (`@modelcontextprotocol/client`
 * v2): an in-memory `OAuthClientProvider` (dynamic registration, PKCE,
 * tokens kept in memory) whose `redirectToAuthorization` hands the
 * authorization URL to a user agent (`authorize`, e.g. the test provider's
 * cookie-keeping redirect follower) instead of a browser, and
 * `connectWithOAuth`, which connects with no token, lets the SDK follow the
 * 401 to the resource metadata and the authorization server, finishes the
 * code flow with `transport.finishAuth` and reconnects — the SDK's example
 * client's sequence.
 */
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';

/** Follows an authorization URL to the redirect URI; resolves with that redirect. */
export type UserAgent = (authorizationUrl: URL, redirectUrl: string) => Promise<URL>;

/** A loopback redirect URI: nothing listens there, the user agent stops at it. */
export const REDIRECT_URL = 'http://127.0.0.1:1/oauth/callback';

export class InMemoryOAuthClientProvider implements OAuthClientProvider {
  private info: StoredOAuthClientInformation | undefined;
  private saved: StoredOAuthTokens | undefined;
  private verifier: string | undefined;
  private discovery: OAuthDiscoveryState | undefined;
  /** Every authorization URL the SDK sent the user to, in order. */
  readonly authorizationUrls: URL[] = [];
  /** The redirect of the last authorization (carries `code`, `state`, `iss`). */
  callback: URL | undefined;

  constructor(
    private readonly userAgent: UserAgent,
    private readonly metadata: Partial<OAuthClientMetadata> = {},
  ) {}

  get redirectUrl(): string {
    return REDIRECT_URL;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'toolgate e2e MCP host',
      redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...this.metadata,
    };
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    return this.info;
  }

  saveClientInformation(info: StoredOAuthClientInformation): void {
    this.info = info;
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.saved = tokens;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    this.authorizationUrls.push(authorizationUrl);
    this.callback = await this.userAgent(authorizationUrl, REDIRECT_URL);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error('no PKCE code verifier saved');
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.info = undefined;
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }
}

export interface OAuthConnection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Whether the first connect was refused (401) and the code flow ran. */
  authorized: boolean;
  close(): Promise<void>;
}

/**
 * Connects `provider` to the MCP endpoint `url`. Without a token the first
 * connect ends in `UnauthorizedError` once the SDK sent the user agent through
 * the authorization server; the code is exchanged (`finishAuth`, which also
 * checks the response's `iss`) and a new transport connects with the token.
 */
export async function connectWithOAuth(url: string, provider: InMemoryOAuthClientProvider): Promise<OAuthConnection> {
  const open = async (transport: StreamableHTTPClientTransport): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> => {
    const client = new Client({ name: 'toolgate-e2e-oauth-host', version: '0.0.0' });
    await client.connect(transport);
    return { client, transport };
  };
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  let authorized = false;
  let opened: { client: Client; transport: StreamableHTTPClientTransport };
  try {
    opened = await open(first);
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
    const callback = provider.callback;
    if (!callback) throw new Error('refused without an authorization redirect', { cause: err });
    const error = callback.searchParams.get('error');
    if (error) throw new Error(`authorization failed: ${error} ${callback.searchParams.get('error_description') ?? ''}`, { cause: err });
    // The transport that met the 401 knows the resource metadata URL from its WWW-Authenticate.
    await first.finishAuth(callback.searchParams);
    authorized = true;
    opened = await open(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  }
  return {
    ...opened,
    authorized,
    close: async () => {
      await opened.client.close();
    },
  };
}
