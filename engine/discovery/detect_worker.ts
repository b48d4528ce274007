// A detection worker of engine/discovery/pool.node.ts: runs each task it is sent (detector.ts runTask,
// or a round of practice.ts) and answers with the results in order, or the error that stopped it.
import { parentPort } from 'node:worker_threads'
import { runTask, type WorkerTask } from './detector.js'
import { practise } from './practice.js'

const port = parentPort!
port.on('message', async (task: WorkerTask) => {
  try {
    port.postMessage({ results: task.op === 'practise' ? await practise(task) : await runTask(task) })
  } catch (e) {
    port.postMessage({ error: (e as Error).stack ?? String(e) })
  }
})
// its modules are loaded: the pool hands it tasks from now on
port.postMessage({ ready: true })
