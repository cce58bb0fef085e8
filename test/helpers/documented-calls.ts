/**
 * The ATS calls stubbed fetches saw that no vendor documents (test/helpers/stub-fetch.ts records them); the setup
 * file test/setup/documented-calls.ts fails the test that made one. The sandboxes' own record covers the rest.
 */
const seen: string[] = [];

export function recordUndocumented(problems: readonly string[]): void {
  seen.push(...problems);
}

/** The calls recorded since the last take, emptied. */
export function takeUndocumented(): string[] {
  return seen.splice(0, seen.length);
}
