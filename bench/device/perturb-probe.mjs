// Where a population's perturbation spends its device time (evolve's `perturb` and `again` phases,
// engine/discovery/evaluate.ts perturbPlans): on the device machine, from the unpacked project,
//   node bench/device/perturb-probe.mjs [FIELDS] [SIZE]
// opens one batch as evolve does (FIELDS fields, 2000: population 1,000 and its rerun; N = SIZE, 96),
// and times each operation of a perturbation with a read after it (a held sum read back: the device
// done), beside plain steps of the same count. One JSON line.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const fields = Number(process.argv[2] ?? 2000)
const size = Number(process.argv[3] ?? 96)
const load = (p) => import(pathToFileURL(join(process.cwd(), 'dist', p)).href)
const { createNodeEngine } = await load('engine/node.js')
const { observeHeld } = await load('engine/dream/dream.js')

const cells = size * size
const engine = await createNodeEngine({
  backend: 'gpu',
  size,
  fields,
  material: 'europium_crystal',
  seed: 1,
  timeline_interval: 0,
  recall_history: false,
  rerun: { from: fields / 2, noise: 0.003 },
})
const pattern = new Float32Array(cells)
for (let i = 0; i < cells; i++) pattern[i] = Math.sin(i * 0.37) * Math.cos(i * 0.011)
const waves = Array.from({ length: fields }, (_, f) => pattern.map((v, i) => v * ((i + f) % 7 === 0 ? 1 : 0.2)))
// a device round trip: five floats read back (a basin's sums)
const sync = () => engine.perturbationSums({ pattern, basins: [0], windows: [] })
const ms = {}
const time = async (name, work) => {
  const t = performance.now()
  await work()
  await sync()
  ms[name] = Math.round((performance.now() - t) * 10) / 10
}
await engine.injectMany(waves)
await engine.holdStability()
await time('warm step 300', () => engine.step(300))
await time('sync alone', async () => {})
await time('step 200', () => engine.step(200))
await time('step 100 + observeHeld 100/10', async () => {
  await engine.step(100)
  await observeHeld(engine, 100, 10)
})
await time('holdStability', () => engine.holdStability())
const mask = new Float32Array(cells * fields).fill(1)
for (let f = 0; f < fields / 2; f += 2) for (let c = 0; c < Math.min(300, cells / 2); c++) mask[f * cells + ((cells / 3) | 0) + c] = 0
await time('scale (dense mask)', () => engine.scale(mask))
// the same cells erased as evolve erases them now (engine.erase: the cells sent, not the mask)
const erasures = []
for (let f = 0; f < fields / 2; f += 2)
  erasures.push({ field: f, cells: Array.from({ length: Math.min(300, cells / 2) }, (_, c) => ((cells / 3) | 0) + c) })
await time(`erase (${erasures.length} fields)`, () => engine.erase(erasures))
const kicked = Array.from({ length: fields / 4 }, (_, k) => 4 * k + 1)
await time(`kick (${kicked.length} fields)`, () => engine.kick(pattern, kicked))
await time('step 200 after the changes', () => engine.step(200))
const windows = Array.from({ length: fields / 4 }, (_, k) => ({
  field: 4 * k,
  cells: Array.from({ length: Math.min(300, cells / 2) }, (_, c) => ((cells / 4) | 0) + c),
}))
await time(`perturbationSums (${kicked.length} basins, ${windows.length} windows)`, () =>
  engine.perturbationSums({ pattern, basins: kicked, windows }),
)
await time('step 200 again', () => engine.step(200))
await time('the whole perturbation, as before 2026-12-05 (the whole batch, a dense mask)', async () => {
  await engine.holdStability()
  await engine.scale(mask)
  await engine.kick(pattern, kicked)
  await engine.step(100)
  await observeHeld(engine, 100, 10)
  await engine.perturbationSums({ pattern, basins: kicked, windows })
})
// evolve's perturbation (engine/discovery/evaluate.ts perturbedApart): the first run's fields in a
// batch of their own, the rerun's left alone
const first = [...Array(fields / 2).keys()]
const inFirst = (list) => list.filter((f) => f < fields / 2)
let clean
await engine.holdStability()
await time(`extract (${first.length} fields)`, async () => (clean = await engine.extract(first)))
await time(`the perturbation of the ${first.length} fields extracted`, async () => {
  await clean.erase(erasures)
  await clean.kick(pattern, inFirst(kicked))
  await clean.step(100)
  await observeHeld(clean, 100, 10)
  await clean.perturbationSums({ pattern, basins: inFirst(kicked), windows: windows.filter((w) => w.field < fields / 2) })
})
clean.destroy()
// evolve's second try (engine/discovery/evaluate.ts perturbedFirst): some 1.7 % of the first run's
// fields, guessed wrong, in a batch of their own, its kick and steps
const wrong = Array.from({ length: Math.max(1, Math.round((0.017 * fields) / 2)) }, (_, k) => 2 * k + 1)
let part
await time(`extract (${wrong.length} fields)`, async () => (part = await engine.extract(wrong)))
await time(`the perturbation of the ${wrong.length} fields extracted`, async () => {
  await part.kick(pattern, [...wrong.keys()])
  await part.step(100)
  await observeHeld(part, 100, 10)
  await part.perturbationSums({ pattern, basins: [...wrong.keys()], windows: [] })
})
part.destroy()
console.log(JSON.stringify({ fields, size, ms, transfers: engine.transfers?.() }))
engine.destroy()
process.exit(0)
