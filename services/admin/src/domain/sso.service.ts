import {
  BadRequest,
  Conflict,
  NotFound,
  UnprocessableEntity,
  maskSecret,
  type SecretBox,
} from '@switchyard/core';
import { assertOrganisationAdmin, type Principal } from '@switchyard/access';
import type { OrganisationEmailDomain, SsoConnection, TokenEndpointAuthMethod } from '../store/entities.ts';
import type { SsoRepository } from '../store/sso.repository.ts';
import { domainCovers, isPublicSuffix, isRootDomain, normaliseDomain } from './email-domains.ts';
import { matchingPublicJwk } from './jwk.ts';
import type { EmailDomainInput, SsoConnectionInput } from './sso.schemas.ts';

const SECRET_METHODS: readonly TokenEndpointAuthMethod[] = ['client_secret_basic', 'client_secret_post'];

/**
 * The organisation's OIDC connections (several, each named by its client_id) and the email
 * domains it claims. Client secrets are encrypted before they reach the database and only
 * ever leave it masked.
 */
export class SsoService {
  constructor(
    private readonly repo: SsoRepository,
    private readonly secrets: SecretBox,
  ) {}

  listConnections(principal: Principal): Promise<SsoConnection[]> {
    assertOrganisationAdmin(principal);
    return this.repo.listConnections(principal.organisationId);
  }

  async getConnection(principal: Principal, clientId: string): Promise<SsoConnection> {
    assertOrganisationAdmin(principal);
    const connection = await this.repo.findConnection(principal.organisationId, clientId);
    if (!connection) throw new NotFound(`SSO connection '${clientId}' not found.`);
    return connection;
  }

  /**
   * Creates or replaces the connection of `clientId`. A secret left out keeps the stored one
   * (as long as the method still takes one); a method that takes no secret drops it.
   */
  async upsertConnection(
    principal: Principal,
    clientId: string,
    input: SsoConnectionInput,
  ): Promise<{ connection: SsoConnection; created: boolean }> {
    assertOrganisationAdmin(principal);
    if (input.clientId !== undefined && input.clientId !== clientId) {
      throw new BadRequest("Invalid body parameter 'client_id': must be the client_id of the path.", {
        param: 'client_id',
        code: 'invalid_parameter',
      });
    }
    const method = input.tokenEndpointAuthMethod;
    if (method === 'private_key_jwt' && !input.jwks) {
      throw new BadRequest("'jwks' is required with token_endpoint_auth_method 'private_key_jwt'.", {
        param: 'jwks',
        code: 'missing_parameter',
      });
    }
    if (method !== 'private_key_jwt' && input.jwks !== undefined) {
      throw new BadRequest(
        `'jwks' is taken only with token_endpoint_auth_method 'private_key_jwt', not '${method}'.`,
        { param: 'jwks', code: 'invalid_parameter' },
      );
    }
    if (input.privateKey !== undefined) {
      if (method !== 'private_key_jwt')
        throw new BadRequest(
          `'private_key' is taken only with token_endpoint_auth_method 'private_key_jwt', not '${method}'.`,
          { param: 'private_key', code: 'invalid_parameter' },
        );
      if (!matchingPublicJwk(input.privateKey, input.jwks!.keys))
        throw new BadRequest("'private_key' must be a private JWK whose public key is one of 'jwks'.", {
          param: 'private_key',
          code: 'private_key_not_in_jwks',
        });
    }
    const takesSecret = SECRET_METHODS.includes(method);
    if (!takesSecret && input.clientSecret !== undefined) {
      throw new BadRequest(`'client_secret' is not used with token_endpoint_auth_method '${method}'.`, {
        param: 'client_secret',
        code: 'invalid_parameter',
      });
    }
    const existing = await this.repo.findConnection(principal.organisationId, clientId);
    let encryptedClientSecret: string | null = null;
    if (takesSecret) {
      if (input.clientSecret !== undefined) encryptedClientSecret = this.secrets.encrypt(input.clientSecret);
      else if (existing?.encryptedClientSecret) encryptedClientSecret = existing.encryptedClientSecret;
      else {
        throw new BadRequest(`'client_secret' is required with token_endpoint_auth_method '${method}'.`, {
          param: 'client_secret',
          code: 'missing_parameter',
        });
      }
    }
    const connection = await this.repo.upsertConnection(
      principal.organisationId,
      clientId,
      {
        enabled: input.enabled,
        issuer: input.issuer,
        encryptedClientSecret,
        tokenEndpointAuthMethod: method,
        jwks: method === 'private_key_jwt' ? input.jwks! : null,
        scopes: input.scopes,
        disableAutoProvisionUser: input.disableAutoProvisionUser,
        updatedBy: principal.apiKeyId,
      },
      method !== 'private_key_jwt'
        ? null
        : input.privateKey && this.secrets.encrypt(JSON.stringify(input.privateKey)),
    );
    return { connection, created: !existing };
  }

  async deleteConnection(principal: Principal, clientId: string): Promise<void> {
    assertOrganisationAdmin(principal);
    if (!(await this.repo.deleteConnection(principal.organisationId, clientId)))
      throw new NotFound(`SSO connection '${clientId}' not found.`);
  }

  maskedClientSecret(connection: SsoConnection): string | null {
    return connection.encryptedClientSecret
      ? maskSecret(this.secrets.decrypt(connection.encryptedClientSecret))
      : null;
  }

  listDomains(principal: Principal): Promise<OrganisationEmailDomain[]> {
    assertOrganisationAdmin(principal);
    return this.repo.listDomains(principal.organisationId);
  }

  /**
   * Claims a (normalised) domain for the organisation. `allow_subdomains` only on a root
   * domain; a domain another organisation claims, or that overlaps another organisation's
   * claim through its subdomains, is a 409, and so is the same domain twice.
   */
  async addDomain(principal: Principal, input: EmailDomainInput): Promise<OrganisationEmailDomain> {
    assertOrganisationAdmin(principal);
    const { domain, allowSubdomains } = input;
    if (isPublicSuffix(domain)) {
      throw new UnprocessableEntity(
        `'${domain}' is a public suffix, not a domain an organisation can claim.`,
        {
          param: 'domain',
          code: 'public_suffix',
        },
      );
    }
    if (allowSubdomains && !isRootDomain(domain)) {
      throw new UnprocessableEntity(
        `'allow_subdomains' is allowed only on a root domain (such as example.com or example.co.uk), not '${domain}'.`,
        { param: 'allow_subdomains', code: 'not_root_domain' },
      );
    }
    const organisationId = principal.organisationId;
    return this.repo.claimDomain(
      { organisationId, domain, allowSubdomains, createdBy: principal.apiKeyId },
      (nearby) => {
        for (const claim of nearby) {
          if (claim.organisationId === organisationId) {
            if (claim.domain === domain)
              throw new Conflict(`The domain '${domain}' is already added to this organisation.`, {
                param: 'domain',
                code: 'domain_exists',
              });
            continue;
          }
          const overlaps =
            domainCovers(claim, domain) ||
            (allowSubdomains && domainCovers({ domain, allowSubdomains }, claim.domain));
          if (overlaps)
            throw new Conflict(`The domain '${domain}' is claimed by another organisation.`, {
              param: 'domain',
              code: 'domain_claimed',
            });
        }
      },
    );
  }

  /** A name that is not a valid domain names no claim: a 404 like any other. */
  async deleteDomain(principal: Principal, domain: string): Promise<void> {
    assertOrganisationAdmin(principal);
    const normalised = normaliseDomain(domain);
    if ('domain' in normalised && (await this.repo.deleteDomain(principal.organisationId, normalised.domain)))
      return;
    throw new NotFound(`Email domain '${domain}' not found.`);
  }
}
