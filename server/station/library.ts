// The music library: DIR/<artist>/<album>/*.mp3 read with music-metadata (tags, exact duration).
// A file that cannot be read is reported with its reason and skipped; the rest still plays.
import { parseFile } from 'music-metadata'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { basename, extname, join, relative } from 'node:path'
import type { Track } from '../../engine/contracts/station.js'
import { CrystalError } from '../../engine/errors.js'

export interface Library {
  dir: string
  tracks: Track[]
  skipped: { file: string; reason: string }[]
  /** ISO 8601 time of the scan */
  scanned_at: string
}

const dirs = (d: string) =>
  readdirSync(d, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()

/** Scans the library. No directory, or no playable track in it, is a `no_music` error that says
 * what was looked for. */
export async function scanLibrary(dir: string): Promise<Library> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new CrystalError(
      'no_music',
      `music directory ${dir} ${existsSync(dir) ? 'is a file, not a directory' : 'does not exist'} (expected ${dir}/<artist>/<album>/*.mp3; npm run demo-library -- DIR writes a demo one)`,
      { file: dir },
    )
  }
  const tracks: Track[] = []
  const skipped: Library['skipped'] = []
  for (const artist of dirs(dir)) {
    for (const album of dirs(join(dir, artist))) {
      const files = readdirSync(join(dir, artist, album))
        .filter((f) => extname(f).toLowerCase() === '.mp3')
        .sort()
      for (const f of files) {
        const path = join(dir, artist, album, f)
        try {
          tracks.push(await readTrack(dir, path, artist, album))
        } catch (e) {
          skipped.push({ file: relative(dir, path), reason: (e as Error).message })
        }
      }
    }
  }
  if (tracks.length === 0) {
    const why = skipped.length ? `; ${skipped.length} unreadable (${skipped[0].file}: ${skipped[0].reason})` : ''
    throw new CrystalError('no_music', `no playable MP3 in ${dir} (expected ${dir}/<artist>/<album>/*.mp3${why})`, { file: dir })
  }
  return { dir, tracks, skipped, scanned_at: new Date().toISOString() }
}

async function readTrack(dir: string, path: string, artist: string, album: string): Promise<Track> {
  const { common, format } = await parseFile(path, { duration: true })
  if (format.container !== 'MPEG' || !format.duration || !format.numberOfChannels)
    throw new Error(`not an MPEG audio file (${format.container ?? 'no audio found'})`)
  const key = common.key ?? null
  return {
    id: relative(dir, path),
    artist: common.artist ?? artist,
    album: common.album ?? album,
    title: common.title ?? basename(path, extname(path)),
    duration_s: format.duration,
    bpm: common.bpm ?? null,
    key,
  }
}
