import type { Cluster, Redis } from 'ioredis';

/** A connection to one Redis, or to a cluster (the commands we use exist on both). */
export type RedisClient = Redis | Cluster;
