// The consciousness publisher's period timed with two builds, alternately (pack-pair.sh packs them;
// call.sh's part "publisher"): on the device machine, from the unpacked project,
//   node bench/device/publisher.mjs HEAD_DIR BASE_DIR [OUT_JSON]
// opens a GPU engine of SIZE (2048) in ideal_resonator with each build in turn, ROUNDS (2) times, writes
// a text, then TICKS (6) times steps 50 and runs one publication (`tick`): at 2048 the first is observed
// (phi's window: a twin and its 381 steps), the others not (one period in 64 is). A line of JSON each
// engine: its build, each tick's milliseconds, whether it observed, and the live field's reads and bytes
// read back; the phi and order published, which the two builds should share.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

const [head, base, outFile] = process.argv.slice(2)
if (!head || !base) {
  console.error('usage: node publisher.mjs HEAD_DIR BASE_DIR [OUT_JSON]  (env: SIZE, TICKS, ROUNDS)')
  process.exit(2)
}
const size = Number(process.env.SIZE ?? 2048)
const ticks = Number(process.env.TICKS ?? 6)
const rounds = Number(process.env.ROUNDS ?? 2)

async function periods(build, dir) {
  const { createNodeEngine } = await import(join(dir, 'dist/engine/node.js'))
  const { ConsciousnessPublisher } = await import(join(dir, 'dist/engine/consciousness/publisher.js'))
  const engine = await createNodeEngine({ backend: 'gpu', size, material: 'ideal_resonator', seed: 3 })
  const sent = []
  const publisher = new ConsciousnessPublisher(engine, { sender: 'bench', publish: (s, m) => sent.push([s, m]) }, 1000, console.error)
  // a twin opened during a tick is an observation (a fork, this build; a twin resumed, the base)
  let observed = false
  for (const open of ['twin', 'fork'].filter((f) => engine[f])) {
    const opened = engine[open].bind(engine)
    engine[open] = async (arg) => ((observed = true), opened(arg))
  }
  try {
    await engine.write('the cold glyph remembers', 1)
    const rows = []
    for (let k = 0; k < ticks; k++) {
      await engine.step(50)
      await engine.readU([0]) // the steps done before the clock starts
      observed = false
      const before = engine.transfers()
      const t0 = performance.now()
      await publisher.tick()
      const ms = Math.round((performance.now() - t0) * 100) / 100
      const after = engine.transfers()
      const m = sent.filter(([s]) => s === 'SVC.consciousness').at(-1)?.[1]
      rows.push({
        ms,
        observed,
        reads: after.reads - before.reads,
        bytes_read: after.bytes_read - before.bytes_read,
        phi: m?.phi,
        order: m?.order,
      })
    }
    return { build, size, adapter: engine.backend_reason, ticks: rows }
  } finally {
    engine.destroy()
  }
}

const out = []
for (let r = 1; r <= rounds; r++)
  for (const [build, dir] of [
    ['head', head],
    ['base', base],
  ]) {
    const row = { round: r, ...(await periods(build, dir)) }
    console.log(JSON.stringify(row))
    out.push(row)
  }
if (outFile) writeFileSync(outFile, JSON.stringify(out, null, 2))
process.exit(0)
