import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Batch records: the provider batches created through a gateway (POST /v1/batches), kept so
 * that a batch's status and results can be found again through the gateway, with the provider
 * and integration it went to. One row per organisation and provider batch id; read within the
 * workspace that created it. `internal_output_file_id` is the gateway's own id of the output
 * file (PUT /v2/batches/:id), used instead of the provider's when set.
 *
 * No scopes are added: the routes use the data-plane `batches.read` and `batches.write`.
 */
export class Batches1763700000052 implements MigrationInterface {
  name = 'Batches1763700000052';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE control_plane.batches (
        organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
        id text NOT NULL CHECK (char_length(id) BETWEEN 1 AND 256),
        workspace_id uuid NOT NULL,
        api_key_id text,
        provider text NOT NULL DEFAULT '' CHECK (char_length(provider) <= 255),
        integration_slug text NOT NULL DEFAULT '' CHECK (char_length(integration_slug) <= 255),
        status text NOT NULL DEFAULT '' CHECK (char_length(status) <= 64),
        endpoint text NOT NULL DEFAULT '' CHECK (char_length(endpoint) <= 1024),
        input_file_id text NOT NULL DEFAULT '' CHECK (char_length(input_file_id) <= 256),
        output_file_id text NOT NULL DEFAULT '' CHECK (char_length(output_file_id) <= 256),
        error_file_id text NOT NULL DEFAULT '' CHECK (char_length(error_file_id) <= 256),
        internal_output_file_id text CHECK (char_length(internal_output_file_id) BETWEEN 1 AND 256),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (organisation_id, id)
      )`);
    await q.query(
      `CREATE INDEX batches_workspace_idx ON control_plane.batches (organisation_id, workspace_id, created_at DESC, id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE control_plane.batches`);
  }
}
