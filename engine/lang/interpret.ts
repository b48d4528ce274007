// Runs a checked .crystal program over the engine (docs/language.md): one result per command, as a
// line for people and a record for --json. The field is opened at the first command that needs it,
// with the MATERIAL, SEED, TEMPERATURE and NOISE given so far; later ones change it in place.
import type { Material } from '../contracts/material.js'
import { CLASS_NAMES } from '../contracts/registry.js'
import { crystallize, type FieldHistory } from '../discovery/crystallize.js'
import { merge, split, type DeriveOptions, type Derived } from '../discovery/discovery.js'
import { CrystalError, isCrystalError } from '../errors.js'
import type { Engine, EngineOptions } from '../field/engine.js'
import type { MaterialCatalog } from '../field/materials.js'
import type { Registry } from '../registry/registry.js'
import { cosine } from '../util/vector.js'
import { observeStability } from '../dream/dream.js'
import { formatError, type Command, type CommandName } from './parse.js'

/**
 * STABILIZE: observe stability in windows until two consecutive maps agree (cosine) this well, then
 * register what crystallized: at most `max_structures`, the strongest (each is perturbed to measure it).
 */
export const STABILIZE = { window_steps: 400, window_samples: 20, similarity: 0.97, max_windows: 10, max_structures: 16 } as const

export interface InterpretContext {
  open: (o: EngineOptions) => Promise<Engine>
  catalog: MaterialCatalog
  registry: Registry
  size: number
  /** --material: replaces every MATERIAL of the program (and the default). */
  material?: string
  /** The program's name in error places (file:line:column), as parse and check were given it. */
  file?: string
  onResult?: (entry: TraceEntry) => void
}

export interface TraceEntry {
  line: number
  command: CommandName
  source: string
  result: Record<string, unknown>
  text: string
}

const pct = (v: number) => `${(100 * v).toFixed(0)}%`
const fmt = (v: number) => (Math.abs(v) >= 1000 || (Math.abs(v) < 0.001 && v !== 0) ? v.toExponential(3) : v.toFixed(4))

export async function interpret(commands: readonly Command[], ctx: InterpretContext): Promise<TraceEntry[]> {
  const trace: TraceEntry[] = []
  const file = ctx.file ?? '<program>'
  // the command that last set each condition, so a failure it causes later can name it
  const setBy = new Map<string, Command>()
  let material: Material = ctx.catalog.get(ctx.material ?? 'ideal_resonator')
  let seed = 1
  let temperature: number | undefined
  let noise = 0
  let engine: Engine | undefined
  // what STABILIZE records as the genome of what crystallized
  const history: FieldHistory = { pulses: [], dream: 'none' }
  const field = async () => (engine ??= await ctx.open({ size: ctx.size, material, seed, temperature_k: temperature, noise }))
  const derive = (): DeriveOptions => ({ registry: ctx.registry, size: ctx.size, seed, material, open: ctx.open })
  const energy = async () => (await (await field()).books())[0]
  // what became of each child: registered (its id), or why not
  const describeDerived = (out: Derived, what: string, names: readonly string[] = []) => {
    const told = out.children.map((child, i) => {
      const p = child.outcome === 'registered' ? out.registered.find((r) => r.id === child.id) : undefined
      const said =
        child.outcome === 'registered'
          ? `${child.id}${p ? ` (${p.class}, persistence ${pct(p.persistence)})` : ''}`
          : child.outcome === 'duplicate'
            ? `a duplicate of ${child.duplicate_of}, not registered`
            : child.outcome === 'no_structure'
              ? 'no structure found, not registered'
              : "registered, then removed at once by the registry's caps"
      return names[i] ? `${names[i]}: ${said}` : said
    })
    return `${what} -> ${told.join('; ')}`
  }

  try {
    for (const c of commands) {
      const [a, b] = c.args
      let result: Record<string, unknown> = {}
      let text = ''
      const condition = CONDITIONS[c.name as keyof typeof CONDITIONS]
      if (condition) setBy.set(condition, c)
      try {
        switch (c.name) {
          case 'MATERIAL': {
            material = ctx.catalog.get(ctx.material ?? String(a))
            engine?.setMaterial(material)
            result = { material: material.name, overridden: ctx.material !== undefined && ctx.material !== a }
            text = `material ${material.name} (wave speed ${material.wave_speed}, damping ${material.damping}, reflectivity ${material.boundary_reflectivity}, ${material.temperature_k} K)${result.overridden ? ' [--material]' : ''}`
            break
          }
          case 'SEED':
            seed = Number(a)
            result = { seed }
            text = `seed ${seed}`
            break
          case 'TEMPERATURE':
            temperature = Number(a)
            engine?.setTemperature(temperature)
            result = { temperature_k: temperature }
            text = `temperature ${temperature} K`
            break
          case 'NOISE':
            noise = Number(a)
            engine?.setNoise(noise)
            result = { noise }
            text = `noise ${noise}`
            break
          case 'WRITE': {
            const e = await field()
            await e.write(String(a), Number(b))
            const books = await energy()
            result = { text: a, importance: b, step: e.step_count, energy: books.energy }
            text = `wrote "${a}" (importance ${b}) at step ${e.step_count}; energy ${fmt(books.energy)}`
            break
          }
          case 'PULSE': {
            const [x, y, radius, amplitude, frequency, phase] = c.args.map(Number)
            const e = await field()
            await e.pulse({ x, y, radius, amplitude, frequency, phase })
            history.pulses.push({ x, y, radius, amplitude, frequency, phase })
            const books = await energy()
            result = { x, y, radius, amplitude, frequency, phase, energy: books.energy }
            text = `pulse at (${x}, ${y}) radius ${radius} amplitude ${amplitude} frequency ${frequency} phase ${phase}; energy ${fmt(books.energy)}`
            break
          }
          case 'RESONATE': {
            const e = await field()
            // the run's timeline samples come back with the books: one read where two
            const books = await e.samplingLater(async () => {
              await e.step(Number(a))
              return energy()
            })
            result = { steps: a, ...books }
            text = `resonated ${a} steps (step ${e.step_count}); energy ${fmt(books.energy)}, bulk loss ${fmt(books.bulk_loss)}, boundary leakage ${fmt(books.boundary_loss)}`
            break
          }
          case 'PROBE': {
            const r = await (await field()).probe(String(a))
            result = { text: a, ...r }
            text = `probe "${a}": resonance ${r.resonance.toFixed(3)} (noise floor ${r.noise_floor.toFixed(3)}${r.step === null ? '' : `, read at step ${r.step}`})`
            break
          }
          case 'DREAM': {
            const [r] = await (await field()).dream(a as 'light' | 'deep')
            history.dream = a as 'light' | 'deep'
            result = { ...r }
            text = `dream ${r.mode}: energy ${fmt(r.energy_before)} -> ${fmt(r.energy_after)}, pruned ${pct(r.pruned_fraction)}, amplified ${pct(r.amplified_fraction)}, ${r.mutated_cells} kicks`
            break
          }
          case 'STABILIZE': {
            // settled when the stability map (mean |u| over a window) stops changing between windows
            const e = await field()
            // a window's map is one read on the GPU, and the steps' timeline samples come back with the reads after them
            const { similarity, windows, found, books } = await e.samplingLater(async () => {
              let previous = await observeStability(e, STABILIZE.window_steps, STABILIZE.window_samples)
              let [similarity, windows] = [0, 1]
              while (windows < STABILIZE.max_windows && similarity < STABILIZE.similarity) {
                const next = await observeStability(e, STABILIZE.window_steps, STABILIZE.window_samples)
                similarity = cosine(previous, next)
                previous = next
                windows++
              }
              const found = await crystallize(e, ctx.registry, history, STABILIZE.max_structures)
              return { similarity, windows, found, books: await energy() }
            })
            const settled = similarity >= STABILIZE.similarity
            const steps = windows * STABILIZE.window_steps
            const made = found.registered.map((p) => `${p.id} (${CLASS_NAMES[p.class]}, persistence ${pct(p.persistence)})`)
            const dups = found.rejected.map((r) => `a duplicate of ${r.duplicate_of}`)
            result = {
              steps,
              settled,
              similarity,
              energy: books.energy,
              structures: found.structures.length,
              registered: found.registered.map((p) => p.id),
              rejected: found.rejected,
            }
            text = `${settled ? 'stabilized' : 'not stable'} after ${steps} steps (stability maps of consecutive ${STABILIZE.window_steps}-step windows agree to ${similarity.toFixed(3)}); ${made.length ? `crystallized ${made.join(', ')}` : 'nothing crystallized'}${dups.length ? ` (${dups.join(', ')})` : ''}`
            break
          }
          case 'RECALL': {
            const r = await (await field()).recall(String(a), Number(b))
            result = { text: a, k: b, ...r }
            const hits = r.hits
              .map(
                (h) =>
                  `${h.rank}. "${h.text}" (match ${h.match.toFixed(3)}, strength ${h.strength.toFixed(3)}, floor ${h.noise_floor.toFixed(3)})`,
              )
              .join('  ')
            // over capacity is said first and in capitals: the ranking after it is a guess
            text = `recall "${a}": ${r.over_capacity ? `WARNING ${r.reason}  ${hits}` : (r.reason ?? hits)}`
            break
          }
          case 'MERGE': {
            const out = await merge(String(a), String(b), derive())
            result = { parents: [a, b], registered: out.registered.map((p) => p.id), rejected: out.rejected, children: out.children }
            text = describeDerived(out, `merged ${a} + ${b}`)
            break
          }
          case 'SPLIT': {
            const out = await split(String(a), derive())
            result = { parent: a, registered: out.registered.map((p) => p.id), rejected: out.rejected, children: out.children }
            text = describeDerived(out, `split ${a}`, ['first half', 'second half'])
            break
          }
        }
      } catch (e) {
        throw placed(e, c, file, setBy)
      }
      const entry = { line: c.line, command: c.name, source: c.source, result, text }
      trace.push(entry)
      ctx.onResult?.(entry)
    }
  } finally {
    engine?.destroy()
  }
  return trace
}

/** The engine's field name for what each condition command sets. */
const CONDITIONS = { MATERIAL: 'material', TEMPERATURE: 'temperature_k', NOISE: 'noise', SEED: 'seed' } as const

/**
 * A failure while a command runs, placed like a parse error: `file:line:column: message`, with the
 * place in `where`. A bad value the engine refuses makes the program bad (as a parse error does);
 * when an earlier command set the condition the engine refused, the hint names it.
 */
function placed(e: unknown, c: Command, file: string, setBy: ReadonlyMap<string, Command>): unknown {
  if (!isCrystalError(e)) return e
  const cause = e.where.field === undefined ? undefined : setBy.get(e.where.field)
  const hint = cause && cause !== c ? `set by ${cause.source} on line ${cause.line}` : e.hint
  const place = { file, line: c.line, column: c.column }
  const code = e.code === 'bad_argument' ? 'bad_program' : e.code
  return new CrystalError(code, formatError({ ...place, message: e.message }), { ...e.where, ...place }, hint)
}
