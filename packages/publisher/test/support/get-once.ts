import { get } from 'node:http';

/**
 * A GET on a connection of its own, closed after the response: no keep-alive agent, so that no
 * idle connection holds a publisher's drain at exit, and so that each request of a process with
 * `--workers` goes to the next worker (the cluster deals connections round robin).
 */
export function getOnce(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}
