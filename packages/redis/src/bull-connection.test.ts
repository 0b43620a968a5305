import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bullConnection } from './connection.ts';

test('a rediss:// URL gives BullMQ a TLS connection', () => {
  const options = bullConnection({ url: 'rediss://user:p%40ss@cache.example:6380/2', cluster: false });
  assert.deepEqual(options, {
    host: 'cache.example',
    port: 6380,
    db: 2,
    username: 'user',
    password: 'p@ss',
    tls: {},
  });
});

test('a redis:// URL gives a plain connection', () => {
  const options = bullConnection({ url: 'redis://127.0.0.1:6379', cluster: false });
  assert.deepEqual(options, { host: '127.0.0.1', port: 6379, db: 0 });
  assert.equal('tls' in options, false);
});
