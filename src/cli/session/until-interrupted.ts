/**
 * Resolves at the first SIGINT (Ctrl-C) or SIGTERM, then removes its
 * listeners: how the long-running commands (`kloop serve`, `kloop view`,
 * `kloop schedule`, an online study's endpoint) wait until they are asked to
 * stop, before closing what they opened.
 */
export function untilInterrupted(signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      signal?.removeEventListener('abort', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    // Or when the command ends on its own (an online study's schedule, once the study stopped).
    if (signal?.aborted === true) stop();
    else signal?.addEventListener('abort', stop, { once: true });
  });
}
