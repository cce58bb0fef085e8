import * as v from 'valibot';
import { customQuestionListSchema, interviewLanguageSchema, skillListSchema } from '../interview-service/schemas';
import { CODING_LANGUAGES } from '../interview-service/constants';

/** `kombo`: Kombo's unified ATS API, in front of the customer's ATS (one integration per connection). */
export const ATS_KINDS = ['greenhouse', 'ashby', 'lever', 'workable', 'kombo'] as const;
export type AtsKind = (typeof ATS_KINDS)[number];
/** The ATSs the connector calls directly (not through Kombo's unified API): each has a sandbox of its own locally. */
export const DIRECT_ATS_KINDS = ['greenhouse', 'ashby', 'lever', 'workable'] as const satisfies readonly AtsKind[];
export type DirectAtsKind = (typeof DIRECT_ATS_KINDS)[number];

/** A connection's (or a trigger's) id: lowercase letters, digits and dashes, 63 at most. */
export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
const slug = v.pipe(v.string(), v.regex(SLUG_PATTERN, 'must be lowercase letters, digits and dashes (at most 63)'));
const httpUrl = v.pipe(v.string(), v.url('must be a URL'), v.regex(/^https?:\/\//, 'must be an http(s) URL'));

/**
 * A stage: its id (global in Lever; a slug in Workable), its id per job (`idsByJob`, for ATSs whose stage ids
 * belong to one job: Greenhouse, Ashby, Workable), or its exact name.
 */
const stageMatcher = v.pipe(
  v.object({
    id: v.optional(v.pipe(v.string(), v.nonEmpty())),
    idsByJob: v.optional(v.record(v.string(), v.pipe(v.string(), v.nonEmpty()))),
    name: v.optional(v.pipe(v.string(), v.nonEmpty())),
  }),
  v.check(
    (stage) => stage.id !== undefined || stage.name !== undefined || stage.idsByJob !== undefined,
    'needs an id, idsByJob or a name',
  ),
);

const interviewTemplate = v.object({
  /**
   * `{jobName}` and `{jobId}` are filled in; the connector appends a marker so each job × trigger has a unique name.
   */
  namePattern: v.optional(v.pipe(v.string(), v.nonEmpty()), '{jobName} – AI interview'),
  questions: customQuestionListSchema,
  language: v.optional(v.string(), 'en'),
  allowLanguageChange: v.optional(v.boolean(), false),
  proctoring: v.optional(v.boolean(), true),
  skills: v.optional(skillListSchema, []),
  codingRound: v.optional(
    v.object({
      required: v.optional(v.boolean(), true),
      only: v.optional(v.boolean(), false),
      language: v.picklist(CODING_LANGUAGES, `must be one of ${CODING_LANGUAGES.join(', ')}`),
      details: v.optional(v.string()),
    }),
  ),
});

const invite = v.object({
  email: v.optional(v.boolean(), true),
  atsNote: v.optional(v.boolean(), true),
  /** Verified SES sender. */
  from: v.optional(v.pipe(v.string(), v.email('must be an e-mail address'))),
});

const trigger = v.object({
  id: slug,
  jobs: v.optional(
    v.union([
      v.literal('all'),
      v.pipe(v.array(v.pipe(v.string(), v.nonEmpty())), v.minLength(1, 'list at least one job, or use "all"')),
    ]),
    'all',
  ),
  stage: stageMatcher,
  interview: interviewTemplate,
  invite: v.optional(invite, { email: true, atsNote: true }),
  /** E-mails to an invited candidate with no report: the first `afterHours` after the invite, then as often. */
  reminders: v.optional(
    v.object({
      afterHours: v.pipe(v.number(), v.minValue(0.0001), v.maxValue(24 * 60)),
      max: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(5)), 1),
    }),
  ),
  /** Days after the invite when an invitation with no report expires (a note, and the status); off when absent. */
  expireAfterDays: v.optional(v.pipe(v.number(), v.minValue(0.0001), v.maxValue(365))),
  /**
   * A candidate who enters the stage again after their invitation expired or was cancelled (they left the process):
   * `on-reentry` invites them once more per re-entry, `never` leaves them be.
   */
  reinvite: v.optional(v.picklist(['on-reentry', 'never'], 'must be on-reentry or never'), 'on-reentry'),
});

/** A test a recruiter can order inside the ATS's assessment framework: one interview template of the connection. */
const orderTest = v.object({
  id: slug,
  /** What the ATS shows the recruiter (Greenhouse's `partner_test_name`). */
  name: v.pipe(v.string(), v.nonEmpty(), v.maxLength(200)),
  /** A line some ATSs show under the name (Ashby's and Kombo's description); the name when absent. */
  description: v.optional(v.pipe(v.string(), v.nonEmpty(), v.maxLength(2000))),
  interview: interviewTemplate,
  /** Verified SES sender of the invitation e-mail (Greenhouse expects the partner to e-mail the candidate). */
  from: v.optional(v.pipe(v.string(), v.email('must be an e-mail address'))),
  /** Days after the invitation when an order with no report expires; no contract sets one. */
  expireAfterDays: v.optional(v.pipe(v.number(), v.minValue(0.0001), v.maxValue(365)), 14),
});

/** The tests a source offers the recruiter: at least one, each id once. */
const orderTests = v.pipe(
  v.array(orderTest),
  v.minLength(1, 'list at least one test'),
  v.check((tests) => new Set(tests.map((t) => t.id)).size === tests.length, 'test ids must be unique'),
);
const orderSource = v.object({ tests: orderTests });

/** A Kombo integration id, `<tool>:<id>`: one customer's ATS reached through Kombo. */
const komboIntegrationId = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9_-]{1,60}:[A-Za-z0-9_.-]{1,200}$/, 'must be a Kombo integration id, <tool>:<id>'),
);

/**
 * Kombo's Assessment API, one Kombo account: its tests are the packages published to each integration (type
 * VIDEO_INTERVIEW), its orders come as signed `assessment:order-received` webhooks, its results go back with one
 * `PUT /assessment/orders/{id}/result`.
 */
const komboSource = v.object({
  tests: orderTests,
  /** Kombo's API: the EU region by default; `https://api.us.kombo.dev/v1` for the US one. */
  baseUrl: v.optional(httpUrl, 'https://api.kombo.dev/v1'),
  /** The customers' ATSs taking orders, by integration id: packages are published to each, missed orders fetched. */
  integrations: v.pipe(
    v.array(komboIntegrationId),
    v.minLength(1, 'list at least one integration'),
    v.check((ids) => new Set(ids).size === ids.length, 'integration ids must be unique'),
  ),
});

/**
 * Orders from inside the ATS, per source it opts in to: Greenhouse Assessment Partner (its tests are the
 * `partner_test_id`s), Ashby Assessments (its tests are the `assessment_type_id`s), Kombo (its tests are the
 * package ids, for about seventeen more ATSs).
 */
const orders = v.object({
  greenhouse: v.optional(orderSource),
  ashby: v.optional(orderSource),
  kombo: v.optional(komboSource),
});

/** Scores may advance or flag for review; nothing here can reject (the service's stance on automated decisions). */
const advanceRule = v.object({
  minAiMatchScore: v.pipe(v.number(), v.minValue(0), v.maxValue(100)),
  maxProctoringViolations: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 0),
  minProctoringScore: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100))),
  toStage: stageMatcher,
});

const writeBack = v.object({
  note: v.optional(
    v.object({ visibility: v.optional(v.picklist(['admin_only', 'private', 'public']), 'admin_only') }),
    { visibility: 'admin_only' },
  ),
  advance: v.optional(advanceRule),
  /**
   * Where recruiters filter on the AI interview's status (invited, completed, flagged for review, advanced,
   * expired): `tags` with each ATS's own tags, or `off`.
   */
  status: v.optional(v.picklist(['tags', 'off'], 'must be tags or off'), 'off'),
  /**
   * How a status tag is spelt: `label` ("AI interview: flagged for review") or `token` ("ai-interview-flagged", one
   * lower-case word of at most 25 characters, for an ATS that keeps a tag's first word only). Default: `token` on
   * Workable (reported to keep a tag as its first word, lower-cased), `label` elsewhere.
   */
  statusTagFormat: v.optional(v.picklist(['label', 'token'], 'must be label or token')),
  /**
   * The status of a candidate who left the process after their invitation (rejected, withdrew, hired): `cancelled`
   * shows "AI interview: cancelled", `removed` takes every AI interview status tag off.
   */
  statusOnExit: v.optional(v.picklist(['cancelled', 'removed'], 'must be cancelled or removed'), 'cancelled'),
  /**
   * The report as a file on the candidate's record (the service's PDF at `report_url`), after the note: on by
   * default. A report with no file, one the ATS refuses or one over its limit leaves the note with its link.
   */
  attachReport: v.optional(v.boolean('must be true or false'), true),
});

export const connectionSchema = v.pipe(
  v.object({
    id: slug,
    ats: v.picklist(ATS_KINDS, `must be one of ${ATS_KINDS.join(', ')}`),
    atsBaseUrl: httpUrl,
    /** Greenhouse v3 OAuth token endpoint; defaults to Greenhouse's own. */
    atsAuthUrl: v.optional(httpUrl),
    /** Kombo: the customer's integration (`X-Integration-Id`, e.g. `personio:8a7b…`), as Kombo's dashboard names it. */
    atsIntegrationId: v.optional(v.pipe(v.string(), v.nonEmpty(), v.maxLength(200))),
    /** The ATS user that writes are made as (Greenhouse `sub`/`user_id`, Lever `perform_as`, Workable `member_id`). */
    atsUserId: v.pipe(v.string(), v.nonEmpty()),
    interviewService: v.object({
      baseUrl: httpUrl,
      extraLanguages: v.optional(v.array(v.string()), []),
      /** Per call; GETs and PUTs are retried within the worker's deadline. */
      timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(60_000)), 10_000),
      /**
       * `shared-link` (default): every candidate of a job × trigger gets the interview's one link, and a report is
       * matched by interview and e-mail. `per-candidate`: the service issues each candidate their own link and id
       * (`POST /interview/invite`), and a report is matched by that id, exactly. `emailedBy` says who e-mails it.
       */
      invites: v.optional(
        v.object({
          mode: v.optional(v.picklist(['shared-link', 'per-candidate']), 'shared-link'),
          emailedBy: v.optional(v.picklist(['connector', 'service']), 'connector'),
        }),
        { mode: 'shared-link', emailedBy: 'connector' },
      ),
    }),
    atsTimeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(60_000)), 10_000),
    /**
     * The ATS account's rate limit: calls are paced to `requests` per `perSeconds` across every environment. Unset,
     * the rate its ATS's profile documents applies (shared/ats/<kind>/profile.ts; Ashby publishes none and is not
     * paced unless this is set).
     */
    atsRateLimit: v.optional(
      v.object({
        requests: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000)),
        perSeconds: v.pipe(v.number(), v.minValue(0.1), v.maxValue(3600)),
      }),
    ),
    /** Name of the secret (Secrets Manager in AWS, the local secrets file on one machine); never the secret itself. */
    secretRef: v.pipe(v.string(), v.regex(/^[A-Za-z0-9/_+=.@-]{1,512}$/, 'must be a Secrets Manager secret name')),
    triggers: v.pipe(v.array(trigger), v.minLength(1, 'at least one trigger')),
    writeBack: v.optional(writeBack, { note: { visibility: 'admin_only' }, status: 'off', attachReport: true }),
    /**
     * The ATS sweep: every `everyMinutes`, each trigger's stage is listed through the ATS's API and any application
     * the connector does not know is treated as a stage change that never arrived. `maxPagesPerRun` bounds one run;
     * a longer list continues at the next.
     */
    sweep: v.optional(
      v.object({
        everyMinutes: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(24 * 60)), 30),
        maxPagesPerRun: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(200)), 20),
        enabled: v.optional(v.boolean(), true),
      }),
      { everyMinutes: 30, maxPagesPerRun: 20, enabled: true },
    ),
    /** Assessments the ATS orders from the connector (its partner endpoints), per source; none when absent. */
    orders: v.optional(orders),
    /** Lever: how old a delivery's `triggeredAt` may be before it is refused as stale. */
    webhookFreshnessMinutes: v.optional(v.pipe(v.number(), v.minValue(1), v.maxValue(24 * 60)), 10),
  }),
  v.forward(
    v.check(
      (c) => new Set(c.triggers.map((t) => t.id)).size === c.triggers.length,
      'trigger ids must be unique within a connection',
    ),
    ['triggers'],
  ),
  v.forward(
    v.check(
      (c) =>
        c.triggers.every((t) => v.is(interviewLanguageSchema(c.interviewService.extraLanguages), t.interview.language)),
      'interview.language must be a language of the service or listed in interviewService.extraLanguages',
    ),
    ['triggers'],
  ),
  // The results of Ashby's orders go back through the customer's Ashby key: the connection's own.
  v.forward(
    v.check((c) => !c.orders?.ashby || c.ats === 'ashby', 'orders.ashby needs a connection whose ats is ashby'),
    ['orders'],
  ),
  v.forward(
    v.check((c) => c.ats !== 'kombo' || Boolean(c.atsIntegrationId), 'a kombo connection names its integration'),
    ['atsIntegrationId'],
  ),
);

export const connectionsFileSchema = v.pipe(
  v.object({ connections: v.pipe(v.array(v.unknown()), v.minLength(1, 'at least one connection')) }),
);

const webhookSecret = v.pipe(
  v.string(),
  v.check((secret) => secret.trim().length >= 16, 'must be at least 16 characters (not counting blanks)'),
);

/** A key the connector issues for an ATS's partner calls: `<connection id>.<random>`, under Greenhouse's 171. */
const partnerKey = v.pipe(
  v.string(),
  v.minLength(32, 'must be at least 32 characters'),
  v.maxLength(170, 'must be under 171'),
);

/** Per-connection secrets, one JSON secret each. */
export const connectionSecretsSchema = v.object({
  interviewApiKey: v.pipe(v.string(), v.nonEmpty()),
  /** Authenticates the service's unsigned webhooks: the last segment of the connection's interview-webhook URL. */
  interviewWebhookToken: v.pipe(v.string(), v.minLength(16, 'must be at least 16 characters')),
  /**
   * The key the connector issued the customer for Greenhouse's Assessment Partner calls (`<connection id>.<random>`,
   * under 171 characters, made by `issuePartnerKey`): Greenhouse sends it as the Basic username.
   */
  greenhousePartnerKey: v.optional(partnerKey),
  /** The key the connector issued the customer for Ashby's assessment calls (the same form), sent the same way. */
  ashbyPartnerKey: v.optional(partnerKey),
  /** Kombo: the account's API key (`Authorization: Bearer`), for packages, missed orders and results. */
  komboApiKey: v.optional(v.pipe(v.string(), v.nonEmpty())),
  /** Kombo: the webhook secret from Kombo's dashboard, the HMAC key of `X-Kombo-Signature`. */
  komboWebhookSecret: v.optional(webhookSecret),
  /** The credential Greenhouse issued for the completion PATCH (never the inbound key: Greenhouse refuses it, 403). */
  greenhouseCompletionKey: v.optional(v.pipe(v.string(), v.nonEmpty())),
  /** The ATS's webhook signing secret: at least 16 characters that are not all blanks, like the token above. */
  atsWebhookSecret: v.optional(webhookSecret),
  /**
   * Lever issues a signature token per webhook, one webhook per event type: `{ "candidateStageChange": "…",
   * "candidateDeleted": "…" }`. A delivery is verified with its event's token; `atsWebhookSecret` serves an event
   * with none here.
   */
  atsWebhookSecrets: v.optional(
    v.record(
      v.pipe(v.string(), v.regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'must be an event type, e.g. candidateStageChange')),
      webhookSecret,
    ),
  ),
  /**
   * Ids of the webhooks `npm run doctor -- --register-webhooks` created, per event type: Ashby reads a webhook
   * only by its id (it has no list). Not secret, kept with the connection.
   */
  atsWebhookIds: v.optional(v.record(v.pipe(v.string(), v.regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/)), v.string())),
  atsApiKey: v.optional(v.string()),
  atsClientId: v.optional(v.string()),
  atsClientSecret: v.optional(v.string()),
});

type SecretField = keyof v.InferOutput<typeof connectionSecretsSchema>;
/** Secrets each ATS needs; a connection missing one is refused when its secrets load, naming the field. */
export const REQUIRED_ATS_SECRETS = {
  greenhouse: ['atsWebhookSecret', 'atsClientId', 'atsClientSecret'],
  // Ashby's signing is optional in Ashby; the connector always requires it.
  ashby: ['atsWebhookSecret', 'atsApiKey'],
  // The signature token: `atsWebhookSecret` or the stage-change entry of `atsWebhookSecrets` (see missingAtsSecret).
  lever: ['atsApiKey'],
  workable: ['atsWebhookSecret', 'atsApiKey'],
  // The Kombo API key, and the secret Kombo signs its webhooks with (its dashboard shows it once).
  kombo: ['atsWebhookSecret', 'atsApiKey'],
} as const satisfies Record<AtsKind, readonly SecretField[]>;

/** The first secret an ATS needs that the connection's secret lacks, named as the secret's schema names it. */
export function missingAtsSecret(ats: AtsKind, secrets: ConnectionSecrets): string | undefined {
  const missing = REQUIRED_ATS_SECRETS[ats].find((field) => !secrets[field]);
  if (missing) return missing;
  if (ats === 'lever' && !secrets.atsWebhookSecret && !secrets.atsWebhookSecrets?.candidateStageChange)
    return 'atsWebhookSecrets.candidateStageChange (or atsWebhookSecret)';
  return undefined;
}

export type Connection = v.InferOutput<typeof connectionSchema>;
export type Trigger = Connection['triggers'][number];
export type StageMatcher = Trigger['stage'];
export type AdvanceRule = NonNullable<Connection['writeBack']['advance']>;
export type ConnectionSecrets = v.InferOutput<typeof connectionSecretsSchema>;

/**
 * The stage id configured for a job, read as an own property only: a job id from a webhook such as
 * `constructor` or `__proto__` names no stage, where `idsByJob[jobId]` would hand back an inherited function.
 */
export function stageIdForJob(
  stage: { idsByJob?: Record<string, string> | undefined },
  jobId: string | undefined,
): string | undefined {
  const byJob = stage.idsByJob;
  return byJob && jobId !== undefined && Object.hasOwn(byJob, jobId) ? byJob[jobId] : undefined;
}
