/**
 * The bad-input matrix, generated from tables: for every endpoint with input and every
 * field — a wrong type, a missing required field, an out-of-range value, an unknown field,
 * plus malformed JSON and a wrong content type for every body — the answer is 400
 * `validation_failed` naming the field in `details[].path` (body fields bare and dotted,
 * `query.<name>`, `params.id`, `headers.content-type`; the body as a whole is ``), and the
 * store is the same before and after (every row of every table, read-only with node:sqlite).
 *
 * The store holds what a wrongly accepted request would change: a dead delivery (a replay
 * would revive it), a destination (a PATCH would touch it), tenants (a create would add).
 * The last tests check each table's base input is accepted, so that each case differs from
 * a valid request in the one field it names.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Sluice, SluiceError, type ValidationIssue } from '@sluice/client';
import { fileBox, quietDestinationWithDeadDelivery, snapshot } from './helpers/client.ts';

const get = fileBox();

// ---------------------------------------------------------------- the world

interface World {
  tenant: Sluice;
  tenantId: string;
  /** Tenant's destination: paused, with one dead delivery. */
  dst: string;
  evt: string;
  dlv: string;
  /** A portal link of the tenant. */
  prt: string;
}

let world: World | undefined;
const w = (): World => {
  if (world === undefined) throw new Error('no world');
  return world;
};

// ---------------------------------------------------------------- the tables

/** A value whose error is reported at another path than the field's (an array item, say). */
class At {
  readonly value: unknown;
  readonly path: string;
  constructor(path: string, value: unknown) {
    this.path = path;
    this.value = value;
  }
}
const at = (path: string, value: unknown) => new At(path, value);

interface Field {
  /** Dotted, in the body; or `query.<name>`; or `params.id`. */
  path: string;
  required?: boolean;
  wrongType?: unknown[];
  outOfRange?: unknown[];
}

interface Request {
  body?: unknown;
  query: Record<string, string>;
  id?: string;
}

interface Endpoint {
  method: string;
  /** With `{id}` for the path parameter. */
  route: string;
  token: 'tenant' | 'admin';
  /** A valid request, built on the world. */
  base: () => Request;
  fields: Field[];
  /** Paths of the objects in the body that take no unknown field (`` is the body). */
  objects?: string[];
  /** The id the `{id}` takes in the control (it may differ from the matrix's, see there). */
  controlId?: () => string;
}

const ID = (prefix: string) => `${prefix}_${'0'.repeat(26)}`;
const iso = '2024-01-02T03:04:05.000Z';
const secret16 = `whsec_${Buffer.alloc(16, 7).toString('base64')}`;
const hundredOne = (f: (n: number) => unknown) => Array.from({ length: 101 }, (_, n) => f(n));

const destinationFields = (required: boolean): Field[] => [
  { path: 'name', wrongType: [5, true], outOfRange: ['', 'n'.repeat(201)] },
  {
    path: 'url',
    required,
    wrongType: [12, {}, null],
    outOfRange: [
      'not a url',
      'ftp://example.test/hook',
      'https://user:pw@example.test/hook',
      `https://example.test/${'a'.repeat(2_048)}`,
    ],
  },
  { path: 'rateLimit', required, wrongType: ['20/s', [], null] },
  { path: 'rateLimit.limit', required: true, wrongType: ['ten', null], outOfRange: [0, -1, 1_000_001, 1.5] },
  { path: 'rateLimit.period', required: true, wrongType: [1], outOfRange: ['day', 'Second', ''] },
  { path: 'maxConcurrency', wrongType: ['10', true], outOfRange: [0, 10_001, 2.5] },
  { path: 'ordering', wrongType: [1, true, null], outOfRange: ['lifo', 'FIFO', ''] },
  {
    path: 'eventTypes',
    wrongType: ['order.*', {}, null],
    outOfRange: [
      [],
      hundredOne((n) => `t${n}`),
      at('eventTypes.0', ['bad type!']),
      at('eventTypes.0', ['order.']),
      at('eventTypes.0', ['']),
      at('eventTypes.1', ['*', 5]),
    ],
  },
  { path: 'retry', wrongType: ['x', 3, null] },
  { path: 'retry.maxAttempts', required: true, wrongType: ['3'], outOfRange: [0, 51, 1.5] },
  { path: 'retry.initialDelayMs', required: true, wrongType: ['0'], outOfRange: [-1, 86_400_001] },
  { path: 'retry.maxDelayMs', required: true, wrongType: [null], outOfRange: [-1, 7 * 86_400_000 + 1] },
  { path: 'timeoutMs', wrongType: ['1000', null], outOfRange: [99, 120_001, 1_000.5] },
  {
    path: 'secret',
    wrongType: [5, null],
    outOfRange: [
      'nope',
      `whsec_${Buffer.alloc(8, 1).toString('base64')}`,
      'whsec_***',
      `whsec_${Buffer.alloc(129, 1).toString('base64')}`,
      Buffer.alloc(32, 1).toString('base64'),
    ],
  },
];

const validDestination = () => ({
  name: 'orders',
  url: 'https://example.test/hook',
  rateLimit: { limit: 20, period: 'second' },
  maxConcurrency: 10,
  ordering: 'fifo',
  // Matches no event type below: the controls' events leave it alone.
  eventTypes: ['never.*'],
  retry: { maxAttempts: 8, initialDelayMs: 5_000, maxDelayMs: 3_600_000 },
  timeoutMs: 15_000,
  secret: secret16,
});

const eventFields = (prefix: string): Field[] => [
  {
    path: `${prefix}type`,
    required: true,
    wrongType: [42, null, ['order.paid']],
    outOfRange: ['', 't'.repeat(201), 'order paid', 'order.', '*', 'order.*'],
  },
  { path: `${prefix}payload`, required: true },
  {
    path: `${prefix}destinationId`,
    wrongType: [7, [ID('dst')]],
    outOfRange: ['dst_nope', ID('evt'), `dst_${'A'.repeat(26)}`],
  },
  {
    path: `${prefix}destinationIds`,
    wrongType: [ID('dst'), 7],
    outOfRange: [
      [],
      hundredOne(() => ID('dst')),
      at(`${prefix}destinationIds.0`, ['nope']),
      at(`${prefix}destinationIds.1`, [ID('dst'), ID('evt')]),
    ],
  },
  {
    path: `${prefix}idempotencyKey`,
    wrongType: [5, null],
    outOfRange: ['', 'k'.repeat(256), 'sluice:dead:dlv_x:1'],
  },
];

const validEvent = () => ({ type: 'order.paid', payload: { total: 42 }, idempotencyKey: 'k-1' });

const tenantQuery: Field = { path: 'query.tenantId', outOfRange: ['ten_nope', ID('dst'), ''] };
const listQuery: Field[] = [
  { path: 'query.limit', wrongType: ['abc', 'true'], outOfRange: [0, 501, 2.5, -1, '1e9'] },
  { path: 'query.cursor', outOfRange: ['', 'c'.repeat(201)] },
];
const idParam = (prefix: string, other: string): Field => ({
  path: 'params.id',
  outOfRange: [
    'nope',
    ID(other),
    `${prefix}_${'A'.repeat(26)}`,
    `${ID(prefix)}0`,
    `${prefix}_`,
    // Longer than the router's default limit of a path parameter (100).
    `${prefix}_${'0'.repeat(120)}`,
  ],
});

const ENDPOINTS: Endpoint[] = [
  {
    method: 'POST',
    route: '/v1/tenants',
    token: 'admin',
    base: () => ({ body: { name: 'new-tenant' }, query: {} }),
    fields: [
      { path: 'name', required: true, wrongType: [5, null, ['acme']], outOfRange: ['', 'n'.repeat(201)] },
    ],
    objects: [''],
  },
  {
    method: 'GET',
    route: '/v1/tenants',
    token: 'admin',
    base: () => ({ query: { limit: '10' } }),
    fields: listQuery,
  },
  {
    method: 'GET',
    route: '/v1/tenants/{id}',
    token: 'admin',
    base: () => ({ query: {}, id: w().tenantId }),
    fields: [idParam('ten', 'dst')],
  },
  {
    method: 'PATCH',
    route: '/v1/tenants/{id}',
    token: 'admin',
    // Its name and quota as they are: the control changes nothing.
    base: () => ({
      body: { name: 'bad-input', quota: { eventsPerSecond: null } },
      query: {},
      id: w().tenantId,
    }),
    fields: [
      { path: 'name', wrongType: [5, null], outOfRange: ['', 'n'.repeat(201)] },
      { path: 'quota', wrongType: ['x', 5, null] },
      { path: 'quota.eventsPerSecond', wrongType: ['10', true], outOfRange: [0, 1_000_000_001, 1.5] },
      { path: 'quota.pendingEvents', wrongType: ['10'], outOfRange: [0, -1, 2.5] },
      idParam('ten', 'dst'),
    ],
    objects: ['', 'quota'],
  },
  {
    method: 'POST',
    route: '/v1/destinations',
    token: 'tenant',
    base: () => ({ body: validDestination(), query: { tenantId: w().tenantId } }),
    fields: [...destinationFields(true), tenantQuery],
    objects: ['', 'rateLimit', 'retry'],
  },
  {
    method: 'GET',
    route: '/v1/destinations',
    token: 'tenant',
    base: () => ({ query: { limit: '10', tenantId: w().tenantId } }),
    fields: [...listQuery, tenantQuery],
  },
  {
    method: 'GET',
    route: '/v1/destinations/{id}',
    token: 'tenant',
    base: () => ({ query: {}, id: w().dst }),
    fields: [idParam('dst', 'evt')],
  },
  {
    method: 'PATCH',
    route: '/v1/destinations/{id}',
    token: 'tenant',
    base: () => ({ body: { ...validDestination(), name: 'renamed' }, query: {}, id: w().dst }),
    fields: [...destinationFields(false), idParam('dst', 'evt')],
    objects: ['', 'rateLimit', 'retry'],
  },
  ...(
    [
      'DELETE /v1/destinations/{id}',
      'POST /v1/destinations/{id}/pause',
      'POST /v1/destinations/{id}/resume',
      'POST /v1/destinations/{id}/rotate-secret',
    ] as const
  ).map((r): Endpoint => {
    const [method, route] = r.split(' ') as [string, string];
    // A wrongly accepted one would change the store; the control (one that is accepted)
    // would too, so it runs on a destination of its own.
    return {
      method,
      route,
      token: 'tenant',
      base: () => ({ query: {}, id: w().dst }),
      fields: [idParam('dst', 'evt')],
    };
  }),
  {
    method: 'POST',
    route: '/v1/destinations/{id}/replay',
    token: 'tenant',
    base: () => ({ body: { status: 'dead', since: iso }, query: {}, id: w().dst }),
    fields: [
      {
        path: 'status',
        required: true,
        wrongType: [1, null],
        outOfRange: ['delivered', 'pending', 'DEAD', ''],
      },
      {
        path: 'since',
        wrongType: [5, true],
        outOfRange: ['yesterday', '2024-13-01T00:00:00Z', '2024-01-01', ''],
      },
      idParam('dst', 'dlv'),
    ],
    objects: [''],
  },
  {
    method: 'GET',
    route: '/v1/destinations/{id}/stats',
    token: 'tenant',
    base: () => ({ query: { seconds: '60', tenantId: w().tenantId }, id: w().dst }),
    fields: [
      { path: 'query.seconds', wrongType: ['abc'], outOfRange: [0, 86_401, 1.5, -5] },
      tenantQuery,
      idParam('dst', 'ten'),
    ],
  },
  {
    method: 'POST',
    route: '/v1/events',
    token: 'tenant',
    base: () => ({ body: validEvent(), query: { tenantId: w().tenantId } }),
    fields: [...eventFields(''), tenantQuery],
    objects: [''],
  },
  {
    method: 'POST',
    route: '/v1/events/batch',
    token: 'tenant',
    base: () => ({ body: { events: [validEvent(), { ...validEvent(), idempotencyKey: 'k-2' }] }, query: {} }),
    fields: [
      {
        path: 'events',
        required: true,
        wrongType: [{}, 'x', null],
        outOfRange: [[], Array.from({ length: 1_001 }, validEvent)],
      },
      { path: 'events.1', wrongType: ['x', 5, null, []] },
      ...eventFields('events.1.'),
      tenantQuery,
    ],
    objects: ['', 'events.1'],
  },
  {
    method: 'GET',
    route: '/v1/events/{id}',
    token: 'tenant',
    base: () => ({ query: {}, id: w().evt }),
    fields: [idParam('evt', 'dlv')],
  },
  {
    method: 'GET',
    route: '/v1/deliveries',
    token: 'tenant',
    base: () => ({ query: { limit: '10', status: 'dead', destinationId: w().dst, eventId: w().evt } }),
    fields: [
      ...listQuery,
      tenantQuery,
      { path: 'query.destinationId', outOfRange: ['nope', ID('evt'), ''] },
      { path: 'query.eventId', outOfRange: ['nope', ID('dst')] },
      { path: 'query.status', outOfRange: ['sent', 'DELIVERED', ''] },
    ],
  },
  {
    method: 'GET',
    route: '/v1/events',
    token: 'tenant',
    base: () => ({
      query: { limit: '10', type: 'order.*', destinationId: w().dst, since: '2026-01-01T00:00:00Z' },
    }),
    fields: [
      ...listQuery,
      tenantQuery,
      { path: 'query.type', outOfRange: ['', 'order.', 'a*', 't'.repeat(201)] },
      { path: 'query.destinationId', outOfRange: ['nope', ID('evt'), ''] },
      { path: 'query.since', outOfRange: ['yesterday', '1', ''] },
      { path: 'query.until', outOfRange: ['tomorrow', '2026-13-01T00:00:00Z'] },
    ],
  },
  {
    method: 'POST',
    route: '/v1/tenants/{id}/keys',
    token: 'admin',
    // The body is optional and empty: no `objects`, whose malformed-JSON cases need quotes to break.
    base: () => ({ body: {}, query: {}, id: w().tenantId }),
    fields: [idParam('ten', 'dst'), { path: 'name', outOfRange: ['x', 5] }],
  },
  {
    method: 'GET',
    route: '/v1/tenants/{id}/keys',
    token: 'admin',
    base: () => ({ query: {}, id: w().tenantId }),
    fields: [idParam('ten', 'dst')],
  },
  {
    method: 'GET',
    route: '/v1/deliveries/{id}',
    token: 'tenant',
    base: () => ({ query: {}, id: w().dlv }),
    fields: [idParam('dlv', 'evt')],
  },
  {
    method: 'POST',
    route: '/v1/deliveries/{id}/retry',
    token: 'tenant',
    base: () => ({ query: {}, id: w().dlv }),
    fields: [idParam('dlv', 'dst')],
  },
  {
    method: 'GET',
    route: '/v1/alerts',
    token: 'tenant',
    base: () => ({ query: {} }),
    fields: [tenantQuery],
  },
  {
    method: 'POST',
    route: '/v1/destinations/{id}/test',
    token: 'tenant',
    base: () => ({
      body: { type: 'order.paid', payload: { total: 42 } },
      query: { tenantId: w().tenantId },
      id: w().dst,
    }),
    fields: [
      idParam('dst', 'evt'),
      tenantQuery,
      {
        path: 'type',
        wrongType: [42, null, ['order.paid']],
        outOfRange: ['', 't'.repeat(201), 'order paid', 'order.*', '*', 'sluice.nope'],
      },
    ],
    objects: [''],
  },
  {
    method: 'POST',
    route: '/v1/portal-links',
    token: 'tenant',
    base: () => ({
      body: {
        access: 'read',
        expiresInSeconds: 60,
        destinationIds: [w().dst],
        branding: { title: 'Acme', accentColor: '#0a7cff', logoUrl: 'https://cdn.example.com/l.png' },
      },
      query: {},
    }),
    fields: [
      { path: 'tenantId', outOfRange: ['ten_nope', ID('dst'), ''] },
      { path: 'access', wrongType: [1, null, true], outOfRange: ['write', 'READ', ''] },
      { path: 'expiresInSeconds', wrongType: ['60', null], outOfRange: [9, 86_401, 1.5, -1] },
      {
        path: 'destinationIds',
        wrongType: [ID('dst'), 7, null],
        outOfRange: [
          [],
          hundredOne(() => ID('dst')),
          at('destinationIds.0', ['nope']),
          at('destinationIds.0', [ID('evt')]),
        ],
      },
      { path: 'branding', wrongType: ['Acme', null, []] },
      { path: 'branding.title', wrongType: [5, null], outOfRange: ['', 't'.repeat(101), 'a\u0001b'] },
      {
        path: 'branding.accentColor',
        wrongType: [0x0a7cff],
        outOfRange: ['red', '#fff', '#0a7cffff', '0a7cff'],
      },
      {
        path: 'branding.logoUrl',
        wrongType: [5],
        outOfRange: [
          'http://example.com/l.png',
          'javascript:alert(1)',
          'data:text/html,<b>x</b>',
          'ftp://cdn.example.com/l.png',
          'https://user:pw@cdn.example.com/l.png',
          '',
        ],
      },
    ],
    objects: ['', 'branding'],
  },
  {
    method: 'GET',
    route: '/v1/portal-links',
    token: 'tenant',
    base: () => ({ query: { limit: '10' } }),
    fields: [...listQuery, tenantQuery],
  },
  {
    method: 'DELETE',
    route: '/v1/portal-links/{id}',
    token: 'tenant',
    base: () => ({ query: {}, id: w().prt }),
    fields: [idParam('prt', 'dst'), tenantQuery],
  },
];

// ---------------------------------------------------------------- the cases

interface Case {
  name: string;
  /** The request, from the endpoint's base. */
  build: (base: Request) => Request;
  /** The body (a string, then) sent as is, with this content type (undefined: an empty one). */
  raw?: { contentType: string | undefined };
  expect: string;
}

const BOGUS = 'bogusField';

function setAt(target: unknown, path: string, value: unknown): void {
  const keys = path.split('.');
  let obj = target as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) obj = obj[key] as Record<string, unknown>;
  const last = keys.at(-1)!;
  if (value === undefined) delete obj[last];
  else obj[last] = value;
}

/** Sets (or, with `undefined`, removes) a field of a request, wherever it is. */
function withField(base: Request, path: string, value: unknown): Request {
  const req: Request = structuredClone(base);
  if (path === 'params.id') req.id = String(value);
  else if (path.startsWith('query.')) {
    const name = path.slice('query.'.length);
    if (value === undefined) delete req.query[name];
    else req.query[name] = String(value);
  } else setAt(req.body, path, value);
  return req;
}

const label = (v: unknown) => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 37)}…` : s;
};

function casesOf(e: Endpoint): Case[] {
  const cases: Case[] = [];
  for (const f of e.fields) {
    const kinds = [
      ['wrong type', f.wrongType ?? []],
      ['out of range', f.outOfRange ?? []],
    ] as const;
    for (const [kind, values] of kinds) {
      for (const v of values) {
        const value = v instanceof At ? v.value : v;
        cases.push({
          name: `${f.path}: ${kind} ${label(value)}`,
          build: (base) => withField(base, f.path, value),
          expect: v instanceof At ? v.path : f.path,
        });
      }
    }
    if (f.required) {
      cases.push({
        name: `${f.path}: missing`,
        build: (base) => withField(base, f.path, undefined),
        expect: f.path,
      });
    }
  }
  for (const obj of e.objects ?? []) {
    const path = obj === '' ? BOGUS : `${obj}.${BOGUS}`;
    cases.push({ name: `${path}: unknown field`, build: (base) => withField(base, path, 1), expect: path });
  }
  // Every route refuses a query parameter it does not take, also those that take none.
  cases.push({
    name: `query.${BOGUS}: unknown parameter`,
    build: (base) => withField(base, `query.${BOGUS}`, '1'),
    expect: `query.${BOGUS}`,
  });
  if (e.objects !== undefined) {
    const good = (base: Request) => JSON.stringify(base.body);
    const raw = (
      name: string,
      body: (b: Request) => string,
      contentType: string | undefined,
      expect: string,
    ) => cases.push({ name, build: (b) => ({ ...b, body: body(b) }), raw: { contentType }, expect });
    const json = 'application/json';
    raw('malformed JSON: cut short', (b) => good(b).slice(0, -1), json, '');
    raw('malformed JSON: single quotes', (b) => good(b).replaceAll('"', "'"), json, '');
    raw('malformed JSON: trailing comma', (b) => `${good(b).slice(0, -1)},}`, json, '');
    raw('an empty body', () => '', json, '');
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', undefined]) {
      raw(
        `wrong content type: ${type ?? 'empty'} (with a valid JSON body)`,
        good,
        type,
        'headers.content-type',
      );
    }
  }
  if (e.method === 'POST' && e.route === '/v1/events') {
    cases.push({
      name: 'destinationId and destinationIds together',
      build: (base) => withField(withField(base, 'destinationId', w().dst), 'destinationIds', [w().dst]),
      expect: 'destinationIds',
    });
  }
  if (e.method === 'PATCH') {
    cases.push({ name: 'an empty patch', build: (base) => ({ ...base, body: {} }), expect: '' });
  }
  return cases;
}

function clientFor(e: Endpoint): Sluice {
  return e.token === 'admin' ? get().admin : w().tenant;
}

function send(e: Endpoint, req: Request, raw?: Case['raw']): Promise<unknown> {
  const path = e.route.replace('{id}', encodeURIComponent(req.id ?? ''));
  if (raw === undefined) {
    return clientFor(e).request(e.method, path, {
      query: req.query,
      ...(req.body === undefined ? {} : { body: req.body }),
    });
  }
  return clientFor(e).request(e.method, path, {
    query: req.query,
    rawBody: String(req.body),
    headers: { 'content-type': raw.contentType ?? '' },
  });
}

// ---------------------------------------------------------------- the tests

describe('bad input', () => {
  it('the world: a tenant, a paused destination with a dead delivery', { timeout: 30_000 }, async () => {
    const { tenant, api } = await get().tenant('bad-input');
    const { dst, evt, dlv } = await quietDestinationWithDeadDelivery(get(), api, 'dies');
    const prt = (await api.portalLinks.create()).id;
    world = { tenant: api, tenantId: tenant.id, dst, evt, dlv, prt };
  });

  for (const e of ENDPOINTS) {
    describe(`${e.method} ${e.route}`, () => {
      for (const c of casesOf(e)) {
        it(c.name, async () => {
          const before = await snapshot(get());
          const req = c.build(e.base());
          let err: SluiceError | undefined;
          try {
            const answer = await send(e, req, c.raw);
            assert.fail(`accepted: ${label(answer)}`);
          } catch (caught) {
            if (!(caught instanceof SluiceError)) throw caught;
            err = caught;
          }
          const seen = `${err.status} ${err.code}: ${err.message} ${JSON.stringify(err.details)}`;
          assert.equal(err.status, 400, seen);
          assert.equal(err.code, 'validation_failed', seen);
          const paths = err.issues.map((i: ValidationIssue) => i.path);
          assert.ok(paths.includes(c.expect), `details[].path should include "${c.expect}": ${seen}`);
          assert.deepEqual(await snapshot(get()), before, 'the store changed');
        });
      }
    });
  }

  describe('controls: each base request is accepted', () => {
    for (const e of ENDPOINTS) {
      it(`${e.method} ${e.route}`, async () => {
        const req = e.base();
        if (req.id === w().dst && e.method !== 'GET') {
          // Its own destination, so that the matrix's stays as it was.
          req.id = (
            await w().tenant.destinations.create({
              url: get().rcv.url('control'),
              rateLimit: { limit: 1, period: 'second' },
              eventTypes: ['never.*'],
            })
          ).id;
        }
        await send(e, req);
      });
    }
  });
});
