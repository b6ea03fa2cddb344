/** Where `ctx.secret` reads a secret when the instance gives no source of its own: the environment. */
import { SteadError } from "../../errors.js";

/** A secret read by name, or STEAD_SECRET_MISSING naming it. */
export function readSecret(name: string, source: (name: string) => string | undefined): string {
  const value = source(name);
  if (typeof value !== "string" || value === "") {
    throw new SteadError("STEAD_SECRET_MISSING", `ctx.secret("${name}"): no secret of that name is set`, {
      fix: `set ${name} in the worker's environment (or give it to createStead's secretSource), then retry the run`,
    });
  }
  return value;
}

export const envSecret = (name: string): string => readSecret(name, (n) => process.env[n]);
