import type { TSchema } from '@sinclair/typebox';
import { Value, type ValueError, ValueErrorType } from '@sinclair/typebox/value';

/**
 * A validation error in words a user can act on. TypeBox says only "Expected union value" for
 * a union: an enumeration names the allowed values (`"memori" is not one of file, memory`), a
 * union of a type and literals says what went wrong with the value as its own type. Other
 * errors keep TypeBox's message. `withValue` tells whether the message already quotes the value.
 */
export function schemaMessage(error: ValueError): { readonly message: string; readonly withValue: boolean } {
  if (error.type !== ValueErrorType.Union) return { message: error.message, withValue: false };
  const alternatives = (error.schema.anyOf ?? []) as TSchema[];
  const literals = alternatives.filter((schema) => Object.hasOwn(schema, 'const'));
  if (literals.length === alternatives.length) {
    return { message: `${JSON.stringify(error.value)} is not one of ${literals.map((schema) => literal(schema.const)).join(', ')}`, withValue: true };
  }
  const allowed = alternatives.map((schema) => (Object.hasOwn(schema, 'const') ? JSON.stringify(schema.const) : `a ${typeName(schema)}`));
  // A value of the right type that breaks that type's limits (0 for "a number > 0 or irregular").
  const sameType = alternatives.find((schema) => !Object.hasOwn(schema, 'const') && typeName(schema) === typeof error.value);
  const detail = sameType === undefined ? undefined : Value.Errors(sameType, error.value).First();
  const message = detail === undefined ? `Expected ${allowed.join(' or ')}` : `${detail.message}, or ${literals.map((schema) => JSON.stringify(schema.const)).join(' or ')}`;
  return { message, withValue: false };
}

const literal = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

const typeName = (schema: TSchema) => (schema.type === 'integer' ? 'number' : String(schema.type));
