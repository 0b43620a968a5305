/**
 * A private PKI for mutual-TLS tests, made with the `openssl` command line as a reader of
 * docs/api.md "Mutual TLS" would make one: a CA, a server certificate for 127.0.0.1 and
 * localhost, and client certificates, each signed by the CA. EC P-256 keys (quick to make).
 */

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Issued {
  cert: string;
  key: string;
}

export interface TestPki {
  ca: Issued;
  /** A certificate signed by the CA, valid `days` (default 30) from now. */
  issue(cn: string, options?: { days?: number; server?: boolean }): Issued;
  close(): void;
}

const openssl = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

export function startTestPki(name = 'Sluice Test CA'): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-pki-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(dir, [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '30',
    '-subj',
    `/CN=${name}`,
  ]);
  const read = (file: string) => readFileSync(join(dir, file), 'utf8');
  let n = 0;
  return {
    ca: { cert: read('ca.pem'), key: read('ca.key') },
    issue(cn, options = {}) {
      const base = `c${++n}`;
      openssl(dir, ['req', ...ec, '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${cn}`]);
      const ext = options.server
        ? 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n'
        : 'extendedKeyUsage=clientAuth\n';
      writeFileSync(join(dir, `${base}.ext`), ext);
      openssl(dir, [
        'x509',
        '-req',
        '-in',
        `${base}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${base}.pem`,
        '-days',
        String(options.days ?? 30),
        '-extfile',
        `${base}.ext`,
      ]);
      return { cert: read(`${base}.pem`), key: read(`${base}.key`) };
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
