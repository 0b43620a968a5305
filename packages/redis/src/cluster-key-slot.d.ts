/** cluster-key-slot (ioredis' own dependency): the Redis Cluster slot of a key, CRC16 of its hash tag mod 16384. */
declare module 'cluster-key-slot' {
  function calculateSlot(key: string): number;
  export default calculateSlot;
}
