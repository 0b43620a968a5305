/**
 * What a receiver wants besides the URL (docs/api.md "Custom headers and credentials"): the
 * destination's `headers` and `auth`, as written and as answered. The rules for names and
 * values are `@sluice/core`'s (receiver-auth.ts), the same the delivery sends by.
 */

import {
  type DestinationHeaders,
  headerBytes,
  headerNameProblem,
  isHeaderValue,
  MAX_HEADER_BYTES,
  MAX_HEADERS,
  MAX_PEM_BYTES,
} from '@sluice/core';
import { z } from 'zod';

/**
 * An http(s) URL as it will be stored and sent: no whitespace or control character (the URL
 * parser would drop a CR, LF or tab silently, and the URL stored would not be the one used)
 * and no userinfo, not even empty (`http://:@host/`): credentials go in `auth`.
 */
function isPlainHttpUrl(value: string): boolean {
  if (/[\s\p{Cc}]/u.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const authority = value.slice(value.indexOf('//') + 2).split(/[/?#]/, 1)[0] ?? '';
  return !authority.includes('@');
}

export const httpUrl = z
  .string()
  .max(2_048)
  .refine(isPlainHttpUrl, 'must be an http(s) URL without credentials, spaces or control characters');

const VISIBLE = 'must be visible ASCII and spaces';

const headerValue = z.string().max(MAX_HEADER_BYTES).refine(isHeaderValue, VISIBLE);

/** The problems of the names of `headers`, given whether `auth` is set. */
export function headerProblems(
  headers: DestinationHeaders,
  auth: boolean,
): { name: string; message: string }[] {
  const problems: { name: string; message: string }[] = [];
  const seen = new Set<string>();
  for (const name of Object.keys(headers)) {
    const problem = headerNameProblem(name, auth);
    if (problem !== undefined) problems.push({ name, message: problem });
    else if (seen.has(name.toLowerCase()))
      problems.push({ name, message: 'named twice (header names compare without case)' });
    seen.add(name.toLowerCase());
  }
  return problems;
}

export const HeadersInput = z
  .record(z.string(), headerValue)
  .superRefine((headers, ctx) => {
    const n = Object.keys(headers).length;
    if (n > MAX_HEADERS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_HEADERS} headers (${n})` });
    if (headerBytes(headers) > MAX_HEADER_BYTES)
      ctx.addIssue({
        code: 'custom',
        message: `at most ${MAX_HEADER_BYTES} bytes of names and values in all`,
      });
    for (const { name, message } of headerProblems(headers, false))
      ctx.addIssue({ code: 'custom', message, path: [name] });
  })
  .meta({
    description:
      'Sent on every attempt: at most 20, names RFC 9110 tokens, values visible ASCII and spaces, 8 KiB in all. Not host, content-type, content-length, transfer-encoding, connection, any webhook-* name, or authorization when auth is set. Not secret: shown in every answer.',
  });

/** A field of the OAuth2 credential: printable, no control character (it goes in a form body and Basic). */
const oauthText = (min: number) =>
  z
    .string()
    .min(min)
    .max(1_024)
    .regex(/^[^\p{Cc}]*$/u, 'must hold no control character');

const secretValue = z.string().min(1).max(4_096).refine(isHeaderValue, VISIBLE);

export const AuthInput = z
  .discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('bearer'),
      token: z
        .string()
        .min(1)
        .max(4_096)
        .regex(/^[\x21-\x7e]+$/, 'must be visible ASCII, no spaces')
        .meta({ description: 'Sent as `authorization: Bearer <token>`; never shown again.' }),
    }),
    z.strictObject({
      type: z.literal('basic'),
      username: z
        .string()
        .min(1)
        .max(256)
        // RFC 7617: the user-id holds no colon; no control character in either.
        .regex(/^[^:\p{Cc}]+$/u, 'must hold no colon and no control character'),
      password: z
        .string()
        .max(1_024)
        .regex(/^[^\p{Cc}]*$/u, 'must hold no control character')
        .meta({ description: 'Never shown again.' }),
    }),
    z.strictObject({
      type: z.literal('header'),
      name: z.string().superRefine((name, ctx) => {
        const problem = headerNameProblem(name, true);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      }),
      value: secretValue.meta({ description: 'Never shown again.' }),
    }),
    z.strictObject({
      type: z.literal('oauth2_client_credentials'),
      tokenUrl: httpUrl.meta({
        description:
          "The authorization server's token endpoint (RFC 6749 §4.4), under the same network rules as the destination's URL.",
      }),
      clientId: oauthText(1),
      clientSecret: oauthText(1).meta({ description: 'Sent by HTTP Basic to tokenUrl; never shown again.' }),
      scope: oauthText(1).optional(),
      audience: oauthText(1).optional(),
    }),
  ])
  .meta({
    description:
      'The credential the receiver checks: a bearer token, HTTP Basic (RFC 7617), an API key in a header of its own, or OAuth2 client credentials (RFC 6749 §4.4: a token from tokenUrl, cached until shortly before it expires and shared by every worker, sent as a bearer token). Its secret is stored encrypted and never shown; null removes it.',
  });

export const AuthView = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('bearer') }),
    z.object({ type: z.literal('basic'), username: z.string() }),
    z.object({ type: z.literal('header'), name: z.string() }),
    z.object({
      type: z.literal('oauth2_client_credentials'),
      tokenUrl: z.string(),
      clientId: z.string(),
      scope: z.string().optional(),
      audience: z.string().optional(),
    }),
  ])
  .meta({
    id: 'DestinationAuth',
    description: 'The credential: its type and the fields that are not secret.',
  });

const pem = (description: string) =>
  z
    .string()
    .min(1)
    .max(MAX_PEM_BYTES)
    .refine((s) => s.includes('-----BEGIN '), 'must be PEM text')
    .meta({ description });

/** `tls` as written; what the text holds (a key that is not the certificate's…) the route checks (`tlsProblems`). */
export const TlsInput = z
  .strictObject({
    clientCertificate: pem('PEM: the client certificate (intermediates may follow it).').optional(),
    clientKey: pem('PEM: its private key, unencrypted. Stored encrypted; never shown again.').optional(),
    ca: pem("PEM: CA certificates the receiver's certificate may chain to, besides the system's.").optional(),
  })
  .meta({
    description:
      "Mutual TLS for an https URL: the client certificate and key Sluice presents, and a private CA the receiver is checked against besides the system's. null removes it.",
  });

const CertificateView = z
  .object({
    subject: z.string(),
    issuer: z.string(),
    notAfter: z.string().meta({ description: 'ISO 8601: when it stops being valid.' }),
    fingerprint256: z.string(),
  })
  .meta({ id: 'Certificate' });

export const TlsView = z
  .object({ clientCertificate: CertificateView.optional(), ca: CertificateView.optional() })
  .meta({ id: 'DestinationTls', description: 'The certificates, described; never the key.' });
