// The study's command (kloop's command executor, docs/executors.md): reads one
// JSON line on stdin, {"artifact": "/tmp/kloop-artifacts/<hash>.yaml", "input": {"fold": 3, "seed": 1}, ...},
// trains the random forest with the artifact's hyper-parameters on the nine
// other folds (forest.mjs) and prints the fold's validation accuracy as JSON:
// {"accuracy": 0.933333, "correct": 14, "total": 15}.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { evaluateFold } from './forest.mjs';

let line = '';
for await (const chunk of process.stdin) line += chunk;
const request = JSON.parse(line);
const params = parse(readFileSync(request.artifact, 'utf8'));
console.log(JSON.stringify(evaluateFold(params, request.input.fold, request.input.seed)));
