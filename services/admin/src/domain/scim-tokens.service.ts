import { Conflict, NotFound, randomToken, safeEqual, sha256Hex, type SecretBox } from '@switchyard/core';
import { assertOrganisationAdmin, type Principal } from '@switchyard/access';
import type { ScimCredential } from '../store/entities.ts';
import type { ScimRepository } from '../store/scim.repository.ts';
import { isUuid } from './scim-shared.ts';

/**
 * The organisation's SCIM token: issued, shown masked, deleted by administrators, and checked
 * on every SCIM request. It is stored as a hash (to find it) and as ciphertext (to show it
 * masked); it is shown in full once, when it is issued.
 */
export class ScimTokenService {
  constructor(
    private readonly repo: ScimRepository,
    private readonly secrets: SecretBox,
  ) {}

  /** Issues the organisation's token; one that exists is replaced only when asked to. */
  async issueToken(
    principal: Principal,
    replaceExisting: boolean,
  ): Promise<{ token: string; credential: ScimCredential }> {
    assertOrganisationAdmin(principal);
    const token = `scim_${randomToken(32)}`;
    const credential: ScimCredential = {
      organisationId: principal.organisationId,
      tokenHash: sha256Hex(token),
      encryptedToken: this.secrets.encrypt(token),
      createdAt: new Date(),
      createdBy: principal.apiKeyId,
    };
    // One statement decides, so of concurrent first issues exactly one stores its token.
    if (replaceExisting) await this.repo.replaceCredential(credential);
    else if (!(await this.repo.insertCredential(credential))) {
      throw new Conflict(
        "The organisation has a SCIM token already: send 'replace_existing: true' to rotate it.",
        { param: 'replace_existing', code: 'scim_token_exists' },
      );
    }
    return { token, credential };
  }

  async getToken(principal: Principal): Promise<ScimCredential> {
    assertOrganisationAdmin(principal);
    const credential = await this.repo.findCredential(principal.organisationId);
    if (!credential) throw new NotFound('The organisation has no SCIM token.');
    return credential;
  }

  async deleteToken(principal: Principal): Promise<void> {
    assertOrganisationAdmin(principal);
    if (!(await this.repo.deleteCredential(principal.organisationId)))
      throw new NotFound('The organisation has no SCIM token.');
  }

  maskedToken(credential: ScimCredential): string {
    return `****${this.secrets.decrypt(credential.encryptedToken).slice(-4)}`;
  }

  /** Whether `presented` is the SCIM token of this organisation (and of no other). */
  async authenticate(organisationId: string, presented: string): Promise<boolean> {
    if (!isUuid(organisationId)) return false;
    const credential = await this.repo.findCredential(organisationId);
    return credential !== null && safeEqual(sha256Hex(presented), credential.tokenHash);
  }
}
