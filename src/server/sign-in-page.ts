/**
 * The page the login URL opens (`/#token=…`): it takes the token from the fragment, removes it
 * from the address bar and history, exchanges it for the session cookie, and says who is signed
 * in. Static: nothing a user, model or tool wrote is in it, and what the server answers is set as
 * text, never as HTML. Its one script is allowed by hash (CSP), nothing else runs or loads.
 */
import { createHash } from "node:crypto";

const SCRIPT = `
(async () => {
  const say = (t) => { document.getElementById("state").textContent = t; };
  const m = /^#token=([A-Za-z0-9_-]{1,512})$/.exec(location.hash);
  history.replaceState(null, "", location.pathname);
  if (!m) { say("Open the sign-in URL that stead serve printed, or sign in with a token."); return; }
  try {
    const r = await fetch("/api/v1/auth/session", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token: m[1] }) });
    const b = await r.json();
    say(r.ok ? "Signed in as " + b.name + " (" + b.role + ") until " + b.expiresAt + "." : "Not signed in: " + b.detail + (b.fix ? " (" + b.fix + ")" : ""));
  } catch (e) { say("Not signed in: the server did not answer."); }
})();
`;

const HASH = createHash("sha256").update(SCRIPT).digest("base64");

export const SIGN_IN_CSP = `default-src 'none'; script-src 'sha256-${HASH}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

export const SIGN_IN_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>Stead</title></head>
<body><h1>Stead</h1><p id="state">Signing in…</p><script>${SCRIPT}</script></body></html>
`;

export function signInPage(): Response {
  return new Response(SIGN_IN_HTML, {
    status: 200,
    headers: { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": SIGN_IN_CSP, "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "Cache-Control": "no-store" },
  });
}
