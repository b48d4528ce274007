// Writing a file so that a crash leaves either the old file or the new one, never a torn one: write
// a temp file beside it, fsync it, rename it over, and fsync the folder so the rename itself lasts.
import { mkdir, open, rename, rm } from 'node:fs/promises'
import { dirname } from 'node:path'

export async function writeDurably(path: string, chunks: readonly Uint8Array[]): Promise<void> {
  // a data dir named for the first time (a new explorer's, an archive's) is made here, with its parents
  await mkdir(dirname(path), { recursive: true })
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`
  const handle = await open(temp, 'w')
  try {
    await handle.writev(chunks as Uint8Array[])
    await handle.sync()
  } catch (e) {
    await handle.close()
    await rm(temp, { force: true })
    throw e
  }
  await handle.close()
  await rename(temp, path)
  const dir = await open(dirname(path), 'r')
  try {
    await dir.sync()
  } finally {
    await dir.close()
  }
}
