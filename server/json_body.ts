// The server's JSON body parser: Fastify's own (secure-json-parse: empty bodies, bad JSON and
// prototype poisoning refused as before), and then a body whose object repeats a key is refused too.
// JSON.parse keeps the last value of a repeated key silently, so `{"shares":1,"shares":1000}` would
// be checked by one reader and acted on by another as different requests.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { CrystalError } from '../engine/errors.js'

/**
 * The first key that an object of `text` (valid JSON) repeats, with its path, or null. Keys are
 * compared after unescaping, so "a" and "\u0061" are the same key.
 */
export function duplicateKey(text: string): string | null {
  const frames: { keys: Set<string> | null; path: string; expectKey: boolean; last: string }[] = []
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]
    if (ch === '"') {
      let j = i + 1
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      const top = frames[frames.length - 1]
      if (top?.keys && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string
        if (top.keys.has(key)) return `${top.path}/${key}`
        top.keys.add(key)
        top.last = key
        top.expectKey = false
      }
      i = j
    } else if (ch === '{' || ch === '[') {
      const parent = frames[frames.length - 1]
      const path = parent ? `${parent.path}/${parent.keys ? parent.last : '*'}` : ''
      frames.push({ keys: ch === '{' ? new Set() : null, path, expectKey: ch === '{', last: '' })
    } else if (ch === '}' || ch === ']') frames.pop()
    else if (ch === ',') {
      const top = frames[frames.length - 1]
      if (top?.keys) top.expectKey = true
    }
  }
  return null
}

/** Replaces the application/json parser of `app` with one that also refuses repeated keys (400). */
export function refuseDuplicateKeys(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    (req: FastifyRequest, body: string, done: (err: Error | null, value?: unknown) => void) => {
      // Fastify's default parser answers through the callback; its declared Promise return is never used
      void parse(req, body, (err: Error | null, value?: unknown) => {
        if (err) return done(err)
        const dup = duplicateKey(body)
        if (dup !== null)
          return done(
            new CrystalError('bad_argument', `the body repeats the key ${dup}: each key may appear once in an object`, { field: dup }),
          )
        done(null, value)
      })
    },
  )
}
