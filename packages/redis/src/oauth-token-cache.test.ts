import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { generateKeyText, parseKeyring } from '@sluice/core';
import { OAuthTokens } from '@sluice/engine';
import { cleanup, REDIS_TARGET, requireRedis, uniquePrefix } from '@sluice/testing';
import { connectRedis } from './connection.ts';
import { Keys } from './keys.ts';
import { RedisTokenCache } from './oauth-token-cache.ts';

await requireRedis();
const redis = connectRedis(REDIS_TARGET);
after(() => redis.disconnect());

const AUTH = {
  type: 'oauth2_client_credentials' as const,
  tokenUrl: 'https://auth.example/token',
  clientId: 'c',
  clientSecret: 's',
};

it('keeps the token sealed and for its time, drops only the token named, locks for its owner alone', async (t) => {
  const prefix = uniquePrefix();
  t.after(() => cleanup(redis, prefix));
  const keys = new Keys(prefix);
  const cache = new RedisTokenCache(redis, keys, parseKeyring(generateKeyText()));
  const until = Date.now() + 60_000;
  await cache.set('dst_1:k', 'the-access-token', until);
  assert.deepEqual(await cache.get('dst_1:k'), { token: 'the-access-token', until });
  const raw = await redis.get(keys.oauth('dst_1:k', 'token'));
  assert.ok(raw !== null && !raw.includes('the-access-token'), 'sealed in Redis');
  const ttl = await redis.pttl(keys.oauth('dst_1:k', 'token'));
  assert.ok(ttl > 55_000 && ttl <= 60_000, `expires with the token (${ttl} ms)`);
  await cache.drop('dst_1:k', 'another-token');
  assert.equal((await cache.get('dst_1:k'))?.token, 'the-access-token', 'not the token refused');
  await cache.drop('dst_1:k', 'the-access-token');
  assert.equal(await cache.get('dst_1:k'), null);

  assert.equal(await cache.lock('dst_1:k', 'worker-a', 10_000), true);
  assert.equal(await cache.lock('dst_1:k', 'worker-b', 10_000), false, 'one request in flight');
  await cache.unlock('dst_1:k', 'worker-b');
  assert.equal(await cache.lock('dst_1:k', 'worker-b', 10_000), false, 'not released by another');
  await cache.unlock('dst_1:k', 'worker-a');
  assert.equal(await cache.lock('dst_1:k', 'worker-b', 10_000), true);

  await cache.fail('dst_1:k', 'token endpoint answered 500', 1_000);
  assert.equal(await cache.failure('dst_1:k'), 'token endpoint answered 500');
  await new Promise((r) => setTimeout(r, 1_100));
  assert.equal(await cache.failure('dst_1:k'), null, 'held back for its time only');
});

it('three workers on one Redis ask the token endpoint once', async (t) => {
  const prefix = uniquePrefix();
  t.after(() => cleanup(redis, prefix));
  const keys = new Keys(prefix);
  const keyring = parseKeyring(generateKeyText());
  let asked = 0;
  const post = async () => {
    asked++;
    await new Promise((r) => setTimeout(r, 50));
    return { statusCode: 200, body: JSON.stringify({ access_token: `tok-${asked}`, expires_in: 300 }) };
  };
  const workers = [0, 1, 2].map(
    () => new OAuthTokens({ cache: new RedisTokenCache(redis, keys, keyring), post }),
  );
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) => workers[i % 3]?.bearer('dst_1', AUTH, 2_000)),
  );
  assert.equal(asked, 1);
  assert.ok(answers.every((a) => a !== undefined && 'token' in a && a.token === 'tok-1'));
});
