import type { Peer } from '../runtime/peer.js';

/**
 * One client connection as the transports see it: a daemon `Peer` (its id,
 * trust and notifications) plus which transport carries it. Defined here, by
 * the transports, not in the daemon: the daemon only needs the `Peer` part.
 */
export interface Connection extends Peer {
  transport: 'stdio' | 'ws' | 'mcp';
}
