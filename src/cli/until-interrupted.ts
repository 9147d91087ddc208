/**
 * Resolves at the first SIGINT (Ctrl-C) or SIGTERM, then removes its
 * listeners: how the long-running commands (`kloop serve`, `kloop view`,
 * `kloop schedule`, an online study's endpoint) wait until they are asked to
 * stop, before closing what they opened.
 */
export function untilInterrupted(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
