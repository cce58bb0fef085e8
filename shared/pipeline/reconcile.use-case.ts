import { listAll } from '../interview-service/list-all';
import type { PipelineDependencies, ReportToWriteBack } from './ports';
import { normaliseEmail, type ApplicationRecord } from './records';

export interface ReconcileResult {
  connectionId: string;
  interviewsChecked: number;
  reportsFound: number;
  enqueued: ReportToWriteBack[];
}

const OPEN_STATES: ReadonlySet<ApplicationRecord['state']> = new Set(['claimed', 'invited', 'completed']);

/**
 * The service's report webhooks are unsigned and may never arrive. For every interview with open
 * invitations, page its reports and return those whose application is not written back yet; the caller
 * enqueues them, and the write-back worker's claims make a report found twice harmless.
 */
export async function reconcileConnection(connectionId: string, deps: Pick<PipelineDependencies, 'store' | 'contextFor' | 'logger'>, signal?: AbortSignal): Promise<ReconcileResult> {
  const result: ReconcileResult = { connectionId, interviewsChecked: 0, reportsFound: 0, enqueued: [] };
  const context = await deps.contextFor(connectionId);
  if (!context) return result;
  const jobs = (await deps.store.listJobs(connectionId)).filter((job) => job.state === 'ready' && job.interviewId);
  for (const job of jobs) {
    const open = (await deps.store.listApplicationsByInterview(job.interviewId as string)).filter((a) => OPEN_STATES.has(a.state) && a.connectionId === connectionId);
    if (open.length === 0) continue;
    result.interviewsChecked++;
    const reports = await listAll((page, limit) => context.interviews.listReports({ interview_id: job.interviewId, page, limit }, { signal }));
    result.reportsFound += reports.length;
    for (const report of reports) {
      const email = normaliseEmail(report.candidate_email_id);
      const application = open.find((a) => (report.ats_job_application_id && a.atsApplicationId === report.ats_job_application_id) || a.candidateEmail === email);
      if (application) {
        result.enqueued.push({ connectionId, reportId: report.report_id, interviewId: report.interview_id, candidateId: report.candidate_id, source: 'reconciler' });
      }
    }
  }
  deps.logger.info('reconciled', { connectionId, interviewsChecked: result.interviewsChecked, reportsFound: result.reportsFound, enqueued: result.enqueued.length });
  return result;
}
