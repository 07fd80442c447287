// The routing snapshot: the one data contract between whatever configures the gateway (a config
// file, the admin API, the operator) and the data plane that serves requests.
import { z } from 'zod';
import { RouterSpec } from './router.ts';
import { ProviderSpec } from './provider.ts';

export const SNAPSHOT_FORMAT = 1;

export const Snapshot = z.strictObject({
  format: z.literal(SNAPSHOT_FORMAT),
  version: z.string().min(1),
  routers: z.array(RouterSpec),
  providers: z.array(ProviderSpec),
});
export type Snapshot = z.output<typeof Snapshot>;
