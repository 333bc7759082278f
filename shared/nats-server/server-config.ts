/** How to start one nats-server: its ports, store and, in a cluster, its name and routes. */
export interface NatsServerOptions {
  binary: string;
  host: string;
  port: number;
  /** The JetStream store directory; the same directory on a restart keeps every stream. The config file is written here too. */
  storeDir: string;
  /** The server's name: JetStream peers in a cluster know each other by it, so it must be unique there and kept across restarts. */
  serverName?: string;
  /** Joins a cluster: its name, the port this server takes routes on, and the route URLs of the other servers. */
  cluster?: { name: string; port: number; routes: readonly string[] };
  /** JetStream `sync_interval` (`"always"` flushes every write before acknowledging it, `"2m"`); the server's default when unset. */
  syncInterval?: string;
  /** JetStream `max_file_store` (`"64MB"`): the store's size; nats-server's default is 75 % of the disk free at its start. */
  maxFileStore?: string;
  /** Lines appended to the generated configuration, for settings the options above do not cover. */
  extraConfig?: string;
}

/** The config file's text. Strings are JSON-quoted, which the config format accepts. */
export function serverConfig(options: NatsServerOptions): string {
  const quote = (text: string) => JSON.stringify(text);
  const lines = [`listen: ${quote(`${options.host}:${options.port}`)}`];
  if (options.serverName !== undefined) lines.push(`server_name: ${quote(options.serverName)}`);
  lines.push("jetstream {", `  store_dir: ${quote(options.storeDir)}`);
  if (options.syncInterval !== undefined) lines.push(`  sync_interval: ${quote(options.syncInterval)}`);
  if (options.maxFileStore !== undefined) {
    // A size is written bare: quoted, nats-server reads it as a string and refuses the config.
    if (!/^\d+(K|M|G|T)?B?$/i.test(options.maxFileStore))
      throw new Error(`maxFileStore: ${quote(options.maxFileStore)} is not a size (64MB, 10G, 1073741824)`);
    lines.push(`  max_file_store: ${options.maxFileStore}`);
  }
  lines.push("}");
  if (options.cluster) {
    const { name, port, routes } = options.cluster;
    lines.push(
      "cluster {",
      `  name: ${quote(name)}`,
      `  listen: ${quote(`${options.host}:${port}`)}`,
      `  routes: [${routes.map(quote).join(", ")}]`,
      "}",
    );
  }
  if (options.extraConfig) lines.push(options.extraConfig);
  return `${lines.join("\n")}\n`;
}
