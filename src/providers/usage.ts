/** Token usage of one execution; zeros for executors that call no model (USD from ./prices.ts). */
export interface ExecutionUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}
