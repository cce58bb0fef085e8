import type { AtsHttpClient } from '../ats-http';
import { errorMessage, httpStatus } from '../../errors';
import { failedBeforeWrite } from '../errors';
import { KOMBO_ERROR_CODES, KOMBO_WRITE_ACTIONS } from './kombo.actions';
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
  /**
   * Each write's coverage as Kombo reports it, and whether the connector makes it; `listed: false` where the table
   * names no action of that id (the connector's id unconfirmed): tried, and skipped when Kombo refuses it.
   */
  writes: Record<KomboWrite, { supported: boolean; coverage: string; listed: boolean }>;
}

/** Kombo's codes for a write its integration cannot make (ats-routes.json `ats.kombo.rateLimit`, error codes). */
const REFUSED_WRITE_CODES = [
  KOMBO_ERROR_CODES.actionNotAvailable,
  KOMBO_ERROR_CODES.actionDisabled,
  KOMBO_ERROR_CODES.permissionMissing,
];

/**
 * The integration's capability table (`GET /integrations/{integration_id}`, `write_actions`), read once and kept
 * 5 minutes: a write is made where it is SUPPORTED and available, and skipped where the table says otherwise. One the
 * table does not list is tried: the ids of the move, note and tag actions are the connector's choice, unconfirmed
 * (./kombo.actions.ts), and skipping on a wrong id would skip every candidate's; Kombo's refusal of the write
 * (INTEGRATION.ACTION_NOT_AVAILABLE, ACTION_DISABLED, PERMISSION_MISSING) skips it then, its code the reason.
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

  /**
   * Makes the write where the table allows it: its result, or why it was skipped (the table's refusal, or Kombo's
   * answer that the integration cannot make it). Any other failure is the write's, thrown.
   */
  public async attempt<T>(
    write: KomboWrite,
    run: () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<{ made: T } | { skipped: string }> {
    // The table read failed: the write was never sent (a step may do it again), whatever the read met.
    const refusal = await this.refusal(write, signal).catch((error: unknown) => {
      throw failedBeforeWrite(error);
    });
    if (refusal) return { skipped: refusal };
    try {
      return { made: await run() };
    } catch (error) {
      const code = REFUSED_WRITE_CODES.find((c) => errorMessage(error).includes(c));
      const status = httpStatus(error);
      if (!code || status === undefined || status < 400 || status >= 500) throw error;
      const { tool } = await this.read(signal);
      return { skipped: `skipped: ${tool} through Kombo does not ${WHAT[write]} (${code})` };
    }
  }

  private async load(signal?: AbortSignal): Promise<Capabilities> {
    const path = `/integrations/${encodeURIComponent(this.integrationId)}`;
    const { data } = await this.http.request({ method: 'GET', path, signal }, komboIntegrationSchema);
    const listed = new Map(data.write_actions.map((a) => [a.id, a]));
    const writes = Object.fromEntries(
      (Object.keys(KOMBO_WRITE_ACTIONS) as KomboWrite[]).map((write) => {
        const action = listed.get(KOMBO_WRITE_ACTIONS[write]);
        if (!action) return [write, { supported: true, coverage: 'NOT LISTED', listed: false }];
        const supported = action.coverage_status === 'SUPPORTED' && action.is_available;
        return [write, { supported: Boolean(supported), coverage: action.coverage_status, listed: true }];
      }),
    ) as Capabilities['writes'];
    return { tool: data.tool.label ?? data.tool.id, state: data.status, writes };
  }
}

export { WHAT as KOMBO_WRITE_WHAT };
