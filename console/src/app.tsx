/**
 * The shell: sign-in, who is signed in, the navigation, the connection's state, and the page the
 * URL names. Every page is one file of pages/.
 */
import { useEffect, useState } from "preact/hooks";
import { MeContext, SignInContext, signIn, signOut, takeFragmentToken, whoAmI, type Me } from "./me.js";
import { restartLive, useConnection } from "./live.js";
import { Link, match, navigate, useLocation } from "./router.js";
import { ErrorBox, Loading } from "./parts/states.js";
import { SignInPage } from "./pages/sign-in.js";
import { RunsPage } from "./pages/runs.js";
import { RunPage } from "./pages/run.js";
import { InboxPage } from "./pages/inbox.js";
import { HoldsPage } from "./pages/holds.js";
import { SessionsPage } from "./pages/sessions.js";
import { SessionPage } from "./pages/session.js";
import { WorkspacePage } from "./pages/workspace.js";
import { DefinitionsPage } from "./pages/definitions.js";
import { NotFoundPage } from "./pages/not-found.js";

type Who = { state: "loading" } | { state: "signed-out"; error?: string } | { state: "in"; me: Me } | { state: "failed"; error: unknown };

export function App() {
  const [who, setWho] = useState<Who>({ state: "loading" });
  const check = async (token?: string) => {
    let error: string | undefined;
    if (token !== undefined) await signIn(token).catch((e: unknown) => (error = e instanceof Error ? e.message : String(e)));
    try {
      const me = await whoAmI();
      // A failed sign-in is said, even where reads are open without a token.
      setWho(me && error === undefined ? { state: "in", me } : { state: "signed-out", ...(error ? { error } : {}) });
      if (me && error === undefined) restartLive();
    } catch (e) {
      setWho({ state: "failed", error: e });
    }
  };
  useEffect(() => void check(takeFragmentToken()), []);

  if (who.state === "loading") return <Loading what="the console" />;
  if (who.state === "failed") return <ErrorBox error={who.error} retry={() => void check()} />;
  if (who.state === "signed-out") return <SignInPage onToken={(t) => void check(t)} {...(who.error ? { error: who.error } : {})} />;
  const out = async () => {
    await signOut().catch(() => undefined);
    setWho({ state: "signed-out" });
    navigate("/", { replace: true });
  };
  const toSignIn = () => setWho({ state: "signed-out" });
  return (
    <MeContext.Provider value={who.me}>
      <SignInContext.Provider value={toSignIn}>
        <Shell me={who.me} onSignOut={() => void out()} onSignIn={toSignIn} />
      </SignInContext.Provider>
    </MeContext.Provider>
  );
}

const NAV: [string, string][] = [
  ["/runs", "Runs"],
  ["/inbox", "Approvals"],
  ["/holds", "Holds"],
  ["/sessions", "Sessions"],
  ["/definitions", "Definitions"],
];

function Shell(props: { me: Me; onSignOut: () => void; onSignIn: () => void }) {
  const loc = useLocation();
  const connection = useConnection();
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/runs" class="brand">
          Stead
        </Link>
        <nav aria-label="Sections">
          {NAV.map(([href, label]) => (
            <Link key={href} href={href} aria-current={loc.path === href || loc.path.startsWith(`${href}/`) ? "page" : undefined}>
              {label}
            </Link>
          ))}
        </nav>
        <div class="who">
          <span title={props.me.role ? `role: ${props.me.role}` : "anonymous reader"}>
            {props.me.name ?? "anonymous"}
            {props.me.role ? ` (${props.me.role})` : ""}
          </span>
          {props.me.name !== null ? (
            <button type="button" onClick={props.onSignOut}>
              Sign out
            </button>
          ) : (
            // On loopback anyone may read without a token; acting needs one.
            <button type="button" onClick={props.onSignIn}>
              Sign in
            </button>
          )}
        </div>
      </header>
      {connection === "lost" ? (
        <p class="banner" role="status">
          The connection to the server was lost: reconnecting… (what is shown may be out of date)
        </p>
      ) : null}
      {connection === "ended" ? (
        <p class="banner" role="alert">
          This browser's session has ended (it expired, or the server restarted).{" "}
          <button type="button" onClick={props.onSignIn}>
            Sign in again
          </button>
        </p>
      ) : null}
      <main id="main" tabIndex={-1}>
        <Page path={loc.path} query={loc.query} />
      </main>
    </div>
  );
}

function Page(props: { path: string; query: URLSearchParams }) {
  const { path, query } = props;
  let m: Record<string, string> | undefined;
  if (path === "/" || path === "/runs") return <RunsPage query={query} />;
  if ((m = match("/runs/:runId/workspace", path))) return <WorkspacePage runId={m.runId!} query={query} />;
  if ((m = match("/runs/:runId/steps/:step", path))) return <RunPage runId={m.runId!} step={m.step} query={query} />;
  if ((m = match("/runs/:runId", path))) return <RunPage runId={m.runId!} query={query} />;
  if (path === "/inbox") return <InboxPage query={query} />;
  if ((m = match("/inbox/:runId/:wait", path))) return <InboxPage query={query} runId={m.runId} wait={m.wait} />;
  if (path === "/holds") return <HoldsPage query={query} />;
  if ((m = match("/holds/:holdId", path))) return <HoldsPage query={query} holdId={m.holdId} />;
  if (path === "/sessions") return <SessionsPage />;
  if ((m = match("/sessions/:sessionId", path))) return <SessionPage sessionId={m.sessionId!} />;
  if (path === "/definitions") return <DefinitionsPage />;
  return <NotFoundPage path={path} />;
}
