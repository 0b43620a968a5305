/**
 * The distributed shape's OAuth2 token cache (engine oauth-tokens.ts `TokenCache`): one Redis
 * for every worker, so a fleet asks a token endpoint once per token lifetime, not once per
 * process. The token is sealed with the deployment's keyring (it opens the receiver as the
 * credential does); the lock of the one request in flight is SET NX PX with its owner, released
 * by that owner only (`delIfEqual-1.lua`). One-key commands, so a Redis Cluster serves each
 * from one node.
 */

import { type Keyring, openSecret, sealSecret } from '@sluice/core';
import type { CachedToken, TokenCache } from '@sluice/engine';
import type { RedisClient } from './client.ts';
import type { Keys } from './keys.ts';
import { Scripts } from './scripts.ts';

export class RedisTokenCache implements TokenCache {
  private readonly redis: RedisClient;
  private readonly keys: Keys;
  private readonly keyring: Keyring;
  private readonly scripts: Scripts;

  constructor(redis: RedisClient, keys: Keys, keyring: Keyring) {
    this.redis = redis;
    this.keys = keys;
    this.keyring = keyring;
    this.scripts = new Scripts(redis, keys);
  }

  /**
   * The value (`<until>:<sealed token>`) and what is in it; a value no key of the keyring
   * opens is none.
   */
  private async read(key: string): Promise<{ value: string; token: string; until: number } | null> {
    const value = await this.redis.get(this.keys.oauth(key, 'token'));
    const colon = value?.indexOf(':') ?? -1;
    if (value === null || value === undefined || colon < 0) return null;
    try {
      return {
        value,
        until: Number(value.slice(0, colon)),
        token: openSecret(this.keyring, value.slice(colon + 1)),
      };
    } catch {
      return null; // sealed by a key since retired: a new token is asked for
    }
  }

  async get(key: string): Promise<CachedToken | null> {
    const held = await this.read(key);
    return held === null ? null : { token: held.token, until: held.until };
  }

  async set(key: string, token: string, until: number): Promise<void> {
    const ms = Math.max(1, until - Date.now());
    await this.redis.set(
      this.keys.oauth(key, 'token'),
      `${until}:${sealSecret(this.keyring, token)}`,
      'PX',
      ms,
    );
  }

  async drop(key: string, token: string): Promise<void> {
    const held = await this.read(key);
    if (held?.token === token) await this.scripts.delIfEqual(this.keys.oauth(key, 'token'), held.value);
  }

  async lock(key: string, owner: string, ms: number): Promise<boolean> {
    return (await this.redis.set(this.keys.oauth(key, 'lock'), owner, 'PX', ms, 'NX')) === 'OK';
  }

  async unlock(key: string, owner: string): Promise<void> {
    await this.scripts.delIfEqual(this.keys.oauth(key, 'lock'), owner);
  }

  async failure(key: string): Promise<string | null> {
    return this.redis.get(this.keys.oauth(key, 'failed'));
  }

  async fail(key: string, message: string, ms: number): Promise<void> {
    await this.redis.set(this.keys.oauth(key, 'failed'), message, 'PX', ms);
  }
}
