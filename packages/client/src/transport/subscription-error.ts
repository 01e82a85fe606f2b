/**
 * The server refused the subscription for good (e.g. 404 unknown stream, 400 bad format,
 * 406): retrying would not help. `problem` holds its problem+json body when it sent one.
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
