import { parseConnections, type AtsKind, type Connection, type ConnectionSecrets } from '../../shared/config';
import type { LocalStack } from '../../infra/local/local-stack';

/** A new list each time: a test that changes a document's question changes no other document. */
const questions = () => [{ question: 'Tell us about a system you built.', time: 3, type: 'audio' }];

/** A valid connections document; tests change one field to see how it is refused. */
export function connectionDocument(overrides: Record<string, unknown> = {}): {
  connections: Record<string, unknown>[];
} {
  return {
    connections: [
      {
        id: 'acme-greenhouse',
        ats: 'greenhouse',
        atsBaseUrl: 'https://harvest.greenhouse.io',
        atsUserId: '4080',
        interviewService: { baseUrl: 'https://api.interviews.example.com' },
        secretRef: 'connector/acme-greenhouse',
        triggers: [
          {
            id: 'ai-screen',
            jobs: ['3301'],
            stage: { name: 'AI Interview' },
            interview: { questions: questions() },
          },
        ],
        writeBack: { advance: { minAiMatchScore: 75, toStage: { name: 'Hiring Manager Review' } } },
        ...overrides,
      },
    ],
  };
}

/**
 * The fields that make connectionDocument's connection a Workable one: its account, the member writes are made as,
 * and its trigger on the stage "AI Interview" in every job.
 */
export const workableFields = () => ({
  id: 'acme-workable',
  ats: 'workable',
  atsBaseUrl: 'https://acme.workable.com',
  atsUserId: 'member-1',
  triggers: [{ id: 'ai-screen', stage: { name: 'AI Interview' }, interview: { questions: questions() } }],
});

/** A Kombo connection to one integration (Personio's, unless told), and the secret its adapter is made with. */
export function komboConnection(integration = 'personio:acme-unified'): {
  connection: Connection;
  secrets: ConnectionSecrets;
} {
  const connection = parseConnections(
    connectionDocument({
      ...{ id: 'acme-personio', ats: 'kombo', atsBaseUrl: 'https://api.kombo.dev/v1', atsUserId: 'kombo' },
      atsIntegrationId: integration,
    }),
  )[0] as Connection;
  const secrets = { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32), atsApiKey: 'kombo-key' };
  return { connection, secrets: secrets as ConnectionSecrets };
}

/** The secret a webhook of `event` is signed with: the one the ATS issued for that event (Lever), else the one. */
export function webhookSecretOf(
  secrets: { atsWebhookSecret?: string | undefined; atsWebhookSecrets?: Record<string, string> | undefined },
  event = 'candidateStageChange',
): string {
  const secret = secrets.atsWebhookSecrets?.[event] ?? secrets.atsWebhookSecret;
  if (!secret) throw new Error(`no webhook secret for ${event}`);
  return secret;
}

/** A Greenhouse connection to a sandbox and its secrets, as the adapter takes them (`secrets` adds or replaces). */
export function greenhouseSandboxConnection(
  sandbox: { url: string; clientId: string; clientSecret: string },
  secrets: Partial<ConnectionSecrets> = {},
): { connection: Connection; secrets: ConnectionSecrets } {
  const document = connectionDocument({ atsBaseUrl: sandbox.url, atsAuthUrl: `${sandbox.url}/token` });
  return {
    connection: parseConnections(document)[0] as Connection,
    secrets: {
      ...{ interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32) },
      ...{ atsClientId: sandbox.clientId, atsClientSecret: sandbox.clientSecret, ...secrets },
    },
  };
}

/**
 * A local stack's connection of each ATS kind, its webhook secret, and a POST to its webhook URL (`stack` is read at
 * each call: a file starts its stack in `beforeAll`).
 */
export function atsWebhooks(stack: () => LocalStack) {
  const connectionOf = (kind: AtsKind) => stack().connections.find((c) => c.ats === kind)!;
  return {
    connectionOf,
    secretOf: (kind: AtsKind, event?: string) => webhookSecretOf(stack().secrets[connectionOf(kind).secretRef]!, event),
    post: (kind: AtsKind, body: string, headers: Record<string, string>) =>
      fetch(`${stack().gatewayUrl}/webhooks/ats/${connectionOf(kind).id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      }),
  };
}
