import { useEffect, useState } from 'preact/hooks';
import { api, when } from '../api';
import { Status } from '../ui';

type Step = { startedAt?: number; doneAt?: number; outcome?: string; value?: string };
interface Application {
  triggerId: string;
  atsJobId: string;
  state: string;
  candidateEmail?: string;
  interviewId?: string;
  reportId?: string;
  failureReason?: string;
  exit?: { kind: string; at: number };
  /** Invitations made again after the first (a return to the stage after an expiry or an exit). */
  reinvitations?: number;
  steps: Record<string, Step>;
  /** What the invitation before this one did (a re-invitation keeps it). */
  earlierSteps?: Record<string, Step>;
  createdAt: number;
  updatedAt: number;
}
interface Entry {
  at: number;
  kind: string;
  detail: string;
  code?: string;
}
interface Answer {
  applications: Application[];
  timeline: Entry[];
}

/** What each step is, as an operator reads it. */
const STEP_LABELS: [RegExp, string][] = [
  [/^serviceInvite$/, 'invitation made on the interview service'],
  [/^inviteEmail$/, 'invitation e-mailed'],
  [/^inviteNote$/, 'invitation note posted in the ATS'],
  [/^reminder\d+$/, 'reminder sent'],
  [/^expiryNote$/, 'expiry note posted'],
  [/^resend$/, 'link sent again'],
  [/^failureNote/, 'failure note posted'],
  [/^reportArrived$/, 'report received, its write-back waiting its turn'],
  [/^reportLink$/, 'report link attached'],
  [/^reportNote$/, 'report note posted'],
  [/^reportFile$/, 'report PDF attached'],
  [/^stageMove$/, 'moved to the next stage'],
  [/^status$/, 'status shown'],
];
/** A step's label; a failure note's says its cause (`failureNoteReportUnreadable`: "report unreadable"). */
const labelOf = (name: string) => {
  const label = STEP_LABELS.find(([m]) => m.test(name))?.[1] ?? name;
  if (!name.startsWith('failureNote')) return label;
  const cause = name
    .slice('failureNote'.length)
    .replace(/[A-Z]/g, (c, i: number) => `${i ? ' ' : ''}${c.toLowerCase()}`);
  return `${label}: ${cause}`;
};

/** The answer a step got, in words. The status is claimed, never "answered": its value is what the ATS shows. */
function answerOf(name: string, step: Step): string {
  if (name === 'status') return step.value ?? '';
  if (step.outcome === 'refused') return `refused: ${step.value ?? ''}`;
  if (step.outcome === 'uncertain') return `no answer came: not done again${step.value ? ` (${step.value})` : ''}`;
  if (step.doneAt) return step.value ? `done: ${step.value}` : 'done';
  if (step.startedAt) return 'started, not answered yet';
  return '';
}

/** One candidate: their application under each trigger, and one timeline of what happened and what it answered. */
export function CandidatePage(props: { connectionId: string; applicationId: string }) {
  const [answer, setAnswer] = useState<Answer>();
  const [error, setError] = useState<string>();
  const [reveal, setReveal] = useState(false);
  const path = `/candidates/${encodeURIComponent(props.connectionId)}/${encodeURIComponent(props.applicationId)}`;
  useEffect(() => {
    void api<Answer>('GET', `${path}${reveal ? '?reveal=email' : ''}`).then((a) =>
      a.status === 200 ? setAnswer(a.body) : setError(a.body.error),
    );
  }, [path, reveal]);
  if (error) return <Status text={error} kind="error" />;
  if (!answer) return <Status text="Loading the candidate…" />;
  type Row = { at: number; what: string; answer: string; kind: string };
  const rows: Row[] = answer.timeline.map((e) => ({
    at: e.at,
    what: e.detail,
    answer: e.code ?? '',
    kind: e.kind,
  }));
  for (const a of answer.applications) {
    rows.push({ at: a.createdAt, what: `claimed for trigger ${a.triggerId}`, answer: '', kind: 'step' });
    for (const [name, step] of Object.entries(a.steps ?? {}))
      rows.push({
        at: step.doneAt ?? step.startedAt ?? a.updatedAt,
        what: labelOf(name),
        answer: answerOf(name, step),
        kind: 'step',
      });
    // The invitation before this one, as the re-entry found it: its steps, named as that invitation's.
    for (const [name, step] of Object.entries(a.earlierSteps ?? {}))
      rows.push({
        at: step.doneAt ?? step.startedAt ?? a.createdAt,
        what: `${labelOf(name)} (invitation ${a.reinvitations ?? 1})`,
        answer: answerOf(name, step),
        kind: 'step',
      });
    if (a.exit) rows.push({ at: a.exit.at, what: `left the process: ${a.exit.kind}`, answer: '', kind: 'exit' });
  }
  rows.sort((x, y) => x.at - y.at);
  return (
    <>
      <h1>
        Application {props.applicationId} <small>{props.connectionId}</small>
      </h1>
      {answer.applications.map((a) => (
        <dl key={a.triggerId} class="facts">
          <dt>Trigger</dt>
          <dd>{a.triggerId}</dd>
          <dt>State</dt>
          <dd class={`state ${a.state}`}>{a.state}</dd>
          {a.steps?.status?.value && (
            <>
              <dt>Status in the ATS</dt>
              <dd>{a.steps.status.value}</dd>
            </>
          )}
          <dt>Job</dt>
          <dd>{a.atsJobId}</dd>
          <dt>E-mail</dt>
          <dd>
            {a.candidateEmail ?? '—'}{' '}
            {!reveal && a.candidateEmail && (
              <button type="button" class="link" onClick={() => setReveal(true)}>
                Show the e-mail (recorded in the audit)
              </button>
            )}
          </dd>
          <dt>Interview</dt>
          <dd>{a.interviewId ?? '—'}</dd>
          {(a.reinvitations ?? 0) > 0 && (
            <>
              <dt>Invitations</dt>
              <dd>
                {(a.reinvitations ?? 0) + 1}: the steps below are the latest one's (the webhooks and deferrals are every
                one's)
              </dd>
            </>
          )}
          {a.reportId && (
            <>
              <dt>Report</dt>
              <dd>{a.reportId}</dd>
            </>
          )}
          {a.failureReason && (
            <>
              <dt>Failed because</dt>
              <dd>{a.failureReason}</dd>
            </>
          )}
        </dl>
      ))}
      <table>
        <caption>Timeline</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">What</th>
            <th scope="col">Answer</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={`${r.at}-${i}`} class={r.kind}>
              <td>{when(r.at)}</td>
              <td>{r.what}</td>
              <td>{r.answer}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
