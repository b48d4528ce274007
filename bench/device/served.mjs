// A served field's changes timed with two builds, alternately (pack-pair.sh packs them; call.sh's part
// "served"): on the device machine, from the unpacked project,
//   node bench/device/served.mjs HEAD_DIR BASE_DIR [OUT_JSON]
// starts `crystal --debug --backend gpu serve --size SIZE` (2048) with each build's bin/ in turn, ROUNDS
// (2) times, on a fresh data dir, and times what a user of the server waits for: a write, then
// POST /crystal/step of STEPS (1,000: 100 timeline samples in 10 chunks) three times, and
// POST /crystal/dream deep, light, deep, with the Observatory's feed open at FEED (128; 0: none) all
// along. A line of JSON each server: its build, the milliseconds of each request, the states the feed
// sent, and the reads and submits its field made in its life (the --debug line at its close).
// Every figure beside the other build's from the same machine, minutes apart.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const [head, base, outFile] = process.argv.slice(2)
if (!head || !base) {
  console.error('usage: node served.mjs HEAD_DIR BASE_DIR [OUT_JSON]  (env: SIZE, STEPS, ROUNDS, BACKEND, FEED)')
  process.exit(2)
}
// the built server started as the benchmarks and tests start it (this build's harness, either build's bin/)
const { startServer } = await import(join(head, 'dist/bench/harness.js'))
const size = Number(process.env.SIZE ?? 2048)
const steps = Number(process.env.STEPS ?? 1000)
const rounds = Number(process.env.ROUNDS ?? 2)
const backend = process.env.BACKEND ?? 'gpu'
const feedSide = Number(process.env.FEED ?? 128)

async function timed(url, path, body) {
  const t0 = performance.now()
  const r = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const text = await r.text()
  if (!r.ok) throw new Error(`${path}: ${r.status} ${text.slice(0, 300)}`)
  return Math.round((performance.now() - t0) * 10) / 10
}

async function served(build, dir) {
  const data = mkdtempSync(join(tmpdir(), 'crystal-served-'))
  const entry = [join(dir, 'bin/crystal.js'), '--debug', '--backend', backend, 'serve']
  const server = await startServer(['--size', String(size)], { HOME: data }, data, entry)
  const feed = new AbortController()
  let states = 0
  try {
    if (feedSide > 0) {
      const reply = await fetch(`${server.url}/crystal/feed?size=${feedSide}`, { signal: feed.signal })
      const decoder = new TextDecoder()
      // counted as they come, until the server stops
      void (async () => {
        for await (const chunk of reply.body) states += decoder.decode(chunk).split('event: state').length - 1
      })().catch(() => {})
    }
    const write_ms = await timed(server.url, '/crystal/write', { text: 'the river keeps its stones' })
    const step_ms = []
    for (let k = 0; k < 3; k++) step_ms.push(await timed(server.url, '/crystal/step', { steps }))
    const dream_ms = []
    for (const mode of ['deep', 'light', 'deep']) dream_ms.push(await timed(server.url, '/crystal/dream', { mode }))
    feed.abort()
    await server.stop()
    const m = server.stderr().match(/the server's field: .*?read back ([\d,]+) bytes in ([\d,]+) reads.* in ([\d,]+) submits/)
    const count = (i) => (m ? Number(m[i].replaceAll(',', '')) : null)
    return {
      build,
      size,
      steps,
      feed: feedSide,
      states,
      write_ms,
      step_ms,
      dream_ms,
      reads: count(2),
      submits: count(3),
      bytes_read: count(1),
    }
  } finally {
    feed.abort()
    await server.stop('SIGKILL')
    rmSync(data, { recursive: true, force: true })
  }
}

const rows = []
for (let r = 1; r <= rounds; r++)
  for (const [build, dir] of [
    ['head', head],
    ['base', base],
  ]) {
    const row = { round: r, ...(await served(build, dir)) }
    console.log(JSON.stringify(row))
    rows.push(row)
  }
if (outFile) writeFileSync(outFile, JSON.stringify(rows, null, 2))
