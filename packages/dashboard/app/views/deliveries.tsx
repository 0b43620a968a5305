/**
 * Deliveries with their attempts: the recent ones of a destination (polled), and the rows
 * that the dead-letter and event views share. A row opens to its attempts; a dead delivery
 * can be replayed from it, and a pending one waiting out its backoff retried now.
 */

import { Fragment } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { CanWrite } from '../access.ts';
import { type Attempt, api, type Delivery, type DeliveryStatus } from '../api.ts';
import { formatTime } from '../format.ts';
import { usePoll } from '../use-poll.ts';

const EXCERPT = 1_024;

/** What each attempt sent: `POST <url>` with the event's payload as its JSON body (an excerpt). */
function RequestExcerpt({ eventId, url }: { eventId: string; url: string | undefined }) {
  const [body, setBody] = useState<string | null>(null);
  useEffect(() => {
    void api.event(eventId).then(
      (e) => {
        const text = JSON.stringify(e.payload, null, 2);
        setBody(text.length > EXCERPT ? `${text.slice(0, EXCERPT)}…` : text);
      },
      (err: Error) => setBody(`(not readable: ${err.message})`),
    );
  }, [eventId]);
  return (
    <div class="request">
      <h3>Request</h3>
      <p class="request-line">
        <code>POST {url ?? 'the destination URL'}</code> · <code>webhook-id: {eventId}</code>
      </p>
      <pre class="payload" data-testid="request-excerpt">
        {body ?? 'Loading…'}
      </pre>
    </div>
  );
}

function Attempts({ id, url }: { id: string; url?: string | undefined }) {
  const { data, error } = usePoll(() => api.delivery(id), 3_000, [id]);
  if (error) return <p class="error">{error}</p>;
  if (!data) return <p class="loading">Loading attempts…</p>;
  return (
    <>
      <RequestExcerpt eventId={data.eventId} url={url} />
      <h3>Attempts and responses</h3>
      {data.attempts.length === 0 ? (
        <p class="muted">No attempt yet.</p>
      ) : (
        <AttemptTable id={id} attempts={data.attempts} />
      )}
    </>
  );
}

function AttemptTable({ id, attempts }: { id: string; attempts: Attempt[] }) {
  return (
    <table class="grid attempts">
      <caption class="visually-hidden">Attempts of {id}</caption>
      <thead>
        <tr>
          <th class="num">#</th>
          <th>Started</th>
          <th>Outcome</th>
          <th class="num">Latency</th>
          <th>Response (excerpt)</th>
        </tr>
      </thead>
      <tbody>
        {attempts.map((a: Attempt) => (
          <tr key={a.id}>
            <td class="num">{a.attempt}</td>
            <td>{formatTime(a.startedAt)}</td>
            <td class={a.statusCode !== null && a.statusCode < 300 ? 'good' : 'bad'}>
              {a.statusCode ?? a.errorCode}
              {a.error && <div class="sub">{a.error}</div>}
            </td>
            <td class="num">{a.latencyMs} ms</td>
            <td>
              <code class="excerpt">{a.responseExcerpt ?? ''}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const RETRY_TEXT =
  'Retry now: attempt this pending delivery again at once instead of after its backoff wait, with a fresh attempt budget — still within the rate limit.';
const REPLAY_TEXT =
  'Replay: put this dead delivery back to pending with a fresh attempt budget; it is sent within the rate limit like any other.';

/**
 * What a row offers: a dead delivery is replayed; a pending one that has been attempted is
 * retried now instead of after its backoff wait. One never attempted waits for nothing a
 * retry removes (the rate limit, its order, a pause), so it offers nothing. The API accepts
 * both (`POST /v1/deliveries/:id/retry`).
 */
function rowAction(d: Delivery): 'Replay' | 'Retry now' | null {
  if (d.status === 'dead') return 'Replay';
  return d.status === 'pending' && d.attemptCount > 0 ? 'Retry now' : null;
}

function RetryButton({ delivery, onRetry }: { delivery: Delivery; onRetry(d: Delivery): void }) {
  const action = rowAction(delivery);
  if (action === null) return null;
  return (
    <button
      type="button"
      class="small"
      onClick={() => onRetry(delivery)}
      title={action === 'Replay' ? REPLAY_TEXT : RETRY_TEXT}
      aria-label={`${action} ${delivery.id}`}
      aria-describedby="retry-help"
    >
      {action}
    </button>
  );
}

function DeliveryRows({
  deliveries,
  showDestination = false,
  onChanged,
  url,
}: {
  deliveries: Delivery[];
  showDestination?: boolean;
  /** The destination's URL, where all the rows are one destination's. */
  url?: string | undefined;
  /** After a replay, with what to tell the operator. */
  onChanged?: (message: string) => void;
}) {
  const canWrite = useContext(CanWrite);
  const [open, setOpen] = useState<string | null>(null);
  const [notice, setNotice] = useState<Record<string, string>>({});
  const columns = showDestination ? 7 : 6;

  const retry = async (d: Delivery) => {
    try {
      await api.retry(d.id);
      setNotice((n) => ({ ...n, [d.id]: 'Replayed: pending' }));
      onChanged?.(`${d.id} replayed: pending again, through the rate limiter.`);
    } catch (err) {
      setNotice((n) => ({ ...n, [d.id]: err instanceof Error ? err.message : String(err) }));
    }
  };

  return (
    <>
      {deliveries.map((d) => (
        <Fragment key={d.id}>
          <tr data-delivery={d.id} data-status={d.status}>
            <td>
              <button
                type="button"
                class="link"
                aria-expanded={open === d.id}
                onClick={() => setOpen(open === d.id ? null : d.id)}
              >
                {d.id}
              </button>
            </td>
            {showDestination && (
              <td>
                <a href={`#/destinations/${d.destinationId}`}>{d.destinationId}</a>
              </td>
            )}
            <td>
              <a href={`#/events/${d.eventId}`}>{d.eventId}</a>
            </td>
            <td>
              <span class={`status status-${d.status}`}>{d.status}</span>
            </td>
            <td class="num">{d.attemptCount}</td>
            <td>{formatTime(d.updatedAt)}</td>
            <td>
              {notice[d.id] ? (
                <span role="status">{notice[d.id]}</span>
              ) : (
                canWrite && <RetryButton delivery={d} onRetry={retry} />
              )}
              {d.lastError && <div class="sub">{d.lastError}</div>}
            </td>
          </tr>
          {open === d.id && (
            <tr class="expanded">
              <td colSpan={columns}>
                <Attempts id={d.id} url={url} />
              </td>
            </tr>
          )}
        </Fragment>
      ))}
    </>
  );
}

export function DeliveryTable({
  deliveries,
  showDestination,
  caption,
  onChanged,
  url,
}: {
  deliveries: Delivery[];
  showDestination?: boolean;
  url?: string | undefined;
  caption: string;
  /** After a replay, with what to tell the operator. */
  onChanged?: (message: string) => void;
}) {
  const canWrite = useContext(CanWrite);
  return (
    <div class="table-wrap">
      <table class="grid">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th>Delivery</th>
            {showDestination && <th>Destination</th>}
            <th>Event</th>
            <th>Status</th>
            <th class="num">Attempts</th>
            <th>Last change</th>
            <th>Action</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.length === 0 ? (
            <tr>
              <td colSpan={showDestination ? 7 : 6} class="empty">
                None.
              </td>
            </tr>
          ) : (
            <DeliveryRows
              deliveries={deliveries}
              showDestination={showDestination ?? false}
              onChanged={onChanged}
              url={url}
            />
          )}
        </tbody>
      </table>
      {canWrite && deliveries.some((d) => rowAction(d) !== null) && (
        <p id="retry-help" class="hint table-hint">
          {deliveries.some((d) => rowAction(d) === 'Retry now') && `${RETRY_TEXT} `}
          {deliveries.some((d) => rowAction(d) === 'Replay') && REPLAY_TEXT}
        </p>
      )}
    </div>
  );
}

/** A destination's 25 most recent deliveries, refreshed every 2 s. */
export function Deliveries({ destinationId, url }: { destinationId: string; url?: string }) {
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const { data, refresh } = usePoll(
    () => api.deliveries({ destinationId, status: status || undefined, limit: 25 }),
    2_000,
    [destinationId, status],
  );
  return (
    <div class="panel">
      <div class="title-row">
        <h2>Recent deliveries</h2>
        <label class="inline">
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value as DeliveryStatus | '')}>
            <option value="">any</option>
            {(['pending', 'queued', 'delivering', 'delivered', 'dead', 'cancelled'] as const).map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <DeliveryTable
        deliveries={data?.data ?? []}
        caption="Recent deliveries"
        onChanged={refresh}
        url={url}
      />
    </div>
  );
}
