// The `model` of a stream event, replaced in the event's JSON text as the backend wrote it, so a
// relayed chunk needs no JSON.stringify (which cost as much as parsing it: a stream relays tens of
// thousands of chunks a second under load). Only the value of the one top-level `"model"` key is
// replaced; anything this cannot be sure of gives undefined, and the caller serialises instead.

/**
 * `json` (one JSON object, as received) with its `model` string replaced by `modelJson` (a JSON
 * string literal); undefined when the text has no `"model"` key, more than one, or a value that
 * is not a plain string.
 */
export function withModel(json: string, modelJson: string): string | undefined {
  const key = json.indexOf('"model"');
  // Only a key can be an unescaped `"model"`: inside a JSON string its quotes would be escaped.
  if (key < 0 || json.indexOf('"model"', key + 7) >= 0) return undefined;
  let at = skipSpace(json, key + 7);
  if (json.charCodeAt(at) !== 58 /* : */) return undefined;
  at = skipSpace(json, at + 1);
  if (json.charCodeAt(at) !== 34 /* " */) return undefined;
  const end = stringEnd(json, at);
  if (end < 0) return undefined;
  return json.slice(0, at) + modelJson + json.slice(end + 1);
}

function skipSpace(text: string, at: number): number {
  let i = at;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return i;
    i++;
  }
}

/** The index of the quote closing the string that opens at `start`; -1 when it does not close. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92 /* \ */) i++;
    else if (c === 34) return i;
  }
  return -1;
}
