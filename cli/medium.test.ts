// `crystal write` and `crystal ask` on a medium that persists between commands and ages as it is
// written: ranked answers, forgetting, loud failure beyond capacity; every failure exits non-zero.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'

const BIN = new URL('../bin/crystal.js', import.meta.url).pathname
const crystal = (dataDir: string, ...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, SVC_CRYSTAL_DATA_DIR: dataDir, CRYSTAL_BACKEND: 'cpu' },
    timeout: 300_000,
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
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
