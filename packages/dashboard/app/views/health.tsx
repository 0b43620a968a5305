/**
 * Endpoint health, the circuit breaker of a destination (docs/adr/0007): a badge for the
 * table and the detail's title, and the detail's panel with the state, when the next probe
 * goes and the latest transitions (`GET /v1/destinations/:id/health`, polled every 2 s).
 */

import { api, type HealthState } from '../api.ts';
import { formatAge } from '../format.ts';
import { usePoll } from '../use-poll.ts';

const TITLES: Record<HealthState, string> = {
  healthy: 'The endpoint answers',
  degraded: 'The endpoint is failing: its failed deliveries are held, not dead',
  suspended: 'The circuit is open: one probe at a time until the endpoint answers',
};

/** A badge for a degraded or suspended destination (nothing when it is healthy). */
export function HealthBadge({ state, always = false }: { state: HealthState; always?: boolean }) {
  if (state === 'healthy' && !always) return null;
  return (
    <span class={`health health-${state}`} title={TITLES[state]} data-health={state}>
      {state}
    </span>
  );
}

const time = (iso: string) => new Date(iso).toLocaleTimeString(undefined, { hour12: false });

const percent = (rate: number) => `${Math.round(rate * 100)} %`;

/** What opened the circuit of a suspended destination, in words. */
function suspendedBy(reason: 'consecutive' | 'failure_rate' | null, failures: number, rate: number | null) {
  if (reason === 'failure_rate')
    return `its failure rate${rate === null ? '' : ` (${percent(rate)} of its requests)`} over the breaker window`;
  if (reason === 'consecutive') return `${failures} failures in a row`;
  return null;
}

export function HealthPanel({ id }: { id: string }) {
  const { data: health, error } = usePoll(() => api.health(id), 2_000, [id]);
  return (
    <section class="panel" aria-labelledby="health-title">
      <h2 id="health-title">Endpoint health</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {health && (
        <>
          <p>
            <HealthBadge state={health.state} always />
            {health.since && <span class="muted">since {time(health.since)}</span>}
          </p>
          {health.state === 'suspended' && health.suspendReason && (
            <p data-testid="suspend-reason" data-reason={health.suspendReason}>
              Opened by {suspendedBy(health.suspendReason, health.consecutiveFailures, health.failureRate)}.
            </p>
          )}
          <dl class="figures">
            <div>
              <dt>Failures in a row</dt>
              <dd data-testid="consecutive-failures">{health.consecutiveFailures}</dd>
            </div>
            <div>
              <dt>Failure rate</dt>
              <dd data-testid="failure-rate">
                {health.failureRate === null ? '—' : percent(health.failureRate)}
              </dd>
            </div>
            <div>
              <dt>Last error</dt>
              <dd>{health.lastErrorClass ?? '—'}</dd>
            </div>
            {health.nextProbeAt && (
              <div>
                <dt>Next probe</dt>
                <dd data-testid="next-probe">
                  in {formatAge(Math.max(0, Date.parse(health.nextProbeAt) - Date.now()))}
                </dd>
              </div>
            )}
          </dl>
          {health.transitions.length > 0 && (
            <table class="grid transitions">
              <thead>
                <tr>
                  <th>At</th>
                  <th>From</th>
                  <th>To</th>
                  <th>Why</th>
                </tr>
              </thead>
              <tbody>
                {health.transitions.map((t) => (
                  <tr key={`${t.at}-${t.to}`}>
                    <td>{time(t.at)}</td>
                    <td>{t.from}</td>
                    <td>
                      <HealthBadge state={t.to} always />
                    </td>
                    <td>
                      {t.reason}
                      {t.reason === 'failures' &&
                        t.errorClass &&
                        ` (${t.consecutiveFailures} × ${t.errorClass})`}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
