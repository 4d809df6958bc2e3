/**
 * TypeORM, except two statements in SQL: upsertConnection is one conditional upsert (keeping
 * the stored private key unless a new one is given, a column no entity read exposes), and
 * claimDomain takes a transaction-scoped advisory lock.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { Conflict } from '@switchyard/core';
import { isUniqueViolation } from '@switchyard/adapters';
import {
  OrganisationEmailDomainEntity,
  SsoConnectionEntity,
  type OrganisationEmailDomain,
  type SsoConnection,
} from './entities.ts';

export type SsoConnectionFields = Omit<
  SsoConnection,
  'id' | 'organisationId' | 'clientId' | 'createdAt' | 'updatedAt'
>;

/** A claim that stands in the way of another: the same domain, or one covering the other. */
export interface DomainClash {
  domain: string;
  organisationId: string;
}

/** A fixed advisory lock key: domain claims are checked and made one at a time. */
const DOMAIN_CLAIM_LOCK = 0x55_0d_0a_11;

export class SsoRepository {
  constructor(private readonly manager: EntityManager) {}

  listConnections(organisationId: string): Promise<SsoConnection[]> {
    return this.manager
      .getRepository(SsoConnectionEntity)
      .find({ where: { organisationId }, order: { createdAt: 'ASC', clientId: 'ASC' } });
  }

  findConnection(organisationId: string, clientId: string): Promise<SsoConnection | null> {
    return this.manager.getRepository(SsoConnectionEntity).findOneBy({ organisationId, clientId });
  }

  /**
   * Creates the connection or replaces its fields, in one statement. `encryptedPrivateKey`
   * undefined keeps the stored private key (private_key_jwt), null drops it.
   */
  async upsertConnection(
    organisationId: string,
    clientId: string,
    fields: SsoConnectionFields,
    encryptedPrivateKey?: string | null,
  ): Promise<SsoConnection> {
    await this.manager.query(
      `INSERT INTO admin.sso_connections AS current
         (id, organisation_id, client_id, enabled, issuer, encrypted_client_secret,
          token_endpoint_auth_method, jwks, scopes, disable_auto_provision_user,
          created_at, updated_at, updated_by, encrypted_private_key)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, now(), now(), $11, $12)
       ON CONFLICT (organisation_id, client_id) DO UPDATE
         SET enabled = excluded.enabled, issuer = excluded.issuer,
             encrypted_client_secret = excluded.encrypted_client_secret,
             token_endpoint_auth_method = excluded.token_endpoint_auth_method,
             jwks = excluded.jwks, scopes = excluded.scopes,
             disable_auto_provision_user = excluded.disable_auto_provision_user,
             updated_at = now(), updated_by = excluded.updated_by,
             encrypted_private_key = CASE WHEN $13 THEN excluded.encrypted_private_key
                                          ELSE current.encrypted_private_key END`,
      [
        randomUUID(),
        organisationId,
        clientId,
        fields.enabled,
        fields.issuer,
        fields.encryptedClientSecret,
        fields.tokenEndpointAuthMethod,
        fields.jwks === null ? null : JSON.stringify(fields.jwks),
        JSON.stringify(fields.scopes),
        fields.disableAutoProvisionUser,
        fields.updatedBy,
        encryptedPrivateKey ?? null,
        encryptedPrivateKey !== undefined,
      ],
    );
    return (await this.findConnection(organisationId, clientId))!;
  }

  async deleteConnection(organisationId: string, clientId: string): Promise<boolean> {
    const result = await this.manager.getRepository(SsoConnectionEntity).delete({ organisationId, clientId });
    return (result.affected ?? 0) > 0;
  }

  listDomains(organisationId: string): Promise<OrganisationEmailDomain[]> {
    return this.manager
      .getRepository(OrganisationEmailDomainEntity)
      .find({ where: { organisationId }, order: { domain: 'ASC' } });
  }

  /**
   * Claims `domain` unless `clashOf` finds a claim in its way. Claims are made one at a time
   * (an advisory lock), so two organisations cannot claim overlapping domains at once.
   */
  async claimDomain(
    input: Omit<OrganisationEmailDomain, 'id' | 'createdAt'>,
    clashOf: (claims: OrganisationEmailDomain[]) => void,
  ): Promise<OrganisationEmailDomain> {
    return this.manager.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock($1)`, [DOMAIN_CLAIM_LOCK]);
      const labels = input.domain.split('.');
      // The domain itself, every domain above it, and (for a subdomain claim) every domain below it.
      const above = labels.map((_, i) => labels.slice(i).join('.'));
      const nearby = await manager
        .getRepository(OrganisationEmailDomainEntity)
        .createQueryBuilder('d')
        .where('d.domain IN (:...above)', { above })
        .orWhere('d.domain LIKE :below', { below: `%.${input.domain.replace(/[\\%_]/g, '\\$&')}` })
        .getMany();
      clashOf(nearby);
      const claim: OrganisationEmailDomain = { id: randomUUID(), createdAt: new Date(), ...input };
      try {
        await manager.getRepository(OrganisationEmailDomainEntity).insert(claim);
      } catch (err) {
        if (isUniqueViolation(err))
          throw new Conflict(`The domain '${input.domain}' is already claimed.`, {
            param: 'domain',
            code: 'domain_claimed',
          });
        throw err;
      }
      return claim;
    });
  }

  async deleteDomain(organisationId: string, domain: string): Promise<boolean> {
    const result = await this.manager
      .getRepository(OrganisationEmailDomainEntity)
      .delete({ organisationId, domain });
    return (result.affected ?? 0) > 0;
  }
}
