/**
 * The query worker's file name (`./query-worker-{hash}.js`), beside the page's script: set by
 * the page's build (esbuild's `define`), which bundles the worker first.
 */
declare const QUERY_WORKER_FILE: string;
