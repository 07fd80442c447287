// Transcribe: pick a speech recognition model, choose an audio file, and read its transcript with
// what it used: the seconds of audio charged, the cost, energy and emissions. Refusals (402 budget,
// 413 too large, 400 unreadable audio) are shown as sentences where the transcript would be.
import { useEffect, useState } from 'preact/hooks';
import { failureOf, headers, type Model, type ModelList, type Usage } from '../api.ts';
import { useSession } from '../context.ts';
import { money } from '../format.ts';
import { readable } from '../messages.ts';
import { LoadError } from '../components/notice.tsx';
import { UsageLine } from '../components/usage-line.tsx';

/** The router type /v1/audio/transcriptions accepts. */
const SPEECH_TYPE = 'automatic-speech-recognition';

/** A transcription's usage: the usage block, with the seconds of audio charged. */
interface TranscriptUsage extends Usage {
  readonly seconds: number;
}

export function TranscribePage() {
  const session = useSession();
  const [models, setModels] = useState<Model[] | null>(null);
  const [model, setModel] = useState('');
  const [language, setLanguage] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ text: string; usage: TranscriptUsage } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [missingFile, setMissingFile] = useState(false);
  const [loadError, setLoadError] = useState<string | null>(null);

  useEffect(() => {
    session
      .call<ModelList>('GET', '/v1/models')
      .then((list) => {
        const speech = list.data.filter((m) => m.type === SPEECH_TYPE);
        setModels(speech);
        setModel((current) => current || speech[0]?.id || '');
      })
      .catch((e) => setLoadError(readable(e)));
  }, []);

  const transcribe = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    if (!file) {
      setMissingFile(true);
      document.getElementById('transcribe-file')?.focus();
      return;
    }
    setMissingFile(false);
    setBusy(true);
    setError(null);
    setResult(null);
    const form = new FormData();
    form.append('model', model);
    if (language.trim()) form.append('language', language.trim());
    form.append('file', file, file.name);
    try {
      const response = await fetch('/v1/audio/transcriptions', { method: 'POST', headers: headers(session.key), body: form });
      if (!response.ok) throw await failureOf(response);
      const answer = (await response.json()) as { text: string; usage: TranscriptUsage };
      setResult(answer);
      session.announce(`Transcribed ${answer.usage.seconds} seconds of audio, cost ${money(answer.usage.cost)}.`);
    } catch (failure) {
      const message = readable(failure);
      setError(message);
      session.announce(message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <h1 tabIndex={-1}>Transcribe</h1>
      <LoadError error={loadError} />
      {models && models.length === 0 && (
        <p>No speech recognition model is configured yet. An admin adds a router of type {SPEECH_TYPE} under Routers.</p>
      )}
      <form class="form" onSubmit={transcribe} aria-label="Transcribe an audio file" noValidate>
        <div class="row">
          <div class="field">
            <label for="transcribe-model">Model</label>
            <select id="transcribe-model" value={model} onChange={(e) => setModel(e.currentTarget.value)}>
              {(models ?? []).map((m) => (
                <option key={m.id} value={m.id}>
                  {m.id}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="transcribe-language">Language (optional)</label>
            <input
              id="transcribe-language"
              value={language}
              aria-describedby="transcribe-language-hint"
              onInput={(e) => setLanguage(e.currentTarget.value)}
            />
            <p class="hint" id="transcribe-language-hint">
              An ISO-639-1 code such as en; empty: the model detects it.
            </p>
          </div>
        </div>
        <div class={`field${missingFile ? ' invalid' : ''}`}>
          <label for="transcribe-file">Audio file</label>
          <input
            id="transcribe-file"
            type="file"
            accept="audio/*"
            aria-invalid={missingFile ? 'true' : undefined}
            aria-describedby={missingFile ? 'transcribe-file-problem transcribe-file-hint' : 'transcribe-file-hint'}
            onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
          />
          <p class="hint" id="transcribe-file-hint">
            WAV, MP3, FLAC, OGG, M4A or WebM. Its length is charged per minute, and held from your budget before it is sent.
          </p>
          {missingFile && (
            <p class="problem" id="transcribe-file-problem">
              Choose an audio file first.
            </p>
          )}
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={!model} aria-disabled={busy}>
            {busy ? 'Transcribing…' : 'Transcribe'}
          </button>
        </div>
      </form>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {result && (
        <section class="turn assistant" aria-label="Transcript">
          <p class="text">{result.text}</p>
          <UsageLine usage={result.usage} label="Usage of this transcription" measure="Audio" amount={`${result.usage.seconds} s`} />
        </section>
      )}
    </section>
  );
}
