/** How deep to look into an error's `cause` chain. */
const MAX_CAUSE_DEPTH = 5;

/**
 * Why a request got no HTTP answer: the system error code (`ECONNREFUSED`, `ENOTFOUND`,
 * `ECONNRESET`, `ETIMEDOUT`…), or the reason fetch refused to connect at all when it has no code
 * (`bad port`: fetch blocks some ports, such as 1). Node's fetch rejects with
 * `TypeError('fetch failed')` and puts the socket's error in `cause` (an `AggregateError` when
 * every address of a host refused). Undefined for an HTTP failure, and in browsers, whose fetch
 * errors say nothing more.
 */
export function networkErrorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < MAX_CAUSE_DEPTH; current = current.cause, depth++) {
    const code = systemCode(current) ?? (current instanceof AggregateError ? current.errors.map(systemCode).find((found) => found !== undefined) : undefined);
    if (code !== undefined) return code;
  }
  const cause = error instanceof TypeError && error.message === 'fetch failed' ? error.cause : undefined;
  return cause instanceof Error && cause.message !== '' ? cause.message : undefined;
}

function systemCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9_]+$/.test(code) ? code : undefined;
}

/**
 * What a reconnect event says of a request that failed: `description`, its message with the
 * system error code when it has one (`fetch failed (ECONNREFUSED)`), and `networkError`, that
 * code, only when no HTTP answer came (see `networkErrorCode`).
 */
export function networkFailure(error: unknown): { readonly description: string; readonly networkError?: string } {
  const message = error instanceof Error ? error.message : String(error);
  const code = networkErrorCode(error);
  if (code === undefined) return { description: message };
  return { description: message.includes(code) ? message : `${message} (${code})`, networkError: code };
}
