import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import type { FunctionName } from '../../infra/aws/functions';
import { bundleOptions } from '../bench/bundles';

/** The bundle as cdk synth builds it, unminified so its import lines can be read, in memory. */
async function bundle(name: FunctionName): Promise<string> {
  const result = await build({ ...bundleOptions(name, { minify: false }), write: false });
  return result.outputFiles[0]!.text;
}

const staticImportOf = (code: string, module: string) =>
  code.split('\n').some((line) => line.startsWith('import ') && line.includes(`"${module}"`));

describe('Bundles: what each function loads at cold start', () => {
  it.each(['InviteWorker', 'WritebackWorker'] as const)(
    '%s loads the SQS client only when it defers a message, not at import',
    async (name) => {
      const code = await bundle(name);
      expect(staticImportOf(code, '@aws-sdk/client-sqs')).toBe(false);
      expect(code).toContain('import("@aws-sdk/client-sqs")');
    },
  );

  it('loads the mail client in InviteWorker, which e-mails invites, and not in WritebackWorker', async () => {
    expect(staticImportOf(await bundle('WritebackWorker'), '@aws-sdk/client-sesv2')).toBe(false);
    expect(staticImportOf(await bundle('InviteWorker'), '@aws-sdk/client-sesv2')).toBe(true);
  });

  it('the ATS webhook, which enqueues on every delivery, loads it at import', async () => {
    expect(staticImportOf(await bundle('AtsWebhook'), '@aws-sdk/client-sqs')).toBe(true);
  });
});
