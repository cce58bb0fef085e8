import { randomUUID } from 'node:crypto';
import type * as v from 'valibot';
import { formatTimestamp } from '../http-kit';
import { buildReport, shortId } from './report.factory';
import { SEEDED_JOB, type SeededApplicant } from './seed';
import type {
  CompletionRequest,
  ReportFile,
  SandboxFaults,
  SandboxInterview,
  SandboxInvite,
  SandboxReport,
  SandboxWebhook,
  SandboxState,
} from './types';
import type { createBody } from './validation';
import type { ReportDeliveries } from './webhooks';

export const now = (): string => formatTimestamp(new Date());

/**
 * The service's records, per account: interviews, invitations, reports and webhooks, and what a candidate does
 * (completes an interview, and a report follows after the service's delay, its webhooks notified).
 */
export class ServiceRecords {
  /** The base URL invite links are made from, once the sandbox listens. */
  public baseUrl = '';
  // Accounts are named by their full key; the limited key reads the main account.
  private readonly accounts: Set<string>;
  private readonly interviewAccount = new Map<string, string>();
  private readonly webhookAccount = new Map<string, string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Reports a candidate finished whose record the service has not made yet. */
  private readonly pendingReports = new Set<string>();

  public constructor(
    public readonly state: SandboxState,
    private readonly settings: { apiKey: string; limitedApiKey: string; reportDelayMs: number },
    private readonly random: () => number,
    private readonly deliveries: ReportDeliveries,
  ) {
    this.accounts = new Set([settings.apiKey]);
  }

  public addAccount(key: string): void {
    this.accounts.add(key);
  }

  public accountOfKey(key: string): string | undefined {
    return key === this.settings.limitedApiKey ? this.settings.apiKey : this.accounts.has(key) ? key : undefined;
  }

  /** Whether a record (of an interview) belongs to `account`. */
  public inAccount(account: string): (record: { interview_id: string }) => boolean {
    return (record) => this.interviewAccount.get(record.interview_id) === account;
  }

  public webhooksOf(account: string | undefined): SandboxWebhook[] {
    return this.state.webhooks.filter((w) => this.webhookAccount.get(w.webhook_id) === account);
  }

  /** Reports not yet made are dropped: the sandbox stops. */
  public stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  public createInterview(
    body: v.InferOutput<typeof createBody>,
    account: string = this.settings.apiKey,
  ): SandboxInterview {
    const id = randomUUID();
    this.interviewAccount.set(id, account);
    const interview: SandboxInterview = {
      interview_id: id,
      interview_name: body.interview_name,
      invite_url: `${this.baseUrl}/invite/${id}`,
      settings: {
        custom_question_list: body.custom_question_list,
        skills: [],
        interview_language: body.interview_language,
        can_change_interview_language: body.can_change_interview_language,
        is_proctoring_required: body.is_proctoring_required,
        only_coding_round: false,
        is_coding_round_required: false,
        selected_coding_language: null,
        coding_exercise_details: null,
      },
      date_created: now(),
      date_modified: now(),
      status: 'active',
    };
    this.state.interviews.push(interview);
    return interview;
  }

  public addInvite(interview: SandboxInterview, name: string, email: string, status = 'active'): SandboxInvite {
    const candidateId = shortId('c', this.random);
    const invite: SandboxInvite = {
      candidate_id: candidateId,
      interview_id: interview.interview_id,
      interview_name: interview.interview_name,
      candidate_name: name,
      candidate_email_id: email,
      invite_url: `${interview.invite_url}?cid=${candidateId}`,
      date_created: now(),
      date_modified: now(),
      status,
    };
    this.state.invites.push(invite);
    return invite;
  }

  public registerWebhook(
    url: string,
    event = 'interview_report.created',
    description = '',
    key: string = this.settings.apiKey,
  ): SandboxWebhook {
    const account = this.accountOfKey(key);
    if (!account) throw new Error(`api_key: no account for that key`);
    const webhook: SandboxWebhook = {
      webhook_id: randomUUID(),
      url,
      description,
      event,
      date_created: now(),
      date_modified: now(),
      status: 'active',
    };
    this.state.webhooks.push(webhook);
    this.webhookAccount.set(webhook.webhook_id, account);
    return webhook;
  }

  public completeInterview(request: CompletionRequest, notify = true): { candidate_id: string; report_id: string } {
    const interview = this.state.interviews.find((i) => i.interview_id === request.interview_id);
    if (!interview) throw new Error(`interview_id: no interview ${request.interview_id}`);
    // A candidate invited through `POST /interview/invite` takes the interview as that invitation's candidate.
    const invited =
      this.state.invites.find(
        (i) => i.interview_id === interview.interview_id && i.candidate_id === request.candidate_id,
      ) ??
      this.state.invites.find(
        (i) =>
          i.interview_id === interview.interview_id &&
          i.candidate_email_id.toLowerCase() === request.candidate_email.toLowerCase(),
      );
    const candidateId =
      invited?.candidate_id ?? this.addInvite(interview, request.candidate_name, request.candidate_email).candidate_id;
    const reportId = shortId('r', this.random);
    const delay = request.delay_ms ?? this.settings.reportDelayMs;
    this.pendingReports.add(reportId);
    if (request.report_file) this.setReportFile(reportId, request.report_file);
    if (delay === 0) {
      this.addReport(interview, request, candidateId, reportId, notify);
    } else {
      void this.deliveries.track(
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            this.timers.delete(timer);
            this.addReport(interview, request, candidateId, reportId, notify);
            resolve();
          }, delay);
          this.timers.add(timer);
        }),
      );
    }
    return { candidate_id: candidateId, report_id: reportId };
  }

  public seedReports(count: number, interviewId?: string): SandboxReport[] {
    const interview =
      this.state.interviews.find((i) => i.interview_id === interviewId) ??
      this.createInterview({
        interview_name: `${SEEDED_JOB.job_title} screening`,
        custom_question_list: [
          { question: 'Walk us through a system you designed end to end.', time: 3, type: 'audio' },
          { question: 'How do you make a message consumer idempotent?', time: 2, type: 'audio' },
        ],
        interview_language: 'en',
        can_change_interview_language: false,
        is_proctoring_required: true,
      });
    const created: SandboxReport[] = [];
    for (let i = 0; i < count; i++) {
      const applicant = this.state.applicants[i % this.state.applicants.length] as SeededApplicant;
      const email =
        i < this.state.applicants.length ? applicant.email_id : `bulk.${this.state.reports.length}@example.com`;
      const { report_id: reportId } = this.completeInterview(
        {
          interview_id: interview.interview_id,
          candidate_name: `${applicant.first_name} ${applicant.last_name}`,
          candidate_email: email,
          delay_ms: 0,
        },
        false,
      );
      created.push(this.state.reports.find((r) => r.report_id === reportId) as SandboxReport);
    }
    return created;
  }

  /** Where the service's file host serves a report's PDF: beside the API, as a link that needs no key. */
  public reportUrl(reportId: string): string {
    return `${this.baseUrl}/files/reports/${reportId}.pdf`;
  }

  /**
   * How the file host serves a report, made or still to come (`missing` takes its `report_url` away): the link it
   * carries now, or undefined for a report the service never had.
   */
  public setReportFile(reportId: string, file: ReportFile): { report_url: string | null } | undefined {
    const report = this.state.reports.find((r) => r.report_id === reportId);
    if (!report && !this.pendingReports.has(reportId)) return undefined;
    this.state.reportFiles[reportId] = file;
    const url = file.file === 'missing' ? null : this.reportUrl(reportId);
    if (report) report.report_url = url;
    return { report_url: url };
  }

  public setFaults(faults: Partial<SandboxFaults>): SandboxFaults {
    this.state.faults = { ...this.state.faults, ...faults };
    return this.state.faults;
  }

  private addReport(
    interview: SandboxInterview,
    completion: CompletionRequest,
    candidateId: string,
    reportId: string,
    notify: boolean,
  ): SandboxReport {
    const report = buildReport({
      interview,
      completion,
      candidateId,
      reportId,
      reportUrl: this.state.reportFiles[reportId]?.file === 'missing' ? null : this.reportUrl(reportId),
      jobApplicantId: randomUUID(),
      now: new Date(),
    });
    this.pendingReports.delete(reportId);
    this.state.reports.push(report);
    if (notify) {
      const account = this.interviewAccount.get(interview.interview_id);
      const active = this.webhooksOf(account).filter(
        (w) => w.event === 'interview_report.created' && w.status === 'active',
      );
      this.deliveries.notify(active, report);
    }
    return report;
  }
}
