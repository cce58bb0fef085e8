import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalStack } from '../../infra/local/local-stack';
import { dynamoMappingStore } from '../../shared/mapping';

/** The synced copy's lag the run measures at (the sandbox's default: about where Kombo's own upstream hints land). */
const SYNC_LAG_MS = 2_000;
const WAIT_MS = 120_000;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

/**
 * `npm run bench -- --ats kombo [--candidates N]`: N candidates of one Kombo-connected customer (Personio, every
 * write supported) moved into the trigger's stage at once, on the whole local stack. Prints the time from each stage
 * change to its invitation (through Kombo's synced copy at its lag, the data-changed hint and the read), and the share
 * of Kombo's 30-writes-in-flight limit the burst used at its peak.
 */
export async function benchKombo(candidates: number): Promise<void> {
  const workDir = mkdtempSync(join(tmpdir(), 'bench-kombo-'));
  const stack = await startLocalStack({ configPath: 'config/connections.kombo.json', workDir, reconcileIntervalMs: 0 });
  try {
    const unified = stack.kombo.unified;
    unified.setSyncLag(SYNC_LAG_MS);
    const integrationId = 'personio:acme-unified';
    const connectionId = 'acme-personio';
    const store = dynamoMappingStore({ tables: stack.tables, client: stack.dynamo });
    const moved = Array.from({ length: candidates }, (_, i) => {
      const email = `bench-${i}@candidates.example.com`;
      const { applicationId } = unified.addCandidate({ integrationId, firstName: `Bench${i}`, lastName: 'K', email });
      return { applicationId, at: 0, invitedAt: 0 };
    });
    const started = Date.now();
    for (const m of moved) {
      unified.moveCandidate({ integrationId, applicationId: m.applicationId, stageName: 'AI Interview' });
      m.at = Date.now();
    }
    const deadline = started + WAIT_MS;
    while (moved.some((m) => !m.invitedAt) && Date.now() < deadline) {
      for (const m of moved.filter((x) => !x.invitedAt)) {
        const [record] = await store.findApplicationsByAtsId(connectionId, m.applicationId);
        if (record?.state === 'invited') m.invitedAt = record.updatedAt;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await stack.waitForQuiet(WAIT_MS);
    const latencies = moved
      .filter((m) => m.invitedAt)
      .map((m) => m.invitedAt - m.at)
      .sort((a, b) => a - b);
    const peak = unified.integration(integrationId).peakInFlight;
    console.log(`Kombo (personio, sync lag ${SYNC_LAG_MS} ms): ${candidates} candidates moved at once`);
    console.log(`  invited: ${latencies.length}/${candidates}`);
    console.log(
      `  stage change → invitation: median ${percentile(latencies, 50)} ms, p95 ${percentile(latencies, 95)} ms, ` +
        `max ${latencies.at(-1)} ms`,
    );
    console.log(
      `  concurrency limit used at the burst's peak: ${peak} of 30 writes in flight ` +
        `(${Math.round((peak / 30) * 100)} %)`,
    );
    console.log(
      `  hints sent: ${unified.hints().length}; ` +
        `reads of applications: ${unified.requests()['GET /v1/ats/applications'] ?? 0}`,
    );
    if (latencies.length !== candidates) process.exitCode = 1;
  } finally {
    await stack.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}
