// Every key of the watchers shares the hash tag {watch}, so the Lua scripts that touch several of them
// (a snapshot and the outboxes it feeds) stay within one Redis Cluster slot.

/** `<prefix>:{watch}:<parts…>`. */
export function watchKey(prefix: string, ...parts: readonly string[]): string {
  return [prefix, '{watch}', ...parts].join(':');
}
