// A .crystal program off the server's event loop (POST /crystal/run): its own engine, the registry on
// disk (the registry's lock keeps it safe beside the server), the trace or the error posted back.
import { parentPort, workerData } from 'node:worker_threads'
import type { EngineSettings } from '../../engine/config.js'
import { isCrystalError, type CrystalError } from '../../engine/errors.js'
import type { Engine } from '../../engine/field/engine.js'
import { MaterialCatalog, type CatalogEntry } from '../../engine/field/materials.js'
import { interpret, type TraceEntry } from '../../engine/lang/interpret.js'
import type { Command } from '../../engine/lang/parse.js'
import { createNodeEngine } from '../../engine/node.js'
import { FileRegistryStore } from '../../engine/registry/file_store.node.js'
import { Registry, type RegistryLimits } from '../../engine/registry/registry.js'

/** What the service hands the worker: the checked program and the server's catalog, registry and backend. */
export interface RunWork {
  commands: Command[]
  size: number
  /** The server's materials, user files included (the worker has no catalog of its own). */
  materials: CatalogEntry[]
  dataDir: string
  backend: Engine['backend']
  limits: RegistryLimits
  engineSettings: EngineSettings
}

export type RunOutcome =
  | { type: 'done'; trace: TraceEntry[] }
  | { type: 'failed'; error: Pick<CrystalError, 'code' | 'message' | 'where' | 'hint'> }
  | { type: 'crashed'; message: string }

const { commands, size, materials, dataDir, backend, limits, engineSettings } = workerData as RunWork
let outcome: RunOutcome
try {
  const trace = await interpret(commands, {
    open: (o) => createNodeEngine({ ...engineSettings, ...o, backend, threads: 1 }),
    catalog: new MaterialCatalog(materials),
    registry: new Registry(new FileRegistryStore(dataDir), limits),
    size,
    file: 'program',
  })
  outcome = { type: 'done', trace }
} catch (e) {
  outcome = isCrystalError(e)
    ? { type: 'failed', error: { code: e.code, message: e.message, where: e.where, hint: e.hint } }
    : { type: 'crashed', message: (e as Error).message }
}
parentPort!.postMessage(outcome)
