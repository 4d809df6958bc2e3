import { createHash } from 'node:crypto';
import type { Principal } from '@switchyard/access';
import type { KeyValueStore } from '@switchyard/adapters';
import type { Logger } from '@switchyard/core';

/** How long a session stays bound to its caller after it began (the upstream may end it sooner). */
const SESSION_TTL_MS = 24 * 60 * 60 * 1000;
/** Sessions whose owner this process remembers, so that most requests of a session read no store. */
const REMEMBERED = 10_000;

/**
 * Who a session belongs to: the user behind a caller where there is one (their OAuth tokens
 * rotate, their keys differ), else the key.
 */
export function sessionOwner(principal: Principal): string {
  return `${principal.organisationId}:${principal.userId ? `user:${principal.userId}` : `key:${principal.apiKeyId}`}`;
}

/**
 * The MCP sessions upstreams issued through the gateway, each bound to the caller that began it
 * (`initialize`), in the shared key-value store so that every replica knows them: a session id
 * presented by anyone else is not found, as an ended session is (MCP: HTTP 404, and the client
 * begins a new one). Session ids are stored hashed. When the store cannot be reached the
 * binding is not checked (logged): the ids are the upstream's unguessable ones.
 */
export class McpSessions {
  private readonly owners = new Map<string, string>();

  constructor(
    private readonly store: KeyValueStore,
    private readonly logger: Logger,
  ) {}

  private keyOf(serverId: string, sessionId: string): string {
    return `mcp-session:${serverId}:${createHash('sha256').update(sessionId).digest('base64url')}`;
  }

  private remember(key: string, owner: string): void {
    if (this.owners.size >= REMEMBERED) this.owners.delete(this.owners.keys().next().value!);
    this.owners.set(key, owner);
  }

  /** Binds a session the upstream just issued to the caller that began it. */
  async bind(serverId: string, sessionId: string, owner: string): Promise<void> {
    const key = this.keyOf(serverId, sessionId);
    this.remember(key, owner);
    try {
      await this.store.set(key, owner, SESSION_TTL_MS);
    } catch (err) {
      this.logger.warn('an MCP session could not be bound to its caller', { error: String(err) });
    }
  }

  /** Whether the caller may use the session: it began it, or the binding cannot be read. */
  async mayUse(serverId: string, sessionId: string, owner: string): Promise<boolean> {
    const key = this.keyOf(serverId, sessionId);
    const known = this.owners.get(key);
    if (known !== undefined) return known === owner;
    let stored: string | null;
    try {
      stored = await this.store.get(key);
    } catch (err) {
      this.logger.warn('an MCP session binding could not be read; the session is used unchecked', {
        error: String(err),
      });
      return true;
    }
    if (stored === null) return false;
    this.remember(key, stored);
    return stored === owner;
  }

  /** The session ended (DELETE answered): its binding goes. */
  async end(serverId: string, sessionId: string): Promise<void> {
    const key = this.keyOf(serverId, sessionId);
    this.owners.delete(key);
    await this.store.delete(key).catch(() => undefined);
  }
}
