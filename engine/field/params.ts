// The kernels' uniform blocks, declared once (layouts.ts). The WGSL structs are generated from these
// lists (wgslStruct) and the uniform bytes are packed from them (packStruct), so offsets never drift.
import { SPONGE_MAX, viscosityAt, type Material } from '../contracts/material.js'
import type { STEP_PARAM_LAYOUT } from './layouts.js'
import { CrystalError } from '../errors.js'

export { DREAM_PARAM_LAYOUT, REDUCE_PARAM_LAYOUT, STEP_PARAM_LAYOUT, STEPS_PER_DISPATCH } from './layouts.js'

/** The step's constants: every member of its uniform block but those the GPU host sets per dispatch. */
export type StepParamName = Exclude<(typeof STEP_PARAM_LAYOUT)[number][0], 'ledger_slot' | 'energy_at' | 'key_1' | 'key_2' | 'key_3'>
export type StepParams = Record<StepParamName, number>

type Layout = readonly (readonly [string, 'u32' | 'f32'])[]

/** `struct Name { a: u32, ... }` for a shader. */
export function wgslStruct(name: string, layout: Layout): string {
  return `struct ${name} {\n${layout.map(([k, t]) => `  ${k}: ${t},`).join('\n')}\n}\n`
}

/** Uniform bytes in WGSL layout (every member is a 4-byte scalar, so member i sits at 4 i); an absent member is 0. */
export function packStruct(layout: Layout, values: Record<string, number | undefined>, into: ArrayBuffer, byteOffset = 0): void {
  const view = new DataView(into, byteOffset)
  layout.forEach(([k, t], i) => {
    if (t === 'u32') view.setUint32(i * 4, (values[k] ?? 0) >>> 0, true)
    else view.setFloat32(i * 4, values[k] ?? 0, true)
  })
}

/** Workgroup tile of the GPU kernels but the step (energy, potential, the dream's, recall's). */
export const TILE = 16

/**
 * The GPU field step's tile (shaders/field_step.wgsl): `w` x `h` cells a workgroup, `rows` of them an
 * invocation down its column, so the workgroup pays its tile sum once for all of them; its tiles are
 * the unit the books are kept in. On the H200 the step alone ran at 184 and 199 G cell-updates/s at
 * N = 2048 and 4096 in this shape, against 156 and 162 in TILE x TILE tiles of 4 rows (docs/gpu.md).
 */
export const STEP_TILE = { w: 32, h: 16, rows: 8 }

/**
 * Rows an invocation of the step computes in a batch of `cells` cells (n x n x fields): STEP_TILE's
 * from N = 2048 up, 4 below (128 invocations a workgroup, the same tiles and books). The step alone on
 * the H200 (G cell-updates/s, rows 2 / 4 / 8): N = 512 47 / 63 / 52, 1024 112 / 127 / 123, 2048 - / 168 / 184.
 */
export function stepRows(cells: number): number {
  return cells >= 2048 * 2048 ? STEP_TILE.rows : 4
}

/** The step's workgroups along x and y at side n; their product is the tiles a field's books hold. */
export function stepGroups(n: number): [number, number] {
  return [Math.ceil(n / STEP_TILE.w), Math.ceil(n / STEP_TILE.h)]
}

export interface FieldConditions {
  n: number
  fields: number
  material: Material
  temperature_k: number
  /** Extra noise amplitude on top of the thermal part (the language's NOISE). */
  noise: number
  /** Fields from `from` on run the fields before them again with `noise` more (EngineOptions.rerun). */
  rerun?: Rerun
}

/**
 * A batch's fields from `from` on are a second run of the fields before them: field f draws field
 * f - from's random numbers (its thermal noise, its dream's mutations) with `noise` added to the noise's
 * amplitude, so it runs as that field would in an engine of its own opened with `noise` more. Evolve's
 * noise-tolerance run so goes in one batch with the clean one (docs/discovery.md).
 */
export interface Rerun {
  from: number
  noise: number
}

/**
 * The field whose random numbers (thermal noise, a dream's mutations) each field of a batch draws:
 * `draws` where given (a batch extracted from another, Engine.extract: each field draws its field's
 * there, so it runs on as it would have there), else its own or a rerun's first run's (field - rerunFrom).
 * The kernels take it as a table (shaders/field_step.wgsl `draws`); a rerun's amplitude stays by index.
 */
export function drawTable(fields: number, rerunFrom: number, draws?: ArrayLike<number>): Uint32Array {
  return Uint32Array.from({ length: fields }, (_, f) => draws?.[f] ?? (f >= rerunFrom ? f - rerunFrom : f))
}

/**
 * A field at rest (EngineOptions.rest_until_injected) is marked in the step's table by this bit beside
 * the field it draws: each step holds it at 0 (no noise, nothing read but a sample's energy, no ledger
 * term), where a field waiting for its injection was stepped under noise before. A drawn field's index
 * is under 2^30 (a cell's draw is a u32 index over the fields), so the bit is free.
 */
export const RESTING = 0x80000000

/**
 * The step's table, as the kernels read it (shaders/field_step.wgsl `draws`): per field the field it
 * draws (drawTable), with RESTING set where it rests; then per field the steps it rested, by which its
 * noise is keyed by its own steps (noiseKey(seed, step - rested)): a genome's field injected after
 * others draws the numbers it would draw in a batch of its own.
 */
export function stepTable(draws: ArrayLike<number>, resting?: ArrayLike<boolean>, rested?: ArrayLike<number>): Uint32Array {
  const fields = draws.length
  const table = new Uint32Array(2 * fields)
  for (let f = 0; f < fields; f++) {
    table[f] = resting?.[f] ? (draws[f] | RESTING) >>> 0 : draws[f]
    table[fields + f] = rested?.[f] ?? 0
  }
  return table
}

/** A step request's table (StepRequest.draws), or where none is given the default one (none resting); one of another length is refused. */
export function requestTable(table: Uint32Array | undefined, fields: number, rerunFrom: number): Uint32Array {
  if (!table) return stepTable(drawTable(fields, rerunFrom))
  if (table.length !== 2 * fields)
    throw new CrystalError(
      'internal',
      `a step's table holds 2 words a field (params.ts stepTable): got ${table.length} for ${fields} fields`,
    )
  return table
}

/** Whether a backend's kernels hold `table` already (`held`): a request's is usually the engine's same one. */
export function sameDraws(table: Uint32Array, held: Uint32Array | undefined): boolean {
  return table === held || (held !== undefined && table.length === held.length && table.every((v, i) => v === held[i]))
}

/** Width of the boundary sponge in cells: 6% of the side, so a boundary means the same at every N. */
export function spongeWidth(n: number): number {
  return Math.max(2, Math.round(0.06 * n))
}

/** The constants of one step; `noise_key` is filled per step by noiseKey(). */
export function stepParams(c: FieldConditions): StepParams {
  const m = c.material
  const thermal = (m.noise_coupling * c.temperature_k) / 300
  return {
    n: c.n,
    fields: c.fields,
    noise_key: 0,
    step: 0,
    seed_key: 0,
    tiles_per_field: stepGroups(c.n)[0] * stepGroups(c.n)[1],
    c2: Math.fround(m.wave_speed * m.wave_speed),
    damping: Math.fround(m.damping),
    nonlinearity: Math.fround(m.nonlinearity),
    viscosity: Math.fround(viscosityAt(m, c.temperature_k)),
    noise: Math.fround(thermal + c.noise),
    sponge_max: Math.fround(SPONGE_MAX * (1 - m.boundary_reflectivity)),
    sponge_width: spongeWidth(c.n),
    sponge_inv_width: Math.fround(1 / spongeWidth(c.n)),
    // the amplitude an engine of its own opened with the rerun's noise more would take, to the bit
    rerun_from: c.rerun?.from ?? c.fields,
    rerun_noise: Math.fround(thermal + (c.noise + (c.rerun?.noise ?? 0))),
  }
}
