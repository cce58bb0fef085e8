import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { connectionSchema, connectionsFileSchema, type Connection } from './connection.schema';
import { ConfigError } from './errors';
import { describeFirstIssue } from '../validation';

/**
 * Validates a connections document. Errors name the connection and the field:
 * `connections[1] (acme-greenhouse).triggers.0.stage: needs an id or a name`.
 */
export function parseConnections(document: unknown, source = 'connections file'): Connection[] {
  const file = v.safeParse(connectionsFileSchema, document);
  if (!file.success) throw new ConfigError(`${source}: ${describeFirstIssue(file.issues).message}`);
  const connections: Connection[] = [];
  const problems: string[] = [];
  file.output.connections.forEach((raw, index) => {
    const parsed = v.safeParse(connectionSchema, raw);
    const id = typeof (raw as { id?: unknown })?.id === 'string' ? ` (${(raw as { id: string }).id})` : '';
    if (parsed.success) connections.push(parsed.output);
    else
      for (const issue of parsed.issues.slice(0, 3))
        problems.push(`connections[${index}]${id}.${v.getDotPath(issue) ?? '(root)'}: ${issue.message}`);
  });
  const ids = connections.map((c) => c.id);
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate) problems.push(`connections: id ${duplicate} is used twice`);
  if (problems.length) throw new ConfigError(`${source} is invalid:\n  ${problems.join('\n  ')}`);
  return connections;
}

export function loadConnectionsFile(path: string): Connection[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read the connections file ${path}: ${(error as Error).message}`, { cause: error });
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  return parseConnections(document, path);
}

export class ConnectionRegistry {
  private readonly byId: Map<string, Connection>;

  public constructor(connections: readonly Connection[]) {
    this.byId = new Map(connections.map((c) => [c.id, c]));
  }

  public get(id: string): Connection | undefined {
    return this.byId.get(id);
  }

  public all(): Connection[] {
    return [...this.byId.values()];
  }
}
