#!/usr/bin/env node
// Prints the figures behind the publisher's window (docs/consciousness.md): phi as the publisher
// publishes it, per material, beside its controls from the same run, and the CPU cost of a period.
// Usage: node scripts/phi-publisher.mjs [size] [periods] [materials]   (default 128, 20, all built-ins). Needs `npm run build`.
import { readdirSync } from 'node:fs'
const { createNodeEngine } = await import('../dist/engine/node.js')
const { ConsciousnessPublisher, PHI_STRIDE, PHI_WINDOW } = await import('../dist/engine/consciousness/publisher.js')
const { phi } = await import('../dist/engine/consciousness/iit.js')
const { rng } = await import('../dist/engine/util/rng.js')
const size = Number(process.argv[2]) || 128
const periods = Number(process.argv[3]) || 20
const materials =
  process.argv[4]?.split(',') ??
  readdirSync(new URL('../materials/', import.meta.url))
    .filter((f) => f.endsWith('.json') && !f.includes('schema'))
    .map((f) => f.slice(0, -5))
const cpu = (f) => async () => {
  const c = process.cpuUsage()
  const r = await f()
  const u = process.cpuUsage(c)
  return [(u.user + u.system) / 1000, r]
}
const counts = (reports) =>
  `${reports.filter((r) => r.phi > 0).length}/${reports.length} above, ${reports.filter((r) => r.level === 'dormant').length} dormant`
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
console.log(
  `size ${size}, ${periods} periods of 50 steps each after one write; window ${PHI_WINDOW} samples, ${PHI_STRIDE} steps apart; controls: 60 windows each`,
)
console.log(
  'material | moving field: above null / dormant | phi median | independent cells | shuffled cells | CPU per period (ms): all, of which phi',
)
for (const material of materials) {
  const engine = await createNodeEngine({ backend: 'cpu', size, material, seed: 3 })
  const publisher = new ConsciousnessPublisher(engine, { sender: 'bench', publish() {} }, 1000, console.error)
  await engine.write('the cold glyph remembers', 1)
  const reports = []
  const windows = []
  let [all, phiMs] = [0, 0]
  for (let k = 0; k < periods; k++) {
    await engine.step(50)
    all += (await cpu(() => publisher.tick())())[0]
    reports.push(publisher.last)
    windows.push(publisher.window)
    phiMs += (await cpu(async () => phi(publisher.window))())[0]
  }
  engine.destroy()
  // the controls of the publisher test: each cell from another period; each cell shuffled in time
  const rand = rng(4)
  const independent = Array.from({ length: 60 }, () => {
    const from = Array.from({ length: 12 }, (_, i) => (Math.floor(rand() * windows.length) + i) % windows.length)
    return phi(windows[0].map((_, t) => Float64Array.from(from, (w, i) => windows[w][t][i])))
  })
  const shuffled = Array.from({ length: 60 }, (_, k) => {
    const w = windows[k % windows.length]
    const order = Array.from({ length: 12 }, () =>
      w
        .map((_, t) => [rand(), t])
        .sort((x, y) => x[0] - y[0])
        .map(([, t]) => t),
    )
    return phi(w.map((_, t) => Float64Array.from({ length: 12 }, (_, i) => w[order[i][t]][i])))
  })
  console.log(
    `${material} | ${counts(reports)} | ${median(reports.map((r) => r.phi)).toFixed(3)} | ${counts(independent)} | ${counts(shuffled)} | ${(all / periods).toFixed(0)}, ${(phiMs / periods).toFixed(0)}`,
  )
}
