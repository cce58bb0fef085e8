import type { TestProject } from 'vitest/node';
import { type EmulatorEndpoints, startEmulator } from '../../infra/local/emulators';

declare module 'vitest' {
  export interface ProvidedContext {
    /** DynamoDB Local and SQS, started once for the integration lane (test/helpers/local-stack.ts). */
    emulators: Pick<EmulatorEndpoints, 'dynamodb' | 'sqs'>;
  }
}

/**
 * The integration lane's global set-up: DynamoDB Local (a Java process) and the SQS emulator start once, and every
 * file works under tables and queues of its own prefix. SES stays one per file: its mail store has no prefix, and
 * files send to the same fixture addresses.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [dynamodb, sqs] = await Promise.all([startEmulator('dynamodb'), startEmulator('sqs')]);
  project.provide('emulators', { dynamodb: dynamodb.url, sqs: sqs.url });
  return async () => {
    await Promise.all([dynamodb.stop(), sqs.stop()]);
  };
}
