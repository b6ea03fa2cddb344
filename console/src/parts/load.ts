/** A read a view shows: its value, its error, and a reload; re-read when any of `deps` changes. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export interface Loaded<T> {
  value: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

export function useLoad<T>(read: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ value: T | undefined; error: unknown; loading: boolean }>({ value: undefined, error: undefined, loading: true });
  const [again, setAgain] = useState(0);
  const seq = useRef(0);
  useEffect(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    read().then(
      (value) => mine === seq.current && setState({ value, error: undefined, loading: false }),
      // A failed re-read keeps what was shown, and says it failed.
      (error: unknown) => mine === seq.current && setState((s) => ({ value: s.value, error, loading: false })),
    );
  }, [...deps, again]);
  const reload = useCallback(() => setAgain((a) => a + 1), []);
  return { ...state, reload };
}
