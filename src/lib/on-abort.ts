/**
 * One 'abort' listener per signal, whatever the number of callers. The shutdown signal lives as
 * long as the server and every open stream wants to hear it: a listener each trips Node's
 * MaxListenersExceededWarning and costs a closure per stream on a long-lived emitter. The one
 * listener is removed when its last caller unregisters, so nothing stays on the signal.
 */
interface Entry {
  callbacks: Set<() => void>;
  listener: () => void;
}

const entries = new WeakMap<AbortSignal, Entry>();

/** Calls `callback` once when `signal` aborts; the returned function unregisters it. */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let entry = entries.get(signal);
  if (!entry) {
    const callbacks = new Set<() => void>();
    const listener = () => {
      entries.delete(signal);
      for (const fire of [...callbacks]) fire();
      callbacks.clear();
    };
    entry = { callbacks, listener };
    entries.set(signal, entry);
    signal.addEventListener('abort', listener, { once: true });
  }
  const { callbacks } = entry;
  callbacks.add(callback);
  return () => {
    if (!callbacks.delete(callback) || callbacks.size > 0 || entries.get(signal) !== entry) return;
    entries.delete(signal);
    signal.removeEventListener('abort', entry.listener);
  };
}
