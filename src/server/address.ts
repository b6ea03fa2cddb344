/** Where the server listens by default, and which addresses are this machine's loopback. Imports nothing: the CLI reads it at every start. */
export const DEFAULT_PORT = 7420;

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
