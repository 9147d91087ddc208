/**
 * The options of the commands that serve HTTP on this machine (`kloop view`,
 * `kloop serve`): the port, the environment variable holding the bearer
 * token, and which hosts are this machine's loopback (no token required
 * there). Listen errors are in ./listen-error.ts.
 */
import { InputError } from '../errors.ts';

/** The host names that reach this machine only: a server on one of them may run without a token. */
export const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** Parses `--port`: a whole number in 0-65535 (0: any free port). @throws InputError (field `--port`) */
export function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new InputError(`expected a port number 0-65535, got "${value}"`, { field: '--port' });
  return port;
}

/** Parses `--token-env`: the NAME of an environment variable (never the token itself). @throws InputError (field `--token-env`) */
export function parseEnvName(value: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(value))
    throw new InputError('give the NAME of an environment variable holding the token, not the token itself', {
      field: '--token-env',
    });
  return value;
}
