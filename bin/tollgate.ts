#!/usr/bin/env node
// `tollgate`: one command-line entry with a subcommand per plane. Only the settings of each
// subcommand are loaded up front (for --help and validation); a plane's code is imported when its
// subcommand runs, so the gateway never loads the operator's code and the operator not the gateway's.
import { Command, Option } from 'commander';
import { GATEWAY_OPTIONS, readSettings, SettingsError } from '../gateway/config/settings.ts';
import { OPERATOR_OPTIONS, OperatorSettingsError, readOperatorSettings } from '../operator/settings.ts';
import { readWorkerSettings, WORKER_OPTIONS, WorkerSettingsError } from '../worker/settings.ts';

const program = new Command('tollgate')
  .description('Tollgate: an OpenAI-compatible LLM gateway with routers, providers, budgets, cost and carbon.')
  .showHelpAfterError();

const gateway = program
  .command('gateway')
  .description(
    'Serve the OpenAI-compatible API: routers from a configuration file and the catalog (in memory, or in Redis with --redis-url), ' +
      'or with --kubernetes from the routing ConfigMap and provider keys Secret the operator writes.',
  )
  .addHelpText(
    'after',
    [
      '',
      'Kubernetes mode: tollgate gateway --kubernetes --namespace tollgate --redis-url redis://redis:6379',
      '',
      'Signals: SIGHUP reloads the configuration file (an invalid file keeps the current one); SIGTERM and SIGINT drain and stop.',
    ].join('\n'),
  );
for (const option of GATEWAY_OPTIONS) {
  gateway.addOption(new Option(option.flag, option.help));
}
gateway.action(async (flags: Record<string, unknown>) => {
  const [{ startGateway }, { ConfigError }, { StartupError }] = await Promise.all([
    import('../gateway/server.ts'),
    import('../gateway/config/config-file.ts'),
    import('../core/startup-error.ts'),
  ]);
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
    if (error instanceof StartupError) {
      process.stderr.write(`tollgate gateway: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
});

const operator = program
  .command('operator')
  .description(
    'Reconcile ModelRouter, ModelProvider and GatewayUser resources into the routing ConfigMap, the provider keys Secret and Redis.',
  )
  .addHelpText('after', '\nSignals: SIGTERM and SIGINT stop, releasing the leader-election Lease for the other replica.');
for (const option of OPERATOR_OPTIONS) {
  operator.addOption(new Option(option.flag, option.help));
}
operator.action(async (flags: Record<string, unknown>) => {
  let settings: ReturnType<typeof readOperatorSettings>;
  try {
    settings = readOperatorSettings(flags, process.env);
  } catch (error) {
    if (!(error instanceof OperatorSettingsError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  const [{ startOperator }, { RedisLayoutError }] = await Promise.all([
    import('../operator/main.ts'),
    import('../core/store/redis/layout-check.ts'),
  ]);
  try {
    const running = await startOperator(settings);
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => void running.stop().then(() => process.exit(0)));
    }
  } catch (error) {
    // Redis holding a layout this build does not read: one line and exit 1, as the gateway says it.
    if (!(error instanceof RedisLayoutError)) throw error;
    process.stderr.write(`tollgate operator: ${error.message}\n`);
    process.exit(1);
  }
});

const worker = program
  .command('router-worker')
  .description(
    "Run router workers for queue mode: take requests from the routers' streams router.<model_id> in Redis and give them provider slots, " +
      'fleet-wide, on live metrics. Routers come from the catalog in Redis, or with --kubernetes from the routing ConfigMap.',
  )
  .addHelpText('after', '\nSignals: SIGTERM and SIGINT stop; entries read and not answered are claimed by another worker.');
for (const option of WORKER_OPTIONS) {
  worker.addOption(new Option(option.flag, option.help));
}
worker.action(async (flags: Record<string, unknown>) => {
  let settings: ReturnType<typeof readWorkerSettings>;
  try {
    settings = readWorkerSettings(flags, process.env);
  } catch (error) {
    if (!(error instanceof WorkerSettingsError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  const [{ startRouterWorkers }, { StartupError }] = await Promise.all([import('../worker/main.ts'), import('../core/startup-error.ts')]);
  try {
    const running = await startRouterWorkers(settings, process.env);
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => void running.stop().then(() => process.exit(0)));
    }
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    process.stderr.write(`tollgate router-worker: ${error.message}\n`);
    process.exit(1);
  }
});

await program.parseAsync(process.argv);
