/**
 * One `abort` listener per signal, whatever the number of subscribers.
 *
 * A run hands one AbortSignal to every execution of every candidate it
 * evaluates: dozens of command-executor calls wait for a program slot or
 * run a program at once, and a listener each on the signal passes Node's
 * limit of 10 (`MaxListenersExceededWarning: Possible EventTarget memory
 * leak detected`) although each is removed when its call ends. Subscribing
 * here adds a listener to the signal for the first subscriber only and
 * removes it with the last, so the signal carries one listener from this
 * module however many calls are in flight; `setMaxListeners` would only hide
 * the count.
 *
 * @module
 */

const subscribers = new WeakMap<AbortSignal, { callbacks: Set<() => void>; listener: () => void }>();

/**
 * Calls `callback` once when `signal` aborts (not at all when it is aborted
 * already: check `signal.aborted` first).
 *
 * @returns the unsubscribe function (calling it twice, or after the abort, does nothing)
 * @example
 * ```ts
 * const unsubscribe = onAbort(signal, () => child.kill());
 * try { await work(); } finally { unsubscribe(); }
 * ```
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let entry = subscribers.get(signal);
  if (entry === undefined) {
    const created = {
      callbacks: new Set<() => void>(),
      listener: () => {
        subscribers.delete(signal);
        for (const subscribed of [...created.callbacks]) subscribed();
        created.callbacks.clear();
      },
    };
    entry = created;
    subscribers.set(signal, created);
    signal.addEventListener('abort', created.listener, { once: true });
  }
  const current = entry;
  // A function object per subscription: the same callback subscribed twice is called twice.
  const subscription = (): void => callback();
  current.callbacks.add(subscription);
  return () => {
    if (!current.callbacks.delete(subscription)) return;
    if (current.callbacks.size === 0 && subscribers.get(signal) === current) {
      subscribers.delete(signal);
      signal.removeEventListener('abort', current.listener);
    }
  };
}
