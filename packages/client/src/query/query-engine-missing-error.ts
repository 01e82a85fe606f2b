/** The SPARQL engine the continuous query API loads on first use: an optional peer dependency. */
export const QUERY_ENGINE_PACKAGE = '@comunica/query-sparql-rdfjs';
/** The versions of it this client is tested with (the `peerDependencies` range). */
export const QUERY_ENGINE_VERSION_RANGE = '^5.4.1';

/**
 * The continuous query API (`ContinuousQuery`, `runContinuousQuery`, `rdf-stream query`) could not
 * load its SPARQL engine, most often because it is not installed: `@rdf-stream/client` leaves it
 * out so that subscribing alone does not install it. `cause` is the loader's own error.
 */
export class QueryEngineMissingError extends Error {
  /** Stable: switch on it rather than on the message. */
  readonly code = 'CLIENT_ERR_QUERY_ENGINE_MISSING';

  constructor(cause: unknown) {
    super(
      `the continuous query API needs ${QUERY_ENGINE_PACKAGE}, an optional peer dependency of @rdf-stream/client, and could not load it ` +
        `(${cause instanceof Error ? cause.message : String(cause)}): npm install ${QUERY_ENGINE_PACKAGE}@${QUERY_ENGINE_VERSION_RANGE}`,
      { cause },
    );
    this.name = 'QueryEngineMissingError';
  }
}
