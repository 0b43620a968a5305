/**
 * A webhook receiver for trying Sluice on one machine: verifies each request's Standard
 * Webhooks signature (when WEBHOOK_SECRET is set), answers 401 to a request without
 * `authorization: Bearer $RECEIVER_BEARER` (when that is set: a receiver behind a gateway
 * that wants a token), and prints, every second, how many requests arrived and the most in
 * any sliding second so far. With RECEIVER_OAUTH_CLIENT=<id>:<secret> it is its own OAuth2
 * authorization server too: `POST /oauth/token` (client credentials by HTTP Basic, RFC 6749
 * §4.4) issues a token valid for RECEIVER_OAUTH_TTL seconds (default 3600), and every other
 * request needs a token it issued that has not expired.
 *
 *   WEBHOOK_SECRET=whsec_… npm run receiver        # listens on 127.0.0.1:4000
 *   RECEIVER_BEARER=tok_… npm run receiver         # and checks a bearer token
 *   RECEIVER_OAUTH_CLIENT=sluice:cs_demo npm run receiver   # issues and checks OAuth2 tokens
 *   RECEIVER_TLS_CERT=server.pem RECEIVER_TLS_KEY=server.key RECEIVER_TLS_CA=ca.pem npm run receiver
 *                                                  # https, admitting clients the CA signed
 */

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';

// Not PORT: that is Sluice's own, and may be exported in the same shell.
const port = Number(process.env.RECEIVER_PORT ?? 4000);
const secret = process.env.WEBHOOK_SECRET;
const bearer = process.env.RECEIVER_BEARER;
const oauthClient = process.env.RECEIVER_OAUTH_CLIENT;
const oauthTtl = Number(process.env.RECEIVER_OAUTH_TTL ?? 3_600);
/** Tokens issued, by value: when each expires (ms). */
const issued = new Map<string, number>();
let tokenRequests = 0;
const key = secret?.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : undefined;
const arrivals: number[] = [];
let lo = 0;
let worst = 0;
let badSignatures = 0;
let refused = 0;

/** Whether `given` is `expected`, in constant time. */
function same(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether the request carries the token the receiver wants (any, when none is set). */
function authorized(header: string | undefined): boolean {
  if (oauthClient !== undefined) {
    const expires = issued.get(/^Bearer (.+)$/.exec(header ?? '')?.[1] ?? '');
    return expires !== undefined && expires > Date.now();
  }
  if (bearer === undefined) return true;
  return same(header ?? '', `Bearer ${bearer}`);
}

function verify(id: string, timestamp: string, body: string, header: string): boolean {
  if (key === undefined) return true;
  const expected = Buffer.from(
    createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64'),
  );
  return header.split(' ').some((sig) => {
    const given = Buffer.from(sig.replace(/^v1,/, ''));
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** `POST /oauth/token`: RFC 6749 §4.4, the client's id and secret by HTTP Basic (§2.3.1). */
function issueToken(
  authorization: string | undefined,
  form: URLSearchParams,
): { status: number; body: object } {
  tokenRequests++;
  const basic = Buffer.from(/^Basic (.+)$/.exec(authorization ?? '')?.[1] ?? '', 'base64').toString();
  const [id = '', secret = ''] = basic.split(':').map((s) => decodeURIComponent(s.replace(/\+/g, ' ')));
  if (!same(`${id}:${secret}`, oauthClient ?? '')) return { status: 401, body: { error: 'invalid_client' } };
  if (form.get('grant_type') !== 'client_credentials')
    return { status: 400, body: { error: 'unsupported_grant_type' } };
  const token = `at_${randomBytes(12).toString('base64url')}`;
  issued.set(token, Date.now() + oauthTtl * 1_000);
  return { status: 200, body: { access_token: token, token_type: 'Bearer', expires_in: oauthTtl } };
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const t = performance.timeOrigin + performance.now();
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (oauthClient !== undefined && req.method === 'POST' && req.url?.endsWith('/oauth/token')) {
      const { status, body } = issueToken(
        req.headers.authorization,
        new URLSearchParams(Buffer.concat(chunks).toString('utf8')),
      );
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
      return;
    }
    const ok = verify(
      String(req.headers['webhook-id']),
      String(req.headers['webhook-timestamp']),
      Buffer.concat(chunks).toString('utf8'),
      String(req.headers['webhook-signature'] ?? ''),
    );
    const allowed = authorized(req.headers.authorization);
    if (!ok) badSignatures++;
    if (!allowed) refused++;
    arrivals.push(t);
    while ((arrivals[lo] as number) <= t - 1_000) lo++;
    worst = Math.max(worst, arrivals.length - lo);
    res.statusCode = ok && allowed ? 200 : 401;
    res.end();
  });
}

// With RECEIVER_TLS_CERT and RECEIVER_TLS_KEY (PEM files) it speaks https; with RECEIVER_TLS_CA
// too, it admits only a client presenting a certificate signed by that CA (mutual TLS).
const tlsFiles = {
  cert: process.env.RECEIVER_TLS_CERT,
  key: process.env.RECEIVER_TLS_KEY,
  ca: process.env.RECEIVER_TLS_CA,
};
const server =
  tlsFiles.cert !== undefined && tlsFiles.key !== undefined
    ? createHttpsServer(
        {
          cert: readFileSync(tlsFiles.cert),
          key: readFileSync(tlsFiles.key),
          ...(tlsFiles.ca === undefined
            ? {}
            : { ca: readFileSync(tlsFiles.ca), requestCert: true, rejectUnauthorized: true }),
        },
        handle,
      )
    : createServer(handle);
const scheme = tlsFiles.cert !== undefined && tlsFiles.key !== undefined ? 'https' : 'http';
server.listen(port, '127.0.0.1', () =>
  console.log(
    `receiver on ${scheme}://127.0.0.1:${port}/ (${tlsFiles.ca ? 'client certificates required; ' : ''}signatures ${key ? 'checked' : 'not checked'}, ${
      oauthClient
        ? 'OAuth2 tokens issued at /oauth/token and checked'
        : `bearer token ${bearer ? 'checked' : 'not checked'}`
    })`,
  ),
);

let last = 0;
setInterval(() => {
  if (arrivals.length === last) return;
  console.log(
    `received ${arrivals.length} (+${arrivals.length - last})  most in any sliding second: ${worst}  bad signatures: ${badSignatures}  refused credentials: ${refused}${
      oauthClient ? `  token requests: ${tokenRequests}` : ''
    }`,
  );
  last = arrivals.length;
}, 1_000).unref();
