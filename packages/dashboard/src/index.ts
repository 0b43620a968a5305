/**
 * Where the operator dashboard's built files are: `dist/`, made by `npm run build -w
 * @sluice/dashboard` (the root `prepare`, so `npm install`, runs it; bundles are never
 * committed). The API serves them at `/dashboard/`; the browser code is in `app/`.
 */

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const dashboardDir: string = fileURLToPath(new URL('../dist/', import.meta.url));

/** True when the bundle has been built. */
export const dashboardBuilt = (): boolean => existsSync(`${dashboardDir}index.html`);
