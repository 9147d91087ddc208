import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { onAbort } from './abort-subscriptions.ts';

describe('onAbort', () => {
  it('puts one listener on the signal for any number of subscribers, and takes it off with the last', () => {
    const controller = new AbortController();
    const unsubscribers = Array.from({ length: 50 }, () => onAbort(controller.signal, () => undefined));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    for (const unsubscribe of unsubscribers.slice(1)) unsubscribe();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    unsubscribers[0]!();
    unsubscribers[0]!(); // twice: nothing more
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('calls every subscriber still subscribed, once, when the signal aborts', () => {
    const controller = new AbortController();
    const calls: string[] = [];
    const callback = (): void => void calls.push('shared');
    onAbort(controller.signal, callback);
    onAbort(controller.signal, callback); // the same function twice: called twice
    const gone = onAbort(controller.signal, () => calls.push('unsubscribed'));
    onAbort(controller.signal, () => calls.push('other'));
    gone();
    controller.abort(new Error('stop'));
    controller.abort(new Error('again')); // a signal aborts once
    expect(calls).toEqual(['shared', 'shared', 'other']);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    // After the abort, a new subscription on the spent signal is never called, and unsubscribing is harmless.
    const late = onAbort(controller.signal, () => calls.push('late'));
    late();
    expect(calls).toEqual(['shared', 'shared', 'other']);
  });
});
