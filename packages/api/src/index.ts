export { type ApiOptions, buildApi } from './app.ts';
export { generateAdminToken } from './auth.ts';
export type { ApiConfig, Dispatcher } from './context.ts';
export * as contract from './contract.ts';
