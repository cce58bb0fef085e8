import { lazyQueuePublisher } from '../../shared/queue/lazy-publisher';
import { DynamoSeenChanges } from '../../shared/mapping/seen-changes.records';
import { HINT_SUBJECT, type HintedChangesDependencies } from '../../shared/pipeline/changes-hinted.use-case';
import { queueLedger } from './store';
import { createLogger } from '../../shared/observability/logger';
import { ENV, requireEnv, tableNames } from './env';
import { connectionContext } from './work-context';

let deps: HintedChangesDependencies | undefined;

/**
 * What a read of changed applications needs (shared/pipeline/changes-hinted.use-case.ts), made on its first use: the
 * connection's adapter, what was seen of each application (the events table), and the stage queue the entries and
 * exits it finds go on, each as the webhook of a directly called ATS would have put them.
 */
export function hintDependencies(): HintedChangesDependencies {
  if (deps) return deps;
  // The SQS client loads on the first read's messages only, not in every cold start of the invite worker.
  const publisher = lazyQueuePublisher();
  deps = {
    contextFor: connectionContext,
    logger: createLogger('changes-hinted'),
    seen: new DynamoSeenChanges(tableNames().events),
    enqueue: async (messages) => {
      const entries = messages.map((message) => ({ message, delaySeconds: 0 }));
      const sent = await publisher.publishDelayed(requireEnv(ENV.stageQueueUrl), entries);
      // Nothing is recorded seen unless every message went: the read is made again, and the claims take each once.
      if (sent.some((ok) => !ok)) throw new Error('SQS did not take every stage entry found: the read is made again');
    },
    release: (connectionId) => queueLedger().forgetEnqueued(connectionId, [HINT_SUBJECT]),
  };
  return deps;
}
