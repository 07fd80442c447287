// A transcription sent to an OpenAI-compatible backend (OpenAI, vLLM serving Whisper, Mistral):
// the form as the client sent it, its model set to the provider's, posted to the same path.
import { ENDPOINT_SPECS } from '../endpoints/registry.ts';
import type { AudioFile } from '../endpoints/audio-file.ts';
import type { ForwardResult } from './adapter.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import type { PostOptions, UpstreamHttp } from './upstream-http.ts';
import { UpstreamError } from './upstream-error.ts';
import { EncodedForm } from './multipart-form.ts';

export async function transcribe(url: string, body: JsonObject, post: PostOptions, http: UpstreamHttp): Promise<ForwardResult> {
  const answer = await http.postForm(url, ENDPOINT_SPECS.transcriptions.path, transcriptionForm(body), post);
  if (!('json' in answer)) return { kind: 'text', text: answer.text, contentType: answer.contentType };
  const { json } = answer;
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new UpstreamError('protocol', 'the backend answered with JSON that is not an object');
  }
  return { kind: 'body', body: json as JsonObject };
}

/** The form again: its fields as they came (repeated ones repeated), and its file, its bytes not copied. */
function transcriptionForm(body: JsonObject): EncodedForm {
  const fields: [string, string][] = [];
  let file: AudioFile | undefined;
  for (const [name, value] of Object.entries(body)) {
    if (name === 'file') file = value as AudioFile;
    else if (Array.isArray(value)) for (const item of value) fields.push([name, String(item)]);
    else if (value !== undefined && value !== null) fields.push([name, String(value)]);
  }
  if (!file) throw new UpstreamError('protocol', 'a transcription without its file cannot be sent');
  return new EncodedForm(fields, { name: 'file', filename: file.filename, contentType: file.mimeType, bytes: file.bytes });
}
