/**
 * Reads of domains and connections are TypeORM. The login states are SQL: the table has no
 * entity, takeState is one DELETE ... RETURNING (so of two callbacks with one state exactly one
 * wins) and expiry is decided by the database clock; encryptedPrivateKey reads a column the
 * connection entity does not map, so that no other read carries the key.
 */
import type { EntityManager } from 'typeorm';
import {
  OrganisationEmailDomainEntity,
  SsoConnectionEntity,
  type OrganisationEmailDomain,
  type SsoConnection,
} from './entities.ts';

/** One SSO login between the redirect to the identity provider and its callback. */
export interface SsoLoginState {
  organisationId: string;
  clientId: string;
  nonce: string;
  encryptedCodeVerifier: string;
  redirectUri: string;
  redirectTo: string;
}

/** What SSO logins read and keep: claims by domain, connections, private keys, one-time states. */
export class SsoLoginRepository {
  constructor(private readonly manager: EntityManager) {}

  /** The claims of `domain` and of every domain above it (the ones that may cover it). */
  claimsAbove(domain: string): Promise<OrganisationEmailDomain[]> {
    const labels = domain.split('.');
    const above = labels.map((_, i) => labels.slice(i).join('.'));
    return this.manager
      .getRepository(OrganisationEmailDomainEntity)
      .createQueryBuilder('d')
      .where('d.domain IN (:...above)', { above })
      .getMany();
  }

  domainsOf(organisationId: string): Promise<OrganisationEmailDomain[]> {
    return this.manager.getRepository(OrganisationEmailDomainEntity).findBy({ organisationId });
  }

  connectionsOf(organisationId: string): Promise<SsoConnection[]> {
    return this.manager
      .getRepository(SsoConnectionEntity)
      .find({ where: { organisationId }, order: { createdAt: 'ASC', clientId: 'ASC' } });
  }

  /** Every organisation's connection of this client_id (client_ids are unique per organisation only). */
  connectionsByClientId(clientId: string): Promise<SsoConnection[]> {
    return this.manager.getRepository(SsoConnectionEntity).findBy({ clientId });
  }

  async encryptedPrivateKey(organisationId: string, clientId: string): Promise<string | null> {
    const rows: Array<{ encrypted_private_key: string | null }> = await this.manager.query(
      `SELECT encrypted_private_key FROM admin.sso_connections WHERE organisation_id = $1 AND client_id = $2`,
      [organisationId, clientId],
    );
    return rows[0]?.encrypted_private_key ?? null;
  }

  async saveState(stateHash: string, state: SsoLoginState, ttlMs: number): Promise<void> {
    // Expired states of abandoned logins go as new ones come.
    await this.manager.query(`DELETE FROM admin.sso_login_states WHERE expires_at < now()`);
    await this.manager.query(
      `INSERT INTO admin.sso_login_states
         (state_hash, organisation_id, client_id, nonce, encrypted_code_verifier, redirect_uri, redirect_to, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))`,
      [
        stateHash,
        state.organisationId,
        state.clientId,
        state.nonce,
        state.encryptedCodeVerifier,
        state.redirectUri,
        state.redirectTo,
        ttlMs / 1000,
      ],
    );
  }

  /** Takes the live state of this hash, once: a second callback with it finds nothing. */
  async takeState(stateHash: string): Promise<SsoLoginState | null> {
    const result: unknown[] = await this.manager.query(
      `DELETE FROM admin.sso_login_states WHERE state_hash = $1
       RETURNING organisation_id, client_id, nonce, encrypted_code_verifier, redirect_uri, redirect_to,
                 expires_at > now() AS live`,
      [stateHash],
    );
    // The Postgres driver answers a DELETE with [rows, count].
    const rows = (Array.isArray(result[0]) ? result[0] : result) as Array<{
      organisation_id: string;
      client_id: string;
      nonce: string;
      encrypted_code_verifier: string;
      redirect_uri: string;
      redirect_to: string;
      live: boolean;
    }>;
    const row = rows[0];
    if (!row?.live) return null;
    return {
      organisationId: row.organisation_id,
      clientId: row.client_id,
      nonce: row.nonce,
      encryptedCodeVerifier: row.encrypted_code_verifier,
      redirectUri: row.redirect_uri,
      redirectTo: row.redirect_to,
    };
  }
}
