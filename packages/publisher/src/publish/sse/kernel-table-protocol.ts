/** What `ProcNetTcpSendQueues` asks its reader thread (`kernel-table-reader.ts`): these tables, read whole. */
export interface TableRequest {
  readonly id: number;
  readonly files: readonly string[];
}

/** Each table's text, in the order asked, or null where it could not be read. */
export interface TableReply {
  readonly id: number;
  readonly texts: ReadonlyArray<string | null>;
}
