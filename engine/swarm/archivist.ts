// The archivist's batching (`crystal archive`): one task reads announcements into a queue; the writer
// takes everything queued each time it finishes a registry write. The batch grows with the load,
// and at a trickle nobody waits.

/** Feeds `source` to `write` in batches of at most `max`, in order; resolves when `source` ends and all is written. */
export async function inBatches<T>(source: AsyncIterable<T>, write: (batch: T[]) => Promise<void>, max: number): Promise<void> {
  const queue: T[] = []
  let wake: (() => void) | undefined
  let ended = false
  const reader = (async () => {
    for await (const item of source) {
      queue.push(item)
      wake?.()
    }
  })().finally(() => {
    ended = true
    wake?.()
  })
  for (;;) {
    if (queue.length) {
      await write(queue.splice(0, max))
      continue
    }
    if (ended) break
    await new Promise<void>((resolve) => (wake = resolve))
    wake = undefined
  }
  await reader
}
