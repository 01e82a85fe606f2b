/** The formats a publisher serves, by the name used in `?format=`. */
export const mediaTypes = Object.freeze({
  turtle: 'text/turtle',
  trig: 'application/trig',
  ntriples: 'application/n-triples',
  nquads: 'application/n-quads',
  jsonld: 'application/ld+json',
} as const);

export type FormatName = keyof typeof mediaTypes;

export const isFormatName = (value: unknown): value is FormatName =>
  typeof value === 'string' && Object.hasOwn(mediaTypes, value);

/** The format of a `Content-Type` header value, or undefined when it is none of ours. */
export function formatOfContentType(contentType: string | null | undefined): FormatName | undefined {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (type === 'application/json') return 'jsonld';
  return (Object.keys(mediaTypes) as FormatName[]).find((format) => mediaTypes[format] === type);
}
