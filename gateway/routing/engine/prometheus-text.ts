// The grammar of one sample line of Prometheus's text exposition format (version 0.0.4, which
// vLLM serves): `name{label="value",...} value [timestamp]`, read strictly: a line that is not
// that is refused with what is wrong with it. Which lines are read, and how a text is taken in
// as it arrives, is sample-scanner.ts's. No npm parser was taken: the ones there are
// (parse-prometheus-text-format, exposition) have not had a release in years and build a tree of
// every metric, where routing needs a few numbers out of a text read twice a second.

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const TIMESTAMP = /^-?\d+$/;

/** One sample line's name and value, or what is wrong with it (the line without leading or trailing blanks). */
export function parseSampleLine(line: string): { name: string; value: number } | string {
  const name = METRIC_NAME.exec(line)?.[0];
  if (name === undefined) return 'not a metric name';
  let rest = line.slice(name.length);
  if (rest.startsWith('{')) {
    const after = skipLabels(rest);
    if (after === undefined) return 'malformed labels';
    rest = after;
  }
  if (!/^[ \t]/.test(rest)) return 'no value after the name';
  const [valueText = '', timestamp, extra] = rest.trim().split(/[ \t]+/);
  if (extra !== undefined || (timestamp !== undefined && !TIMESTAMP.test(timestamp))) return 'trailing text after the value';
  const value = parseValue(valueText);
  return value === undefined ? `not a number: ${valueText.slice(0, 40)}` : { name, value };
}

/** What follows a label set `{...}` (escapes in values honoured), or undefined when it is malformed. */
function skipLabels(text: string): string | undefined {
  let i = 1;
  for (;;) {
    while (text[i] === ' ') i++;
    if (text[i] === '}') return text.slice(i + 1);
    const label = LABEL_NAME.exec(text.slice(i))?.[0];
    if (label === undefined) return undefined;
    i += label.length;
    if (text[i] !== '=' || text[i + 1] !== '"') return undefined;
    i += 2;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) return undefined;
    i++;
    while (text[i] === ' ') i++;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') return undefined;
  }
}

/** A sample value: a Go float as the format writes it, NaN and ±Inf included (the caller decides what it accepts). */
function parseValue(text: string): number | undefined {
  if (FLOAT.test(text)) return Number(text);
  if (text === 'NaN') return Number.NaN;
  if (text === '+Inf' || text === 'Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  return undefined;
}
