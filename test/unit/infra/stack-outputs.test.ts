import { describe, expect, it } from 'vitest';
import { OPS_OUTPUTS, readOpsOutputs } from '../../../infra/aws/stack-outputs';

const fromDeploy = Object.fromEntries(Object.values(OPS_OUTPUTS).map(({ output }) => [output, `value-of-${output}`]));

describe('Function: readOpsOutputs', () => {
  it('reads every value from the outputs file of cdk deploy', () => {
    const read = readOpsOutputs(fromDeploy, {});
    expect(read).toEqual({
      values: expect.objectContaining({
        applicationsTable: 'value-of-ApplicationsTable',
        stageDlqUrl: 'value-of-StageDlqUrl',
      }),
    });
  });

  it('falls back to the environment variable beside each output', () => {
    const env = Object.fromEntries(Object.values(OPS_OUTPUTS).map(({ env: name }) => [name, `env-${name}`]));
    const read = readOpsOutputs({ JobsTable: 'from-file' }, env);
    expect(read).toEqual({
      values: expect.objectContaining({ jobsTable: 'from-file', reportQueueUrl: 'env-REPORT_QUEUE_URL' }),
    });
  });

  it('names each missing output and its variable instead of answering in part', () => {
    const { JobsTable: _jobs, ReportDlqUrl: _dlq, ...partial } = fromDeploy;
    expect(readOpsOutputs(partial, { JOBS_TABLE: '' })).toEqual({
      missing: ['JobsTable (or JOBS_TABLE)', 'ReportDlqUrl (or REPORT_DLQ_URL)'],
    });
  });
});
