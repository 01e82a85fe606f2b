/**
 * Which gzip SSE clients inflate their whole stream and check the cheap reading against it
 * (`--gzip-verify-sample`): a share of the fleet (`1%`) or a number of clients (`50`).
 */
export type GzipVerifySample = { readonly percent: number } | { readonly clients: number };

/** The default: 1 % of the clients, at least one. */
export const DEFAULT_GZIP_VERIFY_SAMPLE: GzipVerifySample = { percent: 1 };

/** Parses `N%` (0–100) or a whole number of clients; undefined when it is neither. */
export function parseGzipVerifySample(text: string): GzipVerifySample | undefined {
  const trimmed = text.trim();
  if (trimmed.endsWith('%')) {
    const percent = Number(trimmed.slice(0, -1));
    return trimmed.length > 1 && percent >= 0 && percent <= 100 ? { percent } : undefined;
  }
  const clients = Number(trimmed);
  return trimmed !== '' && Number.isInteger(clients) && clients >= 0 ? { clients } : undefined;
}

/** How many of `clients` are sample clients: a share rounds up (a non-zero share of a fleet is at least one client). */
export function gzipVerifySampleClients(sample: GzipVerifySample, clients: number): number {
  return 'percent' in sample ? Math.min(clients, Math.ceil((clients * sample.percent) / 100)) : Math.min(clients, sample.clients);
}

/** Whether the client at `index` of `total` is one of `sampleClients`, spread evenly over the fleet (and so over its workers). */
export function isGzipVerifyClient(index: number, total: number, sampleClients: number): boolean {
  if (sampleClients <= 0 || total <= 0) return false;
  return Math.floor(((index + 1) * sampleClients) / total) > Math.floor((index * sampleClients) / total);
}
