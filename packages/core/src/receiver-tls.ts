/**
 * A destination's TLS (docs/api.md "Mutual TLS"): a client certificate and its key for a
 * receiver that asks for one, and a private CA its certificate is checked against besides
 * the system's. The rules are written once here for the API's validation, the answers and
 * the delivery; the key is stored sealed (docs/adr/0015).
 */

import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { isSealedWithCurrent, type Keyring, openSecret, sealSecret } from './secret-box.ts';

export interface DestinationTls {
  /** PEM: the client certificate, and any intermediates after it. */
  clientCertificate?: string;
  /** PEM: its private key, unencrypted. */
  clientKey?: string;
  /** PEM: one or more CA certificates the receiver's certificate may chain to. */
  ca?: string;
}

/** What answers show of a certificate. */
export interface CertificateView {
  subject: string;
  issuer: string;
  /** ISO 8601. */
  notAfter: string;
  fingerprint256: string;
}

export interface PresentedTls {
  clientCertificate?: CertificateView;
  ca?: CertificateView;
}

/** A certificate this close to its end is flagged (health, `sluice.destination.certificate_expiring`). */
export const CERTIFICATE_WARNING_MS = 14 * 86_400_000;
/** The most PEM text of each field. */
export const MAX_PEM_BYTES = 64 * 1_024;

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates of a PEM text, in order (none when it holds none, or one is not one). */
function certificatesOf(pem: string): X509Certificate[] | undefined {
  const blocks = pem.match(PEM_BLOCK);
  if (blocks === null) return undefined;
  try {
    return blocks.map((b) => new X509Certificate(b));
  } catch {
    return undefined;
  }
}

const oneLine = (name: string) => name.split('\n').filter(Boolean).join(', ');

function describeCertificate(cert: X509Certificate): CertificateView {
  return {
    subject: oneLine(cert.subject),
    issuer: oneLine(cert.issuer),
    notAfter: new Date(cert.validTo).toISOString(),
    fingerprint256: cert.fingerprint256,
  };
}

/** A problem of a `tls` value, at its path below `tls`. */
export interface TlsProblem {
  path: 'clientCertificate' | 'clientKey' | 'ca';
  message: string;
}

function keyOf(pem: string): KeyObject | string {
  try {
    return createPrivateKey(pem);
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    return /passphrase/i.test(text)
      ? 'an encrypted key: give it without a passphrase'
      : 'must be a PEM private key';
  }
}

/** Every problem of `tls` at `now`: what is not PEM, a key that is not the certificate's, an expired certificate. */
export function tlsProblems(tls: DestinationTls, now: number): TlsProblem[] {
  const problems: TlsProblem[] = [];
  const { clientCertificate, clientKey, ca } = tls;
  if (clientCertificate === undefined && clientKey === undefined && ca === undefined)
    return [{ path: 'clientCertificate', message: 'give a client certificate and its key, a CA, or both' }];
  if ((clientCertificate === undefined) !== (clientKey === undefined))
    problems.push(
      clientCertificate === undefined
        ? { path: 'clientCertificate', message: 'a client key needs its certificate' }
        : { path: 'clientKey', message: 'a client certificate needs its key' },
    );
  const certs = clientCertificate === undefined ? undefined : certificatesOf(clientCertificate);
  if (clientCertificate !== undefined && certs === undefined)
    problems.push({ path: 'clientCertificate', message: 'must be a PEM certificate' });
  const leaf = certs?.[0];
  if (leaf !== undefined && Date.parse(leaf.validTo) <= now)
    problems.push({
      path: 'clientCertificate',
      message: `expired on ${new Date(leaf.validTo).toISOString()}`,
    });
  if (leaf !== undefined && Date.parse(leaf.validFrom) > now)
    problems.push({
      path: 'clientCertificate',
      message: `not valid before ${new Date(leaf.validFrom).toISOString()}`,
    });
  if (clientKey !== undefined) {
    const key = keyOf(clientKey);
    if (typeof key === 'string') problems.push({ path: 'clientKey', message: key });
    else if (leaf !== undefined && !leaf.checkPrivateKey(key))
      problems.push({ path: 'clientKey', message: 'is not the key of clientCertificate' });
  }
  if (ca !== undefined) {
    const cas = certificatesOf(ca);
    if (cas === undefined) problems.push({ path: 'ca', message: 'must be one or more PEM certificates' });
    else if (cas.length > 20) problems.push({ path: 'ca', message: 'at most 20 certificates' });
  }
  return problems;
}

/** What answers show: each certificate's subject, issuer, end and fingerprint, never the key. */
export function presentTls(tls: DestinationTls | null): PresentedTls | null {
  if (tls === null) return null;
  const out: PresentedTls = {};
  const leaf = tls.clientCertificate === undefined ? undefined : certificatesOf(tls.clientCertificate)?.[0];
  if (leaf !== undefined) out.clientCertificate = describeCertificate(leaf);
  const ca = tls.ca === undefined ? undefined : certificatesOf(tls.ca)?.[0];
  if (ca !== undefined) out.ca = describeCertificate(ca);
  return out;
}

/** When the client certificate stops being valid (ms), or undefined without one. */
export function clientCertificateEnd(tls: DestinationTls | null): number | undefined {
  const pem = tls?.clientCertificate;
  const leaf = pem === undefined ? undefined : certificatesOf(pem)?.[0];
  return leaf === undefined ? undefined : Date.parse(leaf.validTo);
}

/** `tls` with its key sealed (`seal`) or opened (`open`) with `keyring`. */
export function mapTlsSecret(
  tls: DestinationTls | null,
  keyring: Keyring,
  how: 'seal' | 'open',
): DestinationTls | null {
  if (tls === null || tls.clientKey === undefined) return tls;
  const clientKey = how === 'seal' ? sealSecret(keyring, tls.clientKey) : openSecret(keyring, tls.clientKey);
  return { ...tls, clientKey };
}

/** `tls` sealed with the keyring's sealing key, or undefined when it already is (at start). */
export function resealedTls(tls: DestinationTls, keyring: Keyring): DestinationTls | undefined {
  if (tls.clientKey === undefined || isSealedWithCurrent(keyring, tls.clientKey)) return undefined;
  return mapTlsSecret(mapTlsSecret(tls, keyring, 'open'), keyring, 'seal') ?? undefined;
}
