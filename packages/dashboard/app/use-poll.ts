import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * Calls `load` now and then every `everyMs` (one call at a time: a slow answer delays the
 * next call instead of piling calls up), while the component is shown.
 */
export function usePoll<T>(load: () => Promise<T>, everyMs: number, deps: unknown[]) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [updatedAt, setUpdatedAt] = useState<Date | null>(null);
  const [nonce, setNonce] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const value = await loadRef.current();
        if (stopped) return;
        setData(value);
        setError(null);
        setUpdatedAt(new Date());
      } catch (err) {
        if (!stopped) setError(err instanceof Error ? err.message : String(err));
      }
      if (!stopped) timer = setTimeout(run, everyMs);
    };
    void run();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [...deps, everyMs, nonce]);

  return { data, error, updatedAt, refresh: () => setNonce((n) => n + 1) };
}
