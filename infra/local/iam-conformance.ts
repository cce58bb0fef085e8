import type { FunctionName } from '../aws/functions';
import { FUNCTION_ENTRIES } from '../aws/functions';
import type { AwsCall } from './aws-calls';

type Intrinsic = string | { Ref?: string; 'Fn::GetAtt'?: [string, string]; 'Fn::Join'?: [string, Intrinsic[]] };
interface Statement {
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource: Intrinsic | Intrinsic[];
}
/** A synthesized CloudFormation template, as far as the check reads it. */
export interface CfnTemplate {
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
}

/** What the local stack calls its resources, by the stack's construct ids (the logical ids without their hash). */
export interface LocalNames {
  tables: Record<
    string,
    | 'JobsTable'
    | 'ApplicationsTable'
    | 'EventsTable'
    | 'OrdersTable'
    | 'ConnectionsTable'
    | 'ConnectionAuditTable'
    | 'ActivityTable'
  >;
  /** By the queue's name (the last segment of its URL or ARN). */
  queues: Record<string, 'StageEventsQueue' | 'ReportEventsQueue' | 'StageEventsDlq' | 'ReportEventsDlq'>;
}

export interface Violation {
  call: AwsCall;
  reason: string;
}

/** A logical id without the hash the CDK appends (`ApplicationsTable27AC2163` → `ApplicationsTable`). */
const constructId = (logicalId: string) => logicalId.replace(/[A-F0-9]{8}$/, '');

/** A resource of a policy as a string: attributes by construct id, references as `<Name>`. */
function render(resource: Intrinsic): string {
  if (typeof resource === 'string') return resource;
  if (resource['Fn::GetAtt']) return constructId(resource['Fn::GetAtt'][0]);
  if (resource.Ref) return `<${resource.Ref}>`;
  if (resource['Fn::Join']) return resource['Fn::Join'][1].map(render).join(resource['Fn::Join'][0]);
  return JSON.stringify(resource);
}

/** IAM's wildcards: `*` any run of characters, `?` one character. */
const glob = (pattern: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );

/** Each function's Allow statements: every policy attached to its role. */
export function statementsByFunction(template: CfnTemplate): Record<FunctionName, Statement[]> {
  const resources = Object.entries(template.Resources);
  const result = {} as Record<FunctionName, Statement[]>;
  for (const name of Object.keys(FUNCTION_ENTRIES) as FunctionName[]) {
    const fn = resources.find(([id, r]) => r.Type === 'AWS::Lambda::Function' && constructId(id) === name);
    if (!fn) throw new Error(`the template has no function ${name}`);
    const role = (fn[1].Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    result[name] = resources
      .filter(([, r]) => r.Type === 'AWS::IAM::Policy')
      .filter(([, r]) => JSON.stringify(r.Properties.Roles).includes(`"${role}"`))
      .flatMap(([, r]) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
      .filter((s) => s.Effect === 'Allow');
  }
  return result;
}

/** The ARN (or construct id) a call's resource has in the deployed stack, in the form `render` gives policies. */
function deployedResource(resource: string, names: LocalNames): string | undefined {
  const [kind, ...rest] = resource.split(':');
  const value = rest.join(':');
  const arn = (service: string, suffix: string) =>
    `arn:<AWS::Partition>:${service}:<AWS::Region>:<AWS::AccountId>:${suffix}`;
  if (kind === 'table') {
    const [table, index] = value.split('/index/');
    const id = names.tables[table as string];
    return id && (index ? `${id}/index/${index}` : id);
  }
  if (kind === 'queue') return names.queues[value];
  if (kind === 'identity') return arn('ses', `identity/${value}`);
  // Secrets Manager adds six characters to a secret's name in its ARN.
  if (kind === 'secret') return arn('secretsmanager', `secret:${value}-AbCdEf`);
  return undefined;
}

/**
 * Every recorded call against its function's synthesized policy: a call is granted when one Allow statement
 * names its action (wildcards as IAM reads them) on its resource. Returns the calls that are not.
 */
export function checkAwsCalls(template: CfnTemplate, calls: readonly AwsCall[], names: LocalNames): Violation[] {
  const statements = statementsByFunction(template);
  const violations: Violation[] = [];
  const seen = new Set<string>();
  for (const call of calls) {
    const key = `${call.fn}|${call.action}|${call.resource}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const target = deployedResource(call.resource, names);
    if (!target) {
      violations.push({ call, reason: `no resource of the stack is ${call.resource}` });
      continue;
    }
    const granted = statements[call.fn].some(
      (s) =>
        [s.Action].flat().some((action) => glob(action).test(call.action)) &&
        [s.Resource].flat().some((resource) => glob(render(resource)).test(target)),
    );
    if (!granted) violations.push({ call, reason: `${call.fn} may not ${call.action} on ${target}` });
  }
  return violations;
}
