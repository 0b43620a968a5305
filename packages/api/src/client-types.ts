/**
 * The typed client's types, generated: `packages/client/src/openapi.ts` is what
 * openapi-typescript makes of the OpenAPI document this API serves at `/openapi.json`, built
 * here in-process from the routes' zod schemas. Building the routes reads neither the store
 * nor the delivery side, so both are stand-ins that throw if anything ever does.
 *
 * `npm run generate:client -w @sluice/api` (this file, run) writes it; client-types.test.ts
 * fails while the committed file is not what the contract makes now. The file is the
 * generator's output byte for byte (biome.json leaves it alone), so that test compares it
 * without a formatter in between.
 */

import { readFile, writeFile } from 'node:fs/promises';
import type { Store } from '@sluice/store';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { buildApi } from './app.ts';
import type { Dispatcher } from './context.ts';

/** Where the client keeps them. */
export const CLIENT_TYPES = new URL('../../client/src/openapi.ts', import.meta.url);

/** The command that writes them, as the test's failure names it. */
export const GENERATE = 'npm run generate:client -w @sluice/api';

const HEADER = `/**
 * Generated from the API's OpenAPI document (GET /openapi.json) by openapi-typescript: do not
 * edit. After a change to the API's contract, run \`${GENERATE}\`.
 */

`;

/** Throws on any use: what the document is built from never reads it. */
function standIn<T>(what: string): T {
  return new Proxy({} as T & object, {
    get: (_target, property) => {
      throw new Error(`building the OpenAPI document used ${what}.${String(property)}`);
    },
  });
}

/** The document `GET /openapi.json` answers, without a server. */
export async function openApiDocument(): Promise<OpenAPI3> {
  const app = await buildApi({
    store: standIn<Store>('the store'),
    dispatcher: standIn<Dispatcher>('the dispatcher'),
    adminToken: 'unused',
    logger: pino({ level: 'silent' }),
    registry: new Registry(),
    config: { allowPrivateNetworks: false, maxPayloadBytes: 1, maxPayloadDepth: 1, maxRequestBytes: 1 },
  });
  try {
    await app.ready();
    return app.swagger() as OpenAPI3;
  } finally {
    await app.close();
  }
}

/**
 * The client's `openapi.ts` as the contract makes it now. `defaultNonNullable: false`: a
 * field with a default may be left out of a request (answers list it as required already).
 */
export async function clientTypes(): Promise<string> {
  const ast = await openapiTS(await openApiDocument(), { defaultNonNullable: false });
  return HEADER + astToString(ast);
}

/** The committed file, as it is. */
export const committedClientTypes = (): Promise<string> => readFile(CLIENT_TYPES, 'utf8');

if (import.meta.main) {
  await writeFile(CLIENT_TYPES, await clientTypes());
  console.log(`wrote ${CLIENT_TYPES.pathname}`);
}
