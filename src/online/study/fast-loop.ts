/**
 * One step of an online study's fast loop (`kloop schedule`, the `fast`
 * cadence): the metric scraper (when configured), then one look at the
 * running experiment that acts only on what cannot wait for the slow loop —
 * a harm stop (a guardrail significantly worse), a sample-ratio mismatch
 * (`invalid`; on the A/A calibration it stops the study as
 * `calibration_invalid`) and a ramp step (`metrics.rampEvery` passed, no
 * harm). Every look it takes is stored (`online_looks`). A look that would
 * accept, refuse for another reason, open the confirmation window or finish
 * the calibration is left to the slow loop (`ripe`: nothing recorded); the
 * fast loop never asks the proposer and never starts an experiment.
 */
import { readOnlineState, runningOnlineExperiment } from '../../storage/online-store.ts';
import { runScraper, type ScrapeResult } from '../scraper/run-scraper.ts';
import { ONLINE_STOPPED_KEY, type OnlineStudy } from './online-study.ts';
import { lookAt, stop } from './slow-loop.ts';
import { describeStandings, type ExperimentStanding } from './standing.ts';

/** What one fast-loop step did. */
export interface FastLoopReport {
  /** ISO time of the step (the study's clock). */
  at: string;
  /** The scrape, when the study has a scraper. */
  scraper?: ScrapeResult;
  /** The experiment looked at, or null (none running, or the study stopped). */
  looked: number | null;
  /** `harm`, `srm` (a stop), `ramp` (a ramp step), `ripe` (a decision for the slow loop), `continue`, or null with no look. */
  action: 'harm' | 'srm' | 'ramp' | 'ripe' | 'continue' | null;
  /** The running experiment's standing after the step (units per arm and window: the exposure bookkeeping), or null. */
  running: ExperimentStanding | null;
  /** Set once the study has stopped (this step or before). */
  stopped?: { reason: string; detail: string; at: string };
}

/** Runs one fast-loop step (see the module's description). */
export async function runFastLoopStep(study: OnlineStudy): Promise<FastLoopReport> {
  const { db, config } = study;
  const scraper = await runScraper(study);
  const at = study.now().toISOString();
  const report: FastLoopReport = {
    at,
    ...(scraper === undefined ? {} : { scraper }),
    looked: null,
    action: null,
    running: null,
  };
  let stopped = await readOnlineState(db, ONLINE_STOPPED_KEY);
  const experiment = stopped === undefined ? await runningOnlineExperiment(db) : undefined;
  if (experiment !== undefined) {
    report.looked = experiment.id;
    const status = await lookAt(study, experiment, at, 'fast');
    const after = (await runningOnlineExperiment(db))?.rampStep;
    report.action =
      status === 'ripe'
        ? 'ripe'
        : status === 'invalid'
          ? 'srm'
          : status === 'refused'
            ? 'harm'
            : after !== undefined && after > experiment.rampStep
              ? 'ramp'
              : 'continue';
    if (status === 'invalid' && experiment.kind === 'aa') {
      await stop(
        db,
        'calibration_invalid',
        `the A/A calibration (experiment ${experiment.id}) failed its sample-ratio check: assignment or exposure logging is broken`,
        at,
      );
    }
    study.refresh();
  }
  stopped = await readOnlineState(db, ONLINE_STOPPED_KEY);
  if (stopped !== undefined) report.stopped = JSON.parse(stopped) as FastLoopReport['stopped'];
  const running = await runningOnlineExperiment(db);
  report.running =
    running === undefined
      ? null
      : ((await describeStandings(db, config, at)).find((standing) => standing.id === running.id) ?? null);
  return report;
}
