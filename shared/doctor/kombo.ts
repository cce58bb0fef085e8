import type { Connection } from '../config';
import type { Capabilities, KomboWrite } from '../ats/kombo/kombo.capabilities';
import { KOMBO_WRITE_WHAT } from '../ats/kombo/kombo.capabilities';
import { KOMBO_WRITE_ACTIONS } from '../ats/kombo/kombo.actions';
import { type CheckLine, fail, info, pass } from './lines';

/** What the doctor reads of a Kombo connection's adapter: its integration's capability table. */
export interface KomboCapabilityReader {
  readCapabilities(signal?: AbortSignal): Promise<Capabilities>;
}

/** The writes that carry a result to the ATS, in the order the write-back makes them. */
const CARRIERS: { write: KomboWrite; as: string }[] = [
  { write: 'addNote', as: 'a note' },
  { write: 'addAttachment', as: 'the report as an attachment' },
  { write: 'addTag', as: 'a status tag' },
];

/**
 * A Kombo connection's capability table (`GET /integrations/{id}`): each write the connector makes, supported or
 * skipped; whether any of them carries the result into the customer's ATS; and how far behind the ATS Kombo's copy
 * may be, which is how late a stage entry can come.
 */
export async function komboLines(connection: Connection, reader: KomboCapabilityReader): Promise<CheckLine[]> {
  const capabilities = await reader.readCapabilities();
  const lines: CheckLine[] = [];
  if (capabilities.state !== 'ACTIVE')
    lines.push(
      fail(
        `Kombo integration ${connection.atsIntegrationId} is ${capabilities.state}`,
        'ask the customer to reconnect their ATS through Kombo Connect (syncs pause after 3 days of failing auth)',
      ),
    );
  for (const [write, support] of Object.entries(capabilities.writes) as [
    KomboWrite,
    { supported: boolean; coverage: string; listed: boolean },
  ][])
    lines.push(
      !support.listed
        ? info(
            `${capabilities.tool} through Kombo lists no ${KOMBO_WRITE_ACTIONS[write]} action: the connector ` +
              `tries to ${KOMBO_WRITE_WHAT[write]}, and skips it where Kombo refuses`,
            "each skip is recorded on the application with Kombo's code (npm run ops -- status)",
          )
        : support.supported
          ? pass(`${capabilities.tool} through Kombo can ${KOMBO_WRITE_WHAT[write]}`)
          : info(
              `${capabilities.tool} through Kombo cannot ${KOMBO_WRITE_WHAT[write]} (${support.coverage}): skipped`,
              'each skip is recorded on the application with its reason (npm run ops -- status)',
            ),
    );
  const carriers = CARRIERS.filter((c) => capabilities.writes[c.write].supported);
  lines.push(
    carriers.length
      ? pass(`results reach ${capabilities.tool} as ${carriers.map((c) => c.as).join(', ')}`)
      : fail(
          `the customer will not see results in ${capabilities.tool}: no note, attachment or tag through Kombo`,
          "enable 'Add notes' or 'Add attachments' in Kombo's scope config, if the ATS offers either",
        ),
  );
  lines.push(
    info(
      'Kombo serves a synced copy: a stage entry comes about 20 s after the ATS tells Kombo, where the ATS sends it ' +
        'webhooks; otherwise up to its sync interval (hours)',
      'the reconciler reads the changes on its schedule too, so a lost data-changed hint only delays',
    ),
  );
  return lines;
}
