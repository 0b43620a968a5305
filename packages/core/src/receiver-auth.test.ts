/**
 * A destination's headers and credential (receiver-auth.ts): the names a destination may not
 * take, the request headers each credential makes, what answers show of it, and its secret
 * sealed and opened with the keyring.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type DestinationAuth,
  headerNameProblem,
  isHeaderValue,
  mapAuthSecret,
  presentAuth,
  receiverHeaders,
  resealedAuth,
} from './receiver-auth.ts';
import { generateKeyText, newKeyring, parseKeyring } from './secret-box.ts';

describe('receiver headers and credentials', () => {
  it('refuses the names Sluice sets, any webhook-* name, authorization beside a credential, and non-tokens', () => {
    for (const name of [
      'Host',
      'content-type',
      'Content-Length',
      'transfer-encoding',
      'CONNECTION',
      'Webhook-Id',
      'webhook-anything',
    ])
      assert.ok(headerNameProblem(name, false), name);
    assert.equal(
      headerNameProblem('Authorization', false),
      undefined,
      'a header like any other without auth',
    );
    assert.ok(headerNameProblem('Authorization', true));
    for (const name of ['', 'two words', 'a:b', 'é', 'x\r\ny'])
      assert.ok(headerNameProblem(name, false), JSON.stringify(name));
    for (const name of ['X-Api-Key', "x!#$%&'*+-.^_`|~9", 'User-Agent'])
      assert.equal(headerNameProblem(name, false), undefined);
    assert.ok(isHeaderValue('a value, with spaces ~'));
    for (const value of ['a\r\nb', 'tab\there', 'é', '\u0000'])
      assert.equal(isHeaderValue(value), false, JSON.stringify(value));
  });

  it('sends the headers by lower-case name, then the credential', () => {
    assert.deepEqual(receiverHeaders({ 'X-Tenant': 'acme' }, { type: 'bearer', token: 't0k' }), {
      'x-tenant': 'acme',
      authorization: 'Bearer t0k',
    });
    // RFC 7617: base64 of the UTF-8 of user-id ":" password.
    assert.deepEqual(receiverHeaders({}, { type: 'basic', username: 'Aladdin', password: 'open sesame' }), {
      authorization: 'Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==',
    });
    assert.deepEqual(receiverHeaders({}, { type: 'basic', username: 'test', password: '123£' }), {
      authorization: `Basic ${Buffer.from('test:123£', 'utf8').toString('base64')}`,
    });
    assert.deepEqual(receiverHeaders({ A: '1' }, { type: 'header', name: 'X-Api-Key', value: 'k' }), {
      a: '1',
      'x-api-key': 'k',
    });
    assert.deepEqual(receiverHeaders({}, null), {});
    // OAuth2's header is the token of the moment, added where the attempt is made.
    const oauth: DestinationAuth = {
      type: 'oauth2_client_credentials',
      tokenUrl: 'https://auth.example/token',
      clientId: 'c',
      clientSecret: 's',
    };
    assert.deepEqual(receiverHeaders({ A: '1' }, oauth), { a: '1' });
  });

  it('shows a credential without its secret', () => {
    assert.deepEqual(presentAuth({ type: 'bearer', token: 's' }), { type: 'bearer' });
    assert.deepEqual(presentAuth({ type: 'basic', username: 'u', password: 's' }), {
      type: 'basic',
      username: 'u',
    });
    assert.deepEqual(presentAuth({ type: 'header', name: 'X-K', value: 's' }), {
      type: 'header',
      name: 'X-K',
    });
    assert.deepEqual(
      presentAuth({
        type: 'oauth2_client_credentials',
        tokenUrl: 'https://auth.example/token',
        clientId: 'c',
        clientSecret: 's',
        audience: 'https://api.example',
      }),
      {
        type: 'oauth2_client_credentials',
        tokenUrl: 'https://auth.example/token',
        clientId: 'c',
        audience: 'https://api.example',
      },
    );
    assert.equal(presentAuth(null), null);
  });

  it('seals the secret field alone, opens it again, and seals it anew after a rotation', () => {
    const keyText = generateKeyText();
    const keyring = parseKeyring(keyText);
    const cases: DestinationAuth[] = [
      { type: 'bearer', token: 'secret-token-1' },
      { type: 'basic', username: 'user', password: 'secret-password-2' },
      { type: 'header', name: 'X-K', value: 'secret-value-3' },
      {
        type: 'oauth2_client_credentials',
        tokenUrl: 'https://auth.example/token',
        clientId: 'client',
        clientSecret: 'secret-client-4',
        scope: 'hooks:write',
      },
    ];
    const rotated = parseKeyring(`${generateKeyText()},${keyText}`);
    for (const auth of cases) {
      const sealed = mapAuthSecret(auth, keyring, 'seal');
      assert.ok(!JSON.stringify(sealed).includes('secret-'), 'the secret in the clear');
      assert.deepEqual(
        presentAuth(sealed),
        presentAuth(auth),
        'the fields that are not secret stay as they are',
      );
      assert.deepEqual(mapAuthSecret(sealed, keyring, 'open'), auth);
      assert.equal(
        resealedAuth(sealed as DestinationAuth, keyring),
        undefined,
        'sealed with the current key already',
      );
      const again = resealedAuth(sealed as DestinationAuth, rotated);
      assert.ok(again && JSON.stringify(again).includes(`enc:v1:${rotated.keys[0].id}:`));
      assert.deepEqual(mapAuthSecret(again, rotated, 'open'), auth);
    }
    assert.throws(() =>
      mapAuthSecret(mapAuthSecret(cases[0] ?? null, newKeyring(), 'seal'), keyring, 'open'),
    );
  });
});
