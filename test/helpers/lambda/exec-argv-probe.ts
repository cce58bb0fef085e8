import { join } from 'node:path';
import { startLocalFunction } from '../../../infra/local/lambda-runtime';

// Run by test/integration/local/lambda-runtime.test.ts in a node process of its own, started with the node options
// under test: prints that process's options and those of an environment it starts.
const fn = startLocalFunction({
  name: 'InviteWorker',
  maxEnvironments: 1,
  entry: join(import.meta.dirname, 'module-state.handler.ts'),
});
try {
  const answer = (await fn.invoke({}, 10_000)) as { execArgv: string[] };
  console.log(JSON.stringify({ process: process.execArgv, environment: answer.execArgv }));
} finally {
  await fn.stop();
}
