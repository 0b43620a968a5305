/** What the operator dashboard and the portal share: the hash route and the outage banner. */

import { useEffect, useState } from 'preact/hooks';
import { watchOutage } from './api.ts';

export function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return hash.replace(/^#/, '') || '/';
}

/**
 * Shown while the API answers `503 unavailable`: its store (or Redis) is down, so what the
 * page shows may be out of date; the views keep polling and it goes on the next other answer.
 */
export function OutageBanner() {
  const [retryAfter, setRetryAfter] = useState<number | null>(null);
  useEffect(() => watchOutage(setRetryAfter), []);
  if (retryAfter === null) return null;
  return (
    <div class="outage" role="alert">
      Sluice cannot reach its store right now (503 unavailable): what is shown may be out of date. Nothing
      accepted is lost; retrying every {retryAfter} s.
    </div>
  );
}
