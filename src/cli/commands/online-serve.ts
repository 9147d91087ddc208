/**
 * `kloop serve <study>` on a `mode: online` study: `POST /assign` and
 * `POST /outcomes` (src/online/http/online-routes.ts) with the signal
 * endpoint's token, body-size and rate limits (their defaults: docs/loops-c-d.md).
 * Runs until Ctrl-C or SIGTERM.
 */
import { createOnlineApp } from '../../online/http/online-routes.ts';
import { openOnlineStudy } from '../../online/study/online-study.ts';
import { listenApp } from '../../signals/server.ts';
import { DEFAULT_SIGNALS_CONFIG } from '../../config/signals-config.ts';
import { listenFailure } from '../listen-error.ts';
import { progress } from '../output.ts';
import { untilInterrupted } from '../session/until-interrupted.ts';

/** Serves an online study until Ctrl-C or SIGTERM. */
export async function serveOnlineStudy(
  studyDir: string,
  token: string,
  options: { port: number; host: string; tokenEnv: string; quiet?: boolean; json?: boolean },
): Promise<void> {
  const study = await openOnlineStudy(studyDir);
  const quiet = options.quiet === true;
  const limits = DEFAULT_SIGNALS_CONFIG.endpoint;
  try {
    const app = createOnlineApp(study, {
      token,
      maxBodyBytes: limits.maxBodyBytes,
      ratePerSecond: limits.ratePerSecond,
      burst: limits.burst,
    });
    const server = await listenApp(app, { port: options.port, hostname: options.host }).catch((error: unknown) => {
      throw listenFailure(error, options.host, options.port);
    });
    if (!['127.0.0.1', '::1', 'localhost'].includes(options.host))
      progress(
        `kloop: WARNING: listening on ${options.host}, beyond this machine; the endpoint speaks plain HTTP: put a TLS proxy in front`,
        quiet,
      );
    progress(
      `kloop: online study ${study.config.dir} at ${server.url}/assign and ${server.url}/outcomes (bearer token from ${options.tokenEnv}; Ctrl-C to stop)`,
      quiet,
    );
    if (options.json === true)
      process.stdout.write(
        `${JSON.stringify({ study: study.config.dir, url: server.url, endpoints: [`${server.url}/assign`, `${server.url}/outcomes`], hostname: server.hostname, port: server.port, tokenEnv: options.tokenEnv })}\n`,
      );
    await untilInterrupted();
    progress('kloop: stopping the endpoint', quiet);
    await server.close();
  } finally {
    await study.close();
  }
}
