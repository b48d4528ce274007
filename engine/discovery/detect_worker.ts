// A detection worker of engine/discovery/pool.node.ts: runs each task it is sent (detector.ts runTask)
// and answers with the results in order, or the error that stopped it.
import { parentPort } from 'node:worker_threads'
import { runTask, type WorkerTask } from './detector.js'

const port = parentPort!
port.on('message', async (task: WorkerTask) => {
  try {
    port.postMessage({ results: await runTask(task) })
  } catch (e) {
    port.postMessage({ error: (e as Error).stack ?? String(e) })
  }
})
// its modules are loaded: the pool hands it tasks from now on
port.postMessage({ ready: true })
