// The medium on disk: <data dir>/medium.bin, one file written atomically (temp, fsync, rename) under
// an inter-process lock. Layout: a 4-byte little-endian header length, the JSON header, then u and
// u_prev (float32). The header holds the blake3 of that
// binary payload, checked on load: a broken or foreign file is refused with a clear message and left as it is.
// Format 3 records the text encoding; a format-2 file (encoding 2, before there was a choice) loads
// as encoding 2 and is saved back as format 3.
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import lockfile from 'proper-lockfile'
import { ENCODINGS } from '../contracts/api.js'
import type { EncodingVersion } from '../encode/text.js'
import { CrystalError } from '../errors.js'
import { writeDurably } from '../files/durable.node.js'
import { blake3Hex } from '../util/hash.js'
import { emptyMedium, MEDIUM_FORMAT, type Medium } from './medium.js'

interface Header {
  format: string
  size: number
  material: string
  step_count: number
  memories: Medium['memories']
  /** Absent in format 2, whose memories are all of encoding 2. */
  encoding?: EncodingVersion
  payload_blake3: string
}

/** The encoding of each older format's memories (format 1: encoding 1 and a relevance index, no longer kept). */
const OLDER_FORMATS: Record<string, number> = { 'svc-crystal-medium/1': 1, 'svc-crystal-medium/2': 2 }

export class MediumStore {
  readonly path: string

  constructor(readonly dataDir: string) {
    this.path = join(dataDir, 'medium.bin')
  }

  private broken(reason: string): CrystalError {
    return new CrystalError('medium_corrupt', `${this.path}: ${reason}; the file was left as it is (move it away to start a new medium)`, {
      file: this.path,
    })
  }

  /** The medium on disk, or undefined when there is none yet. */
  async load(): Promise<Medium | undefined> {
    let bytes: Buffer
    try {
      bytes = await readFile(this.path)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw e
    }
    if (bytes.length < 4) throw this.broken('too short to be a medium')
    const headerLength = bytes.readUInt32LE(0)
    if (headerLength > bytes.length - 4) throw this.broken('its header runs past the end of the file')
    let header: Header
    try {
      header = JSON.parse(bytes.subarray(4, 4 + headerLength).toString('utf8'))
    } catch (e) {
      throw this.broken(`its header is not valid JSON (${(e as Error).message})`)
    }
    if (header.format !== MEDIUM_FORMAT && !Object.hasOwn(OLDER_FORMATS, header.format))
      throw this.broken(`not a Resonant Crystal medium (format ${JSON.stringify(header.format)}, expected "${MEDIUM_FORMAT}")`)
    const encoding = header.format === MEDIUM_FORMAT ? header.encoding : OLDER_FORMATS[header.format]
    if (!ENCODINGS.includes(encoding as EncodingVersion))
      throw this.broken(
        `it holds memories of text encoding ${JSON.stringify(encoding)}, which this version cannot read back (it reads ${ENCODINGS.join(' and ')})`,
      )
    const payload = bytes.subarray(4 + headerLength)
    const cells = header.size * header.size
    if (payload.length !== 8 * cells)
      throw this.broken(`its payload is ${payload.length} bytes, not the ${8 * cells} of a field at N = ${header.size}`)
    if ((await blake3Hex(payload)) !== header.payload_blake3) throw this.broken('its content hash does not match its contents')
    const copy = new Uint8Array(payload) // aligned, detached from the file buffer
    return {
      size: header.size,
      material: header.material,
      step_count: header.step_count,
      memories: header.memories,
      encoding: encoding as EncodingVersion,
      u: new Float32Array(copy.buffer, 0, cells),
      prev: new Float32Array(copy.buffer, 4 * cells, cells),
    }
  }

  /** Read-modify-write under the lock; a new medium of `size`, `material` (and `encoding`) when there is none. */
  async update<T>(fresh: { size: number; material: string; encoding?: EncodingVersion }, change: (m: Medium) => Promise<T>): Promise<T> {
    await mkdir(this.dataDir, { recursive: true })
    const release = await lockfile.lock(this.dataDir, {
      lockfilePath: join(this.dataDir, 'medium.lock'),
      stale: 10_000,
      retries: { retries: 200, factor: 1.2, minTimeout: 10, maxTimeout: 250 },
    })
    try {
      const m = (await this.load()) ?? emptyMedium(fresh.size, fresh.material, fresh.encoding)
      const result = await change(m)
      await this.save(m)
      return result
    } finally {
      await release()
    }
  }

  private async save(m: Medium): Promise<void> {
    const payload = Buffer.concat([
      Buffer.from(m.u.buffer, m.u.byteOffset, m.u.byteLength),
      Buffer.from(m.prev.buffer, m.prev.byteOffset, m.prev.byteLength),
    ])
    const header: Header = {
      format: MEDIUM_FORMAT,
      size: m.size,
      material: m.material,
      step_count: m.step_count,
      memories: m.memories,
      encoding: m.encoding,
      payload_blake3: await blake3Hex(payload),
    }
    const json = Buffer.from(JSON.stringify(header))
    const length = Buffer.alloc(4)
    length.writeUInt32LE(json.length)
    await writeDurably(this.path, [length, json, payload])
  }
}
