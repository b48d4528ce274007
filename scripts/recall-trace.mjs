// Recall's time on the GPU backend (docs/gpu.md, "On the H200 a third time"): M memories written at N in
// 40 moments (ideal_resonator), then one question asked again, after a step and after a write, each
// with its transfer counts and a timeline of its reads (when asked, how long until the device answered,
// bytes: Transfers' private `mapped`, wrapped here for that alone). Needs `npm run build`.
//   node scripts/recall-trace.mjs [N=2048] [memories=200] [recall cache MB=3500]
// PROF=file.cpuprofile also profiles eight questions after a step each (the main thread's time).
import { Session } from 'node:inspector/promises'
import { writeFileSync } from 'node:fs'
import { createNodeEngine } from '../dist/engine/index.js'
import { Transfers } from '../dist/engine/gpu/transfers.js'
const n = Number(process.argv[2] ?? 2048),
  count = Number(process.argv[3] ?? 200),
  cacheMb = Number(process.argv[4] ?? 3500)
const SY = ['ka', 'lo', 'mi', 'ren', 'tu', 'sha', 'vel', 'or', 'quin', 'da', 'pe', 'zor', 'ly', 'an', 'thi', 'bo']
let s = 5
const rand = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32
const word = () => SY[Math.floor(rand() * 16)] + SY[Math.floor(rand() * 16)]
const texts = Array.from({ length: count }, (_, i) => `${word()} ${word()} ${word()} ${i}`)
let log = null,
  t0 = 0
const orig = Transfers.prototype.mapped
Transfers.prototype.mapped = async function (src, offset, bytes, ...rest) {
  const a = performance.now()
  const r = await orig.call(this, src, offset, bytes, ...rest)
  log?.push(`read ${bytes} B asked at ${(a - t0).toFixed(1)} ms, back after ${(performance.now() - a).toFixed(1)} ms`)
  return r
}
const e = await createNodeEngine({
  backend: 'gpu',
  size: n,
  material: 'ideal_resonator',
  seed: 3,
  timeline_interval: 0,
  recall_cache_bytes: cacheMb * 2 ** 20,
})
const batch = Math.ceil(count / 40)
for (let i = 0; i < count; i += batch) {
  await e.writeMany(texts.slice(i, i + batch).map((text) => ({ text })))
  await e.step(5)
}
const q = (i) => texts[(i * 977) % count].split(' ').slice(0, 2).join(' ')
await e.recall(q(0), 10)
await e.recall(q(1), 10)
for (const [label, before] of [
  ['again', async () => {}],
  ['after a step', () => e.step(1)],
  ['again', async () => {}],
  ['after a step', () => e.step(1)],
  ['a write then', () => e.write('one more')],
]) {
  await before()
  log = []
  const c0 = e.transfers()
  t0 = performance.now()
  await e.recall(q(2), 10)
  const ms = performance.now() - t0
  const c1 = e.transfers()
  console.log(`${label}: ${ms.toFixed(1)} ms;`, JSON.stringify(Object.fromEntries(Object.keys(c1).map((k) => [k, c1[k] - c0[k]]))))
  for (const l of log) console.log('   ', l)
  log = null
}
if (process.env.PROF) {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 100 })
  await session.post('Profiler.start')
  const ts = []
  for (let i = 0; i < 8; i++) {
    await e.step(1)
    const t = performance.now()
    await e.recall(q(i % 3), 10)
    ts.push(performance.now() - t)
  }
  const { profile } = await session.post('Profiler.stop')
  writeFileSync(process.env.PROF, JSON.stringify(profile))
  console.log('profiled, after a step each:', ts.map((x) => x.toFixed(1)).join(' '))
}
e.destroy()
