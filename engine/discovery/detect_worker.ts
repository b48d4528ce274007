// A detection worker of engine/discovery/pool.node.ts: runs each job it is sent (detector.ts runJob)
// and answers with the results in order, or the error that stopped it.
import { parentPort } from 'node:worker_threads'
import { type DetectJob, type DetectOp, runJob } from './detector.js'

const port = parentPort!
port.on('message', async ({ op, jobs }: { op: DetectOp; jobs: DetectJob[] }) => {
  try {
    const results = []
    for (const job of jobs) results.push(await runJob(op, job))
    port.postMessage({ results })
  } catch (e) {
    port.postMessage({ error: (e as Error).stack ?? String(e) })
  }
})
