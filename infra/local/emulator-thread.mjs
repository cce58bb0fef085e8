// Local SQS or local SES on a thread of its own (infra/local/emulators.ts): their answers then do not wait behind the
// sandboxes, the gateway and the event sources sharing the stack's event loop, as a busy machine made them do
// (SES answering after the SDK's 15-s timeout). Plain JavaScript: a worker thread loads no TypeScript.
import { parentPort, workerData } from 'node:worker_threads';
import { createSqsServer } from 'local-aws-sqs';
import sesModule from 'aws-ses-v2-local';

const startSesServer = sesModule.default ?? sesModule;
const { kind, port } = workerData;
const server =
  kind === 'sqs'
    ? await createSqsServer({
        port,
        hostname: '127.0.0.1',
        emulateQueueCreationLifecycle: false,
        emulateLazyQueues: false,
      })
    : await startSesServer({ host: '127.0.0.1', port });
// Node's servers close a connection idle for 5 s; a client that reuses it at that moment meets a reset before any
// answer. AWS's endpoints keep idle connections far longer, and an SES call (one attempt: a reset is an e-mail that may
// have gone, never resent) met that reset here, its candidate left without the invitation: SES keeps idle connections
// for the length of any local run. SQS's clients try again after a reset, and keep Node's default.
if (kind === 'ses') server.keepAliveTimeout = 15 * 60_000;
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  if ('closeAllConnections' in server) server.closeAllConnections();
  server.close(() => parentPort.postMessage('stopped'));
});
parentPort.postMessage('ready');
