// The package ships no types: its one export, the Redis Cluster hash slot of a key (CRC16 of the
// key, or of its hash tag, modulo 16,384), as ioredis uses it to route commands.
declare module 'cluster-key-slot' {
  export default function calculateSlot(key: string | Buffer): number;
}
