import { useEffect, useState } from 'preact/hooks';
import { api, when } from '../api';
import { Status } from '../ui';

type QueueName = 'stage' | 'report';
interface DeadLetter {
  messageId: string;
  kind: string;
  connectionId: string;
  atsApplicationId?: string;
  receives: number;
  sentAt: number;
}
interface Group {
  kind: string;
  reason: string;
  messages: DeadLetter[];
}
interface Failures {
  deadLetters: Record<QueueName, { count: number; groups: Group[] }>;
  audit: { at: number; detail: string }[];
}

/** The dead-letter queues by reason, a redrive that first says how many it moves, a retry of one, and the audit. */
export function FailuresPage() {
  const [failures, setFailures] = useState<Failures>();
  const [status, setStatus] = useState<{ text: string; kind?: 'error' | 'ok' }>();
  const [preview, setPreview] = useState<{ queue: QueueName; count: number }>();
  const load = async () => {
    const answer = await api<Failures>('GET', '/failures');
    if (answer.status === 200) setFailures(answer.body);
    else setStatus({ text: answer.body.error ?? 'the failures could not be read', kind: 'error' });
  };
  useEffect(() => void load(), []);
  if (!failures) return <Status text={status?.text ?? 'Loading the failures…'} kind={status?.kind} />;

  const look = async (queue: QueueName) => {
    const answer = await api<{ count: number }>('GET', `/failures/redrive?queue=${queue}`);
    if (answer.status !== 200) return setStatus({ text: answer.body.error ?? 'refused', kind: 'error' });
    setPreview({ queue, count: answer.body.count });
  };
  const redrive = async () => {
    if (!preview) return;
    const answer = await api<{ moving: number; count?: number }>('POST', '/failures/redrive', {
      queue: preview.queue,
      expected: preview.count,
    });
    if (answer.status === 409) {
      setPreview({ queue: preview.queue, count: answer.body.count ?? 0 });
      return setStatus({ text: answer.body.error ?? 'the count changed', kind: 'error' });
    }
    if (answer.status !== 202) return setStatus({ text: answer.body.error ?? 'refused', kind: 'error' });
    setPreview(undefined);
    setStatus({
      text:
        `Moving ${answer.body.moving} message(s) back to the ${preview.queue} queue: SQS moves them over the next ` +
        'seconds; the list below is as it was when read (reload to see the move)',
      kind: 'ok',
    });
    await load();
  };
  const retry = async (queue: QueueName, messageId: string) => {
    const answer = await api('POST', '/failures/retry', { queue, messageId });
    setStatus(
      answer.status === 200
        ? { text: `Message ${messageId} is back on the ${queue} queue`, kind: 'ok' }
        : { text: answer.body.error ?? 'refused', kind: 'error' },
    );
    // A redrive's count shown before this retry is no longer the queue's: it is looked at again.
    if (preview?.queue === queue) setPreview(undefined);
    await load();
  };

  return (
    <>
      <h1>Failures</h1>
      <Status text={status?.text} kind={status?.kind} />
      {(['stage', 'report'] as const).map((queue) => {
        const dlq = failures.deadLetters[queue];
        return (
          <section key={queue} aria-labelledby={`${queue}-heading`}>
            <h2 id={`${queue}-heading`}>
              The {queue} queue's dead letters: {dlq.count}
            </h2>
            {dlq.count > 0 && (
              <p>
                <button type="button" onClick={() => void look(queue)}>
                  Redrive the {queue} DLQ…
                </button>
              </p>
            )}
            {preview?.queue === queue && (
              <div class="confirm" role="alertdialog" aria-labelledby={`${queue}-preview`}>
                <p id={`${queue}-preview`}>
                  This moves {preview.count} message{preview.count === 1 ? '' : 's'} back to the {queue} queue. Each is
                  worked again; a step done before is not done twice.
                </p>
                <button type="button" onClick={() => void redrive()}>
                  Move {preview.count} message{preview.count === 1 ? '' : 's'}
                </button>{' '}
                <button type="button" onClick={() => setPreview(undefined)}>
                  Cancel
                </button>
              </div>
            )}
            {dlq.groups.map((group) => (
              <table key={`${group.kind}-${group.reason}`}>
                <caption>
                  {group.kind}: {group.reason} ({group.messages.length})
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Message</th>
                    <th scope="col">Connection</th>
                    <th scope="col">Application</th>
                    <th scope="col" title="SQS counts every read of a message, this page's too">
                      Receives
                    </th>
                    <th scope="col">First sent</th>
                    <th scope="col">
                      <span class="sr-only">Action</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {group.messages.map((m) => (
                    <tr key={m.messageId}>
                      <td>
                        <code>{m.messageId.slice(0, 8)}</code>
                      </td>
                      <td>{m.connectionId}</td>
                      <td>
                        {m.atsApplicationId ? (
                          <a href={candidateHref(m.connectionId, m.atsApplicationId)}>{m.atsApplicationId}</a>
                        ) : (
                          '—'
                        )}
                      </td>
                      <td>{m.receives}</td>
                      <td>{when(m.sentAt)}</td>
                      <td>
                        <button
                          type="button"
                          aria-label={`Retry message ${m.messageId}`}
                          onClick={() => void retry(queue, m.messageId)}
                        >
                          Retry this one
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ))}
          </section>
        );
      })}
      <section aria-labelledby="audit-heading">
        <h2 id="audit-heading">Operators' actions</h2>
        <ul>
          {failures.audit.map((a) => (
            <li key={`${a.at}-${a.detail}`}>
              {when(a.at)}: {a.detail}
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}

const candidateHref = (connectionId: string, applicationId: string) =>
  `#/candidates/${encodeURIComponent(connectionId)}/${encodeURIComponent(applicationId)}`;
