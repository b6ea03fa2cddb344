/**
 * Who is signed in, and the browser session: the one-time URL's `#token=` is exchanged for the
 * HttpOnly session cookie and wiped from the address bar and history before anything else runs.
 */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Me } from "../../src/client/index.js";

/** Who is signed in (`GET /auth/me`): the token's name and role, null for an anonymous loopback reader, and the actions its role permits. */
export type { Me };

export const MeContext = createContext<Me>({ name: null, role: null, actions: [] });

export const useMe = (): Me => useContext(MeContext);

/** Opens the sign-in page (the shell's); a page offers it where signing in would allow more. */
export const SignInContext = createContext<() => void>(() => undefined);

export const useSignIn = (): (() => void) => useContext(SignInContext);

/** Whether the signed-in caller may do `action`; a page shows no button for what it may not. */
export const useMay = (): ((action: string) => boolean) => {
  const me = useMe();
  return (action) => me.actions.includes(action);
};

/** The fragment's token, taken out of the address bar; undefined when there is none. */
export function takeFragmentToken(): string | undefined {
  const m = /^#token=([A-Za-z0-9_.~+/=-]{1,512})$/.exec(location.hash);
  if (location.hash !== "") history.replaceState(null, "", location.pathname + location.search);
  return m?.[1];
}

export async function signIn(token: string): Promise<void> {
  const res = await fetch("/api/v1/auth/session", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) });
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { detail?: string; fix?: string } | null;
    throw new Error(`${body?.detail ?? `the server answered ${res.status}`}${body?.fix ? ` (${body.fix})` : ""}`);
  }
}

export async function signOut(): Promise<void> {
  await fetch("/api/v1/auth/logout", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
}

/** Who the server says the caller is; null when a token is needed and there is none. */
export async function whoAmI(): Promise<Me | null> {
  const res = await fetch("/api/v1/auth/me", { headers: { accept: "application/json" } });
  if (res.status === 401) return null;
  if (!res.ok) throw new Error(`the server answered ${res.status}`);
  return (await res.json()) as Me;
}
