// `crystal write` and `crystal ask` on a medium that persists between commands and ages as it is
// written: ranked answers, forgetting, loud failure beyond capacity; every failure exits non-zero.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { ENCODING_VERSION } from '../engine/encode/text.js'
import { blake3Hex } from '../engine/util/hash.js'

const BIN = new URL('../bin/crystal.js', import.meta.url).pathname
const crystal = (dataDir: string, ...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, SVC_CRYSTAL_DATA_DIR: dataDir, CRYSTAL_BACKEND: 'cpu' },
    timeout: 300_000,
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** A medium file's JSON header. */
const header = (bytes: Buffer) => JSON.parse(bytes.subarray(4, 4 + bytes.readUInt32LE(0)).toString('utf8'))

/** A data dir holding `bytes` as its medium. */
function withMedium(bytes: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-medium-'))
  writeFileSync(join(dir, 'medium.bin'), bytes)
  return dir
}

/** `count` distinct four-word texts. */
function texts(count: number, seed: number): string[] {
  const syllables = ['ka', 'lo', 'mi', 'ren', 'tu', 'sha', 'vel', 'or', 'quin', 'da', 'pe', 'zor', 'ly', 'an', 'thi', 'bo']
  let s = seed
  const rand = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32
  const word = () => syllables[Math.floor(rand() * 16)] + syllables[Math.floor(rand() * 16)]
  return Array.from({ length: count }, (_, i) => `${word()} ${word()} ${word()} ${i}`)
}

describe('crystal write and ask', () => {
  test('the medium persists between commands, ages 10 steps a write, and answers in rank order', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-medium-'))
    expect(crystal(dir, 'write', 'the cold glyph remembers').stdout.trim()).toBe(
      'wrote "the cold glyph remembers" (10 steps apart, now step 10); the medium holds 1 memory',
    )
    // a new medium takes the encoding new fields use, and says so in its header
    expect(header(readFileSync(join(dir, 'medium.bin')))).toMatchObject({ format: 'svc-crystal-medium/3', encoding: ENCODING_VERSION })
    expect(crystal(dir, 'write', 'amber river at dusk', '--importance', '0.5').stdout).toContain('now step 20')
    const r = crystal(dir, 'ask', 'glyph', '-k', '2')
    expect(r.status).toBe(0)
    expect(r.stdout.split('\n')).toEqual([
      expect.stringMatching(
        /^1\. "the cold glyph remembers" {2}match 0\.\d{3}, strength [\d.]+ \(noise floor [\d.]+, written at step 10\)$/,
      ),
      '',
    ])
    const answer = JSON.parse(crystal(dir, 'ask', 'amber river at dusk', '--json').stdout)
    expect(answer).toMatchObject({ memories: 2, over_capacity: false, reason: null })
    expect(answer.hits[0]).toMatchObject({ rank: 1, text: 'amber river at dusk', importance: 0.5, step: 20 })
    expect(answer.hits[0].strength).toBeGreaterThan(0.9) // ideal_resonator keeps nearly all of it
  })

  test('time matters: in vacuum, a memory written 3,000 steps of later writes ago is gone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-medium-'))
    crystal(dir, 'write', 'the river remembers the mountain', '--material', 'vacuum', '--size', '32')
    expect(JSON.parse(crystal(dir, 'ask', 'mountain', '--json').stdout).hits[0].text).toBe('the river remembers the mountain')
    const file = join(dir, 'later.txt')
    writeFileSync(file, texts(300, 5).join('\n'))
    expect(crystal(dir, 'write', '--file', file).stdout).toContain('now step 3010')
    const later = crystal(dir, 'ask', 'the river remembers the mountain')
    expect(later.status).toBe(0)
    expect(later.stdout).not.toContain('mountain"')
  })

  test('60 texts at N = 64: the text asked for comes first', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-medium-'))
    const all = texts(60, 60)
    const file = join(dir, 'lines.txt')
    writeFileSync(file, all.join('\n'))
    const w = crystal(dir, 'write', '--file', file, '--size', '64')
    expect(w.status).toBe(0)
    expect(w.stdout.trim()).toBe('wrote 60 texts (10 steps apart, now step 600); the medium holds 60 memories')
    for (const q of [0, 31, 59]) {
      const hits = JSON.parse(crystal(dir, 'ask', all[q], '-k', '3', '--json').stdout).hits
      expect(hits[0].text).toBe(all[q])
    }
  })

  test('beyond capacity (2,000 texts at N = 32) ask says so loudly and fails, never a confident answer', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-medium-'))
    const file = join(dir, 'lines.txt')
    writeFileSync(file, texts(2000, 2000).join('\n'))
    expect(crystal(dir, 'write', '--file', file, '--size', '32').status).toBe(0)
    const r = crystal(dir, 'ask', 'anything at all')
    expect(r.status).toBe(1)
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(
      /^crystal: over capacity: the field holds 2000 memories but can tell apart about \d+ at N = 32; any ranking is a guess \(use a larger field\)$/,
    )
  }, 120_000)

  test('failures exit non-zero with a message: no medium, a broken medium, nothing to write, a bad k', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-medium-'))
    const none = crystal(dir, 'ask', 'anything')
    expect(none.status).toBe(1)
    expect(none.stderr.trim()).toBe(`crystal: there is no medium in ${dir} yet; write something first (crystal write "text")`)
    expect(none.stdout).toBe('')
    const nothing = crystal(dir, 'write')
    expect(nothing.status).toBe(2)
    expect(nothing.stderr).toContain('nothing to write')
    crystal(dir, 'write', 'something')
    expect(crystal(dir, 'ask', 'x', '-k', '0').status).toBe(2)
    const path = join(dir, 'medium.bin')
    const bytes = readFileSync(path)
    bytes[bytes.length - 10] ^= 0xff // one flipped byte in the field
    writeFileSync(path, bytes)
    const broken = crystal(dir, 'ask', 'something')
    expect(broken.status).toBe(1)
    expect(broken.stderr.trim()).toBe(
      `crystal: ${path}: its content hash does not match its contents; the file was left as it is (move it away to start a new medium)`,
    )
    expect(readFileSync(path)).toEqual(bytes)
    writeFileSync(path, 'not a medium')
    expect(crystal(dir, 'ask', 'something').stderr).toContain('its header runs past the end of the file')
  })
})

describe('a medium written before the encoding was recorded (format 2: its memories are of encoding 2)', () => {
  // made by `crystal write` of the version before format 3: these three texts, 10 steps apart, at N = 32 in ideal_resonator
  const FORMAT_2 = readFileSync(new URL('../testing/media/medium-format2-n32.bin', import.meta.url))
  const OLD = ['the cold glyph remembers', 'amber river at dusk', 'seven quiet lanterns drift']
  const NEW = 'a fourth text, written later'
  const top = (dir: string, text: string) => JSON.parse(crystal(dir, 'ask', text, '-k', '1', '--json').stdout)

  test('ask finds its memories (the same medium erased finds none); a write adds one in encoding 2, saved back as format 3 with encoding 2', async () => {
    expect(header(FORMAT_2)).toMatchObject({ format: 'svc-crystal-medium/2', size: 32, step_count: 30 })
    expect(header(FORMAT_2).encoding).toBeUndefined()
    const dir = withMedium(FORMAT_2)
    for (const text of OLD) expect(top(dir, text).hits[0]?.text).toBe(text)
    expect(readFileSync(join(dir, 'medium.bin'))).toEqual(FORMAT_2) // asking leaves the file as it is

    // the control: the same file with its field erased (its memories still listed) answers nothing
    const payload = FORMAT_2.subarray(4 + FORMAT_2.readUInt32LE(0))
    const zeros = Buffer.alloc(payload.length)
    const erased = Buffer.from(FORMAT_2.toString('latin1').replace(header(FORMAT_2).payload_blake3, await blake3Hex(zeros)), 'latin1')
    zeros.copy(erased, erased.length - zeros.length)
    for (const text of [OLD[0], OLD[2]]) expect(top(withMedium(erased), text)).toMatchObject({ memories: 3, hits: [] })

    expect(crystal(dir, 'write', NEW).stdout).toContain('(10 steps apart, now step 40); the medium holds 4 memories')
    const saved = readFileSync(join(dir, 'medium.bin'))
    expect(header(saved)).toMatchObject({ format: 'svc-crystal-medium/3', encoding: 2, size: 32, step_count: 40 })
    for (const text of [...OLD, NEW]) expect(top(dir, text).hits[0]?.text).toBe(text)
  })

  test('--encoding 2 makes a new medium of encoding 2; an existing medium keeps its own; an unknown one is refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-medium-'))
    crystal(dir, 'write', OLD[0], '--encoding', '2', '--size', '32')
    expect(header(readFileSync(join(dir, 'medium.bin')))).toMatchObject({ format: 'svc-crystal-medium/3', encoding: 2 })
    crystal(dir, 'write', OLD[1], '--encoding', '3')
    expect(header(readFileSync(join(dir, 'medium.bin')))).toMatchObject({ encoding: 2, step_count: 20 })
    for (const text of OLD.slice(0, 2)) expect(top(dir, text).hits[0]?.text).toBe(text)
    const bad = crystal(mkdtempSync(join(tmpdir(), 'crystal-medium-')), 'write', 'x', '--encoding', '1')
    expect(bad.status).not.toBe(0)
    expect(bad.stderr).toContain("option '--encoding <version>' argument '1' is invalid. Allowed choices are 2, 3.")
  })
})
