/**
 * The references in docs/ are what the code renders now (the CLI's commander program, the OpenAPI
 * document, the error code table), and every relative link in README.md and docs/ leads somewhere:
 * a file that exists and, where the link names one, a heading that file has.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { renderReferences } from "../scripts/reference/index.js";
import { ROOT } from "./cli-helpers.js";

describe("the generated references", () => {
  it.each(renderReferences().map((r) => [r.path, r.text]))("%s is what the code renders", (path, text) => {
    const committed = existsSync(join(ROOT, path)) ? readFileSync(join(ROOT, path), "utf8") : "(missing)";
    expect(committed === text, `${path} is out of date: run npm run docs`).toBe(true);
  });

  it("the CLI reference names every command and option, and the exit codes", () => {
    const cli = readFileSync(join(ROOT, "docs", "reference", "cli.md"), "utf8");
    for (const heading of ["## stead run", "## stead sessions show", "## stead keys rotate", "## stead gc"]) expect(cli).toContain(`\n${heading}\n`);
    expect(cli).toContain("| `--idempotency-key <key>` |");
    expect(cli).toMatch(/\n {4}7 {2}the store is gone[^\n]*tampered/);
  });

  it("the HTTP reference names each route of the table with its permission", () => {
    const http = readFileSync(join(ROOT, "docs", "reference", "http.md"), "utf8");
    expect(http).toContain("### POST /api/v1/runs/{runId}/waits/{wait}/approve\n");
    expect(http).toMatch(/### GET \/api\/v1\/runs\n\n[^\n]+\n\nPermission: `runs\.read` \(least role: viewer\)\./);
  });
});

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : []));
}

/** Text outside fenced blocks and code spans: where a link is a link. */
const prose = (md: string): string => md.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "").replace(/`[^`\n]*`/g, "");

/** GitHub's anchors for a file's headings: lower case, punctuation dropped, spaces as `-`, repeats numbered. */
export function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of md.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "").matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const text = (m[1] ?? "").replace(/`/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Each relative link of `file` whose target file is missing, or whose `#anchor` its target has no heading for. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  const text = readFileSync(file, "utf8");
  for (const m of prose(text).matchAll(/\]\(([^)\s]+)(?: +"[^"]*")?\)/g)) {
    const link = m[1] ?? "";
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
    const [path = "", anchor] = link.split("#");
    const target = path === "" ? file : join(dirname(file), decodeURIComponent(path));
    const where = `${relative(ROOT, file)}: ${link}`;
    if (!existsSync(target)) broken.push(`${where} (no such file)`);
    else if (anchor && target.endsWith(".md") && statSync(target).isFile() && !anchors(readFileSync(target, "utf8")).has(anchor)) broken.push(`${where} (no such heading)`);
  }
  return broken;
}

describe("links in README.md and docs/", () => {
  it("every relative link points at a file that exists, and at a heading it has", () => {
    const files = [join(ROOT, "README.md"), ...markdownFiles(join(ROOT, "docs"))];
    expect(files.length).toBeGreaterThan(3);
    expect(files.flatMap(brokenLinks)).toEqual([]);
  });

  it("the anchors are GitHub's", () => {
    expect([...anchors("# Stead\n## Set-up: two commands\n## `stead run`\n### GET /api/v1/runs/{runId}\n## Stead\n```\n# not a heading\n```\n")]).toEqual([
      "stead",
      "set-up-two-commands",
      "stead-run",
      "get-apiv1runsrunid",
      "stead-1",
    ]);
  });
});
