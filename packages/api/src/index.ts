export { buildApi } from './app.ts';
export { generateAdminToken } from './auth.ts';
export type { ApiConfig, ApiOptions, Dispatcher } from './context.ts';
export * as contract from './contract.ts';
export * as catalogContract from './contract-event-types.ts';
export * as lifecycleContract from './contract-lifecycle.ts';
export * as portalContract from './contract-portal.ts';
export * as sentContract from './contract-sent.ts';
