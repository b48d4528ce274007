// The CPU backend: the AssemblyScript SIMD kernel (simd/assembly/field.ts) on one shared WebAssembly
// memory, run by the calling thread plus (threads - 1) helpers in lockstep. Fields live padded,
// (n + 2)^2 each, with a zero border; load/read convert to and from the plain n x n layout.
import { CrystalError } from '../errors.js'
import { erasePlan, type PlannedErasure } from '../detect/erase_plan.js'
import { fieldsWithin, type FieldBackend, type LedgerSample, type StepRequest, type ThreadSpawner } from '../field/backend.js'
import { JOB_PARAMS, JOB_WORDS as JOB } from '../field/layouts.js'
import { kickScale } from '../field/kick.js'
import { type FieldMotion, fieldMotion, patchEnergy } from '../field/motion.js'
import { downsample } from '../util/downsample.js'
import { requestTable, sameDraws, type StepParams } from '../field/params.js'
import { energyReference } from './field_step.js'
import { FIELD_WASM_BASE64 } from './simd/field_wasm.gen.js'

// The job block's word indices (JOB) come from engine/field/layouts.ts, as the kernel's do (job.gen.ts).
const JOB_BYTE = 16
const HEAP_BASE = 4096 // asconfig.json memoryBase: below it is ours
const MAX_SAMPLES_PER_JOB = 64
const PAGE = 65536

let compiled: WebAssembly.Module | undefined
function fieldModule(): WebAssembly.Module {
  if (!compiled) {
    const bytes =
      typeof Buffer !== 'undefined'
        ? Buffer.from(FIELD_WASM_BASE64, 'base64')
        : Uint8Array.from(atob(FIELD_WASM_BASE64), (c) => c.charCodeAt(0))
    compiled = new WebAssembly.Module(bytes)
  }
  return compiled
}

export class WasmFieldBackend implements FieldBackend {
  readonly kind = 'cpu' as const
  readonly description: string
  private readonly memory: WebAssembly.Memory
  private readonly run: (job: number, thread: number) => void
  private readonly helpers: { terminate(): void }[] = []
  private readonly bufs: number[]
  private readonly ledgerPtr: number
  private readonly samplesPtr: number
  private readonly drawsPtr: number
  /** The table the kernel's draws hold now (StepRequest.draws, or the default one it was made from). */
  private drawsHeld: Uint32Array | undefined
  private readonly padded: number
  private rotation = 0 // bufs[rotation] is u_prev, bufs[rotation + 1] is u

  constructor(
    readonly n: number,
    readonly fields: number,
    readonly threads = 1,
    spawn?: ThreadSpawner,
  ) {
    if (threads > 1 && !spawn)
      throw new CrystalError('bad_argument', 'more than one CPU thread needs a thread spawner (the Node or browser entry passes one)')
    this.padded = (n + 2) * (n + 2)
    let at = HEAP_BASE
    const take = (bytes: number) => {
      const ptr = at
      at += Math.ceil(bytes / 16) * 16
      return ptr
    }
    this.ledgerPtr = take(threads * fields * 4 * 8)
    this.samplesPtr = take(MAX_SAMPLES_PER_JOB * fields * threads * 5 * 8)
    this.drawsPtr = take(2 * fields * 4)
    this.bufs = [0, 1, 2].map(() => take(fields * this.padded * 4))
    const pages = Math.ceil(at / PAGE)
    if (pages > 65536)
      throw new CrystalError(
        'bad_argument',
        `${fields} field(s) of ${n} x ${n} need ${(at / 2 ** 30).toFixed(1)} GiB, over the CPU backend's 4 GiB`,
      )
    this.memory = new WebAssembly.Memory({ initial: pages, maximum: 65536, shared: true })
    const module = fieldModule()
    const instance = new WebAssembly.Instance(module, { env: { memory: this.memory } })
    this.run = instance.exports.run as (job: number, thread: number) => void
    const words = this.words()
    words[JOB.n] = n
    words[JOB.fields] = fields
    words[JOB.threads] = threads
    words[JOB.ledger] = this.ledgerPtr
    words[JOB.samples] = this.samplesPtr
    words[JOB.draws] = this.drawsPtr
    for (let t = 1; t < threads; t++)
      this.helpers.push(spawn!({ module, memory: this.memory, job: JOB_BYTE, go: JOB_BYTE / 4 + JOB.go, thread: t }))
    this.description = `WebAssembly SIMD, ${threads} thread${threads > 1 ? 's' : ''}`
  }

  private words(): Int32Array {
    return new Int32Array(this.memory.buffer, JOB_BYTE, JOB.words)
  }

  private f32(ptr: number, length: number): Float32Array {
    return new Float32Array(this.memory.buffer, ptr, length)
  }

  async step(req: StepRequest): Promise<LedgerSample[]> {
    const samples: LedgerSample[] = []
    const perJob = req.sample_interval > 0 ? req.sample_interval * MAX_SAMPLES_PER_JOB : req.steps
    for (let done = 0; done < req.steps; ) {
      // Any run of interval * MAX_SAMPLES_PER_JOB steps holds at most MAX_SAMPLES_PER_JOB samples.
      const steps = Math.min(perJob, req.steps - done)
      samples.push(...this.job(req, req.first_step + done, steps))
      done += steps
    }
    return samples
  }

  private job(req: StepRequest, first: number, steps: number): LedgerSample[] {
    const words = this.words()
    for (let k = 0; k < 3; k++) words[JOB.buf0 + k] = this.bufs[(this.rotation + k) % 3]
    words[JOB.steps] = steps
    words[JOB.first_step] = first
    words[JOB.seed] = req.seed
    words[JOB.sample_interval] = req.sample_interval
    const p = req.params
    words[JOB.rerun_from] = p.rerun_from
    const draws = requestTable(req.draws, this.fields, p.rerun_from)
    if (!sameDraws(draws, this.drawsHeld)) new Uint32Array(this.memory.buffer, this.drawsPtr, 2 * this.fields).set((this.drawsHeld = draws))
    new Float32Array(words.buffer, JOB_BYTE + JOB.params * 4, JOB_PARAMS.length).set(JOB_PARAMS.map((k) => p[k as keyof StepParams]))
    const sampleWords = MAX_SAMPLES_PER_JOB * this.fields * this.threads * 5
    new Float64Array(this.memory.buffer, this.samplesPtr, sampleWords).fill(0)
    if (this.threads > 1) {
      Atomics.add(words, JOB.go, 1)
      Atomics.notify(words, JOB.go)
    }
    this.run(JOB_BYTE, 0)
    this.rotation = (this.rotation + steps) % 3
    if (!req.sample_interval) return []
    const taken = Math.floor((first + steps) / req.sample_interval) - Math.floor(first / req.sample_interval)
    const raw = new Float64Array(this.memory.buffer, this.samplesPtr, sampleWords)
    const out: LedgerSample[] = []
    for (let s = 0; s < taken; s++) {
      const fields: Float64Array[] = []
      for (let f = 0; f < this.fields; f++) {
        const sums = new Float64Array(5)
        for (let t = 0; t < this.threads; t++) {
          const base = ((s * this.fields + f) * this.threads + t) * 5
          for (let k = 0; k < 5; k++) sums[k] += raw[base + k]
        }
        fields.push(sums)
      }
      out.push({ step: (Math.floor(first / req.sample_interval) + s + 1) * req.sample_interval, fields })
    }
    return out
  }

  /** Copies between the plain layout (n*n per field) and the padded one. */
  private copy(field: number, buf: number, plain: Float32Array, plainOffset: number, toPadded: boolean, add = false): void {
    const n = this.n
    const padded = this.f32(buf + field * this.padded * 4, this.padded)
    for (let y = 0; y < n; y++) {
      const row = (y + 1) * (n + 2) + 1
      const src = plain.subarray(plainOffset + y * n, plainOffset + (y + 1) * n)
      if (!toPadded) src.set(padded.subarray(row, row + n))
      else if (!add) padded.set(src, row)
      else for (let x = 0; x < n; x++) padded[row + x] = Math.fround(padded[row + x] + src[x])
    }
  }

  private get prevBuf(): number {
    return this.bufs[this.rotation]
  }
  private get curBuf(): number {
    return this.bufs[(this.rotation + 1) % 3]
  }

  async inject(fields: readonly number[], waves: readonly Float32Array[]): Promise<void> {
    fields.forEach((field, k) => {
      this.copy(field, this.curBuf, waves[k], 0, true, true)
      this.copy(field, this.prevBuf, waves[k], 0, true, true)
    })
  }

  async kick(fields: readonly number[], pattern: Float32Array, inverseRms: number): Promise<void> {
    const cells = this.n * this.n
    const [u, wave] = [new Float32Array(cells), new Float32Array(cells)]
    for (const field of fields) {
      this.copy(field, this.curBuf, u, 0, false)
      const scale = kickScale(u, inverseRms)
      for (let c = 0; c < cells; c++) wave[c] = Math.fround(pattern[c] * scale)
      await this.inject([field], [wave])
    }
  }

  async erase(plans: readonly PlannedErasure[]): Promise<void> {
    const n = this.n
    const [cur, prev] = [this.curBuf, this.prevBuf].map((buf) => this.f32(buf, this.fields * this.padded))
    for (const { field, sums } of plans)
      for (const cell of erasePlan(n, sums).erased) {
        const at = field * this.padded + (Math.floor(cell / n) + 1) * (n + 2) + (cell % n) + 1
        cur[at] = 0
        prev[at] = 0
      }
  }

  async clear(fields: readonly number[]): Promise<void> {
    for (const buf of [this.curBuf, this.prevBuf]) {
      const all = this.f32(buf, this.fields * this.padded)
      for (const f of fields) all.fill(0, f * this.padded, (f + 1) * this.padded)
    }
  }

  async load(u: Float32Array, prev: Float32Array): Promise<void> {
    for (let f = 0; f < this.fields; f++) {
      this.copy(f, this.curBuf, u, f * this.n * this.n, true)
      this.copy(f, this.prevBuf, prev, f * this.n * this.n, true)
    }
  }

  async read(fields = [...Array(this.fields).keys()]): Promise<{ u: Float32Array; prev: Float32Array }> {
    return { u: this.copied(this.curBuf, fields), prev: this.copied(this.prevBuf, fields) }
  }

  async readU(fields = [...Array(this.fields).keys()]): Promise<Float32Array> {
    return this.copied(this.curBuf, fields)
  }

  cellsLater(field: number, cells: readonly number[]): () => Promise<Float32Array> {
    fieldsWithin([field], this.fields)
    const { n } = this
    const padded = this.f32(this.curBuf + field * this.padded * 4, this.padded)
    // taken now: the padded row of cell c is its row + 1, its column + 1
    const now = Float32Array.from(cells, (c) => padded[(Math.floor(c / n) + 1) * (n + 2) + (c % n) + 1])
    return () => Promise.resolve(now)
  }

  async motion(field: number, cells: readonly number[]): Promise<FieldMotion> {
    return fieldMotion(this.copied(this.curBuf, [field]), this.copied(this.prevBuf, [field]), cells)
  }

  async patchEnergy(field: number, side: number): Promise<Float64Array> {
    return patchEnergy(this.copied(this.curBuf, [field]), this.n, side)
  }

  async downsampled(field: number, side: number): Promise<Float32Array> {
    return downsample(this.copied(this.curBuf, [field]), this.n, side)
  }

  /** A copy of the fields listed of one plane. */
  private copied(plane: number, fields: number[]): Float32Array {
    fieldsWithin(fields, this.fields)
    const cells = this.n * this.n
    const out = new Float32Array(fields.length * cells)
    fields.forEach((f, i) => this.copy(f, plane, out, i * cells, false))
    return out
  }

  /**
   * On demand (not the sampled timeline): the reference sum, in float64, over a copy of the fields
   * listed (every field's otherwise): an injection into a few fields of a large batch reads only those.
   */
  async energy(params: StepParams, fields?: readonly number[]): Promise<Float64Array> {
    const { u, prev } = await this.read(fields && [...fields])
    return energyReference(prev, u, fields ? { ...params, fields: fields.length } : params)
  }

  async ledger(): Promise<Float64Array> {
    const raw = new Float64Array(this.memory.buffer, this.ledgerPtr, this.threads * this.fields * 4)
    const out = new Float64Array(this.fields * 4)
    for (let t = 0; t < this.threads; t++) for (let i = 0; i < out.length; i++) out[i] += raw[t * out.length + i]
    return out
  }

  destroy(): void {
    const words = this.words()
    Atomics.store(words, JOB.go, -1)
    Atomics.notify(words, JOB.go)
    for (const h of this.helpers) h.terminate()
    this.helpers.length = 0
  }
}
