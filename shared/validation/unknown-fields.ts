import type * as v from 'valibot';

/** A field the schema does not know, and the fields its object does know. */
export interface UnknownField {
  path: string;
  known: string[];
}

type AnySchema = v.GenericSchema & {
  entries?: Record<string, AnySchema>;
  wrapped?: AnySchema;
  item?: AnySchema;
  options?: AnySchema[];
  value?: AnySchema;
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The fields of `input` that `schema` (a valibot schema) does not know, as dot paths (`writeback`,
 * `triggers.0.interview.languag`). A plain `v.object` drops them silently, which is right for what another system
 * sends but hides a typo in a file a person wrote: a rule misspelt is a rule gone. Objects, arrays, records and the
 * optional, nullable and union wrappers are walked; a union's member is the one that knows the most of its fields.
 */
export function unknownFields(schema: v.GenericSchema, input: unknown, path = ''): UnknownField[] {
  const s = schema as AnySchema;
  const at = (key: string | number) => (path ? `${path}.${key}` : String(key));
  if (s.wrapped) return input === undefined || input === null ? [] : unknownFields(s.wrapped, input, path);
  if (s.type === 'object' && s.entries && isRecord(input)) {
    const entries = s.entries;
    return Object.entries(input).flatMap(([key, value]) => {
      // An own entry only: `__proto__` or `constructor` is a stray key, not Object's.
      const entry = Object.hasOwn(entries, key) ? entries[key] : undefined;
      return entry ? unknownFields(entry, value, at(key)) : [{ path: at(key), known: Object.keys(entries) }];
    });
  }
  if (s.type === 'array' && s.item && Array.isArray(input)) {
    const item = s.item;
    return input.flatMap((value, index) => unknownFields(item, value, at(index)));
  }
  if (s.type === 'record' && s.value && isRecord(input)) {
    const value = s.value;
    return Object.entries(input).flatMap(([key, entry]) => unknownFields(value, entry, at(key)));
  }
  if ((s.type === 'union' || s.type === 'variant') && s.options?.length) {
    const found = s.options.map((option) => unknownFields(option, input, path));
    return found.reduce((fewest, next) => (next.length < fewest.length ? next : fewest));
  }
  return [];
}

/** `writeback: unknown field (did you mean writeBack?)`: with a known field of its object spelt alike. */
export function describeUnknownField({ path, known }: UnknownField): string {
  const name = path.slice(path.lastIndexOf('.') + 1);
  // The nearest known field within two edits, if any.
  const [near] = known
    .map((k) => ({ k, d: distance(k, name) }))
    .filter(({ d }) => d <= 2)
    .sort((a, b) => a.d - b.d)
    .map(({ k }) => k);
  return `${path}: unknown field${near ? ` (did you mean ${near}?)` : ''}`;
}

/** Edit distance of two short names, case-insensitive: what "did you mean" weighs (the doctor's stage names too). */
export function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++)
      row[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (x[i - 1] === y[j - 1] ? 0 : 1),
      );
    previous = row;
  }
  return previous[y.length] ?? 0;
}
