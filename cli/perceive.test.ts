// `crystal perceive` as a user runs it (the built command in a child process): what it says, and its
// exit status, when the file or URL it is given is not MP3 audio or cannot be reached.
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { demoMp3, demoTracks } from '../server/station/demo.js'

const BIN = new URL('../bin/crystal.js', import.meta.url).pathname
const dir = mkdtempSync(join(tmpdir(), 'crystal-cli-perceive-'))

/** Runs the CLI without blocking this process's event loop (the test's own HTTP server answers it). */
function crystal(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, '--data-dir', dir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (b) => (stdout += b))
    child.stderr.on('data', (b) => (stderr += b))
    child.on('error', reject)
    child.on('close', (status) => resolve({ status, stdout, stderr }))
  })
}

// some 200 kB that is not MPEG audio: enough for mpg123 to give up looking for a frame, and say so
const notAudio = JSON.stringify({
  openapi: '3.1.0',
  paths: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`/p${i}`, { get: {} }])),
})

let server: Server
let base = ''
beforeAll(async () => {
  const mp3 = await demoMp3(demoTracks(4, 1)[0])
  server = createServer((req, res) => {
    if (req.url === '/openapi.json') res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(notAudio)
    else if (req.url === '/stream') res.writeHead(200, { 'content-type': 'audio/mpeg' }).end(mp3)
    else res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

/** A port nothing listens on: one the system gave out and took back. */
async function closedPort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  const { port } = s.address() as AddressInfo
  await new Promise<void>((resolve) => s.close(() => resolve()))
  return port
}

describe('crystal perceive', () => {
  test('a stream URL that answers MP3 is perceived', async () => {
    const r = await crystal('perceive', `${base}/stream`, '--seconds', '2', '--json')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ source: `${base}/stream`, length: 296 })
  })

  test('a URL nothing listens on names the URL and the cause, exit 1', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/stream`
    const r = await crystal('perceive', url, '--seconds', '2')
    expect(r.status).toBe(1)
    expect(r.stderr).toContain(`crystal: ${url}: cannot connect (ECONNREFUSED)`)
    expect(r.stderr).not.toContain('unexpected failure')
  })

  test('a directory is not an MP3 file; a missing file is named, exit 1', async () => {
    const r = await crystal('perceive', dir)
    expect(r.status).toBe(1)
    expect(r.stderr).toBe(`crystal: ${dir} is a directory, not an MP3 file\n`)
    const missing = join(dir, 'missing.mp3')
    const m = await crystal('perceive', missing)
    expect(m.status).toBe(1)
    expect(m.stderr).toBe(`crystal: ${missing}: no such file\n`)
  })

  test('a bad --seconds is a usage error naming the flag and the value as typed, exit 2', async () => {
    const r = await crystal('perceive', 'x.mp3', '--seconds', 'abc')
    expect(r.status).toBe(2)
    expect(r.stderr).toContain("option '--seconds <s>' argument 'abc' is invalid. --seconds must be a number from 1 to 3600.")
    expect((await crystal('perceive', 'x.mp3', '--seconds', '0')).status).toBe(2)
  })

  test("a URL that serves JSON is said to be no audio, without the decoder's noise, exit 1", async () => {
    const r = await crystal('perceive', `${base}/openapi.json`)
    expect(r.status).toBe(1)
    expect(r.stderr).toBe(`crystal: ${base}/openapi.json serves application/json, not MP3 audio\n`)
  })

  test("a file that is not MP3 audio is one sentence, without the decoder's noise, exit 1", async () => {
    const file = join(dir, 'openapi.mp3')
    writeFileSync(file, notAudio)
    const r = await crystal('perceive', file)
    expect(r.status).toBe(1)
    expect(r.stderr).toBe(`crystal: ${file}: no MPEG audio could be decoded\n`)
  })
})
