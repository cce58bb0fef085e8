import { useEffect, useState } from 'preact/hooks';
import { api, when } from '../api';
import { Field, Status } from '../ui';

interface Row {
  id: string;
  ats: string;
  enabled: boolean;
  version: number;
  today: Partial<Record<'Invited' | 'WrittenBack' | 'Failed' | 'Deferred' | 'DeadLettered', number>>;
  lastWebhookAt?: number;
  lastWriteBackAt?: number;
  doctor?: { at: number; passed: number; failed: number };
  rateLimitedUntil?: number;
}

interface Overview {
  connections: Row[];
  cursor?: string;
  deadLetters: Record<'stage' | 'report', number>;
}

/** Every customer's health at a glance: the doctor, the last webhook and write-back, today's counts, rate limiting. */
export function ConnectionsPage() {
  const [overview, setOverview] = useState<Overview>();
  const [cursors, setCursors] = useState<string[]>([]);
  const [error, setError] = useState<string>();
  const cursor = cursors.at(-1);
  useEffect(() => {
    void api<Overview>('GET', `/overview?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`).then(
      (answer) => (answer.status === 200 ? setOverview(answer.body) : setError(answer.body.error)),
    );
  }, [cursor]);
  if (error) return <Status text={error} kind="error" />;
  if (!overview) return <Status text="Loading the connections…" />;
  const dlq = overview.deadLetters.stage + overview.deadLetters.report;
  // By id, so a customer is found where the eye expects them (the table answers in its own order).
  const connections = [...overview.connections].sort((a, b) => a.id.localeCompare(b.id));
  return (
    <>
      <h1>Connections</h1>
      <p>
        {dlq ? (
          <a href="#/failures" class="warn">
            {dlq} message{dlq === 1 ? '' : 's'} in the dead-letter queues
          </a>
        ) : (
          'The dead-letter queues are empty.'
        )}{' '}
        <a href="#/new" class="button">
          Add a connection
        </a>
      </p>
      <FindCandidate connections={connections.map((c) => c.id)} />
      <table>
        <caption>Each connection today (counts since midnight UTC; times in your browser's zone)</caption>
        <thead>
          <tr>
            <th scope="col">Connection</th>
            <th scope="col">Doctor</th>
            <th scope="col">Last webhook</th>
            <th scope="col">Last write-back</th>
            <th scope="col">Invited</th>
            <th scope="col">Written back</th>
            <th scope="col">Failed</th>
            <th scope="col">Deferred</th>
            <th scope="col">To a DLQ</th>
            <th scope="col">Rate limited</th>
          </tr>
        </thead>
        <tbody>
          {connections.map((c) => (
            <tr key={c.id}>
              <th scope="row">
                <a href={`#/connections/${encodeURIComponent(c.id)}`}>{c.id}</a> <small>{c.ats}</small>
                {!c.enabled && <span class="badge">off</span>}
              </th>
              <td>
                {c.doctor ? (
                  <span class={c.doctor.failed ? 'fail' : 'pass'} title={when(c.doctor.at)}>
                    {c.doctor.failed ? `✗ ${c.doctor.failed} failing` : `✓ ${c.doctor.passed} passed`}
                  </span>
                ) : (
                  'not run'
                )}
              </td>
              <td>{when(c.lastWebhookAt)}</td>
              <td>{when(c.lastWriteBackAt)}</td>
              <td>{c.today.Invited ?? 0}</td>
              <td>{c.today.WrittenBack ?? 0}</td>
              <td>{c.today.Failed ?? 0}</td>
              <td>{c.today.Deferred ?? 0}</td>
              <td>{c.today.DeadLettered ?? 0}</td>
              <td>{c.rateLimitedUntil ? `until ${new Date(c.rateLimitedUntil).toLocaleTimeString()}` : 'no'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p>
        {cursors.length > 0 && (
          <button type="button" onClick={() => setCursors(cursors.slice(0, -1))}>
            Previous page
          </button>
        )}
        {overview.cursor && (
          <button type="button" onClick={() => setCursors([...cursors, overview.cursor as string])}>
            Next page
          </button>
        )}
      </p>
    </>
  );
}

/** A candidate, found by their ATS application id. */
function FindCandidate(props: { connections: string[] }) {
  const [connection, setConnection] = useState(props.connections[0] ?? '');
  const [application, setApplication] = useState('');
  const submit = (event: Event) => {
    event.preventDefault();
    location.hash = `#/candidates/${encodeURIComponent(connection)}/${encodeURIComponent(application.trim())}`;
  };
  return (
    <form class="inline" onSubmit={submit} aria-label="Find a candidate">
      <Field id="find-connection" label="Connection">
        <input
          id="find-connection"
          list="connection-ids"
          value={connection}
          onInput={(e) => setConnection(e.currentTarget.value)}
          required
        />
        <datalist id="connection-ids">
          {props.connections.map((id) => (
            <option value={id} key={id} />
          ))}
        </datalist>
      </Field>
      <Field id="find-application" label="ATS application id">
        <input
          id="find-application"
          value={application}
          onInput={(e) => setApplication(e.currentTarget.value)}
          required
        />
      </Field>
      <button type="submit">Find the candidate</button>
    </form>
  );
}
