import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ConnectorStack } from '../../infra/aws/connector-stack';
import { type CfnTemplate, checkAwsCalls, type LocalNames, type Violation } from '../../infra/local/iam-conformance';
import type { AwsCall } from '../../infra/local/aws-calls';
import type { LocalStack } from '../../infra/local/local-stack';
import { cdkTestContext } from './cdk-context';

/** The path of a queue URL: the runner and the functions reach the same queue through different hosts. */
/** A queue's name: the last segment of its URL (`…/000000000000/name`) or ARN (`arn:aws:sqs:…:name`). */
const queuePath = (url: string) => url.split(/[/:]/).pop() ?? url;

/** The stack `cdk synth` writes for the local stack's connections, and the local names of its resources. */
export function synthesizeForLocal(stack: LocalStack, workDir: string): { template: CfnTemplate; names: LocalNames } {
  const app = new App({ outdir: join(workDir, 'cdk.out'), context: cdkTestContext() });
  const synthesized = new ConnectorStack(app, 'Local', {
    connectionsFile: join(workDir, 'connections.json'),
    mailFrom: 'talent@demo.example.com',
    alarmEmail: 'oncall@demo.example.com',
    secretsPrefix: 'connector/',
  });
  return {
    template: Template.fromStack(synthesized).toJSON() as CfnTemplate,
    names: {
      tables: {
        [stack.tables.jobs]: 'JobsTable',
        [stack.tables.applications]: 'ApplicationsTable',
        [stack.tables.events]: 'EventsTable',
        [stack.tables.orders]: 'OrdersTable',
        [stack.tables.connections]: 'ConnectionsTable',
        [stack.tables.connectionAudit]: 'ConnectionAuditTable',
        [stack.tables.activity]: 'ActivityTable',
      },
      queues: {
        [queuePath(stack.queues.stage.url)]: 'StageEventsQueue',
        [queuePath(stack.queues.report.url)]: 'ReportEventsQueue',
        [queuePath(stack.queues.stage.dlqUrl)]: 'StageEventsDlq',
        [queuePath(stack.queues.report.dlqUrl)]: 'ReportEventsDlq',
      },
    },
  };
}

/** The calls the local stack recorded, queues named by their path. */
export function recordedCalls(stack: LocalStack): AwsCall[] {
  return (stack.awsCalls ?? []).map((c) =>
    c.resource.startsWith('queue:') ? { ...c, resource: `queue:${queuePath(c.resource.slice('queue:'.length))}` } : c,
  );
}

/** Every recorded call against the synthesized policies: how many distinct calls, and those not granted. */
export function checkLocalCalls(stack: LocalStack, workDir: string): { checked: number; violations: Violation[] } {
  const { template, names } = synthesizeForLocal(stack, workDir);
  const calls = recordedCalls(stack);
  const distinct = new Set(calls.map((c) => `${c.fn}|${c.action}|${c.resource}`)).size;
  return { checked: distinct, violations: checkAwsCalls(template, calls, names) };
}
