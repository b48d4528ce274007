// A .crystal program off the server's event loop (POST /crystal/run): its own engine, the registry on
// disk (the registry's lock keeps it safe beside the server), the trace or the error posted back.
import { parentPort, workerData } from 'node:worker_threads'
import { isCrystalError, type CrystalError } from '../../engine/errors.js'
import { MaterialCatalog, type CatalogEntry } from '../../engine/field/materials.js'
import { interpret, type TraceEntry } from '../../engine/lang/interpret.js'
import type { Command } from '../../engine/lang/parse.js'
import { FileRegistryStore } from '../../engine/registry/file_store.node.js'
import { Registry, type RegistryLimits } from '../../engine/registry/registry.js'
import { workerEngines, type WorkerEngineSettings } from './worker_engines.js'

/** What the service hands the worker: the checked program and the server's catalog, registry and backend. */
export interface RunWork extends WorkerEngineSettings {
  commands: Command[]
  size: number
  /** The server's materials, user files included (the worker has no catalog of its own). */
  materials: CatalogEntry[]
  dataDir: string
  limits: RegistryLimits
}

type Ended =
  | { type: 'done'; trace: TraceEntry[] }
  | { type: 'failed'; error: Pick<CrystalError, 'code' | 'message' | 'where' | 'hint'> }
  | { type: 'crashed'; message: string }

/** How the program ended, and its engines' GPU transfers (a line a shape; none unless asked for). */
export type RunOutcome = Ended & { transfers: string[] }

const work = workerData as RunWork
const { commands, size, materials, dataDir, limits } = work
const engines = workerEngines(work)
let outcome: Ended
try {
  const trace = await interpret(commands, {
    open: engines.open,
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
parentPort!.postMessage({ ...outcome, transfers: engines.transfers() })
