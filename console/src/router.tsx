/**
 * Routing by URL: every run, step, hold, approval and session has a path a person can paste in a
 * chat. The history API; a plain `<a href>` stays a link (open in a new tab, copy), and a plain
 * left click is taken over.
 */
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useState } from "preact/hooks";

const listeners = new Set<() => void>();

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  for (const l of listeners) l();
}

addEventListener("popstate", () => {
  for (const l of listeners) l();
});

export interface Location {
  path: string;
  query: URLSearchParams;
}

export function useLocation(): Location {
  const [, setTick] = useState(0);
  useEffect(() => {
    const l = () => setTick((t) => t + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** The route's parameters when `pattern` (`/runs/:runId`) matches `path`, decoded; undefined when it does not. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split("/");
  const got = path.replace(/\/+$/, "").split("/");
  if (want.length !== got.length) return undefined;
  const out: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i]!;
    if (w.startsWith(":")) {
      if (g === "") return undefined;
      try {
        out[w.slice(1)] = decodeURIComponent(g);
      } catch {
        return undefined;
      }
    } else if (w !== g) return undefined;
  }
  return out;
}

/** A path from segments, each encoded (an id may hold any character). */
export function path(...segments: string[]): string {
  return "/" + segments.map(encodeURIComponent).join("/");
}

export function withQuery(to: string, query: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") q.set(k, v);
  return q.size > 0 ? `${to}?${q.toString()}` : to;
}

export function Link(props: { href: string; children: ComponentChildren; class?: string; title?: string; "aria-current"?: JSX.AriaAttributes["aria-current"] }) {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return (
    <a href={props.href} onClick={onClick} class={props.class} title={props.title} aria-current={props["aria-current"]}>
      {props.children}
    </a>
  );
}
