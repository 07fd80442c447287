// Change listeners run each in a microtask of its own: a listener can neither delay nor break
// the write (or the Redis connection) that told it, and what it throws still surfaces.
export function notify(listeners: Iterable<() => void>): void {
  for (const listener of listeners) queueMicrotask(listener);
}
