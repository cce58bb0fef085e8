import type { Connection } from '../config';
import type { MappingStore } from './ports';
import { normaliseEmail, type ApplicationRecord } from './records';

/** What a report (or its delivery) says of its candidate, to find their invitation by. */
export interface ReportCandidate {
  interviewId: string;
  candidateId: string;
  /** The service's own link to the ATS application (`ats_job_application_id`), where it gives one. */
  atsApplicationId?: string | undefined;
  candidateEmail?: string | undefined;
}

type InvitationReads = Pick<
  MappingStore,
  'findApplicationByServiceCandidate' | 'findApplicationsByAtsId' | 'findApplicationByInterview'
>;

/**
 * A report's invitation in `connection`: the service's candidate id of a per-candidate invitation first; then the
 * service's own ATS link; otherwise interview and e-mail. The report's worker and its webhook find it alike.
 */
export async function findInvitation(
  connection: Pick<Connection, 'id' | 'interviewService'>,
  store: InvitationReads,
  report: ReportCandidate,
): Promise<ApplicationRecord | undefined> {
  const ours = (found: ApplicationRecord | undefined) => (found?.connectionId === connection.id ? found : undefined);
  // A per-candidate invitation is matched exactly by the service's candidate id, whatever e-mail was typed. Only
  // connections that invite per candidate pay for the read: a shared link records no such id.
  if (connection.interviewService.invites.mode === 'per-candidate') {
    const invited = ours(await store.findApplicationByServiceCandidate(report.interviewId, report.candidateId));
    if (invited) return invited;
  }
  if (report.atsApplicationId) {
    const byAtsId = await store.findApplicationsByAtsId(connection.id, report.atsApplicationId);
    const match = byAtsId.find((a) => a.interviewId === report.interviewId);
    if (match) return match;
  }
  // A report without an e-mail (the service marks no field required) can only match by the ids above.
  if (!report.candidateEmail) return undefined;
  return ours(await store.findApplicationByInterview(report.interviewId, normaliseEmail(report.candidateEmail)));
}
