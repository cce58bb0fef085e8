import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConnections } from '../../shared/config';
import { DynamoConnectionStore } from '../../shared/mapping/connections.records';
import { importConnections } from '../../shared/mapping/connections.import';
import { requireEnv } from '../_runtime/env';

/** What CloudFormation sends the custom resource (its Provider framework's onEvent: the CDK's custom-resources). */
interface ImportEvent {
  RequestType: 'Create' | 'Update' | 'Delete';
  PhysicalResourceId?: string;
  ResourceProperties?: { Prune?: string; FileHash?: string };
}

/**
 * `cdk deploy` with a connections file: its connections brought into the connections table, created or written as
 * their next version where they changed, left alone where not (importing the same file again changes nothing).
 * A connection created through the admin API is never deleted, unless the deploy asks (`-c pruneConnections=true`).
 * Removing the stack deletes no connection either: the table is retained.
 */
export async function handler(event: ImportEvent): Promise<{ PhysicalResourceId: string; Data?: object }> {
  const physical = event.PhysicalResourceId ?? 'connections-import';
  if (event.RequestType === 'Delete') return { PhysicalResourceId: physical };
  // The file travels in this function's bundle only; validated again, as `cdk synth` did.
  const path = join(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), 'connections.json');
  const document = JSON.parse(readFileSync(path, 'utf8')) as { connections?: { id: string }[] };
  parseConnections(document, 'the deployed connections file');
  const store = new DynamoConnectionStore({
    tables: { connections: requireEnv('CONNECTIONS_TABLE'), audit: requireEnv('CONNECTION_AUDIT_TABLE') },
  });
  const result = await importConnections(store, document.connections ?? [], {
    principal: 'cloudformation:cdk-deploy',
    prune: event.ResourceProperties?.Prune === 'true',
  });
  console.log(
    JSON.stringify({
      message: 'connections imported',
      created: result.created.length,
      updated: result.updated.length,
      unchanged: result.unchanged.length,
      // Changed in the console or through the admin API since the file last changed them: kept as changed.
      keptEdits: result.keptEdits,
      // Deleted in the console or through the admin API, the file's copy unchanged since: left deleted.
      keptDeleted: result.keptDeleted,
      notInFile: result.notInFile.length,
      deleted: result.deleted.length,
    }),
  );
  return {
    PhysicalResourceId: physical,
    Data: { Created: result.created.length, Updated: result.updated.length, Deleted: result.deleted.length },
  };
}
