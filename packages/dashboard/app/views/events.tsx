/** Event lookup by id: its type, payload and deliveries (each opens to its attempts). */

import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { formatTime } from '../format.ts';
import { usePoll } from '../use-poll.ts';
import { DeliveryTable } from './deliveries.tsx';

function EventView({ id }: { id: string }) {
  const { data, error } = usePoll(() => api.event(id), 3_000, [id]);
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!data) return <p class="loading">Loading…</p>;
  return (
    <div class="panel">
      <h2>
        <code>{data.id}</code>
      </h2>
      <dl class="figures">
        <div>
          <dt>Type</dt>
          <dd>{data.type}</dd>
        </div>
        <div>
          <dt>Accepted</dt>
          <dd>{formatTime(data.createdAt)}</dd>
        </div>
        <div>
          <dt>Idempotency key</dt>
          <dd>{data.idempotencyKey ?? '—'}</dd>
        </div>
      </dl>
      <h3>Payload</h3>
      <pre class="payload">{JSON.stringify(data.payload, null, 2)}</pre>
      <h3>Deliveries</h3>
      <DeliveryTable deliveries={data.deliveries} showDestination caption="Deliveries of this event" />
    </div>
  );
}

export function EventLookup({ id }: { id: string | undefined }) {
  const [value, setValue] = useState(id ?? '');
  const valid = /^evt_[0-9a-z]{26}$/.test(value.trim());
  return (
    <section aria-labelledby="events-title">
      <h1 id="events-title">Event lookup</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          if (valid) location.hash = `#/events/${value.trim()}`;
        }}
      >
        <label>
          Event id
          <input
            name="eventId"
            placeholder="evt_…"
            size={34}
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
            aria-invalid={value !== '' && !valid}
          />
        </label>
        <button type="submit" disabled={!valid}>
          Look up
        </button>
      </form>
      {id && <EventView id={id} />}
    </section>
  );
}
