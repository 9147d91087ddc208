/**
 * `kloop serve <study>`: the signal endpoint (`POST /signals`). Listens on
 * 127.0.0.1 by default, needs a bearer token from the environment
 * (`KLOOP_SERVE_TOKEN`, or the variable named by `--token-env`) and refuses
 * to start without one. Runs until Ctrl-C or SIGTERM. See
 * `src/signals/server.ts` and docs/loops-c-d.md.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_SERVE_PORT, DEFAULT_TOKEN_ENV, resolveServeToken, startSignalServer } from '../../signals/server.ts';
import { DEFAULT_SIGNALS_CONFIG } from '../../config/signals-config.ts';
import { loadStudyConfig } from '../../config/config.ts';
import { listenFailure } from '../listen-error.ts';
import { progress } from '../output.ts';
import { openSignalDatabase } from './signals.ts';
import { studyModeOf } from '../../online/config.ts';
import { serveOnlineStudy } from './online-serve.ts';
import { untilInterrupted } from '../session/until-interrupted.ts';
import { LOOPBACK, parseEnvName, parsePort } from '../server-options.ts';

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description(
      'Serve the signal endpoint (POST /signals) for a study, or POST /assign and POST /outcomes for an online study: bearer token, body-size and rate limits, 127.0.0.1 by default.',
    )
    .argument('<study>', 'study folder')
    .option('--port <n>', `port to listen on (0 = any free port)`, parsePort, DEFAULT_SERVE_PORT)
    .option('--host <address>', 'interface to listen on', '127.0.0.1')
    .option('--token-env <NAME>', 'environment variable holding the bearer token', parseEnvName, DEFAULT_TOKEN_ENV)
    .option('--quiet', 'no progress lines on stderr')
    .option(
      '--json',
      'once listening, print one JSON object on one line on stdout: study, url, endpoint, hostname, port, tokenEnv',
    )
    .action(
      async (
        studyDir: string,
        options: { port: number; host: string; tokenEnv: string; quiet?: boolean; json?: boolean },
      ) => {
        const token = resolveServeToken(process.env, options.tokenEnv);
        // An online study serves POST /assign and POST /outcomes instead (src/online/http/online-routes.ts).
        if (existsSync(path.join(studyDir, 'kloop.yaml')) && studyModeOf(studyDir) === 'online')
          return serveOnlineStudy(studyDir, token, options);
        const config = loadStudyConfig(studyDir);
        const settings = config.signals ?? DEFAULT_SIGNALS_CONFIG;
        const db = await openSignalDatabase(config, true);
        const quiet = options.quiet === true;
        try {
          const server = await startSignalServer({
            db,
            token,
            port: options.port,
            hostname: options.host,
            storeGoals: settings.storeGoals,
            maxBodyBytes: settings.endpoint.maxBodyBytes,
            ratePerSecond: settings.endpoint.ratePerSecond,
            burst: settings.endpoint.burst,
          }).catch((error: unknown) => {
            throw listenFailure(error, options.host, options.port);
          });
          if (!LOOPBACK.has(options.host)) {
            progress(
              `kloop: WARNING: listening on ${options.host}, beyond this machine; the endpoint speaks plain HTTP: put a TLS proxy in front`,
              quiet,
            );
          }
          progress(
            `kloop: signal endpoint for ${config.dir} at ${server.url}/signals (bearer token from ${options.tokenEnv}; Ctrl-C to stop)`,
            quiet,
          );
          if (options.json === true) {
            // One line, so a script can read it as soon as the endpoint listens (`--port 0` picks the port).
            process.stdout.write(
              `${JSON.stringify({ study: config.dir, url: server.url, endpoint: `${server.url}/signals`, hostname: server.hostname, port: server.port, tokenEnv: options.tokenEnv })}\n`,
            );
          }
          await untilInterrupted();
          progress('kloop: stopping the endpoint', quiet);
          await server.close();
        } finally {
          await db.destroy();
        }
      },
    );
}
