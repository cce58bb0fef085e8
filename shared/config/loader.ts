import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { connectionSchema, connectionsFileSchema, type Connection } from './connection.schema';
import { ConfigError } from './errors';
import type { ConnectionReader, StoredConnection } from './connection-source';
import { describeFirstIssue, describeUnknownField, issueMessage, unknownFields } from '../validation';
import { errorMessage } from '../errors';

/**
 * Validates a connections document. Errors name the connection and the field:
 * `connections[1] (acme-greenhouse).triggers.0.stage: needs an id, idsByJob or a name`.
 */
export function parseConnections(
  document: unknown,
  source = 'connections file',
  /** Refuse a field the schema does not know (a file a person wrote); off for connections already stored. */
  options: { unknownFields?: 'refuse' | 'ignore' } = {},
): Connection[] {
  const file = v.safeParse(connectionsFileSchema, document);
  if (!file.success) throw new ConfigError(`${source}: ${describeFirstIssue(file.issues).message}`);
  const connections: Connection[] = [];
  const problems: string[] = [];
  file.output.connections.forEach((raw, index) => {
    const parsed = v.safeParse(connectionSchema, raw);
    const id = typeof (raw as { id?: unknown })?.id === 'string' ? ` (${(raw as { id: string }).id})` : '';
    // A field the schema does not know is a typo a person made: a rule misspelt would be a rule silently gone.
    const unknown = options.unknownFields === 'ignore' ? [] : unknownFields(connectionSchema, raw).slice(0, 3);
    for (const field of unknown) problems.push(`connections[${index}]${id}.${describeUnknownField(field)}`);
    if (parsed.success && !unknown.length) connections.push(parsed.output);
    else if (!parsed.success)
      for (const issue of parsed.issues.slice(0, 3))
        problems.push(`connections[${index}]${id}.${v.getDotPath(issue) ?? '(root)'}: ${issueMessage(issue)}`);
  });
  const ids = connections.map((c) => c.id);
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate) problems.push(`connections: id ${duplicate} is used twice`);
  // A Kombo integration is one customer's ATS: served by two connections, each would take its orders.
  const integrations = connections.flatMap((c) => (c.orders?.kombo?.integrations ?? []).map((i) => [i, c.id]));
  const shared = integrations.find(([i], index) => integrations.findIndex(([j]) => j === i) !== index);
  if (shared) problems.push(`connections: Kombo integration ${shared[0]} is listed by more than one connection`);
  if (problems.length) throw new ConfigError(`${source} is invalid:\n  ${problems.join('\n  ')}`);
  return connections;
}

/**
 * Fills the `${NAME}` placeholders of a connections file (the local file's sandbox URLs, which `npm start` writes to
 * its stack.json); a name without a value is an error naming it, never an empty string.
 */
export function fillPlaceholders(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\$\{([A-Z0-9_]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined)
      throw new ConfigError(
        `the connections file uses \${${name}}, which only the local stack fills in ` +
          '(npm start --config FILE, or ops connections put FILE while it runs): put the URL itself there',
      );
    return value;
  });
}

function readConnectionsDocument(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read the connections file ${path}: ${errorMessage(error)}`, { cause: error });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path} is not valid JSON: ${errorMessage(error)}`, { cause: error });
  }
}

/** The whole file, every connection validated: what `cdk synth` and the local runner check before anything runs. */
export function loadConnectionsFile(path: string): Connection[] {
  return parseConnections(readConnectionsDocument(path), path);
}

/**
 * The connections a function serves. A webhook or a worker needs one connection, so with the file behind it
 * (`fromFile`) each connection is validated the first time it is asked for: a cold start with 1,000 connections
 * parses the JSON and validates one, not 1,000 (the whole file was validated at `cdk synth`).
 */
export class ConnectionRegistry implements ConnectionReader {
  private readonly byId = new Map<string, Connection>();
  private readonly raw = new Map<string, { entry: unknown; index: number }>();
  private readonly source: string;

  public constructor(connections: readonly Connection[] = [], source = 'connections file') {
    for (const connection of connections) this.byId.set(connection.id, connection);
    this.source = source;
  }

  public static fromFile(path: string): ConnectionRegistry {
    const document = readConnectionsDocument(path);
    const file = v.safeParse(connectionsFileSchema, document);
    if (!file.success) throw new ConfigError(`${path}: ${describeFirstIssue(file.issues).message}`);
    const registry = new ConnectionRegistry([], path);
    file.output.connections.forEach((entry, index) => {
      const id = (entry as { id?: unknown } | null)?.id;
      if (typeof id === 'string' && !registry.raw.has(id)) registry.raw.set(id, { entry, index });
    });
    return registry;
  }

  public get(id: string): Connection | undefined {
    const known = this.byId.get(id);
    if (known) return known;
    const raw = this.raw.get(id);
    if (!raw) return undefined;
    const { entry, index } = raw;
    const parsed = v.safeParse(connectionSchema, entry);
    if (!parsed.success)
      throw new ConfigError(
        `${this.source} is invalid: connections[${index}] (${id}).${describeFirstIssue(parsed.issues).message}`,
      );
    this.byId.set(id, parsed.output);
    return parsed.output;
  }

  /** The file's entry as a stored connection (version 1, enabled): what the functions read where no table is set. */
  public async read(id: string): Promise<StoredConnection | undefined> {
    const document = this.raw.get(id)?.entry ?? this.byId.get(id);
    if (document === undefined) return undefined;
    return { id, document, version: 1, enabled: true, updatedAt: 0, updatedBy: this.source };
  }

  public all(): Connection[] {
    for (const id of this.raw.keys()) this.get(id);
    return [...this.byId.values()];
  }
}
