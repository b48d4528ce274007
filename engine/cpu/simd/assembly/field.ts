// The CPU backend's kernel: shaders/field_step.wgsl and engine/cpu/field_step.ts again, in
// AssemblyScript with WebAssembly SIMD (4 cells per instruction) and shared-memory threads.
// Fields are stored padded, (n + 2)^2 per field with a zero border, so every cell reads its four
// neighbours without a branch; the border is never written and stays the Dirichlet zero.
// Float32 arithmetic in exactly the reference's order, so the two agree bit for bit (a test checks).

// Job block: i32 words at `job`, written by engine/cpu/wasm.ts; their indices are generated from
// engine/field/layouts.ts (JOB_HEADER, JOB_PARAMS), the declaration the WGSL uniform struct comes from.
import { BARRIER_COUNT, BARRIER_PHASE, BUF0, BUF1, BUF2, DRAWS, FIELDS, FIRST_STEP, LEDGER, N, PARAM_C2, PARAM_DAMPING, PARAM_NOISE, PARAM_NONLINEARITY, PARAM_RERUN_NOISE, PARAM_SPONGE_INV_WIDTH, PARAM_SPONGE_MAX, PARAM_SPONGE_WIDTH, PARAM_VISCOSITY, PARAMS, RERUN_FROM, SAMPLE_INTERVAL, SAMPLES, SEED, STEPS, THREADS } from './job.gen'

/** The draws table's bit for a field at rest (engine/field/params.ts RESTING). */
const RESTING: u32 = 0x80000000

@inline function word(job: usize, i: i32): i32 {
  return load<i32>(job + (<usize>i << 2))
}
@inline function param(job: usize, i: i32): f32 {
  return load<f32>(job + (<usize>(PARAMS + i) << 2))
}

@inline function hash1(x: u32): u32 {
  x ^= x >> 16
  x *= 0x7feb352d
  x ^= x >> 15
  x *= 0x846ca68b
  x ^= x >> 16
  return x
}

@inline function hash4(x: v128): v128 {
  x = v128.xor(x, i32x4.shr_u(x, 16))
  x = i32x4.mul(x, i32x4.splat(0x7feb352d))
  x = v128.xor(x, i32x4.shr_u(x, 15))
  x = i32x4.mul(x, i32x4.splat(<i32>0x846ca68b))
  x = v128.xor(x, i32x4.shr_u(x, 16))
  return x
}

/** Steps global rows [r0, r1) (row r is row r % n of field r / n); adds each term's work to `ledger`. */
function stepRows(job: usize, prev: usize, cur: usize, next: usize, r0: i32, r1: i32, step: u32, seedKey: u32, ledger: usize): void {
  const n = word(job, N)
  const s = n + 2
  const s4 = <usize>s << 2
  const c2 = f32x4.splat(param(job, PARAM_C2))
  const damping = f32x4.splat(param(job, PARAM_DAMPING))
  const nonlin = f32x4.splat(param(job, PARAM_NONLINEARITY))
  const visc = f32x4.splat(param(job, PARAM_VISCOSITY))
  const fieldNoise = f32x4.splat(param(job, PARAM_NOISE))
  // a rerun's field has a louder noise (engine/field/params.ts Rerun); each field draws the random
  // numbers of the field its table names (params.ts drawTable)
  const rerunFrom = word(job, RERUN_FROM)
  const draws = <usize>word(job, DRAWS)
  const rerunNoise = f32x4.splat(param(job, PARAM_RERUN_NOISE))
  const spongeMax = f32x4.splat(param(job, PARAM_SPONGE_MAX))
  const spongeWidth = f32x4.splat(param(job, PARAM_SPONGE_WIDTH))
  const spongeInvWidth = f32x4.splat(param(job, PARAM_SPONGE_INV_WIDTH))
  // Cells at depth >= width (or everywhere, with a perfect mirror) feel no sponge.
  const width = param(job, PARAM_SPONGE_MAX) == 0 ? -1 : <i32>param(job, PARAM_SPONGE_WIDTH)
  const zero = f32x4.splat(0)
  const one = f32x4.splat(1)
  const four = f32x4.splat(4)
  const lastCell = f32x4.splat(<f32>(n - 1))
  const unit = f32x4.splat(<f32>1.1920928955078125e-7) // 2^-23
  const lanes = i32x4(0, 1, 2, 3)
  const fields = word(job, FIELDS)
  const key = hash1(step ^ seedKey)
  for (let r = r0; r < r1; r++) {
    const field = r / n
    const y = r % n
    const row = <usize>(field * s * s + (y + 1) * s + 1) << 2
    const entry = load<u32>(draws + (<usize>field << 2))
    if (entry & RESTING) {
      // held at 0 until its injection (EngineOptions.rest_until_injected): no noise, no ledger term
      for (let x = 0; x < n; x += 4) v128.store(next + row + (<usize>(x + 4 > n ? n - 4 : x) << 2), zero)
      continue
    }
    const rerun = field >= rerunFrom
    const noiseAmp = rerun ? rerunNoise : fieldNoise
    const cellBase = <i32>entry * n * n + y * n
    // a field that rested keys its noise by its own steps (engine/field/params.ts stepTable)
    const rested = load<u32>(draws + (<usize>(fields + field) << 2))
    const keyV = i32x4.splat(<i32>(rested == 0 ? key : hash1((step - rested) ^ seedKey)))
    const yf = f32x4.splat(<f32>y)
    const edgeRow = y < width || y > n - 1 - width
    let bulk = zero
    let boundary = zero
    let saturation = zero
    let noiseWork = zero
    let x = 0
    while (x < n) {
      // The last vector of a row whose length is not a multiple of 4 overlaps the one before it:
      // recomputing a cell writes the same value, and the mask keeps the ledger from counting it twice.
      const xs = x + 4 > n ? n - 4 : x
      const fresh = i32x4.ge_s(i32x4.add(i32x4.splat(xs), lanes), i32x4.splat(x))
      const o = row + (<usize>xs << 2)
      const uc = v128.load(cur + o)
      const pc = v128.load(prev + o)
      const lapU = f32x4.sub(
        f32x4.add(f32x4.add(v128.load(cur + o - 4), v128.load(cur + o + 4)), f32x4.add(v128.load(cur + o - s4), v128.load(cur + o + s4))),
        f32x4.mul(four, uc),
      )
      const lapP = f32x4.sub(
        f32x4.add(f32x4.add(v128.load(prev + o - 4), v128.load(prev + o + 4)), f32x4.add(v128.load(prev + o - s4), v128.load(prev + o + s4))),
        f32x4.mul(four, pc),
      )
      const vel = f32x4.sub(uc, pc)
      const fBulk = f32x4.sub(f32x4.mul(visc, f32x4.sub(lapU, lapP)), f32x4.mul(damping, vel))
      // Deep inside, the sponge is exactly zero: skip it (adding a zero changes nothing).
      const inSponge = edgeRow || xs < width || xs + 3 > n - 1 - width
      let fSponge = zero
      if (inSponge) {
        const xf = f32x4.convert_i32x4_s(i32x4.add(i32x4.splat(xs), lanes))
        const depth = f32x4.min(f32x4.min(xf, yf), f32x4.min(f32x4.sub(lastCell, xf), f32x4.sub(lastCell, yf)))
        const t = f32x4.mul(f32x4.max(f32x4.sub(spongeWidth, depth), zero), spongeInvWidth)
        fSponge = f32x4.neg(f32x4.mul(f32x4.mul(spongeMax, f32x4.mul(t, t)), vel))
      }
      const u2 = f32x4.mul(uc, uc)
      const sat = f32x4.div(f32x4.mul(nonlin, f32x4.mul(u2, uc)), f32x4.add(one, u2))
      const h = hash4(v128.xor(i32x4.add(i32x4.splat(cellBase + xs), lanes), keyV))
      const xi = f32x4.sub(f32x4.mul(f32x4.convert_i32x4_u(i32x4.shr_u(h, 8)), unit), one)
      const noise = f32x4.mul(noiseAmp, xi)
      const out = f32x4.add(f32x4.sub(f32x4.add(f32x4.add(f32x4.add(f32x4.add(uc, vel), f32x4.mul(c2, lapU)), fBulk), fSponge), sat), noise)
      v128.store(next + o, out)
      const dw = f32x4.sub(out, pc)
      bulk = f32x4.sub(bulk, v128.and(fresh, f32x4.mul(fBulk, dw)))
      if (inSponge) boundary = f32x4.sub(boundary, v128.and(fresh, f32x4.mul(fSponge, dw)))
      saturation = f32x4.add(saturation, v128.and(fresh, f32x4.mul(sat, dw)))
      noiseWork = f32x4.add(noiseWork, v128.and(fresh, f32x4.mul(noise, dw)))
      x = xs + 4
    }
    const slot = ledger + (<usize>field << 5)
    store<f64>(slot, load<f64>(slot) + sum4(bulk))
    store<f64>(slot + 8, load<f64>(slot + 8) + sum4(boundary))
    store<f64>(slot + 16, load<f64>(slot + 16) + sum4(saturation))
    store<f64>(slot + 24, load<f64>(slot + 24) + sum4(noiseWork))
  }
}

@inline function sum4(v: v128): f64 {
  return (
    <f64>f32x4.extract_lane(v, 0) + <f64>f32x4.extract_lane(v, 1) + <f64>f32x4.extract_lane(v, 2) + <f64>f32x4.extract_lane(v, 3)
  )
}

/** Adds the staggered energy of rows [r0, r1) to out[field * stride] (see energyReference). */
function energyRows(job: usize, prev: usize, cur: usize, r0: i32, r1: i32, out: usize, stride: usize): void {
  const n = word(job, N)
  const s = n + 2
  const s4 = <usize>s << 2
  const c2 = f32x4.splat(param(job, PARAM_C2))
  const lanes = i32x4(0, 1, 2, 3)
  for (let r = r0; r < r1; r++) {
    const field = r / n
    const y = r % n
    const row = <usize>(field * s * s + (y + 1) * s + 1) << 2
    let acc = f32x4.splat(0)
    let x = 0
    while (x < n) {
      const xs = x + 4 > n ? n - 4 : x
      const fresh = i32x4.ge_s(i32x4.add(i32x4.splat(xs), lanes), i32x4.splat(x))
      const o = row + (<usize>xs << 2)
      const uc = v128.load(cur + o)
      const pc = v128.load(prev + o)
      const vel = f32x4.sub(uc, pc)
      const gx = f32x4.mul(f32x4.sub(uc, v128.load(cur + o + 4)), f32x4.sub(pc, v128.load(prev + o + 4)))
      const gy = f32x4.mul(f32x4.sub(uc, v128.load(cur + o + s4)), f32x4.sub(pc, v128.load(prev + o + s4)))
      acc = f32x4.add(acc, v128.and(fresh, f32x4.add(f32x4.mul(vel, vel), f32x4.mul(c2, f32x4.add(gx, gy)))))
      x = xs + 4
    }
    // The edges to the zero border on the left and top (right and bottom ones were read above).
    let e = sum4(acc)
    const c2s = <f64>param(job, PARAM_C2)
    e += c2s * <f64>load<f32>(cur + row) * <f64>load<f32>(prev + row)
    if (y == 0) {
      for (let i = 0; i < n; i++) {
        const o = row + (<usize>i << 2)
        e += c2s * <f64>load<f32>(cur + o) * <f64>load<f32>(prev + o)
      }
    }
    const slot = out + <usize>field * stride
    store<f64>(slot, load<f64>(slot) + e)
  }
}

function barrier(job: usize, threads: i32): void {
  if (threads == 1) return
  const countPtr = job + (BARRIER_COUNT << 2)
  const phasePtr = job + (BARRIER_PHASE << 2)
  const phase = atomic.load<i32>(phasePtr)
  if (atomic.add<i32>(countPtr, 1) == threads - 1) {
    atomic.store<i32>(countPtr, 0)
    atomic.add<i32>(phasePtr, 1)
    atomic.notify(phasePtr, threads)
  } else {
    let spins = 0
    while (atomic.load<i32>(phasePtr) == phase) {
      if (++spins > 4000) memory.atomic.wait32(phasePtr, phase, 1000000)
    }
  }
}

/** Runs the job's steps on thread t's share of the rows, in lockstep with the other threads. */
export function run(job: usize, t: i32): void {
  const n = word(job, N)
  const fields = word(job, FIELDS)
  const threads = word(job, THREADS)
  const rows = fields * n
  const r0 = <i32>((<i64>t * rows) / threads)
  const r1 = <i32>((<i64>(t + 1) * rows) / threads)
  let prev = <usize>word(job, BUF0)
  let cur = <usize>word(job, BUF1)
  let next = <usize>word(job, BUF2)
  const steps = word(job, STEPS)
  const first = word(job, FIRST_STEP)
  const seedKey = hash1(<u32>word(job, SEED))
  const interval = word(job, SAMPLE_INTERVAL)
  const ledger = <usize>word(job, LEDGER) + <usize>(t * fields * 4) * 8
  const samples = <usize>word(job, SAMPLES)
  const sampleStride = <usize>(threads * 5) * 8 // bytes from one field's slot to the next
  let sample = 0
  for (let i = 0; i < steps; i++) {
    stepRows(job, prev, cur, next, r0, r1, <u32>(first + i), seedKey, ledger)
    barrier(job, threads)
    const oldPrev = prev
    prev = cur
    cur = next
    next = oldPrev
    if (interval > 0 && (first + i + 1) % interval == 0) {
      const base = samples + <usize>(sample * fields) * sampleStride + <usize>(t * 5) * 8
      energyRows(job, prev, cur, r0, r1, base, sampleStride)
      for (let f = 0; f < fields; f++) {
        memory.copy(base + <usize>f * sampleStride + 8, ledger + (<usize>f << 5), 32)
      }
      sample++
    }
  }
  barrier(job, threads)
}
