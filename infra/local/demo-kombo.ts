import { dynamoMappingStore } from '../../shared/mapping';
import type { LocalStack } from './local-stack';

/** What one Kombo-connected customer's candidate got: invited, written back, and by which writes. */
export interface KomboDemoRun {
  connectionId: string;
  tool: string;
  invited: boolean;
  writtenBack: boolean;
  notes: number;
  /** The reason the report note was skipped, where the tool takes no notes through Kombo. */
  noteSkipped: string | undefined;
  attachments: number;
  moved: boolean;
}

type WaitFor = <T>(step: string, read: () => Promise<T> | T, done: (value: T) => boolean) => Promise<T>;

/**
 * The stage-triggered flow on each Kombo-connected customer (config/connections.kombo.json): a candidate moved into
 * "AI Interview" in the customer's ATS reaches the connector only through Kombo's synced copy (a data-changed hint,
 * then a read), is invited, takes the interview with a score the advance rule moves, and is written back with the
 * writes the tool supports.
 */
export async function runKomboDemo(
  stack: LocalStack,
  log: (line: string) => void,
  waitFor: WaitFor,
): Promise<KomboDemoRun[]> {
  const store = dynamoMappingStore({ tables: stack.tables, client: stack.dynamo });
  const unified = stack.kombo.unified;
  const connections = stack.connections.filter((c) => c.ats === 'kombo');
  return Promise.all(
    connections.map(async (connection) => {
      const integrationId = connection.atsIntegrationId as string;
      const email = `kemi.${connection.id}@candidates.example.com`;
      const { applicationId } = unified.addCandidate({ integrationId, firstName: 'Kemi', lastName: 'Adeyemi', email });
      unified.moveCandidate({ integrationId, applicationId, stageName: 'AI Interview' });
      const recordOf = async () => (await store.findApplicationsByAtsId(connection.id, applicationId))[0];
      const invited = await waitFor(`${connection.id} (Kombo) invite`, recordOf, (r) => r?.state === 'invited');
      log(`${connection.id} (Kombo ${integrationId}): invited from Kombo's synced copy`);
      stack.interview.completeInterview({
        interview_id: invited?.interviewId as string,
        candidate_name: 'Kemi Adeyemi',
        candidate_email: email,
        delay_ms: 0,
        ai_match_score: 91,
        proctoring_violations: 0,
      });
      const written = await waitFor(
        `${connection.id} (Kombo) write-back`,
        recordOf,
        (r) => r?.state === 'written_back',
      );
      const state = unified.integration(integrationId);
      const skipped = written?.steps.reportNote?.value;
      log(`${connection.id} (Kombo ${integrationId}): written back`);
      return {
        connectionId: connection.id,
        tool: integrationId.split(':')[0] ?? integrationId,
        invited: true,
        writtenBack: true,
        notes: state.notes.filter((n) => n.applicationId === applicationId).length,
        noteSkipped: skipped?.startsWith('skipped:') ? skipped : undefined,
        attachments: state.attachments.filter((a) => a.applicationId === applicationId).length,
        moved: state.moves.some((m) => m.applicationId === applicationId),
      };
    }),
  );
}

export function formatKombo(runs: readonly KomboDemoRun[]): string[] {
  return runs.map((r) => {
    const note = r.noteSkipped ? `note ${r.noteSkipped}` : `${r.notes} notes (invite and report)`;
    const carried = `${r.attachments} report attachment${r.attachments === 1 ? '' : 's'}`;
    return `Kombo ${r.tool} (${r.connectionId}): invited and written back; ${note}; ${carried}; moved: ${r.moved}`;
  });
}

/** Each Kombo customer invited and written back; the report reached the ATS as a note, or carried by its file. */
export function checkKombo(runs: readonly KomboDemoRun[]): string | undefined {
  for (const r of runs) {
    if (!r.invited || !r.writtenBack) return `Kombo ${r.connectionId}: not invited and written back`;
    if (!r.noteSkipped && r.notes < 2) return `Kombo ${r.connectionId}: expected the invite and report notes`;
    if (r.noteSkipped && r.attachments < 1) return `Kombo ${r.connectionId}: no note and no report file in the ATS`;
    if (!r.moved) return `Kombo ${r.connectionId}: the advance rule's move was not made`;
  }
  return undefined;
}
