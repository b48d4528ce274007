// `crystal publish <id>`: posts a primitive to the gallery as a text artifact. The gallery's address
// comes from SVC_GALLERY_URL; the token from GALLERY_JWT or the credentials file in the user's home
// (CREDENTIALS_PATH), never from the working directory or a repository.
import type { Command } from 'commander'
import { readFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { CrystalError } from '../../engine/errors.js'
import type { CliContext } from '../context.js'
import { describePrimitive } from './primitives.js'

export function credentialsPath(): string {
  return join(homedir(), '.config', 'resonant-crystal', 'credentials.json')
}

async function galleryToken(jwt: string | undefined): Promise<string> {
  if (jwt) return jwt
  const path = credentialsPath()
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch {
    throw new CrystalError('missing_credential', `no gallery credential: set GALLERY_JWT, or put {"gallery_jwt": "<token>"} in ${path}`, {
      file: path,
    })
  }
  let token: unknown
  try {
    token = (JSON.parse(text) as { gallery_jwt?: unknown }).gallery_jwt
  } catch (e) {
    throw new CrystalError('missing_credential', `${path} is not valid JSON (${(e as Error).message})`, { file: path })
  }
  if (typeof token !== 'string' || !token)
    throw new CrystalError('missing_credential', `${path} has no "gallery_jwt" string`, { file: path, field: 'gallery_jwt' })
  return token
}

export function registerPublish(cli: Command, ctx: () => CliContext): void {
  cli
    .command('publish')
    .description('post a primitive to the gallery as a text artifact')
    .argument('<id>', 'the primitive (CRY-000001, or its uuid)')
    .addHelpText(
      'after',
      `\nThe gallery's address comes from SVC_GALLERY_URL (the artifact is POSTed to <url>/artifacts);\nthe token from GALLERY_JWT, or from ${credentialsPath()} as {"gallery_jwt": "<token>"}.\nIt is never read from the working directory.`,
    )
    .action(async (id: string) => {
      const c = ctx()
      const p = await c.registry().get(id)
      const url = c.settings.gallery.url
      if (!url)
        throw new CrystalError(
          'missing_credential',
          "SVC_GALLERY_URL is not set: set it to the gallery's address (e.g. https://gallery.example)",
          { field: 'SVC_GALLERY_URL' },
        )
      const token = await galleryToken(c.settings.gallery.jwt)
      const endpoint = `${url.replace(/\/+$/, '')}/artifacts`
      const body = {
        type: 'text',
        title: `${p.id} ${p.class} (${p.material})`,
        content: `${describePrimitive(p)}\n\n${JSON.stringify(p, null, 2)}\n`,
        metadata: { id: p.id, uuid: p.uuid, hash: p.hash, class: p.class },
      }
      let response: Response
      try {
        response = await fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        })
      } catch (e) {
        throw new CrystalError(
          'publish_failed',
          `could not reach the gallery at ${endpoint} (${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message})`,
        )
      }
      const reply = await response.text()
      if (!response.ok)
        throw new CrystalError('publish_failed', `the gallery refused ${p.id}: HTTP ${response.status} ${reply.slice(0, 200)}`.trim())
      let where = ''
      try {
        const json = JSON.parse(reply) as { url?: string; id?: string }
        where = json.url ?? json.id ?? ''
      } catch {
        // a plain-text reply is fine
      }
      process.stdout.write(`published ${p.id} to ${endpoint} (HTTP ${response.status})${where ? `: ${where}` : ''}\n`)
    })
}
