import { useEffect, useState } from 'preact/hooks';
import { api, when } from '../api';
import { type CheckLine, Checks, Field, Status } from '../ui';

interface Trigger {
  id: string;
  jobs: unknown;
  stage: { name?: string; id?: string };
  interview: { namePattern?: string; questions: unknown[] };
}
interface Stored {
  id: string;
  version: number;
  enabled: boolean;
  updatedAt: number;
  updatedBy: string;
  connection: { ats: string; triggers: Trigger[]; orders?: unknown } & Record<string, unknown>;
}
interface Stages {
  jobs: { id: string; name: string }[];
  job?: string;
  stages: { id: string; name: string }[];
}
type Audit = { at: string; principal: string; action: string; changed: string[]; version: number };

/** One connection: its triggers (with a stage picker from the ATS) and order sources, the doctor, links, audit. */
export function ConnectionPage(props: { id: string }) {
  const path = `/connections/${encodeURIComponent(props.id)}`;
  const [stored, setStored] = useState<Stored>();
  const [status, setStatus] = useState<{ text: string; kind?: 'error' | 'ok' }>();
  const [doctor, setDoctor] = useState<{ at?: number; lines: CheckLine[] }>();
  const [audit, setAudit] = useState<Audit[]>([]);
  const [confirmOff, setConfirmOff] = useState(false);
  const load = async () => {
    const [read, last, changes] = await Promise.all([
      api<Stored>('GET', path),
      api<{ doctor?: { at: number; lines: CheckLine[] } }>('GET', `${path}/doctor`),
      api<{ changes: Audit[] }>('GET', `${path}/audit`),
    ]);
    if (read.status !== 200) return setStatus({ text: read.body.error ?? 'not found', kind: 'error' });
    setStored(read.body);
    if (last.body.doctor) setDoctor(last.body.doctor);
    setAudit(changes.body.changes ?? []);
  };
  useEffect(() => void load(), [props.id]);
  if (!stored) return <Status text={status?.text ?? 'Loading…'} kind={status?.kind} />;

  const runDoctor = async () => {
    setStatus({ text: 'The doctor is checking the connection…' });
    const answer = await api<{ at: number; lines: CheckLine[] }>('POST', `${path}/doctor`);
    if (answer.status !== 200)
      return setStatus({ text: answer.body.error ?? 'the doctor could not run', kind: 'error' });
    setDoctor(answer.body);
    const failed = answer.body.lines.filter((l) => l.status === 'fail').length;
    setStatus({ text: failed ? `${failed} check(s) failed` : 'Every check passed', kind: failed ? 'error' : 'ok' });
  };
  const toggle = async () => {
    setConfirmOff(false);
    const action = stored.enabled ? 'disable' : 'enable';
    const answer = await api('POST', `${path}/${action}`, { version: stored.version });
    if (answer.status !== 200) return setStatus({ text: answer.body.error ?? 'refused', kind: 'error' });
    setStatus({ text: `Connection ${action}d`, kind: 'ok' });
    await load();
  };

  return (
    <>
      <h1>
        {stored.id} <small>{stored.connection.ats}</small> {!stored.enabled && <span class="badge">off</span>}
      </h1>
      <p>
        Version {stored.version}, changed {when(stored.updatedAt)} by {stored.updatedBy}.{' '}
        {/* Turning a customer off stops their invitations at once: asked first; turning on is not. */}
        <button type="button" onClick={() => (stored.enabled ? setConfirmOff(true) : void toggle())}>
          {stored.enabled ? 'Turn off' : 'Turn on'}
        </button>{' '}
        <button type="button" onClick={() => void runDoctor()}>
          Run the doctor
        </button>
      </p>
      {confirmOff && (
        <div class="confirm" role="alertdialog" aria-labelledby="turn-off">
          <p id="turn-off">
            Turn {stored.id} off? Nothing more is sent to its ATS or its candidates: its webhooks are answered and
            dropped, and its queued messages wait until it is turned on again.
          </p>
          <button type="button" onClick={() => void toggle()}>
            Turn it off
          </button>{' '}
          <button type="button" onClick={() => setConfirmOff(false)}>
            Cancel
          </button>
        </div>
      )}
      <Status text={status?.text} kind={status?.kind} />
      {doctor && (
        <section aria-labelledby="doctor-heading">
          <h2 id="doctor-heading">Doctor {doctor.at ? `(${when(doctor.at)})` : ''}</h2>
          <Checks lines={doctor.lines} />
        </section>
      )}
      <TriggersEditor stored={stored} path={path} onSaved={load} />
      <OrdersEditor stored={stored} path={path} onSaved={load} />
      <ConnectLink path={path} />
      <section aria-labelledby="audit-heading">
        <h2 id="audit-heading">Changes</h2>
        <ul>
          {audit
            .slice()
            .reverse()
            .map((a) => (
              <li key={a.at}>
                {`${when(a.at.split('#')[0])} ${a.principal}: ${a.action} `}
                {`(${a.changed.join(', ') || 'nothing'}) → version ${a.version}`}
              </li>
            ))}
        </ul>
      </section>
    </>
  );
}

/** Each trigger's stage, picked from the ATS's own stages (read through the adapter) or typed. */
function TriggersEditor(props: { stored: Stored; path: string; onSaved: () => Promise<void> }) {
  const { stored, path } = props;
  const [names, setNames] = useState(stored.connection.triggers.map((t) => t.stage.name ?? ''));
  const [stages, setStages] = useState<Stages>();
  const [error, setError] = useState<{ index: number; text: string }>();
  const [status, setStatus] = useState<string>();
  const loadStages = async (job?: string) => {
    setStatus(`Reading ${stored.connection.ats}'s stages…`);
    const answer = await api<Stages>('GET', `${path}/stages${job ? `?job=${encodeURIComponent(job)}` : ''}`);
    if (answer.status !== 200) return setStatus(answer.body.error ?? 'the stages could not be read');
    setStages(answer.body);
    setStatus(undefined);
  };
  const save = async (event: Event) => {
    event.preventDefault();
    const triggers = stored.connection.triggers.map((t, i) => ({ ...t, stage: { name: names[i] ?? '' } }));
    const answer = await api('PATCH', path, { patch: { triggers }, version: stored.version });
    if (answer.status === 400) {
      const index = Number(/triggers\.(\d+)/.exec(answer.body.field ?? '')?.[1] ?? 0);
      return setError({ index, text: answer.body.error ?? 'invalid' });
    }
    if (answer.status !== 200) return setStatus(answer.body.error ?? 'refused');
    setError(undefined);
    setStatus('Saved: every function serves it within its cache time');
    await props.onSaved();
  };
  return (
    <section aria-labelledby="triggers-heading">
      <h2 id="triggers-heading">Triggers</h2>
      <form onSubmit={save} aria-label="Triggers">
        <p>
          <button type="button" onClick={() => void loadStages()}>
            Pick from the ATS's stages
          </button>{' '}
          {stages && stages.jobs.length > 0 && (
            <label>
              Job{' '}
              <select value={stages.job} onChange={(e) => void loadStages(e.currentTarget.value)}>
                {stages.jobs.map((j) => (
                  <option value={j.id} key={j.id}>
                    {j.name}
                  </option>
                ))}
              </select>
            </label>
          )}
        </p>
        {stored.connection.triggers.map((t, i) => (
          <Field
            id={`trigger-${i}`}
            key={t.id}
            label={`Stage that invites to ${t.id} (${t.interview.questions.length} question${t.interview.questions.length === 1 ? '' : 's'})`}
            error={error?.index === i ? error.text : undefined}
          >
            {stages ? (
              <select
                id={`trigger-${i}`}
                value={names[i]}
                onChange={(e) => setNames(names.map((n, j) => (j === i ? e.currentTarget.value : n)))}
              >
                {!stages.stages.some((s) => s.name === names[i]) && <option value={names[i]}>{names[i]}</option>}
                {stages.stages.map((s) => (
                  <option value={s.name} key={s.id}>
                    {s.name}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={`trigger-${i}`}
                value={names[i]}
                onInput={(e) => setNames(names.map((n, j) => (j === i ? e.currentTarget.value : n)))}
              />
            )}
          </Field>
        ))}
        <button type="submit">Save the triggers</button>
      </form>
      <Status text={status} />
    </section>
  );
}

/** The assessment order sources (Greenhouse, Ashby, Kombo), as the connections file writes them. */
function OrdersEditor(props: { stored: Stored; path: string; onSaved: () => Promise<void> }) {
  const { stored, path } = props;
  const [text, setText] = useState(JSON.stringify(stored.connection.orders ?? {}, null, 2));
  const [error, setError] = useState<string>();
  const [status, setStatus] = useState<string>();
  const save = async (event: Event) => {
    event.preventDefault();
    let orders: unknown;
    try {
      orders = JSON.parse(text);
    } catch {
      return setError('orders: this is not JSON');
    }
    const empty = orders && typeof orders === 'object' && !Object.keys(orders).length;
    const answer = await api('PATCH', path, { patch: { orders: empty ? null : orders }, version: stored.version });
    if (answer.status === 400) return setError(answer.body.error);
    if (answer.status !== 200) return setStatus(answer.body.error ?? 'refused');
    setError(undefined);
    setStatus('Saved');
    await props.onSaved();
  };
  return (
    <section aria-labelledby="orders-heading">
      <h2 id="orders-heading">Order sources</h2>
      <form onSubmit={save} aria-label="Order sources">
        <Field id="orders" label="Orders from inside the ATS (JSON, as in the connections file)" error={error}>
          <textarea
            id="orders"
            rows={8}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
            aria-invalid={Boolean(error)}
          />
        </Field>
        <button type="submit">Save the order sources</button>
      </form>
      <Status text={status} />
    </section>
  );
}

/** A one-time link the customer opens to connect their own ATS; shown once. */
function ConnectLink(props: { path: string }) {
  const [key, setKey] = useState('');
  const [link, setLink] = useState<string>();
  const [error, setError] = useState<string>();
  const [revoked, setRevoked] = useState(false);
  const make = async (event: Event) => {
    event.preventDefault();
    const answer = await api<{ path: string; expiresAt: number; revoked?: boolean }>(
      'POST',
      `${props.path}/connect-link`,
      {
        ...(key.trim() ? { interviewApiKey: key.trim() } : {}),
      },
    );
    if (answer.status !== 201) return setError(answer.body.error ?? 'refused');
    setError(undefined);
    setKey('');
    setLink(`${location.origin}${location.pathname}${answer.body.path}`);
    setRevoked(answer.body.revoked === true);
  };
  return (
    <section aria-labelledby="link-heading">
      <h2 id="link-heading">Customer's connect link</h2>
      <form onSubmit={make} aria-label="Connect link">
        <Field
          id="interview-key"
          label="The customer's interview-service API key"
          error={error}
          hint="kept in the connection's secret, never shown again; leave empty if the secret has it"
        >
          <input id="interview-key" type="password" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        </Field>
        <button type="submit">Make a connect link</button>
      </form>
      {link && (
        <p>
          Send this link to the customer's ATS admin (it works until they finish, for 7 days at most; a link made after
          it replaces it):{' '}
          <a href={link} id="connect-link">
            {link}
          </a>
          {revoked && ' The link made before it no longer works.'}
        </p>
      )}
    </section>
  );
}
