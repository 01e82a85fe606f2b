import { type Observation, uniqueLocalId } from '../model/observation.js';
import { ABSOLUTE_IRI } from '../model/vocabulary.js';
import type { Logger } from '../clock-and-logger.js';

/**
 * How the records of a JSON or CSV document (a web API, an MQTT message) become observations.
 * Templates are literal text with `{dot.path}` placeholders filled from the record.
 */
export interface RecordMapping {
  /**
   * Dot path (e.g. "data.records") to the array of records in a JSON document. Default: the
   * document if it is an array, else [document].
   */
  readonly records?: string;
  /**
   * IRI templates, e.g. "https://data.example.org/sensors/{id}". Values substituted into IRIs
   * are percent-encoded, except in a template that is a placeholder alone ("{sensorIri}"),
   * whose field must hold the IRI itself. The result must be an absolute IRI (scheme:…) without
   * spaces or `< > " { } | \ ^ \``.
   */
  readonly sensor: string;
  readonly observedProperty: string;
  readonly featureOfInterest: string;
  /** Exactly one placeholder, "{field}": the value keeps its JSON type; numeric strings (CSV) become numbers. */
  readonly result: string;
  /** Optional "{field}": an ISO 8601 date-time with a time zone, or a number of epoch milliseconds. */
  readonly resultTime?: string;
  /** Optional IRI template of a QUDT unit (usually a constant); with a unit, the result must be numeric. */
  readonly unit?: string;
  /** Optional template of the observation's local id (made IRI-safe, unique in the batch); default "o{n}" by position. */
  readonly id?: string;
}

/** A record that could not be mapped: its position in the records array, and why. */
export interface RejectedRecord {
  readonly index: number;
  readonly reason: string;
}

export interface MappedRecords {
  readonly observations: Observation[];
  readonly rejected: RejectedRecord[];
}

type TemplatePart = { readonly text: string } | { readonly path: readonly string[]; readonly placeholder: string };

/** A parsed template, or the reason it cannot be parsed. */
type ParsedTemplate = { readonly parts: readonly TemplatePart[] } | { readonly problem: string };


/** Decimal numbers only: hex, `Infinity` or empty cells are not numbers in a CSV file. */
const numericString = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A full ISO 8601 date-time with an offset: a time without one would depend on the server's zone. */
const isoDateTime = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:[Zz]|[+-]\d{2}:?\d{2})$/;

function parsePath(path: string): string[] | undefined {
  const segments = path.split('.');
  return segments.every((segment) => segment.length > 0) ? segments : undefined;
}

function parseTemplate(template: string): ParsedTemplate {
  const parts: TemplatePart[] = [];
  let at = 0;
  while (at < template.length) {
    const open = template.indexOf('{', at);
    const close = template.indexOf('}', at);
    if (close !== -1 && (open === -1 || close < open)) return { problem: `unbalanced "}" at position ${close + 1}` };
    if (open === -1) {
      parts.push({ text: template.slice(at) });
      break;
    }
    if (open > at) parts.push({ text: template.slice(at, open) });
    const end = template.indexOf('}', open + 1);
    const nested = template.indexOf('{', open + 1);
    if (end === -1 || (nested !== -1 && nested < end)) return { problem: `unbalanced "{" at position ${open + 1}` };
    const placeholder = template.slice(open, end + 1);
    const path = parsePath(template.slice(open + 1, end).trim());
    if (path === undefined) return { problem: `placeholder ${placeholder} is not a dot path` };
    parts.push({ path, placeholder });
    at = end + 1;
  }
  return { parts };
}

/** The field path of a template that must be exactly one placeholder, or why it is not. */
function singleField(template: string): { readonly path: readonly string[] } | { readonly problem: string } {
  const parsed = parseTemplate(template);
  if ('problem' in parsed) return parsed;
  const [only, ...rest] = parsed.parts;
  if (only === undefined || !('path' in only) || rest.length > 0) {
    return { problem: `must be a single placeholder such as "{value}", got ${JSON.stringify(template)}` };
  }
  return only;
}

/** Problems with the mapping's templates themselves (not with any record); `[]` when usable. */
export function validateMapping(mapping: RecordMapping): string[] {
  const problems: string[] = [];
  if (mapping.records !== undefined && parsePath(mapping.records) === undefined) {
    problems.push(`records: ${JSON.stringify(mapping.records)} is not a dot path`);
  }
  const iriTemplates = {
    sensor: mapping.sensor,
    observedProperty: mapping.observedProperty,
    featureOfInterest: mapping.featureOfInterest,
    ...(mapping.unit === undefined ? {} : { unit: mapping.unit }),
  };
  for (const [name, template] of Object.entries(iriTemplates)) {
    const parsed = parseTemplate(template);
    if ('problem' in parsed) {
      problems.push(`${name}: ${parsed.problem}`);
      continue;
    }
    // A placeholder alone takes the field's IRI as is (checked per record).
    if (parsed.parts.length === 1 && 'path' in (parsed.parts[0] as TemplatePart)) continue;
    // Substituted values are percent-encoded, so the literal text must already start the IRI.
    const sample = parsed.parts.map((part) => ('text' in part ? part.text : 'x')).join('');
    if (!ABSOLUTE_IRI.test(sample)) {
      problems.push(`${name}: ${JSON.stringify(template)} does not give an absolute IRI (e.g. "https://example.org/sensors/{id}")`);
    }
  }
  for (const [name, template] of Object.entries({ result: mapping.result, resultTime: mapping.resultTime })) {
    if (template === undefined) continue;
    const field = singleField(template);
    if ('problem' in field) problems.push(`${name}: ${field.problem}`);
  }
  if (mapping.id !== undefined) {
    const parsed = parseTemplate(mapping.id);
    if ('problem' in parsed) problems.push(`id: ${parsed.problem}`);
  }
  return problems;
}

/** Follows a dot path through own properties only, so `__proto__` or `constructor` never reach the prototype. */
function lookup(value: unknown, path: readonly string[]): { readonly found: true; readonly value: unknown } | { readonly found: false } {
  let current = value;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) return { found: false };
    current = (current as Record<string, unknown>)[segment];
  }
  return { found: true, value: current };
}

/** The records of a JSON document. Throws an Error naming the path if it is missing or not an array. */
export function recordsOf(document: unknown, mapping: Pick<RecordMapping, 'records'>): unknown[] {
  if (mapping.records === undefined) return Array.isArray(document) ? document : [document];
  const path = parsePath(mapping.records);
  if (path === undefined) throw new Error(`The records path ${JSON.stringify(mapping.records)} is not a dot path`);
  const found = lookup(document, path);
  if (!found.found) throw new Error(`The document has no ${JSON.stringify(mapping.records)}`);
  if (!Array.isArray(found.value)) {
    throw new Error(`${JSON.stringify(mapping.records)} in the document is not an array (got ${describe(found.value)})`);
  }
  return found.value;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Why a record is rejected; thrown while mapping one record and caught by `mapRecords`. */
class RecordRejection extends Error {}

/** A mapping whose templates are parsed once, for every batch a source maps with it. */
export interface CompiledMapping {
  readonly compiled: true;
  readonly records?: string;
  readonly sensor: readonly TemplatePart[];
  readonly observedProperty: readonly TemplatePart[];
  readonly featureOfInterest: readonly TemplatePart[];
  readonly unit: readonly TemplatePart[] | undefined;
  readonly id: readonly TemplatePart[] | undefined;
  readonly result: readonly string[];
  readonly resultTime: readonly string[] | undefined;
}

/** Parses a mapping's templates; throws an Error listing its problems if it is unusable (see `validateMapping`). */
export function compileMapping(mapping: RecordMapping): CompiledMapping {
  const problems = validateMapping(mapping);
  if (problems.length > 0) throw new Error(`Unusable record mapping: ${problems.join('; ')}`);
  // validateMapping has checked every template: these parses succeed.
  const parts = (template: string) => (parseTemplate(template) as { parts: readonly TemplatePart[] }).parts;
  const path = (template: string) => (singleField(template) as { path: readonly string[] }).path;
  return {
    compiled: true,
    ...(mapping.records === undefined ? {} : { records: mapping.records }),
    sensor: parts(mapping.sensor),
    observedProperty: parts(mapping.observedProperty),
    featureOfInterest: parts(mapping.featureOfInterest),
    unit: mapping.unit === undefined ? undefined : parts(mapping.unit),
    id: mapping.id === undefined ? undefined : parts(mapping.id),
    result: path(mapping.result),
    resultTime: mapping.resultTime === undefined ? undefined : path(mapping.resultTime),
  };
}

/** The value at `path`, which must be present and not null. */
function field(record: object, path: readonly string[]): unknown {
  const found = lookup(record, path);
  const name = `{${path.join('.')}}`;
  if (!found.found) throw new RecordRejection(`missing field ${name}`);
  if (found.value === null || found.value === undefined) throw new RecordRejection(`field ${name} is null`);
  return found.value;
}

/** A string, finite number or boolean field, as text for a template. */
function scalarText(record: object, path: readonly string[]): string {
  const value = field(record, path);
  const name = `{${path.join('.')}}`;
  if (typeof value === 'number' && !Number.isFinite(value)) throw new RecordRejection(`field ${name} is not a finite number`);
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
    throw new RecordRejection(`field ${name} is ${describe(value)}, not a string, number or boolean`);
  }
  const text = String(value);
  if (text.trim() === '') throw new RecordRejection(`field ${name} is empty`);
  return text;
}

function fillIri(name: string, parts: readonly TemplatePart[], record: object): string {
  const [only] = parts;
  if (parts.length === 1 && only !== undefined && 'path' in only) {
    const iri = scalarText(record, only.path);
    if (!ABSOLUTE_IRI.test(iri)) throw new RecordRejection(`${name} ${JSON.stringify(iri)} is not an absolute IRI`);
    return iri;
  }
  let iri = '';
  for (const part of parts) {
    if ('text' in part) {
      iri += part.text;
      continue;
    }
    try {
      iri += encodeURIComponent(scalarText(record, part.path));
    } catch (error) {
      // encodeURIComponent throws a URIError on a lone surrogate.
      if (error instanceof URIError) throw new RecordRejection(`field ${part.placeholder} is not valid Unicode`);
      throw error;
    }
  }
  if (!ABSOLUTE_IRI.test(iri)) throw new RecordRejection(`${name} ${JSON.stringify(iri)} is not an absolute IRI`);
  return iri;
}

function resultValue(record: object, path: readonly string[], withUnit: boolean): Observation['simpleResult'] {
  const value = field(record, path);
  const name = `{${path.join('.')}}`;
  let result: Observation['simpleResult'];
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RecordRejection(`result ${name} is not a finite number`);
    result = value;
  } else if (typeof value === 'boolean') {
    result = value;
  } else if (typeof value === 'string') {
    const trimmed = value.trim();
    if (trimmed === '') throw new RecordRejection(`result ${name} is empty`);
    if (trimmed === 'NaN') throw new RecordRejection(`result ${name} is NaN`);
    const number = numericString.test(trimmed) ? Number(trimmed) : undefined;
    if (number !== undefined && !Number.isFinite(number)) throw new RecordRejection(`result ${name} is out of range`);
    result = number ?? value;
  } else {
    throw new RecordRejection(`result ${name} is ${describe(value)}, not a number, string or boolean`);
  }
  if (withUnit && typeof result !== 'number') {
    throw new RecordRejection(`result ${name} must be a number with a unit, got ${JSON.stringify(result)}`);
  }
  return result;
}

function timeValue(record: object, path: readonly string[]): Date {
  const value = field(record, path);
  const name = `{${path.join('.')}}`;
  let at: Date | undefined;
  if (typeof value === 'number') at = new Date(value);
  else if (typeof value === 'string' && numericString.test(value.trim())) at = new Date(Number(value.trim()));
  else if (typeof value === 'string' && isoDateTime.test(value.trim())) at = new Date(value.trim());
  if (at === undefined || Number.isNaN(at.getTime())) {
    throw new RecordRejection(
      `resultTime ${name} must be an ISO 8601 date-time with a time zone or epoch milliseconds, got ${JSON.stringify(value)}`,
    );
  }
  return at;
}

function idText(parts: readonly TemplatePart[], record: object): string {
  return parts.map((part) => ('text' in part ? part.text : scalarText(record, part.path))).join('');
}

/**
 * Maps each record to one observation. A record that cannot be mapped is rejected with a reason
 * (never thrown), so that one bad row does not hide the others. Throws only if the mapping itself
 * is unusable (see `validateMapping`).
 */
export function mapRecords(records: readonly unknown[], mapping: RecordMapping | CompiledMapping): MappedRecords {
  const compiled = 'compiled' in mapping ? mapping : compileMapping(mapping);
  const observations: Observation[] = [];
  const rejected: RejectedRecord[] = [];
  const taken = new Set<string>();
  records.forEach((record, index) => {
    try {
      if (typeof record !== 'object' || record === null || Array.isArray(record)) {
        throw new RecordRejection(`the record is ${describe(record)}, not an object`);
      }
      const sensor = fillIri('sensor', compiled.sensor, record);
      const observedProperty = fillIri('observedProperty', compiled.observedProperty, record);
      const featureOfInterest = fillIri('featureOfInterest', compiled.featureOfInterest, record);
      const unit = compiled.unit === undefined ? undefined : fillIri('unit', compiled.unit, record);
      const simpleResult = resultValue(record, compiled.result, unit !== undefined);
      const resultTime = compiled.resultTime === undefined ? undefined : timeValue(record, compiled.resultTime);
      const rawId = compiled.id === undefined ? `o${index + 1}` : idText(compiled.id, record);
      // The id is taken last, so that a rejected record does not use one up.
      observations.push({
        id: uniqueLocalId(rawId, taken),
        sensor,
        observedProperty,
        featureOfInterest,
        simpleResult,
        ...(unit === undefined ? {} : { unit }),
        ...(resultTime === undefined ? {} : { resultTime }),
      });
    } catch (error) {
      if (!(error instanceof RecordRejection)) throw error;
      rejected.push({ index, reason: error.message });
    }
  });
  return { observations, rejected };
}

/** Rejections logged per batch: a broken upstream must not flood the log. */
const MAX_REJECTIONS_LOGGED = 3;

/** Logs the first few rejected records of a batch, and how many more there were. */
export function logRejections(logger: Logger, rejected: ReadonlyArray<{ readonly reason: string }>, fields: object): void {
  for (const rejection of rejected.slice(0, MAX_REJECTIONS_LOGGED)) logger.warn({ ...fields, ...rejection }, 'record rejected');
  if (rejected.length > MAX_REJECTIONS_LOGGED) {
    logger.warn({ ...fields, more: rejected.length - MAX_REJECTIONS_LOGGED }, 'more records rejected');
  }
}
