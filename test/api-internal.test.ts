/**
 * An internal error (docs/api.md "Errors": code `internal`; CONTRIBUTING.md: a 500 with no internals in
 * the body, the details in the log). The store is made to fail under a running box — its
 * `tenants` table renamed away for a moment, the one write this file makes to the store —
 * and the answer must be the plain error body: no SQL, no table name, no stack. With the
 * table back, the same request answers again: an error in one request leaves the service
 * standing.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileBox, rejectsWith } from './helpers/client.ts';

const get = fileBox();

describe('an internal error', () => {
  it('is a 500 with code internal and nothing of the cause; the service keeps answering', async () => {
    const b = get();
    const tenant = await b.admin.tenants.create({ name: 'before' });
    await b.query('ALTER TABLE tenants RENAME TO tenants_away');
    let raw: { status: number; contentType: string | null; text: string };
    try {
      const err = await rejectsWith(b.admin.tenants.list(), 500, 'internal', 'a list on a broken store');
      assert.equal(err.message, 'internal error');
      assert.equal(err.details, null);
      const res = await fetch(`${b.url}/v1/tenants/${tenant.id}`, {
        headers: { authorization: `Bearer ${b.adminToken}` },
      });
      raw = { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
    } finally {
      await b.query('ALTER TABLE tenants_away RENAME TO tenants');
    }
    assert.equal(raw.status, 500);
    assert.match(raw.contentType ?? '', /^application\/json/);
    assert.deepEqual(JSON.parse(raw.text), {
      error: { code: 'internal', message: 'internal error', details: null },
    });
    assert.doesNotMatch(
      raw.text,
      /tenants|relation|SQLITE|no such|select|\.ts:\d/i,
      'no internals in the body',
    );

    const after = await b.admin.tenants.get(tenant.id);
    assert.equal(after.name, 'before', 'the store is whole again, and so is the service');
    assert.ok((await b.admin.tenants.list()).data.some((t) => t.id === tenant.id));
  });
});
