/**
 * Destinations' transforms as the delivery, the API's check on write and the preview use them
 * (docs/adr/0017): the same pool and rules in both shapes.
 */

import type { DestinationAuth, DestinationHeaders } from '@sluice/core';
import type { Logger } from 'pino';
import type { SandboxResult } from './sandbox.ts';
import { readOutput, type TransformOutcome, webhookInput } from './transform-output.ts';
import { TransformPool, type TransformPoolOptions } from './transform-pool.ts';

export interface TransformsOptions extends TransformPoolOptions {
  /** SLUICE_MAX_PAYLOAD_BYTES: the most a transform's payload may be. */
  maxPayloadBytes: number;
}

/** What a transform is applied to: a destination's code, headers and credential. */
export interface Transformed {
  id: string;
  tenantId: string;
  transform: { code: string } | null;
  headers: DestinationHeaders;
  auth: DestinationAuth | null;
}

export class Transforms {
  private readonly pool: TransformPool;
  private readonly maxPayloadBytes: number;

  constructor(options: TransformsOptions) {
    this.pool = new TransformPool(options);
    this.maxPayloadBytes = options.maxPayloadBytes;
  }

  /** Whether code may be saved: it compiles, its top level runs and it defines `handler`. */
  check(code: string, tenantId?: string): Promise<SandboxResult> {
    return this.pool.check(code, tenantId);
  }

  /**
   * What the destination's transform makes of an event (`payload`: its exact text) at `at`,
   * the clock the code reads (the event's acceptance: a replay sees the same). `saved`: the
   * destination's own code, whose context is kept; otherwise code being tried (a preview).
   */
  async apply(
    destination: Transformed,
    code: string,
    type: string,
    payload: string,
    at: number,
    saved = true,
  ): Promise<TransformOutcome> {
    const input = webhookInput(type, payload, destination.headers);
    const key = saved ? destination.id : undefined;
    const result = await this.pool.run(key, code, input, at, destination.tenantId);
    return readOutput(result, destination.headers, {
      maxPayloadBytes: this.maxPayloadBytes,
      auth: destination.auth !== null,
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** What the pool tells, as log lines: a thread that ended, a call stopped by ending its thread. */
export function transformLogs(logger: Logger): Pick<TransformsOptions, 'onThreadExit' | 'onStopped'> {
  return {
    onThreadExit: (err) => logger.error({ err }, 'a transform thread ended; a new one replaces it'),
    onStopped: (destinationId, ranMs) =>
      logger.warn({ destinationId, ranMs }, 'a transform ran past its hard stop: its thread was ended'),
  };
}
