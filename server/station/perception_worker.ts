// Perception of a library off the server's event loop: each track's 296 numbers (or why not) posted
// back to the station as soon as they are ready.
import { parentPort, workerData } from 'node:worker_threads'
import { perceiveFile } from './perception.js'

const { dir, ids } = workerData as { dir: string; ids: string[] }
for (const id of ids) {
  try {
    parentPort!.postMessage({ id, vector: await perceiveFile(dir, id) })
  } catch (e) {
    parentPort!.postMessage({ id, error: (e as Error).message })
  }
}
