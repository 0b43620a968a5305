/**
 * Which events a destination gets (`eventTypes`), chosen from the catalog (`GET
 * /v1/event-types`): every event (`*`), the catalog's types one by one, Sluice's own
 * operational events (`sluice.*`, or one by one: `*` does not match them), and free patterns
 * (exact types or `prefix.*`) typed as a comma-separated list.
 */

import { useEffect, useState } from 'preact/hooks';
import { api, type EventType } from '../api.ts';

let catalog: Promise<EventType[]> | null = null;

/** The catalog, read once a page (it changes rarely; a failed read is tried again next time). */
export function useCatalog(): { types: EventType[]; loaded: boolean; error: string | null } {
  const [types, setTypes] = useState<EventType[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    catalog ??= api.eventTypes().then((page) => page.data);
    catalog.then(setTypes, (err: Error) => {
      catalog = null;
      setError(`The event-type catalog could not be read: ${err.message}`);
    });
  }, []);
  return { types: types ?? [], loaded: types !== null, error };
}

const splitPatterns = (text: string) =>
  text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');

export function EventTypesPicker({
  value,
  onChange,
  disabled = false,
  idPrefix = 'types',
}: {
  value: string[];
  onChange(types: string[]): void;
  disabled?: boolean;
  idPrefix?: string;
}) {
  const { types, loaded, error } = useCatalog();
  const names = new Set(types.map((t) => t.name));
  const special = new Set(['*', 'sluice.*']);
  const free = value.filter((v) => !names.has(v) && !special.has(v));
  // What was typed; until then the patterns the destination has beyond the catalog's names.
  const [typed, setFreeText] = useState<string | null>(null);
  const freeText = typed ?? (loaded || error ? free.join(', ') : '');
  const has = (name: string) => value.includes(name);
  const toggle = (name: string, on: boolean) =>
    onChange(on ? [...value.filter((v) => v !== name), name] : value.filter((v) => v !== name));
  const own = types.filter((t) => !t.builtIn);
  const builtIn = types.filter((t) => t.builtIn);
  const allOps = has('sluice.*');

  // The description goes beside the label (aria-describedby), not in it: the name stays the type.
  const box = (name: string, label: string, description?: string, off = false) => {
    const descriptionId = `${idPrefix}-${name}-about`;
    return (
      <div class="check-row" key={name}>
        <label class="inline check">
          <input
            type="checkbox"
            name="eventType"
            value={name}
            checked={has(name)}
            disabled={disabled || off}
            aria-describedby={description ? descriptionId : undefined}
            onChange={(e) => toggle(name, e.currentTarget.checked)}
          />
          {label}
        </label>
        {description && (
          <span id={descriptionId} class="sub block">
            {description}
          </span>
        )}
      </div>
    );
  };

  return (
    <fieldset class="event-types" data-testid="event-types">
      <legend>Event types</legend>
      {error && <p class="error">{error}</p>}
      {box('*', 'Every event (*)', 'All your event types; not Sluice’s operational events')}
      {own.length > 0 && (
        <div class="type-group">
          <p class="group-title">Catalog</p>
          {own.map((t) => box(t.name, t.name, t.description, has('*')))}
        </div>
      )}
      <div class="type-group">
        <p class="group-title">Operational events (from Sluice)</p>
        {box('sluice.*', 'All operational events (sluice.*)')}
        {builtIn.map((t) => box(t.name, t.name, t.description, allOps))}
      </div>
      <label>
        Other types or patterns
        <input
          id={`${idPrefix}-patterns`}
          name="patterns"
          placeholder="order.*, invoice.paid"
          value={freeText}
          disabled={disabled}
          onInput={(e) => {
            const text = e.currentTarget.value;
            setFreeText(text);
            onChange([...value.filter((v) => names.has(v) || special.has(v)), ...splitPatterns(text)]);
          }}
        />
      </label>
      {value.length === 0 && <p class="hint">None chosen: the destination gets every event (*).</p>}
    </fieldset>
  );
}
