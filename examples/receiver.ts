/**
 * A webhook receiver for trying Sluice on one machine: verifies each request's Standard
 * Webhooks signature (when WEBHOOK_SECRET is set), answers 401 to a request without
 * `authorization: Bearer $RECEIVER_BEARER` (when that is set: a receiver behind a gateway
 * that wants a token), and prints, every second, how many requests arrived and the most in
 * any sliding second so far.
 *
 *   WEBHOOK_SECRET=whsec_… npm run receiver        # listens on 127.0.0.1:4000
 *   RECEIVER_BEARER=tok_… npm run receiver         # and checks a bearer token
 */

import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

// Not PORT: that is Sluice's own, and may be exported in the same shell.
const port = Number(process.env.RECEIVER_PORT ?? 4000);
const secret = process.env.WEBHOOK_SECRET;
const bearer = process.env.RECEIVER_BEARER;
const key = secret?.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : undefined;
const arrivals: number[] = [];
let lo = 0;
let worst = 0;
let badSignatures = 0;
let refused = 0;

/** Whether the request carries the token the receiver wants (any, when none is set). */
function authorized(header: string | undefined): boolean {
  if (bearer === undefined) return true;
  const given = Buffer.from(header ?? '');
  const expected = Buffer.from(`Bearer ${bearer}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
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

createServer((req, res) => {
  const t = performance.timeOrigin + performance.now();
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
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
}).listen(port, '127.0.0.1', () =>
  console.log(
    `receiver on http://127.0.0.1:${port}/ (signatures ${key ? 'checked' : 'not checked'}, bearer token ${bearer ? 'checked' : 'not checked'})`,
  ),
);

let last = 0;
setInterval(() => {
  if (arrivals.length === last) return;
  console.log(
    `received ${arrivals.length} (+${arrivals.length - last})  most in any sliding second: ${worst}  bad signatures: ${badSignatures}  refused credentials: ${refused}`,
  );
  last = arrivals.length;
}, 1_000).unref();
