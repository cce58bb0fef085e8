import { createHmac, randomUUID } from 'node:crypto';
import { sendJson } from '../../http-kit';
import {
  startAtsSandbox,
  type AtsSandbox,
  type KitApplication,
  type KitContext,
  type KitStage,
} from '../ats-sandbox-kit';

export const WORKABLE_SANDBOX_DEFAULTS = { port: 4050, token: 'workable-sandbox-token', subdomain: 'acme' } as const;

const STAGES: KitStage[] = [
  { id: 'applied', name: 'Applied' },
  { id: 'ai-interview', name: 'AI Interview' },
  { id: 'hiring-manager-review', name: 'Hiring Manager Review' },
  { id: 'offer', name: 'Offer' },
];

function candidateJson(kit: KitContext, application: KitApplication) {
  const { candidate, job } = kit.parties(application);
  return {
    id: application.id,
    name: `${candidate.firstName} ${candidate.lastName}`,
    firstname: candidate.firstName,
    lastname: candidate.lastName,
    email: candidate.email,
    job: { shortcode: job.id, title: job.name },
    stage: application.stageId,
    disqualified: application.status === 'archived',
    account: { subdomain: WORKABLE_SANDBOX_DEFAULTS.subdomain, name: 'Acme' },
    updated_at: application.updatedAt,
  };
}

/** A stand-in of Workable's SPI v3 (bearer token, 10 requests per 10 s) and its signed webhooks. */
export function startWorkableSandbox(
  options: { port?: number; rateLimit?: number | undefined } = {},
): Promise<AtsSandbox> {
  return startAtsSandbox({
    kind: 'workable',
    port: options.port ?? WORKABLE_SANDBOX_DEFAULTS.port,
    jobs: [{ id: 'GROOV005', name: 'Backend Engineer', stages: STAGES }],
    rateLimit: { limit: options.rateLimit ?? 10, windowMs: 10_000 },
    // Workable announces the next interval in X-Rate-Limit-Reset, with no Retry-After (reference: rate-limits).
    rateLimited: (response, resetMs) =>
      sendJson(
        response,
        429,
        { error: 'Too many requests' },
        {
          'x-rate-limit-limit': '10',
          'x-rate-limit-remaining': '0',
          'x-rate-limit-reset': String(Math.ceil((Date.now() + resetMs) / 1000)),
        },
      ),
    credentials: { atsApiKey: WORKABLE_SANDBOX_DEFAULTS.token },
    authenticate: (request) =>
      request.headers.authorization === `Bearer ${WORKABLE_SANDBOX_DEFAULTS.token}` ? 'token' : undefined,
    unauthorized: (response) => sendJson(response, 401, { error: 'Not authorized' }),
    routes: (kit) => {
      const notFound = (response: Parameters<typeof sendJson>[0]) => sendJson(response, 404, { error: 'Not found' });
      return [
        {
          method: 'GET',
          pattern: '/spi/v3/candidates/:id',
          handle: ({ response, params }) => {
            const application = kit.application(params.id as string);
            if (!application) return notFound(response);
            sendJson(response, 200, { candidate: candidateJson(kit, application) });
          },
        },
        {
          method: 'POST',
          pattern: '/spi/v3/candidates/:id/comments',
          handle: async ({ request, response, params }) => {
            const application = kit.application(params.id as string);
            if (!application) return notFound(response);
            const body = await kit.json(request);
            if (!body.member_id) return sendJson(response, 422, { error: 'member_id is required' });
            const text = (body.comment as { body?: unknown } | undefined)?.body;
            if (typeof text !== 'string' || !text)
              return sendJson(response, 422, { error: 'comment.body is required' });
            const note = kit.addNote(application, text, String(body.member_id));
            sendJson(response, 201, { id: note.id });
          },
        },
        {
          method: 'GET',
          pattern: '/spi/v3/candidates/:id/comments',
          handle: ({ response, params }) =>
            sendJson(response, 200, {
              comments: kit.state.notes
                .filter((n) => n.applicationId === params.id)
                .map((n) => ({ id: n.id, body: n.body })),
            }),
        },
        {
          method: 'POST',
          pattern: '/spi/v3/candidates/:id/move',
          handle: async ({ request, response, params }) => {
            const application = kit.application(params.id as string);
            if (!application) return notFound(response);
            const body = await kit.json(request);
            if (!body.member_id) return sendJson(response, 422, { error: 'member_id is required' });
            if (!kit.stage(application.jobId, String(body.target_stage)))
              return sendJson(response, 422, { error: 'target_stage is not a stage of this job' });
            kit.moveByApi(application, String(body.target_stage));
            sendJson(response, 200, {});
          },
        },
        {
          method: 'GET',
          pattern: '/spi/v3/jobs/:shortcode/stages',
          handle: ({ response, params }) => {
            const job = kit.job(params.shortcode as string);
            if (!job) return notFound(response);
            sendJson(response, 200, {
              stages: job.stages.map((s, position) => ({ slug: s.id, name: s.name, kind: 'interview', position })),
            });
          },
        },
      ];
    },
    stageChange: (kit, application, secret) => {
      const body = Buffer.from(
        JSON.stringify({
          id: randomUUID(),
          event_type: 'candidate_moved',
          fired_at: new Date().toISOString(),
          resource_type: 'candidate',
          data: candidateJson(kit, application),
        }),
      );
      return [
        {
          body,
          headers: { 'x-workable-signature': createHmac('sha256', secret).update(body).digest('hex') },
          eventId: randomUUID(),
        },
      ];
    },
  });
}
