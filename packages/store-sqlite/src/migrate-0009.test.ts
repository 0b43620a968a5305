/** Migration 0009 on a file made before it: every tenant's key becomes its first key in `tenant_keys`. */

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { it } from 'node:test';
import { firstKeyId } from '@sluice/store';
import { migrate } from './migrate.ts';

const DIR = new URL('../migrations/', import.meta.url);

it('0009 carries each tenant key over (not the system tenant’s placeholder) and adds deleted_at', () => {
  const db = new DatabaseSync(':memory:');
  try {
    db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
    const before = readdirSync(DIR)
      .filter((f) => /^\d{4}_.+\.sql$/.test(f) && Number(f.slice(0, 4)) < 9)
      .sort();
    for (const file of before) {
      db.exec(readFileSync(new URL(file, DIR), 'utf8'));
      db.prepare('INSERT INTO schema_migrations VALUES (?, 0)').run(Number(file.slice(0, 4)));
    }
    const acme = `ten_${'1'.repeat(26)}`;
    const system = `ten_${'2'.repeat(26)}`;
    db.prepare('INSERT INTO tenants (id, name, api_key_hash, created_at) VALUES (?, ?, ?, ?)').run(
      acme,
      'acme',
      'h1',
      5,
    );
    db.prepare('INSERT INTO tenants (id, name, api_key_hash, created_at) VALUES (?, ?, ?, ?)').run(
      system,
      'system',
      `none:${system}`,
      6,
    );
    assert.deepEqual(migrate(db).includes(9), true);
    const keys = db
      .prepare('SELECT id, tenant_id, key_hash, prefix, created_at, last_used_at FROM tenant_keys')
      .all();
    assert.deepEqual(
      keys.map((k) => ({ ...k })),
      [
        {
          id: firstKeyId(acme),
          tenant_id: acme,
          key_hash: 'h1',
          prefix: null,
          created_at: 5,
          last_used_at: null,
        },
      ],
    );
    assert.equal(db.prepare('SELECT deleted_at FROM tenants WHERE id = ?').get(acme)?.deleted_at, null);
  } finally {
    db.close();
  }
});
