import type { Store } from '@sluice/engine';
import type { Authenticator } from './auth.ts';

/** What the API needs from the delivery side, told after each commit. */
export interface Dispatcher {
  /** New work was committed for this destination. */
  wake(destinationId: string): void;
  /** The destination changed (limit, state, …) or was deleted. */
  destinationChanged(destinationId: string): Promise<void>;
  runtimeStats(destinationId: string): { queued: number; inFlight: number };
}

export interface ApiConfig {
  allowPrivateNetworks: boolean;
  /** Most bytes of one event's serialized payload. */
  maxPayloadBytes: number;
  /** Most bytes of one request body. */
  maxRequestBytes: number;
}

export interface ApiContext {
  store: Store;
  dispatcher: Dispatcher;
  auth: Authenticator;
  config: ApiConfig;
  clock: () => number;
}
