import type { KomboApi, KomboPackage } from './kombo-client';
import type { KomboConfig } from './kombo-orders';

/** The connection's tests as Kombo packages: video interviews, described by their description or name. */
export function packagesOf(kombo: KomboConfig): KomboPackage[] {
  return kombo.tests.map((t) => ({
    id: t.id,
    type: 'VIDEO_INTERVIEW',
    name: t.name,
    description: t.description ?? t.name,
  }));
}

export interface PackagesDiff {
  /** Configured, not in Kombo. */
  added: string[];
  /** In both, with another name, description or type. */
  changed: string[];
  /** In Kombo, no longer configured: removed only when asked. */
  removed: string[];
}

export function diffPackages(configured: readonly KomboPackage[], published: readonly KomboPackage[]): PackagesDiff {
  const inKombo = new Map(published.map((p) => [p.id, p]));
  const ids = new Set(configured.map((p) => p.id));
  const same = (a: KomboPackage, b: KomboPackage) =>
    a.name === b.name && a.description === b.description && a.type === b.type;
  return {
    added: configured.filter((p) => !inKombo.has(p.id)).map((p) => p.id),
    changed: configured
      .filter((p) => inKombo.has(p.id) && !same(p, inKombo.get(p.id) as KomboPackage))
      .map((p) => p.id),
    removed: published.filter((p) => !ids.has(p.id)).map((p) => p.id),
  };
}

export const isInSync = (diff: PackagesDiff, remove: boolean): boolean =>
  !diff.added.length && !diff.changed.length && (!remove || !diff.removed.length);

/**
 * Publishes the connection's packages to each integration. `PUT /assessment/packages` replaces the whole list, so a
 * package in Kombo and no longer configured is sent again as it is, unless `remove` asks for it to go.
 */
export async function publishPackages(
  api: KomboApi,
  kombo: KomboConfig,
  options: { remove: boolean; signal?: AbortSignal },
): Promise<{ integrationId: string; diff: PackagesDiff; published: boolean; warnings: string[] }[]> {
  const configured = packagesOf(kombo);
  const results = [];
  for (const integrationId of kombo.integrations) {
    const published = await api.getPackages(integrationId, options.signal);
    const diff = diffPackages(configured, published);
    if (isInSync(diff, options.remove)) {
      results.push({ integrationId, diff, published: false, warnings: [] });
      continue;
    }
    const kept = options.remove ? [] : published.filter((p) => diff.removed.includes(p.id));
    const warnings = await api.setPackages(integrationId, [...configured, ...kept], options.signal);
    results.push({ integrationId, diff, published: true, warnings });
  }
  return results;
}

/** One line of a diff, e.g. "+ backend-screen, ~ culture-fit, - old-test (kept: --remove to delete)". */
export function describeDiff(diff: PackagesDiff, remove: boolean): string {
  const parts = [
    ...diff.added.map((id) => `+ ${id}`),
    ...diff.changed.map((id) => `~ ${id}`),
    ...diff.removed.map((id) => `- ${id}${remove ? '' : ' (kept: --remove deletes it)'}`),
  ];
  return parts.length ? parts.join(', ') : 'in sync';
}
