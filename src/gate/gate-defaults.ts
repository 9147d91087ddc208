/**
 * The gate's default settings, in a module of their own (no import at run
 * time) so that the `kloop.yaml` schema (src/config/config.ts) takes its
 * `gate:` defaults from here without loading the gate and its statistics:
 * each default is written once.
 *
 * @module
 */
import type { GateSettings } from './gate.ts';
import type { EarlyAcceptanceRule, EarlyAcceptanceTest } from './sequential.ts';

/** The default of each {@link GateSettings} key (docs/gate.md; `gate:` in kloop.yaml). */
export const DEFAULT_GATE_SETTINGS: Readonly<GateSettings> = Object.freeze({
  alpha: 0.05,
  shadowAlpha: 0.05,
  generalizationRatio: 0.5,
  shadowMarginSe: 1,
  anchorTolerance: 0,
  thresholdK: 1,
  anchorK: 3,
});

/**
 * Default of `gate.adaptiveRepeats`: on. A noise-free example (calibrated SD
 * exactly 0 over ≥ 3 repeats, the incumbent's repeats all alike) is evaluated
 * once for a candidate whose draw agrees, and the incumbent is not topped up
 * there (src/gate/noise-free.ts).
 */
export const DEFAULT_ADAPTIVE_REPEATS = true;

/**
 * Default of `gate.retrials`: times a delta refused by a noisy test may be
 * judged again against a changed incumbent (src/loop/retrials.ts).
 */
export const DEFAULT_RETRIALS = 2;

/**
 * Default of `gate.racing.earlyAcceptance`: no interim look, every candidate
 * that is not stopped for futility is evaluated in full (src/gate/sequential.ts;
 * docs/gate.md, "Racing", for why it is off).
 */
export const DEFAULT_EARLY_ACCEPTANCE: EarlyAcceptanceRule = 'off';

/** Default of `gate.racing.earlyTest`: the test at an interim look (src/gate/sequential.ts). */
export const DEFAULT_EARLY_TEST: EarlyAcceptanceTest = 'shared-variance';
