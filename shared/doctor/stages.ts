import type { SetupAdapter } from '../ats/setup-adapter';
import { stageIdForJob, type Connection, type StageMatcher } from '../config';
import { atsFix, closest, errorText, fail, info, pass, type CheckLine } from './lines';

/** Open jobs a trigger for "all" jobs is checked against unless `--jobs` says otherwise. */
export const DEFAULT_JOBS_FOR_ALL = 500;

/** What the stage checks share: the ATS's stages of each job, read once, and its open jobs, listed once. */
interface StageContext {
  connection: Connection;
  lines: CheckLine[];
  stages(jobId: string | undefined): Promise<{ id: string; name: string }[]>;
  /** Jobs whose id the matcher names, and (for a name that applies to any job) the jobs the ATS lists. */
  jobsOf(jobs: Connection['triggers'][number]['jobs'], matcher: StageMatcher): Promise<(string | undefined)[]>;
}

function stageContext(
  connection: Connection,
  ats: SetupAdapter,
  atsCall: <T>(work: () => Promise<T>) => Promise<T>,
  jobsForAll: number,
): StageContext {
  const lines: CheckLine[] = [];
  const stagesOf = new Map<string, Promise<{ id: string; name: string }[]>>();
  let listedJobs: Promise<string[]> | undefined;
  return {
    connection,
    lines,
    stages: (jobId) => {
      const key = jobId ?? '';
      const found = stagesOf.get(key) ?? atsCall(() => ats.listStages(jobId));
      stagesOf.set(key, found);
      return found;
    },
    jobsOf: async (jobs, matcher) => {
      if (ats.kind === 'lever') return [undefined];
      if (jobs !== 'all') return jobs;
      const named = Object.keys(matcher.idsByJob ?? {});
      if (matcher.name === undefined && matcher.id === undefined) return named;
      listedJobs ??= atsCall(() => ats.listJobs(jobsForAll)).then((list) => {
        if (list.length >= jobsForAll)
          lines.push(info(`checked the first ${jobsForAll} open jobs the ATS lists; --jobs N checks more`));
        return list.map((j) => j.id);
      });
      return [...new Set([...named, ...(await listedJobs)])];
    },
  };
}

/** One stage matcher checked in each job it applies to: a line that passes, or fails naming the closest stages. */
async function checkStage(
  context: StageContext,
  label: string,
  matcher: StageMatcher,
  jobIds: readonly (string | undefined)[],
): Promise<void> {
  const problems: string[] = [];
  let fix = '';
  for (const jobId of jobIds) {
    const list = await context.stages(jobId);
    const wantedId = stageIdForJob(matcher, jobId) ?? matcher.id;
    const ok = wantedId !== undefined ? list.some((s) => s.id === wantedId) : list.some((s) => s.name === matcher.name);
    if (ok) continue;
    const where = jobId === undefined ? context.connection.ats : `job ${jobId}`;
    if (wantedId !== undefined) {
      problems.push(`${where} has no stage with id ${wantedId}`);
      fix = `its stages are ${list.map((s) => `${s.id} (${s.name})`).join(', ') || 'none'}`;
    } else {
      problems.push(`${where} has no stage named "${matcher.name}"`);
      const near = closest(
        matcher.name ?? '',
        list.map((s) => s.name),
      );
      fix = near.length ? `the closest names there: ${near.map((n) => `"${n}"`).join(', ')}` : 'it has no stages';
    }
  }
  const checked = jobIds[0] === undefined ? '' : ` in ${jobIds.length} job${jobIds.length === 1 ? '' : 's'}`;
  if (!jobIds.length) context.lines.push(info(`${label}: the ATS lists no jobs to check it against`));
  else if (problems.length) context.lines.push(fail(`${label}: ${problems.join('; ')}`, fix));
  else context.lines.push(pass(`${label} exists${checked}`));
}

/**
 * Every trigger's stage and the advance rule's target, for each job they apply to: a job list of the trigger, the
 * jobs its `idsByJob` names, or (for "all") the open jobs the ATS lists, every page up to `jobsForAll`. Lever's
 * stages are global.
 */
export async function stageLines(
  connection: Connection,
  ats: SetupAdapter,
  atsCall: <T>(work: () => Promise<T>) => Promise<T>,
  jobsForAll: number,
): Promise<CheckLine[]> {
  const context = stageContext(connection, ats, atsCall, jobsForAll);
  const { lines } = context;
  const allJobs = new Set<string | undefined>();
  for (const trigger of connection.triggers) {
    try {
      const jobIds = await context.jobsOf(trigger.jobs, trigger.stage);
      for (const job of jobIds) allJobs.add(job);
      await checkStage(context, `trigger ${trigger.id}: stage ${describeStage(trigger.stage)}`, trigger.stage, jobIds);
    } catch (error) {
      lines.push(fail(`trigger ${trigger.id}: stages cannot be read: ${errorText(error)}`, atsFix(connection, error)));
    }
  }
  const advance = connection.writeBack.advance;
  if (advance) {
    try {
      const byJob = Object.keys(advance.toStage.idsByJob ?? {});
      const jobIds = ats.kind === 'lever' ? [undefined] : [...new Set([...byJob, ...allJobs])];
      await checkStage(context, `advance.toStage ${describeStage(advance.toStage)}`, advance.toStage, jobIds);
    } catch (error) {
      lines.push(fail(`advance.toStage: stages cannot be read: ${errorText(error)}`, atsFix(connection, error)));
    }
  }
  return lines;
}

const describeStage = (stage: StageMatcher): string =>
  stage.name !== undefined ? `"${stage.name}"` : stage.id !== undefined ? `id ${stage.id}` : 'by job';
