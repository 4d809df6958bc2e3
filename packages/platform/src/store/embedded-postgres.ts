import { mkdirSync } from 'node:fs';

export interface EmbeddedPostgres {
  url: string;
  close(): Promise<void>;
}

/**
 * PGlite (Postgres compiled to WebAssembly) served over the Postgres wire protocol on
 * loopback, so services use the same `pg` driver, SQL and migrations as in production.
 * The server multiplexes connections onto one session and holds other connections back
 * while one is inside a transaction, which serialises transactions.
 */
export async function startEmbeddedPostgres(dataDir?: string): Promise<EmbeddedPostgres> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // Loaded here, not with the module: only the all-in-one mode and tests start one.
  const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-socket'),
  ]);
  const db = await PGlite.create(dataDir ?? 'memory://');
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 64 });
  await server.start();
  const address = server.getServerConn();
  return {
    url: `postgres://postgres:postgres@${address}/postgres`,
    close: async () => {
      await server.stop();
      await db.close();
    },
  };
}
