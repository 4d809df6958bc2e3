import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP relay in front of a server, for tests that cut a service's connections
 * mid-call (`stop`) and restore them on the same port (`start` again), or count them.
 */
export class TcpRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  /** 0 until the first start; then the port it listens on, kept across restarts. */
  port = 0;
  /** Connections accepted so far. */
  connections = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    this.server = createServer((client) => {
      this.connections++;
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  /** Stops listening and cuts every connection at once. */
  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
