/**
 * @rdf-stream/client — not implemented yet. The planned API (`subscribe(streamUrl, options)`,
 * latency recorder, windows, continuous queries) is described in README.md.
 */
export {};
