/**
 * A server that cannot listen (`kloop view`, `kloop serve`): the port is
 * taken, privileged, or the address is not one of this machine's. Bad usage,
 * named with the option to change (exit 2), not an unexpected failure.
 */
import { InputError } from '../errors.ts';

/** The listen error as an InputError naming `--port` or `--host`; any other error unchanged. */
export function listenFailure(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (code === 'EADDRINUSE')
    return new InputError(
      `port ${port} is in use on ${host} (another kloop view or serve, or another program): pick another with --port N, or --port 0 for any free port`,
      { field: '--port', code: 'input.port_in_use', cause: error },
    );
  if (code === 'EACCES')
    return new InputError(
      `not allowed to listen on ${where} (ports below 1024 need privileges): pick a port from 1024 up with --port N, or --port 0 for any free port`,
      { field: '--port', code: 'input.port', cause: error },
    );
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new InputError(
      `cannot listen on ${host}: it is not an address of this machine (the default 127.0.0.1 listens on this machine only)`,
      { field: '--host', code: 'input.host', cause: error },
    );
  return error;
}
