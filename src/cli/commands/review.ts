/**
 * `kloop review <study>`: the review queue. Without an action it lists the
 * pending items with their evidence; `approve ID --by NAME` applies one
 * (an artifact through the prompt registry, a pattern into the study's
 * `patterns/` folder, an example for corpus admission); `reject ID --by NAME`
 * records the refusal. Every decision records who, when and the note.
 */
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import type { ReviewItem, ReviewItemStatus } from '../../review/review-queue.ts';
import {
  approveReviewItem,
  getReviewItem,
  listReviewItems,
  rejectReviewItem,
  REVIEW_ITEM_STATUSES,
} from '../../review/review-queue.ts';
import { print, printJson } from '../output.ts';
import { openStudy } from './study-session.ts';

interface ReviewOptions {
  by?: string;
  note?: string;
  json?: boolean;
  status?: string;
}

const ACTIONS = ['list', 'show', 'approve', 'reject'] as const;

export function registerReviewCommand(program: Command): void {
  program
    .command('review')
    .description('List the review queue (Loop A candidates, Loop C/D findings), or approve or reject one item.')
    .argument('<study>', 'study folder')
    .argument('[action]', `one of ${ACTIONS.join(', ')} (default list)`)
    .argument('[id]', 'review item id (show, approve, reject)')
    .option('--by <name>', 'who decides (required for approve and reject)')
    .option('--note <text>', 'a note recorded with the decision')
    .option(
      '--status <status>',
      `list items of this status (${[...REVIEW_ITEM_STATUSES, 'all'].join(', ')}); default pending`,
    )
    .option('--json', 'print one JSON object on stdout')
    .addHelpText(
      'after',
      '\nExamples:\n  kloop review examples/intent\n  kloop review examples/intent approve 3 --by ana --note "checked the fields"\n  kloop review examples/intent reject 4 --by ana',
    )
    .action(reviewCommand);
}

function parseId(value: string | undefined): number {
  const id = Number(value);
  if (value === undefined || !Number.isInteger(id) || id < 1)
    throw new InputError(`expected a review item id (a whole number ≥ 1), got "${value ?? ''}"`, { field: 'id' });
  return id;
}

function describeOutcome(item: ReviewItem): string {
  const outcome = item.outcome as { versionId?: number; file?: string } | null;
  if (outcome === null || typeof outcome !== 'object') return '';
  if (outcome.versionId !== undefined) return `: version ${outcome.versionId} is now active`;
  if (outcome.file !== undefined) return `: wrote ${outcome.file}`;
  return '';
}

function printList(items: readonly ReviewItem[], status: string): void {
  if (items.length === 0) {
    print(status === 'pending' ? 'the review queue is empty' : `no ${status} review items`);
    return;
  }
  print(`${items.length} ${status === 'all' ? '' : `${status} `}review item(s):`);
  for (const item of items) {
    print();
    printItem(item, false);
  }
}

function printItem(item: ReviewItem, full: boolean): void {
  print(
    `#${item.id} [${item.kind} from ${item.source}] ${item.title}  (${item.status}, queued ${item.createdAt}${item.runId !== null ? `, run ${item.runId}` : ''})`,
  );
  if (item.decidedBy !== null)
    print(`  decided by ${item.decidedBy} at ${item.decidedAt}${item.note !== null ? `: ${item.note}` : ''}`);
  const evidence = item.evidence as { checks?: Array<{ name: string; passed: boolean; detail: string }> } | null;
  if (evidence !== null && typeof evidence === 'object' && Array.isArray(evidence.checks)) {
    for (const check of evidence.checks) print(`  ${check.passed ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}`);
  } else if (evidence !== null) {
    print(`  evidence: ${JSON.stringify(evidence)}`);
  }
  const payload = item.payload as { delta?: string; yaml?: string; text?: string; example?: unknown };
  if (typeof payload.delta === 'string') print(`  change: ${payload.delta}`);
  if (full && typeof payload.yaml === 'string') print(payload.yaml.replace(/^/gm, '    '));
  if (full && payload.example !== undefined) print(`  example: ${JSON.stringify(payload.example)}`);
}

/** `kloop review`'s action: lists the review queue, shows one item, or approves or rejects one. */
async function reviewCommand(
  studyDir: string,
  actionArgument: string | undefined,
  idArgument: string | undefined,
  options: ReviewOptions,
): Promise<void> {
  const action = (actionArgument ?? 'list').toLowerCase();
  if (!(ACTIONS as readonly string[]).includes(action))
    throw new InputError(`unknown review action "${actionArgument}"; expected ${ACTIONS.join(', ')}`, {
      field: 'action',
    });
  const status = options.status ?? 'pending';
  if (!([...REVIEW_ITEM_STATUSES, 'all'] as string[]).includes(status))
    throw new InputError(`unknown status "${status}"`, { field: '--status' });
  // Listing and showing only read (and work on a read-only study); approve and reject write.
  const session = await openStudy(studyDir, {
    quiet: true,
    readonly: action === 'list' || action === 'show',
    modelCalls: 'none',
  });
  try {
    if (action === 'list') {
      const items = await listReviewItems(session.db, { status: status as ReviewItemStatus | 'all' });
      if (options.json === true) printJson({ study: session.study.dir, status, items });
      else printList(items, status);
      return;
    }
    const id = parseId(idArgument);
    if (action === 'show') {
      const item = await getReviewItem(session.db, id);
      if (item === undefined) throw new InputError(`no review item ${id}`, { field: 'id' });
      if (options.json === true) printJson({ study: session.study.dir, item });
      else printItem(item, true);
      return;
    }
    const by = options.by?.trim() ?? '';
    if (by === '') throw new InputError(`${action} needs the reviewer's name: --by NAME`, { field: '--by' });
    const decide = action === 'approve' ? approveReviewItem : rejectReviewItem;
    const result = await decide(session.db, id, {
      by,
      ...(options.note !== undefined ? { note: options.note } : {}),
      studyDir: session.study.dir,
    });
    if (!result.ok) {
      if (options.json === true)
        printJson({
          study: session.study.dir,
          ok: false,
          reason: result.reason,
          message: result.message,
          item: result.item ?? null,
        });
      else print(`kloop: ${result.message}`);
      process.exitCode = result.reason === 'not_found' ? 2 : 1;
      return;
    }
    if (options.json === true) printJson({ study: session.study.dir, ok: true, item: result.item });
    else
      print(
        `review item ${id} ${result.item.status} by ${result.item.decidedBy} at ${result.item.decidedAt}${describeOutcome(result.item)}`,
      );
  } finally {
    await session.close();
  }
}
