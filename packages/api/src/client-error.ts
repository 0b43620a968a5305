/**
 * The answers Node's HTTP server gives before a request reaches fastify (a header block over
 * `maxHeaderSize`, a malformed request, a request that took too long to arrive), in the API's
 * error format rather than Node's or fastify's own body: fastify's `clientErrorHandler`.
 */

import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { ErrorCode } from './errors.ts';

function answer(err: NodeJS.ErrnoException): { status: number; code: ErrorCode; message: string } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'request_header_too_large', message: 'the request headers are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'validation_failed', message: 'the request did not arrive in time' };
    default:
      return { status: 400, code: 'validation_failed', message: 'malformed HTTP request' };
  }
}

export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection is gone: nothing to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, code, message } = answer(err);
  this.log.debug({ err }, 'client error');
  if (socket.writable) {
    const body = JSON.stringify({ error: { code, message, details: null } });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy(err);
}
