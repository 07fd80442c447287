#!/usr/bin/env node
// `tollgate`: one command-line entry with a subcommand per component.
import { Command, Option } from 'commander';
import { ConfigError } from './config/config-file.ts';
import { GATEWAY_OPTIONS, readSettings, SettingsError } from './config/settings.ts';
import { startGateway } from './server.ts';

const program = new Command('tollgate')
  .description('Tollgate: an OpenAI-compatible LLM gateway with routers, providers, budgets, cost and carbon.')
  .showHelpAfterError();

const gateway = program
  .command('gateway')
  .description('Serve the OpenAI-compatible API from a configuration file, with the in-memory store.')
  .addHelpText('after', '\nSignals: SIGHUP reloads the configuration file (an invalid file keeps the current one); SIGTERM and SIGINT drain and stop.');
for (const option of GATEWAY_OPTIONS) {
  gateway.addOption(new Option(option.flag, `${option.help} [env ${option.env}]`));
}
gateway.action(async (flags: Record<string, unknown>) => {
  try {
    const running = await startGateway(readSettings(flags, process.env), process.env);
    process.on('SIGHUP', () => void running.reload());
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => void running.close().then(() => process.exit(0)));
    }
  } catch (error) {
    if (error instanceof ConfigError || error instanceof SettingsError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
});

await program.parseAsync(process.argv);
