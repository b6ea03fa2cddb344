/**
 * A command a form sends: `busy` while it is in flight (the form's button is disabled, so a
 * second press sends nothing), and the refusal it met, to show beside the form.
 */
import { useState } from "preact/hooks";

export interface Action {
  busy: boolean;
  error: unknown;
  /** Runs `send`; a throw is kept as `error`, not rethrown. */
  run(send: () => Promise<void>): Promise<void>;
  clear(): void;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  return {
    busy,
    error,
    clear: () => setError(undefined),
    run: async (send) => {
      setBusy(true);
      setError(undefined);
      try {
        await send();
      } catch (e) {
        setError(e);
      } finally {
        setBusy(false);
      }
    },
  };
}
