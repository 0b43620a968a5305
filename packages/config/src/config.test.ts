import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateKeyText } from '@sluice/core';
import { z } from 'zod';
import {
  alertSettings,
  alerts,
  apiConfig,
  bool,
  breaker,
  ConfigError,
  checkAlerts,
  checkBreaker,
  checkShape,
  common,
  distributed,
  eitherShape,
  healthPolicy,
  ingest,
  int,
  isDistributed,
  network,
  parseConfig,
  parseEnv,
  sweeping,
} from './index.ts';

const schema = z.object({
  ...common,
  ...distributed,
  PORT: int(0, 65_535).default(3000),
  X: bool.default(false),
});
const good = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/sluice',
  REDIS_URL: 'redis://127.0.0.1:6379/0',
  SLUICE_ENCRYPTION_KEY: generateKeyText(),
};

describe('parseEnv', () => {
  it('applies defaults and coerces', () => {
    const c = parseEnv(schema, { ...good, PORT: '8080', X: '1' });
    assert.equal(c.PORT, 8080);
    assert.equal(c.X, true);
    assert.equal(c.HOST, '127.0.0.1');
    assert.equal(c.SLUICE_REDIS_PREFIX, 'sluice');
  });

  it('names every bad variable, what it expected and what it got', () => {
    assert.throws(
      () => parseEnv(schema, { REDIS_URL: 'http://x', PORT: 'eighty', SLUICE_LOG_LEVEL: 'loud' }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        for (const name of ['DATABASE_URL', 'REDIS_URL', 'PORT', 'SLUICE_LOG_LEVEL']) {
          assert.match(err.message, new RegExp(`^  ${name}: `, 'm'), name);
        }
        assert.match(err.message, /DATABASE_URL: .*\(unset\)/);
        assert.match(err.message, /REDIS_URL: a redis: or rediss: URL .*\(got "http:\/\/x"\)/);
        return true;
      },
    );
  });

  it('parses SLUICE_ENCRYPTION_KEY into a keyring, requires it, and never repeats a bad one', () => {
    assert.deepEqual(
      parseEnv(schema, good).SLUICE_ENCRYPTION_KEY.keys.map((k) => k.id),
      [good.SLUICE_ENCRYPTION_KEY.split(':')[0]],
    );
    const { SLUICE_ENCRYPTION_KEY: _, ...without } = good;
    assert.throws(() => parseEnv(schema, without), /SLUICE_ENCRYPTION_KEY: .*\(unset\)/);
    const bad = 'k1:dG9vIHNob3J0IGEga2V5';
    assert.throws(
      () => parseEnv(schema, { ...good, SLUICE_ENCRYPTION_KEY: bad }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /SLUICE_ENCRYPTION_KEY: .*32 bytes.*\(set; not shown\)/);
        assert.ok(!err.message.includes(bad));
        return true;
      },
    );
  });

  it('refuses a prefix that would break the key layout', () => {
    assert.throws(() => parseEnv(schema, { ...good, SLUICE_REDIS_PREFIX: 'a:b' }), /SLUICE_REDIS_PREFIX/);
  });
});

describe('alert settings', () => {
  const alertSchema = z.object({ ...alerts }).superRefine(checkAlerts);

  it('defaults: both thresholds on, no webhook', () => {
    const s = alertSettings(parseEnv(alertSchema, {}));
    assert.deepEqual(s.thresholds, { pendingCount: 10_000, pendingAgeSeconds: 300 });
    assert.equal(s.sink, null);
  });

  it('0 turns a kind off; the URL with its secret and rate makes the sink', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const s = alertSettings(
      parseEnv(alertSchema, {
        SLUICE_ALERT_PENDING_COUNT: '0',
        SLUICE_ALERT_URL: 'https://ops.example.com/hooks',
        SLUICE_ALERT_SECRET: secret,
        SLUICE_ALERT_RATE_LIMIT: '3/second',
      }),
    );
    assert.equal(s.thresholds.pendingCount, null);
    assert.deepEqual(s.sink, {
      url: 'https://ops.example.com/hooks',
      secret,
      rateLimit: { limit: 3, period: 'second' },
    });
  });

  it('names a URL without its secret, a bad rate and a bad secret', () => {
    assert.throws(
      () => parseEnv(alertSchema, { SLUICE_ALERT_URL: 'https://ops.example.com/hooks' }),
      /SLUICE_ALERT_SECRET: required when SLUICE_ALERT_URL is set/,
    );
    assert.throws(
      () => parseEnv(alertSchema, { SLUICE_ALERT_RATE_LIMIT: '10/day' }),
      /SLUICE_ALERT_RATE_LIMIT/,
    );
    assert.throws(() => parseEnv(alertSchema, { SLUICE_ALERT_SECRET: 'hunter2' }), /SLUICE_ALERT_SECRET/);
  });
});

describe('breaker settings', () => {
  const withBreaker = z.object({ ...breaker }).superRefine(checkBreaker);

  it('defaults to the documented policy', () => {
    assert.deepEqual(healthPolicy(parseEnv(withBreaker, {})), {
      degradeAfter: 3,
      suspendAfter: 10,
      windowMs: 60_000,
      windowMinAttempts: 20,
      windowFailurePercent: 50,
      windowSuspendPercent: 70,
      probeInitialMs: 5_000,
      probeMaxMs: 600_000,
    });
  });

  it('refuses settings that contradict each other, naming the variable', () => {
    assert.throws(
      () =>
        parseEnv(withBreaker, {
          SLUICE_BREAKER_DEGRADE_AFTER: '5',
          SLUICE_BREAKER_SUSPEND_AFTER: '5',
          SLUICE_BREAKER_PROBE_INITIAL_MS: '1000',
          SLUICE_BREAKER_PROBE_MAX_MS: '999',
        }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(
          err.message,
          /SLUICE_BREAKER_SUSPEND_AFTER: must be greater than SLUICE_BREAKER_DEGRADE_AFTER/,
        );
        assert.match(
          err.message,
          /SLUICE_BREAKER_PROBE_MAX_MS: must be at least SLUICE_BREAKER_PROBE_INITIAL_MS/,
        );
        return true;
      },
    );
    assert.throws(() => parseEnv(withBreaker, { SLUICE_BREAKER_WINDOW_FAILURE_PERCENT: '101' }), ConfigError);
  });
});

describe('the shape: DATABASE_URL and REDIS_URL together', () => {
  const either = z.object({ ...eitherShape }).superRefine(checkShape);

  it('neither: the single box; both: the distributed shape', () => {
    const single = parseEnv(either, {});
    assert.equal(isDistributed(single), false);
    const both = parseEnv(either, good);
    assert.equal(isDistributed(both), true);
    assert.equal(both.DATABASE_URL, good.DATABASE_URL);
  });

  it('one alone: an error naming the other', () => {
    assert.throws(
      () => parseEnv(either, { DATABASE_URL: good.DATABASE_URL }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(
          err.message,
          /^ {2}REDIS_URL: required when the other of DATABASE_URL\/REDIS_URL is set .*\(unset\)$/m,
        );
        assert.doesNotMatch(err.message, /DATABASE_URL:/);
        return true;
      },
    );
    assert.throws(
      () => parseEnv(either, { REDIS_URL: good.REDIS_URL }),
      /^ {2}DATABASE_URL: required when the other of DATABASE_URL\/REDIS_URL is set/m,
    );
  });
});

describe('parseConfig', () => {
  const schema = z.object({ ...sweeping, ...common });

  it("gives what a test leaves out the schema's defaults, and takes numbers as numbers", () => {
    const c = parseConfig(schema, { SLUICE_LEASE_MS: 5_000 });
    assert.equal(c.SLUICE_LEASE_MS, 5_000);
    assert.equal(c.SLUICE_SWEEP_INTERVAL_MS, 5_000);
    assert.equal(c.SLUICE_RETENTION_DAYS, 14);
    assert.equal(c.SLUICE_DESTINATION_CACHE_SIZE, 100_000);
  });

  it('refuses a bad override as the environment would', () => {
    assert.throws(() => parseConfig(schema, { SLUICE_LEASE_MS: 10 }), /SLUICE_LEASE_MS: .*\(got 10\)/);
  });
});

describe('ingest', () => {
  const api = z.object({ ...ingest, ...network });

  it('a payload nests at most 100 levels by default, at most 1,000 when set', () => {
    assert.equal(apiConfig(parseEnv(api, {})).maxPayloadDepth, 100);
    assert.equal(apiConfig(parseEnv(api, { SLUICE_MAX_PAYLOAD_DEPTH: '1000' })).maxPayloadDepth, 1_000);
    // Deeper than JSON.stringify can go with room to spare is refused at start-up.
    assert.throws(() => parseEnv(api, { SLUICE_MAX_PAYLOAD_DEPTH: '5000' }), /SLUICE_MAX_PAYLOAD_DEPTH/);
    assert.throws(() => parseEnv(api, { SLUICE_MAX_PAYLOAD_DEPTH: '0' }), /SLUICE_MAX_PAYLOAD_DEPTH/);
  });

  it('unknown event types are accepted unless SLUICE_EVENT_TYPES_STRICT=true', () => {
    assert.equal(apiConfig(parseEnv(api, {})).eventTypesStrict, false);
    assert.equal(apiConfig(parseEnv(api, { SLUICE_EVENT_TYPES_STRICT: 'true' })).eventTypesStrict, true);
    assert.throws(
      () => parseEnv(api, { SLUICE_EVENT_TYPES_STRICT: 'yes please' }),
      /SLUICE_EVENT_TYPES_STRICT/,
    );
  });

  it('SLUICE_PUBLIC_URL: an http(s) URL, its trailing slashes dropped; unset by default', () => {
    assert.equal(apiConfig(parseEnv(api, {})).publicUrl, undefined);
    assert.equal(
      apiConfig(parseEnv(api, { SLUICE_PUBLIC_URL: 'https://hooks.example.com/sluice/' })).publicUrl,
      'https://hooks.example.com/sluice',
    );
    assert.throws(() => parseEnv(api, { SLUICE_PUBLIC_URL: 'ftp://x' }), /SLUICE_PUBLIC_URL/);
    assert.throws(() => parseEnv(api, { SLUICE_PUBLIC_URL: 'hooks.example.com' }), /SLUICE_PUBLIC_URL/);
    for (const bad of ['https://h.example/?x=1', 'https://h.example/#top', 'https://u:p@h.example'])
      assert.throws(() => parseEnv(api, { SLUICE_PUBLIC_URL: bad }), /SLUICE_PUBLIC_URL/, bad);
  });

  it("SLUICE_PORTAL_FRAME_ANCESTORS: CSP sources, default 'self'; a ; or a , is refused", () => {
    assert.equal(apiConfig(parseEnv(api, {})).portalFrameAncestors, "'self'");
    const sources = "'self' https://app.example.com https://*.example.org:8443 http://127.0.0.1:5173";
    assert.equal(
      apiConfig(parseEnv(api, { SLUICE_PORTAL_FRAME_ANCESTORS: sources })).portalFrameAncestors,
      sources,
    );
    // Sources on several lines (as YAML may write them) make one header line.
    assert.equal(
      apiConfig(parseEnv(api, { SLUICE_PORTAL_FRAME_ANCESTORS: "'self'\n  https://app.example.com\t" }))
        .portalFrameAncestors,
      "'self' https://app.example.com",
    );
    const refused = ["'self'; script-src *", 'https://a.example, https://b.example', '', "'unsafe-inline'"];
    // Characters a header may not carry, in a path.
    refused.push('https://a.example/\u20ac', 'https://a.example/\u0001');
    for (const bad of refused)
      assert.throws(
        () => parseEnv(api, { SLUICE_PORTAL_FRAME_ANCESTORS: bad }),
        /SLUICE_PORTAL_FRAME_ANCESTORS/,
        bad,
      );
  });
});
