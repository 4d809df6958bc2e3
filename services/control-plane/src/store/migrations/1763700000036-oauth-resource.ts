import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * RFC 8707 resource indicators: the resource (e.g. an MCP server's URL) an authorization
 * code was asked for, and that the tokens issued for it are bound to (their audience).
 * Null: not bound to a resource, as before.
 */
export class OAuthResource1763700000036 implements MigrationInterface {
  name = 'OAuthResource1763700000036';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE control_plane.oauth_authorization_codes ADD COLUMN resource text`);
    await q.query(`ALTER TABLE control_plane.oauth_tokens ADD COLUMN resource text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE control_plane.oauth_tokens DROP COLUMN resource`);
    await q.query(`ALTER TABLE control_plane.oauth_authorization_codes DROP COLUMN resource`);
  }
}
