import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { ConnectorStack } from '../../infra/aws/connector-stack';
import { parseConnections } from '../../shared/config';
import { cdkTestContext } from './cdk-context';
import { connectionsDocument, EXAMPLE } from './many-connections';

// CloudFormation and IAM quotas (AWS CloudFormation User Guide, "Quotas"; IAM User Guide, "IAM and AWS STS
// quotas"): what a stack for a vendor's whole customer base must stay under, whatever the number of connections.
export const QUOTAS = {
  outputs: 200,
  resources: 500,
  templateBytes: 1_000_000,
  /** All inline policies of one role together, without whitespace. */
  roleInlinePolicyChars: 10_240,
  managedPolicyChars: 6_144,
} as const;

type Template = {
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  Outputs?: Record<string, unknown>;
};

export interface StackFigures {
  outputs: number;
  resources: number;
  templateBytes: number;
  /** The template's size with the stack's name (which resource names and the sign-in domain carry) set aside. */
  templateBytesWithoutName: number;
  largestRoleInlinePolicyChars: number;
  largestManagedPolicyChars: number;
}

/** Synthesizes the stack for `count` connections (no bundling) and measures it against the quotas. */
export function measureStack(count: number, outdir: string): StackFigures {
  const app = new App({ outdir, context: cdkTestContext() });
  // The file `cdk deploy` imports into the connections table: validated here as the app validates it.
  const document = connectionsDocument(count);
  parseConnections(document);
  mkdirSync(outdir, { recursive: true });
  const connectionsFile = join(outdir, `connections-${count}.json`);
  writeFileSync(connectionsFile, JSON.stringify(document));
  const stackName = `Scale${count}`;
  new ConnectorStack(app, stackName, { connectionsFile, ...EXAMPLE.deploy });
  const assembly = app.synth();
  const text = readFileSync(join(assembly.directory, `${stackName}.template.json`), 'utf8');
  const template = JSON.parse(text) as Template;
  const resources = Object.values(template.Resources);
  const inlineByRole = new Map<string, number>();
  for (const policy of resources.filter((r) => r.Type === 'AWS::IAM::Policy')) {
    const size = JSON.stringify(policy.Properties.PolicyDocument).length;
    for (const role of (policy.Properties.Roles as unknown[] | undefined) ?? [])
      inlineByRole.set(JSON.stringify(role), (inlineByRole.get(JSON.stringify(role)) ?? 0) + size);
  }
  const managed = resources
    .filter((r) => r.Type === 'AWS::IAM::ManagedPolicy')
    .map((r) => JSON.stringify(r.Properties.PolicyDocument).length);
  return {
    outputs: Object.keys(template.Outputs ?? {}).length,
    resources: resources.length,
    templateBytes: Buffer.byteLength(JSON.stringify(template)),
    templateBytesWithoutName: Buffer.byteLength(JSON.stringify(template).replace(new RegExp(stackName, 'gi'), '')),
    largestRoleInlinePolicyChars: Math.max(0, ...inlineByRole.values()),
    largestManagedPolicyChars: Math.max(0, ...managed),
  };
}
