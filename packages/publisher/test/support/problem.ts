/** The members of an RFC 9457 problem object that our tests read. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  detail?: string;
  instance?: string;
  acceptable?: string[];
  formats?: string[];
}

/** Reads a problem+json body, checking its media type first. */
export async function readProblem(response: Response): Promise<Problem> {
  const type = response.headers.get('content-type') ?? '';
  if (!/^application\/problem\+json(;|$)/.test(type)) throw new Error(`not problem+json: ${type}`);
  return (await response.json()) as Problem;
}
