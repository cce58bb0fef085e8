import { useEffect, useState } from 'preact/hooks';
import { connectApi, when } from '../api';
import { type CheckLine, Checks, Field, Status } from '../ui';

interface Summary {
  connectionId: string;
  ats: string;
  expiresAt: number;
  credentials: string[];
  triggers: { id: string; stage: { name?: string }; interview: string; questions: number }[];
  webhook: { url: string; registration: 'api' | 'by-hand' | 'none'; steps: string[]; secretSaved?: boolean };
}
interface Stages {
  jobs: { id: string; name: string }[];
  job?: string;
  stages: { id: string; name: string }[];
}

/** The ATSs as their vendors write them. */
const ATS_NAMES: Record<string, string> = {
  greenhouse: 'Greenhouse',
  ashby: 'Ashby',
  lever: 'Lever',
  workable: 'Workable',
};

const LABELS: Record<string, string> = {
  atsApiKey: 'API key',
  atsClientId: 'OAuth client id (Harvest v3)',
  atsClientSecret: 'OAuth client secret',
};

/** A key for Greenhouse to sign its webhooks with, made here: the customer types it into Greenhouse. */
function newSigningKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(24)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * A customer connects their own ATS through a one-time link: credentials (kept in the connection's secret, never
 * shown again), the stage that invites and the interview it sends, the webhooks, then the doctor's checks.
 */
export function ConnectPage(props: { token: string }) {
  const call = <T,>(method: string, path: string, body?: unknown) => connectApi<T>(props.token, method, path, body);
  const [summary, setSummary] = useState<Summary>();
  const [gone, setGone] = useState<string>();
  const [values, setValues] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [works, setWorks] = useState<{ ok: boolean; text: string }>();
  const [signingKey] = useState(newSigningKey);
  const [stages, setStages] = useState<Stages>();
  const [choice, setChoice] = useState<{ triggerId: string; stageName: string }>();
  const [stageStatus, setStageStatus] = useState<string>();
  const [webhooks, setWebhooks] = useState<CheckLine[]>();
  const [doctor, setDoctor] = useState<CheckLine[]>();
  const [done, setDone] = useState(false);
  const [finishStatus, setFinishStatus] = useState<string>();
  /** This page's signing key went into the secret with credentials saved from it. */
  const [keySaved, setKeySaved] = useState(false);
  /** A Greenhouse key saved earlier: replaced by this page's only when the customer asks. */
  const [replaceKey, setReplaceKey] = useState(false);
  useEffect(() => {
    void call<Summary>('GET', '').then((a) => (a.status === 200 ? setSummary(a.body) : setGone(a.body.error)));
  }, [props.token]);
  if (done)
    return (
      <main class="narrow">
        <h1>Connected</h1>
        <p>Your ATS is connected. This link no longer works; ask your contact for a new one to change anything.</p>
      </main>
    );
  if (gone)
    return (
      <main class="narrow">
        <Status text={gone} kind="error" />
      </main>
    );
  if (!summary) return <Status text="Loading…" />;
  const greenhouse = summary.ats === 'greenhouse';
  // An ATS behind Kombo: the customer enters nothing; step 1 only checks that Kombo answers for it.
  const throughKombo = summary.ats === 'kombo';

  const saveCredentials = async (event: Event) => {
    event.preventDefault();
    setErrors({});
    setFinishStatus(undefined);
    // A key saved earlier stays unless the customer asks for the new one: Greenhouse's webhooks hold it.
    const newKey = greenhouse && (!summary.webhook.secretSaved || replaceKey);
    const body = { ...values, ...(newKey ? { atsWebhookSecret: signingKey } : {}) };
    const answer = await call<{ saved: boolean; works: boolean; what?: string; error?: string }>(
      'POST',
      '/credentials',
      body,
    );
    if (answer.status === 400) return setErrors({ [answer.body.field ?? '']: answer.body.error ?? 'invalid' });
    if (answer.status !== 200) return setWorks({ ok: false, text: answer.body.error ?? 'refused' });
    // The inputs are cleared: the credentials are kept only in the connection's secret.
    setValues({});
    if (answer.body.saved && newKey) setKeySaved(true);
    setWorks(
      answer.body.works
        ? { ok: true, text: `${throughKombo ? 'Kombo answers' : 'Saved, and they work'} (${answer.body.what})` }
        : {
            ok: false,
            text: answer.body.saved ? `Saved, but ${answer.body.error}` : `Not saved: ${answer.body.error}`,
          },
    );
    if (answer.body.works) await loadStages();
  };
  const loadStages = async (job?: string) => {
    const answer = await call<Stages>('GET', `/stages${job ? `?job=${encodeURIComponent(job)}` : ''}`);
    if (answer.status !== 200) return setStageStatus(answer.body.error ?? 'the stages could not be read');
    setStages(answer.body);
    // The stage the connection was set up with, where the job has it; else none: the customer picks one, so no stage
    // is saved by a press of the button on whatever came first (a first stage invites every new applicant).
    const trigger = summary.triggers[0];
    const configured = answer.body.stages.find((stage) => stage.name === trigger?.stage.name)?.name;
    if (trigger) setChoice({ triggerId: trigger.id, stageName: configured ?? '' });
  };
  const saveStage = async (event: Event) => {
    event.preventDefault();
    if (!choice?.stageName) return setStageStatus('Choose the stage whose candidates are invited');
    const answer = await call('POST', '/trigger', choice);
    setStageStatus(
      answer.status === 200 ? `Candidates entering “${choice.stageName}” will be invited` : answer.body.error,
    );
  };
  const register = async () => {
    const answer = await call<{ lines: CheckLine[] }>('POST', '/webhooks');
    setWebhooks(answer.status === 200 ? answer.body.lines : [{ status: 'fail', what: answer.body.error ?? 'refused' }]);
  };
  const check = async () => {
    const answer = await call<{ lines: CheckLine[] }>('POST', '/doctor');
    setDoctor(answer.status === 200 ? answer.body.lines : [{ status: 'fail', what: answer.body.error ?? 'refused' }]);
  };
  const finish = async () => {
    const answer = await call('POST', '/finish');
    if (answer.status === 200) setDone(true);
    // The link is still good (credentials that do not work yet): said beside the button, the page kept.
    else if (answer.status === 409) setFinishStatus(answer.body.error);
    else setGone(answer.body.error);
  };

  return (
    <main class="narrow">
      <h1>
        {throughKombo
          ? 'Connect your ATS (through Kombo)'
          : `Connect your ${ATS_NAMES[summary.ats] ?? summary.ats} account`}
      </h1>
      <p>
        For <strong>{summary.connectionId}</strong>. This link works until you press Finish below, or until{' '}
        {when(summary.expiresAt)} at the latest.
      </p>
      <section aria-labelledby="step1">
        <h2 id="step1">{throughKombo ? '1. The connection through Kombo' : `1. Your ${summary.ats} credentials`}</h2>
        {throughKombo && (
          <p>
            Your ATS reaches the connector through Kombo, with your provider's Kombo account: there is nothing to enter.
            Check that Kombo answers for your ATS, and your jobs and stages appear below.
          </p>
        )}
        <form onSubmit={saveCredentials} aria-label="Credentials">
          {summary.credentials.map((field) => (
            <Field id={field} key={field} label={LABELS[field] ?? field} error={errors[field]}>
              <input
                id={field}
                type="password"
                autocomplete="off"
                value={values[field] ?? ''}
                onInput={(e) => setValues({ ...values, [field]: e.currentTarget.value })}
                aria-invalid={Boolean(errors[field])}
              />
            </Field>
          ))}
          <button type="submit">{throughKombo ? 'Check the connection' : 'Save the credentials'}</button>
        </form>
        {works && <Status text={works.text} kind={works.ok ? 'ok' : 'error'} />}
      </section>
      <section aria-labelledby="step2">
        <h2 id="step2">2. The stage that invites</h2>
        {!stages && <p>Your jobs and stages appear once the credentials work.</p>}
        {stages && choice && (
          <form onSubmit={saveStage} aria-label="Stage">
            {stages.jobs.length > 0 && (
              <Field id="job" label="Job">
                <select id="job" value={stages.job} onChange={(e) => void loadStages(e.currentTarget.value)}>
                  {stages.jobs.map((j) => (
                    <option value={j.id} key={j.id}>
                      {j.name}
                    </option>
                  ))}
                </select>
              </Field>
            )}
            <Field id="stage" label="Stage">
              <select
                id="stage"
                value={choice.stageName}
                onChange={(e) => setChoice({ ...choice, stageName: e.currentTarget.value })}
              >
                {!choice.stageName && <option value="">Choose the stage…</option>}
                {stages.stages.map((s) => (
                  <option value={s.name} key={s.id}>
                    {s.name}
                  </option>
                ))}
              </select>
            </Field>
            <Field id="interview" label="Interview">
              <select
                id="interview"
                value={choice.triggerId}
                onChange={(e) => setChoice({ ...choice, triggerId: e.currentTarget.value })}
              >
                {summary.triggers.map((t) => (
                  <option value={t.id} key={t.id}>
                    {`${t.id}: ${t.interview.replace('{jobName}', '<job>')} (${t.questions} question${t.questions === 1 ? '' : 's'})`}
                  </option>
                ))}
              </select>
            </Field>
            <button type="submit">Save the stage</button>
          </form>
        )}
        <Status text={stageStatus} />
      </section>
      <section aria-labelledby="step3">
        <h2 id="step3">3. Webhooks</h2>
        <p>
          Webhook URL: <code>{summary.webhook.url}</code>
        </p>
        {greenhouse && summary.webhook.secretSaved && !keySaved && (
          <p>
            A secret key was saved with your credentials earlier: the webhooks you made in Greenhouse with it keep
            working, and saving your credentials again keeps it.{' '}
            <label>
              <input type="checkbox" checked={replaceKey} onChange={(e) => setReplaceKey(e.currentTarget.checked)} /> I
              no longer have it: save this new key with my credentials, to type into each webhook:
            </label>{' '}
            <code id="signing-key">{signingKey}</code>
          </p>
        )}
        {greenhouse && (!summary.webhook.secretSaved || keySaved) && (
          <p>
            Secret key: <code id="signing-key">{signingKey}</code> (type it into Greenhouse; it is saved with your
            credentials)
          </p>
        )}
        <ol>
          {summary.webhook.steps.map((s) => (
            <li key={s}>{s}</li>
          ))}
        </ol>
        {summary.webhook.registration === 'api' && (
          <button type="button" onClick={() => void register()}>
            Register the webhooks
          </button>
        )}
        {webhooks && <Checks lines={webhooks} label="Webhooks registered" />}
      </section>
      <section aria-labelledby="step4">
        <h2 id="step4">4. Check everything</h2>
        <button type="button" onClick={() => void check()}>
          Run the checks
        </button>
        {doctor && <Checks lines={doctor} />}
        <p>
          <button type="button" onClick={() => void finish()}>
            Finish
          </button>
        </p>
        <Status text={finishStatus} kind="error" />
      </section>
    </main>
  );
}
