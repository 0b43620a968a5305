/**
 * OAuth2 client credentials (oauth-tokens.ts): the token request as RFC 6749 §4.4 makes it,
 * one request for many attempts and for several workers sharing a cache, the margin before
 * expiry, a failure held for a few seconds, and a 401's token dropped.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OAuth2ClientCredentials } from '@sluice/core';
import { MemoryTokenCache, OAuthTokens, type TokenPost, tokenKey, tokenTtlMs } from './oauth-tokens.ts';

const AUTH: OAuth2ClientCredentials = {
  type: 'oauth2_client_credentials',
  tokenUrl: 'https://auth.example/oauth/token',
  clientId: 'client id',
  clientSecret: 's3cr:et',
  scope: 'hooks:write',
  audience: 'https://api.example',
};

interface Asked {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A token endpoint answering `answer` (a function of the request number), slowly if asked. */
function endpoint(answer: (n: number) => Awaited<ReturnType<TokenPost>>, delayMs = 5) {
  const asked: Asked[] = [];
  const post: TokenPost = async (url, headers, body) => {
    asked.push({ url, headers, body });
    const n = asked.length;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return answer(n);
  };
  return { asked, post };
}

const ok = (n: number, expiresIn: number | undefined = 3_600) => ({
  statusCode: 200,
  body: JSON.stringify({ access_token: `tok-${n}`, token_type: 'Bearer', expires_in: expiresIn }),
});

describe('OAuth2 client credentials', () => {
  it('asks as RFC 6749 §4.4 says: HTTP Basic of the form-encoded id and secret, the form body', async () => {
    const { asked, post } = endpoint(ok);
    const tokens = new OAuthTokens({ cache: new MemoryTokenCache(), post });
    assert.deepEqual(await tokens.bearer('dst_1', AUTH, 1_000), { token: 'tok-1' });
    const [request] = asked;
    assert.equal(request?.url, AUTH.tokenUrl);
    // §2.3.1: application/x-www-form-urlencoded before Basic ("client id" → "client+id", ":" → "%3A").
    assert.equal(
      request?.headers.authorization,
      `Basic ${Buffer.from('client+id:s3cr%3Aet').toString('base64')}`,
    );
    assert.equal(request?.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.deepEqual(Object.fromEntries(new URLSearchParams(request?.body)), {
      grant_type: 'client_credentials',
      scope: 'hooks:write',
      audience: 'https://api.example',
    });
    const { scope: _s, audience: _a, ...bare } = AUTH;
    await tokens.bearer('dst_2', bare, 1_000);
    assert.equal(asked[1]?.body, 'grant_type=client_credentials', 'no scope or audience when not given');
  });

  it('one request for many attempts at once, and for two workers sharing the cache', async () => {
    const { asked, post } = endpoint(ok, 30);
    const cache = new MemoryTokenCache();
    const a = new OAuthTokens({ cache, post });
    const b = new OAuthTokens({ cache, post });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).bearer('dst_1', AUTH, 2_000)),
    );
    assert.equal(asked.length, 1, 'one token request in flight per destination');
    assert.ok(answers.every((x) => 'token' in x && x.token === 'tok-1'));
    await a.bearer('dst_1', AUTH, 2_000);
    assert.equal(asked.length, 1, 'cached');
    await a.bearer('dst_1', { ...AUTH, clientSecret: 'rotated' }, 2_000);
    assert.equal(asked.length, 2, 'a changed credential never uses the old one’s token');
  });

  it('keeps a token until a tenth of its lifetime before it expires, at most 60 s before', async () => {
    assert.equal(tokenTtlMs(3_600), 3_540_000);
    assert.equal(tokenTtlMs(100), 90_000);
    assert.equal(tokenTtlMs(undefined), 3_540_000, 'no expires_in: an hour, less the margin');
    assert.equal(tokenTtlMs(-5), 3_540_000);
    let now = 1_000_000;
    const clock = () => now;
    const { asked, post } = endpoint((n) => ok(n, 100));
    const tokens = new OAuthTokens({ cache: new MemoryTokenCache(clock), post, clock });
    await tokens.bearer('dst_1', AUTH, 1_000);
    now += 89_000;
    assert.deepEqual(await tokens.bearer('dst_1', AUTH, 1_000), { token: 'tok-1' });
    now += 1_000;
    assert.deepEqual(await tokens.bearer('dst_1', AUTH, 1_000), { token: 'tok-2' }, 'asked anew at 90 s');
    assert.equal(asked.length, 2);
  });

  it('a failure answers with the endpoint’s status and words, and holds new requests back for a few seconds', async () => {
    let now = 0;
    const clock = () => now;
    let refuse = true;
    const { asked, post } = endpoint((n) =>
      refuse
        ? {
            statusCode: 401,
            body: JSON.stringify({ error: 'invalid_client', error_description: 'bad secret' }),
          }
        : ok(n),
    );
    const counted: string[] = [];
    const tokens = new OAuthTokens({
      cache: new MemoryTokenCache(clock),
      post,
      clock,
      counted: (r) => counted.push(r),
    });
    const first = await tokens.bearer('dst_1', AUTH, 1_000);
    assert.deepEqual(first, { error: 'token endpoint answered 401: invalid_client: bad secret' });
    now += 4_000;
    assert.deepEqual(await tokens.bearer('dst_1', AUTH, 1_000), first, 'held back: no new request');
    assert.equal(asked.length, 1);
    refuse = false;
    now += 1_001;
    assert.deepEqual(await tokens.bearer('dst_1', AUTH, 1_000), { token: 'tok-2' });
    assert.deepEqual(counted, ['error', 'ok']);
  });

  it('refuses an answer without a usable bearer token, and names a network failure', async () => {
    const answers = [
      { statusCode: 200, body: 'not json' },
      { statusCode: 200, body: JSON.stringify({ token_type: 'Bearer' }) },
      { statusCode: 200, body: JSON.stringify({ access_token: 'a b', token_type: 'Bearer' }) },
      { statusCode: 200, body: JSON.stringify({ access_token: 'x', token_type: 'mac' }) },
      { statusCode: 503, body: '' },
      { error: { code: 'timeout', message: 'no response within 1000 ms' } },
    ];
    const expected = [
      /without a JSON body/,
      /without a usable access_token/,
      /without a usable access_token/,
      /a mac token, not a bearer token/,
      /^token endpoint answered 503$/,
      /^token endpoint: timeout: no response within 1000 ms$/,
    ];
    for (const [i, answer] of answers.entries()) {
      const tokens = new OAuthTokens({ cache: new MemoryTokenCache(), post: async () => answer });
      const got = await tokens.bearer('dst_1', AUTH, 1_000);
      assert.ok('error' in got && expected[i]?.test(got.error), `${i}: ${JSON.stringify(got)}`);
    }
  });

  it('a 401 from the receiver drops the token it was sent with, not a newer one', async () => {
    const { asked, post } = endpoint(ok);
    const cache = new MemoryTokenCache();
    const tokens = new OAuthTokens({ cache, post });
    await tokens.bearer('dst_1', AUTH, 1_000);
    await tokens.rejected('dst_1', AUTH, 'tok-0'); // an older token: the cached one stays
    assert.deepEqual(await tokens.bearer('dst_1', AUTH, 1_000), { token: 'tok-1' });
    await tokens.rejected('dst_1', AUTH, 'tok-1');
    assert.deepEqual(await tokens.bearer('dst_1', AUTH, 1_000), { token: 'tok-2' });
    assert.equal(asked.length, 2);
  });

  it('a worker waiting on another’s request gives up at its deadline', async () => {
    const cache = new MemoryTokenCache();
    await cache.lock(tokenKey('dst_1', AUTH), 'another worker', 10_000);
    const tokens = new OAuthTokens({ cache, post: async () => ok(1) });
    const got = await tokens.bearer('dst_1', AUTH, 200);
    assert.ok('error' in got && /no token within 200 ms/.test(got.error));
  });
});
