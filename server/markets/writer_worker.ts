// The market store's writer thread: every write, with its fsynced COMMIT, runs here, so that the
// server's event loop goes on answering reads while a commit waits for the disk. Messages that arrive
// together still share one group commit (the store batches what one turn of this loop brings).
import { parentPort, workerData } from 'node:worker_threads'
import { isCrystalError } from '../../engine/errors.js'
import { MarketStore, type MarketStoreOptions } from './store.js'
import type { WriteOp, WriterReply } from './writer.js'

const port = parentPort!
const failure = (e: unknown): Extract<WriterReply, { ok: false }>['error'] =>
  isCrystalError(e)
    ? { code: e.code, message: e.message, where: e.where, hint: e.hint }
    : { code: 'internal', message: e instanceof Error ? e.message : String(e), where: {} }

function serve(store: MarketStore): void {
  port.on('message', async ({ id, op, args }: { id: number; op: WriteOp | 'close'; args: unknown[] }) => {
    let reply: WriterReply
    try {
      if (op === 'close') store.close()
      const value = op === 'close' ? null : await (store[op] as (...a: unknown[]) => Promise<unknown>).apply(store, args)
      reply = { id, ok: true, value }
    } catch (e) {
      reply = { id, ok: false, error: failure(e) }
    }
    port.postMessage(reply)
  })
}

let store: MarketStore | undefined
try {
  store = new MarketStore(workerData as MarketStoreOptions)
} catch (e) {
  // the store would not open (a damaged database, say): the starting server is told why, with the error's
  // own code and words, and the thread ends (nothing listens on its port)
  port.postMessage({ id: 0, ok: false, error: failure(e) } satisfies WriterReply)
}
if (store) {
  serve(store)
  port.postMessage({ id: 0, ok: true, value: 'ready' } satisfies WriterReply)
}
