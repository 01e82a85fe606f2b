/** What `ProcNetTcpSendQueues` asks its reader thread (`kernel-table-reader.ts`): these tables, read whole into `shared`. */
export interface TableRequest {
  readonly id: number;
  readonly files: readonly string[];
  readonly shared: SharedArrayBuffer;
}

/**
 * Where each table lies in the shared memory, in the order asked (`[start, end)`), or null where
 * it could not be read; `overflow`: the tables did not fit, ask again with more memory.
 */
export interface TableReply {
  readonly id: number;
  readonly ranges: ReadonlyArray<readonly [number, number] | null>;
  readonly overflow: boolean;
}
