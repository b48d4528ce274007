// `node server/index.js [--host] [--port] ...`: the service without the CLI (same as `crystal serve`).
import { parseArgs } from 'node:util'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { isCrystalError } from '../engine/errors.js'
import type { BackendChoice } from '../engine/field/select.js'
import { serve } from './app.js'
import { stationConfig } from './station/station.js'

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '3339' },
    'data-dir': { type: 'string', default: process.env.SVC_CRYSTAL_DATA_DIR || join(homedir(), '.svc-crystal') },
    backend: { type: 'string', default: process.env.CRYSTAL_BACKEND || 'auto' },
    size: { type: 'string', default: '128' },
    material: { type: 'string', default: 'ideal_resonator' },
    seed: { type: 'string', default: '1' },
    cors: { type: 'string', multiple: true },
    music: { type: 'string' },
  },
})
const say = (line: string) => process.stderr.write(line + '\n')
try {
  await serve(
    {
      host: values.host!,
      port: Number(values.port),
      dataDir: values['data-dir']!,
      backend: values.backend as BackendChoice,
      size: Number(values.size),
      material: values.material!,
      seed: Number(values.seed),
      token: process.env.SVC_CRYSTAL_API_TOKEN || undefined,
      cors: values.cors,
      report: say,
      station: stationConfig(values.music, process.env, process.cwd()),
    },
    say,
  )
} catch (e) {
  say(`crystal service: ${isCrystalError(e) ? e.message : (e as Error).message}`)
  process.exitCode = 1
}
