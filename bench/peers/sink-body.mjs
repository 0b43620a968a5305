// The peers harness's sink, unchanged, for a service that sends only its own headers.
//
// The harness's sink takes the event id and creation time from the `x-event-id` and
// `x-created-at` headers. Sluice delivers the event's payload as the body and cannot add
// per-event headers; the harness's payload (`makePayload`) carries the same two values as
// `id` and `created_at`. This wrapper runs the harness's own sink.mjs (SINK_HARNESS, else
// `sink-harness.mjs` beside the file run.mjs started: prepare.sh moves it there) with one
// change in front of its request handler: a `POST /d/…` without `x-event-id` is read whole,
// the two headers are filled in from its JSON body, and the sink's handler then sees it with
// the arrival time stamped when its headers were parsed — the moment the sink itself stamps.
// Requests that carry the headers (every other peer) go to the sink's handler untouched.
import { EventEmitter } from 'node:events';
import http from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const harnessSink = process.env.SINK_HARNESS || join(dirname(resolve(process.argv[1])), 'sink-harness.mjs');

// The sink stamps arrivals with `performance.timeOrigin + performance.now()`; while the
// deferred request is handed over, now() answers the time its headers were parsed.
const realNow = performance.now.bind(performance);
let pinned = null;
performance.now = () => pinned ?? realNow();

/** The request as the sink's handler uses it: method, url, headers, resume(), on('end'). */
function replayable(req, headers) {
  const r = new EventEmitter();
  r.method = req.method;
  r.url = req.url;
  r.headers = headers;
  r.socket = req.socket;
  r.resume = () => {
    process.nextTick(() => r.emit('end'));
    return r;
  };
  return r;
}

const createServer = http.createServer;
http.createServer = (...args) => {
  const handler = args.pop();
  return createServer(...args, (req, res) => {
    if (req.method !== 'POST' || !req.url.startsWith('/d/') || req.headers['x-event-id'] !== undefined)
      return handler(req, res);
    const arrived = realNow();
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const headers = { ...req.headers };
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (body.id != null) headers['x-event-id'] = String(body.id);
        if (body.created_at != null) headers['x-created-at'] = String(body.created_at);
      } catch {
        // not JSON: recorded without an id, as the sink records a request without the header
      }
      pinned = arrived;
      try {
        handler(replayable(req, headers), res);
      } finally {
        pinned = null;
      }
    });
  });
};

await import(pathToFileURL(harnessSink).href);
