// The market store's writes, made in a worker thread (writer_worker.ts) by a store of their own; the
// server reads through a read-only connection to the same database (WAL: readers see each commit as
// soon as it is made and never wait for a writer).
import { Worker } from 'node:worker_threads'
import { CrystalError, type ErrorCode, type ErrorPlace } from '../../engine/errors.js'
import type { MarketStore, MarketStoreOptions } from './store.js'

export type WriteOp = 'register' | 'faucet' | 'createMarket' | 'propose' | 'trade' | 'resolve' | 'cancel' | 'closeNow'
export type WriterReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { code: ErrorCode; message: string; where: ErrorPlace; hint?: string } }

type Call<K extends WriteOp> = (...args: Parameters<MarketStore[K]>) => ReturnType<MarketStore[K]>

export class MarketWriter {
  private serial = 0
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>()
  private failure: Error | null = null

  private constructor(private readonly worker: Worker) {
    worker.on('message', (r: WriterReply) => {
      const p = this.pending.get(r.id)
      this.pending.delete(r.id)
      if (r.ok) p?.resolve(r.value)
      else p?.reject(new CrystalError(r.error.code, r.error.message, r.error.where, r.error.hint))
    })
    const fail = (e: unknown) => {
      // what a thread throws arrives cloned, perhaps as no Error at all (better-sqlite3's SqliteError had no message)
      const why = (e as { message?: unknown } | null)?.message
      this.failure = new CrystalError('internal', `the market writer thread stopped: ${typeof why === 'string' ? why : String(e)}`)
      for (const p of this.pending.values()) p.reject(this.failure)
      this.pending.clear()
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`exit code ${code}`)))
  }

  /** Starts the writer thread; resolves once its store is open (schema made, head file written). */
  static start(o: Omit<MarketStoreOptions, 'now' | 'readonly'>): Promise<MarketWriter> {
    const worker = new Worker(new URL('./writer_worker.js', import.meta.url), { workerData: o })
    const writer = new MarketWriter(worker)
    return writer.await<unknown>(0).then(() => writer)
  }

  private await<T>(id: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.failure) return reject(this.failure)
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject })
    })
  }

  private call<K extends WriteOp>(op: K): Call<K> {
    return ((...args: unknown[]) => {
      const id = ++this.serial
      const answer = this.await(id)
      if (!this.failure) this.worker.postMessage({ id, op, args })
      return answer
    }) as unknown as Call<K>
  }

  readonly register = this.call('register')
  readonly faucet = this.call('faucet')
  readonly createMarket = this.call('createMarket')
  readonly propose = this.call('propose')
  readonly trade = this.call('trade')
  readonly resolve = this.call('resolve')
  readonly cancel = this.call('cancel')
  readonly closeNow = this.call('closeNow')

  /** Closes the writer's database, then its thread. */
  async close(): Promise<void> {
    const id = ++this.serial
    const done = this.await(id).catch(() => {})
    this.worker.postMessage({ id, op: 'close', args: [] })
    await done
    await this.worker.terminate()
  }
}
