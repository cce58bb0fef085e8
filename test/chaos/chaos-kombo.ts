import { readFileSync } from 'node:fs';
import type { LocalStack } from '../../infra/local/local-stack';
import { undocumentedCalls } from '../../infra/local/sandbox/documented-routes';
import type { UnifiedFaults } from '../../infra/local/sandbox/kombo/unified-ats';
import { statusOfTag } from '../../shared/pipeline/status';
import { writtenBackStatuses } from './chaos-lifecycle';

/**
 * The stage-triggered flow through Kombo's unified ATS API under its own faults, beside the direct ATSs: the
 * candidates of two Kombo-connected tools (Personio takes every write, Recruitee no notes) move into the stage in
 * their ATS, and the connector hears of it only through Kombo's synced copy, by hints dropped and duplicated, and by
 * the reconciler's read; its writes meet the concurrency limit, random 429s and answers lost after Kombo wrote.
 */
export const KOMBO_FAULTS: Partial<UnifiedFaults> = {
  ...{ dropHintRate: 0.2, duplicateHintRate: 0.3, rate429: 0.05, loseAnswerRate: 0.05 },
  // Two writes in flight per integration, each slow: a burst meets Kombo's concurrency 429, a wait.
  ...{ concurrencyLimit: 2, slowWriteMs: 300 },
};

export const describeKomboFaults = (): string => {
  const f = KOMBO_FAULTS as UnifiedFaults;
  return (
    `hints ${f.dropHintRate * 100}% dropped, ${f.duplicateHintRate * 100}% sent twice, ${SYNC_LAG_MS} ms sync lag; ` +
    `${f.concurrencyLimit} writes in flight (${f.slowWriteMs} ms each), ${f.rate429 * 100}% random 429, ` +
    `${f.loseAnswerRate * 100}% of write answers lost`
  );
};

/** Kombo's copy lags the ATS by this much; each hint follows its sync. */
const SYNC_LAG_MS = 1000;

export interface KomboCandidate {
  connectionId: string;
  integrationId: string;
  tool: string;
  applicationId: string;
  candidateId: string;
  email: string;
  name: string;
}

/** Who does what among the Kombo candidates once invited. */
export interface KomboRoles {
  noShows: Set<string>;
  /** Declined in the ATS before taking the interview (when): the connector learns it from Kombo's copy. */
  decliners: Map<string, number>;
  /** Report id → candidate, for those who took the interview. */
  reports: Map<string, KomboCandidate>;
}

/** The Kombo-connected customers of config/connections.kombo.json, for the run's connection template. */
export const komboConnections = (): Record<string, any>[] =>
  (JSON.parse(readFileSync('config/connections.kombo.json', 'utf8')) as { connections: Record<string, any>[] })
    .connections;

/** `count` candidates, alternating between the Kombo connections, each moved into the stage in their own ATS. */
export function moveKomboCandidates(s: LocalStack, count: number): KomboCandidate[] {
  const unified = s.kombo.unified;
  unified.setSyncLag(SYNC_LAG_MS);
  unified.setFaults(KOMBO_FAULTS);
  const connections = s.connections.filter((c) => c.ats === 'kombo');
  const candidates: KomboCandidate[] = [];
  for (let i = 0; i < (connections.length ? count : 0); i++) {
    const connection = connections[i % connections.length] as (typeof connections)[number];
    const integrationId = connection.atsIntegrationId as string;
    const tool = integrationId.split(':')[0] as string;
    const [firstName, lastName] = [`Kombo${i}`, `Candidate${i}`];
    const email = `kombo-${i}+${tool}@candidates.example.com`;
    const added = unified.addCandidate({ integrationId, firstName, lastName, email });
    unified.moveCandidate({ integrationId, applicationId: added.applicationId, stageName: 'AI Interview' });
    candidates.push({
      connectionId: connection.id,
      integrationId,
      tool,
      ...added,
      email,
      name: `${firstName} ${lastName}`,
    });
  }
  return candidates;
}

/**
 * Once invited: a share never take the interview, two or more decline in the ATS first, the others take it. Records
 * are the applications table's items of these candidates.
 */
export function takeKomboInterviews(
  s: LocalStack,
  candidates: KomboCandidate[],
  records: Record<string, any>[],
  input: { random: () => number; noShowRate: number },
): KomboRoles {
  const roles: KomboRoles = { noShows: new Set(), decliners: new Map(), reports: new Map() };
  for (const [i, c] of candidates.entries()) {
    const record = records.find((r) => r.atsApplicationId === c.applicationId && r.interviewId !== undefined);
    if (!record) continue;
    // The first two of each role whatever the draw, so even a small run has both; the draws decide the others.
    const noShow = i < 2 || (i >= 4 && input.random() < input.noShowRate);
    if (noShow) roles.noShows.add(c.applicationId);
    else if (i < 4 || input.random() < 0.05) {
      roles.decliners.set(c.applicationId, Date.now());
      s.kombo.unified.decline({ integrationId: c.integrationId, applicationId: c.applicationId });
    } else {
      const { report_id } = s.interview.completeInterview({
        ...{ interview_id: record.interviewId, candidate_id: record.serviceCandidateId },
        ...{ candidate_name: c.name, candidate_email: c.email, delay_ms: 0 },
        ...{ ai_match_score: Math.round(40 + input.random() * 60), proctoring_violations: 0 },
      });
      roles.reports.set(report_id, c);
    }
  }
  return roles;
}

type Check = (name: string, items: unknown[], bad: (item: any) => string | undefined) => void;
type Email = { destination: { to: string[] }; subject?: string; at?: number };

/** What the Kombo sandbox holds of one candidate: their notes by kind, the report files, moves and status tags. */
function written(s: LocalStack, c: KomboCandidate, reportId: string | undefined) {
  const view = s.kombo.unified.integration(c.integrationId);
  const notes = view.notes.filter((n) => n.applicationId === c.applicationId).map((n) => n.content);
  const count = (marker: string) => notes.filter((n) => n.includes(marker)).length;
  return {
    invite: count('ai-interview-invite:'),
    report: reportId ? count(`ai-interview-report:${reportId}`) : 0,
    reports: count('ai-interview-report:'),
    expiry: count('AI interview not completed by'),
    files: view.attachments.filter((a) => a.applicationId === c.applicationId && a.name.includes(reportId ?? '-'))
      .length,
    moves: view.moves.filter((m) => m.applicationId === c.applicationId).length,
    tags: (view.tags[c.candidateId] ?? []).filter((t) => statusOfTag(t) !== undefined),
  };
}

/** A note may be missing only where its step says it may be: begun before a crash or its answer lost. */
const oneUnlessUncertain = (count: number, step: Record<string, any> | undefined) =>
  count === 1 || (count === 0 && step?.outcome === 'uncertain');

/**
 * The Kombo candidates' invariants: one invitation per stage entry whatever the hints did; each report written back
 * once, as a note where the tool takes notes and as its file where it does not; the non-completers reminded and
 * expired once, the decliners cancelled; every Kombo call a documented route; one interview per job.
 */
export function checkKombo(
  check: Check,
  s: LocalStack,
  input: { candidates: KomboCandidate[]; roles: KomboRoles; records: Record<string, any>[]; emails: Email[] },
): void {
  const { candidates, roles, records, emails } = input;
  const recordOf = (c: KomboCandidate) => records.find((r) => r.atsApplicationId === c.applicationId);
  const takesNotes = (c: KomboCandidate) => c.tool !== 'recruitee';
  const to = (c: KomboCandidate, reminders: boolean, after = 0) =>
    emails.filter(
      (m) =>
        m.destination.to.includes(c.email) &&
        (m.subject ?? '').startsWith('Reminder') === reminders &&
        (m.at ?? 0) * 1000 >= after,
    ).length;
  check('Kombo: every candidate invited once, one invite note at most (none without notes)', candidates, (c) => {
    const record = recordOf(c);
    const { invite } = written(s, c, undefined);
    const invited = ['invited', 'written_back', 'expired', 'left'].includes(record?.state);
    // One e-mail, or none where its send was recorded uncertain (SES did not answer in time): never sent twice.
    const emailed = to(c, false) === 1 || (to(c, false) === 0 && record?.steps?.inviteEmail?.outcome === 'uncertain');
    return invited && emailed && invite <= (takesNotes(c) ? 1 : 0)
      ? undefined
      : `${c.tool} ${c.applicationId}: ${record?.state ?? 'never claimed'}, ${to(c, false)} e-mails, ${invite} notes`;
  });
  const reports = [...roles.reports.entries()];
  check('Kombo: every report written back once: a note or, without notes, its file', reports, ([reportId, c]) => {
    const record = recordOf(c);
    const w = written(s, c, reportId);
    const carried = takesNotes(c)
      ? oneUnlessUncertain(w.report, record?.steps?.reportNote)
      : // Skipped with its reason, or (a crash right after the skip) recorded uncertain.
        w.reports === 0 &&
        w.files === 1 &&
        (String(record?.steps?.reportNote?.value).startsWith('skipped:') ||
          record?.steps?.reportNote?.outcome === 'uncertain');
    return record?.state === 'written_back' && record.reportId === reportId && carried && w.files <= 1 && w.moves <= 1
      ? undefined
      : `${c.tool} report ${reportId}: ${record?.state}, ${w.report} notes, ${w.files} files, ${w.moves} moves`;
  });
  const noShows = candidates.filter((c) => roles.noShows.has(c.applicationId));
  check('Kombo: every non-completer reminded once, expired once, no report note', noShows, (c) => {
    const record = recordOf(c);
    const w = written(s, c, undefined);
    const reminded = to(c, true) === 1 || (to(c, true) === 0 && record?.steps?.reminder1?.startedAt !== undefined);
    const expiry = takesNotes(c) ? oneUnlessUncertain(w.expiry, record?.steps?.expiryNote) : w.expiry === 0;
    return record?.state === 'expired' && reminded && expiry && w.reports === 0
      ? undefined
      : `${c.tool} ${c.applicationId}: ${record?.state}, ${to(c, true)} reminders, ${w.expiry} expiry notes`;
  });
  const decliners = candidates.filter((c) => roles.decliners.has(c.applicationId));
  check("Kombo: every decliner cancelled from Kombo's copy, no e-mail after, not expired after", decliners, (c) => {
    const record = recordOf(c);
    const w = written(s, c, undefined);
    // From when the exit reached the connector (Kombo's copy lags the ATS). SES keeps whole seconds: a reminder in
    // that second may have been begun before it.
    const after = to(c, true, (record?.exit?.at ?? roles.decliners.get(c.applicationId) ?? 0) + 1000);
    // An invitation may have expired before the connector could see the decline (everyone is invited before anyone
    // declines): before Kombo's copy showed it, and the expiry's read of that copy and its write a second at most.
    const declinedAt = roles.decliners.get(c.applicationId) ?? 0;
    const expiredBefore = record?.expiredAt !== undefined && record.expiredAt < declinedAt + SYNC_LAG_MS + 1000;
    const expiredAfter = record?.expiredAt === undefined ? '' : ` (expired ${record.expiredAt - declinedAt} ms after)`;
    const says = `${c.tool} ${c.applicationId}: ${record?.state}, ${after} reminders after, ${w.expiry} expiry notes`;
    return record?.state === 'left' && after === 0 && w.expiry <= (expiredBefore ? 1 : 0)
      ? undefined
      : `${says}${expiredAfter}`;
  });
  check("Kombo: every status tag matches the application's final state", candidates, (c) => {
    const record = recordOf(c);
    const shown = {
      written_back: record ? writtenBackStatuses(record) : undefined,
      expired: 'expired',
      left: 'cancelled',
      invited: 'invited',
    }[record?.state as string];
    const { tags } = written(s, c, undefined);
    return shown && tags.length === 1 && [shown].flat().includes(statusOfTag(tags[0] as string) as string)
      ? undefined
      : `${c.tool} ${c.applicationId}: ${record?.state} shows ${JSON.stringify(tags)}`;
  });
  const jobs = [...new Set(records.map((r) => `${r.connectionId}/${r.atsJobId}/${r.triggerId}`))];
  check('Kombo: exactly one interview per job × trigger', jobs, (ref: string) => {
    const count = s.interview.state.interviews.filter((i) => i.interview_name.endsWith(`(ref ${ref})`)).length;
    return count === 1 ? undefined : `${ref}: ${count} interviews`;
  });
  // Each distinct call shape served, and each call no route matched (refused before any shape).
  const calls = [
    ...s.kombo.unified.calls().map((shape) => ({ shape })),
    ...s.kombo.undocumented.map((route) => ({ route })),
  ];
  check('Kombo: every call a route, parameter and field Kombo documents', calls, (call) =>
    call.route ? `no documented route: ${call.route}` : undocumentedCalls('kombo', [call.shape])[0],
  );
}

/** The residuals of the Kombo part: what its faults did, counted. */
export function komboResiduals(s: LocalStack, records: Record<string, any>[]) {
  const hints = s.kombo.unified.hints();
  const requests = Object.values(s.kombo.unified.requests()).reduce((sum, n) => sum + n, 0);
  const uncertain = records.filter((r) =>
    ['inviteNote', 'reportNote', 'expiryNote'].some((n) => r.steps?.[n]?.outcome === 'uncertain'),
  ).length;
  return [
    {
      name: 'Kombo hints dropped / sent twice',
      count: hints.filter((h) => h.dropped).length,
      meaning: `${hints.filter((h) => h.duplicate).length} duplicates; the reads found each change once`,
    },
    {
      name: 'Kombo answers lost after the write',
      count: s.kombo.unified.state.lostAnswers,
      meaning: `of ${requests} unified API calls`,
    },
    { name: 'Kombo notes recorded uncertain', count: uncertain, meaning: 'no read-back: never posted a second time' },
    {
      name: 'Kombo peak writes in flight',
      count: Math.max(...[...s.kombo.unified.state.integrations.values()].map((i) => i.peakInFlight)),
      meaning: `limit ${KOMBO_FAULTS.concurrencyLimit}: past it a 429, waited out`,
    },
  ];
}
