// A fresh PostgreSQL database per run, dropped at the end.
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';

/** How often, and how far apart, a drop refused by a busy autovacuum worker is tried. */
const DROP_ATTEMPTS = 20;
const DROP_RETRY_MS = 250;

export interface RunDatabase {
  name: string;
  /** The application role's URL for this database. */
  url: string;
  pool: pg.Pool;
  drop(): Promise<void>;
}

async function asOwner<T>(url: string, action: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function createRunDatabase(maintenanceUrl: string): Promise<RunDatabase> {
  const name = `e2e_${randomBytes(6).toString('hex')}`;
  await asOwner(maintenanceUrl, (c) => c.query(`CREATE DATABASE "${name}"`));
  const runUrl = new URL(maintenanceUrl);
  runUrl.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: runUrl.toString(), max: 2 });
  return {
    name,
    url: runUrl.toString(),
    pool,
    async drop() {
      await pool.end().catch(() => undefined);
      // FORCE ends any session a killed service left behind. It cannot end an autovacuum worker
      // busy in the database (PostgreSQL refuses with 42501 to a role that is not superuser):
      // that one finishes on its own within moments, so the drop is tried again.
      for (let attempt = 1; ; attempt++) {
        try {
          await asOwner(maintenanceUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
          return;
        } catch (err) {
          if ((err as { code?: string }).code !== '42501' || attempt === DROP_ATTEMPTS) throw err;
          await delay(DROP_RETRY_MS);
        }
      }
    },
  };
}
