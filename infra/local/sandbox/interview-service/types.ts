import type { SeededApplicant } from './seed';
/** Records as the sandbox keeps them: the wire shapes of interview-service-api.md §2. */
export interface SandboxQuestion {
  question: string;
  time: number;
  type: string;
}

export interface SandboxInterview {
  interview_id: string;
  interview_name: string;
  invite_url: string;
  settings: {
    custom_question_list: SandboxQuestion[];
    skills: { name: string; description: string }[];
    interview_language: string;
    can_change_interview_language: boolean;
    is_proctoring_required: boolean;
    only_coding_round: boolean;
    is_coding_round_required: boolean;
    selected_coding_language: string | null;
    coding_exercise_details: string | null;
  };
  date_created: string;
  date_modified: string;
  status: string;
}

export interface SandboxInvite {
  candidate_id: string;
  interview_id: string;
  interview_name: string;
  candidate_name: string;
  candidate_email_id: string;
  /** The candidate's own link (`...?cid=`); not part of the invites list the API answers. */
  invite_url: string;
  date_created: string;
  date_modified: string;
  status: string;
}

export type SandboxReport = Record<string, unknown> & {
  report_id: string;
  interview_id: string;
  candidate_id: string;
  candidate_name: string;
  candidate_email_id: string;
  interview_name: string;
};

export interface SandboxWebhook {
  webhook_id: string;
  url: string;
  description: string;
  event: string;
  date_created: string;
  date_modified: string;
  status: string;
}

export interface SandboxDelivery {
  webhook_id: string;
  url: string;
  report_id: string;
  outcome: 'delivered' | 'dropped' | 'failed';
  status?: number;
  error?: string;
  at: string;
  /** When the connector answered it (epoch ms): it marks the report's invitation before it answers. */
  answeredAtMs?: number;
}

export interface SandboxFaults {
  /** Share of API requests answered 429 with Retry-After. */
  rate429: number;
  /** Share of API requests answered 500. */
  rate500: number;
  retryAfterSeconds: number;
  /** Added to every API request before it is answered. */
  latencyMs: number;
  /** Share of API requests answered only after `slowMs` (past a client's timeout, the work still done). */
  slowRate: number;
  slowMs: number;
  /** Share of report webhooks never sent. */
  dropWebhookRate: number;
  /**
   * Share of reports served with their documented-nullable fields null and optional fields missing (the OpenAPI
   * marks no response field required). The same reports every time: chosen by report id.
   */
  sparseReportRate: number;
  /** The most items a page holds, whatever `limit` asked (the service documents no maximum). 0: no cap. */
  maxPageSize: number;
}

export interface CompletionRequest {
  interview_id: string;
  candidate_name: string;
  candidate_email: string;
  candidate_id?: string | undefined;
  ats_job_id?: string | undefined;
  ats_job_application_id?: string | undefined;
  delay_ms?: number | undefined;
  ai_match_score?: number | undefined;
  proctoring_violations?: number | undefined;
  /** How the file host serves the report's PDF (a served PDF unless said). */
  report_file?: ReportFile | undefined;
}

/**
 * How the file host answers a report's `report_url`: the PDF (`pdf`), no file and `report_url` null (`missing`), a
 * valid PDF larger than `bytes` (`oversize`), or an HTML page in its place (`html`, as an expired link's sign-in).
 */
export interface ReportFile {
  file: 'pdf' | 'missing' | 'oversize' | 'html';
  bytes?: number | undefined;
}

export interface SandboxState {
  /** E-mails the service itself sent for `POST /interview/invite` (unless `disable_email_notification`). */
  emailsSent: { to: string; interview_id: string }[];
  /** Why each 400 "Invalid request" was answered (the answer itself names nothing, as the service's). */
  refusals: string[];
  interviews: SandboxInterview[];
  invites: SandboxInvite[];
  reports: SandboxReport[];
  webhooks: SandboxWebhook[];
  deliveries: SandboxDelivery[];
  applicants: SeededApplicant[];
  /** How each report's file is served, by report id, where a control said (a PDF otherwise). */
  reportFiles: Record<string, ReportFile>;
  /** Requests per route (`POST /custom/interview`, `GET /files/reports/:file`), faults included, control excluded. */
  requests: Record<string, number>;
  faults: SandboxFaults;
}
