// The emulator as a process, for tests that need it apart and for the bench:
//   node test/support/vllm-emulator/main.ts --port 0 --kv-blocks 2000 --time-scale 0.01
// Every setting of settings.ts is a flag (underscores as dashes). It prints one line,
// "vllm-emulator listening on http://HOST:PORT", once it listens, and stops on SIGTERM or SIGINT.
import { Command } from 'commander';
import { z } from 'zod';
import { startVllmEmulator } from './index.ts';
import { type EmulatorSettings, parseSettings, settingsSchema } from './settings.ts';

const defaults = parseSettings();
const keys = Object.keys(settingsSchema.shape) as (keyof EmulatorSettings)[];

const program = new Command('vllm-emulator')
  .description('An emulated vLLM OpenAI-compatible server (see test/support/vllm-emulator/README.md).')
  .option('--port <port>', 'port to listen on (0: a free one)', '0')
  .option('--host <host>', 'address to listen on', '127.0.0.1');
for (const key of keys) {
  const description = settingsSchema.shape[key].description ?? '';
  program.option(`--${key.replaceAll('_', '-')} <value>`, `${description} (default ${String(defaults[key])})`);
}
program.parse();
const flags = program.opts<Record<string, string>>();

/** A flag's text as the type of the setting's default; what does not convert is left for the schema to refuse. */
function typed(key: keyof EmulatorSettings, text: string): unknown {
  switch (typeof defaults[key]) {
    case 'number':
      return text.trim() === '' ? text : Number(text);
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    default:
      return text;
  }
}

const input: Record<string, unknown> = {};
for (const key of keys) {
  const flag = flags[key.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase())];
  if (flag !== undefined) input[key] = typed(key, flag);
}
const port = Number(flags.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`--port must be an integer from 0 to 65535, not ${flags.port}`);
  process.exit(2);
}

try {
  const emulator = await startVllmEmulator({ ...input, port, host: flags.host });
  console.log(`vllm-emulator listening on ${emulator.url}`);
  const stop = () => void emulator.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} catch (error) {
  console.error(error instanceof z.ZodError ? `bad settings:\n${z.prettifyError(error)}` : String(error));
  process.exit(2);
}
