// Per-field sums (energy, saturation potential: shaders/field_step.wgsl's per-tile kernels; the
// ledger's running totals; each then reduce.wgsl's sum_rows) kept on the GPU in slots until the engine needs its books:
// a batch's injections then cost no read back each, and every slot comes back in one read. The
// values are those the backend's own energy and potential read back (the same kernels, the same
// order); the engine does the float64 arithmetic on them as before.
import type { HeldKind, HeldSums } from '../field/backend.js'
import { packStruct, REDUCE_PARAM_LAYOUT, STEP_PARAM_LAYOUT, TILE, type StepParams } from '../field/params.js'
import type { GpuContext } from './context.js'
import { SlotRing } from './transfers.js'

const STORAGE = 0x80 | 0x4 | 0x8 // STORAGE | COPY_SRC | COPY_DST
const UNIFORM = 0x40 | 0x8
const SLOT = 256 // the uniforms' dynamic offsets are multiples of this
/** energy, potential, ledger: what one `hold` may ask for at once */
const HELD_KINDS = 3
/** Uniform slots the holds take in turn (SlotRing): a hold goes with the work after it (Transfers.submitWithNext). */
const UNIFORM_SLOTS = 64 * HELD_KINDS
const FIRST_CAPACITY = 64

export class GpuHeldSums implements HeldSums {
  private readonly tiles: number
  private readonly partials: GPUBuffer
  private readonly stepUniform: GPUBuffer
  private readonly reduceUniform: GPUBuffer
  private slots: GPUBuffer
  private capacity = FIRST_CAPACITY
  private used = 0
  private readonly uniformSlots = new SlotRing(UNIFORM_SLOTS)

  /**
   * `ledger`: the step's per-tile ledger, [column][field][tile], `ledgerTiles` tiles a field (STEP_TILE's);
   * `kernels`: the backend's own energy and potential pipelines and their layout (binding 0 a
   * dynamic-offset uniform), so the device compiles them once.
   */
  constructor(
    private readonly gpu: GpuContext,
    private readonly ledger: GPUBuffer,
    private readonly ledgerTiles: number,
    private readonly kernels: { energy: GPUComputePipeline; potential: GPUComputePipeline; layout: GPUBindGroupLayout },
  ) {
    const { device, n, fields } = gpu
    this.tiles = Math.ceil(n / TILE) ** 2
    this.partials = device.createBuffer({ size: fields * this.tiles * 4, usage: STORAGE })
    this.stepUniform = device.createBuffer({ size: UNIFORM_SLOTS * SLOT, usage: UNIFORM })
    this.reduceUniform = device.createBuffer({ size: UNIFORM_SLOTS * SLOT, usage: UNIFORM })
    this.slots = this.slotBuffer(this.capacity)
  }

  private slotBuffer(capacity: number): GPUBuffer {
    return this.gpu.device.createBuffer({ size: capacity * this.gpu.fields * 4, usage: STORAGE })
  }

  hold(kinds: readonly HeldKind[], params: StepParams): number[] {
    const { device, fields, transfers } = this.gpu
    if (kinds.length > HELD_KINDS) throw new Error(`hold takes at most ${HELD_KINDS} kinds at once, not ${kinds.length}`)
    // the ledger's four columns take four slots, [column][field]
    const width = (kind: HeldKind) => (kind === 'ledger' ? 4 : 1)
    const needed = kinds.reduce((sum, k) => sum + width(k), 0)
    const encoder = device.createCommandEncoder()
    // the slots so far copied into a larger buffer where these would not fit
    const outgrown = this.used + needed > this.capacity ? this.slots : undefined
    if (outgrown) {
      this.capacity = 2 * this.capacity + needed
      this.slots = this.slotBuffer(this.capacity)
      encoder.copyBufferToBuffer(outgrown, 0, this.slots, 0, this.used * fields * 4)
    }
    // each kind its own uniform slot (a dynamic offset), all written at once: one command buffer for the lot
    const reduce = new ArrayBuffer(kinds.length * SLOT)
    const step = new ArrayBuffer(kinds.length * SLOT)
    const slots = kinds.map((kind, i) => {
      const slot = this.used
      this.used += width(kind)
      packStruct(
        REDUCE_PARAM_LAYOUT,
        { len: kind === 'ledger' ? this.ledgerTiles : this.tiles, dst_offset: slot * fields },
        reduce,
        i * SLOT,
      )
      if (kind !== 'ledger') packStruct(STEP_PARAM_LAYOUT, params, step, i * SLOT)
      return slot
    })
    const at = this.uniformSlots.claim(kinds.length) * SLOT
    transfers.write(this.reduceUniform, at, reduce)
    const stepped = kinds.some((k) => k !== 'ledger')
    if (stepped) transfers.write(this.stepUniform, at, step)
    const { u, prev } = this.gpu.state()
    const pass = encoder.beginComputePass()
    kinds.forEach((kind, i) => {
      if (kind !== 'ledger') {
        pass.setPipeline(this.kernels[kind])
        pass.setBindGroup(
          0,
          device.createBindGroup({
            layout: this.kernels.layout,
            entries: [
              { binding: 0, resource: { buffer: this.stepUniform, size: STEP_PARAM_LAYOUT.length * 4 } },
              { binding: 1, resource: { buffer: prev } },
              { binding: 2, resource: { buffer: u } },
              { binding: 4, resource: { buffer: this.partials } },
            ],
          }),
          [at + i * SLOT],
        )
        const groups = Math.ceil(this.gpu.n / TILE)
        transfers.dispatch(pass, groups, groups, fields)
      }
      pass.setPipeline(this.gpu.sumRows.pipeline)
      pass.setBindGroup(
        0,
        device.createBindGroup({
          layout: this.gpu.sumRows.layout,
          entries: [
            { binding: 0, resource: { buffer: this.reduceUniform, size: 16 } },
            { binding: 1, resource: { buffer: kind === 'ledger' ? this.ledger : this.partials } },
            { binding: 2, resource: { buffer: this.slots } },
          ],
        }),
        [at + i * SLOT],
      )
      transfers.dispatch(pass, width(kind) * fields)
    })
    pass.end()
    // a hold goes with the work after it (the change it books, the steps): two of them and an injection
    // were three submits. Where the slots grew, at once, and the old buffer goes (the queue finishes
    // what was submitted with it)
    if (outgrown) {
      transfers.submit(encoder)
      outgrown.destroy()
    } else {
      const uniform = (buffer: GPUBuffer) => ({ buffer, offset: at, size: kinds.length * SLOT })
      transfers.submitWithNext(encoder, [
        u,
        prev,
        this.ledger,
        this.partials,
        this.slots,
        uniform(this.reduceUniform),
        ...(stepped ? [uniform(this.stepUniform)] : []),
      ])
    }
    return slots
  }

  async release(): Promise<Float32Array> {
    if (!this.used) return new Float32Array(0)
    const bytes = this.used * this.gpu.fields * 4
    this.used = 0
    const back = new Float32Array(
      await this.gpu.transfers.read(this.slots, 0, bytes, this.gpu.device.createCommandEncoder(), () => this.gpu.failure()),
    )
    this.gpu.check()
    return back
  }

  releaseLater(): () => Promise<Float32Array> {
    if (!this.used) return () => Promise.resolve(new Float32Array(0))
    const bytes = this.used * this.gpu.fields * 4
    this.used = 0
    const take = this.gpu.transfers.ride(this.slots, 0, bytes, () => this.gpu.failure())
    return async () => {
      const back = new Float32Array(await take())
      this.gpu.check()
      return back
    }
  }

  destroy(): void {
    for (const b of [this.partials, this.stepUniform, this.reduceUniform, this.slots]) this.gpu.transfers.destroy(b)
  }
}
