// One run of the discovery bench's comparison in a worker thread (bench/discovery.ts), so that the
// runs share the machine's cores.
import { parentPort, workerData } from 'node:worker_threads'
import { runSearch, type SearchRun } from './discovery.js'

parentPort!.postMessage(await runSearch(workerData as SearchRun))
