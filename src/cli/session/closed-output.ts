/**
 * A closed output: the reader of kloop's stdout or stderr went away (`kloop
 * history … | head`, `kloop run … 2>&1 | head -3`), so the next write fails
 * with EPIPE. That is not an error of kloop's:
 *
 * - a command that must wind down (`kloop run`: close the round, record
 *   `interrupted`, release the lease) registers with {@link onOutputClosed}
 *   and is told once, as for Ctrl-C;
 * - otherwise the process ends at once with the exit code so far (a reader
 *   like `history` has nothing to undo).
 *
 * Writes after that go nowhere; their errors are ignored.
 */

let closed = false;
let listener: (() => void) | undefined;

/** Calls `handler` (once) when stdout or stderr is closed; returns the function that unregisters it. */
export function onOutputClosed(handler: () => void): () => void {
  listener = handler;
  return () => {
    if (listener === handler) listener = undefined;
  };
}

/** True once stdout or stderr was found closed. */
export function isOutputClosed(): boolean {
  return closed;
}

/** Installs the EPIPE handling on process.stdout and process.stderr (the CLI's entry does this once). */
export function watchOutputStreams(streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
      if (closed) return;
      closed = true;
      if (listener !== undefined) listener();
      else process.exit(process.exitCode ?? 0);
    });
  }
}
