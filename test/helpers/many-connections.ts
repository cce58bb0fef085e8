import { readFileSync } from 'node:fs';

export const EXAMPLE = JSON.parse(readFileSync('config/connections.example.json', 'utf8')) as {
  deploy: { mailFrom: string; alarmEmail: string; secretsPrefix: string };
  connections: Record<string, unknown>[];
};

/** `count` customers: the example connections repeated, each its own id, secret and sender domain. */
export function connectionsDocument(count: number): { connections: Record<string, unknown>[] } {
  return {
    connections: Array.from({ length: count }, (_, i) => {
      const base = structuredClone(EXAMPLE.connections[i % EXAMPLE.connections.length]) as {
        triggers: { invite?: { from?: string } }[];
      } & Record<string, unknown>;
      for (const trigger of base.triggers)
        if (trigger.invite?.from) trigger.invite.from = `talent@customer-${i}.example`;
      return { ...base, id: `customer-${i}`, secretRef: `ats-interview-connector/customer-${i}` };
    }),
  };
}
