import { PublisherError } from '../../errors.js';
import { type IngestEndpoint, tokenOwner } from './ingest-endpoint.js';

/**
 * Checks `Authorization: Bearer <token>` for `endpoint`'s stream: 401 with a `WWW-Authenticate`
 * challenge for a missing or unknown token, 403 for another ingest stream's token. Every
 * stream's digest is compared in constant time (`tokenOwner`).
 */
export function authorize(endpoints: Iterable<IngestEndpoint>, endpoint: IngestEndpoint, header: string | undefined): void {
  const challenge = (error?: string) => ({
    'www-authenticate': `Bearer realm="rdf-stream"${error === undefined ? '' : `, error="${error}"`}`,
  });
  const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(header ?? '');
  if (match === null) {
    throw new PublisherError('PUB_ERR_UNAUTHORIZED', 'Send Authorization: Bearer <token>', {}, challenge(header ? 'invalid_request' : undefined));
  }
  const owner = tokenOwner(endpoints, match[1] as string);
  if (owner === undefined) throw new PublisherError('PUB_ERR_UNAUTHORIZED', 'The token is not valid', {}, challenge('invalid_token'));
  if (owner !== endpoint.streamId) {
    throw new PublisherError('PUB_ERR_FORBIDDEN', `The token does not grant access to stream "${endpoint.streamId}"`, {}, challenge('insufficient_scope'));
  }
}
