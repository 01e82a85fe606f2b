/**
 * `build(element, key)` made once per element and key, on first use, and kept as long as the
 * element object (the log's cache holds the recent ones): what a broadcast sends is built once,
 * not once per subscriber. The element's wire forms (SSE frames, gzip fragments, WebSocket
 * frames) are each one of these.
 */
export function perElement<E extends object, K extends string, V>(build: (element: E, key: K) => V): (element: E, key: K) => V {
  const byElement = new WeakMap<E, Partial<Record<K, V>>>();
  return (element, key) => {
    let byKey = byElement.get(element);
    if (byKey === undefined) byElement.set(element, (byKey = {}));
    return (byKey[key] ??= build(element, key)) as V;
  };
}
