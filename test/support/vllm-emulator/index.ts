// The emulator started in the test's own process: settings checked, one engine on Node's clock,
// its server on a free loopback port (or the one asked). main.ts starts the same as a process.
import { Engine } from './engine.ts';
import { type EmulatorStats, startEmulatorServer } from './server.ts';
import { type EmulatorSettingsInput, parseSettings } from './settings.ts';

export type { EmulatorStats } from './server.ts';
export type { EmulatorSettings, EmulatorSettingsInput } from './settings.ts';

export interface VllmEmulatorOptions extends EmulatorSettingsInput {
  /** Default 0: a free port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
}

export interface VllmEmulator {
  /** http://host:port, without a trailing slash (the OpenAI base URL is `${url}/v1`). */
  readonly url: string;
  readonly port: number;
  stats(): EmulatorStats;
  close(): Promise<void>;
}

export async function startVllmEmulator(options: VllmEmulatorOptions = {}): Promise<VllmEmulator> {
  const { port = 0, host = '127.0.0.1', ...input } = options;
  const settings = parseSettings(input);
  const server = await startEmulatorServer(settings, new Engine(settings), port, host);
  return { url: `http://${host}:${server.port}`, port: server.port, stats: server.stats, close: server.close };
}
