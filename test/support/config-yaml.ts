// Configuration files for test gateways, written as users write them: a `models:` list of
// routers, each with its providers.

/** A YAML block for one provider entry (indentation of a `providers:` list item under a model). */
export function yamlProvider(fields: {
  model: string;
  type: string;
  args?: Record<string, unknown>;
  carbon?: Record<string, unknown>;
}): string {
  const lines = [`      - model: ${JSON.stringify(fields.model)}`, `        type: ${fields.type}`];
  if (fields.args) lines.push(`        args: ${JSON.stringify(fields.args)}`);
  if (fields.carbon) lines.push(`        carbon: ${JSON.stringify(fields.carbon)}`);
  return lines.join('\n');
}

export interface YamlModel {
  id: string;
  type: string;
  aliases?: string[];
  max_context_length?: number;
  load_balancing_strategy?: string;
  costs?: { prompt_tokens: string; completion_tokens: string };
  providers: Parameters<typeof yamlProvider>[0][];
}

/** A configuration file's `models:` list. Prices are written as plain YAML numbers, as users write them. */
export function yamlConfig(models: readonly YamlModel[]): string {
  const out = ['models:'];
  for (const model of models) {
    out.push(`  - id: ${JSON.stringify(model.id)}`, `    type: ${model.type}`);
    if (model.aliases) out.push(`    aliases: ${JSON.stringify(model.aliases)}`);
    if (model.load_balancing_strategy) out.push(`    load_balancing_strategy: ${model.load_balancing_strategy}`);
    if (model.max_context_length !== undefined) out.push(`    max_context_length: ${model.max_context_length}`);
    if (model.costs)
      out.push(`    costs: { prompt_tokens: ${model.costs.prompt_tokens}, completion_tokens: ${model.costs.completion_tokens} }`);
    out.push('    providers:', ...model.providers.map(yamlProvider));
  }
  return `${out.join('\n')}\n`;
}
