import { retryAfterMs } from './backoff.js';

/**
 * The server refused the subscription for good (e.g. 404 unknown stream, 400 bad format,
 * 406): retrying would not help. `problem` holds its problem+json body when it sent one.
 * `status` is the HTTP status, or the close code of a WebSocket closed for good after its
 * upgrade (1008, 1009), whose reason is then `problem.code`.
 */
export class SubscriptionError extends Error {
  override readonly name = 'SubscriptionError';

  constructor(
    message: string,
    readonly status: number,
    readonly problem?: { code?: string; detail?: string; [key: string]: unknown },
  ) {
    super(message);
  }
}

/** Whether an HTTP status is worth retrying (server trouble, rate limits, timeouts). */
export const isRetryableStatus = (status: number) => status >= 500 || status === 408 || status === 429;

/** A failure worth retrying, with the delay the server asked for (`Retry-After`), if any. */
export class RetryableHttpError extends Error {
  override readonly name = 'RetryableHttpError';

  constructor(
    readonly status: number,
    readonly retryAfterMs: number | undefined,
  ) {
    super(`HTTP ${status}`);
  }
}

/** What a status that is neither 2xx nor 304 means to a transport. */
export type FailedAnswer =
  /** Server trouble: try again, after `Retry-After` if the server sent one. */
  | { readonly kind: 'retry'; readonly reason: string; readonly retryAfterMs: number | undefined }
  /** A refusal for good (4xx): the caller reads the problem (`refusal`) and throws `SubscriptionError`. */
  | { readonly kind: 'refused' };

export function failedAnswer(status: number, retryAfter: string | string[] | undefined): FailedAnswer {
  if (!isRetryableStatus(status)) return { kind: 'refused' };
  return { kind: 'retry', reason: `HTTP ${status}`, retryAfterMs: retryAfterMs(typeof retryAfter === 'string' ? retryAfter : undefined) };
}

/**
 * The error for a response that is neither 2xx nor 304: retryable (5xx, 408, 429), or a
 * refusal for good. Consumes the body.
 */
export async function httpFailure(response: Response, url: string): Promise<RetryableHttpError | SubscriptionError> {
  if (!isRetryableStatus(response.status)) return refusal(response, url);
  await response.body?.cancel();
  return new RetryableHttpError(response.status, retryAfterMs(response.headers.get('retry-after')));
}

export async function refusal(response: Response, url: string): Promise<SubscriptionError> {
  let problem: SubscriptionError['problem'];
  if (/^application\/problem\+json/.test(response.headers.get('content-type') ?? '')) {
    problem = (await response.json().catch(() => undefined)) as SubscriptionError['problem'];
  } else {
    await response.body?.cancel();
  }
  const code = problem?.code === undefined ? '' : ` ${problem.code}`;
  return new SubscriptionError(`${url} answered ${response.status}${code}${problem?.detail ? `: ${problem.detail}` : ''}`, response.status, problem);
}
