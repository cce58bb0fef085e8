import type { AtsHttpClient } from '../ats-http';
import { KOMBO_WRITE_ACTIONS } from './kombo.actions';
import { komboIntegrationSchema } from './kombo.schemas';

/** The writes the connector makes through Kombo, by the name the capability table lists each under. */
export type KomboWrite = keyof typeof KOMBO_WRITE_ACTIONS;

/** What each write does, as a reason reads: "<tool> through Kombo does not <what>". */
const WHAT: Record<KomboWrite, string> = {
  moveStage: 'move applications between stages',
  addNote: 'add notes',
  addTag: 'add tags',
  removeTag: 'remove tags',
  addAttachment: 'add attachments',
};

/** How long an integration's capability table is kept: Kombo changes it when the customer's ATS or scopes change. */
const CAPABILITIES_MS = 5 * 60_000;

export interface Capabilities {
  tool: string;
  /** The integration's state (ACTIVE, INVALID: credentials broken, INACTIVE). */
  state: string;
  /** Each write's coverage as Kombo reports it, and whether the connector makes it. */
  writes: Record<KomboWrite, { supported: boolean; coverage: string }>;
}

/**
 * The integration's capability table (`GET /integrations/{integration_id}`, `write_actions`), read once and kept
 * 5 minutes: a write is made only where it is SUPPORTED and available. One the table does not list is taken as
 * unsupported: a write Kombo cannot make would fail on every candidate.
 */
export class KomboCapabilities {
  private held: { at: number; value: Promise<Capabilities> } | undefined;

  public constructor(
    private readonly http: AtsHttpClient,
    private readonly integrationId: string,
    private readonly now: () => number = Date.now,
  ) {}

  public read(signal?: AbortSignal): Promise<Capabilities> {
    const now = this.now();
    if (this.held && now - this.held.at < CAPABILITIES_MS) return this.held.value;
    const value = this.load(signal);
    const held = { at: now, value };
    this.held = held;
    value.catch(() => {
      if (this.held === held) this.held = undefined;
    });
    return value;
  }

  /** Undefined when the write is made; else why it is skipped (the step's record, the doctor, `ops status`). */
  public async refusal(write: KomboWrite, signal?: AbortSignal): Promise<string | undefined> {
    const capabilities = await this.read(signal);
    const support = capabilities.writes[write];
    return support.supported
      ? undefined
      : `skipped: ${capabilities.tool} through Kombo does not ${WHAT[write]} (${support.coverage})`;
  }

  private async load(signal?: AbortSignal): Promise<Capabilities> {
    const path = `/integrations/${encodeURIComponent(this.integrationId)}`;
    const { data } = await this.http.request({ method: 'GET', path, signal }, komboIntegrationSchema);
    const listed = new Map(data.write_actions.map((a) => [a.id, a]));
    const writes = Object.fromEntries(
      (Object.keys(KOMBO_WRITE_ACTIONS) as KomboWrite[]).map((write) => {
        const action = listed.get(KOMBO_WRITE_ACTIONS[write]);
        const supported = action?.coverage_status === 'SUPPORTED' && action.is_available;
        return [write, { supported: Boolean(supported), coverage: action?.coverage_status ?? 'NOT LISTED' }];
      }),
    ) as Capabilities['writes'];
    return { tool: data.tool.label ?? data.tool.id, state: data.status, writes };
  }
}

export { WHAT as KOMBO_WRITE_WHAT };
