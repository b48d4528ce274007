// Shared by the `crystal` entries (bin/crystal.js and the single executable): a reader that goes
// away (`crystal primitives | head`) is not an error, so the command stops quietly.
export function quietWhenReaderLeaves(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(0)
      throw e
    })
  }
}
