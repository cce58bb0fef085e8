import { createHash } from 'node:crypto';
import type { DynamoConnectionStore } from './connections.records';

export interface ImportResult {
  created: string[];
  updated: string[];
  unchanged: string[];
  /**
   * Connections changed since through the console or the admin API, which the file holds as it did at the last
   * import: left as changed (the file's copy wins only once the file changes it).
   */
  keptEdits: string[];
  /**
   * Connections deleted through the console or the admin API that the file still holds as it did when they were
   * deleted: left deleted (the file's copy makes one again only once the file changes it).
   */
  keptDeleted: string[];
  /** Connections in the table the file does not hold: deleted only with `prune`, else left as they are. */
  notInFile: string[];
  deleted: string[];
}

/**
 * Brings a connections file's connections (each validated by the caller) into the table: a new one is created, one
 * the file changed since its last import written as its next version, an equal one left alone, so importing the same
 * file twice changes nothing. One the file holds as at its last import, changed since in the console or through the
 * admin API, keeps those changes, and one deleted there stays deleted (a deploy for another customer reverts no
 * one's). A connection the file does not
 * hold (one created through the admin API) is deleted only with `prune`. Each write is audited under `principal`.
 */
export async function importConnections(
  store: DynamoConnectionStore,
  documents: readonly { id: string }[],
  options: { principal: string; prune?: boolean; pageSize?: number },
): Promise<ImportResult> {
  const result: ImportResult = {
    ...{ created: [], updated: [], unchanged: [], keptEdits: [], keptDeleted: [] },
    ...{ notInFile: [], deleted: [] },
  };
  const change = { principal: options.principal, action: 'import' as const };
  // Several connections at once (each its own items): 10,000 one at a time outlast the deploy's import function.
  const outcomes = new Array<Exclude<keyof ImportResult, 'notInFile' | 'deleted'>>(documents.length);
  let next = 0;
  const failed: { id: string; error: unknown }[] = [];
  const lane = async () => {
    // Once one fails, the lanes take no more: every write begun is awaited, and each failure named.
    for (let index = next++; index < documents.length && !failed.length; index = next++) {
      const document = documents[index] as { id: string };
      try {
        outcomes[index] = await importOne(store, document, change);
      } catch (error) {
        failed.push({ id: document.id, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(IMPORTS_AT_ONCE, documents.length) }, lane));
  if (failed.length === 1) throw failed[0]?.error;
  if (failed.length)
    throw new AggregateError(
      failed.map((f) => f.error),
      `the import stopped: ${failed.map((f) => f.id).join(', ')} failed`,
    );
  // In the file's order, whichever finished first.
  for (const [index, document] of documents.entries()) result[outcomes[index] as keyof ImportResult].push(document.id);
  const inFile = new Set(documents.map((d) => d.id));
  // Bounded: each page is the table's, and the table holds one item per connection.
  for (let cursor: string | undefined, first = true; first || cursor; first = false) {
    const page = await store.page(options.pageSize ?? 500, cursor);
    for (const stored of page.connections) if (!inFile.has(stored.id)) result.notInFile.push(stored.id);
    cursor = page.cursor;
  }
  if (options.prune)
    for (const id of result.notInFile) {
      const current = await store.read(id, true);
      if (current) await store.remove(current, { ...change, expectedVersion: current.version });
      result.deleted.push(id);
    }
  return result;
}

/** Connections imported at once: a read and a transaction each, well inside DynamoDB's per-table rates. */
const IMPORTS_AT_ONCE = 16;

/** One connection of the file into the table: what became of it. */
async function importOne(
  store: DynamoConnectionStore,
  document: { id: string },
  change: { principal: string; action: 'import' },
): Promise<'created' | 'updated' | 'unchanged' | 'keptEdits' | 'keptDeleted'> {
  const current = await store.read(document.id, true);
  const fileDigest = digestOf(document);
  if (!current) {
    // Deleted through the console or the admin API (not by a prune, audited as an import) from the file's copy as it
    // still is: an offboarded customer is not made again by a deploy for another.
    const [last] = await store.audit(document.id, 1);
    if (last?.action === 'delete' && last.fileDigest === fileDigest) return 'keptDeleted';
    await store.write(
      document.id,
      { document, enabled: true, changed: ['*'], fileDigest },
      { ...change, createOnly: true },
    );
    return 'created';
  }
  if (JSON.stringify(current.document) === JSON.stringify(document)) {
    // Imported before the digest was kept: it is recorded once, so the console's next changes are kept too.
    if (current.fileDigest !== fileDigest)
      await store.write(document.id, { document, enabled: current.enabled, changed: [], fileDigest }, change, current);
    return 'unchanged';
  }
  if (current.fileDigest === fileDigest) return 'keptEdits';
  const changed = changedFields(current.document, document);
  await store.write(document.id, { document, enabled: current.enabled, changed, fileDigest }, change, current);
  return 'updated';
}

/** What the file held of a connection, as a digest kept on its item. */
const digestOf = (document: unknown): string => createHash('sha256').update(JSON.stringify(document)).digest('hex');

/** The top-level fields whose values differ between two documents (the audit names fields, never values). */
export function changedFields(before: unknown, after: unknown): string[] {
  const a = (before ?? {}) as Record<string, unknown>;
  const b = (after ?? {}) as Record<string, unknown>;
  return [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .filter((key) => JSON.stringify(a[key]) !== JSON.stringify(b[key]))
    .sort();
}
