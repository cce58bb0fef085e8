import { useState } from 'preact/hooks';
import { api } from '../api';
import { type CheckLine, Checks, Field, Status } from '../ui';

const ATS_KINDS = ['greenhouse', 'ashby', 'lever', 'workable'] as const;
/** A connection's id, as the connections schema takes it (shared/config/connection.schema.ts, SLUG_PATTERN). */
const ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The form's inputs, and the connection document's fields each one fills (where the admin API names an error). */
const FIELDS = {
  id: ['connection.id'],
  ats: ['connection.ats'],
  atsBaseUrl: ['connection.atsBaseUrl', 'connection.atsAuthUrl'],
  atsUserId: ['connection.atsUserId'],
  secretRef: ['connection.secretRef'],
  interviewUrl: ['connection.interviewService'],
  stage: ['connection.triggers.0.stage'],
  questions: ['connection.triggers.0.interview'],
  from: ['connection.triggers.0.invite'],
} as const;
type Name = keyof typeof FIELDS;

/** The input an error's field belongs to: the longest document path it starts with; `id` when none does. */
export function inputOf(field: string): Name | undefined {
  let best: { name: Name; length: number } | undefined;
  for (const [name, paths] of Object.entries(FIELDS) as [Name, readonly string[]][])
    for (const path of paths)
      if ((field === path || field.startsWith(`${path}.`)) && path.length > (best?.length ?? 0))
        best = { name, length: path.length };
  return best?.name;
}

/**
 * A new customer's connection: its ATS, where the ATS and the interview service are, the secret that will hold
 * their keys (filled by the customer's connect link or by the operator), and the stage that invites with the
 * interview's questions. Saved through the admin API, which names the field at fault; then the doctor runs.
 */
export function NewConnectionPage() {
  const [values, setValues] = useState<Record<Name, string>>({
    id: '',
    ats: 'greenhouse',
    atsBaseUrl: '',
    atsUserId: '',
    secretRef: '',
    interviewUrl: '',
    stage: 'AI Interview',
    questions: '',
    from: '',
  });
  const [errors, setErrors] = useState<Partial<Record<Name, string>>>({});
  const [status, setStatus] = useState<{ text: string; kind?: 'error' | 'ok' }>();
  const [doctor, setDoctor] = useState<CheckLine[]>();
  const [saved, setSaved] = useState<string>();
  const set = (name: Name) => (event: { currentTarget: { value: string } }) =>
    setValues({ ...values, [name]: event.currentTarget.value });

  const document = () => ({
    id: values.id.trim(),
    ats: values.ats,
    atsBaseUrl: values.atsBaseUrl.trim(),
    ...(values.ats === 'greenhouse' && values.atsBaseUrl.trim()
      ? { atsAuthUrl: `${values.atsBaseUrl.trim().replace(/\/+$/, '')}/token` }
      : {}),
    ...(values.atsUserId.trim() ? { atsUserId: values.atsUserId.trim() } : {}),
    interviewService: { baseUrl: values.interviewUrl.trim() },
    secretRef: values.secretRef.trim(),
    triggers: [
      {
        id: 'ai-screen',
        jobs: 'all',
        stage: { name: values.stage.trim() },
        interview: {
          namePattern: '{jobName} – AI interview',
          language: 'en',
          questions: values.questions
            .split('\n')
            .map((q) => q.trim())
            .filter(Boolean)
            .map((question) => ({ question, time: 3, type: 'audio' })),
        },
        invite: { email: true, atsNote: true, ...(values.from.trim() ? { from: values.from.trim() } : {}) },
      },
    ],
  });

  const submit = async (event: Event) => {
    event.preventDefault();
    setErrors({});
    setDoctor(undefined);
    const id = values.id.trim();
    // The id is the API's path: one it cannot take is said beside the field, not as the API's "no such route".
    if (!ID_PATTERN.test(id)) {
      setErrors({ id: 'connection.id: lowercase letters, digits and dashes, at most 63, from a letter or digit' });
      setStatus({ text: 'Fix the field marked above, then save again.', kind: 'error' });
      return;
    }
    setStatus({ text: 'Saving…' });
    const answer = await api('PUT', `/connections/${encodeURIComponent(id)}`, { connection: document() });
    if (answer.status === 409) {
      setErrors({ id: `connection.id: ${id} is taken: open it from the connections list to change it` });
      setStatus({ text: 'Fix the field marked above, then save again.', kind: 'error' });
      return;
    }
    if (answer.status === 400 || answer.status === 404) {
      const name = inputOf(answer.body.field ?? '') ?? 'id';
      setErrors({ [name]: answer.body.error ?? 'invalid' });
      setStatus({ text: 'Fix the field marked above, then save again.', kind: 'error' });
      return;
    }
    if (answer.status >= 300)
      return setStatus({ text: answer.body.error ?? `refused (${answer.status})`, kind: 'error' });
    setSaved(id);
    setStatus({ text: `Connection ${id} saved. The doctor is checking it…`, kind: 'ok' });
    const checked = await api<{ lines: CheckLine[] }>('POST', `/connections/${encodeURIComponent(id)}/doctor`);
    if (checked.status !== 200)
      return setStatus({ text: checked.body.error ?? 'the doctor could not run', kind: 'error' });
    setDoctor(checked.body.lines);
    setStatus({ text: `Connection ${id} saved; the doctor ran.`, kind: 'ok' });
  };

  const input = (name: Name, label: string, extra: Record<string, unknown> = {}, hint?: string) => (
    <Field id={name} label={label} error={errors[name]} {...(hint ? { hint } : {})}>
      <input
        id={name}
        value={values[name]}
        onInput={set(name)}
        aria-invalid={Boolean(errors[name])}
        aria-describedby={errors[name] ? `${name}-error` : hint ? `${name}-hint` : undefined}
        {...extra}
      />
    </Field>
  );

  return (
    <>
      <h1>Add a connection</h1>
      <form onSubmit={submit} aria-label="Add a connection" novalidate>
        {input('id', 'Connection id', { required: true }, 'letters, digits, - and _; the webhook URL ends in it')}
        <Field id="ats" label="ATS" error={errors.ats}>
          <select id="ats" value={values.ats} onChange={set('ats')}>
            {ATS_KINDS.map((k) => (
              <option value={k} key={k}>
                {k}
              </option>
            ))}
          </select>
        </Field>
        {input('atsBaseUrl', "ATS API's base URL", { type: 'url', required: true })}
        {input(
          'atsUserId',
          'ATS user the notes are written as',
          {},
          'Greenhouse user id, Lever perform_as, Workable member id; Ashby writes as its key: any name',
        )}
        {input('secretRef', 'Secret name', { required: true }, "holds the keys; the customer's connect link fills it")}
        {input('interviewUrl', "Interview service's base URL", { type: 'url', required: true })}
        {input(
          'stage',
          'Stage that invites',
          { required: true },
          'its name in the ATS; the customer can pick it later',
        )}
        <Field id="questions" label="Interview questions, one a line" error={errors.questions}>
          <textarea
            id="questions"
            rows={4}
            value={values.questions}
            onInput={set('questions')}
            aria-invalid={Boolean(errors.questions)}
          />
        </Field>
        {input('from', 'Invitations sent from', { type: 'email' }, 'an SES-verified address; the default if empty')}
        <button type="submit">Save the connection</button>
      </form>
      <Status text={status?.text} kind={status?.kind} />
      {doctor && <Checks lines={doctor} />}
      {saved && doctor && <a href={`#/connections/${encodeURIComponent(saved)}`}>Open {saved}</a>}
    </>
  );
}
