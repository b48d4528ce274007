// scripts/release.sh before it builds anything: the notes come from CHANGELOG.md, and a release whose
// version, changelog or working tree is not ready is refused with the reason, before any tag is made.
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..')
const exec = promisify(execFile)
const temps: string[] = []

/** release.sh run in `cwd`; its status and stderr, whether it failed or not. */
async function release(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec('bash', [join(cwd, 'scripts/release.sh'), ...args], { cwd })
    return { code: 0, stdout, stderr }
  } catch (e) {
    const { code, stdout, stderr } = e as { code: number; stdout: string; stderr: string }
    return { code, stdout, stderr }
  }
}

/** A git repository holding the script, a package.json at `version` and a changelog with these sections. */
async function repo(version: string, sections: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-release-'))
  temps.push(dir)
  mkdirSync(join(dir, 'scripts'))
  cpSync(join(ROOT, 'scripts/release.sh'), join(dir, 'scripts/release.sh'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'resonant-crystal', version }))
  writeFileSync(join(dir, 'CHANGELOG.md'), `# Changelog\n\n${sections.map((v) => `## [${v}]\n\n- what ${v} brings\n`).join('\n')}`)
  const git = (...a: string[]) => exec('git', a, { cwd: dir })
  await git('init', '-q')
  await git('add', '-A')
  await git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'start')
  return dir
}

afterEach(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('scripts/release.sh', () => {
  it("prints the notes of 0.1.0: CHANGELOG.md's section of that version, without the next one", async () => {
    const r = await release(ROOT, '--notes', 'v0.1.0')
    expect(r.code).toBe(0)
    const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8')
    const section = changelog.slice(changelog.indexOf('## [0.1.0]'))
    expect(r.stdout).toContain('### Added')
    expect(section).toContain(r.stdout.trim())
    expect(r.stdout).not.toContain('## [')
  })

  it('refuses a version not written vX.Y.Z', async () => {
    const r = await release(ROOT, '0.1.0')
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("give the version as vX.Y.Z (got '0.1.0')")
  })

  it('refuses a version that has no section in CHANGELOG.md', async () => {
    const r = await release(ROOT, '--notes', 'v9.9.9')
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("CHANGELOG.md has no section '## [9.9.9]'")
  })

  it('refuses a version package.json does not have, and makes no tag', async () => {
    const dir = await repo('0.1.0', ['0.2.0', '0.1.0'])
    const r = await release(dir, 'v0.2.0')
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('package.json has version 0.1.0, not 0.2.0')
    expect((await exec('git', ['tag'], { cwd: dir })).stdout).toBe('')
  })

  it('refuses to tag a working tree with uncommitted changes', async () => {
    const dir = await repo('0.2.0', ['0.2.0'])
    writeFileSync(join(dir, 'stray.txt'), 'not committed')
    const r = await release(dir, 'v0.2.0')
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('uncommitted changes')
    expect((await exec('git', ['tag'], { cwd: dir })).stdout).toBe('')
  })
})
