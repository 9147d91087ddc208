/**
 * Where the viewer's static pages and Chart.js's prebuilt browser bundle are
 * on disk (shared by the server and the HTML report). No build step: the
 * pages are plain scripts in `src/view/pages/`, and Chart.js ships its UMD
 * bundle in `node_modules/chart.js/dist/chart.umd.min.js`.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KloopError } from '../errors.ts';

/** The folder of the static pages: next to this module, or in the package's sources (compiled builds). */
export function pagesFolder(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.join(here, 'pages'), path.join(here, '..', '..', 'src', 'view', 'pages')];
  const found = candidates.find((candidate) => existsSync(path.join(candidate, 'index.html')));
  if (found === undefined)
    throw new KloopError(`the viewer's pages are missing (looked in ${candidates.join(', ')})`, {
      code: 'view.pages',
      exitCode: 1,
    });
  return found;
}

/** Chart.js's prebuilt browser bundle (UMD, minified) in node_modules. */
export function chartBundlePath(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js');
}

/** The page scripts, in load order (the report inlines them in this order). */
export const PAGE_SCRIPTS = ['format.js', 'charts.js', 'pages.js', 'online.js', 'app.js'] as const;
