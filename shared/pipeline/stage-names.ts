import type { AtsAdapter, StageEnteredEvent } from '../ats/port';
import type { MappingStore } from './ports';

/**
 * Stage names shared between the functions where the ATS's webhooks name a stage by id only (Lever): the invite
 * worker's adapter reads them (one paced call per environment), and the webhook function names a delivery's stage
 * from them, so a stage change no trigger can match is answered at once: no replay key, no message, no ATS call.
 */

/** The event's stage named from `names` where the delivery gave its id alone; the event as it was otherwise. */
export function withStageName(
  event: StageEnteredEvent,
  names: ReadonlyMap<string, string> | undefined,
): StageEnteredEvent {
  const id = event.stage.id;
  const name = event.stage.name === undefined && id !== undefined ? names?.get(id) : undefined;
  return name === undefined ? event : { ...event, stage: { ...event.stage, name } };
}

/** A worker environment shares its names again when it has read more, or half a day after it last did. */
const SHARE_AGAIN_MS = 12 * 3600_000;
const shared = new WeakMap<AtsAdapter, { size: number; at: number }>();

/** Writes the names of the stages this environment's adapter has read, when they are new here (one write each). */
export async function shareStageNames(
  connectionId: string,
  ats: AtsAdapter,
  store: Pick<MappingStore, 'rememberStageNames'>,
  now: number,
): Promise<void> {
  const names = ats.knownStageNames?.();
  const last = shared.get(ats);
  if (!names?.size || (last?.size === names.size && now - last.at < SHARE_AGAIN_MS)) return;
  await store.rememberStageNames(connectionId, Object.fromEntries(names), now);
  shared.set(ats, { size: names.size, at: now });
}

/**
 * The webhook function's copy: read again after NAMES_FRESH_MS, or sooner (NAMES_RELOAD_MS) for an id not in it (a
 * burst's first deliveries come before any worker has read the stages: a read per environment every few seconds).
 */
const NAMES_FRESH_MS = 10 * 60_000;
const NAMES_RELOAD_MS = 5_000;

export function stageNamesReader(store: Pick<MappingStore, 'stageNames'>, now: () => number = Date.now) {
  const read = new Map<string, { names: ReadonlyMap<string, string>; at: number }>();
  /** The delivery's stage named where it came by id alone; a failed read leaves it unnamed (it is enqueued). */
  return async (connectionId: string, event: StageEnteredEvent): Promise<StageEnteredEvent> => {
    const id = event.stage.id;
    if (event.stage.name !== undefined || id === undefined) return event;
    const at = now();
    let copy = read.get(connectionId);
    const age = copy ? at - copy.at : Number.POSITIVE_INFINITY;
    const stale = age >= NAMES_FRESH_MS || (!copy?.names.has(id) && age >= NAMES_RELOAD_MS);
    if (stale) {
      const names = await store.stageNames(connectionId, at).catch(() => undefined);
      copy = { names: new Map(Object.entries(names ?? {})), at };
      read.set(connectionId, copy);
    }
    return withStageName(event, copy?.names);
  };
}
