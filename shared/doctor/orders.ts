import * as v from 'valibot';
import type { Connection, ConnectionSecrets } from '../config';
import { createInterviewInputSchema } from '../interview-service/schemas/inputs.schema';
import { triggerForTest } from '../orders/order-received.use-case';
import { createInputFor, interviewNameFor } from '../pipeline/interview-template';
import { describeFirstIssue } from '../validation';
import { errorCode, httpStatus } from '../errors';
import type { OrderSource } from '../orders/records';
import { komboApiFor } from '../orders/kombo-orders';
import { describeDiff, diffPackages, isInSync, packagesOf } from '../orders/kombo-packages';
import { type CheckLine, fail, info, pass } from './lines';
import type { AtsAdapter } from '../ats/port';

/** What the order checks use of the doctor's run: the connector's base URL, and a fetch to reach it. */
interface OrderCheckDependencies {
  apiUrl: string;
  fetch?: typeof fetch;
}

const KEYS = { greenhouse: 'greenhousePartnerKey', ashby: 'ashbyPartnerKey' } as const;
/** The call of each source that only a key the connector accepts is answered: its list of tests. */
const LIST = {
  greenhouse: { path: 'greenhouse/list_tests', method: 'GET', body: undefined },
  ashby: { path: 'ashby/assessment.list', method: 'POST', body: '{}' },
} as const;

/**
 * Each order source of the connection end to end: the key the customer's ATS sends is in the secret and the
 * connector's own endpoint accepts it and lists the configured tests; Greenhouse's completion credential is there
 * (and not the inbound key); the customer's Ashby key may send `assessment.update` (`candidatesWrite`).
 */
export async function orderSourceLines(
  connection: Connection,
  secrets: ConnectionSecrets,
  ats: Pick<AtsAdapter, 'updateAssessment'>,
  deps: OrderCheckDependencies,
): Promise<CheckLine[]> {
  const lines: CheckLine[] = [];
  const sources = (['greenhouse', 'ashby'] as const).filter((source) => connection.orders?.[source]);
  for (const source of sources) {
    const tests = connection.orders?.[source]?.tests ?? [];
    const key = secrets[KEYS[source]];
    if (!key?.startsWith(`${connection.id}.`)) {
      lines.push(
        fail(
          `${source} orders: no ${KEYS[source]} of this connection in its secret`,
          `npm run ops -- partner-key --connection ${connection.id}, put it in the secret as ${KEYS[source]}, ` +
            'and give it to the customer for their ATS',
        ),
      );
      continue;
    }
    lines.push(templatesLine(connection, source));
    lines.push(
      await listLine(
        source,
        key,
        tests.map((t) => t.id),
        deps,
      ),
    );
    if (source === 'greenhouse') lines.push(completionLine(secrets));
    if (source === 'ashby') lines.push(await ashbyPermissionLine(ats));
  }
  if (connection.orders?.kombo)
    lines.push(templatesLine(connection, 'kombo'), ...(await komboLines(connection, secrets)));
  return lines;
}

/**
 * Kombo: the API key and the webhook secret in the secret, and each integration's packages against the tests
 * configured (the difference `npm run ops -- kombo-packages --publish` would make).
 */
async function komboLines(connection: Connection, secrets: ConnectionSecrets): Promise<CheckLine[]> {
  const kombo = connection.orders?.kombo;
  if (!kombo) return [];
  const lines: CheckLine[] = [];
  if (!secrets.komboWebhookSecret)
    lines.push(
      fail(
        'kombo orders: no komboWebhookSecret: every order webhook is refused (401)',
        "copy the webhook secret from Kombo's dashboard into the secret as komboWebhookSecret",
      ),
    );
  const api = komboApiFor(connection, secrets);
  if (!api) {
    lines.push(
      fail(
        'kombo orders: no komboApiKey: packages, missed orders and results cannot reach Kombo',
        "create an API key in Kombo's dashboard and put it in the secret as komboApiKey",
      ),
    );
    return lines;
  }
  const configured = packagesOf(kombo);
  for (const integrationId of kombo.integrations) {
    try {
      const diff = diffPackages(configured, await api.getPackages(integrationId, AbortSignal.timeout(15_000)));
      lines.push(
        isInSync(diff, false)
          ? pass(`kombo orders: ${integrationId} offers the ${configured.length} configured package(s)`)
          : fail(
              `kombo orders: ${integrationId} packages differ: ${describeDiff(diff, false)}`,
              `npm run ops -- kombo-packages --connection ${connection.id} --publish`,
            ),
      );
    } catch (error) {
      lines.push(
        fail(
          `kombo orders: ${integrationId}: the packages could not be read (${errorCode(error)})`,
          httpStatus(error) === 401 || httpStatus(error) === 403
            ? 'komboApiKey is not accepted: check the key in the secret'
            : 'check the integration id in orders.kombo.integrations and Kombo’s status',
        ),
      );
    }
  }
  return lines;
}

/** Each test's interview as the connector would create it, held against the service's own input rules. */
function templatesLine(connection: Connection, source: OrderSource): CheckLine {
  const schema = createInterviewInputSchema(connection.interviewService.extraLanguages);
  for (const test of connection.orders?.[source]?.tests ?? []) {
    const trigger = triggerForTest(test);
    const parsed = v.safeParse(
      schema,
      createInputFor(trigger, interviewNameFor(connection, trigger, { atsJobId: 'orders', jobName: test.name })),
    );
    if (!parsed.success)
      return fail(
        `${source} orders: test ${test.id} would make an interview the service refuses: ` +
          describeFirstIssue(parsed.issues, { fallbackField: 'interview' }).message,
        `fix orders.${source}.tests (${test.id}).interview in the connections file`,
      );
  }
  return pass(`${source} orders: every test's interview template is one the service takes`);
}

async function listLine(
  source: 'greenhouse' | 'ashby',
  key: string,
  testIds: string[],
  deps: OrderCheckDependencies,
): Promise<CheckLine> {
  const call = LIST[source];
  const url = `${deps.apiUrl.replace(/\/+$/, '')}/orders/${call.path}`;
  try {
    const response = await (deps.fetch ?? fetch)(url, {
      method: call.method,
      headers: {
        authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: call.body,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    const listed = testIds.filter((id) => text.includes(JSON.stringify(id)));
    if (response.status === 200 && listed.length === testIds.length)
      return pass(`${source} orders: the connector accepts the customer's key and lists ${testIds.length} test(s)`);
    return fail(
      `${source} orders: ${url} answered ${response.status}${response.status === 200 ? ' without every test' : ''}`,
      response.status === 401
        ? 'the key in the secret is not the one the connector accepts: redeploy, or wait for the secret cache'
        : 'check the deployment (the OrderApi function) and the connection’s orders',
    );
  } catch (error) {
    return fail(`${source} orders: ${url} did not answer (${errorCode(error)})`, 'check ApiUrl and the deployment');
  }
}

function completionLine(secrets: ConnectionSecrets): CheckLine {
  const completion = secrets.greenhouseCompletionKey;
  if (completion && completion !== secrets.greenhousePartnerKey)
    return pass('greenhouse orders: the completion credential Greenhouse issued is in the secret');
  return fail(
    completion
      ? 'greenhouse orders: greenhouseCompletionKey is the inbound key (Greenhouse refuses it with 403)'
      : 'greenhouse orders: no greenhouseCompletionKey: results cannot be announced',
    'ask partners@greenhouse.io for the partner-to-Greenhouse credential and put it in the secret as ' +
      'greenhouseCompletionKey',
  );
}

/** An update of no assessment: refused either way, but with 403 only when the key lacks `candidatesWrite`. */
async function ashbyPermissionLine(ats: Pick<AtsAdapter, 'updateAssessment'>): Promise<CheckLine> {
  if (!ats.updateAssessment) return info('ashby orders: this connection’s ATS takes no assessment update');
  try {
    await ats.updateAssessment({
      assessment_id: 'connector-doctor-probe',
      timestamp: Date.now(),
      assessment_status: { identifier: 'status', label: 'Status', type: 'string', value: 'Started' },
    });
  } catch (error) {
    if (httpStatus(error) === 403)
      return fail(
        'ashby orders: the Ashby key may not send assessment.update',
        'give the API key the candidatesWrite permission in Ashby (Admin → API keys)',
      );
  }
  return pass('ashby orders: the Ashby key may send assessment.update (candidatesWrite)');
}
