// The registry on disk: <data dir>/registry.json. Writes are atomic (temp file, fsync, rename, fsync
// of the folder) under an inter-process lock (proper-lockfile, <data dir>/registry.lock, stale after
// a crashed holder stops refreshing it). Every load checks the format, the schema and the content
// hash; a corrupt or foreign file is refused with a clear message and never overwritten.
import { mkdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { Value } from '@sinclair/typebox/value'
import lockfile from 'proper-lockfile'
import { REGISTRY_FORMAT, RegistryFileSchema, type RegistryFile } from '../contracts/registry.js'
import { CrystalError } from '../errors.js'
import { writeDurably } from '../files/durable.node.js'
import { canonicalAndHash } from '../util/canonical.js'
import { contentHash, emptyRegistry, type RegistryStore } from './registry.js'

export interface FileStoreOptions {
  /** A lock not refreshed for this long is taken over (its holder died). */
  staleMs?: number
}

export class FileRegistryStore implements RegistryStore {
  readonly path: string

  constructor(
    readonly dataDir: string,
    private readonly options: FileStoreOptions = {},
  ) {
    this.path = join(dataDir, 'registry.json')
  }

  private corrupt(reason: string): CrystalError {
    return new CrystalError(
      'registry_corrupt',
      `${this.path}: ${reason}; the file was left untouched (move it away to start a new registry)`,
      { file: this.path },
    )
  }

  /** The last file read and verified (or being verified), and the identity (inode, size, mtime) it had. */
  private cached: { key: string; file: Promise<RegistryFile> } | undefined

  async read(): Promise<RegistryFile> {
    let key: string
    try {
      const st = await stat(this.path)
      key = `${st.ino}:${st.size}:${st.mtimeMs}`
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return emptyRegistry()
      throw e
    }
    // every write, by this process or another, renames a new file into place: a new inode.
    // Concurrent readers of the same version share one verification.
    if (this.cached?.key !== key) {
      const file = this.readAndVerify()
      this.cached = { key, file }
      file.catch(() => {
        if (this.cached?.file === file) this.cached = undefined
      })
    }
    return this.cached.file
  }

  private async readAndVerify(): Promise<RegistryFile> {
    let text: string
    try {
      text = await readFile(this.path, 'utf8')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return emptyRegistry()
      throw e
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (e) {
      throw this.corrupt(`not valid JSON (${(e as Error).message})`)
    }
    const format = (value as { format?: unknown } | null)?.format
    if (format !== REGISTRY_FORMAT)
      throw this.corrupt(`not a Resonant Crystal registry (format ${JSON.stringify(format)}, expected "${REGISTRY_FORMAT}")`)
    const first = Value.Errors(RegistryFileSchema, value).First()
    if (first) throw this.corrupt(`does not match the registry schema at ${first.path || '/'} (${first.message})`)
    const file = value as RegistryFile
    if ((await contentHash(file.primitives)) !== file.content_hash) throw this.corrupt('its content hash does not match its primitives')
    return file
  }

  async update<T>(change: (current: RegistryFile) => Promise<{ next: RegistryFile | null; result: T }>): Promise<T> {
    await mkdir(this.dataDir, { recursive: true })
    let release: () => Promise<void>
    try {
      release = await lockfile.lock(this.dataDir, {
        lockfilePath: join(this.dataDir, 'registry.lock'),
        stale: this.options.staleMs ?? 10_000,
        retries: { retries: 200, factor: 1.2, minTimeout: 10, maxTimeout: 250 },
      })
    } catch (e) {
      throw new CrystalError('registry_busy', `${this.path}: could not take the registry lock (${(e as Error).message})`, {
        file: this.path,
      })
    }
    try {
      const { next, result } = await change(await this.read())
      if (next) await this.write(next)
      return result
    } finally {
      await release()
    }
  }

  private async write(file: RegistryFile): Promise<void> {
    // the primitives' canonical bytes (already made for the content hash) are the file's body
    const header = JSON.stringify({ format: file.format, next_serial: file.next_serial, content_hash: file.content_hash })
    const { bytes } = await canonicalAndHash(file.primitives)
    await writeDurably(this.path, [Buffer.from(`${header.slice(0, -1)},"primitives":`), bytes, Buffer.from('}\n')])
    // what was just written is known good: the next read under the lock need not verify it again
    const st = await stat(this.path)
    this.cached = { key: `${st.ino}:${st.size}:${st.mtimeMs}`, file: Promise.resolve(file) }
  }
}
