// The market store's writer thread: every write, with its fsynced COMMIT, runs here, so that the
// server's event loop goes on answering reads while a commit waits for the disk. Messages that arrive
// together still share one group commit (the store batches what one turn of this loop brings).
import { parentPort, workerData } from 'node:worker_threads'
import { isCrystalError } from '../../engine/errors.js'
import { MarketStore, type MarketStoreOptions } from './store.js'
import type { WriteOp, WriterReply } from './writer.js'

const store = new MarketStore(workerData as MarketStoreOptions)
const port = parentPort!
port.on('message', async ({ id, op, args }: { id: number; op: WriteOp | 'close'; args: unknown[] }) => {
  let reply: WriterReply
  try {
    if (op === 'close') store.close()
    const value = op === 'close' ? null : await (store[op] as (...a: unknown[]) => Promise<unknown>).apply(store, args)
    reply = { id, ok: true, value }
  } catch (e) {
    reply = {
      id,
      ok: false,
      error: isCrystalError(e)
        ? { code: e.code, message: e.message, where: e.where, hint: e.hint }
        : { code: 'internal', message: (e as Error).message, where: {} },
    }
  }
  port.postMessage(reply)
})
port.postMessage({ id: 0, ok: true, value: 'ready' } satisfies WriterReply)
