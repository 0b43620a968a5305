/**
 * The distributed shape (sluice-distributed.ts: the API, one rate limiter, two delivery
 * workers) on the bench session's own Redis Cluster — 3 masters, all on this machine, with
 * `--cluster-replicas` replicas each (none by default: the one Redis it is measured against
 * has none; `startPrivateCluster`, started by main.ts when a session's targets include this
 * one) — with the schedule, the pace state and the delivery queue split into 12 shards: the
 * shards' tags spread evenly over the slots, 4 on each master. What it answers
 * against `sluice-distributed`: what the hops across nodes cost on one machine; with
 * replicas, what redundancy adds on top.
 */

import { createDistributed } from './sluice-distributed.ts';
import type { CreateTarget } from './target.ts';

const SHARDS = 12;

export const createTarget: CreateTarget = (setup) =>
  createDistributed(setup, { cluster: true, shards: SHARDS });
