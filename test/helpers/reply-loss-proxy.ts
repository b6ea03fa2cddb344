import { createServer, connect, type Socket } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 in front of a Postgres server that can lose one message of the wire: a
 * client message containing `marker` (a prepared statement's name, which every Bind of it carries)
 * is either dropped on its way to the server (`"query"`: the server never sees it) or delivered, and
 * then the server's reply is dropped (`"reply"`: the server has already committed an autocommit
 * statement when its first reply bytes leave, since it flushes at ReadyForQuery). Either way both
 * sockets are then closed, as a network that fails mid-commit closes them; every other byte passes.
 */
export interface ReplyLossProxy {
  /** `url` with the host and port replaced by the proxy's. */
  readonly url: string;
  /** Loses the next message containing `marker` (once). */
  arm(marker: string, lose: "query" | "reply"): void;
  /** Whether the armed loss has happened. */
  fired(): boolean;
  close(): Promise<void>;
}

export async function replyLossProxy(targetUrl: string): Promise<ReplyLossProxy> {
  const target = new URL(targetUrl);
  let armed: { marker: Buffer; lose: "query" | "reply" } | undefined;
  let fired = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let dropNextReply = false;
    const cut = () => {
      fired = true;
      client.destroy();
      upstream.destroy();
    };
    client.on("data", (chunk) => {
      if (armed && chunk.includes(armed.marker)) {
        const lose = armed.lose;
        armed = undefined;
        if (lose === "query") return cut();
        dropNextReply = true;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (dropNextReply) return cut();
      client.write(chunk);
    });
    for (const s of [client, upstream]) {
      s.on("error", () => undefined);
      s.on("close", () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no TCP address");
  const url = new URL(targetUrl);
  url.hostname = "127.0.0.1";
  url.port = String(address.port);
  return {
    url: url.toString(),
    arm(marker, lose) {
      armed = { marker: Buffer.from(marker), lose };
      fired = false;
    },
    fired: () => fired,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
